// lists-bench: what a version that changes one row of a list costs the server, for lists of 10,
// 1,000 and 10,000 rows, and what its answer weighs, against sending the whole list.
//
//     swift build -c release --package-path bench/lists
//     bench/lists/.build/release/lists-bench [VERSIONS]     # default 400 versions per size
//
// Per size, one session holds one list screen of N rows (in 10 sections, and 10,000 in one); each version changes one
// row, in turn: its values (reload), a removal, an insertion, a move to another section. For each
// version it times, in process CPU time: the engine's apply (routing, effects, and the diff that
// makes the transition's `lists`), the diff alone (ListChanges.diff on the two lists), the state
// document, and the stored tree. Sizes: the answer (the state document), the transition's
// `lists` (the change), and the list itself written whole.
import FlowEngine
import Foundation
import JSON

func cpuNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

let definition = #"""
    {"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": []}],
     "on": {
       "list.load": [{"from": "list", "params": {"sections": "array"}, "do": [{"setSections": {"sections": {"$param": "sections"}}}]}],
       "list.update": [{"from": "list", "params": {"id": "string", "values": "object"}, "do": [{"updateRow": {"row": {"$param": "id"}, "values": {"$param": "values"}}}]}],
       "list.remove": [{"from": "list", "params": {"id": "string"}, "do": [{"removeRow": {"row": {"$param": "id"}}}]}],
       "list.insert": [{"from": "list", "params": {"section": "string", "at": "integer", "row": "object"},
                        "do": [{"insertRow": {"section": {"$param": "section"}, "at": {"$param": "at"}, "row": {"$param": "row"}}}]}],
       "list.move": [{"from": "list", "params": {"id": "string", "section": "string", "at": "integer"},
                      "do": [{"moveRow": {"row": {"$param": "id"}, "section": {"$param": "section"}, "at": {"$param": "at"}}}]}]}}
    """#

let versions = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 400 : 400
let (catalog, problems) = FlowCatalog.parse([("app", Array(definition.utf8))])
guard problems.isEmpty else { fatalError("definition: \(problems)") }

func row(_ id: Int) -> JSONValue {
    ["id": .string("r\(id)"), "kind": "contact", "values": ["name": .string("Contact \(id)"), "city": "Lyon", "starred": false]]
}

print("| rows (sections) | apply (with diff) µs | diff alone µs | state document µs | stored tree µs | answer bytes | `lists` bytes | whole list bytes |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
var checksum = 0
for (size, sectionCount) in [(10, 10), (1_000, 10), (10_000, 10), (10_000, 1)] {
    let context = FlowContext(userId: "u")
    let tree = try FlowEngine.start(catalog: catalog, context: context)
    var state = SessionState(sessionId: "s", userId: "u", version: 0, tree: tree, context: context, catalog: catalog,
                             flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
    let perSection = size / sectionCount
    let sections: [JSONValue] = (0..<sectionCount).map { s in
        ["id": .string("s\(s)"), "title": .string("Section \(s)"), "rows": .array((0..<perSection).map { row(s * perSection + $0) })]
    }
    state = try state.applying(FlowAction(type: "list.load", from: "e2", params: ["sections": .array(sections)])).next
    var next = size
    var apply: UInt64 = 0, diff: UInt64 = 0, document: UInt64 = 0, stored: UInt64 = 0
    var answerBytes = 0, changeBytes = 0, listBytes = 0
    for version in 0..<versions {
        let list = state.tree.screen(id: 2)?.sections ?? []
        // A section with rows, from the version's onward (a small list's removals empty some).
        guard let target = (0..<list.count).lazy.map({ list[(version + $0) % list.count] }).first(where: { !$0.rows.isEmpty }) else { break }
        let pick = target.rows[(version * 7919) % target.rows.count].id
        let action: FlowAction
        switch version % 4 {
        case 0: action = FlowAction(type: "list.update", from: "e2", params: ["id": .string(pick), "values": ["starred": .bool(version % 8 == 0)]])
        case 1: action = FlowAction(type: "list.remove", from: "e2", params: ["id": .string(pick)])
        case 2:
            next += 1
            action = FlowAction(type: "list.insert", from: "e2", params: ["section": .string(target.id), "at": .integer(target.rows.count / 2), "row": row(next)])
        default:
            action = FlowAction(type: "list.move", from: "e2", params: ["id": .string(pick), "section": .string(list[(version + 1) % list.count].id), "at": 0])
        }
        var start = cpuNanoseconds()
        let outcome = try FlowEngine.apply(action, to: state.tree, catalog: catalog, context: state.context)
        apply += cpuNanoseconds() - start
        let after = outcome.tree.screen(id: 2)?.sections ?? []
        start = cpuNanoseconds()
        let changes = ListChanges.diff(from: list, to: after)
        diff += cpuNanoseconds() - start
        checksum &+= changes.rows.deleted.count + changes.rows.inserted.count + changes.rows.moved.count + changes.rows.reloaded.count
        state.advance(by: outcome)
        start = cpuNanoseconds()
        let body = state.document()
        document += cpuNanoseconds() - start
        start = cpuNanoseconds()
        let storage = state.tree.storageBytes()
        stored += cpuNanoseconds() - start
        answerBytes += body.count
        checksum &+= storage.count
        var writer = JSONWriter()
        writer.beginArray()
        for list in outcome.transition?.lists ?? [] {
            writer.beginObject()
            writer.writeKey("id")
            writer.writeString(list.entryId)
            writer.writeKey("changes")
            list.changes.write(into: &writer)
            writer.endObject()
        }
        writer.endArray()
        changeBytes += writer.count
        var whole = JSONWriter()
        ScreenList.write(after, into: &whole)
        listBytes += whole.count
    }
    func micro(_ total: UInt64) -> String { String(format: "%.1f", Double(total) / Double(versions) / 1000) }
    print("| \(size) (\(sectionCount)) | \(micro(apply)) | \(micro(diff)) | \(micro(document)) | \(micro(stored)) | \(answerBytes / versions) | \(changeBytes / versions) | \(listBytes / versions) |")
}
print("checksum \(checksum)")
