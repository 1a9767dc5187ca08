// Session stores: one session per server and user, equivalent spellings of a server as one key,
// and the file store keeping every key's session in one file a new launch reads back.
import FlowStackClient
import Foundation
import Testing

struct SessionStoreTests {
    @Test func equivalentSpellingsAreOneKey() {
        let key = SessionKey(server: "https://flows.example.com", userId: "ada")
        for spelling in ["HTTPS://Flows.Example.com", "https://flows.example.com:443", "https://flows.example.com/", "https://FLOWS.example.com:443//"] {
            #expect(SessionKey(server: spelling, userId: "ada") == key, "\(spelling)")
        }
        #expect(SessionKey(server: "http://h:80/", userId: "u") == SessionKey(server: "http://h", userId: "u"))
        #expect(SessionKey(server: "http://flows.example.com", userId: "ada") != key)        // another scheme
        #expect(SessionKey(server: "https://flows.example.com:8443", userId: "ada") != key)  // another port
        #expect(SessionKey(server: "https://flows.example.com/eu", userId: "ada") != key)    // another path
        #expect(SessionKey(server: "http://localhost:8080", userId: "u") != SessionKey(server: "http://127.0.0.1:8080", userId: "u"))
        #expect(SessionKey(server: "https://flows.example.com", userId: "bob") != key)
    }

    @Test func aFileKeepsEachServersSessionApart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        let store = FileSessionStore(path: path)
        let queued = [QueuedAction(key: "k1", version: 0, action: FlowAction(type: "onboarding.showSecond"))]
        let local = StoredSession(server: "http://127.0.0.1:8080/", sessionId: "s_1", token: "t_1", userId: "ada", queue: queued,
                                  confirmed: ["sessionId": "s_1", "version": 0], bundle: Array(#"{"format":1,"sessionId":"s_1"}"#.utf8))
        let named = StoredSession(server: "http://localhost:8080", sessionId: "s_2", token: "t_2", userId: "ada")
        try store.save(local)
        try store.save(named)
        // Saving one never touches the other's queue.
        #expect(try store.load(SessionKey(server: "http://127.0.0.1:8080", userId: "ada"))?.queue == queued)
        #expect(try store.load(SessionKey(server: "HTTP://LOCALHOST:8080/", userId: "ada"))?.sessionId == "s_2")
        // A new store (a new launch) reads both back.
        let again = FileSessionStore(path: path)
        #expect(try again.all().count == 2)
        #expect(try again.load(local.key) == local)
        var next = local
        next.queue = []
        try again.save(next)
        #expect(try FileSessionStore(path: path).load(local.key) == next)
        try again.remove(local.key)
        #expect(try FileSessionStore(path: path).all().map(\.sessionId) == ["s_2"])
    }
}
