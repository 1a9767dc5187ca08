// JSONParser+numbers: RFC 8259 numbers — no leading zeros, NaN or Infinity — as exact integers when they fit.

extension JSONParser {
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
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
    func exactInteger(from: Int, to: Int, negative: Bool) -> Int? {
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
}
