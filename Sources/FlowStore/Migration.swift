// A numbered schema change from migrations/NNNN_name.sql, and the list the binary was built with.

/// One schema change: `migrations/0002_sessions.sql` is version 2, named `sessions`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Parses a file name of the form `NNNN_name.sql` (any directory before it is ignored).
    public init?(path: String, sql: String) {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        guard file.hasSuffix(".sql") else { return nil }
        let stem = file.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_"),
              let version = Int(stem[..<underscore]), version > 0 else { return nil }
        let name = String(stem[stem.index(after: underscore)...])
        guard !name.isEmpty else { return nil }
        self.init(version: version, name: name, sql: sql)
    }

    /// The migrations of the repo's `migrations/DIALECT/` folder, embedded at build time, in order.
    ///
    /// Embedding (rather than locating the folder at run time) makes the binary self-contained:
    /// the same schema whether it runs from the repo, from `.build`, or from the Docker image.
    public static func bundled(_ dialect: SQLDialect) -> [Migration] {
        switch dialect {
        case .sqlite: bundledSQLite
        case .postgresql: bundledPostgreSQL
        }
    }

    private static let bundledSQLite = embedded(in: "migrations/sqlite/")
    private static let bundledPostgreSQL = embedded(in: "migrations/postgresql/")

    private static func embedded(in folder: String) -> [Migration] {
        EmbeddedMigrations.files
            .filter { $0.path.hasPrefix(folder) }
            .compactMap { Migration(path: $0.path, sql: $0.text) }
            .sorted { $0.version < $1.version }
    }

    /// Checks that `migrations` are numbered in ascending order, each once
    /// (`StoreError.badMigrationSequence`). A number may be skipped: branches developed side by
    /// side take numbers of their own, and a database applies the ones it lacks, whatever order
    /// they arrive in.
    public static func checkSequence(_ migrations: [Migration]) throws {
        var previous = 0
        for migration in migrations {
            guard migration.version > previous else {
                throw StoreError.badMigrationSequence(
                    "expected a version above \(previous), found \(migration.version) (\(migration.name))")
            }
            previous = migration.version
        }
    }

    /// Checks, before any is applied, that the database's applied migrations (`applied`,
    /// version and name) are a prefix of `migrations`: a newer schema is refused
    /// (`StoreError.schemaTooNew`), and so is a history whose names differ from this binary's.
    public static func checkApplied(_ applied: [(version: Int, name: String)], against migrations: [Migration],
                                    location: String) throws {
        let known = migrations.last?.version ?? 0
        if let newest = applied.map(\.version).max(), newest > known {
            throw StoreError.schemaTooNew(path: location, found: newest, known: known)
        }
        for (version, name) in applied {
            if let bundled = migrations.first(where: { $0.version == version }), bundled.name != name {
                throw StoreError.migrationMismatch(version: version, applied: name, bundled: bundled.name)
            }
        }
    }
}
