// Loading a stored session into its in-memory form.
import JSON
import FeatureFlags
import FlowEngine
import FlowStore
import Foundation
import Logging

extension SessionService {
    // MARK: Loading

    /// Reads session `id` from the database into its in-memory form, or nil when it is unknown.
    func load(_ id: String) throws(SessionError) -> LiveSession? {
        guard let record = try storage({ try store.session(id: id) }) else { return nil }
        let tree: FlowTree
        do throws(FlowStorageError) {
            tree = try FlowTree(storage: record.tree)
        } catch {
            logger.error("stored tree does not decode", metadata: ["session": "\(id)", "error": "\(error)"])
            throw .unreadable(id)
        }
        let versions = DefinitionRegistry.decode(record.flowVersions)
        var catalog = versions.flatMap(registry.catalog(for:))
        if catalog == nil, shared, let versions {
            refreshDefinitions()  // a flow version another node stored moments ago
            catalog = registry.catalog(for: versions)
        }
        guard let catalog else {
            logger.error("stored session runs unknown flow versions", metadata: ["session": "\(id)", "versions": "\(record.flowVersions)"])
            throw .unknownFlowVersions(id)
        }
        var context = SessionCodecs.decodeContext(record.context, userId: record.userId)
        context.user = try storage { try users.state(of: record.userId, store: store) }
        var session = LiveSession(
            id: record.id, userId: record.userId, tokenHash: record.tokenHash, version: record.version, tree: tree,
            context: context, catalog: catalog, flagsJSON: Array(record.flags.utf8), experimentsJSON: Array(record.experiments.utf8),
            flowVersionsJSON: Array(record.flowVersions.utf8), inExperiment: record.experiments != "{}",
            lastTransitionJSON: record.lastTransition.map { Array($0.utf8) }, handledBy: record.handledBy,
            lastActiveAt: SessionExpiry.date(record.updatedAt))
        // Read after the session: every key committed at its version, so the keys the filter
        // does not hold were never used (see `UsedKeys`). A session with more than
        // `UsedKeys.loadedLimit` looks each key up instead of reading them all at every load.
        if let keys = try storage({ try store.usedKeys(sessionId: id, limit: UsedKeys.loadedLimit) }) {
            var used = UsedKeys()
            for key in keys { used.insert(key) }
            session.usedKeys = used
        }
        return session
    }
}
