// flowstack-tap: a terminal client of FlowStack, built on FlowStackClient (see README).
import FlowStackClient
import Foundation

let usage = """
    usage: flowstack-tap --server URL [--user ID] [--delay MS] [--store PATH] [--key CLIENT_KEY]
           flowstack-tap bench --server URL [--taps N] [--mode engine|predictions|none] [--second-device]
           flowstack-tap faults --server PROXY_URL --scenario NAME [--proxy-control URL] [--store PATH]

    Draws the session's screens as text and lists the actions the screen on top can post, a key
    each. A tap is shown at once (the engine runs here), then confirmed or corrected by the server.
      o  go offline / back online (taps queue, then go as one batch)
      f  follow the session's events (another device's taps appear)
      i  show the session's id and its token (for curl, or another client on the same session)
      q  quit (or Ctrl-D; Ctrl-C too): the terminal gets its screen back as it was
    --delay adds MS milliseconds before every request, as a slow network would.
    --store keeps the session (and queued taps) in a file, so the next run resumes it.
    bench walks the sample app through the client and prints the time from send to the new
    stack (p50, p99), and how many taps the server confirmed unchanged (see BENCHMARKS.md).
    faults runs one scenario of scripts/client_faults.py through its fault proxy and prints one
    JSON line: the taps made, those reported not taken, the session (see TapFaults.swift).
    """

struct Options {
    var server: URL?
    var user = "tap-\(UUID().uuidString.prefix(6).lowercased())"
    var delay = 0
    var store: String?
    var key: String?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
            switch flag {
            case "--server": server = URL(string: value)
            case "--user": user = value
            case "--delay":
                guard let number = Int(value), number >= 0 else { throw UsageError(message: "--delay is milliseconds, such as 300; found \(value)") }
                delay = number
            case "--store": store = value
            case "--key": key = value
            default: throw UsageError(message: "unknown option \(flag)")
            }
        }
        guard server != nil else { throw UsageError(message: "--server URL is required, such as --server http://127.0.0.1:8080") }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message + "\n\n" + usage }
}

if CommandLine.arguments.dropFirst().first == "bench" {
    do {
        let bench = try TapBench(Array(CommandLine.arguments.dropFirst(2)))
        exit(await bench.run())
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(2)
    }
}

if CommandLine.arguments.dropFirst().first == "faults" {
    do {
        let faults = try TapFaults(Array(CommandLine.arguments.dropFirst(2)))
        exit(await faults.run())
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(2)
    }
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}

let terminal = RawTerminal()
let app = TapApp(options: options, terminal: terminal)
await app.run()
terminal.restore()
exit(0)
