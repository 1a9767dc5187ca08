// `flowstack flows replay`: asks a running server to replay recorded sessions against a draft
// (POST /v1/replays, or a release's versions) and prints the per-flow report as a table.
import ArgumentParser
import Foundation
import JSON

extension Flows {
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay recorded sessions of a running server against other flow versions and print what changes.",
            discussion: """
                Sends POST /v1/replays (or POST /v1/releases/N/replay with --release) to the server and prints, \
                per flow, the sessions that would show the same screens, diverge (first where), hit a refused \
                action, or get stuck on a screen that accepts nothing. The server comes from --server or \
                FLOWSTACK_SERVER; the admin token from FLOWSTACK_ADMIN_TOKEN (or the variable --token-env names), never \
                from the command line; a redirect is not followed. Exits 0 with the report, 3 when the server \
                refuses the request, 4 when it does not answer.
                """)

        @OptionGroup var remote: ServerOptions

        @Option(help: "Flow versions to replay with: name=version,… (in place of those each session ran).")
        var flows: String?

        @Option(help: "Replay with the versions of release N instead.")
        var release: Int?

        @Option(help: "Sessions created in the last N days (1 to 365).")
        var days: Int = 7

        @Option(help: "At most N sessions, newest first (1 to 100000).")
        var sample: Int = 1000

        @Flag(help: "Print the server's JSON answer instead of a table.")
        var json = false

        func validate() throws {
            if flows != nil && release != nil { throw ValidationError("give --flows or --release, not both") }
            _ = try versions()
        }

        /// `--flows` as a map; a usage error names the item that is not `name=version`.
        func versions() throws -> [String: Int] {
            var result: [String: Int] = [:]
            for item in (flows ?? "").split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !parts[0].isEmpty, let version = Int(parts[1]), version >= 1 else {
                    throw ValidationError("--flows takes name=version pairs separated by commas, such as onboarding=2; found \(item)")
                }
                result[String(parts[0])] = version
            }
            return result
        }

        func run() throws {
            var client = try remote.client()
            client.timeout = 600  // a replay of 100,000 sessions takes seconds (BENCHMARKS.md)
            let path = release.map { "/v1/releases/\($0)/replay" } ?? "/v1/replays"
            var body = JSONWriter()
            body.beginObject()
            if release == nil {
                body.writeKey("flows")
                body.beginObject()
                for (name, version) in try versions().sorted(by: { $0.key < $1.key }) {
                    body.writeKey(name)
                    body.writeInteger(version)
                }
                body.endObject()
            }
            body.writeKey("days")
            body.writeInteger(days)
            body.writeKey("sample")
            body.writeInteger(sample)
            body.endObject()
            let answer = try Self.send(client, path, body: body.takeBytes())
            if json {
                print(String(decoding: answer.body, as: UTF8.self))
            } else {
                print(Self.table(answer.json ?? .null), terminator: "")
            }
        }

        /// Posts the replay; a refused one (a version not stored, 422) is the request's fault,
        /// status 3, not a failed check as for the other remote commands.
        static func send(_ client: AdminClient, _ path: String, body: [UInt8]) throws(FailureMessage) -> AdminClient.Answer {
            do {
                return try client.send("POST", path, body: body, what: "replaying recorded sessions")
            } catch {
                throw error.status == .checkFailed ? FailureMessage(error.description, status: .cannotUse) : error
            }
        }

        /// The report as a heading, one row per flow, and the divergences, refusals and dead ends.
        static func table(_ report: JSONValue) -> String {
            func number(_ value: JSONValue?) -> Int { value?.integerValue ?? 0 }
            let totals = report.objectValue?["totals"]?.objectValue ?? JSONObject()
            let versions = (report.objectValue?["versions"]?.objectValue ?? JSONObject()).members
                .map { "\($0.key) \($0.value.integerValue ?? 0)" }.joined(separator: ", ")
            var out = "replayed \(number(totals["sessions"])) sessions"
            out += " on \(versions.isEmpty ? "their own versions" : versions)"
            out += " in \(report.objectValue?["durationMs"]?.doubleValue ?? 0) ms:"
            out += " \(number(totals["same"])) same, \(number(totals["diverged"])) diverged,"
            out += " \(number(totals["refused"])) refused, \(number(totals["deadEnd"])) dead ends,"
            out += " \(number(totals["skipped"])) skipped\n"
            let columns = ["sessions", "same", "diverged", "refused", "deadEnd", "notReached"]
            let headings = ["sessions", "same", "diverged", "refused", "dead end", "not reached"]
            let flows = (report.objectValue?["flows"]?.objectValue ?? JSONObject()).members
            let width = max(4, flows.map(\.key.count).max() ?? 0)
            func pad(_ text: String, _ count: Int, left: Bool = false) -> String {
                let fill = String(repeating: " ", count: max(0, count - text.count))
                return left ? text + fill : fill + text
            }
            out += pad("flow", width, left: true) + headings.map { "  " + $0 }.joined() + "\n"
            var details = ""
            for flow in flows {
                let counts = flow.value.objectValue ?? JSONObject()
                out += pad(flow.key, width, left: true)
                for (column, heading) in zip(columns, headings) { out += "  " + pad(String(number(counts[column])), heading.count) }
                out += "\n"
                for item in counts["firstDivergence"]?.arrayValue ?? [] {
                    let object = item.objectValue ?? JSONObject()
                    details += "  \(flow.key): diverges at \(object["screen"]?.stringValue ?? "?") → "
                        + "\(object["replayedScreen"]?.stringValue ?? "no screen"): \(number(object["count"]))\n"
                }
                for item in counts["refusals"]?.arrayValue ?? [] {
                    let object = item.objectValue ?? JSONObject()
                    details += "  \(flow.key): refuses \(object["action"]?.stringValue ?? "?") on "
                        + "\(object["screen"]?.stringValue ?? "?") (\(object["code"]?.stringValue ?? "?")): \(number(object["count"]))\n"
                }
                for item in counts["deadEnds"]?.arrayValue ?? [] {
                    let object = item.objectValue ?? JSONObject()
                    details += "  \(flow.key): stuck on \(object["screen"]?.stringValue ?? "?"): \(number(object["count"]))\n"
                }
            }
            return out + details
        }
    }
}
