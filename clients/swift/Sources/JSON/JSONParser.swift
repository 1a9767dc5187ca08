// JSONParser: a strict RFC 8259 parser from UTF-8 bytes to JSONValue, with size and depth limits.

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

    private let bytes: [UInt8]
    private let maxDepth: Int
    private let maxStringLength: Int
    private let maxInputSize: Int
    private var index = 0
    private var depth = 0

    /// Longer number literals are surely hostile; the cap keeps conversion cheap.
    private static let maxNumberLength = 512

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        maxDepth = max(0, min(limits.maxDepth, Limits.depthCeiling))
        maxStringLength = max(0, limits.maxStringLength)
        maxInputSize = max(0, limits.maxInputSize)
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
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

    // MARK: values

    /// `context` names what preceded the value, for the message when it is missing.
    private mutating func parseValue(after context: String?) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else {
            throw JSONParseError(
                reason: .unexpectedEnd, offset: index,
                message: "unexpected end of input; expected a JSON value" + (context.map { " after \($0)" } ?? ""))
        }
        switch bytes[index] {
        case 0x7B: return try parseObject()  // {
        case 0x5B: return try parseArray()  // [
        case 0x22: return .string(try parseString())  // "
        case 0x74: try expectLiteral("true"); return .bool(true)
        case 0x66: try expectLiteral("false"); return .bool(false)
        case 0x6E: try expectLiteral("null"); return .null
        case 0x2D, 0x30...0x39: return try parseNumber()  // - 0-9
        default:
            var message = "unexpected \(describe(bytes[index])); expected a JSON value"
            if let context { message += " after \(context)" }
            if bytes[index] == 0x4E || bytes[index] == 0x49 {  // N, I
                message += " (NaN and Infinity are not JSON)"
            }
            throw JSONParseError(reason: .unexpectedByte, offset: index, message: message)
        }
    }

    private mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth {
            throw JSONParseError(
                reason: .tooDeep, offset: index,
                message: "arrays and objects are nested deeper than \(maxDepth) levels")
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members: [JSONObject.Member] = []
        var seenKeys: Set<String>? = nil
        skipWhitespace()
        if index < bytes.count, bytes[index] == 0x7D {
            index += 1
            depth -= 1
            return .object(JSONObject(uniqueMembers: members))
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else {
                throw JSONParseError(
                    reason: .unexpectedEnd, offset: index,
                    message: "unexpected end of input; expected a string key in an object")
            }
            guard bytes[index] == 0x22 else {
                throw JSONParseError(
                    reason: .unexpectedByte, offset: index,
                    message: "unexpected \(describe(bytes[index])); expected a string key in an object")
            }
            let keyOffset = index
            let key = try parseString()
            // A linear scan is cheapest for the small objects requests carry; a set takes over
            // for big ones so a hostile body cannot make this quadratic.
            var duplicate = false
            if var keys = seenKeys {
                seenKeys = nil
                duplicate = !keys.insert(key).inserted
                seenKeys = keys
            } else if members.count < 16 {
                duplicate = members.contains { $0.key == key }
            } else {
                var keys = Set(members.map(\.key))
                duplicate = !keys.insert(key).inserted
                seenKeys = keys
            }
            if duplicate {
                throw JSONParseError(
                    reason: .duplicateKey, offset: keyOffset,
                    message: "duplicate key \(JSONValue.string(key).abbreviatedJSON()) in object; each key may appear once")
            }
            skipWhitespace()
            guard index < bytes.count else {
                throw JSONParseError(
                    reason: .unexpectedEnd, offset: index,
                    message: "unexpected end of input; expected ':' after an object key")
            }
            guard bytes[index] == 0x3A else {
                throw JSONParseError(
                    reason: .unexpectedByte, offset: index,
                    message: "unexpected \(describe(bytes[index])); expected ':' after an object key")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(after: "':'")
            members.append(JSONObject.Member(key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else {
                throw JSONParseError(
                    reason: .unexpectedEnd, offset: index,
                    message: "unexpected end of input; expected ',' or '}' in an object")
            }
            switch bytes[index] {
            case 0x2C:
                index += 1
            case 0x7D:
                index += 1
                depth -= 1
                return .object(JSONObject(uniqueMembers: members))
            default:
                throw JSONParseError(
                    reason: .unexpectedByte, offset: index,
                    message: "unexpected \(describe(bytes[index])); expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == 0x5D {
            index += 1
            depth -= 1
            return .array(elements)
        }
        var context = "'['"
        while true {
            skipWhitespace()
            elements.append(try parseValue(after: context))
            skipWhitespace()
            guard index < bytes.count else {
                throw JSONParseError(
                    reason: .unexpectedEnd, offset: index,
                    message: "unexpected end of input; expected ',' or ']' in an array")
            }
            switch bytes[index] {
            case 0x2C:
                index += 1
                context = "','"
            case 0x5D:
                index += 1
                depth -= 1
                return .array(elements)
            default:
                throw JSONParseError(
                    reason: .unexpectedByte, offset: index,
                    message: "unexpected \(describe(bytes[index])); expected ',' or ']' in an array")
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = index
        let count = literal.utf8CodeUnitCount
        var matched = index + count <= bytes.count
        if matched {
            let pointer = literal.utf8Start
            for offset in 0..<count where bytes[start + offset] != pointer[offset] {
                matched = false
                break
            }
        }
        guard matched else {
            throw JSONParseError(
                reason: .invalidLiteral, offset: start,
                message: "invalid literal; expected '\(literal)'")
        }
        index += count
    }

    // MARK: numbers

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        let negative = bytes[index] == 0x2D
        if negative { index += 1 }
        guard index < bytes.count, Self.isDigit(bytes[index]) else {
            throw JSONParseError(
                reason: .invalidNumber, offset: index,
                message: "invalid number; expected a digit after '-'")
        }
        if bytes[index] == 0x30 {
            index += 1
            if index < bytes.count, Self.isDigit(bytes[index]) {
                throw JSONParseError(
                    reason: .invalidNumber, offset: start,
                    message: "invalid number; leading zeros are not allowed")
            }
        } else {
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        }
        let integerEnd = index
        var isInteger = true
        if index < bytes.count, bytes[index] == 0x2E {  // .
            index += 1
            guard index < bytes.count, Self.isDigit(bytes[index]) else {
                throw JSONParseError(
                    reason: .invalidNumber, offset: index,
                    message: "invalid number; expected a digit after '.'")
            }
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
            isInteger = false
        }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {  // e E
            index += 1
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else {
                throw JSONParseError(
                    reason: .invalidNumber, offset: index,
                    message: "invalid number; expected a digit in the exponent")
            }
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
            isInteger = false
        }
        guard index - start <= Self.maxNumberLength else {
            throw JSONParseError(
                reason: .numberOutOfRange, offset: start,
                message: "number literal is longer than \(Self.maxNumberLength) characters")
        }
        if isInteger, let exact = exactInteger(from: start + (negative ? 1 : 0), to: integerEnd, negative: negative) {
            return .integer(exact)
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(
                reason: .numberOutOfRange, offset: start,
                message: "number \(text.prefix(40)) is outside the range of a 64-bit float")
        }
        return .number(value)
    }

    /// The integer written in `bytes[from..<to]` when it fits in `Int`; `-0` is left to the
    /// floating-point path so that its sign survives.
    private func exactInteger(from: Int, to: Int, negative: Bool) -> Int? {
        var value = 0
        for position in from..<to {
            let digit = Int(bytes[position] &- 0x30)
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if negative && value == 0 { return nil }
        return value
    }

    // MARK: strings

    private mutating func parseString() throws(JSONParseError) -> String {
        let quoteOffset = index
        index += 1
        let contentStart = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x22 {
                try checkStringLength(index - contentStart, at: quoteOffset)
                let string = String(decoding: bytes[contentStart..<index], as: UTF8.self)
                index += 1
                return string
            } else if byte == 0x5C {
                return try parseEscapedString(contentStart: contentStart, quoteOffset: quoteOffset)
            } else if byte < 0x20 {
                throw controlCharacterError()
            } else if byte < 0x80 {
                index += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        throw JSONParseError(
            reason: .unexpectedEnd, offset: index,
            message: "unexpected end of input; the string starting at byte \(quoteOffset) is not closed")
    }

    /// The slow path, taken at the first backslash: copies bytes into a buffer while decoding
    /// escapes.
    private mutating func parseEscapedString(contentStart: Int, quoteOffset: Int) throws(JSONParseError) -> String {
        var buffer = Array(bytes[contentStart..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x22 {
                try checkStringLength(buffer.count, at: quoteOffset)
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            } else if byte == 0x5C {
                try decodeEscape(into: &buffer)
            } else if byte < 0x20 {
                throw controlCharacterError()
            } else if byte < 0x80 {
                buffer.append(byte)
                index += 1
            } else {
                let start = index
                try skipUTF8Sequence()
                buffer.append(contentsOf: bytes[start..<index])
            }
            if buffer.count > maxStringLength { try checkStringLength(buffer.count, at: quoteOffset) }
        }
        throw JSONParseError(
            reason: .unexpectedEnd, offset: index,
            message: "unexpected end of input; the string starting at byte \(quoteOffset) is not closed")
    }

    private func checkStringLength(_ length: Int, at offset: Int) throws(JSONParseError) {
        if length > maxStringLength {
            throw JSONParseError(
                reason: .stringTooLong, offset: offset,
                message: "string is longer than \(maxStringLength) bytes")
        }
    }

    private func controlCharacterError() -> JSONParseError {
        JSONParseError(
            reason: .controlCharacterInString, offset: index,
            message: "control character \(describe(bytes[index])) in a string; escape it (for example \\n or \\u0001)")
    }

    private mutating func decodeEscape(into buffer: inout [UInt8]) throws(JSONParseError) {
        let escapeOffset = index
        index += 1  // backslash
        guard index < bytes.count else {
            throw JSONParseError(
                reason: .unexpectedEnd, offset: index, message: "unexpected end of input in an escape sequence")
        }
        let letter = bytes[index]
        index += 1
        switch letter {
        case 0x22: buffer.append(0x22)
        case 0x5C: buffer.append(0x5C)
        case 0x2F: buffer.append(0x2F)
        case 0x62: buffer.append(0x08)
        case 0x66: buffer.append(0x0C)
        case 0x6E: buffer.append(0x0A)
        case 0x72: buffer.append(0x0D)
        case 0x74: buffer.append(0x09)
        case 0x75:
            let unit = try readHex4(escapeOffset: escapeOffset)
            var scalarValue = UInt32(unit)
            if unit >= 0xD800 && unit <= 0xDBFF {
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard index + 1 < bytes.count, bytes[index] == 0x5C, bytes[index + 1] == 0x75 else {
                    throw loneSurrogateError(unit, at: escapeOffset)
                }
                let lowOffset = index
                index += 2
                let low = try readHex4(escapeOffset: lowOffset)
                guard low >= 0xDC00 && low <= 0xDFFF else { throw loneSurrogateError(unit, at: escapeOffset) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw loneSurrogateError(unit, at: escapeOffset)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw loneSurrogateError(unit, at: escapeOffset) }
            buffer.append(contentsOf: scalar.utf8)
        default:
            throw JSONParseError(
                reason: .invalidEscape, offset: escapeOffset,
                message: "invalid escape \\\(describeRaw(letter)); expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
    }

    private func loneSurrogateError(_ unit: UInt16, at offset: Int) -> JSONParseError {
        JSONParseError(
            reason: .loneSurrogate, offset: offset,
            message: "lone surrogate \\u\(hex4(unit)) in a \\u escape; a surrogate must come as a high/low pair")
    }

    private mutating func readHex4(escapeOffset: Int) throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw JSONParseError(
                    reason: .unexpectedEnd, offset: index, message: "unexpected end of input in a \\u escape")
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default:
                throw JSONParseError(
                    reason: .invalidEscape, offset: escapeOffset,
                    message: "invalid \\u escape; expected four hexadecimal digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Advances over one well-formed multi-byte UTF-8 sequence starting at `index`, rejecting
    /// overlong forms, surrogates and code points above U+10FFFF.
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let start = index
        let lead = bytes[index]
        let continuationCount: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: continuationCount = 1
        case 0xE0: continuationCount = 2; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: continuationCount = 2
        case 0xED: continuationCount = 2; secondRange = 0x80...0x9F
        case 0xF0: continuationCount = 3; secondRange = 0x90...0xBF
        case 0xF1...0xF3: continuationCount = 3
        case 0xF4: continuationCount = 3; secondRange = 0x80...0x8F
        default: throw invalidUTF8Error(at: start)
        }
        for position in 1...continuationCount {
            let offset = start + position
            guard offset < bytes.count else { throw invalidUTF8Error(at: start) }
            let range: ClosedRange<UInt8> = position == 1 ? secondRange : 0x80...0xBF
            guard range.contains(bytes[offset]) else { throw invalidUTF8Error(at: start) }
        }
        index = start + continuationCount + 1
    }

    private func invalidUTF8Error(at offset: Int) -> JSONParseError {
        JSONParseError(reason: .invalidUTF8, offset: offset, message: "invalid UTF-8 sequence in a string")
    }

    // MARK: helpers

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(describeRaw(byte))'" }
        return "byte 0x" + hex2(byte)
    }

    private func describeRaw(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "(byte 0x" + hex2(byte) + ")"
    }

    private func hex2(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private func hex4(_ unit: UInt16) -> String {
        hex2(UInt8(unit >> 8)) + hex2(UInt8(unit & 0xFF))
    }
}
