// The savepoint of one commit in a batch, taken only by a commit that writes more than once.
import GRDB

/// Keeps one commit's writes together inside the batch's transaction: `open` before the first
/// of several writes, then `release` when they all succeeded or `rollBack` when one failed.
/// A commit that writes one statement (the log entry alone, most actions) never opens it:
/// SQLite undoes a failed statement whole and leaves the transaction open, so the savepoint
/// would only cost two statements more on the writer thread.
///
/// The statements run through SQLite's C interface (`DirectStatement`), as the log entry's
/// insert does. GRDB does not see them: it counts savepoints only to buffer the changes its
/// transaction observers are told of, and the writer's connection has none.
struct CommitSavepoint {
    private let saving: DirectStatement
    private let releasing: DirectStatement
    private let rollingBack: DirectStatement
    /// Opened by this commit and not yet ended.
    private(set) var isOpen = false

    init(_ db: Database) throws {
        saving = DirectStatement(try db.cachedStatement(sql: "SAVEPOINT action"), in: db)
        releasing = DirectStatement(try db.cachedStatement(sql: "RELEASE SAVEPOINT action"), in: db)
        rollingBack = DirectStatement(try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT action"), in: db)
    }

    /// Opens it before the commit's first write; once per commit.
    mutating func open() throws {
        precondition(!isOpen, "a commit's savepoint is opened once")
        try saving.run()
        isOpen = true
    }

    /// The commit succeeded: keeps its writes in the transaction. Nothing to do when it was
    /// not opened. Still open when the release fails, so that `rollBack` takes the writes back.
    mutating func release() throws {
        guard isOpen else { return }
        try releasing.run()
        isOpen = false
    }

    /// The commit failed: takes back what it wrote, and ends the savepoint. Without a
    /// savepoint, the one statement that failed was undone by SQLite. When this fails, the
    /// batch's transaction is rolled back whole.
    mutating func rollBack() throws {
        guard isOpen else { return }
        try rollingBack.run()
        try releasing.run()
        isOpen = false
    }
}
