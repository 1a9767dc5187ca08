// `flowstack flows diff`, `flows pull` and `flows push`: a folder of definitions kept in git, against a server.
import ArgumentParser
import FlowScenarios
import Foundation
import JSON

extension Flows {
    /// Runs `body`, printing a ``FailureMessage`` whole (its problem list spans lines) before
    /// exiting with its status.
    static func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as FailureMessage {
            FlowStackCommand.printError("Error: \(failure.description)")
            throw failure.status
        }
    }

    /// Reads the folder's definitions; any problem stops the command with status 3.
    static func readFolder(_ folder: String) throws -> LocalFlows {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw FailureMessage("\(folder) is not a folder of flow definitions (*.json)")
        }
        let (local, failed) = LocalFlows.read(folder) { FlowStackCommand.printError($0) }
        if failed { throw FailureMessage("\(folder) has definitions that cannot be used (above); nothing was sent") }
        if local.files.isEmpty { throw FailureMessage("\(folder) has no flow definitions (*.json)") }
        return local
    }

    /// Reads a folder of flag definitions (`KEY.json`); any problem stops the command with status 3.
    static func readFlagFolder(_ folder: String?) throws -> LocalFlows? {
        guard let folder else { return nil }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw FailureMessage("\(folder) is not a folder of flag definitions (KEY.json)")
        }
        let (flags, failed) = LocalFlows.readFlags(folder) { FlowStackCommand.printError($0) }
        if failed { throw FailureMessage("\(folder) has flag definitions that cannot be used (above); nothing was sent") }
        return flags
    }

    /// The differences of a folder of flows (and one of flags) against the server.
    static func diff(_ local: LocalFlows, flags: LocalFlows?, client: AdminClient) throws -> FlowsDiff {
        FlowsDiff(local: local, live: try FlowsDiff.live(from: client),
                  localFlags: flags, liveFlags: flags == nil ? nil : try FlowsDiff.liveFlags(from: client))
    }

    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare a folder of flow definitions with the server's live flows.",
            discussion: """
                Each *.json file of DIR (one flow each, named by its "name") is compared with the live version of \
                its flow as JSON values (member order, spacing and number spelling do not count; the version and \
                live members GET /v1/flows/{name} adds are ignored): new flows, changed flows with the JSON Pointer \
                of each difference, unchanged flows, and live flows no file defines. The admin token comes from \
                $FLOWSTACK_ADMIN_TOKEN (or --token-env). Exit status: 0 (with --exit-code: 0 when nothing differs, \
                1 when something does), 3 when a file cannot be used or the server refuses, 4 when it cannot be \
                reached.
                """)

        @Argument(help: "A folder of flow definitions (*.json).")
        var folder: String

        @OptionGroup var server: ServerOptions

        @Option(help: "A folder of flag definitions (KEY.json) to compare with the server's flags too.")
        var flags: String?

        @Flag(help: "Print the differences as JSON.")
        var json = false

        @Flag(help: "Exit 1 when the folder differs from the server (as git diff --exit-code).")
        var exitCode = false

        func run() throws {
            try Flows.reporting {
                let local = try Flows.readFolder(folder)
                let localFlags = try Flows.readFlagFolder(flags)
                let client = try server.client()
                let diff = try Flows.diff(local, flags: localFlags, client: client)
                if json {
                    print(ReadableJSON.text(diff.json(server: client.server.absoluteString, folder: folder)), terminator: "")
                } else {
                    print(diff.text(server: client.server.absoluteString, folder: folder))
                }
                if exitCode && diff.hasChanges { throw ExitCode.checkFailed }
            }
        }
    }

    struct Pull: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the server's live flow definitions into a folder, one file per flow.",
            discussion: """
                Writes DIR/NAME.json for every live flow (created or replaced; without the version and live \
                members the server adds), so that DIR can be committed and `flows diff DIR` finds nothing. Files \
                of DIR that define no live flow are left as they are. The admin token comes from \
                $FLOWSTACK_ADMIN_TOKEN (or --token-env).
                """)

        @Argument(help: "The folder to write into (created if missing).")
        var folder: String

        @OptionGroup var server: ServerOptions

        @Option(help: "A folder to write the server's flags into too (KEY.json, created if missing).")
        var flags: String?

        func run() throws {
            try Flows.reporting {
                let client = try server.client()
                let live = try FlowsDiff.live(from: client)
                do {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                } catch {
                    throw FailureMessage("cannot make the folder \(folder): \(error.localizedDescription)")
                }
                // A flow already kept in a file of another name is written back to that file.
                var existing: [String: String] = [:]
                for path in Flows.jsonFiles(in: folder, report: { _ in }) {
                    guard let data = FileManager.default.contents(atPath: path),
                          let name = (try? JSONParser.parse(Array(data), limits: .storedData))?["name"]?.stringValue else { continue }
                    existing[name] = path
                }
                for name in live.keys.sorted() {
                    guard let flow = live[name] else { continue }
                    let path = existing[name] ?? (folder as NSString).appendingPathComponent(Self.fileName(for: name))
                    guard FileManager.default.createFile(atPath: path, contents: Data(ReadableJSON.text(flow.definition).utf8)) else {
                        throw FailureMessage("cannot write \(path)")
                    }
                    print("\(path): flow \(name), live version \(flow.version)")
                }
                for (name, path) in existing.sorted(by: { $0.key < $1.key }) where live[name] == nil {
                    print("\(path): flow \(name) is not live on the server; left as it is")
                }
                print("flows pull: \(live.count) live flow\(live.count == 1 ? "" : "s") written to \(folder)")
                if let flags {
                    let liveFlags = try FlowsDiff.liveFlags(from: client)
                    do {
                        try FileManager.default.createDirectory(atPath: flags, withIntermediateDirectories: true)
                    } catch {
                        throw FailureMessage("cannot make the folder \(flags): \(error.localizedDescription)")
                    }
                    for key in liveFlags.keys.sorted() {
                        guard let flag = liveFlags[key] else { continue }
                        let path = (flags as NSString).appendingPathComponent(Self.fileName(for: key))
                        guard FileManager.default.createFile(atPath: path, contents: Data(ReadableJSON.text(flag.definition).utf8)) else {
                            throw FailureMessage("cannot write \(path)")
                        }
                        print("\(path): flag \(key), revision \(flag.version)")
                    }
                    print("flows pull: \(liveFlags.count) flag\(liveFlags.count == 1 ? "" : "s") written to \(flags)")
                }
            }
        }

        /// `NAME.json`, with path separators and a leading dot made harmless.
        static func fileName(for name: String) -> String {
            var safe = name.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "\\", with: "_")
            if safe.hasPrefix(".") { safe = "_" + safe.dropFirst() }
            return safe + ".json"
        }
    }

    struct Push: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload the flows of a folder that differ from the server's live ones as one release.",
            discussion: """
                Compares DIR with the server as `flows diff` does and sends the new and changed flows as one \
                release (POST /v1/releases), with the flow tests of DIR/tests (or --tests) to run on it, and the \
                description given. Prints the release, the versions it made and its test results; with \
                --activate, activates it (POST /v1/releases/{id}/activate), which needs the publish role. \
                When nothing differs it says so and makes no release. Exit status: 0 done (or nothing to do), \
                1 the release's tests failed or the server found problems in the definitions (nothing is \
                activated), 3 a file cannot be used or the server refused, 4 it cannot be reached.
                """)

        @Argument(help: "A folder of flow definitions (*.json).")
        var folder: String

        @OptionGroup var server: ServerOptions

        @Option(help: "Flow tests to run on the release: a folder of scenario files or a file (default: DIR/tests when it exists).")
        var tests: String?

        @Option(help: "A folder of flag definitions (KEY.json): those that differ from the server's go in the release too.")
        var flags: String?

        @Option(help: "What the release is for (default: the flows it changes).")
        var description: String?

        @Flag(help: "Activate the release once it is made and its tests pass.")
        var activate = false

        @Flag(help: "With --activate: activate a release that has no flow tests (the server refuses that otherwise).")
        var untested = false

        func run() throws {
            try Flows.reporting {
                let local = try Flows.readFolder(folder)
                let localFlags = try Flows.readFlagFolder(flags)
                let suites = try readTests()
                let client = try server.client()
                let diff = try Flows.diff(local, flags: localFlags, client: client)
                guard diff.hasChanges else {
                    print("nothing to push: the \(local.files.count) flow\(local.files.count == 1 ? "" : "s") of \(folder)\(localFlags.map { " and the \($0.files.count) flags of \(flags ?? "")" } ?? "") match the live definitions on \(client.server.absoluteString); no release made")
                    return
                }
                guard diff.flows.hasChanges else {
                    let keys = ((diff.flags?.new.map(\.name) ?? []) + (diff.flags?.changed.map(\.file.name) ?? [])).joined(separator: ", ")
                    throw FailureMessage("only flags differ (\(keys)): a release holds at least one flow, so no release was made; "
                        + "change them with PUT /v1/flags/{key}, or push them with a flow change")
                }
                var flows = JSONObject()
                for file in diff.new { flows[file.name] = file.definition }
                for flow in diff.changed { flows[flow.file.name] = flow.file.definition }
                var flagDefinitions = JSONObject()
                for file in diff.flags?.new ?? [] { flagDefinitions[file.name] = file.definition }
                for flag in diff.flags?.changed ?? [] { flagDefinitions[flag.file.name] = flag.file.definition }
                let summary = (diff.new.map { "new \($0.name)" } + diff.changed.map { "changed \($0.file.name)" }
                    + flagDefinitions.keys.map { "flag \($0)" }).joined(separator: ", ")
                var body: JSONObject = ["description": .string(description ?? "flows push from \(folder): \(summary)"), "flows": .object(flows)]
                if !flagDefinitions.members.isEmpty { body["flags"] = .object(flagDefinitions) }
                if !suites.isEmpty { body["tests"] = .array(suites) }
                let release: JSONValue
                do {
                    release = try client.json("POST", "/v1/releases", body: .object(body), what: "making the release")
                } catch let failure as FailureMessage where failure.description.contains("answered 404") {
                    throw FailureMessage(failure.description + "\n  this server has no releases (POST /v1/releases): it runs an older FlowStack", status: failure.status)
                }
                guard let id = release["id"]?.integerValue else {
                    throw FailureMessage("making the release: the answer has no id; is \(client.server.absoluteString) a FlowStack server with releases?")
                }
                print(describe(release, id: id, diff: diff))
                let failed = release["tests"]?["failed"]?.integerValue ?? 0
                if release["state"]?.stringValue == "failed" || failed > 0 {
                    throw FailureMessage("release \(id)'s flow tests failed; it was not activated", status: .checkFailed)
                }
                guard activate else {
                    print("not activated: `flowstack flows push` with --activate, or POST /v1/releases/\(id)/activate, makes it live")
                    return
                }
                let activated = try client.json("POST", "/v1/releases/\(id)/activate\(untested ? "?untested=true" : "")", body: .object(JSONObject()),
                                                what: "activating release \(id)")
                let previous = activated["previous"]?.objectValue
                let versions = (activated["flows"]?.objectValue ?? JSONObject()).members.map { member -> String in
                    let before = previous?[member.key]?.integerValue.map { "\($0)" } ?? "none"
                    return "\(member.key) \(before) → \(member.value.integerValue.map { "\($0)" } ?? member.value.jsonText)"
                }
                print("release \(id) is \(activated["state"]?.stringValue ?? "activated"): \(versions.joined(separator: ", "))")
            }
        }

        /// The scenario files to send, each checked here first (a file that does not parse stops the push).
        func readTests() throws -> [JSONValue] {
            let defaultFolder = (folder as NSString).appendingPathComponent("tests")
            let path = tests ?? defaultFolder
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                if tests != nil { throw FailureMessage("\(path): there is no such file or folder") }
                return []
            }
            var failed = false
            let files = isFolder.boolValue ? Flows.jsonFiles(in: path) { FlowStackCommand.printError($0); failed = true } : [path]
            var suites: [JSONValue] = []
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FlowStackCommand.printError("\(file): \(Flows.whyUnreadable(file))")
                    failed = true
                    continue
                }
                do throws(ScenarioProblems) {
                    _ = try FlowScenarioSuite.parse(Array(data))
                } catch {
                    for problem in error.problems { FlowStackCommand.printError("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
                    failed = true
                    continue
                }
                if let json = try? JSONParser.parse(Array(data), limits: .storedData) { suites.append(json) }
            }
            if failed { throw FailureMessage("the flow tests cannot be used (above); nothing was sent") }
            return suites
        }

        /// The release as a person reads it: id, state, each flow's new version, the tests.
        func describe(_ release: JSONValue, id: Int, diff: FlowsDiff) -> String {
            var lines = ["release \(id) (\(release["state"]?.stringValue ?? "?"))" + (release["createdBy"]?.stringValue.map { " by \($0)" } ?? "")]
            let versions = release["flows"]?.objectValue ?? JSONObject()
            for file in diff.new {
                lines.append("  \(file.name): new flow, version \(versions[file.name]?.jsonText ?? "?")")
            }
            for file in diff.flags?.new ?? [] { lines.append("  flag \(file.name): new") }
            for flag in diff.flags?.changed ?? [] {
                lines.append("  flag \(flag.file.name): changed (\(flag.changes.count) difference\(flag.changes.count == 1 ? "" : "s"))")
            }
            for flow in diff.changed {
                lines.append("  \(flow.file.name): version \(versions[flow.file.name]?.jsonText ?? "?") (live is \(flow.liveVersion); \(flow.changes.count) difference\(flow.changes.count == 1 ? "" : "s"))")
            }
            if let tests = release["tests"], tests.objectValue != nil {
                lines.append("  tests: \(tests["passed"]?.integerValue ?? 0) passed, \(tests["failed"]?.integerValue ?? 0) failed")
                for scenario in tests["scenarios"]?.arrayValue ?? [] where scenario["passed"]?.boolValue == false {
                    lines.append("    FAILED \(scenario["name"]?.stringValue ?? "?")")
                    for failure in scenario["failures"]?.arrayValue ?? [] {
                        lines.append("      \(failure["message"]?.stringValue ?? failure.jsonText)")
                    }
                }
            } else {
                lines.append("  tests: none sent (no \((folder as NSString).appendingPathComponent("tests")))")
            }
            return lines.joined(separator: "\n")
        }
    }
}
