// LabFlows: a small catalog exercising every effect, used by the effect, error and interaction tests.

import FlowEngine
import TestSupport

enum LabFlows {
    static let app = LabFlowDocuments.app
    static let tabs = LabFlowDocuments.tabs
    static let inner = LabFlowDocuments.inner
    static let sheet = LabFlowDocuments.sheet

    /// The lab catalog. `ghost` is deliberately undefined (for the broken-definition case), so
    /// it is built without validation.
    static let catalog: FlowCatalog = {
        var definitions: [FlowDefinition] = []
        for document in [app, tabs, inner, sheet] {
            if let definition = try? FlowDefinition.parse(Array(document.utf8)) { definitions.append(definition) }
        }
        return FlowCatalog(definitions)
    }()

    static func session(context: FlowContext = FlowContext(userId: "lab")) throws -> Session {
        try Session(catalog: catalog, context: context)
    }
}
