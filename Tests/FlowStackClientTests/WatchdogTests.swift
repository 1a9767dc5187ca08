// The watchdog that cleans up after a crashed test process (`cleanUpAfterExit` in TestSupport).
import Foundation
import Testing
import TestSupport

@Suite("The watchdog behind every server a test starts")
struct WatchdogTests {
    /// A process standing in for a test process or a server: `sleep`, killed at will.
    private func sleeper() throws -> ChildProcess {
        // Far longer than the test: in the whole suite's parallel run a test can wait minutes for
        // a thread, and a stand-in that ended by itself would look like a parent that died.
        try ChildProcess(["/bin/sleep", "3600"])
    }

    @Test("a server outlives no test process: once the parent dies, the server is killed")
    func killsTheServerWhenTheParentDies() async throws {
        let parent = try sleeper()
        defer { parent.kill() }
        let server = try sleeper()
        defer { server.kill() }
        try cleanUpAfterExit(of: parent.pid, unlessGone: server.pid,
                             run: ["/bin/kill", "-KILL", String(server.pid)])
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(server.isRunning, "the watchdog acted while the parent lived")
        parent.kill()
        #expect(await eventually(.seconds(30)) { () async in !server.isRunning }, "the server outlived its test process")
    }

    @Test("a server that stopped first frees the watchdog: nothing runs for a pid that may be reused")
    func leavesOnceTheServerIsGone() async throws {
        let parent = try sleeper()
        defer { parent.kill() }
        let server = try sleeper()
        defer { server.kill() }
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-watchdog-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        try cleanUpAfterExit(of: parent.pid, unlessGone: server.pid,
                             run: ["/usr/bin/touch", marker.path])
        server.kill()
        try await Task.sleep(for: .milliseconds(2_000))
        parent.kill()
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the watchdog ran after its server had gone")
    }

    @Test("a clean-up without a guarded server runs once the parent is gone")
    func runsOnceTheParentIsGone() async throws {
        let parent = try sleeper()
        defer { parent.kill() }
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-watchdog-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        try cleanUpAfterExit(of: parent.pid, run: ["/usr/bin/touch", marker.path])
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(!FileManager.default.fileExists(atPath: marker.path))
        parent.kill()
        #expect(await eventually(.seconds(30)) { () async in FileManager.default.fileExists(atPath: marker.path) })
    }
}
