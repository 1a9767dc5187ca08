// JSONParser+values: a value, an object (duplicate keys refused), an array, the literals, and the depth limit.

extension JSONParser {
    /// `context` names what preceded the value, for the message when it is missing.
    mutating func parseValue(after context: String?) throws(JSONParseError) -> JSONValue {
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

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth {
            throw JSONParseError(
                reason: .tooDeep, offset: index,
                message: "arrays and objects are nested deeper than \(maxDepth) levels")
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
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

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
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

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
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
}
