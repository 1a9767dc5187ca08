// LinkPattern: a deep-link URI pattern (`/modal/{content}`, `myapp://x/home?tab={tab}`) and how it matches URIs.

import JSON

/// The URI pattern of a link, in the syntax of Jetpack Navigation's deep links.
///
/// - An optional `scheme://host` prefix: when present, only URIs with that scheme and host
///   match (case-insensitively, ports ignored); when absent, any scheme and host, or none, do.
/// - A path of `/`-separated segments, each a literal or exactly `{name}`: a placeholder is a
///   whole segment. Empty segments and a trailing slash do not count. Literals compare
///   case-sensitively after percent-decoding both sides.
/// - An optional query `?key={name}&key2=literal`. Every key the pattern names must be in the
///   URI (else the pattern does not match); other query items of the URI are ignored; `+` is a
///   space in query parts.
///
/// Captured values are percent-decoded after splitting, so `%2F` stays inside one segment.
///
/// ```swift
/// let pattern = try LinkPattern("/modal/{content}")
/// pattern.placeholders   // ["content"]
/// ```
public struct LinkPattern: Sendable, Equatable, CustomStringConvertible {
    /// A path segment or a query value: a literal (decoded) or a placeholder's name.
    public enum Part: Sendable, Equatable, Hashable {
        case literal(String)
        case placeholder(String)
    }

    /// One `key=value` of the pattern's query.
    public struct QueryItem: Sendable, Equatable {
        public var key: String
        public var value: Part
    }

    /// The pattern as written.
    public let text: String
    /// Lowercased, when the pattern names one.
    public let scheme: String?
    public let host: String?
    public let path: [Part]
    public let query: [QueryItem]

    /// The placeholder names, path first, then query, in written order.
    public var placeholders: [String] {
        var names: [String] = []
        for part in path { if case .placeholder(let name) = part { names.append(name) } }
        for item in query { if case .placeholder(let name) = item.value { names.append(name) } }
        return names
    }

    public var description: String { text }

    /// Reads a pattern.
    ///
    /// - Throws: ``LinkPattern/SyntaxError`` saying what is wrong: no leading `/` or
    ///   `scheme://host`, a `{` inside a literal, a placeholder name that is not an identifier
    ///   or is used twice, a query item with no `=` or a repeated key, a fragment.
    public init(_ text: String) throws(SyntaxError) {
        switch Self.parse(text) {
        case .success(let pattern): self = pattern
        case .failure(let error): throw SyntaxError(message: error.message)
        }
    }

    private init(text: String, scheme: String?, host: String?, path: [Part], query: [QueryItem]) {
        self.text = text
        self.scheme = scheme
        self.host = host
        self.path = path
        self.query = query
    }

    /// Why a pattern could not be read.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    // MARK: reading

