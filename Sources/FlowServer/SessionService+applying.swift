// Applying one action to a session in memory: If-Match, a replayed Idempotency-Key, the engine,
// and the commit and answer that result. Used by single actions and by each item of a batch.
import JSON
import FlowEngine
import FlowStore
import Foundation

extension SessionService {
    /// An action request, as it waits for its session's turn.
    struct ActionRequest: Sendable {
        let action: FlowAction
        let ifMatch: IfMatch?
        let idempotency: (key: String, bodyHash: [UInt8])?
        /// The answer carries the predictions of the new version (`?predict=true`).
        let predict: Bool
    }

    /// How often an action is applied again after losing a race to another node's commit on the
    /// same session. Each try is a reload and a commit (a few ms); while another node streams
    /// actions on the session, this one can lose several in a row (8 was seen to run out in CI
    /// with 4 clients per node on one session), and running out answers 503.
    static let sharedConflictRetries = 32

    /// What one try at applying an action came to.
    enum Attempt {
        /// The stored answer of the request's `Idempotency-Key`, to be given again (of a version
        /// no newer than the session's; its body is nil unless it was stored with one).
        case replayed(IdempotentAnswer)
        /// The key's answer is of a version newer than the cached session: read it again.
        case reload
        /// Applied in memory: to be committed, then answered.
        case commit(ActionStep)
    }

    /// An applied action waiting for its commit: the session it leads to, the answer's body, and
    /// the user-state changes to keep once committed.
    ///
    /// A reference: a step holds the next session whole and its commit, and goes from the judge
    /// (under the slot's lock) through the turn's run, the submit and the writer thread's
    /// completion; as a value each of those hand-overs moved several hundred bytes.
    final class ActionStep: Sendable {
        let commit: ActionCommit
        let next: LiveSession
        let body: [UInt8]
        let userChanges: [(key: String, value: JSONValue)]
        /// The answer when it differs from `body` (the stored one): with predictions.
        let answer: [UInt8]?

        init(commit: ActionCommit, next: LiveSession, body: [UInt8], userChanges: [(key: String, value: JSONValue)],
             answer: [UInt8]? = nil) {
            self.commit = commit
            self.next = next
            self.body = body
            self.userChanges = userChanges
            self.answer = answer
        }
    }

