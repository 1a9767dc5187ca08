// FlowsDiff: a folder of definition files against the server's live flows, compared as JSON values.
import FlowEngine
import FlowServer
import Foundation
import JSON

/// The definitions of a folder (its `*.json` files), read for `flows diff`, `flows pull` and
/// `flows push`: flows (one each, named by their `name`) or flags (named by the file, `KEY.json`).
struct LocalFlows {
    struct File {
        var path: String
        var name: String
        /// The document as written, without the members the server adds (`version`, `live`;
        /// `key`, `revision`, `updatedAt` for flags).
        var definition: JSONValue
    }

    var files: [File]

    /// Reads and checks every flow file of `folder`: a file that cannot be read, does not parse
    /// or is not a valid definition, and a flow defined twice, is a problem (`FILE:POINTER: message`).
    static func read(_ folder: String, report: (String) -> Void) -> (flows: LocalFlows, failed: Bool) {
        var failed = false
        var files: [File] = []
        var seen: [String: String] = [:]
        for (path, data) in contents(of: folder, report: { report($0); failed = true }) {
            let definition: FlowDefinition
            do throws(DefinitionProblems) {
                definition = try FlowDefinition.parse(data)
            } catch {
                for problem in error.problems { report("\(path):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
                failed = true
                continue
            }
            if let other = seen[definition.name] {
                report("\(path):/name: flow \(definition.name) is also defined by \(other); each flow is defined by one file")
                failed = true
                continue
            }
            seen[definition.name] = path
            // FlowDefinition.parse accepted it, so it is JSON.
            guard let json = try? JSONParser.parse(data, limits: .storedData) else { continue }
            files.append(File(path: path, name: definition.name, definition: FlowsDiff.withoutServerMembers(json, .flow)))
        }
        return (LocalFlows(files: files), failed)
    }

    /// Reads and checks every flag file of `folder` (`KEY.json`), as `flows test --flags` does.
    static func readFlags(_ folder: String, report: (String) -> Void) -> (flags: LocalFlows, failed: Bool) {
        var failed = false
        var files: [File] = []
        for (path, data) in contents(of: folder, report: { report($0); failed = true }) {
            let key = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            let problems = ScenarioFlags.read([(key, data)]).problems
            for problem in problems { report("\(path):\(problem.pointer): \(problem.message)") }
            guard problems.isEmpty, let json = try? JSONParser.parse(data, limits: .storedData) else {
                failed = true
                continue
            }
            files.append(File(path: path, name: key, definition: FlowsDiff.withoutServerMembers(json, .flag)))
        }
        return (LocalFlows(files: files), failed)
    }

    /// The bytes of each `*.json` file of `folder`; `report` hears what cannot be read.
    private static func contents(of folder: String, report: (String) -> Void) -> [(path: String, data: [UInt8])] {
        Flows.jsonFiles(in: folder, report: report).compactMap { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                report("\(path): \(Flows.whyUnreadable(path))")
                return nil
            }
            return (path, Array(data))
        }
    }
}

/// What differs between a folder and the server's live definitions of one kind: definitions
/// only in the folder (new, or on the server with no live version), definitions that differ
/// (with the JSON Pointer of each difference), the same ones, and live ones no file defines.
struct DefinitionsDiff {
    struct Change: Equatable {
        enum Kind: String { case added, removed, changed }
        var pointer: String
        var kind: Kind
        var old: JSONValue?
        var new: JSONValue?
    }

    struct Changed {
        var file: LocalFlows.File
        var liveVersion: Int
        var changes: [Change]
    }

    var new: [LocalFlows.File] = []
    var changed: [Changed] = []
    var unchanged: [(file: LocalFlows.File, liveVersion: Int)] = []
    var onlyOnServer: [(name: String, liveVersion: Int)] = []

    var hasChanges: Bool { !new.isEmpty || !changed.isEmpty }

    /// The live definitions of the server: `name → (version or revision, definition)`.
    typealias Live = [String: (version: Int, definition: JSONValue)]

    init(local: LocalFlows, live: Live) {
        for file in local.files {
            guard let server = live[file.name] else {
                new.append(file)
                continue
            }
            let changes = FlowsDiff.changes(from: server.definition, to: file.definition)
            if changes.isEmpty {
                unchanged.append((file, server.version))
            } else {
                changed.append(Changed(file: file, liveVersion: server.version, changes: changes))
            }
        }
        let named = Set(local.files.map(\.name))
        onlyOnServer = live.filter { !named.contains($0.key) }.map { ($0.key, $0.value.version) }.sorted { $0.name < $1.name }
    }

