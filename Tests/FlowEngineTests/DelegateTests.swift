// DelegateTests: Swift delegates registered for a flow — handling, refusing, passing up, deferring.

import JSON
import Testing

import FlowEngine

/// A delegate for `home` showing every kind of answer.
private struct HomeRules: FlowActionDelegate {
    func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision {
        switch request.action.type {
        case "home.reset":
            return .handle([.selectTab(.index(0))])
        case "home.presentModal" where request.context.attributes["quietHours"] == true:
            return .refuse(reason: "modals are off during quiet hours")
        case "home.selectTab" where request.action.params["index"] == "last":
            return .handle([.selectTab(.index(request.flow.entries.count - 1))])
        case "home.selectTab" where request.action.params["index"] == nil:
            throw .invalidParams(path: "/params/index", message: "home.selectTab needs an index")
        case "home.swipe":
            return .handle([.selectTab(.index(1))], allowsInteractive: true)
        case "home.up":
            return .passToParent
        default:
            return .useDefinition
        }
    }
}

/// A root delegate that handles `home.up` by presenting the modal.
private struct AppRules: FlowActionDelegate {
    func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision {
        guard request.action.type == "home.up" else { return .useDefinition }
        #expect(request.source.flow == "home")
        return .handle([.present(.init(flow: "modal", params: ["content": "up"], style: .fixed("pageSheet")))])
    }
}

struct DelegateTests {
    private func session(attributes: [String: JSONValue] = [:]) throws -> Session {
        var catalog = Fixtures.sampleCatalog
        catalog.register(HomeRules(), for: "home")
        catalog.register(AppRules(), for: "app")
        return try Session(catalog: catalog, context: FlowContext(userId: "u", attributes: attributes, user: ["onboarded": true]))
    }

    /// A delegate can handle an action no definition names.
    @Test func handlesNewAction() throws {
        var session = try session()
        try session.send("home.selectTab", params: ["index": 1])
        let outcome = try session.send("home.reset")
        #expect(outcome.handledBy == "home")
        #expect(session.screenFeatures == ["home.first"])
    }

    /// A delegate can refuse with its own reason.
    @Test func refusesWithReason() throws {
        var session = try session(attributes: ["quietHours": true])
        #expect(session.failure("home.presentModal", params: ["content": "x"])
            == .refused(flow: "home", action: "home.presentModal", reason: "modals are off during quiet hours"))
    }

    /// `useDefinition` falls back to the definition's rules.
    @Test func defersToDefinition() throws {
        var session = try session()
        try session.send("home.selectTab", params: ["index": "last"])
        #expect(session.top?.feature == "home.second")
        let outcome = try session.send("home.presentModal", params: ["content": "x"])
        #expect(outcome.handledBy == "app")
        #expect(session.top?.feature == "modal")
    }

    /// A delegate can reject params with `invalidParams`.
    @Test func rejectsParams() throws {
        var session = try session()
        #expect(session.failure("home.selectTab")?.code == "invalid-params")
    }

    /// Passing to the parent reaches the parent's delegate.
    @Test func passesToParent() throws {
        var session = try session()
        let outcome = try session.send("home.up")
        #expect(outcome.handledBy == "app")
        #expect(outcome.transition?.style == "pageSheet")
        #expect(session.top?.params == ["content": "up"])
    }

    /// A delegate can allow interactive transitions.
    @Test func allowsInteractive() throws {
        var session = try session()
        let started = try session.send("home.swipe", interactive: true)
        #expect(started.interactionEvent == .started)
        let finished = try session.send("interaction.end", params: ["progress": 0.9])
        #expect(finished.transition?.type == .selectTab)
        #expect(finished.transition?.interactive == true)
        #expect(session.screenFeatures == ["home.second"])
    }

    /// The definition delegate can be used directly, as Swift delegates may do.
    @Test func definitionDelegateDirectly() throws {
        let home = try #require(Fixtures.sampleCatalog["home"])
        let tree = try FlowEngine.start(catalog: Fixtures.sampleCatalog, context: FlowContext(userId: "u", user: ["onboarded": true]))
        let node = try #require(tree.root.entries.first.flatMap { entry -> FlowNode? in
            if case .flow(let node) = entry { return node }
            return nil
        })
        let source = try #require(tree.top)
        let delegate = DefinitionDelegate(definition: home)
        let request = FlowDelegateRequest(
            action: FlowAction(type: "home.selectTab", params: ["index": 1]), flow: node, source: source,
            context: FlowContext(userId: "u"), definition: home)
        #expect(try delegate.process(request) == .handle([.selectTab(.param("index"))]))
        var other = request
        other.action = FlowAction(type: "unknown")
        #expect(try delegate.process(other) == .passToParent)
    }
}
