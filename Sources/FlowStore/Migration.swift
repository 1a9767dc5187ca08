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

    /// The migrations of the repo's `migrations/` folder, embedded at build time, in order.
    ///
    /// Embedding (rather than locating the folder at run time) makes the binary self-contained:
    /// the same schema whether it runs from the repo, from `.build`, or from the Docker image.
    public static let bundled: [Migration] = EmbeddedMigrations.files
        .compactMap { Migration(path: $0.path, sql: $0.text) }
        .sorted { $0.version < $1.version }
}
