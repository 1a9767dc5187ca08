// FileSessionStore when the disk fails in the middle of a write, and works again.
import FlowStackClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A full disk is stood in for by this process's file size limit, which every test running
/// beside these would meet too (a server test's SQLite file failed to open under it): so the
/// suite runs only in a process of its own, as scripts/test.sh runs it
/// (`FLOWSTACK_PROCESS_LIMIT_TESTS=1 swift test --skip-build --filter FileSessionStoreFaultTests`).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["FLOWSTACK_PROCESS_LIMIT_TESTS"] == "1",
                             "lowers the whole process's file size limit: run alone"))
struct FileSessionStoreFaultTests {
    /// The disk fills in the middle of a tap's journal line: the save throws, and part of the line
    /// is in the journal. When the disk has room again, the tap is saved again (as ``FlowSession``
    /// does after a failed save), and so is the next: a new launch reads every one of them, none
    /// left out behind the part line.
    @Test func aJournalLineTheDiskCutIsNotWrittenAfter() throws {
        #if canImport(Glibc)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        let store = FileSessionStore(path: path)
        var session = StoredSession(server: "http://127.0.0.1:8080", sessionId: "s_1", token: "t_1", userId: "ada",
                                    confirmed: ["sessionId": "s_1", "version": 0])
        try store.save(session)
        session.queue.append(SessionStoreTests.tap(0))
        try store.save(session)
        let journal = path + ".journal"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        #expect(size > 0)

        session.queue.append(SessionStoreTests.tap(1))
        // A disk with room for 20 more bytes of this file (a file size limit is how a test fills
        // the disk for one file: the write stops there, EFBIG instead of ENOSPC).
        try withFileSizeLimit(size + 20) {
            #expect(throws: (any Error).self) { try store.save(session) }
        }
        let cut = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        #expect(cut > size, "part of the line was written")

        // Room again: the same session is saved again, then the next tap.
        try store.save(session)
        session.queue.append(SessionStoreTests.tap(2))
        try store.save(session)
        #expect(try store.load(session.key)?.queue.map(\.key) == ["k0", "k1", "k2"])
        let relaunched = try FileSessionStore(path: path).load(session.key)?.queue.map(\.key)
        #expect(relaunched == ["k0", "k1", "k2"], "a new launch reads every tap the store said it kept")
        #endif
    }

    /// Killed with taps in the journal, the app starts again on a full disk: the store still
    /// reads (``FlowSession/start`` loads it first, and throws what `load` throws: the app would
    /// have nothing to draw), with the taps; the file is written anew, and the journal emptied,
    /// by a later save once there is room, and taps saved meanwhile are not appended after a
    /// line the kill may have cut.
    @Test func aJournalReadOnAFullDiskStillLoads() throws {
        #if canImport(Glibc)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        var session = StoredSession(server: "http://127.0.0.1:8080", sessionId: "s_1", token: "t_1", userId: "ada",
                                    confirmed: ["sessionId": "s_1", "version": 0])
        let store = FileSessionStore(path: path)
        try store.save(session)
        for n in 0..<2 {
            session.queue.append(SessionStoreTests.tap(n))
            try store.save(session)
        }
        let journal = try Data(contentsOf: URL(fileURLWithPath: path + ".journal"))
        // Killed in the middle of the third line.
        try (journal + Data(#"{"seq":3,"server":"http://127.0.0.1:8080","userId":"ada","push":[{"key":"k2","ver"#.utf8))
            .write(to: URL(fileURLWithPath: path + ".journal"))

        let relaunched = FileSessionStore(path: path)
        var loaded: StoredSession?
        try withFileSizeLimit(16) {
            // No room for the file written anew.
            loaded = try relaunched.load(session.key)
            session.queue.append(SessionStoreTests.tap(2))
            #expect(throws: (any Error).self) { try relaunched.save(session) }
        }
        #expect(loaded?.queue.map(\.key) == ["k0", "k1"])
        // Room again: the save goes, and a new launch reads every tap.
        try relaunched.save(session)
        session.queue.append(SessionStoreTests.tap(3))
        try relaunched.save(session)
        #expect(try FileSessionStore(path: path).load(session.key)?.queue.map(\.key) == ["k0", "k1", "k2", "k3"])
        #endif
    }

    #if canImport(Glibc)
    /// Runs `body` with this process's file size limit at `bytes` (a write past it fails with
    /// EFBIG, SIGXFSZ ignored), then puts the limit back. The limit is the whole process's, so the
    /// suite runs alone (above); no server is spawned meanwhile either (it would inherit it).
    func withFileSizeLimit(_ bytes: Int, _ body: () throws -> Void) throws {
        ServerProcess.spawning.lock()
        defer { ServerProcess.spawning.unlock() }
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        var old = rlimit()
        #expect(getrlimit(resource, &old) == 0)
        let previousHandler = signal(SIGXFSZ, SIG_IGN)
        var low = old
        low.rlim_cur = rlim_t(bytes)
        #expect(setrlimit(resource, &low) == 0)
        defer {
            _ = setrlimit(resource, &old)
            signal(SIGXFSZ, previousHandler)
        }
        try body()
    }
    #endif
}
