// JSONWriterTests: the writer's escaping, canonical numbers, comma placement and round trips.

import TestSupport
import Testing

import JSON

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
}
