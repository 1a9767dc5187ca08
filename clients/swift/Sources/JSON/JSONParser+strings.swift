// JSONParser+strings: strings checked byte by byte — escapes, lone surrogates, control characters, invalid UTF-8, the length limit.

extension JSONParser {
    mutating func parseString() throws(JSONParseError) -> String {
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
    mutating func parseEscapedString(contentStart: Int, quoteOffset: Int) throws(JSONParseError) -> String {
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

    func checkStringLength(_ length: Int, at offset: Int) throws(JSONParseError) {
        if length > maxStringLength {
            throw JSONParseError(
                reason: .stringTooLong, offset: offset,
                message: "string is longer than \(maxStringLength) bytes")
        }
    }

    func controlCharacterError() -> JSONParseError {
        JSONParseError(
            reason: .controlCharacterInString, offset: index,
            message: "control character \(describe(bytes[index])) in a string; escape it (for example \\n or \\u0001)")
    }

    mutating func decodeEscape(into buffer: inout [UInt8]) throws(JSONParseError) {
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

    func loneSurrogateError(_ unit: UInt16, at offset: Int) -> JSONParseError {
        JSONParseError(
            reason: .loneSurrogate, offset: offset,
            message: "lone surrogate \\u\(hex4(unit)) in a \\u escape; a surrogate must come as a high/low pair")
    }

    mutating func readHex4(escapeOffset: Int) throws(JSONParseError) -> UInt16 {
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
    mutating func skipUTF8Sequence() throws(JSONParseError) {
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

    func invalidUTF8Error(at offset: Int) -> JSONParseError {
        JSONParseError(reason: .invalidUTF8, offset: offset, message: "invalid UTF-8 sequence in a string")
    }
}
