// FlowListSnapshot: a screen's list as a diffable data source's snapshot, with the server's reloads. Not built on Linux; see APPLE.md.

#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

/// A screen's list as `NSDiffableDataSourceSnapshot` of section and row ids, for a
/// `UITableViewDiffableDataSource` / `UICollectionViewDiffableDataSource` keyed by id.
///
/// The snapshot moves, inserts and deletes by id (UIKit diffs ids itself); what ids cannot say,
/// that a row's values changed, comes from the changes: their reloaded rows are reconfigured.
///
/// ```swift
/// func updateList(_ sections: [ListSection], changes: ListChanges, animated: Bool) {
///     rows = Dictionary(sections.flatMap(\.rows).map { ($0.id, $0) }, uniquingKeysWith: { $1 })
///     dataSource.apply(FlowListSnapshot.snapshot(sections, reconfiguring: changes), animatingDifferences: animated)
/// }
/// ```
public enum FlowListSnapshot {
    /// The snapshot of `sections`, with the rows `changes` reloads marked for reconfiguring.
    @MainActor
    public static func snapshot(_ sections: [ListSection], reconfiguring changes: ListChanges? = nil)
        -> NSDiffableDataSourceSnapshot<String, String>
    {
        var snapshot = NSDiffableDataSourceSnapshot<String, String>()
        snapshot.appendSections(sections.map(\.id))
        for section in sections { snapshot.appendItems(section.rows.map(\.id), toSection: section.id) }
        if let changes {
            let reloaded = changes.rows.reloaded.map(\.id)
            if !reloaded.isEmpty { snapshot.reconfigureItems(reloaded) }
            let sectionsReloaded = changes.sections.reloaded.map(\.id)
            if !sectionsReloaded.isEmpty { snapshot.reloadSections(sectionsReloaded) }
        }
        return snapshot
    }
}
#endif
