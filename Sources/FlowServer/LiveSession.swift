// The committed state of one session as the server keeps it in memory.
import Foundation
import JSON
import FlowEngine
import Locking

/// What a session's answers keep with its state document, made once for all of them: its gzip
/// form, made by the HTTP server (there `CompressedForm`; the session knows only that it is
/// made once, from the document's bytes).
typealias DocumentForm = Memo<[UInt8], [UInt8]?>

/// A session as committed: the tree, its version, and what was fixed at creation.
///
/// A turn copies the state it applies an action to (`applyLocked`'s `next`), and the commit
/// puts the copy in place: each copy retains every reference the struct holds. What was fixed
/// at creation is therefore one reference (`Fixed`), the session's own, where its fields were up
/// to nine retains a copy, three of them (the catalog's) on objects every session of the same
/// flows shares, whose counts the HTTP threads and the writer moved from both cores.
struct LiveSession: Sendable {
    /// What a session fixed at creation, shared by every copy of its state.
    final class Fixed: Sendable {
        let id: String
        let userId: String
        let tokenHash: [UInt8]
        let catalog: FlowCatalog
        let flagsJSON: [UInt8]
        let experimentsJSON: [UInt8]
        let flowVersionsJSON: [UInt8]
        let inExperiment: Bool

        init(id: String, userId: String, tokenHash: [UInt8], catalog: FlowCatalog, flagsJSON: [UInt8],
             experimentsJSON: [UInt8], flowVersionsJSON: [UInt8], inExperiment: Bool) {
            self.id = id
            self.userId = userId
            self.tokenHash = tokenHash
            self.catalog = catalog
            self.flagsJSON = flagsJSON
            self.experimentsJSON = experimentsJSON
            self.flowVersionsJSON = flowVersionsJSON
            self.inExperiment = inExperiment
        }
    }

    let fixed: Fixed
    var id: String { fixed.id }
    var userId: String { fixed.userId }
    var tokenHash: [UInt8] { fixed.tokenHash }
    var version: Int { didSet { document = nil; predictions = nil; lastActiveAt = Date() } }  // expiry: an action is activity
    var tree: FlowTree { didSet { document = nil; predictions = nil } }
    /// Attributes, traits, flag values; `user` holds the user's state as this session knows it.
    var context: FlowContext
    /// The flow definitions of the versions this session runs (shared between sessions).
    var catalog: FlowCatalog { fixed.catalog }
    /// Flag evaluation details, already encoded (`{"eu-face-scan":{"value":false,…}}`).
    var flagsJSON: [UInt8] { fixed.flagsJSON }
    /// `{experiment: variant}`, already encoded.
    var experimentsJSON: [UInt8] { fixed.experimentsJSON }
    /// Flow versions this session runs, already encoded (`{"app":1,…}`).
    var flowVersionsJSON: [UInt8] { fixed.flowVersionsJSON }
    /// The session was placed in at least one experiment: its screens feed the report's funnel.
    var inExperiment: Bool { fixed.inExperiment }
    /// The transition that produced `version`, encoded; nil at creation or when nothing moved.
    var lastTransitionJSON: [UInt8]? { didSet { document = nil; predictions = nil } }
    var handledBy: String? { didSet { document = nil; predictions = nil } }
    /// When the session was created or last acted on (a read is not activity; see `SessionExpiry`).
    var lastActiveAt: Date
    /// Set by a delete, so the slot drops the state under the same lock.
    var deleted = false
    /// The token that last opened this session (`SessionAccess.opens(_:)`), or nil: a request
    /// with it skips the token's hash.
    var openedBy: OpenedToken?
    /// The user's state the log implies after `version` (see `LogRebuild`): the state the
    /// action of `version` was judged with, with its changes. Nil when this node did not write
    /// that entry (a session loaded from the store), so the next entry stores its own.
    var loggedUser: [String: JSONValue]? { didSet { loggedUserText = nil } }
    /// `loggedUser` as the log stores it (`LogRebuild.userStateText`), when known: the next
    /// action is judged with the same state unless the user's state changed, and would write it
    /// again. Set after `loggedUser`, which clears it.
    var loggedUserText: String?
    /// The idempotency keys committed on this session, when this node knows them all (it
    /// created the session, or read them with it, and made every commit since); nil when it
    /// does not, and each key is looked up in the database. See `UsedKeys`.
    var usedKeys: UsedKeys?

