// Writes go to the node that owns the session: a node that receives one for a session another
// node holds the lease of forwards it there (HAProxy's hashing sends most to the owner already).
import Dispatch
import FlowStore
import Foundation
import HTTPServer
import Logging
import Synchronization

/// Sends a session's writes (actions, batches, its deletion) to the node that holds its lease,
/// on a shared database whose nodes own sessions (see `SessionLeases`).
///
/// A write for a session this node owns, or can take (no lease, or an expired one), is served
/// here. One whose lease another node holds is forwarded to that node once, naming the lease's
/// epoch: the owner serves it only under that lease (a forwarded request is never forwarded
/// again, nor applied under a later lease: the node says 503 and the client tries again).
/// When the owner cannot be reached at all, its lease is waited out (at most its length) and
/// taken over, and the write is served here. Reads are served by any node (see
/// `SessionService.withSession`): an owner from memory, another node after checking the head.
final class OwnerRouting: Sendable {
    let leases: SessionLeases
    let peers: PeerClient
    let logger: Logger
    /// Forwards and takeovers under way: each blocks a thread of its own (a receive of up to
    /// 4.5 s, a lease waited out), not one of the shared dispatch pool, and at most `maxInFlight`
    /// at once; past that a write is answered 503.
    private let inFlight = Atomic<Int>(0)
    static let maxInFlight = 64
    /// The headers a forwarded request carries: the forwarding node's address, and the epoch of
    /// the owner's lease it was forwarded under.
    static let forwardedHeader = "X-FlowStack-Forwarded-By"
    static let epochHeader = "X-FlowStack-Lease-Epoch"
    /// Headers of a forwarded request that stay on this node: the answer comes back through it,
    /// and this node applies CORS and compresses for its client (an owner that compressed
    /// would have it compressed twice); and the forwarding headers, which this node sets.
    static let kept: Set<String> = ["origin", "accept-encoding", forwardedHeader.lowercased(), epochHeader.lowercased()]

    init(leases: SessionLeases, logger: Logger, peers: PeerClient = PeerClient()) {
        self.leases = leases
        self.logger = logger
        self.peers = peers
    }

    /// The session `request` writes: `POST /v1/sessions/{id}/actions`, `…/actions/batch` and
    /// `DELETE /v1/sessions/{id}`; nil for every other request.
    static func writtenSession(_ request: Request) -> String? {
        guard request.method == "POST" || request.method == "DELETE" else { return nil }
        let parts = request.path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count >= 4, parts.count <= 6, parts[0].isEmpty, parts[1].elementsEqual("v1".utf8),
              parts[2].elementsEqual("sessions".utf8), !parts[3].isEmpty, !parts[3].contains(UInt8(ascii: "%")) else { return nil }
        switch (request.method, parts.count) {
        case ("DELETE", 4): break
        case ("POST", 5) where parts[4].elementsEqual("actions".utf8): break
        case ("POST", 6) where parts[4].elementsEqual("actions".utf8) && parts[5].elementsEqual("batch".utf8): break
        default: return nil
        }
        return String(decoding: parts[3], as: UTF8.self)
    }

    /// The answer to `request`, a write of session `id`, when it is not served here now: the
    /// owner's (forwarded), or a refusal; nil when this node serves it (it owns the session, or
    /// just took it). `local` serves it here later, after a lease waited out.
    func answer(_ request: Request, session id: String, local: @escaping @Sendable (Request) -> Response) -> Response? {
        if let sent = request.headers[Self.epochHeader] {
            // Forwarded here under lease epoch `sent`: served only under that same lease, which
            // this node still holds (renewed, at most). A request that waited in this node's
            // socket while it was paused and another node took the session over is refused, not
            // applied late; its sender answered 503 long ago.
            guard let epoch = Int(sent), (leases.epoch(id) == epoch && leases.fresh(id)) || renewed(id, epoch: epoch) else {
                return SessionError.contention(id, reading: false).response
            }
            return nil
        }
        guard !leases.fresh(id) else { return nil }
        let grant: LeaseGrant
        do {
            grant = try leases.acquire(id)
        } catch {
            // The database did not answer (the node is cut off from it): no node can be asked
            // who owns the session, and this one cannot commit it.
            return SessionError.storage(StoreError.unavailable(location: "the database", detail: "\(error)")).response
        }
        guard case .held(let holder, let epoch, _) = grant else { return nil }
        let owner = SessionLeases.address(of: holder)
        let answer = DeferredResponse()
        if owner == leases.node {
            // This node's previous process (restarted on the same address) holds the lease: it
            // is gone, so its lease is waited out, at most its length.
            return run(id, answer) { [self] in takeOver(request, session: id, local: local, answer: answer) }
        }
        leases.counters.forwardedWrites.add(1, ordering: .relaxed)
        return run(id, answer) { [self] in forward(request, session: id, to: owner, epoch: epoch, local: local, answer: answer) }
    }

    /// Runs `work` on a thread of its own, which answers `answer`; 503 at once when too many
    /// run already.
    private func run(_ id: String, _ answer: DeferredResponse, _ work: @escaping @Sendable () -> Void) -> Response {
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            return SessionError.contention(id, reading: false).response
        }
        Thread.detachNewThread { [self] in
            work()
            inFlight.subtract(1, ordering: .relaxed)
        }
        return .later(answer)
    }

    /// True when renewing session `id`'s lease keeps it under `epoch`.
    private func renewed(_ id: String, epoch: Int) -> Bool {
        guard case .granted(let granted, _)? = try? leases.acquire(id) else { return false }
        return granted == epoch
    }

    private func forward(_ request: Request, session id: String, to owner: String, epoch: Int,
                         local: @escaping @Sendable (Request) -> Response, answer: DeferredResponse) {
        var outgoing = request
        outgoing.headers = HTTPHeaders()
        for (name, value) in request.headers where !Self.kept.contains(name.lowercased()) {
            outgoing.headers.add(name: name, value: value)
        }
        do throws(PeerClient.Failure) {
            let response = try peers.send(outgoing, to: owner,
                                          extraHeaders: [(Self.forwardedHeader, leases.node), (Self.epochHeader, String(epoch))])
            answer.complete(response)
            return
        } catch where error.sent {
            logger.warning("forwarded write not answered", metadata: ["owner": "\(owner)", "error": "\(error)"])
            answer.complete(SessionError.storage(StoreError.outcomeUnknown(location: owner, detail: error.description)).response)
            return
        } catch {
            logger.warning("session owner unreachable; waiting its lease out", metadata: ["owner": "\(owner)", "error": "\(error)"])
        }
        takeOver(request, session: id, local: local, answer: answer)
    }

    /// Waits out the lease of an owner that cannot answer (down or cut off) and serves the write
    /// here once it is taken over: within the lease's length, unless the owner still renews it
    /// (reachable by the database, not by this node): then 503.
    private func takeOver(_ request: Request, session id: String, local: @escaping @Sendable (Request) -> Response,
                          answer: DeferredResponse) {
        let deadline = ContinuousClock.now + leases.duration + .milliseconds(500)
        while ContinuousClock.now < deadline {
            switch try? leases.acquire(id) {
            case .granted?, .missing?:
                let response = local(request)
                if let later = response.deferred {
                    later.whenComplete { answer.complete($0) }
                } else {
                    answer.complete(response)
                }
                return
            case .held?, nil:
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        answer.complete(SessionError.contention(id, reading: false).response)
    }
}
