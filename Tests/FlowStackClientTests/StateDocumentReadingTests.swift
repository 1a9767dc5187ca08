// The client module builds on the engine alone.
import FlowStackClient
import Foundation
import Testing

struct StateDocumentReadingTests {
    /// The client reads the bundle format the server writes.
    @Test func readsTheServersBundleFormat() {
        #expect(SessionBundle.format == 1)
    }
}

extension StateDocumentReadingTests {
    /// A state the engine computed reads into the same values as its document, and a document
    /// with a wrong part is refused with that part's path.
    @Test func navigationStatesReadTheDocument() throws {
        let (catalog, problems) = SampleApp.parsed
        #expect(problems.isEmpty)
        let context = FlowContext(userId: "u")
        let tree = try FlowEngine.start(catalog: catalog, context: context)
        var state = SessionState(sessionId: "s_1", userId: "u", version: 0, tree: tree, context: context, catalog: catalog,
                                 flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
        state = try state.applying(FlowAction(type: "onboarding.showSecond")).next
        let read = try NavigationState(state)
        #expect(read.features == ["onboarding.first", "onboarding.second"])
        #expect(read.version == 1)
        #expect(read.transition?.type == "push")
        #expect(read.root.kind == "stacked")
        guard case .flow(let onboarding) = read.root.entries.first else { Issue.record("no child flow"); return }
        #expect(onboarding.flow == "onboarding")
        #expect(throws: MalformedState(path: "/root/kind", message: "must be stacked or tabbed")) {
            var object = try #require(read.document.objectValue)
            var root = try #require(object["root"]?.objectValue)
            root = JSONObject(root.members.map { $0.key == "kind" ? .init(key: "kind", value: "stack") : $0 })
            object = JSONObject(object.members.map { $0.key == "root" ? .init(key: "root", value: .object(root)) : $0 })
            _ = try NavigationState(json: .object(object))
        }
    }
}