    /// None of `keys` was ever committed on this session, as this node knows for certain (see
    /// `UsedKeys`): their answers need no lookup. False whenever the node does not know.
    func neverCommitted(_ keys: some Sequence<String>) -> Bool {
        guard let usedKeys else { return false }
        return !keys.contains(where: usedKeys.mayContain)
    }
    /// The state document of this version, once encoded: reads answer with it as it is. Every
    /// property the document shows clears it when set.
    private(set) var document: [UInt8]? { didSet { if document == nil { documentForm = nil } } }
    /// The gzip form of `document`, made by the first answer to a client that accepts gzip and
    /// kept for the others (the HTTP server's `CompressedForm`); a new one with each document,
    /// gone with it.
    private(set) var documentForm: DocumentForm?
    /// The predictions of this version (see `cachedPredictions`), with the user state they
    /// were made for; cleared with `document`.
    private var predictions: (user: [String: JSONValue], json: [UInt8])?

    init(id: String, userId: String, tokenHash: [UInt8], version: Int, tree: FlowTree, context: FlowContext,
         catalog: FlowCatalog, flagsJSON: [UInt8], experimentsJSON: [UInt8], flowVersionsJSON: [UInt8],
         inExperiment: Bool, lastTransitionJSON: [UInt8]?, handledBy: String?, lastActiveAt: Date = Date()) {
        self.lastActiveAt = lastActiveAt
        fixed = Fixed(id: id, userId: userId, tokenHash: tokenHash, catalog: catalog, flagsJSON: flagsJSON,
                      experimentsJSON: experimentsJSON, flowVersionsJSON: flowVersionsJSON, inExperiment: inExperiment)
        self.version = version
        self.tree = tree
        self.context = context
        self.lastTransitionJSON = lastTransitionJSON
        self.handledBy = handledBy
    }

    /// The state document, encoded at most once per version. What is kept takes only its bytes
    /// (`JSONWriter.takeBytes()` hands over an array of their size, not the writer's buffer), as
    /// every cached session keeps one (bench/memory.py: 4,405 bytes per session with the spare
    /// room kept, against the limit of 4 KiB).
    mutating func cachedStateDocument() -> [UInt8] {
        if let document { return document }
        let encoded = stateDocument()
        document = encoded
        documentForm = DocumentForm()
        return encoded
    }

    /// Moves to the version `outcome` produced and returns its state document, encoded whole with
    /// its transition. Copying the parts that did not change from the last document (the engine's
    /// `EncodingCache`, until the writer wrote into a buffer of its own) cost more than writing
    /// them once the writer was fast: 21.4k instructions an action against 15.4k
    /// (bench/encode.sh, BENCHMARKS.md "twenty-fifth session").
    mutating func advance(by outcome: ActionOutcome) -> [UInt8] {
        version += 1
        tree = outcome.tree
        handledBy = outcome.handledBy
        lastTransitionJSON = outcome.transition.map(SessionState.encode)
        let encoded = stateDocument()
        document = encoded
        documentForm = DocumentForm()
        return encoded
    }

    /// Records what a turn leaves once `advance` made the next version: the user's state the
    /// log implies after it, with its stored form (`text`) when the action changed none of it
    /// (so the state after is the one it was judged with), and the idempotency key it used, the
    /// session's once committed.
    mutating func record(loggedUser user: [String: JSONValue], text: String?, usedKey key: String?) {
        if let key { usedKeys?.insert(key) }
        loggedUser = user
        if let text { loggedUserText = text }  // after `loggedUser`, which clears it
    }

    /// An action's answer when it is not `body` itself: `body` with this version's predictions
    /// for a user in state `user` (`?predict=true`); nil without `user`. Mutating: the
    /// predictions are kept with this version, for reads that ask for them.
    mutating func answer(_ body: [UInt8], predictingFor user: [String: JSONValue]?) -> [UInt8]? {
        guard let user else { return nil }
        return SessionState.withPredictions(body, cachedPredictions(user: user))
    }

    /// The state document: every session answer's body.
    func stateDocument() -> [UInt8] {
        SessionState.document(sessionId: id, userId: userId, version: version, tree: tree, transitionJSON: lastTransitionJSON,
                              handledBy: handledBy, flagsJSON: flagsJSON, experimentsJSON: experimentsJSON)
    }

    /// The session as the engine carries it forward (predictions, dry runs, bundles), with the
    /// user's state as `user`.
    func engineState(user: [String: JSONValue]) -> SessionState {
        var context = context
        context.user = user
        return SessionState(
            sessionId: id, userId: userId, version: version, tree: tree, context: context, catalog: catalog,
            flagsJSON: flagsJSON, experimentsJSON: experimentsJSON, transitionJSON: lastTransitionJSON, handledBy: handledBy)
    }

    /// The predictions of this version for a user in state `user`, encoded at most once while
    /// neither changes.
    mutating func cachedPredictions(user: [String: JSONValue]) -> [UInt8] {
        if let predictions, predictions.user == user { return predictions.json }
        let json = engineState(user: user).predictionsJSON()
        predictions = (user, json)
        return json
    }
}