    /// The lines of the summary, each name prefixed with `prefix` ("" for flows, "flag " for flags).
    func lines(prefix: String, versionWord: String) -> [String] {
        var lines: [String] = []
        for file in new { lines.append("  new        \(prefix)\(file.name) (\(file.path))") }
        for item in changed {
            lines.append("  changed    \(prefix)\(item.file.name) (\(item.file.path); live is \(versionWord) \(item.liveVersion))")
            for change in item.changes.prefix(20) {
                let pointer = change.pointer.isEmpty ? "/" : change.pointer
                switch change.kind {
                case .added: lines.append("               + \(pointer): \(change.new?.abbreviatedJSON() ?? "")")
                case .removed: lines.append("               - \(pointer): \(change.old?.abbreviatedJSON() ?? "")")
                case .changed:
                    lines.append("               ~ \(pointer): \(change.old?.abbreviatedJSON() ?? "") → \(change.new?.abbreviatedJSON() ?? "")")
                }
            }
            if item.changes.count > 20 { lines.append("               … and \(item.changes.count - 20) more") }
        }
        if !unchanged.isEmpty {
            lines.append("  unchanged  " + unchanged.map { "\(prefix)\($0.file.name) (\(versionWord) \($0.liveVersion))" }.joined(separator: ", "))
        }
        for item in onlyOnServer {
            lines.append("  server     \(prefix)\(item.name) (live \(versionWord) \(item.liveVersion); no file defines it, push leaves it as it is)")
        }
        return lines
    }

    /// The same as a JSON document.
    func json(versionKey: String) -> JSONValue {
        func change(_ change: Change) -> JSONValue {
            var object: JSONObject = ["pointer": .string(change.pointer), "change": .string(change.kind.rawValue)]
            if let old = change.old { object["old"] = old }
            if let new = change.new { object["new"] = new }
            return .object(object)
        }
        return [
            "new": .array(new.map { ["name": .string($0.name), "file": .string($0.path)] }),
            "changed": .array(changed.map {
                .object(JSONObject([.init(key: "name", value: .string($0.file.name)), .init(key: "file", value: .string($0.file.path)),
                                    .init(key: versionKey, value: .integer($0.liveVersion)),
                                    .init(key: "changes", value: .array($0.changes.map(change)))]))
            }),
            "unchanged": .array(unchanged.map {
                .object(JSONObject([.init(key: "name", value: .string($0.file.name)), .init(key: "file", value: .string($0.file.path)),
                                    .init(key: versionKey, value: .integer($0.liveVersion))]))
            }),
            "onlyOnServer": .array(onlyOnServer.map {
                .object(JSONObject([.init(key: "name", value: .string($0.name)), .init(key: versionKey, value: .integer($0.liveVersion))]))
            }),
        ]
    }
}

/// A folder of flows (and, with `--flags`, one of flags) against the server's live definitions.
struct FlowsDiff {
    typealias Change = DefinitionsDiff.Change
    enum Kind { case flow, flag }

    var flows: DefinitionsDiff
    var flags: DefinitionsDiff?

    var hasChanges: Bool { flows.hasChanges || (flags?.hasChanges ?? false) }
    var new: [LocalFlows.File] { flows.new }
    var changed: [DefinitionsDiff.Changed] { flows.changed }

    init(local: LocalFlows, live: DefinitionsDiff.Live, localFlags: LocalFlows? = nil, liveFlags: DefinitionsDiff.Live? = nil) {
        flows = DefinitionsDiff(local: local, live: live)
        if let localFlags { flags = DefinitionsDiff(local: localFlags, live: liveFlags ?? [:]) }
    }

    /// Reads the server's live flows: `GET /v1/flows`, then `GET /v1/flows/{name}` for each live one.
    static func live(from client: AdminClient) throws(FailureMessage) -> DefinitionsDiff.Live {
        let list = try client.json("GET", "/v1/flows", what: "reading the server's flows")
        var live: DefinitionsDiff.Live = [:]
        for flow in list["flows"]?.arrayValue ?? [] {
            guard let name = flow["name"]?.stringValue, flow["liveVersion"]?.integerValue != nil else { continue }
            let document = try client.json("GET", "/v1/flows/\(AdminClient.segment(name))", what: "reading the live flow \(name)")
            guard let version = document["version"]?.integerValue else {
                throw FailureMessage("reading the live flow \(name): the answer has no version")
            }
            live[name] = (version, withoutServerMembers(document, .flow))
        }
        return live
    }

    /// Reads the server's flags (`GET /v1/flags`), each with its revision.
    static func liveFlags(from client: AdminClient) throws(FailureMessage) -> DefinitionsDiff.Live {
        let list = try client.json("GET", "/v1/flags", what: "reading the server's flags")
        var live: DefinitionsDiff.Live = [:]
        for flag in list["flags"]?.arrayValue ?? [] {
            guard let key = flag["key"]?.stringValue else { continue }
            live[key] = (flag["revision"]?.integerValue ?? 0, withoutServerMembers(flag, .flag))
        }
        return live
    }

