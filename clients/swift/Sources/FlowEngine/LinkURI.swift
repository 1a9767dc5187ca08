// LinkURI: a URI a client asks to open, split into scheme, host, decoded path segments and query items.

import JSON

/// A URI as links see it: an optional scheme and host (both lowercased), the path's non-empty
/// segments and the query's items, each percent-decoded after splitting so that `%2F` stays
/// inside its segment. The fragment is dropped.
///
/// Accepted: an absolute URI (`myapp://x/modal/Hi`, `https://example.com/home?tab=1`,
/// `myapp:/modal/Hi`) or an absolute path (`/modal/Hi`); 1 to 2048 bytes, no spaces or
/// control characters, percent-encodings that decode to UTF-8.
struct LinkURI: Equatable {
    static let maxBytes = 2048

    var scheme: String?
    var host: String?
    var segments: [String]
    /// In written order; a key may repeat (the first one counts when matching).
    var query: [(key: String, value: String)]

    static func == (lhs: LinkURI, rhs: LinkURI) -> Bool {
        lhs.scheme == rhs.scheme && lhs.host == rhs.host && lhs.segments == rhs.segments
            && lhs.query.elementsEqual(rhs.query) { $0.key == $1.key && $0.value == $1.value }
    }

    /// The value of the first query item named `key`.
    func queryValue(_ key: String) -> String? {
        query.first { $0.key == key }?.value
    }

    /// Splits and decodes `text`; the error is a sentence saying what is wrong with it.
    static func parse(_ text: String) -> Result<LinkURI, LinkSyntaxError> {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxBytes else {
            return .failure(LinkSyntaxError("a URI is 1 to \(maxBytes) bytes; found \(bytes.count)"))
        }
        if let index = bytes.firstIndex(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return .failure(LinkSyntaxError("a URI has no spaces or control characters (percent-encode them, such as %20); found one at byte \(index)"))
        }
        if let byte = bytes.first(where: { neverInURI.contains($0) }) {
            let hex = String(byte, radix: 16, uppercase: true)
            return .failure(LinkSyntaxError("a URI never holds \(JSONValue.string(String(UnicodeScalar(byte))).abbreviatedJSON(limit: 8)) as it is (RFC 3986); percent-encode it as %\(hex)"))
        }
        var rest = bytes[...]
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        var scheme: String?
        var host: String?
        // Where an IP literal's brackets may be: right after `scheme://`; nowhere else.
        var literalEnd = bytes.startIndex
        if rest.first != UInt8(ascii: "/") {
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")), isScheme(rest[..<colon]) else {
                return .failure(LinkSyntaxError("a URI is absolute, such as myapp://host/path, or a path starting with /"))
            }
            scheme = String(decoding: rest[..<colon], as: UTF8.self).lowercased()
            rest = rest[(colon + 1)...]
            if rest.starts(with: "//".utf8) {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
                switch hostName(of: rest[..<end]) {
                case .success(let name):
                    host = name
                    if name.hasPrefix("[") { literalEnd = rest.startIndex + name.utf8.count }
                case .failure(let error): return .failure(error)
                }
                rest = rest[end...]
            }
        } else if rest.starts(with: "//".utf8) {
            return .failure(LinkSyntaxError("a URI path cannot start with //; give a scheme (myapp://host/path) or a single /"))
        }
        if bytes[literalEnd...].contains(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) {
            return .failure(LinkSyntaxError("a URI holds [ and ] only around an IP-literal host (myapp://[::1]/path); percent-encode them elsewhere as %5B and %5D"))
        }
        var queryBytes: ArraySlice<UInt8>?
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            queryBytes = rest[(question + 1)...]
            rest = rest[..<question]
        }
        var segments: [String] = []
        for raw in rest.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            switch percentDecoded(raw, plusIsSpace: false) {
            case .success(let segment): segments.append(segment)
            case .failure(let error): return .failure(error)
            }
        }
        var query: [(key: String, value: String)] = []
        for raw in queryBytes?.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) ?? [] {
            let equals = raw.firstIndex(of: UInt8(ascii: "="))
            let rawKey = equals.map { raw[..<$0] } ?? raw
            let rawValue = equals.map { raw[($0 + 1)...] } ?? raw[raw.endIndex...]
            let key: String
            let value: String
            switch percentDecoded(rawKey, plusIsSpace: true) {
            case .success(let decoded): key = decoded
            case .failure(let error): return .failure(error)
            }
            switch percentDecoded(rawValue, plusIsSpace: true) {
            case .success(let decoded): value = decoded
            case .failure(let error): return .failure(error)
            }
            query.append((key, value))
        }
        return .success(LinkURI(scheme: scheme, host: host, segments: segments, query: query))
    }

    /// RFC 3986: a letter, then letters, digits, `+`, `-` or `.`.
    static func isScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// The host of an authority, lowercased: without `userinfo@` and without `:port`; an IP
    /// literal (`[::1]`) keeps its brackets and colons.
    private static func hostName(of authority: ArraySlice<UInt8>) -> Result<String, LinkSyntaxError> {
        var host = authority
        if host.first == UInt8(ascii: "[") {
            // An IP literal, the one place a URI holds brackets: hex digits, colons and dots.
            guard let close = host.firstIndex(of: UInt8(ascii: "]")), close > host.startIndex + 1,
                  host[(host.startIndex + 1)..<close].allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else {
                return .failure(LinkSyntaxError("a URI's IP-literal host is [ then hex digits, colons and dots, then ]"))
            }
            host = host[...close]
        } else {
            if let at = host.lastIndex(of: UInt8(ascii: "@")) { host = host[(at + 1)...] }
            if let colon = host.firstIndex(of: UInt8(ascii: ":")) { host = host[..<colon] }
        }
        return .success(String(decoding: host, as: UTF8.self).lowercased())
    }

    /// Bytes RFC 3986 allows in no part of a URI: `"<>\^`{|}`. (`[` and `]` only around an IP
    /// literal host, checked with it.)
    private static let neverInURI: Set<UInt8> = Set("\"<>\\^`{|}".utf8)

    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39
    }

    /// `bytes` with each `%XX` replaced by its byte (and `+` by a space in query parts); the
    /// result must be UTF-8.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> Result<String, LinkSyntaxError> {
        guard bytes.contains(UInt8(ascii: "%")) || (plusIsSpace && bytes.contains(UInt8(ascii: "+"))) else {
            return .success(String(decoding: bytes, as: UTF8.self))
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else {
                    let found = String(decoding: bytes[index..<min(index + 3, bytes.endIndex)], as: UTF8.self)
                    return .failure(LinkSyntaxError("\(JSONValue.string(found).abbreviatedJSON(limit: 40)) is not a percent-encoding; write % as %25 and a byte as %XX with two hex digits"))
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(plusIsSpace && byte == UInt8(ascii: "+") ? 0x20 : byte)
                index += 1
            }
        }
        guard let text = String(validating: decoded, as: UTF8.self) else {
            let raw = String(decoding: bytes, as: UTF8.self)
            return .failure(LinkSyntaxError("\(JSONValue.string(raw).abbreviatedJSON(limit: 60)) decodes to bytes that are not UTF-8"))
        }
        return .success(text)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}

/// Why a URI or a link pattern could not be read: a sentence for people.
struct LinkSyntaxError: Error, Equatable {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}