    private static func parse(_ text: String) -> Result<LinkPattern, LinkSyntaxError> {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= LinkURI.maxBytes else {
            return .failure(LinkSyntaxError("a pattern is 1 to \(LinkURI.maxBytes) bytes, such as \"/modal/{content}\""))
        }
        if bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return .failure(LinkSyntaxError("a pattern has no spaces or control characters; percent-encode them, such as %20"))
        }
        if bytes.contains(UInt8(ascii: "#")) {
            return .failure(LinkSyntaxError("a pattern has no fragment (#…); fragments of URIs are ignored"))
        }
        var rest = bytes[...]
        var scheme: String?
        var host: String?
        if rest.first != UInt8(ascii: "/") {
            let separator = Array("://".utf8)
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")), rest[colon...].starts(with: separator),
                LinkURI.isScheme(rest[..<colon])
            else {
                return .failure(LinkSyntaxError("a pattern starts with / (any scheme and host) or with scheme://host/, such as \"myapp://example.com/modal/{content}\""))
            }
            scheme = String(decoding: rest[..<colon], as: UTF8.self).lowercased()
            rest = rest[(colon + 3)...]
            let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
            let hostBytes = rest[..<end]
            guard !hostBytes.isEmpty, hostBytes.allSatisfy(isHostByte) else {
                return .failure(LinkSyntaxError("the host of a pattern is a name of letters, digits, '-', '.', '_' or '~' (no port, no placeholder); found \(JSONValue.string(String(decoding: hostBytes, as: UTF8.self)).abbreviatedJSON(limit: 40))"))
            }
            host = String(decoding: hostBytes, as: UTF8.self).lowercased()
            rest = rest[end...]
        } else if rest.starts(with: "//".utf8) {
            return .failure(LinkSyntaxError("a pattern cannot start with //; write /path, or scheme://host/path"))
        }
        var queryBytes: ArraySlice<UInt8>?
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            queryBytes = rest[(question + 1)...]
            rest = rest[..<question]
        }
        var names: Set<String> = []
        var path: [Part] = []
        for raw in rest.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            switch part(raw, plusIsSpace: false, names: &names) {
            case .success(let part): path.append(part)
            case .failure(let error): return .failure(error)
            }
        }
        var query: [QueryItem] = []
        for raw in queryBytes?.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) ?? [] {
            guard let equals = raw.firstIndex(of: UInt8(ascii: "=")), equals > raw.startIndex else {
                return .failure(LinkSyntaxError("a query item of a pattern is key={name} or key=value; found \(quoted(raw))"))
            }
            let rawKey = raw[..<equals]
            if rawKey.contains(UInt8(ascii: "{")) || rawKey.contains(UInt8(ascii: "}")) {
                return .failure(LinkSyntaxError("a query key cannot be a placeholder; write key={name}, found \(quoted(raw))"))
            }
            let key: String
            switch LinkURI.percentDecoded(rawKey, plusIsSpace: true) {
            case .success(let decoded): key = decoded
            case .failure(let error): return .failure(error)
            }
            if query.contains(where: { $0.key == key }) {
                return .failure(LinkSyntaxError("query key \(JSONValue.string(key).abbreviatedJSON(limit: 40)) appears twice"))
            }
            switch part(raw[(equals + 1)...], plusIsSpace: true, names: &names) {
            case .success(let value): query.append(QueryItem(key: key, value: value))
            case .failure(let error): return .failure(error)
            }
        }
        return .success(LinkPattern(text: text, scheme: scheme, host: host, path: path, query: query))
    }

    /// A segment or query value: `{name}` exactly, or a literal with no braces.
    private static func part(_ raw: ArraySlice<UInt8>, plusIsSpace: Bool, names: inout Set<String>) -> Result<Part, LinkSyntaxError> {
        let open = UInt8(ascii: "{")
        let close = UInt8(ascii: "}")
        if raw.first == open, raw.last == close, raw.count >= 2 {
            let name = String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
            guard isIdentifier(name) else {
                return .failure(LinkSyntaxError("placeholder \(quoted(raw)) must name an identifier: a letter or _, then letters, digits or _"))
            }
            guard names.insert(name).inserted else {
                return .failure(LinkSyntaxError("placeholder {\(name)} appears twice; each placeholder captures one value"))
            }
            return .success(.placeholder(name))
        }
        if raw.contains(open) || raw.contains(close) {
            return .failure(LinkSyntaxError("\(quoted(raw)) mixes a placeholder with text; a placeholder is a whole segment or query value, such as /modal/{content}"))
        }
        if raw.isEmpty { return .success(.literal("")) }
        return LinkURI.percentDecoded(raw, plusIsSpace: plusIsSpace).map(Part.literal)
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, LinkURI.isLetter(first) || first == UInt8(ascii: "_"), name.utf8.count <= 100 else {
            return false
        }
        return name.utf8.allSatisfy { LinkURI.isLetter($0) || LinkURI.isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        LinkURI.isLetter(byte) || LinkURI.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
    }

    private static func quoted(_ raw: ArraySlice<UInt8>) -> String {
        JSONValue.string(String(decoding: raw, as: UTF8.self)).abbreviatedJSON(limit: 40)
    }

    // MARK: matching

    /// The values the placeholders capture from `uri`, in ``placeholders`` order, or `nil` when
    /// the pattern does not match it.
    func captures(_ uri: LinkURI) -> [(name: String, value: String)]? {
        if let scheme {
            guard uri.scheme == scheme, uri.host == host else { return nil }
        }
        guard uri.segments.count == path.count else { return nil }
        var captured: [(name: String, value: String)] = []
        for (part, segment) in zip(path, uri.segments) {
            switch part {
            case .literal(let literal): if literal != segment { return nil }
            case .placeholder(let name): captured.append((name, segment))
            }
        }
        for item in query {
            guard let value = uri.queryValue(item.key) else { return nil }
            switch item.value {
            case .literal(let literal): if literal != value { return nil }
            case .placeholder(let name): captured.append((name, value))
            }
        }
        return captured
    }

    /// Whether this pattern wins over `other` when both match a URI: more literal path
    /// segments, then more query keys, then more literal query values, then a scheme and host,
    /// then a literal where the other has a placeholder at the first place they differ. Both
    /// have as many segments as the URI.
    func isMoreSpecific(than other: LinkPattern) -> Bool {
        if literalCount != other.literalCount { return literalCount > other.literalCount }
        if query.count != other.query.count { return query.count > other.query.count }
        if literalQueryCount != other.literalQueryCount { return literalQueryCount > other.literalQueryCount }
        if (host != nil) != (other.host != nil) { return host != nil }
        for (mine, theirs) in zip(path, other.path) {
            switch (mine, theirs) {
            case (.literal, .placeholder): return true
            case (.placeholder, .literal): return false
            default: continue
            }
        }
        return false
    }

    private var literalQueryCount: Int {
        query.reduce(0) { count, item in
            if case .literal = item.value { return count + 1 }
            return count
        }
    }

    private var literalCount: Int {
        path.reduce(0) { count, part in
            if case .literal = part { return count + 1 }
            return count
        }
    }

    /// What makes two patterns match exactly the same URIs: scheme, host, literals and where the
    /// placeholders are, the query keys and their literal values. Placeholder names and types
    /// do not count.
    struct Shape: Hashable {
        var scheme: String?
        var host: String?
        var path: [String?]
        var query: [String: String?]
    }

    var shape: Shape {
        var queryShape: [String: String?] = [:]
        for item in query {
            switch item.value {
            case .literal(let literal): queryShape[item.key] = .some(literal)
            case .placeholder: queryShape[item.key] = .some(nil)
            }
        }
        return Shape(
            scheme: scheme, host: host,
            path: path.map { part in
                if case .literal(let literal) = part { return literal }
                return nil
            },
            query: queryShape)
    }
}
