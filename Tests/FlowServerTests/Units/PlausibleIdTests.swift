// Which path segments can be session ids, read over the string's bytes.
@testable import FlowServer
import Testing

struct PlausibleIdTests {
    /// Letters, digits, `-` and `_`, at most 64 bytes; anything else (a byte outside the set,
    /// a multi-byte character, one byte too many) is refused before the cache or the store.
    @Test func idsAreLettersDigitsDashesAndUnderscores() {
        let accepted = ["s_HljY6dzHSDXoDH0PuHbiKQ", "a", "", "A-z_0-9", String(repeating: "x", count: 64)]
        let refused = [String(repeating: "x", count: 65), "s/1", "s 1", "s.1", "é", "s\u{0}", "s%2F", "ｓ", "s\n", "💥"]
        for id in accepted { #expect(SessionService.isPlausibleId(id), "\(id)") }
        for id in refused { #expect(!SessionService.isPlausibleId(id), "\(id.debugDescription)") }
    }

    /// The same answers as the set membership it encodes, on random strings of every byte kind.
    @Test func randomIdsMatchTheSet() {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)
        let alphabet = Array("aZ09-_./ %é💥\u{7F}\u{0}".unicodeScalars)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            var id = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...70, using: &generator) { id.append(alphabet[Int.random(in: alphabet.indices, using: &generator)]) }
            let text = String(id)
            let expected = text.utf8.count <= 64 && text.utf8.allSatisfy(allowed.contains)
            #expect(SessionService.isPlausibleId(text) == expected, "\(text.debugDescription)")
        }
    }
}
