// Keeps a node's definitions in step with a database that other nodes change too.
import Foundation
import FlowStore
import Logging
import Synchronization

/// Polls the store's definitions fingerprint every `interval` and, when another node stored a
/// flow version, made one live, or changed a flag or an experiment, reads the definitions again
/// (`DefinitionRegistry.reload(from:)`: the flow versions it does not hold yet, and the rest).
/// A change acknowledged by one node is used by every node for sessions created within about
/// `interval` plus one read (well under a second). Sessions keep the versions they run.
///
/// Polling, rather than `LISTEN/NOTIFY`, needs nothing of the database but a query, costs one
/// small query per interval per node, and cannot miss a change while a connection is down.
final class DefinitionSync: Sendable {
    let store: any DefinitionStore
    let registry: DefinitionRegistry
    let logger: Logger
    let counters: ClusterCounters
    /// The fingerprint of the definitions the registry holds, set once they are read. Its lock
    /// is held while they are read: a request that finds the fingerprint moved waits for a read
    /// already under way (the poller's) instead of finding the fingerprint updated and the
    /// registry not yet (a flow version PUT through one node, then an experiment pinning it
    /// PUT through another 28 ms later, was refused 422 there).
    private let fingerprint = Mutex<String?>(nil)
    private let stop = DispatchSemaphore(value: 0)

    /// `known`: the fingerprint read before `registry` was loaded (nil: none, the first read
    /// reloads). Read after, it could be a change's committed while the registry was read,
    /// which no read would then take over.
    init(store: any DefinitionStore, registry: DefinitionRegistry, known: String?, logger: Logger, counters: ClusterCounters) {
        self.store = store
        self.registry = registry
        self.logger = logger
        self.counters = counters
        fingerprint.withLock { $0 = known }
    }

    /// Starts polling on a thread of its own; it ends once this object is released.
    func start(interval: Duration = .milliseconds(250)) {
        let milliseconds = Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        let stop = self.stop
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-definitions"
            while stop.wait(timeout: .now() + .milliseconds(milliseconds)) == .timedOut {
                guard let self else { return }
                refresh()
            }
        }
        thread.start()
    }

    deinit {
        stop.signal()
    }

    /// Reads the definitions again when the fingerprint moved (or `force`); returns the
    /// fingerprint read, nil when the database could not be read or the definitions not read again.
    @discardableResult
    func refresh(force: Bool = false) -> String? {
        let current: String
        do {
            current = try store.definitionsFingerprint()  // outside the lock: most refreshes stop here
        } catch {
            // The database is away: the next poll tries again; /healthz reports the outage.
            fingerprint.withLock { $0 = nil }
            logger.debug("definitions not refreshed", metadata: ["error": "\(error)"])
            return nil
        }
        return refresh(seen: current, force: force) ? current : nil
    }

    /// Reads the definitions again when `current`, a fingerprint just read with something else
    /// (a new session's user, in the same round trip), is not the one they were read at; reads
    /// the fingerprint itself when the store read none.
    func refresh(seen current: String?) {
        guard let current else {
            refresh()
            return
        }
        refresh(seen: current, force: false)
    }

    /// False when the definitions had to be read again and could not be.
    @discardableResult
    private func refresh(seen current: String, force: Bool) -> Bool {
        fingerprint.withLock { known in
            guard known != current || force else { return true }
            // Read before the fingerprint the registry was read at (by another thread, whose read
            // began later and took the lock first): what it counts is held already.
            if !force, let known, DefinitionsRevision.isEarlier(current, than: known) { return true }
            do {
                for problem in try registry.reload(from: store) {
                    logger.error("stored definition skipped", metadata: ["problem": "\(problem)"])
                }
                known = current
                counters.definitionReloads.add(1, ordering: .relaxed)
                return true
            } catch {
                known = nil
                logger.debug("definitions not refreshed", metadata: ["error": "\(error)"])
                return false
            }
        }
    }
}
