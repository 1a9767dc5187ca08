// Decodes %HH escapes in path segments and query components (the server receives them raw),
// and tells a path whose escapes are not UTF-8, which the router refuses.

enum PercentDecoding {
    /// Decodes `%HH` escapes (and `+` as a space when `plusIsSpace`, as in query strings). A `%`
    /// not followed by two hex digits is kept as it is; invalid UTF-8 becomes U+FFFD.
    ///
    /// ```swift
    /// PercentDecoding.decode("a%2Fb", plusIsSpace: false) // "a/b"
    /// ```
    static func decode(_ text: some StringProtocol, plusIsSpace: Bool) -> String {
        guard needsDecoding(text.utf8, plusIsSpace: plusIsSpace) else { return String(text) }
        return decodeEscapes(Array(text.utf8), plusIsSpace: plusIsSpace)
    }

    /// `decode` for UTF-8 bytes, such as a path segment.
    static func decode(_ utf8: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String {
        guard needsDecoding(utf8, plusIsSpace: plusIsSpace) else { return String(decoding: utf8, as: UTF8.self) }
        return decodeEscapes(utf8, plusIsSpace: plusIsSpace)
    }

    /// True when the text holds a `%` (or a `+` that stands for a space): most do not, and are
    /// then taken as they are, without a copy.
    static func needsDecoding(_ utf8: some Sequence<UInt8>, plusIsSpace: Bool) -> Bool {
        utf8.contains { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }
    }

    /// True when `path`, its `%HH` escapes decoded, is valid UTF-8. `%FF%FE` and the overlong
    /// `%C0%AF` are not: decoded lossily, each would become U+FFFD and two different paths would
    /// name the same id, so the router refuses them (400) as the JSON parser refuses such bodies.
    /// A raw `/` (0x2F) is never inside a multi-byte sequence, so the whole path is valid
    /// exactly when each of its segments is.
    ///
    /// ```swift
    /// PercentDecoding.isValidUTF8(path: "/v1/users/%C3%A9")  // true ("é")
    /// PercentDecoding.isValidUTF8(path: "/v1/users/%FF%FE")  // false
    /// ```
    public static func isValidUTF8(path: String) -> Bool {
        var path = path
        return path.withUTF8 { isValidUTF8(path: $0) }
    }

    /// `isValidUTF8(path:)` for the path's bytes; a path without `%` is valid as it is (a
    /// Swift string holds only valid UTF-8).
    static func isValidUTF8(path utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard needsDecoding(utf8, plusIsSpace: false) else { return true }
        return String(validating: decodedBytes(utf8, plusIsSpace: false), as: UTF8.self) != nil
    }

    /// The path of a request line as received: as it is when it is UTF-8, else with each byte
    /// of 0x80 and above written as its `%HH` escape, so that the router sees the bytes that were
    /// sent (and refuses them) rather than the U+FFFD a lossy decoding would make of them.
    static func path(fromRaw url: UnsafePointer<CChar>) -> String {
        if let path = String(validatingCString: url) { return path }
        let digits = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        var cursor = UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self)
        while cursor.pointee != 0 {
            let byte = cursor.pointee
            if byte < 0x80 {
                escaped.append(byte)
            } else {
                escaped += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
            cursor += 1
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func decodeEscapes(_ utf8: some RandomAccessCollection<UInt8>, plusIsSpace: Bool) -> String {
        String(decoding: decodedBytes(utf8, plusIsSpace: plusIsSpace), as: UTF8.self)
    }

    private static func decodedBytes(_ utf8: some RandomAccessCollection<UInt8>, plusIsSpace: Bool) -> [UInt8] {
        let utf8 = Array(utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count, let high = hex(utf8[index + 1]), let low = hex(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return bytes
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
