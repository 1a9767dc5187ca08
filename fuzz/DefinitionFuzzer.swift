// DefinitionFuzzer: bytes → FlowDefinition.parse → the sample catalog with it in place → validate, start, walk.

import JSON
import FlowEngine

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let (_, problems) = FlowCatalog.parse(sampleDocuments)
    if !problems.isEmpty { fail("the sample flows have problems: \(problems)") }
    return 0
}

/// A new user and a user who finished onboarding, with the face-scan flag on: the two trees a
/// changed flow is most likely to be started in.
let walkContexts = [
    FlowContext(userId: "fuzz-1", attributes: ["country": "DE"], flags: ["eu-face-scan": true]),
    FlowContext(userId: "fuzz-2", user: ["onboarded": true]),
]

/// The input is one definition document, as `PUT /v1/flows/{name}` and `flows validate` read it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The flow it replaces: its own name when it parses, else onboarding, so documents with
    // problems go through the catalog's reporting too.
    var name = "onboarding"
    do throws(DefinitionProblems) {
        let definition = try FlowDefinition.parse(bytes, limits: bodyLimits)
        name = definition.name
        _ = definition.nameProblem(expected: "onboarding")
    } catch {
        _ = error.description
    }
    var documents = sampleDocuments.filter { $0.name != name }
    documents.append((name: name, bytes: bytes))
    let (catalog, problems) = FlowCatalog.parse(documents, limits: bodyLimits)
    _ = catalog.validate(flags: ["eu-face-scan": [true, false]])  // the flag warnings too
    _ = problems.map(\.description)
    guard problems.isEmpty else { return 0 }
    for context in walkContexts { walk(catalog, context: context) }
    return 0
}

/// Starts a session on a catalog that validated and applies what it offers, breadth-first a
/// few actions deep, checking each tree the engine returns.
func walk(_ catalog: FlowCatalog, context start: FlowContext) {
    let tree: FlowTree
    do throws(FlowError) {
        tree = try FlowEngine.start(catalog: catalog, context: start)
    } catch {
        _ = error.message  // a catalog may validate and still not build (every initial entry conditional)
        return
    }
    checkTree(tree)
    var frontier = [(tree, start)]
    var applied = 0
    for _ in 0..<3 {
        var next: [(FlowTree, FlowContext)] = []
        for (tree, context) in frontier {
            for available in FlowEngine.availableActions(in: tree, catalog: catalog, context: context) {
                for action in actions(for: available, top: tree.top) {
                    guard applied < 48 else { return }
                    applied += 1
                    do throws(FlowError) {
                        let outcome = try FlowEngine.apply(action, to: tree, catalog: catalog, context: context)
                        checkTree(outcome.tree)
                        var context = context
                        for change in outcome.userChanges { context.user[change.key] = change.value }
                        next.append((outcome.tree, context))
                    } catch {
                        // Listed means some flow on the chain takes it: it may refuse, never ignore.
                        if case .unhandled = error { require(false, "\(action.type) was listed as available but is unhandled") }
                        _ = error.message
                    }
                }
            }
        }
        frontier = next
    }
}

/// The actions to try for an offered one: params of the declared types (integers at and past
/// the edges, for tab indexes), interactively when the rule allows it; a pending interaction
/// is finished or cancelled at the next level.
func actions(for available: AvailableAction, top: ScreenRef?) -> [FlowAction] {
    switch available.type {
    case FlowAction.interactionUpdate: return [FlowAction(type: available.type, params: ["progress": 0.7])]
    case FlowAction.interactionEnd: return [FlowAction(type: available.type, params: ["progress": 1])]
    case FlowAction.interactionCancel: return [FlowAction(type: available.type)]
    default: break
    }
    var params = JSONObject()
    for param in available.params { params[param.name] = sampleValue(param.type, variant: 0) }
    var result = [FlowAction(type: available.type, from: top?.entryId, params: params)]
    if available.params.contains(where: { $0.type == .integer }) {
        for variant in 1...3 {
            var params = JSONObject()
            for param in available.params { params[param.name] = sampleValue(param.type, variant: variant) }
            result.append(FlowAction(type: available.type, from: top?.entryId, params: params))
        }
    }
    if available.interactive {
        result.append(FlowAction(type: available.type, from: top?.entryId, params: params, interactive: true))
    }
    return result
}

func sampleValue(_ type: FlowRule.ParamType, variant: Int) -> JSONValue {
    switch type {
    case .string, .any: return "fuzz"
    case .integer: return [1, -1, 255, .integer(Int.max)][variant]
    case .number: return 0.5
    case .boolean: return true
    case .object: return ["content": "fuzz"]
    case .array: return ["fuzz"]
    }
}

/// What every tree the engine returns keeps: its invariants, and a storage encoding that reads
/// back to the same tree.
func checkTree(_ tree: FlowTree) {
    let problems = tree.structuralProblems()
    require(problems.isEmpty, "a malformed tree: \(problems)")
    do throws(FlowStorageError) {
        let stored = try FlowTree(storage: tree.storageBytes())
        require(stored == tree, "the stored tree reads back different")
    } catch {
        require(false, "the stored tree does not read back: \(error)")
    }
    _ = tree.navigationJSON()
}
