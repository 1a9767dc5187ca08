// The audit role of a store: reading the log of admin changes that the other roles append to.

/// The audit log, read in pages. Entries are appended by the other roles, in the transaction of
/// the change they record (a method taking an ``AuditStamp``), so a change and its entry are
/// committed together or not at all.
///
/// ```swift
/// let page = try store.auditLog(after: 0, limit: 100)
/// let next = try store.auditLog(after: page.last?.id ?? 0, limit: 100)
/// ```
public protocol AuditStore: AnyObject, Sendable {
    /// Up to `limit` entries of the audit log with an id above `after`, oldest first. Ids grow
    /// in the order entries were committed, so paging by the last id seen misses none.
    func auditLog(after: Int, limit: Int) throws -> [AuditRecord]
}
