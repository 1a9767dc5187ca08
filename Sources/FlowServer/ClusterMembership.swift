// Which kinds of node serve on a shared database now: an owner of sessions trusts its memory only
// while every node beside it owns sessions too.
import Foundation
import FlowStore
import Logging
import Synchronization

/// This node's row among the nodes serving on a shared database (`ClusterNodeStore`), renewed
/// every `heartbeat`, and what it says about the others.
///
/// Nodes that own sessions (`--node-url`, `SessionLeases`) answer owned sessions' reads from
/// memory, because no other node commits a session while its owner's lease holds. A node
/// started without leases commits without the fence, so beside one that trust is wrong. Instead
/// of refusing such a cluster (which would make turning leases on a stop of every node), the
/// kinds meet safely:
/// - an owner trusts its memory only until `trustWindow` after it last asked and saw no live
///   node without leases (`SessionLeases.trustMemory(until:)`); otherwise every read checks the
///   head, as on nodes without leases, and its writes still take leases;
/// - a node without leases that finds owners serving waits `trustWindow` after announcing
///   itself before it serves, so that every owner's trust from before it came has run out.
///
/// A node is live while its row was seen within `liveWindow` (a node that stopped cleanly takes
/// its row away). Left: a node without leases paused for longer than `liveWindow` may, on waking,
/// commit before its next heartbeat; an owner then answers its older state from memory until
/// its own next write of that session (whose commit finds the version moved and reads it again).
final class ClusterMembership: Sendable {
    let store: any ClusterNodeStore
    /// This node as its row names it: the lease holder (`http://host:port#mark`) of an owner, or
    /// `host pid #mark` of a node without leases.
    let node: String
    /// The leases of an owner; nil on a node without leases.
    let leases: SessionLeases?
    let heartbeat: Duration
    let liveWindow: Duration
    let trustWindow: Duration
    let logger: Logger
    /// The other kind was seen at the last look (logged when it changes).
    private let mixed = Atomic<Bool>(false)
    private let stop = DispatchSemaphore(value: 0)

    init(store: any ClusterNodeStore, leases: SessionLeases?, logger: Logger, heartbeat: Duration = .milliseconds(500),
         liveWindow: Duration = .seconds(10), trustWindow: Duration = .seconds(2)) {
        self.store = store
        self.leases = leases
        self.logger = logger
        self.heartbeat = heartbeat
        self.liveWindow = liveWindow
        self.trustWindow = trustWindow
        node = leases?.holder ?? "\(Self.hostName()) pid \(getpid()) #\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        // Not trusted until this node has looked (`join`).
        leases?.trustMemory(until: nil)
    }

    deinit { stop.signal() }

    /// Announces this node and looks at the others once, before it serves: an owner trusts its
    /// memory from then on if no node without leases serves; a node without leases waits out
    /// the owners' trust if any owner serves. Then renews its row every `heartbeat`.
    func join() throws {
        try store.announceNode(node, ownsSessions: leases != nil)
        if leases != nil {
            look(sent: .now)
        } else {
            let owners = try store.nodesSeen(ownsSessions: true, withinMilliseconds: Self.milliseconds(liveWindow))
            if !owners.isEmpty {
                logger.warning("nodes that own sessions serve on this database and this one takes no leases (no --node-url): waiting for them to stop trusting their memory; their reads check the database while this node serves",
                               metadata: ["owners": "\(owners.joined(separator: ", "))"])
                Thread.sleep(forTimeInterval: Double(Self.milliseconds(trustWindow) + 250) / 1000)
            }
        }
        let stop = self.stop
        let interval = heartbeat
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-cluster-nodes"
            while stop.wait(timeout: .now() + .milliseconds(Self.milliseconds(interval))) == .timedOut {
                guard let self else { return }
                let sent = ContinuousClock.now
                do {
                    try store.announceNode(node, ownsSessions: leases != nil)
                } catch {
                    logger.debug("node not announced", metadata: ["error": "\(error)"])
                    continue
                }
                if leases != nil { look(sent: sent) }
            }
        }
        thread.start()
    }

    /// An owner looks for live nodes without leases (asked at `sent` or later) and trusts its
    /// memory until `trustWindow` after `sent` when there are none.
    private func look(sent: ContinuousClock.Instant) {
        guard let leases else { return }
        let others: [String]
        do {
            others = try store.nodesSeen(ownsSessions: false, withinMilliseconds: Self.milliseconds(liveWindow))
        } catch {
            // Unknown: the trust given last runs out by itself.
            return
        }
        if others.isEmpty {
            leases.trustMemory(until: sent + trustWindow)
        } else {
            leases.trustMemory(until: nil)
        }
        let wasMixed = mixed.exchange(!others.isEmpty, ordering: .relaxed)
        if wasMixed != !others.isEmpty {
            if others.isEmpty {
                logger.info("every node serving on this database owns sessions: owned sessions are read from memory again")
            } else {
                logger.warning("nodes without leases (no --node-url) serve on this database: this node's reads check the database until they stop",
                               metadata: ["nodes": "\(others.joined(separator: ", "))"])
            }
        }
    }

    /// Takes this node's row away (a node stopping cleanly), so the others need not wait for it
    /// to age. Best effort.
    func leave() {
        stop.signal()
        try? store.withdrawNode(node)
    }

    /// The machine's name as the kernel has it (`gethostname`), for the row of a node without an
    /// address: no name service is asked (Foundation's `hostName` may wait on DNS).
    static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "unknown-host" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
