// What the playground reads: available actions, the session and flow graphs, and the page itself.
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct PlaygroundAPITests {
    static let admin = FlowAdminTests.admin

    static func available(_ client: SessionClient, _ session: CreatedSession) throws -> JSONValue {
        let response = try client.sender.send("GET", "/v1/sessions/\(session.id)/actions/available", headers: session.auth)
        try #require(response.status == 200, "available answered \(response.status): \(response.text)")
        return response.json
    }

    static func types(_ available: JSONValue) -> [String] {
        (available["actions"].arrayValue ?? []).compactMap { $0["type"].stringValue }
    }

    /// At each step of the sample walk the list is what the definitions accept from the top
    /// screen, and posting each listed action (with its declared params) is accepted.
    @Test(arguments: SessionAPITests.Transport.allCases)
    func availableActionsFollowTheWalk(transport: SessionAPITests.Transport) throws {
        let test = try TestApp()
        try SessionAPITests.withClient(test, transport) { client in
            let session = try client.create(userId: "lister", attributes: #"{"country":"DE"}"#)
            var available = try Self.available(client, session)
            #expect(Self.types(available) == ["onboarding.showSecond"])
            #expect(available["version"] == 0)
            #expect(available["from"]["feature"] == "onboarding.first")
            #expect(available["actions"][0] == [
                "type": "onboarding.showSecond", "handledBy": "onboarding", "from": available["from"]["id"],
                "params": [], "interactive": false, "next": available["actions"][0]["next"],
            ])
            #expect(available["actions"][0]["next"]["top"]["feature"] == "onboarding.second")
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            available = try Self.available(client, session)
            #expect(Self.types(available) == ["onboarding.returnToFirst", "onboarding.completed", "back"])
            #expect(available["actions"][0]["interactive"] == true)

            // While an interaction is pending only the interaction actions are listed, with their params.
            try client.apply(session, #"{"type":"onboarding.returnToFirst","interactive":true}"#)
            available = try Self.available(client, session)
            #expect(Self.types(available) == ["interaction.update", "interaction.end", "interaction.cancel"])
            #expect(available["actions"][0]["params"] == [["name": "progress", "type": "number", "required": true]])
            #expect(available["actions"][1]["params"][1] == ["name": "velocity", "type": "number", "required": false])
            #expect(available["actions"][0]["from"] == .null)
            try client.apply(session, #"{"type":"interaction.cancel"}"#)

            // eu-face-scan is on for DE: completing pushes the face scan, handled by onboarding.
            try client.apply(session, #"{"type":"onboarding.completed"}"#)
            available = try Self.available(client, session)
            #expect(Self.types(available) == ["onboarding.faceScanVerified", "back"])
            #expect(available["actions"][0]["handledBy"] == "app")
            try client.apply(session, #"{"type":"onboarding.faceScanVerified"}"#)

            available = try Self.available(client, session)
            #expect(Self.types(available) == ["home.selectTab", "home.presentModal", "home.checkout", "home.upgrade"])
            #expect(available["actions"][0]["params"] == [["name": "index", "type": "integer", "required": true]])
            #expect(available["actions"][1]["params"] == [["name": "content", "type": "any", "required": true]])
            #expect(available["actions"][1]["handledBy"] == "app")
            try client.apply(session, #"{"type":"home.presentModal","params":{"content":"x"}}"#)
            available = try Self.available(client, session)
            #expect(Self.types(available) == ["modal.dismiss", "back"])
            #expect(available["version"] == 6)
        }
    }

    /// Without the session's token, or for an unknown session, the list is refused like the state.
    @Test func availableActionsNeedTheToken() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "guarded")
        let path = "/v1/sessions/\(session.id)/actions/available"
        #expect(try test.direct.send("GET", path).status == 401)
        #expect(try test.direct.send("GET", path, headers: [("Authorization", "Bearer nope")]).status == 401)
        #expect(try test.direct.send("GET", "/v1/sessions/s_unknown/actions/available", headers: session.auth).status == 404)
        let wrong = try test.direct.send("POST", path, headers: session.auth)
        #expect(wrong.status == 405)
    }

    /// The session graph marks the screen on top and moves with the session; each format is
    /// served with its content type, and only to the session's token.
    @Test func sessionGraphFollowsTheSession() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "drawn")
        func svg() throws -> String {
            let response = try test.direct.send("GET", "/v1/sessions/\(session.id)/graph", headers: session.auth)
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "image/svg+xml")
            return response.text.replacingOccurrences(of: "&#45;", with: "-")
        }
        #expect(try svg().contains(#"<g id="screen-onboarding-onboarding.first" class="node current">"#))
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        let second = try svg()
        #expect(second.contains(#"<g id="screen-onboarding-onboarding.second" class="node current">"#))
        #expect(second.contains(#"<g id="screen-onboarding-onboarding.first" class="node onstack">"#))
        try client.apply(session, #"{"type":"onboarding.completed"}"#)
        #expect(try svg().contains(#"<g id="screen-home-home.first" class="node current">"#))

        let dot = try test.direct.send("GET", "/v1/sessions/\(session.id)/graph?format=dot", headers: session.auth)
        #expect(dot.headers["Content-Type"] == "text/vnd.graphviz; charset=utf-8")
        #expect(dot.text.contains(#""screen-home-home.first" [id="screen-home-home.first", label="home.first", class="current""#))
        #expect(dot.text.contains("app · stacked · v1"))
        let mermaid = try test.direct.send("GET", "/v1/sessions/\(session.id)/graph?format=mermaid", headers: session.auth)
        #expect(mermaid.headers["Content-Type"] == "text/vnd.mermaid; charset=utf-8")
        #expect(mermaid.text.hasPrefix("flowchart TB\n"))
        #expect(mermaid.text.contains(" current\n"))

        let bad = try test.direct.send("GET", "/v1/sessions/\(session.id)/graph?format=png", headers: session.auth)
        #expect(bad.status == 400)
        #expect(bad.headers["Content-Type"] == "application/problem+json")
        #expect(try test.direct.send("GET", "/v1/sessions/\(session.id)/graph").status == 401)
        #expect(try test.direct.send("GET", "/v1/sessions/s_unknown/graph", headers: session.auth).status == 404)
    }

    /// A session keeps drawing the flow versions it runs after a new version goes live, and the
    /// admin flow graph draws the live version, or the one asked for.
    @Test func graphsDrawTheVersionsInUse() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let before = try client.create(userId: "early")
        let put = try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding, headers: Self.admin)
        #expect(put.status == 201)
        let after = try client.create(userId: "late")

        func sessionDot(_ session: CreatedSession) throws -> String {
            try test.direct.send("GET", "/v1/sessions/\(session.id)/graph?format=dot", headers: session.auth).text
        }
        #expect(try sessionDot(before).contains("onboarding.second"))
        #expect(try sessionDot(before).contains("onboarding · stacked · v1"))
        #expect(try sessionDot(before).contains(#""screen-onboarding-onboarding.second""#))
        // v2 has no second screen, and app names no screen of onboarding: none is drawn anywhere.
        #expect(try !sessionDot(after).contains(#""screen-onboarding-onboarding.second""#))
        #expect(try !sessionDot(after).contains("onboarding.second"))
        #expect(try sessionDot(after).contains(#""screen-onboarding-onboarding.first" -> "screen-home-home.first""#))
        #expect(try sessionDot(after).contains("onboarding · stacked · v2"))

        let live = try test.direct.send("GET", "/v1/flows/onboarding/graph?format=mermaid", headers: Self.admin)
        #expect(live.status == 200)
        #expect(!live.text.contains("onboarding.second"))
        let old = try test.direct.send("GET", "/v1/flows/onboarding/graph?format=dot&version=1", headers: Self.admin)
        #expect(old.text.contains("onboarding.second"))
        #expect(old.text.contains("onboarding · stacked · v1"))
        let svg = try test.direct.send("GET", "/v1/flows/app/graph", headers: Self.admin)
        #expect(svg.status == 200)
        #expect(svg.text.contains("<svg"))

        #expect(try test.direct.send("GET", "/v1/flows/onboarding/graph?version=9", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding/graph?version=zero", headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/flows/nothing/graph", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/flows/app/graph").status == 401)
        #expect(try test.direct.send("GET", "/v1/flows/app/graph", headers: before.auth).status == 401)
    }

    /// A live flow too large to lay out is answered 422 as SVG and drawn as DOT.
    @Test func hugeFlowIsRefusedAsSVG() throws {
        let test = try TestApp()
        let screens = (0..<600).map { "\"s\($0)\"" }.joined(separator: ",")
        let modal = #"{"name":"modal","kind":"stacked","initial":[\#(screens)],"on":{"modal.dismiss":[{"do":[{"dismiss":{}}]}]}}"#
        let put = try test.direct.send("PUT", "/v1/flows/modal?activate=true", body: modal, headers: Self.admin)
        try #require(put.status == 201, "\(put.text)")
        let svg = try test.direct.send("GET", "/v1/flows/modal/graph", headers: Self.admin)
        #expect(svg.status == 422)
        #expect(svg.json["detail"].stringValue?.contains("format=dot") == true)
        let dot = try test.direct.send("GET", "/v1/flows/modal/graph?format=dot", headers: Self.admin)
        #expect(dot.status == 200)
        #expect(dot.text.contains("\"screen-modal-s599\""))
    }

    /// The page and its files are served from the binary, with their types; others are 404.
    @Test func playgroundIsServed() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let page = try sender.send("GET", "/")
            #expect(page.status == 200)
            #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(page.text.contains("<html"))
            for (name, type) in Application.playgroundFileNames {
                let file = try sender.send("GET", "/playground/\(name)")
                #expect(file.status == 200, "\(name)")
                #expect(file.headers["Content-Type"] == type, "\(name)")
            }
            #expect(try sender.send("GET", "/playground/nothing.js").status == 404)
            #expect(try sender.send("GET", "/playground/..%2Fopenapi.yaml").status == 404)
            #expect(try sender.send("POST", "/").status == 405)
        }
    }
}
