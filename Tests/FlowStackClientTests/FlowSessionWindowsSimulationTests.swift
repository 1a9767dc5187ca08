// Several windows of one app (FlowSessions of one user on one store, running at once) under
// seeded schedules: windows opened and closed, some closed offline with taps waiting, taps in any
// of them, lost requests and answers, 500s, the server down, and the app killed with every window
// and started again. At the end, windows are opened until no slot of the store keeps a tap. Every
// tap made is stored once, on its own window's session, or reported; no correction comes with
// nobody else on a session. The JavaScript client's tabs simulation checks the same for tabs.
@testable import FlowStackClient
import Foundation
import JSON
import Testing
import TestSupport

@Suite(.serialized, .enabled(if: simulationRuns))
struct FlowSessionWindowsSimulationTests {
    struct Outcome: CustomStringConvertible {
        var seed: UInt64
        var made = 0
        var stored = 0
        var reported = 0
        var windows = 0
        var closedWaiting = 0
        var kills = 0
        var failures: [String] = []
        var description: String {
            "seed \(seed): \(made) taps made, \(stored) stored, \(reported) reported not taken, \(windows) windows, "
                + "\(closedWaiting) closed with taps waiting, \(kills) kills"
                + (failures.isEmpty ? "" : "; FAILED: " + failures.joined(separator: "; "))
        }
    }

    /// One open window: its session, transport, and the events it reported.
    final class Window: @unchecked Sendable {
        let session: FlowSession
        let transport: SimulatedTransport
        let events: Task<[ClientEvent], Never>
        init(session: FlowSession, transport: SimulatedTransport, events: Task<[ClientEvent], Never>) {
            self.session = session
            self.transport = transport
            self.events = events
        }
    }

    static func schedule(seed: UInt64) async throws -> Outcome {
        var outcome = Outcome(seed: seed)
        var random = SeededGenerator(seed: seed)
        let server = SimulatedServer(catalog: SimulatedServer.sampleCatalog)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-windows-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.json").path
        // One store per process (the app's); a kill ends the process, and the next one reads the file anew.
        var process = KillableStore(FileSessionStore(path: path))
        var processes = [process]
        var windows: [Window] = []
        var reportedEvents: [ClientEvent] = []
        /// Each tap's key, with the session it was made on.
        var madeOn: [String: String] = [:]

        func open() async throws -> Window? {
            let transport = SimulatedTransport(server: server, seed: random.next())
            do {
                let session = try await FlowSession.start(FlowSession.Configuration(
                    server: URL(string: "http://sim.test")!, userId: "ada", store: process,
                    retry: RetryPolicy(attempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(8)), transport: transport))
                let stream = await session.events()
                let history = await session.history
                let events = Task { var seen = history; for await event in stream { seen.append(event) }; return seen }
                outcome.windows += 1
                return Window(session: session, transport: transport, events: events)
            } catch is Unreachable {
                return nil  // no server answered a start with nothing kept: the window shows an error
            }
        }

        func closeWindow(_ index: Int) async {
            let window = windows.remove(at: index)
            if await window.session.pendingCount > 0 { outcome.closedWaiting += 1 }
            await window.session.close()
            reportedEvents += await window.events.value
        }

        let target = 20 + Int(random.next() % 30)
        if let first = try await open() { windows.append(first) }
        while outcome.made < target {
            let roll = random.next() % 100
            if windows.isEmpty || (roll < 8 && windows.count < 3) {
                if let window = try await open() { windows.append(window) }
                continue
            }
            let index = Int(random.next() % UInt64(windows.count))
            let window = windows[index]
            if roll < 14 {
                // Closed now and then while offline with taps waiting.
                if random.next() % 2 == 0 {
                    await window.session.setOffline(true)
                    for _ in 0..<(1 + random.next() % 3) { await tap(window, &outcome, &madeOn, &random) }
                }
                await closeWindow(index)
                continue
            }
            if roll < 17 {
                // The app is killed with every window; the next process reads the file.
                outcome.kills += 1
                for window in windows { window.transport.kill() }
                process.kill()
                for window in windows {
                    await window.session.close()
                    reportedEvents += await window.events.value
                }
                windows = []
                process = KillableStore(FileSessionStore(path: path))
                processes.append(process)
                continue
            }
            if roll < 22 { await window.session.setOffline(!(await window.session.isOffline)) }
            if roll < 25 { server.withLock { server.down.toggle() } }
            await tap(window, &outcome, &madeOn, &random)
            if random.next() % 3 == 0 { try? await Task.sleep(for: .microseconds(random.next() % 1_500)) }
        }

        // Faults end; every window settles and closes; then windows are opened until no slot
        // keeps a tap (each opened one takes a slot with taps waiting first).
        server.withLock { server.down = false }
        for window in windows {
            window.transport.heal()
            await window.session.setOffline(false)
        }
        for window in windows {
            if !(await FlowSessionSimulationTests.settle(window.session)) { outcome.failures.append("a window did not settle in 20 s") }
        }
        while !windows.isEmpty { await closeWindow(0) }
        var drains = 0
        while try FileSessionStore(path: path).all().contains(where: { !$0.queue.isEmpty }), drains < 70 {
            drains += 1
            guard let window = try await open() else { continue }
            window.transport.heal()
            if !(await FlowSessionSimulationTests.settle(window.session)) { outcome.failures.append("a window opened to send kept taps did not settle") }
            windows.append(window)
        }
        while !windows.isEmpty { await closeWindow(0) }
        let leftover = try FileSessionStore(path: path).all().filter { !$0.queue.isEmpty }
        if !leftover.isEmpty { outcome.failures.append("taps left in the store: \(leftover.map { "slot \($0.slot): \($0.queue.count)" })") }

        let counts = server.keyCounts()
        var reported = Set<String>()
        var corrections: [String] = []
        for event in reportedEvents {
            switch event {
            case .corrected(let correction):
                for tap in correction.taps { reported.insert(tap.key) }
                if correction.reason.rawValue != "refused" { corrections.append(correction.reason.rawValue) }
            case .restarted(let restart):
                for tap in restart.dropped { reported.insert(tap.key) }
                corrections.append("restarted")
            default: break
            }
        }
        let stored = Set(counts.all.keys)
        outcome.stored = stored.count
        outcome.reported = reported.subtracting(stored).count
        for (key, count) in counts.all where count > 1 { outcome.failures.append("key \(key.prefix(8)) stored \(count) times") }
        var asked = Set<String>()
        for process in processes { asked.formUnion(process.asked) }
        for key in asked.subtracting(stored).subtracting(reported).sorted() {
            outcome.failures.append("key \(key.prefix(8)) was kept and neither stored nor reported")
        }
        for (key, session) in madeOn {
            if let entry = server.entries(key: key).first, entry.session != session {
                outcome.failures.append("key \(key.prefix(8)) made on \(session) was stored on \(entry.session)")
            }
        }
        if !corrections.isEmpty { outcome.failures.append("corrections with nobody else on the session: \(corrections)") }
        if outcome.made != outcome.stored + outcome.reported {
            outcome.failures.append("\(outcome.made) taps made, \(outcome.stored) stored, \(outcome.reported) reported")
        }
        return outcome
    }

