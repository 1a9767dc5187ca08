// StateDocumentTests: the navigation part of the state document, written with JSONWriter.

import JSON
import Testing

import FlowEngine

struct StateDocumentTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A fresh session's navigation keys, exactly.
    @Test func initialState() throws {
        let session = try Session()
        let expected = #"{"root":{"id":"f1","flow":"app","kind":"stacked","entries":[{"id":"f2","flow":"onboarding","kind":"stacked","entries":[{"id":"e3","feature":"onboarding.first","params":{}}],"presented":null}],"presented":null},"screens":[{"id":"e3","feature":"onboarding.first","params":{},"flow":"onboarding","flowId":"f2"}],"top":{"id":"e3","feature":"onboarding.first","params":{},"flow":"onboarding","flowId":"f2"},"transition":null,"interaction":null,"pendingLink":null,"pendingActions":[],"handledBy":null}"#
        #expect(text(session.tree.navigationJSON()) == expected)
    }

    /// After presenting the modal: the tabbed node's `selected`, the presented node's `style`,
    /// the modal on top of its presenter in `screens`, and the transition.
    @Test func presentedModal() throws {
        var session = try Session(context: FlowContext(userId: "u", user: ["onboarded": true]))
        let outcome = try session.send("home.presentModal", params: ["content": "Hi \"you\""])
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("sessionId")
        writer.writeString("s-1")
        outcome.writeNavigation(into: &writer)
        writer.endObject()
        let expected = #"{"sessionId":"s-1","root":{"id":"f1","flow":"app","kind":"stacked","entries":[{"id":"f2","flow":"home","kind":"tabbed","selected":0,"entries":[{"id":"e3","feature":"home.first","params":{}},{"id":"e4","feature":"home.second","params":{}}],"presented":null}],"presented":{"id":"f5","flow":"modal","kind":"stacked","style":"fullScreen","entries":[{"id":"e6","feature":"modal","params":{"content":"Hi \"you\""}}],"presented":null}},"screens":[{"id":"e3","feature":"home.first","params":{},"flow":"home","flowId":"f2"},{"id":"e6","feature":"modal","params":{"content":"Hi \"you\""},"flow":"modal","flowId":"f5"}],"top":{"id":"e6","feature":"modal","params":{"content":"Hi \"you\""},"flow":"modal","flowId":"f5"},"transition":{"type":"present","from":{"id":"e3","feature":"home.first","params":{},"flow":"home","flowId":"f2"},"to":{"id":"e6","feature":"modal","params":{"content":"Hi \"you\""},"flow":"modal","flowId":"f5"},"animated":true,"style":"fullScreen","interactive":false},"interaction":null,"pendingLink":null,"pendingActions":[],"handledBy":"app"}"#
        #expect(text(writer.bytes) == expected)
        #expect((try? JSONParser.parse(writer.bytes)) != nil)
    }

    /// A pending interaction is shown with its progress and the transition it would apply.
    @Test func pendingInteraction() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        try session.send("onboarding.returnToFirst", interactive: true)
        try session.send("interaction.update", params: ["progress": 0.25])
        var writer = JSONWriter()
        session.tree.writeInteraction(into: &writer)
        let expected = #"{"action":"onboarding.returnToFirst","from":null,"progress":0.25,"handledBy":"onboarding","transition":{"type":"popTo","from":{"id":"e4","feature":"onboarding.second","params":{},"flow":"onboarding","flowId":"f2"},"to":{"id":"e3","feature":"onboarding.first","params":{},"flow":"onboarding","flowId":"f2"},"animated":true,"style":null,"interactive":true}}"#
        #expect(text(writer.bytes) == expected)
    }

    /// `screens` lists a stack's entries bottom to top and `top` is its last element.
    @Test func screensAndTopAgree() throws {
        var session = try Session()
        try session.send("onboarding.showSecond")
        let parsed = try JSONParser.parse(session.tree.navigationJSON())
        let screens = try #require(parsed["screens"]?.arrayValue)
        #expect(screens.compactMap { $0["feature"]?.stringValue } == ["onboarding.first", "onboarding.second"])
        #expect(screens.last == parsed["top"])
    }
}
