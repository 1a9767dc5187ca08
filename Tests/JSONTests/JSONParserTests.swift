// JSONParserTests: the strict parser — what it accepts, what it rejects and where, and its limits.

import TestSupport
import Testing

import JSON

struct JSONParserTests {
    static let validDocuments: [(String, JSONValue)] = [
        ("null", .null),
        ("true", true),
        (" false ", false),
        ("0", .integer(0)),
        ("-12", .integer(-12)),
        ("9223372036854775807", .integer(Int.max)),
        ("-9223372036854775808", .integer(Int.min)),
        ("9223372036854775808", .number(9_223_372_036_854_775_808.0)),
        ("-0", .number(-0.0)),
        ("1.5", .number(1.5)),
        ("1e3", .number(1000)),
        ("1E+2", .number(100)),
        ("2.5e-3", .number(0.0025)),
        ("1e-400", .number(0)),
        (#""""#, ""),
        (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{08}\u{0C}\n\r\t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\ud83d\ude00""#, "😀"),
        (#""\u0000""#, "\u{0}"),
        ("\"héllo 😀\"", "héllo 😀"),
        ("[]", []),
        ("{}", [:]),
        (" [1, \"two\", [3], {\"four\": 4}] ", [1, "two", [3], ["four": 4]]),
        ("{\"b\": 1, \"a\": [true, null]}", ["b": 1, "a": [true, nil]]),
        ("\t\n\r {\"k\" : \"v\" }\n", ["k": "v"]),
    ]

    /// Every valid document parses to the expected value.
    @Test(arguments: validDocuments)
    func parsesValidDocument(text: String, expected: JSONValue) throws {
        #expect(try JSONParser.parse(text) == expected)
    }

    static let invalidDocuments: [([UInt8], JSONParseError.Reason, Int)] = [
        (Array("".utf8), .unexpectedEnd, 0),
        (Array("   ".utf8), .unexpectedEnd, 3),
        (Array("[1,]".utf8), .unexpectedByte, 3),
        (Array("[1 2]".utf8), .unexpectedByte, 3),
        (Array("{\"a\":1,}".utf8), .unexpectedByte, 7),
        (Array("{\"a\" 1}".utf8), .unexpectedByte, 5),
        (Array("{1:2}".utf8), .unexpectedByte, 1),
        (Array("{\"a\":1,\"a\":2}".utf8), .duplicateKey, 7),
        (Array("[1] x".utf8), .trailingData, 4),
        (Array("{} {}".utf8), .trailingData, 3),
        (Array("NaN".utf8), .unexpectedByte, 0),
        (Array("Infinity".utf8), .unexpectedByte, 0),
        (Array("-Infinity".utf8), .invalidNumber, 1),
        (Array("01".utf8), .invalidNumber, 0),
        (Array("1.".utf8), .invalidNumber, 2),
        (Array(".5".utf8), .unexpectedByte, 0),
        (Array("+1".utf8), .unexpectedByte, 0),
        (Array("1e".utf8), .invalidNumber, 2),
        (Array("1e+".utf8), .invalidNumber, 3),
        (Array("1e400".utf8), .numberOutOfRange, 0),
        (Array("-1e400".utf8), .numberOutOfRange, 0),
        (Array("tru".utf8), .invalidLiteral, 0),
        (Array("nul".utf8), .invalidLiteral, 0),
        (Array("[".utf8), .unexpectedEnd, 1),
        (Array("\"abc".utf8), .unexpectedEnd, 4),
        (Array("'a'".utf8), .unexpectedByte, 0),
        (Array(#""\ud800""#.utf8), .loneSurrogate, 1),
        (Array(#""\udc00""#.utf8), .loneSurrogate, 1),
        (Array(#""\ud800\u0041""#.utf8), .loneSurrogate, 1),
        (Array(#""x\ud83dx""#.utf8), .loneSurrogate, 2),
        (Array(#""\x""#.utf8), .invalidEscape, 1),
        (Array(#""\u12G4""#.utf8), .invalidEscape, 1),
        (Array("\"a\tb\"".utf8), .controlCharacterInString, 2),
        (Array("\"a\nb\"".utf8), .controlCharacterInString, 2),
        ([0x22, 0xC3, 0x28, 0x22], .invalidUTF8, 1),  // bad continuation
        ([0x22, 0xC0, 0xAF, 0x22], .invalidUTF8, 1),  // overlong '/'
        ([0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8, 1),  // overlong 3-byte
        ([0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, 1),  // UTF-8-encoded surrogate
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8, 1),  // above U+10FFFF
        ([0x22, 0xE2, 0x82], .invalidUTF8, 1),  // truncated
        ([0x22, 0x61, 0xFF, 0x22], .invalidUTF8, 2),
        ([0x22, 0x5C, 0x6E, 0x80, 0x22], .invalidUTF8, 3),  // after an escape
        ([0xEF, 0xBB, 0xBF, 0x31], .unexpectedByte, 0),  // byte-order mark
        ([0xC3, 0xA9], .unexpectedByte, 0),  // non-ASCII outside a string
    ]

    /// Every invalid document is rejected with the expected reason at the expected byte.
    @Test(arguments: invalidDocuments)
    func rejectsInvalidDocument(bytes: [UInt8], reason: JSONParseError.Reason, offset: Int) {
        #expect {
            try JSONParser.parse(bytes)
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.reason == reason && error.offset == offset && !error.message.isEmpty
        }
    }

    /// Error messages say what was expected, with the byte offset.
    @Test func errorMessagesNameTheProblem() {
        do throws(JSONParseError) {
            _ = try JSONParser.parse("{\"type\": \"back\",}")
            Issue.record("should fail")
        } catch {
            #expect(error.description == "unexpected '}'; expected a string key in an object at byte 16")
        }
    }

    /// Nesting up to the limit parses; one level more is refused as too deep.
    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try JSONParser.parse(ok) != .null)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        do throws(JSONParseError) {
            _ = try JSONParser.parse(deep)
        } catch {
            #expect(error.reason == .tooDeep)
            #expect(error.offset == 64)
        }
        let objects = String(repeating: "{\"a\":", count: 3) + "1" + String(repeating: "}", count: 3)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(objects, limits: .init(maxDepth: 2)) }
        #expect(try JSONParser.parse(objects, limits: .init(maxDepth: 3)) != .null)
    }

    /// A hostile depth far beyond the ceiling fails cleanly instead of exhausting the stack.
    @Test func hugeDepthDoesNotCrash() {
        let deep = String(repeating: "[", count: 200_000)
        #expect(throws: JSONParseError.self) {
            try JSONParser.parse(deep, limits: .init(maxDepth: Int.max))
        }
    }

    /// Inputs and strings over their limits are refused with the right reason.
    @Test func sizeLimits() {
        do throws(JSONParseError) {
            _ = try JSONParser.parse("[1, 2, 3]", limits: .init(maxInputSize: 8))
            Issue.record("should fail")
        } catch {
            #expect(error.reason == .inputTooLarge)
        }
        do throws(JSONParseError) {
            _ = try JSONParser.parse("\"abcdef\"", limits: .init(maxStringLength: 5))
            Issue.record("should fail")
        } catch {
            #expect(error.reason == .stringTooLong)
            #expect(error.offset == 0)
        }
        do throws(JSONParseError) {
            _ = try JSONParser.parse(#"["ab\ncdef"]"#, limits: .init(maxStringLength: 5))
            Issue.record("should fail")
        } catch {
            #expect(error.reason == .stringTooLong)
        }
        #expect(throws: Never.self) { try JSONParser.parse("\"abcde\"", limits: .init(maxStringLength: 5)) }
    }

    /// Duplicate keys are caught in big objects too (where a set replaces the linear scan).
    @Test func duplicateKeysInLargeObject() throws {
        let members = (0..<40).map { "\"k\($0)\": \($0)" }
        let unique = "{" + members.joined(separator: ",") + "}"
        let parsed = try JSONParser.parse(unique)
        #expect(parsed.objectValue?.count == 40)
        #expect(parsed.objectValue?.keys.first == "k0")
        let duplicated = "{" + (members + ["\"k3\": 0"]).joined(separator: ",") + "}"
        #expect(throws: JSONParseError.self) { try JSONParser.parse(duplicated) }
    }

    /// Object members keep their written order; equality ignores it.
    @Test func objectOrderIsKeptButNotCompared() throws {
        let value = try JSONParser.parse(#"{"z": 1, "a": 2, "m": 3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value == ["a": 2, "m": 3, "z": 1])
        #expect(value != ["a": 2, "m": 3])
    }

    /// Numbers compare by value across integers and floats.
    @Test func numericEquality() {
        #expect(JSONValue.integer(1) == .number(1.0))
        #expect(JSONValue.number(2.5) != .integer(2))
        #expect(JSONValue.integer(Int.max) != .number(9_223_372_036_854_775_808.0))
        #expect(JSONValue.number(3.0).integerValue == 3)
        #expect(JSONValue.number(3.5).integerValue == nil)
    }

    /// Random corruptions of valid documents never crash the parser.
    @Test func randomCorruptionsNeverCrash() {
        var generator = SeededGenerator(seed: 7)
        let seeds = Self.validDocuments.map { Array($0.0.utf8) } + [Array(#"{"a": [1, {"b": "\u00e9x"}], "c": -1.5e3}"#.utf8)]
        var rejected = 0
        for _ in 0..<5_000 {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let choice = Int.random(in: 0..<3, using: &generator)
                let byte = UInt8.random(in: 0...255, using: &generator)
                if choice == 0 || bytes.isEmpty {
                    bytes.insert(byte, at: Int.random(in: 0...bytes.count, using: &generator))
                } else if choice == 1 {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = byte
                } else {
                    bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator))
                }
            }
            do throws(JSONParseError) {
                let value = try JSONParser.parse(bytes)
                // Whatever parses must survive a write/parse round trip.
                var writer = JSONWriter()
                writer.writeValue(value)
                #expect((try? JSONParser.parse(writer.bytes)) == value)
            } catch {
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count)
            }
        }
        #expect(rejected > 0)
    }
}
