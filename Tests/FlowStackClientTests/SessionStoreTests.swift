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

    static func tap(_ n: Int) -> QueuedAction {
        QueuedAction(key: "k\(n)", version: n, action: FlowAction(type: "home.selectTab", params: ["index": .integer(n % 2)]), at: "2026-11-28T12:00:00.000Z")
    }

    /// A save that only adds taps appends them to the journal and leaves the file as it was; a new
    /// launch reads file and journal together, then writes the file anew with an empty journal.
    @Test func tapsGoToTheJournal() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        let store = FileSessionStore(path: path)
        var session = StoredSession(server: "http://127.0.0.1:8080", sessionId: "s_1", token: "t_1", userId: "ada",
                                    confirmed: ["sessionId": "s_1", "version": 0], bundle: Array(#"{"format":1}"#.utf8))
        try store.save(session)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        for n in 0..<50 {
            session.queue.append(Self.tap(n))
            try store.save(session)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == file)
        #expect(try String(contentsOfFile: path + ".journal", encoding: .utf8).split(separator: "\n").count == 50)
        let relaunched = FileSessionStore(path: path)
        #expect(try relaunched.load(session.key) == session)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".journal")).isEmpty)
        // An answer moves the confirmed state: the whole file, and the journal emptied.
        session.queue.removeFirst(10)
        session.confirmed = ["sessionId": "s_1", "version": 10]
        try relaunched.save(session)
        session.queue.append(Self.tap(50))
        try relaunched.save(session)
        #expect(try FileSessionStore(path: path).load(session.key) == session)
    }

    /// Saves the store refused in between (a full disk) leave a queue that is longer than the one
    /// kept and not its continuation: taps answered off its start and new ones added, or a tail
    /// dropped by a refusal and new ones added. Each is written whole, not appended, and reads
    /// back as saved.
    @Test func aLongerQueueThatIsNotTheKeptOnesContinuationIsWrittenWhole() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        let store = FileSessionStore(path: path)
        var session = StoredSession(server: "http://127.0.0.1:8080", sessionId: "s_1", token: "t_1", userId: "ada",
                                    confirmed: ["sessionId": "s_1", "version": 0])
        session.queue = (0..<4).map(Self.tap)
        try store.save(session)
        session.queue = (1..<6).map(Self.tap)        // k0 answered, k4 and k5 made
        try store.save(session)
        #expect(try FileSessionStore(path: path).load(session.key)?.queue.map(\.key) == ["k1", "k2", "k3", "k4", "k5"])
        session.queue = [Self.tap(1)] + (10..<15).map(Self.tap)   // k2… dropped by a refusal, k10… made
        try store.save(session)
        #expect(try FileSessionStore(path: path).load(session.key)?.queue.map(\.key) == ["k1", "k10", "k11", "k12", "k13", "k14"])
        #expect(try store.load(session.key) == session)
    }

    /// A journal line a kill cut short is left out (the tap's `send` had not returned), and lines
    /// the file already includes (a kill between writing the file and emptying the journal) are
    /// not added twice; taps appended afterwards read back too.
    @Test func aCutJournalAndARepeatedOneReadRight() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        var session = StoredSession(server: "http://127.0.0.1:8080", sessionId: "s_1", token: "t_1", userId: "ada")
        let store = FileSessionStore(path: path)
        try store.save(session)
        for n in 0..<3 {
            session.queue.append(Self.tap(n))
            try store.save(session)
        }
        let journal = try Data(contentsOf: URL(fileURLWithPath: path + ".journal"))
        // Killed in the middle of the fourth line.
        try (journal + Data(#"{"seq":4,"server":"http://127.0.0.1:8080","userId":"ada","push":[{"key":"k3","ver"#.utf8))
            .write(to: URL(fileURLWithPath: path + ".journal"))
        let afterCut = FileSessionStore(path: path)
        #expect(try afterCut.load(session.key)?.queue.map(\.key) == ["k0", "k1", "k2"])
        session.queue.append(Self.tap(3))
        try afterCut.save(session)
        #expect(try FileSessionStore(path: path).load(session.key)?.queue.map(\.key) == ["k0", "k1", "k2", "k3"])

        // The file written with the journal's lines in it (seq 4), and the same lines left behind.
        let store2 = FileSessionStore(path: path)
        _ = try store2.all()
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        session.queue.append(Self.tap(4))
        try store2.save(session)
        let leftBehind = try Data(contentsOf: URL(fileURLWithPath: path + ".journal"))
        try FileSessionStore(path: path).save(session)  // reads file + journal, writes the file (seq 5), empties the journal
        try leftBehind.write(to: URL(fileURLWithPath: path + ".journal"))
        #expect(try FileSessionStore(path: path).load(session.key)?.queue.map(\.key) == ["k0", "k1", "k2", "k3", "k4"])
        #expect(file.count > 0)
    }
}
