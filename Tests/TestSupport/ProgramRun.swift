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
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let arguments = argv.map { strdup($0) } + [nil]
    defer { for argument in arguments { free(argument) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, argv[0], &actions, nil, arguments, environ)
    guard spawned == 0 else { throw ProgramFailure(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    guard (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0 else {
        throw ProgramFailure(description: "\(argv.joined(separator: " ")) failed: \(output)")
    }
    return output
}
