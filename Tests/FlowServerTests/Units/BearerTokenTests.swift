// Reading bearer tokens from Authorization headers, byte by byte.
@testable import FlowServer
import FlowEngine
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

    /// A kept token matches itself and nothing else, at every length it can hold; a longer
    /// one is not kept.
    @Test func openedTokensMatchOnlyThemselves() throws {
        let token = BearerToken.generate()
        let opened = try #require(OpenedToken(token))
        #expect(opened.matches(token))
        for index in token.utf8.indices {
            var bytes = Array(token.utf8)
            bytes[token.utf8.distance(from: token.utf8.startIndex, to: index)] ^= 1
            #expect(!opened.matches(String(decoding: bytes, as: UTF8.self)))
        }
        #expect(!opened.matches(String(token.dropLast())))
        #expect(!opened.matches(token + "A"))
        #expect(!opened.matches(""))
        for count in 0...OpenedToken.capacity {
            let text = String(repeating: "t", count: count)
            let kept = try #require(OpenedToken(text))
            #expect(kept.matches(text))
            #expect(!kept.matches(text + "t"))
            #expect(count == 0 || !kept.matches(String(text.dropLast())))
            #expect(!kept.matches(String(repeating: "u", count: count)) || count == 0)
        }
        #expect(OpenedToken(String(repeating: "t", count: OpenedToken.capacity + 1)) == nil)
        #expect(try #require(OpenedToken("é")).matches("é"))
        #expect(!(try #require(OpenedToken("é")).matches("e\u{301}")))
    }

    /// A session keeps the token that opened it; another token that hashes to it (after a
    /// reload, none is kept) opens it and takes its place, and a wrong one never does.
    @Test func sessionsKeepTheTokenThatOpenedThem() throws {
        let token = BearerToken.generate()
        var session = try Self.session(openedBy: token)
        #expect(session.openedBy == nil)
        #expect(!SessionAccess.bearer("wrong").opens(&session))
        #expect(!SessionAccess.bearer(nil).opens(&session))
        #expect(session.openedBy == nil)
        #expect(SessionAccess.bearer(token).opens(&session))
        #expect(session.openedBy?.matches(token) == true)
        #expect(!SessionAccess.bearer(String(token.dropLast()) + "!").opens(&session))
        #expect(session.openedBy?.matches(token) == true, "a refused token is not kept")
        #expect(SessionAccess.bearer(token).opens(&session))
        #expect(SessionAccess.server.opens(&session))
    }

    /// A kept token never shows in a printout of itself or of its session: its bytes, as the
    /// integers it keeps them in, spell the token.
    @Test func keptTokensAreRedacted() throws {
        let token = BearerToken.generate()
        let opened = try #require(OpenedToken(token))
        var session = try Self.session(openedBy: token)
        session.openedBy = opened
        var dumped = ""
        dump(session, to: &dumped)
        var dumpedToken = ""
        dump(opened, to: &dumpedToken)
        let firstWord = Array(token.utf8).prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        for text in [String(describing: opened), String(reflecting: opened), dumpedToken,
                     String(describing: session), String(reflecting: session), dumped] {
            #expect(!text.contains(token))
            #expect(!text.contains(String(firstWord)), "the token's first eight bytes, as the integer that keeps them")
        }
        #expect(String(describing: opened) == "<redacted>")
        #expect(dumped.contains("openedBy"), "the field is shown, its value is not")
    }

    /// A session of the sample app whose token is `token`, as a read from the database leaves
    /// it: no token kept.
    static func session(openedBy token: String) throws -> LiveSession {
        let catalog = BundledFlows.catalog().catalog
        let context = FlowContext(userId: "u")
        return LiveSession(id: "s_x", userId: "u", tokenHash: BearerToken.hash(token), version: 0,
                           tree: try FlowEngine.start(catalog: catalog, context: context),
                           context: context, catalog: catalog, flagsJSON: [], experimentsJSON: [],
                           flowVersionsJSON: [], inExperiment: false, lastTransitionJSON: nil, handledBy: nil)
    }
}
