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

    /// The location `value` names, refusing what would otherwise be taken for a file name by
    /// mistake: a URL whose scheme is not `postgresql://` or `postgres://` (`mysql://…`, a
    /// mistyped `postgressql://…`), and `sqlite://` or `file://` URLs (give the path itself).
    ///
    /// ```swift
    /// try DatabaseLocation.checked("./flowstack.sqlite")   // .sqlite(path: "./flowstack.sqlite")
    /// try DatabaseLocation.checked("mysql://db/app")        // throws StoreError.unsupportedLocation
    /// ```
    public static func checked(_ value: String) throws(StoreError) -> DatabaseLocation {
        let location = DatabaseLocation(value)
        guard case .sqlite = location, let scheme = Self.urlScheme(value) else { return location }
        let shown = Self.redact(value)
        let supported = "FlowStack takes a SQLite file path (./flowstack.sqlite) or a PostgreSQL URL (postgresql://USER@HOST:PORT/DB or postgres://…)"
        switch scheme.lowercased() {
        case "sqlite", "sqlite3", "file":
            let rest = value[value.index(value.startIndex, offsetBy: scheme.count + 3)...]
            let path = rest.hasPrefix("/") || rest.hasPrefix(".") ? String(rest) : "./" + rest
            throw .unsupportedLocation(location: shown, reason: "\(scheme):// URLs are not taken; give the SQLite file's path itself, such as \(path)")
        default:
            let hint = scheme.lowercased().hasPrefix("postg") ? " (did you mean postgresql://?)" : ""
            throw .unsupportedLocation(location: shown, reason: "unknown scheme \(scheme)://\(hint); \(supported)")
        }
    }

    /// The scheme of a `scheme://…` value (RFC 3986's letters, digits, `+`, `-`, `.`), else nil.
    static func urlScheme(_ value: String) -> String? {
        guard let end = value.range(of: "://") else { return nil }
        let scheme = value[..<end.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return String(scheme)
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
