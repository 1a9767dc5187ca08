// Runs a program to its end for a test's set-up, with posix_spawn and waitpid.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program that could not be run, or that did not exit 0, with what it printed.
public struct ProgramFailure: Error, CustomStringConvertible {
    public var description: String
}

/// Runs `argv` to its end, standard input from /dev/null, standard output and error together
/// in a file; returns what it printed, or throws ``ProgramFailure`` with it when it fails.
///
/// Not Foundation's `Process`: on Linux its `waitUntilExit` never returned for `pg_ctl start`,
/// whose server inherits the child's descriptors. Output goes to a file for the same reason (a
/// server the program starts keeps the descriptors, so a pipe would never close).
@discardableResult
public func runProgram(_ argv: [String]) throws -> String {
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("flowstack-run-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    let status = reap(try spawn(argv, output: outputPath))
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    guard exitCode(status) == 0 else {
        throw ProgramFailure(description: "\(argv.joined(separator: " ")) failed: \(output)")
    }
    return output
}

/// Runs `command` once the process `parent` (this test process, by default) is gone, or returns
/// at once when `unlessGone` dies first: a small shell, started now and not waited for, that
/// checks every second.
///
/// The clean-up a test process owes the servers it started (a `flowstack serve`, the throwaway
/// PostgreSQL that `pg_ctl` detaches) runs at `deinit` or `atexit`; a test process that crashes
/// runs neither, and those servers would keep their ports and temporary folders until the
/// machine stops. The watchdog is the clean-up that does not depend on the test process ending
/// well. `unlessGone` names the server it guards: once that exits, its pid could be reused, so
/// the watchdog leaves at once instead of killing whatever holds the pid later.
public func cleanUpAfterExit(of parent: pid_t = getpid(), unlessGone guarded: pid_t? = nil, run command: [String]) throws {
    let alive = guarded.map { "kill -0 \"$0\" 2>/dev/null && kill -0 \($0) 2>/dev/null" } ?? "kill -0 \"$0\" 2>/dev/null"
    let stillGuarding = guarded.map { "kill -0 \($0) 2>/dev/null || exit 0; " } ?? ""
    let script = "while \(alive); do sleep 1; done; \(stillGuarding)exec \"$@\""
    // `setsid --fork`: the shell runs in a session of its own (a terminal's ^C to the test run
    // does not stop it before it has done its work) and is not this process's child, so no
    // zombie is left for every server a test started and stopped.
    let argv = ["/usr/bin/setsid", "--fork", "/bin/sh", "-c", script, String(parent)] + command
    do {
        reap(try spawn(argv, output: "/dev/null"))
    } catch let failure as ProgramFailure {
        throw ProgramFailure(description: "cannot start a watchdog: \(failure.description)")
    }
}

/// Starts `argv` (a path first), standard input from /dev/null, standard output and error
/// together appended to `output`, with no descriptor above standard error inherited; returns its pid.
func spawn(_ argv: [String], environment: [String: String]? = nil, output: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    closeInheritedDescriptors(&actions)
    let arguments = argv.map { strdup($0) } + [nil]
    defer { for argument in arguments { free(argument) } }
    let variables = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer { for variable in variables ?? [] { free(variable) } }
    // The child starts as from a shell: no signal blocked, and the usual ones at their default
    // (a test process may block or ignore SIGTERM, and a child inherits both across exec).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let spawned = variables.map { posix_spawn(&pid, argv[0], &actions, &attributes, arguments, $0) }
        ?? posix_spawn(&pid, argv[0], &actions, &attributes, arguments, environ)
    guard spawned == 0 else { throw ProgramFailure(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
    return pid
}

/// The exit code in a wait status; nil when a signal ended the process.
func exitCode(_ status: Int32) -> Int32? {
    status & 0x7f == 0 ? (status >> 8) & 0xff : nil
}

/// Waits for the child `pid` to exit and returns its wait status.
@discardableResult
func reap(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status
}

/// Closes in the child every descriptor above standard error. posix_spawn keeps whatever the
/// test process has open without close-on-exec, and the programs started here outlive the
/// test that started them (a PostgreSQL that `pg_ctl` detaches, a watchdog that waits for a
/// server to end): a connection a test closed would stay open for its server as long as they
/// run, because they hold a copy of it.
private func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    // glibc 2.34 and later; not in the Glibc module's headers (it is a GNU extension).
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        return
    }
    // Older C libraries: those open now. A close that fails in the child (one closed since) is
    // not an error to posix_spawn.
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
        posix_spawn_file_actions_addclose(&actions, descriptor)
    }
}