    /// A tap in `window` on one of its available actions; counted when it was shown or queued.
    static func tap(_ window: Window, _ outcome: inout Outcome, _ madeOn: inout [String: String], _ random: inout SeededGenerator) async {
        let action = await FlowSessionSimulationTests.chooseAction(window.session, random: &random)
        let before = Set(await window.session.pending.map(\.key))
        do {
            _ = try await window.session.send(action)
            outcome.made += 1
        } catch is FlowError {
            return  // the local engine refused it: nothing queued
        } catch is ActionRefused {
            outcome.made += 1
        } catch is Unreachable {
            outcome.made += 1
        } catch {
            outcome.failures.append("a tap threw \(error)")
            return
        }
        // The tap's key, when still queued: the session it was made on.
        let id = window.session.sessionId
        for key in Set(await window.session.pending.map(\.key)).subtracting(before) { madeOn[key] = id }
    }

    /// FLOWSTACK_SIM_SEED=13 swift test --filter replaysOneWindowSchedule
    @Test func replaysOneWindowSchedule() async throws {
        guard let text = ProcessInfo.processInfo.environment["FLOWSTACK_SIM_SEED"], let seed = UInt64(text) else { return }
        print(try await Self.schedule(seed: seed))
    }

    @Test func windowsUnderFaults() async throws {
        var total = Outcome(seed: 0)
        var failed: [Outcome] = []
        let began = ContinuousClock.now
        for seed in 1...UInt64(40) {
            let outcome = try await Self.schedule(seed: seed)
            total.made += outcome.made
            total.stored += outcome.stored
            total.reported += outcome.reported
            total.windows += outcome.windows
            total.closedWaiting += outcome.closedWaiting
            total.kills += outcome.kills
            if !outcome.failures.isEmpty { failed.append(outcome) }
        }
        print("FlowSession windows simulation: 40 schedules, \(total.made) taps made, \(total.stored) stored, \(total.reported) reported "
              + "not taken, \(total.windows) windows opened, \(total.closedWaiting) closed with taps waiting, \(total.kills) kills; "
              + "\(failed.count) failed in \(ContinuousClock.now - began)")
        for outcome in failed.prefix(5) { Issue.record("\(outcome)") }
    }
}
