// ServerProcess: a real `flowstack serve` on a loopback port, the binary this build made.
import FlowStackClient
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `flowstack serve --port 0` on a temporary SQLite file (or, with
/// FLOWSTACK_TEST_DB_KIND=postgresql, on a schema of its own in a throwaway PostgreSQL), stopped
/// and restarted on the same database and port.
final class ServerProcess: @unchecked Sendable {
    let directory: URL
    let database: String
    private(set) var port: Int = 0
    /// The line `serve` printed when it listened (names the database it runs on).
    private(set) var listening = ""
    private var process: ChildProcess?
    private let lock = NSLock()
    /// Held while a process is spawned, and by a test that lowers this process's limits for a
    /// moment (FileSessionStoreFaultTests' file size limit): a child never inherits them.
    static let spawning = NSLock()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var binary: String {
        // #filePath: REPO/Tests/FlowStackClientTests/ServerProcess.swift
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.appendingPathComponent(".build/debug/flowstack").path
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if ProcessInfo.processInfo.environment["FLOWSTACK_TEST_DB_KIND"] == "postgresql" {
            database = try TestPostgres.freshSchema()
        } else {
            database = directory.appendingPathComponent("db.sqlite").path
        }
        try start()
    }

    var server: URL {
        // Built from parts the test controls.
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// The running server's pid.
    var pid: pid_t? { lock.withLock { process?.pid } }

    /// Starts the server (on the port it had, after a stop) and waits for its "listening" line.
    func start() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw Failure(description: "no flowstack binary at \(Self.binary): run swift build first")
        }
        let log = directory.appendingPathComponent("serve-\(UUID().uuidString).log")
        var environment = ProcessInfo.processInfo.environment
        environment["FLOWSTACK_ADMIN_TOKEN"] = "test-admin-token-" + String(repeating: "0", count: 32)  // serve needs 32 bytes
        environment["FLOWSTACK_LOG_LEVEL"] = "warning"
        let process = try Self.spawning.withLock {
            try ChildProcess([Self.binary, "serve", "--port", String(port), "--db", database, "--threads", "4", "--shutdown-grace", "1"],
                             environment: environment, output: log.path)
        }
        lock.withLock { self.process = process }
        // Stopped at deinit; a crashed test process never gets there, so a watchdog kills the
        // server once this process is gone (and leaves as soon as the server stops).
        Self.spawning.withLock {
            try? cleanUpAfterExit(unlessGone: process.pid, run: ["/bin/kill", "-KILL", String(process.pid)])
        }
        let deadline = ContinuousClock.now + .seconds(60)  // a loaded machine starts it in seconds, not minutes
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: log, encoding: .utf8),
               let range = text.range(of: "flowstack listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let number = Int(digits) {
                    port = number
                    listening = String(text[range.lowerBound...].prefix { $0 != "\n" })
                    return
                }
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw Failure(description: "flowstack did not start: \(text)")
    }

    /// Stops the server (SIGTERM) and waits for it to exit. One that has not exited within
    /// `limit` is a failure of the test (with what it logged), and is killed.
    func stop(within limit: Duration = .seconds(30)) {
        let process = lock.withLock { () -> ChildProcess? in
            defer { self.process = nil }
            return self.process
        }
        guard let process, process.isRunning else { return }
        process.send(SIGTERM)
        if !process.wait(upTo: limit) {
            Issue.record("flowstack serve did not exit within \(limit) of SIGTERM: \(logs())")
            process.kill()
        }
    }

    /// What the server's runs logged, for a failure's message.
    private func logs() -> String {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.filter { $0.lastPathComponent.hasPrefix("serve-") }
            .compactMap { try? String(contentsOf: $0, encoding: .utf8) }
            .joined(separator: "\n")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A raw request, as another device (or an operator) would make it.
    func request(_ method: String, _ path: String, token: String? = nil, ifMatch: Int? = nil, body: String? = nil) async throws -> (Int, String) {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else { throw Failure(description: "bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let ifMatch { request.setValue("\"\(ifMatch)\"", forHTTPHeaderField: "If-Match") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response): (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error { continuation.resume(throwing: error) }
                else if let response { continuation.resume(returning: (data ?? Data(), response)) }
                else { continuation.resume(throwing: Failure(description: "no response")) }
            }.resume()
        }
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

/// A throwaway PostgreSQL for this test process (scripts/pgserver.py), stopped when it exits;
/// each server gets a schema of its own.
enum TestPostgres {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    nonisolated(unsafe) static var directory: String?

    static let url: Result<String, ServerProcess.Failure> = {
        do {
            let output = try runProgram(["/usr/bin/env", "python3", repo + "/scripts/pgserver.py", "start"])
            var values: [String: String] = [:]
            for line in output.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                values[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            guard let url = values["URL"], let dir = values["DIR"] else {
                return .failure(ServerProcess.Failure(description: "pgserver.py printed no URL: \(output)"))
            }
            directory = dir
            // atexit below does not run when this process crashes: a watchdog stops the
            // server once the process is gone, whichever way it went.
            try? cleanUpAfterExit(run: ["/usr/bin/env", "python3", repo + "/scripts/pgserver.py", "stop", "--dir", dir])
            atexit {
                guard let dir = TestPostgres.directory else { return }
                _ = try? runProgram(["/usr/bin/env", "python3", TestPostgres.repo + "/scripts/pgserver.py", "stop", "--dir", dir])
            }
            return .success(url)
        } catch let error as ServerProcess.Failure {
            return .failure(error)
        } catch {
            return .failure(ServerProcess.Failure(description: "\(error)"))
        }
    }()

    /// A URL whose search_path is a new, empty schema.
    static func freshSchema() throws -> String {
        let base = try url.get()
        let name = "client_" + UUID().uuidString.prefix(8).lowercased()
        try runProgram(["/usr/bin/psql", base, "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE SCHEMA \(name)"])
        return base + "?options=-csearch_path%3D\(name)"
    }

}