    /// The definition without the members the server adds to it when it answers.
    static func withoutServerMembers(_ document: JSONValue, _ kind: Kind) -> JSONValue {
        guard let object = document.objectValue else { return document }
        let added: Set<String> = kind == .flow ? ["version", "live"] : ["key", "revision", "updatedAt", "warnings"]
        return .object(JSONObject(uniqueMembers: object.members.filter { !added.contains($0.key) }))
    }
    /// Every place where `new` differs from `old`, as JSON values (member order and number
    /// spelling do not count): members added or removed, values changed, array elements added
    /// or removed at the end.
    static func changes(from old: JSONValue, to new: JSONValue, at pointer: JSONPointer = JSONPointer()) -> [Change] {
        guard old != new else { return [] }
        switch (old, new) {
        case let (.object(before), .object(after)):
            var changes: [Change] = []
            for member in before.members {
                let path = pointer.appending(member.key)
                if let value = after[member.key] {
                    changes += Self.changes(from: member.value, to: value, at: path)
                } else {
                    changes.append(Change(pointer: path.description, kind: .removed, old: member.value, new: nil))
                }
            }
            for member in after.members where before[member.key] == nil {
                changes.append(Change(pointer: pointer.appending(member.key).description, kind: .added, old: nil, new: member.value))
            }
            return changes
        case let (.array(before), .array(after)):
            var changes: [Change] = []
            for index in 0..<min(before.count, after.count) {
                changes += Self.changes(from: before[index], to: after[index], at: pointer.appending(index))
            }
            for index in after.count..<max(after.count, before.count) {
                changes.append(Change(pointer: pointer.appending(index).description, kind: .removed, old: before[index], new: nil))
            }
            for index in before.count..<max(after.count, before.count) {
                changes.append(Change(pointer: pointer.appending(index).description, kind: .added, old: nil, new: after[index]))
            }
            return changes
        default:
            return [Change(pointer: pointer.description, kind: .changed, old: old, new: new)]
        }
    }

    /// The summary a person reads.
    func text(server: String, folder: String) -> String {
        var head = "\(folder) against \(server): \(flows.new.count) new, \(flows.changed.count) changed, \(flows.unchanged.count) unchanged, \(flows.onlyOnServer.count) only on the server"
        if let flags {
            head += "; flags: \(flags.new.count) new, \(flags.changed.count) changed, \(flags.unchanged.count) unchanged, \(flags.onlyOnServer.count) only on the server"
        }
        return ([head] + flows.lines(prefix: "", versionWord: "version") + (flags?.lines(prefix: "flag ", versionWord: "revision") ?? []))
            .joined(separator: "\n")
    }

    /// The same as a JSON document (`flows diff --json`).
    func json(server: String, folder: String) -> JSONValue {
        var object = JSONObject([.init(key: "server", value: .string(server)), .init(key: "folder", value: .string(folder)),
                                 .init(key: "changes", value: .bool(hasChanges))])
        for member in flows.json(versionKey: "liveVersion").objectValue?.members ?? [] { object[member.key] = member.value }
        if let flags { object["flags"] = flags.json(versionKey: "revision") }
        return .object(object)
    }
}

/// JSON for files people edit and review in git: two-space indentation, and a container that
/// fits on one line of about 100 characters kept on one line.
enum ReadableJSON {
    static func text(_ value: JSONValue) -> String {
        var out = ""
        write(value, indent: "", into: &out)
        return out + "\n"
    }

    private static func write(_ value: JSONValue, indent: String, into out: inout String) {
        let line = spaced(value)
        switch value {
        case .array(let elements) where line.count + indent.count > 100 && elements.allSatisfy(\.isScalar):
            // A long list of strings or numbers: filled into lines, not one per line.
            out += "[\n" + indent + "  "
            var width = indent.count + 2
            for (index, element) in elements.enumerated() {
                let text = element.jsonText + (index == elements.count - 1 ? "" : ",")
                if width + text.count > 100 && width > indent.count + 2 {
                    out.removeLast()  // the space after the comma
                    out += "\n" + indent + "  "
                    width = indent.count + 2
                }
                out += text + " "
                width += text.count + 1
            }
            out.removeLast()
            out += "\n" + indent + "]"
        case .array(let elements) where line.count + indent.count > 100 && !elements.isEmpty:
            out += "[\n"
            for (index, element) in elements.enumerated() {
                out += indent + "  "
                write(element, indent: indent + "  ", into: &out)
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let object) where line.count + indent.count > 100 && !object.members.isEmpty:
            out += "{\n"
            for (index, member) in object.members.enumerated() {
                out += indent + "  " + JSONValue.string(member.key).jsonText + ": "
                write(member.value, indent: indent + "  ", into: &out)
                out += index == object.members.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        default:
            out += line
        }
    }

    /// One line, with a space after each comma and colon, as people write it.
    private static func spaced(_ value: JSONValue) -> String {
        switch value {
        case .array(let elements): return "[" + elements.map(spaced).joined(separator: ", ") + "]"
        case .object(let object):
            return "{" + object.members.map { JSONValue.string($0.key).jsonText + ": " + spaced($0.value) }.joined(separator: ", ") + "}"
        default: return value.jsonText
        }
    }
}

private extension JSONValue {
    var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }
}
