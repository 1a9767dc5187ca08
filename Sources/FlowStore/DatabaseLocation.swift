// Where `--db` points: a SQLite file, or a PostgreSQL connection URI; and how to show it safely.

/// The value of `--db` (or `FLOWSTACK_DB`), read as what it names.
///
/// ```swift
/// DatabaseLocation("./flowstack.sqlite")                        // .sqlite(path: "./flowstack.sqlite")
/// DatabaseLocation("postgresql://fs:secret@db:5432/flowstack")  // .postgresql(uri: …)
/// DatabaseLocation("postgres://db/flowstack").redacted           // never shows a password
/// ```
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// A file path; created when missing.
    case sqlite(path: String)
    /// A libpq connection URI (`postgresql://` or `postgres://`), passed to libpq as written.
    case postgresql(uri: String)

    public init(_ value: String) {
        let lowered = value.lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") {
            self = .postgresql(uri: value)
        } else {
            self = .sqlite(path: value)
        }
    }

    /// The location for logs and messages: a URI's password (in its user part or as a
    /// `password=` parameter) is replaced by `***`.
    public var redacted: String {
        switch self {
        case .sqlite(let path): path
        case .postgresql(let uri): Self.redact(uri)
        }
    }

    public var description: String { redacted }

    static func redact(_ uri: String) -> String {
        guard let schemeEnd = uri.range(of: "://") else { return uri }
        var rest = uri[schemeEnd.upperBound...]
        var result = String(uri[..<schemeEnd.upperBound])
        // userinfo ends at the last "@" before the path; a password is what follows its ":".
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let userinfo = rest[..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                result += userinfo[..<colon] + ":***"
            } else {
                result += userinfo
            }
            rest = rest[at...]
        }
        guard let query = rest.firstIndex(of: "?") else { return result + rest }
        result += rest[...query]
        let parameters = rest[rest.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
        result += parameters.map { parameter -> String in
            let name = parameter.split(separator: "=", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            return name == "password" ? "password=***" : String(parameter)
        }.joined(separator: "&")
        return result
    }
}
