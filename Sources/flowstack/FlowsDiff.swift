// FlowsDiff: a folder of definition files against the server's live flows, compared as JSON values.
import FlowEngine
import Foundation
import JSON

/// The definitions of a folder (its `*.json` files, one flow each), read for `flows diff`,
/// `flows pull` and `flows push`.
struct LocalFlows {
    struct File {
        var path: String
        var name: String
        /// The document as written, without the members the server adds (`version`, `live`).
        var definition: JSONValue
    }

    var files: [File]

    /// Reads and checks every file of `folder`: a file that cannot be read, does not parse or
    /// is not a valid definition, and a flow defined twice, is a problem (`FILE:POINTER: message`).
    static func read(_ folder: String, report: (String) -> Void) -> (flows: LocalFlows, failed: Bool) {
        var failed = false
        let paths = Flows.jsonFiles(in: folder) { report($0); failed = true }
        var files: [File] = []
        var seen: [String: String] = [:]
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                report("\(path): \(Flows.whyUnreadable(path))")
                failed = true
                continue
            }
            let definition: FlowDefinition
            do throws(DefinitionProblems) {
                definition = try FlowDefinition.parse(Array(data))
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
            guard let json = try? JSONParser.parse(Array(data), limits: .storedData) else { continue }
            files.append(File(path: path, name: definition.name, definition: FlowsDiff.withoutServerMembers(json)))
        }
        return (LocalFlows(files: files), failed)
    }
}

/// What differs between a folder and the server's live flows: flows only in the folder (new, or
/// on the server with no live version), flows whose definition differs (with the JSON Pointer of
/// each difference), flows that are the same, and live flows that no file defines.
struct FlowsDiff {
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

    /// The live flows of the server: `name → (version, definition without version and live)`.
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

    /// Reads the server's live flows: `GET /v1/flows`, then `GET /v1/flows/{name}` for each live one.
    static func live(from client: AdminClient) throws(FailureMessage) -> Live {
        let list = try client.json("GET", "/v1/flows", what: "reading the server's flows")
        var live: Live = [:]
        for flow in list["flows"]?.arrayValue ?? [] {
            guard let name = flow["name"]?.stringValue, flow["liveVersion"]?.integerValue != nil else { continue }
            let document = try client.json("GET", "/v1/flows/\(AdminClient.segment(name))", what: "reading the live flow \(name)")
            guard let version = document["version"]?.integerValue else {
                throw FailureMessage("reading the live flow \(name): the answer has no version")
            }
            live[name] = (version, withoutServerMembers(document))
        }
        return live
    }

    /// The definition without the members `GET /v1/flows/{name}` adds to it.
    static func withoutServerMembers(_ document: JSONValue) -> JSONValue {
        guard let object = document.objectValue else { return document }
        return .object(JSONObject(uniqueMembers: object.members.filter { $0.key != "version" && $0.key != "live" }))
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
        var lines = ["\(folder) against \(server): \(new.count) new, \(changed.count) changed, \(unchanged.count) unchanged, \(onlyOnServer.count) only on the server"]
        for file in new { lines.append("  new        \(file.name) (\(file.path))") }
        for flow in changed {
            lines.append("  changed    \(flow.file.name) (\(flow.file.path); live is version \(flow.liveVersion))")
            for change in flow.changes.prefix(20) {
                let pointer = change.pointer.isEmpty ? "/" : change.pointer
                switch change.kind {
                case .added: lines.append("               + \(pointer): \(change.new?.abbreviatedJSON() ?? "")")
                case .removed: lines.append("               - \(pointer): \(change.old?.abbreviatedJSON() ?? "")")
                case .changed:
                    lines.append("               ~ \(pointer): \(change.old?.abbreviatedJSON() ?? "") → \(change.new?.abbreviatedJSON() ?? "")")
                }
            }
            if flow.changes.count > 20 { lines.append("               … and \(flow.changes.count - 20) more") }
        }
        if !unchanged.isEmpty {
            lines.append("  unchanged  " + unchanged.map { "\($0.file.name) (version \($0.liveVersion))" }.joined(separator: ", "))
        }
        for flow in onlyOnServer {
            lines.append("  server     \(flow.name) (live version \(flow.liveVersion); no file defines it, push leaves it as it is)")
        }
        return lines.joined(separator: "\n")
    }

    /// The same as a JSON document (`flows diff --json`).
    func json(server: String, folder: String) -> JSONValue {
        func change(_ change: Change) -> JSONValue {
            var object: JSONObject = ["pointer": .string(change.pointer), "change": .string(change.kind.rawValue)]
            if let old = change.old { object["old"] = old }
            if let new = change.new { object["new"] = new }
            return .object(object)
        }
        return [
            "server": .string(server),
            "folder": .string(folder),
            "changes": .bool(hasChanges),
            "new": .array(new.map { ["name": .string($0.name), "file": .string($0.path)] }),
            "changed": .array(changed.map {
                ["name": .string($0.file.name), "file": .string($0.file.path), "liveVersion": .integer($0.liveVersion),
                 "changes": .array($0.changes.map(change))]
            }),
            "unchanged": .array(unchanged.map {
                ["name": .string($0.file.name), "file": .string($0.file.path), "liveVersion": .integer($0.liveVersion)]
            }),
            "onlyOnServer": .array(onlyOnServer.map { ["name": .string($0.name), "liveVersion": .integer($0.liveVersion)] }),
        ]
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
