// encode-bench: drives sessions of the sample app through a seeded walk of actions, one stage per
// function, so `callgrind_annotate --inclusive=yes` reads each stage's instructions per action.
//
//     swift build -c release --package-path bench/encode
//     valgrind --tool=callgrind bench/encode/.build/release/encode-bench flows 200 40
//
// Every version is encoded whole (SessionState.encode, SessionState.document,
// FlowTree.storageBytes), as the server does. (Until the twenty-fifth session of issue 35 the
// server copied unchanged parts of the last document, EncodingCache, and this bench had a
// `cached` mode for it: BENCHMARKS.md.)
import FlowEngine
import Foundation
import JSON

/// A small deterministic generator, so every run walks the same actions.
struct Walk {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(bound))
    }
}

@inline(never) func stageParse(_ body: [UInt8]) -> FlowAction? {
    guard let value = try? JSONParser.parse(body) else { return nil }
    return try? FlowAction(json: value)
}

@inline(never) func stageApply(_ action: FlowAction, _ state: SessionState) -> ActionOutcome? {
    try? FlowEngine.apply(action, to: state.tree, catalog: state.catalog, context: state.context)
}

@inline(never) func stageTransition(_ outcome: ActionOutcome) -> [UInt8]? {
    outcome.transition.map(SessionState.encode)
}

@inline(never) func stageDocument(_ state: SessionState) -> [UInt8] {
    state.document()
}

@inline(never) func stageTree(_ state: SessionState) -> [UInt8] {
    state.tree.storageBytes()
}



/// The body a client posts for `action`.
func body(of action: AvailableAction, from top: ScreenRef?, walk: inout Walk) -> [UInt8] {
    var writer = JSONWriter()
    writer.beginObject()
    writer.writeKey("type")
    writer.writeString(action.type)
    if let top {
        writer.writeKey("from")
        writer.writeString(top.entryId)
    }
    writer.writeKey("params")
    writer.beginObject()
    for param in action.params {
        writer.writeKey(param.name)
        switch param.type {
        case .integer: writer.writeInteger(walk.next(2))
        case .number: writer.writeNumber(Double(walk.next(100)) / 100)
        default: writer.writeString(["Hello", "a modal", "Grüße"][walk.next(3)])
        }
    }
    writer.endObject()
    writer.endObject()
    return writer.takeBytes()
}

let arguments = CommandLine.arguments
let flowsDirectory = arguments.count > 1 ? arguments[1] : "flows"
let sessionCount = arguments.count > 2 ? Int(arguments[2]) ?? 200 : 200
let steps = arguments.count > 3 ? Int(arguments[3]) ?? 40 : 40
let names = ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"]
let documents = names.map { name in
    (name, [UInt8](FileManager.default.contents(atPath: "\(flowsDirectory)/\(name).json") ?? Data()))
}
let (catalog, problems) = FlowCatalog.parse(documents)
guard problems.isEmpty else { fatalError("the flows have problems: \(problems)") }

var walk = Walk(state: 35)
var actions = 0
var bytes = 0
/// FNV-1a over every document and stored tree: equal in both modes when the outputs are.
nonisolated(unsafe) var checksum: UInt64 = 0xcbf29ce484222325
func mix(_ output: [UInt8]) -> Int {
    for byte in output { checksum = (checksum ^ UInt64(byte)) &* 0x100000001b3 }
    return output.count
}
for index in 0..<sessionCount {
    var flags: [String: JSONValue] = [:]
    flags["eu-face-scan"] = .bool(index % 3 == 0)
    let context = FlowContext(userId: "u-\(index)", flags: flags, user: index % 4 == 0 ? ["onboarded": true] : [:])
    guard let tree = try? FlowEngine.start(catalog: catalog, context: context) else { fatalError("no tree") }
    let flagsJSON = Array(#"{"eu-face-scan":{"value":false,"variant":"off","reason":"DEFAULT"}}"#.utf8)
    var state = SessionState(
        sessionId: "3f0c1a9e-5b7d-4c2a-9e61-\(String(100_000_000_000 + index))", userId: "u-\(index)", version: 1,
        tree: tree, context: context, catalog: catalog, flagsJSON: flagsJSON, experimentsJSON: Array(#"{"onboarding-length":"control"}"#.utf8))
    for _ in 0..<steps {
        let available = FlowEngine.availableActions(in: state.tree, catalog: catalog, context: state.context)
        guard !available.isEmpty else { break }
        let choice = available[walk.next(available.count)]
        guard let action = stageParse(body(of: choice, from: state.tree.top, walk: &walk)),
              let outcome = stageApply(action, state) else { continue }
        state.version += 1
        state.tree = outcome.tree
        state.handledBy = outcome.handledBy
        for change in outcome.userChanges { state.context.user[change.key] = change.value }
        state.transitionJSON = stageTransition(outcome)
        bytes += mix(stageDocument(state)) + mix(stageTree(state))
        actions += 1
    }
}
print("\(actions) actions, \(bytes) bytes, checksum \(String(checksum, radix: 16))")
