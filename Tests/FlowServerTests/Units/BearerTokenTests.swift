// Reading bearer tokens from Authorization headers, byte by byte.
@testable import FlowServer
import Testing

struct BearerTokenTests {
    /// The scheme is `Bearer` in any case, then a space; spaces and tabs around the token are
    /// dropped; anything else, or a token over 512 bytes, is no token.
    @Test(arguments: [
        ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("  Bearer   abc  ", "abc"),
        ("Bearer \tabc\t", "abc"), ("Bearer a b", "a b"), ("Bearer " + String(repeating: "x", count: 512), String(repeating: "x", count: 512)),
    ])
    func readsTokens(header: String, token: String) {
        #expect(BearerToken.token(inAuthorization: header) == token)
    }

    @Test(arguments: ["", "Bearer", "Bearer ", "Bearer    ", "Basic abc", "Bearerabc", "Bearer\tabc", "Bear abc", "Bearer " + String(repeating: "x", count: 513)])
    func refusesOthers(header: String) {
        #expect(BearerToken.token(inAuthorization: header) == nil)
    }

    /// A token matches the digest it was stored as, and no other.
    @Test func matchesItsDigest() {
        let token = BearerToken.generate()
        let stored = BearerToken.hash(token)
        #expect(stored.count == 32)
        #expect(BearerToken.matches(token, hash: stored))
        #expect(!BearerToken.matches(token + "x", hash: stored))
        #expect(!BearerToken.matches(token, hash: Array(stored.dropLast())))
    }

    /// Both digests are SHA-256's, byte for byte (FIPS 180-2's "abc").
    @Test func digestsAreSHA256() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(AccessPolicy.hex(BearerToken.hash("abc")) == abc)
        #expect(AccessPolicy.hex(BearerToken.digest(Array("abc".utf8))) == abc)
    }
}
