// Decodes %HH escapes in path segments and query components (the server receives them raw).

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

    private static func decodeEscapes(_ utf8: some RandomAccessCollection<UInt8>, plusIsSpace: Bool) -> String {
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
        return String(decoding: bytes, as: UTF8.self)
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
