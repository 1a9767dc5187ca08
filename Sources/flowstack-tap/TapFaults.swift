// flowstack-tap faults: the real client through scripts/harness/faultproxy.py, one scenario a run, one JSON line out.
// Here the command's options; the report, the scenarios and the kills in TapFaults+Report, +scenarios, +kills.
import FlowStackClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `flowstack-tap faults --server URL [--proxy-control URL] --scenario NAME [--store FILE]`
///
/// Drives a `FlowSession` through the fault proxy of scripts/client_faults.py and prints one JSON
/// line: the taps made (type and params, in order), the taps the client reported not taken
/// (`.corrected` events' `taps`, `.restarted`'s `dropped`), the session id(s) and token(s), and for
/// the taps that time it, send → returned state. The check (the server's action log against the
/// taps made) is the script's: this only acts as an app would. Every tap is `home.selectTab`
/// alternating index 1 and 0 after onboarding (`onboarding.showSecond`, `onboarding.completed`),
/// without `from`, so a tap never depends on what the previous one showed.
///
/// Scenarios:
/// - `tab-switches`: 30 tab switches 120 ms apart (behind 100 ms each way: taps made while a
///   request or a batch is on the wire);
/// - `back-to-back`: 200 tab switches on the local engine with no wait between them, timed;
/// - `offline-1000`: offline, 1,000 tab switches on the local engine, online, settled;
/// - `500-before`, `drop-before`, `500-after`, `garbage-after`, `drop-after`: the proxy breaks
///   the next `--faults` (4) committing requests that way while 10 tab switches are made 50 ms apart;
/// - `kill`: onboarding, then 30 tab switches each made by a child process (this command,
///   `kill-child`) that SIGKILLs itself 0–400 ms after its tap, each child starting again from
///   the same `--store` file; a last child only settles.
struct TapFaults {
    enum Scenario: String, CaseIterable {
        case tabSwitches = "tab-switches"
        case backToBack = "back-to-back"
        case offline = "offline-1000"
        case fault500Before = "500-before"
        case faultDropBefore = "drop-before"
        case fault500After = "500-after"
        case faultGarbageAfter = "garbage-after"
        case faultDropAfter = "drop-after"
        case kill
        /// One step of `kill`, run by `kill` itself in a child process.
        case killChild = "kill-child"
    }

    var server: URL
    var proxyControl: URL?
    var scenario: Scenario
    var store: String?
    var user = "faults-\(UUID().uuidString.prefix(8).lowercased())"
    var faults = 4
    /// `kill-child`: the taps to make, by number (0: onboarding first); none when `from > to`.
    var tapsFrom = 1
    var tapsTo = 0
    /// `kill-child`: SIGKILL this long after the last tap; nil: settle and report instead.
    var killDelay: Int?
    /// Seconds before a run that has not settled gives up (and fails).
    var deadline = 90
    /// Seconds before a request counts as unanswered. Short, because on Linux a connection cut
    /// after a request on a reused connection is only seen at the timeout (libcurl sends the
    /// request again on a new connection, without its body; BENCHMARKS.md).
    var timeout = 3

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        var server: URL?
        var scenario: Scenario?
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
            func number() throws -> Int {
                guard let number = Int(value), number >= 0 else { throw UsageError(message: "\(flag) is a whole number; found \(value)") }
                return number
            }
            switch flag {
            case "--server": server = URL(string: value)
            case "--proxy-control": proxyControl = URL(string: value)
            case "--scenario":
                guard let parsed = Scenario(rawValue: value) else {
                    throw UsageError(message: "--scenario is one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")); found \(value)")
                }
                scenario = parsed
            case "--store": store = value
            case "--user": user = value
            case "--faults": faults = try number()
            case "--taps-from": tapsFrom = try number()
            case "--taps-to": tapsTo = try number()
            case "--kill-delay-ms": killDelay = try number()
            case "--deadline": deadline = try number()
            case "--timeout": timeout = max(1, try number())
            default: throw UsageError(message: "unknown faults option \(flag)")
            }
        }
        guard let server else { throw UsageError(message: "faults needs --server URL (the fault proxy)") }
        guard let scenario else { throw UsageError(message: "faults needs --scenario NAME") }
        self.server = server
        self.scenario = scenario
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
