// ActionFuzzer: request bodies → JSON → FlowAction → FlowEngine.apply on the sample app; nothing may crash.

import JSON
import FlowEngine

/// The sample app, parsed and validated as the server does at start-up.
let sampleCatalog: FlowCatalog = {
    let (catalog, problems) = FlowCatalog.parse(sampleDocuments)
    if !problems.isEmpty { fail("the sample flows have problems: \(problems)") }
    return catalog
}()

/// Sessions the bodies are posted to: a new user (at onboarding) with the face-scan flag off
/// and on, and a user who finished onboarding (at home).
let startContexts = [
    FlowContext(userId: "fuzz-1", attributes: ["country": "US"], flags: ["eu-face-scan": false]),
    FlowContext(userId: "fuzz-2", attributes: ["country": "DE"], flags: ["eu-face-scan": true]),
    FlowContext(userId: "fuzz-3", flags: ["eu-face-scan": false], user: ["onboarded": true]),
]

let startTrees: [FlowTree] = startContexts.map { context in
    do throws(FlowError) {
        return try FlowEngine.start(catalog: sampleCatalog, context: context)
    } catch {
        fail("the sample app does not start for \(context.userId): \(error)")
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    _ = startTrees
    return 0
}

/// The input is one request body, or several separated by NUL bytes posted in order to each
/// session (so the fuzzer can reach deep states: modals, interactions, home).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bodies = requestBodies(data, size, maxCount: 16)
    var actions: [FlowAction] = []
    for body in bodies {
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONParser.parse(body, limits: bodyLimits)
        } catch {
            _ = error.description
            continue
        }
        requireWriterRoundTrip(json)
        do throws(FlowError) {
            actions.append(try FlowAction(json: json))
        } catch {
            _ = (error.code, error.message)
        }
    }
    guard !actions.isEmpty else { return 0 }
    for (start, startContext) in zip(startTrees, startContexts) {
        var tree = start
        var context = startContext
        for action in actions {
            do throws(FlowError) {
                let outcome = try FlowEngine.apply(action, to: tree, catalog: sampleCatalog, context: context)
                checkTree(outcome.tree, after: action, outcome: outcome, context: context)
                tree = outcome.tree
                for change in outcome.userChanges { context.user[change.key] = change.value }
            } catch {
                _ = (error.code, error.message)
            }
        }
    }
    return 0
}

/// What every tree the engine returns keeps: its invariants, a storage encoding that reads back
/// to the same tree, and a state document that is valid JSON.
func checkTree(_ tree: FlowTree, after action: FlowAction, outcome: ActionOutcome, context: FlowContext) {
    let problems = tree.structuralProblems()
    require(problems.isEmpty, "\(action) left a malformed tree: \(problems)")
    do throws(FlowStorageError) {
        let stored = try FlowTree(storage: tree.storageBytes())
        require(stored == tree, "\(action): the stored tree reads back different")
    } catch {
        require(false, "\(action): the stored tree does not read back: \(error)")
    }
    let document = tree.navigationJSON(transition: outcome.transition, handledBy: outcome.handledBy)
    do throws(JSONParseError) {
        _ = try JSONParser.parse(document, limits: JSONParser.Limits(maxDepth: JSONParser.Limits.depthCeiling))
    } catch {
        require(false, "\(action): the state document is not JSON: \(error)")
    }
    _ = FlowEngine.availableActions(in: tree, catalog: sampleCatalog, context: context)
}
