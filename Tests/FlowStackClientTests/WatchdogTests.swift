// The watchdog that cleans up after a crashed test process (`cleanUpAfterExit` in TestSupport).
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

@Suite("The watchdog behind every server a test starts")
struct WatchdogTests {
    /// A process standing in for a test process or a server: `sleep`, killed at will.
    private func sleeper() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        // Far longer than the test: in the whole suite's parallel run a test can wait minutes for
        // a thread, and a stand-in that ended by itself would look like a parent that died.
        process.arguments = ["3600"]
        try process.run()
        return process
    }

    /// Kills `process` for good and reaps it: a test process may block SIGTERM, and its
    /// children inherit the mask, so `terminate()` would leave `sleep` running.
    private func kill(_ process: Process) {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test("a server outlives no test process: once the parent dies, the server is killed")
    func killsTheServerWhenTheParentDies() async throws {
        let parent = try sleeper()
        defer { if parent.isRunning { kill(parent) } }
        let server = try sleeper()
        defer { if server.isRunning { kill(server) } }
        try cleanUpAfterExit(of: parent.processIdentifier, unlessGone: server.processIdentifier,
                             run: ["/bin/kill", "-KILL", String(server.processIdentifier)])
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(server.isRunning, "the watchdog acted while the parent lived")
        kill(parent)
        #expect(await eventually(.seconds(30)) { () async in !server.isRunning }, "the server outlived its test process")
    }

    @Test("a server that stopped first frees the watchdog: nothing runs for a pid that may be reused")
    func leavesOnceTheServerIsGone() async throws {
        let parent = try sleeper()
        defer { if parent.isRunning { kill(parent) } }
        let server = try sleeper()
        defer { if server.isRunning { kill(server) } }
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-watchdog-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        try cleanUpAfterExit(of: parent.processIdentifier, unlessGone: server.processIdentifier,
                             run: ["/usr/bin/touch", marker.path])
        kill(server)
        try await Task.sleep(for: .milliseconds(2_000))
        kill(parent)
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the watchdog ran after its server had gone")
    }

    @Test("a clean-up without a guarded server runs once the parent is gone")
    func runsOnceTheParentIsGone() async throws {
        let parent = try sleeper()
        defer { if parent.isRunning { kill(parent) } }
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-watchdog-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        try cleanUpAfterExit(of: parent.processIdentifier, run: ["/usr/bin/touch", marker.path])
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(!FileManager.default.fileExists(atPath: marker.path))
        kill(parent)
        #expect(await eventually(.seconds(30)) { () async in FileManager.default.fileExists(atPath: marker.path) })
    }
}
