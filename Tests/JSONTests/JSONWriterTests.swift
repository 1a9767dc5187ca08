// JSONWriterTests: the writer's escaping, canonical numbers, comma placement and round trips.

import TestSupport
import Testing

@testable import JSON

struct JSONWriterTests {
    private func written(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.writeValue(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static let canonicalForms: [(JSONValue, String)] = [
        (nil, "null"),
        (true, "true"),
        (.integer(0), "0"),
        (.integer(-7), "-7"),
        (.integer(Int.min), "-9223372036854775808"),
        (.integer(Int.max), "9223372036854775807"),
        (.number(1.0), "1"),
        (.number(-0.0), "0"),
        (.number(0.1), "0.1"),
        (.number(-2.5), "-2.5"),
        (.number(1e20), "1e+20"),
        (.number(1.5e-7), "1.5e-07"),
        (.number(123_456_789_012.0), "123456789012"),
        (.number(.nan), "null"),
        (.number(.infinity), "null"),
        ("plain", #""plain""#),
        ("quote \" backslash \\ slash /", #""quote \" backslash \\ slash /""#),
        ("\n\r\t\u{08}\u{0C}", #""\n\r\t\b\f""#),
        ("\u{0}\u{1}\u{1F}\u{7F}", #""\u0000\u0001\u001f\#u{7F}""#),
        ("é😀", "\"é😀\""),
        ([1, "a", nil], #"[1,"a",null]"#),
        (["b": 1, "a": ["c": []]], #"{"b":1,"a":{"c":[]}}"#),
        ([[], [:], [[]]], "[[],{},[[]]]"),
    ]

    /// Values are written in their canonical compact form.
    @Test(arguments: canonicalForms)
    func writesCanonicalForm(value: JSONValue, expected: String) {
        #expect(written(value) == expected)
    }

    /// Whatever the writer writes parses back to an equal value.
    @Test(arguments: canonicalForms.map(\.0).filter { $0.doubleValue?.isFinite ?? true })
    func roundTrips(value: JSONValue) throws {
        var writer = JSONWriter()
        writer.writeValue(value)
        #expect(try JSONParser.parse(writer.bytes) == value)
    }

    /// Doubles survive a round trip bit for bit (shortest representation that reads back).
    @Test func doublesRoundTripExactly() throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<2_000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            var writer = JSONWriter()
            writer.writeNumber(value)
            let parsed = try JSONParser.parse(writer.bytes)
            #expect(parsed.doubleValue == value || (value == 0 && parsed.doubleValue == 0))
        }
    }

    /// Commas go between members and elements, never after keys or at container starts.
    @Test func placesCommas() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("a")
        writer.beginArray()
        writer.writeInteger(1)
        writer.beginObject()
        writer.endObject()
        writer.writeNull()
        writer.endArray()
        writer.writeKey("b")
        writer.writeBool(false)
        writer.writeKey("c")
        writer.writeRawValue(Array("[1,2]".utf8))
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":[1,{},null],"b":false,"c":[1,2]}"#)
    }

    /// Keys are escaped like strings.
    @Test func escapesKeys() {
        var writer = JSONWriter()
        writer.writeObject(["a\"b\n": 1])
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a\"b\n":1}"#)
    }

    /// Every operation, written into a buffer that must grow at each possible place (the
    /// smallest buffer, so a growth falls inside keys, escapes, digits and raw values alike),
    /// writes the same bytes as into one with room for all.
    @Test func growingBuffersWriteTheSameBytes() throws {
        func write(into writer: inout JSONWriter, _ round: Int) {
            writer.beginObject()
            writer.writeKey(literal: "sessionId")
            writer.writeString("s_\(round)-quote \" tab \t nul \u{0} é😀")
            writer.writeKey(literal: "n")
            writer.writeInteger(round * 7919 - 40_000)
            writer.writeKey("items")
            writer.beginArray()
            writer.writeEntryId(prefix: UInt8(ascii: "e"), round)
            writer.writeNumber(Double(round) / 8)
            writer.writeEntryId(prefix: UInt8(ascii: "e"), round)
            writer.writeRawValue(Array(#"{"raw":[1,2]}"#.utf8))
            writer.writeRawValue(Array(#"[true,false]"#.utf8)[...])
            writer.writeRawValue(AnySequence(Array("null".utf8)))
            writer.writeValue(["k": [1, "v", nil, 2.5]])
            writer.writeOptionalString(nil)
            writer.writeOptionalInteger(round)
            writer.endArray()
            writer.writeKey(literal: "top")
            writer.writeEntryId(prefix: UInt8(ascii: "e"), round)
            writer.endObject()
        }
        var roomy = JSONWriter(capacity: 1 << 16)
        var small = JSONWriter(capacity: 1)
        for round in 0..<64 {
            write(into: &roomy, round)
            write(into: &small, round)
            #expect(small.count == roomy.count)
        }
        let expected = roomy.takeBytes()
        #expect(small.takeBytes() == expected)
        #expect(small.count == 0 && small.bytes.isEmpty)
        // What was written parses: 64 objects, one after another, as an array would hold them.
        let joined = Array("[".utf8) + Array(String(decoding: expected, as: UTF8.self)
            .replacingOccurrences(of: "}{", with: "},{").utf8) + Array("]".utf8)
        let objects = try #require(try JSONParser.parse(joined).arrayValue?.compactMap(\.objectValue))
        #expect(objects.count == 64)
        let items = objects[63]["items"]?.arrayValue ?? []
        #expect(items.first == "e63" && items.dropFirst(2).first == "e63" && objects[63]["top"] == "e63")
        #expect(objects[5]["n"] == .integer(5 * 7919 - 40_000))
        // A writer is reused after a take, with no comma left over from before.
        write(into: &small, 1)
        let again = small.takeBytes()
        write(into: &roomy, 1)
        #expect(again == roomy.takeBytes())
        #expect(again.first == UInt8(ascii: "{"))
    }

    /// The count of bytes that need no escaping, read a word at a time, is the count read byte
    /// by byte, wherever the first byte to escape falls in a word, and with every byte value.
    @Test func plainPrefixesAreCountedByteForByte() {
        var generator = SeededGenerator(seed: 35)
        let special: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA0, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 41)
            var bytes = (0..<length).map { _ in UInt8(0x41 + generator.next() % 26) }
            if length > 0, generator.next() % 4 != 0 {
                for _ in 0...(generator.next() % 3) {
                    bytes[Int(generator.next() % UInt64(length))] = special[Int(generator.next() % UInt64(special.count))]
                }
            }
            let expected = bytes.firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } ?? bytes.count
            #expect(bytes.withUnsafeBufferPointer(JSONWriter.plainPrefixCount) == expected, "\(bytes)")
        }
        for byte in UInt8.min...UInt8.max {
            for position in 0..<17 {
                var bytes = [UInt8](repeating: 0x61, count: 17)
                bytes[position] = byte
                let needsEscape = byte < 0x20 || byte == 0x22 || byte == 0x5C
                #expect(bytes.withUnsafeBufferPointer(JSONWriter.plainPrefixCount) == (needsEscape ? position : 17), "\(byte) at \(position)")
            }
        }
    }

    /// A literal key of one character is written as one of several is.
    @Test func literalKeysOfOneCharacter() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey(literal: "a")
        writer.writeInteger(1)
        writer.writeKey(literal: "é")
        writer.writeInteger(2)
        writer.writeKey(literal: "bc")
        writer.writeInteger(3)
        writer.endObject()
        #expect(String(decoding: writer.takeBytes(), as: UTF8.self) == #"{"a":1,"é":2,"bc":3}"#)
    }

    /// What was written so far is read as a copy, and the writer goes on after it.
    @Test func readsBackWhatItWrote() {
        var writer = JSONWriter(capacity: 4)
        writer.beginArray()
        writer.writeString("ab")
        writer.writeInteger(12)
        #expect(writer.count == 8)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"["ab",12"#)
        writer.endArray()
        #expect(String(decoding: writer.takeBytes(), as: UTF8.self) == #"["ab",12]"#)
    }
}

