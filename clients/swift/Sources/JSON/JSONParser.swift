// JSONParser: a strict RFC 8259 parser from UTF-8 bytes to JSONValue, with size and depth limits.
// Here the entry points and the document; values, numbers and strings in JSONParser+values,
// +numbers and +strings.

/// A strict JSON parser (RFC 8259) working on UTF-8 bytes.
///
/// It rejects what lenient parsers let through, because every request body goes through it:
/// invalid UTF-8, unescaped control characters, lone surrogates in `\u` escapes, duplicate
/// object keys, `NaN`/`Infinity`, leading zeros, trailing commas, a byte-order mark and
/// anything after the value. Every error carries the byte offset where it was found.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"type": "back"}"#.utf8))
/// value["type"]   // .string("back")
/// ```
public struct JSONParser {
    /// Bounds on what one parse may consume, so a hostile body costs little.
    public struct Limits: Sendable, Equatable {
        /// Deepest nesting of arrays and objects; at most ``JSONParser/Limits/depthCeiling``.
        public var maxDepth: Int
        /// Longest string, in UTF-8 bytes after unescaping.
        public var maxStringLength: Int
        /// Largest input, in bytes.
        public var maxInputSize: Int

        /// The parser recurses once per nesting level; capping the depth keeps it far from the
        /// stack limit of any thread it may run on.
        public static let depthCeiling = 512

        /// For what the server wrote itself (a session's tree, a stored definition): any size,
        /// as deep as the parser goes. Client input was bounded when it arrived; data built from
        /// it over many requests can outgrow those bounds and must still read back.
        public static let storedData = Limits(maxDepth: depthCeiling, maxStringLength: .max, maxInputSize: .max)

        /// Defaults: depth 64, strings up to 1 MiB, input up to 8 MiB.
        public init(maxDepth: Int = 64, maxStringLength: Int = 1 << 20, maxInputSize: Int = 8 << 20) {
            self.maxDepth = maxDepth
            self.maxStringLength = maxStringLength
            self.maxInputSize = maxInputSize
        }
    }

    /// Parses one JSON value from `bytes`.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, limits: limits)
        return try parser.parseDocument()
    }

    /// Parses one JSON value from any collection of bytes.
    public static func parse(_ bytes: some Collection<UInt8>, limits: Limits = Limits()) throws(JSONParseError) -> JSONValue {
        try parse(Array(bytes), limits: limits)
    }

    /// Parses one JSON value from text.
    public static func parse(_ text: String, limits: Limits = Limits()) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }

    let bytes: [UInt8]
    let maxDepth: Int
    let maxStringLength: Int
    let maxInputSize: Int
    var index = 0
    var depth = 0

    /// Longer number literals are surely hostile; the cap keeps conversion cheap.
    static let maxNumberLength = 512

    init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        maxDepth = max(0, min(limits.maxDepth, Limits.depthCeiling))
        maxStringLength = max(0, limits.maxStringLength)
        maxInputSize = max(0, limits.maxInputSize)
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        guard bytes.count <= maxInputSize else {
            throw JSONParseError(
                reason: .inputTooLarge, offset: maxInputSize,
                message: "input is \(bytes.count) bytes; the limit is \(maxInputSize)")
        }
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw JSONParseError(
                reason: .unexpectedByte, offset: 0,
                message: "a byte-order mark is not allowed; send plain UTF-8 JSON")
        }
        skipWhitespace()
        let value = try parseValue(after: nil)
        skipWhitespace()
        if index < bytes.count {
            throw JSONParseError(
                reason: .trailingData, offset: index,
                message: "unexpected \(describe(bytes[index])) after the JSON value; expected the end of input")
        }
        return value
    }

    // MARK: helpers

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(describeRaw(byte))'" }
        return "byte 0x" + hex2(byte)
    }

    func describeRaw(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "(byte 0x" + hex2(byte) + ")"
    }

    func hex2(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    func hex4(_ unit: UInt16) -> String {
        hex2(UInt8(unit >> 8)) + hex2(UInt8(unit & 0xFF))
    }
}
