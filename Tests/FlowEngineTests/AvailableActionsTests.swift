// AvailableActionsTests: listing what the current state accepts, from the definitions on the chain.

import JSON
import Testing

import FlowEngine

struct AvailableActionsTests {
    private func available(_ session: Session) -> [String] {
        FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context).map(\.type)
    }

    /// Each sample state lists the actions its definitions accept from the top screen.
    @Test func sampleStates() throws {
        var session = try Session()
        #expect(available(session) == ["onboarding.showSecond"])
        try session.send("onboarding.showSecond")
        #expect(available(session) == ["onboarding.returnToFirst", "onboarding.completed", "back"])
        try session.send("onboarding.completed")
        #expect(available(session) == ["home.selectTab", "home.presentModal", "home.checkout"], "home.upgrade waits for flag paywall, which this context lacks")
        let actions = FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context)
        #expect(actions.first == AvailableAction(type: "home.selectTab", handledBy: "home", params: [.init(name: "index", type: .integer)]))
        #expect(actions.last?.handledBy == "app")
        try session.send("home.presentModal", params: ["content": "x"])
        #expect(available(session) == ["modal.dismiss", "back"])
    }

    /// Every listed action, posted with its params, is accepted.
    @Test func listedActionsAreAccepted() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        for action in FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context) {
            var params = JSONObject()
            for param in action.params { params[param.name] = param.type == .integer ? 0 : "x" }
            var copy = session
            #expect(throws: Never.self) { try copy.send(action.type, params: params) }
        }
    }

    /// While an interaction is pending only the interaction actions are offered.
    @Test func pendingInteraction() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        try session.send("onboarding.returnToFirst", interactive: true)
        #expect(available(session) == ["interaction.update", "interaction.end", "interaction.cancel"])
    }
}