    /// Applies an action to a session whose lock the caller holds; `session` is replaced only
    /// after the commit. It reads nothing: `user` is the user's state as held or read before
    /// the turn, and `known` the stored answer of the request's key (`.some(nil)`: looked up,
    /// unused), looked up before the turn.
    ///
    /// A batch of offline taps (`SessionService+batch.swift`) passes the client's time of each,
    /// and the user's state as its earlier, not yet committed, steps left it.
    func applyLocked(_ action: FlowAction, to session: inout LiveSession, ifMatch: IfMatch?,
                     idempotency: (key: String, bodyHash: [UInt8])?, predict: Bool = false, clientAt: String? = nil,
                     user: UserStates.Held, known: IdempotentAnswer??) throws(SessionError) -> Attempt {
        let id = session.id
        if let idempotency, case .some(.some(let stored)) = known {
            guard BearerToken.constantTimeEquals(stored.requestHash, idempotency.bodyHash) else {
                throw .idempotencyKeyReused(idempotency.key)
            }
            // Applied, but its answer never reached this cache (a commit whose answer was lost,
            // or another node): what follows starts from the stored state.
            if stored.version > session.version { return .reload }
            return .replayed(stored)
        }
        try Self.check(ifMatch, session)
        // The log stores the user's state the action is judged with where a rebuild could not
        // derive it (see `LogSnapshots`): after a snapshot, or when it changed elsewhere.
        let unchanged = session.loggedUser == user.state
        let judgedText = (unchanged ? session.loggedUserText : nil) ?? LogRebuild.userStateText(user.state)
        let judged = LogSnapshots.startsStretch(session.version + 1) || !unchanged ? judgedText : nil
        session.context.user = user.state
        let outcome: ActionOutcome
        do throws(FlowError) {
            outcome = try FlowEngine.apply(action, to: session.tree, catalog: session.catalog, context: session.context)
        } catch {
            throw .refused(error)
        }
        // `next` is changed only by calls made on every path, so that it can be moved into the
        // step below: with a change under an `if`, Swift 6.3 refuses `consume` (a compiler bug,
        // shown by a small program), and the step took a second copy of the session.
        var next = session
        let body = next.advance(by: outcome)
        // Each key once, with its last value: an action may set one key twice (two `setUser`s, a
        // guard's resumed action, a link's), and a patch is a JSON object. A key is spelled as
        // the state holds it, or as first set: Swift, the cache and SQLite's merge take `"café"`
        // in either Unicode normal form for one key, where PostgreSQL's jsonb compares bytes and
        // would keep both (a state the server then cannot read). The cache, a batch's next taps
        // and the state judged after are given the changes so spelled too: a null then a value in
        // the other spelling would have put that spelling in the cache, and the next patch in
        // the store beside the first.
        var patch = JSONObject()
        for change in outcome.userChanges {
            patch[user.state.index(forKey: change.key).map { user.state[$0].key } ?? change.key] = change.value
        }
        var userAfter = user.state
        for change in patch.members { UserChange.apply(key: change.key, value: change.value, to: &userAfter) }
        next.record(loggedUser: userAfter, text: patch.members.isEmpty ? judgedText : nil, usedKey: idempotency?.key)
        var userPatch: String?
        if !patch.members.isEmpty {
            var writer = JSONWriter()
            writer.writeValue(.object(patch))
            userPatch = String(decoding: writer.takeBytes(), as: UTF8.self)
        }
        let record = ActionRecord(
            version: next.version, type: action.type, source: action.from,
            params: JSONValue.object(action.loggedParams).jsonText, interactive: action.interactive,
            handledBy: outcome.handledBy,
            transition: next.lastTransitionJSON.map { String(decoding: $0, as: UTF8.self) },
            createdAt: Timestamp.string(), clientAt: clientAt, userState: judged)
        // The tree is encoded where the store keeps it, and where the document's length does not
        // show it to be within the limit; most commits on SQLite need neither (`storesTree`).
        let stored = store.storesTree(atVersion: next.version)
        let tree = stored ? next.tree.storageBytes() : []
        let bound = stored ? nil : next.tree.storageLengthBound(documentLength: body.count)
        if bound.map({ $0 > maxSessionBytes }) ?? true {
            let bytes = stored ? tree.count : next.tree.storageBytes().count
            guard bytes <= maxSessionBytes else { throw .sessionTooLarge(session: id, bytes: bytes, limit: maxSessionBytes) }
        }
        let reached = session.inExperiment && outcome.tree.top?.feature != session.tree.top?.feature ? outcome.tree.top?.feature : nil
        let commit = ActionCommit(
            sessionId: id, userId: session.userId, version: next.version, tree: tree,
            action: record, userPatch: userPatch,
            idempotency: idempotency.map {
                // No body: a replay makes it again (the session's document, or from the log).
                ($0.key, IdempotentAnswer(requestHash: $0.bodyHash, status: 200, version: next.version, body: nil))
            },
            reachedFeature: reached,
            completesOnboarding: session.inExperiment && patch["onboarded"] == true,
            userRevision: shared ? user.revision : nil, judgedUserState: judgedText,
            // No epoch is never one: a lease that ran out since the turn took it fails the commit
            // (a conflict: the turn takes the lease again and applies again).
            leaseEpoch: leases.map { $0.epoch(id) ?? -1 })
        // Predicted for the user's state as stored after the commit, which a read's predictions
        // see too (a null removed).
        let answer = next.answer(body, predictingFor: predict ? userAfter : nil)
        return .commit(ActionStep(commit: commit, next: consume next, body: body,
                                  userChanges: patch.members.map { ($0.key, $0.value) }, answer: answer))
    }
}
