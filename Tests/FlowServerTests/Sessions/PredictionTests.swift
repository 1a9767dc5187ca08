// The edge protocol's promise: a predicted or dry-run state is exactly what posting the action
// answers, and the engine run on a session's bundle alone answers what the server does.
import FlowEngine
import HTTPTestClient
import JSON
import Testing
import TestSupport

struct PredictionTests {
    /// The action a walk posts next, with how it knows the answer in advance.
    enum Step {
        /// From the state's `predictions`: the action as listed, and the state it foretells.
        case predicted(action: JSONValue, state: JSONValue)
        /// An action with params, asked first with `?dryRun=true`.
        case dryRun(body: String)
    }

    static func withoutPredictions(_ state: JSONValue) -> JSONValue {
        guard let object = state.objectValue else { return state }
        return .object(JSONObject(object.members.filter { $0.key != "predictions" }))
    }

    /// Actions with params a walk may take from `state`, some of which the engine refuses: the
    /// generic ones anywhere, and on the screens of the sample app's address picker and purchase
    /// hand-off their outcomes, which return results.
    static func paramActions(_ state: JSONValue, _ random: inout SeededGenerator) -> [String] {
        let top = state["top"]["id"].stringValue ?? ""
        if !state["interaction"].isNull {
            return [
                #"{"type":"interaction.update","params":{"progress":\#(Double(Int.random(in: 0...10, using: &random)) / 10)}}"#,
                #"{"type":"interaction.end","params":{"progress":\#(Double(Int.random(in: 0...10, using: &random)) / 10),"velocity":\#(Int.random(in: 0...600, using: &random))}}"#,
            ]
        }
        switch state["top"]["feature"].stringValue {
        case "address.list":
            // Row taps are never predicted: a dry run with a row (a removed one is stale) must be the post's answer.
            return [#"{"type":"address.chosen","params":{"address":{"city":"c\#(Int.random(in: 0...9, using: &random))"}}}"#,
                    #"{"type":"address.chosen","row":"\#(["home", "office", "parents"].randomElement(using: &random) ?? "home")"}"#,
                    #"{"type":"address.removed","row":"\#(["home", "office", "parents"].randomElement(using: &random) ?? "home")"}"#]
        case "address.form":
            return [#"{"type":"address.saved","params":{"address":{"city":"s\#(Int.random(in: 0...9, using: &random))"}}}"#]
        case "paywall.offer":
            return [#"{"type":"paywall.buy","params":{"productId":"pro"}}"#]
        case "purchase":
            return [#"{"type":"purchase.completed","params":{"transactionId":"t\#(Int.random(in: 0...9, using: &random))"}}"#,
                    #"{"type":"purchase.failed","params":{"reason":"declined"}}"#]
        default:
            return [
                #"{"type":"home.selectTab","from":"\#(top)","params":{"index":\#(Int.random(in: 0...2, using: &random))}}"#,
                #"{"type":"home.presentModal","params":{"content":"c\#(Int.random(in: 0...9, using: &random))"}}"#,
                #"{"type":"link","params":{"uri":"\#(["/home", "/home/1", "/modal/Hi", "/nowhere", "/home/x"].randomElement(using: &random) ?? "/home")"}}"#,
                // Refused here: the outcomes of steps that are not on screen.
                #"{"type":"purchase.failed","params":{"reason":"declined"}}"#,
            ]
        }
    }

    /// Walks `steps` random steps of the sample app on a new session for `userId`, checking at
    /// every step that posting with `If-Match` answers exactly what was predicted or dry-run.
    /// Counts the steps that went through predictions and through dry runs, the links followed
    /// and the interactions opened.
    struct Counts {
        var predicted = 0, dryRun = 0, links = 0, interactions = 0
        /// Answers where a screen received a result, a hand-off was on top, an action waited for
        /// a guard, and a waiting action resumed.
        var results = 0, handoffs = 0, guarded = 0, resumed = 0

        mutating func note(_ before: JSONValue, _ after: JSONValue) {
            if !after["transition"]["result"].isNull { results += 1 }
            if after["top"]["handoff"].stringValue != nil { handoffs += 1 }
            let waiting = (before["pendingActions"].arrayValue ?? []).count
            let waitingAfter = (after["pendingActions"].arrayValue ?? []).count
            if waitingAfter > waiting { guarded += 1 }
            if waitingAfter < waiting && after["version"] != before["version"] && after["handledBy"] == "login" { resumed += 1 }
        }

        mutating func add(_ other: Counts) {
            predicted += other.predicted
            dryRun += other.dryRun
            links += other.links
            interactions += other.interactions
            results += other.results
            handoffs += other.handoffs
            guarded += other.guarded
            resumed += other.resumed
        }
    }

    static func walk(_ client: SessionClient, userId: String, attributes: String, steps: Int, seed: UInt64) throws -> Counts {
        var random = SeededGenerator(seed: seed)
        let created = try client.sender.send("POST", "/v1/sessions?predict=true",
                                             body: #"{"userId":"\#(userId)","attributes":\#(attributes)}"#)
        try #require(created.status == 201, "\(created.text)")
        let session = CreatedSession(id: created.json["session"]["id"].stringValue ?? "", token: created.json["session"]["token"].stringValue ?? "",
                                     state: created.json["state"])
        var state = session.state
        var counts = Counts()
        for _ in 0..<steps {
            let version = state["version"].integerValue ?? -1
            let predictions = state["predictions"].arrayValue ?? []
            var step: Step
            if !predictions.isEmpty && Int.random(in: 0..<10, using: &random) < 7 {
                let chosen = predictions.randomElement(using: &random) ?? .null
                step = .predicted(action: chosen["action"], state: chosen["state"])
            } else {
                step = .dryRun(body: paramActions(state, &random).randomElement(using: &random) ?? "")
            }
            let ifMatch = [("If-Match", "\"\(version)\"")]
            switch step {
            case .predicted(let action, let predicted):
                let answer = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions?predict=true", body: action.jsonText,
                                                    headers: session.auth + ifMatch)
                try #require(answer.status == 200, "\(action.jsonText) at version \(version) answered \(answer.status): \(answer.text)")
                #expect(withoutPredictions(answer.json) == predicted, "\(action.jsonText) at version \(version)")
                #expect(predicted["version"].integerValue == version + 1)
                counts.note(state, answer.json)
                state = answer.json
                counts.predicted += 1
            case .dryRun(let body):
                let dry = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions?dryRun=true", body: body,
                                                 headers: session.auth + ifMatch)
                let real = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions?predict=true", body: body,
                                                  headers: session.auth + ifMatch)
                #expect(dry.status == real.status, "\(body) at version \(version): dry run \(dry.status), post \(real.status): \(real.text)")
                if real.status == 200 {
                    #expect(dry.json == withoutPredictions(real.json), "\(body) at version \(version)")
                    if body.contains(#""type":"link""#) { counts.links += 1 }
                    counts.note(state, real.json)
                    state = real.json
                } else {
                    #expect(dry.json == real.json, "\(body) refused alike")
                    let reread = try client.sender.send("GET", "/v1/sessions/\(session.id)?predict=true", headers: session.auth)
                    #expect(reread.json == state, "a refused action leaves the state and its predictions as they were")
                }
                counts.dryRun += 1
            }
            if !state["interaction"].isNull { counts.interactions += 1 }
        }
        return counts
    }

    /// Over random walks of the sample app (new and returning users, the EU face scan, links,
    /// interactive transitions), every predicted and dry-run state is what the post answers.
    @Test(arguments: [SessionAPITests.Transport.direct, .socket])
    func predictionsAreWhatPostsAnswer(transport: SessionAPITests.Transport) throws {
        let test = try TestApp()
        let steps = transport == .direct ? 60 : 20
        try SessionAPITests.withClient(test, transport) { client in
            var total = Counts()
            for walk in 0..<(transport == .direct ? 12 : 4) {
                // Users repeat, so later walks start at home once an earlier one finished onboarding.
                let counts = try Self.walk(client, userId: "walker-\(walk % 4)", attributes: walk % 3 == 0 ? #"{"country":"DE"}"# : "{}",
                                           steps: steps, seed: UInt64(walk) &* 7919 &+ 11)
                total.add(counts)
            }
            // The walks cover both kinds of step, followed links and interactive transitions.
            #expect(total.predicted >= steps && total.dryRun >= steps && total.links > 0 && total.interactions > 0, "\(total)")
            if transport == .direct {
                // ... and the sample app's results, purchase hand-off and login guard, resumed.
                #expect(total.results > 0 && total.handoffs > 0 && total.guarded > 0 && total.resumed > 0, "\(total)")
            }
        }
    }

    /// When another device acts first, the predicted action's If-Match fails with 412 and the
    /// client adopts the server's state, which the other device's answer showed.
    @Test func anotherDeviceActingFailsThePrediction() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "two-devices")
        let first = try client.sender.send("GET", "/v1/sessions/\(session.id)?predict=true", headers: session.auth).json
        let prediction = first["predictions"][0]
        #expect(prediction["action"]["type"] == "onboarding.showSecond")
        // The other device takes the same step first.
        let other = try client.act(session, prediction["action"].jsonText)
        #expect(other.status == 200)
        let late = try client.act(session, prediction["action"].jsonText, headers: [("If-Match", "\"0\"")])
        #expect(late.status == 412)
        #expect(late.json["currentVersion"] == 1)
        #expect(late.headers["ETag"] == "\"1\"")
        let reconciled = try client.state(session)
        #expect(reconciled.json == other.json)
        // The predictions of the new version are made afresh.
        let again = try client.sender.send("GET", "/v1/sessions/\(session.id)?predict=true", headers: session.auth).json
        #expect(again["version"] == 1)
        #expect((again["predictions"].arrayValue ?? []).map { $0["action"]["type"].stringValue ?? "" }
                    == ["onboarding.returnToFirst", "onboarding.returnToFirst", "onboarding.completed", "back", "back"])
        #expect(again["predictions"][1]["action"]["interactive"] == true)
        #expect(again["predictions"][1]["state"]["interaction"]["action"] == "onboarding.returnToFirst")
    }

    /// `actions/available` carries each action's next state, and `nextInteractive` for actions
    /// that may run interactively; they agree with the state's predictions.
    @Test func availableActionsCarryTheirNextStates() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "lister")
        let top = session.state["top"]["id"].stringValue ?? ""
        try client.apply(session, #"{"type":"onboarding.showSecond","from":"\#(top)"}"#)
        let available = try client.sender.send("GET", "/v1/sessions/\(session.id)/actions/available", headers: session.auth).json
        let read = try client.sender.send("GET", "/v1/sessions/\(session.id)?predict=true", headers: session.auth).json
        let predicted: [JSONValue] = read["predictions"].arrayValue ?? []
        func prediction(_ type: String, interactive: Bool) -> JSONValue {
            let found = predicted.first { (entry: JSONValue) -> Bool in
                entry["action"]["type"].stringValue == type && (entry["action"]["interactive"] == .bool(true)) == interactive
            }
            return found?["state"] ?? .null
        }
        for action in available["actions"].arrayValue ?? [] {
            let type = action["type"].stringValue ?? ""
            #expect(action["next"] == prediction(type, interactive: false), "\(type)")
            #expect(action["next"]["version"] == 2)
            if action["interactive"] == true {
                #expect(action["nextInteractive"] == prediction(type, interactive: true), "\(type)")
                #expect(action["nextInteractive"]["interaction"]["action"] == .string(type))
            } else {
                #expect(action.objectValue?["nextInteractive"] == nil)
            }
        }
    }

    /// A plain answer carries no predictions; `predict` and `dryRun` take only true or false; a
    /// dry run commits nothing, keeps no Idempotency-Key, checks If-Match and answers refusals
    /// as a post would.
    @Test func dryRunsCommitNothing() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "dry")
        #expect(session.state.objectValue?["predictions"] == nil)
        let top = session.state["top"]["id"].stringValue ?? ""
        let body = #"{"type":"onboarding.showSecond","from":"\#(top)"}"#
        let dry = try client.act(session, body, headers: [("Idempotency-Key", "k1")])
        #expect(dry.status == 200)  // not a dry run: no query
        let path = "/v1/sessions/\(session.id)/actions"
        let second = try client.sender.send("POST", path + "?dryRun=true", body: #"{"type":"back"}"#,
                                            headers: session.auth + [("Idempotency-Key", "k2")])
        #expect(second.status == 200)
        #expect(second.json["version"] == 2)
        #expect(second.json.features == ["onboarding.first"])
        #expect(second.headers["ETag"] == nil)
        #expect(try client.state(session).json["version"] == 1, "nothing was committed")
        let actions = try client.sender.send("GET", path, headers: session.auth).json["actions"].arrayValue ?? []
        #expect(actions.count == 1)
        // The key of the dry run was not kept: it applies now, for real.
        let real = try client.sender.send("POST", path, body: #"{"type":"back"}"#, headers: session.auth + [("Idempotency-Key", "k2")])
        #expect(real.status == 200)
        #expect(real.headers["Idempotent-Replayed"] == nil)
        #expect(real.json == second.json)

        let stale = try client.sender.send("POST", path + "?dryRun=true", body: #"{"type":"back"}"#,
                                           headers: session.auth + [("If-Match", "\"1\"")])
        #expect(stale.status == 412)
        let refused = try client.sender.send("POST", path + "?dryRun=true", body: #"{"type":"nobody.handles"}"#, headers: session.auth)
        #expect(refused.status == 422)
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        for query in ["dryRun=yes", "dryRun=", "predict=1"] {
            let bad = try client.sender.send("POST", path + "?" + query, body: #"{"type":"back"}"#, headers: session.auth)
            #expect(bad.status == 400, "\(query)")
        }
        let unauthenticated = try client.sender.send("POST", path + "?dryRun=true", body: #"{"type":"back"}"#)
        #expect(unauthenticated.status == 401)
        #expect(try client.state(session).json["version"] == 2)
    }

    /// The engine run on the bundle alone answers byte for byte what the server answers, over
    /// a long random walk with params, links, interactive transitions and refusals.
    @Test func bundleReproducesTheServer() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        var random = SeededGenerator(seed: 20261125)
        var checked = 0
        for round in 0..<4 {
            let session = try client.create(userId: "offline-\(round % 2)", attributes: round == 2 ? #"{"country":"FR"}"# : "{}")
            let fetched = try client.sender.send("GET", "/v1/sessions/\(session.id)/bundle", headers: session.auth)
            try #require(fetched.status == 200, "\(fetched.text)")
            let bundle = try SessionBundle(json: try JSONParser.parse(fetched.body))
            var local = bundle.state
            #expect(local.document() == (try client.state(session)).body, "the bundle's state is the server's")
            for _ in 0..<150 {
                var candidates = local.predictions().map { prediction -> String in
                    var writer = JSONWriter()
                    writer.writeValue(Self.actionJSON(prediction.action))
                    return String(decoding: writer.takeBytes(), as: UTF8.self)
                }
                candidates += Self.paramActions(.object(JSONObject([.init(key: "top", value: .object(["id": .string(local.tree.top?.entryId ?? ""), "feature": .string(local.tree.top?.feature ?? "")])),
                                                                     .init(key: "interaction", value: local.tree.interaction == nil ? .null : .bool(true))])),
                                                &random)
                let body = candidates.randomElement(using: &random) ?? #"{"type":"back"}"#
                let action = try FlowAction(json: try JSONParser.parse(body))
                let answer = try client.act(session, body, headers: [("If-Match", "\"\(local.version)\"")])
                let next: SessionState?
                do throws(FlowError) {
                    next = try local.applying(action).next
                } catch {
                    next = nil
                    #expect(answer.status != 200, "\(body): the engine refused (\(error)) but the server applied it")
                }
                if let next {
                    try #require(answer.status == 200, "\(body) at version \(local.version): \(answer.text)")
                    #expect(answer.text == String(decoding: next.document(), as: UTF8.self), "\(body) at version \(local.version)")
                    local = next
                }
                checked += 1
            }
            // The bundle fetched now agrees with the state carried forward locally.
            let later = try SessionBundle(json: try JSONParser.parse(try client.sender.send("GET", "/v1/sessions/\(session.id)/bundle", headers: session.auth).body))
            #expect(later.state.document() == local.document())
            #expect(later.state.tree == local.tree)
            #expect(later.state.context.user == local.context.user)
        }
        #expect(checked == 600)
    }

    static func actionJSON(_ action: FlowAction) -> JSONValue {
        var members: [JSONObject.Member] = [.init(key: "type", value: .string(action.type))]
        if let from = action.from { members.append(.init(key: "from", value: .string(from))) }
        if action.interactive { members.append(.init(key: "interactive", value: .bool(true))) }
        return .object(JSONObject(members))
    }

    /// The bundle is tagged by version and content: 304 while neither changed, a new tag after
    /// an action or a change of the user's state; it needs the session's token.
    @Test func bundleRevalidates() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "tagged")
        let path = "/v1/sessions/\(session.id)/bundle"
        let first = try client.sender.send("GET", path, headers: session.auth)
        let tag = first.headers["ETag"] ?? ""
        #expect(tag.hasPrefix("\"0-"))
        #expect(first.headers["Cache-Control"] == "private, no-cache")
        let same = try client.sender.send("GET", path, headers: session.auth + [("If-None-Match", tag)])
        #expect(same.status == 304)
        #expect(same.body.isEmpty)
        let top = session.state["top"]["id"].stringValue ?? ""
        try client.apply(session, #"{"type":"onboarding.showSecond","from":"\#(top)"}"#)
        let moved = try client.sender.send("GET", path, headers: session.auth + [("If-None-Match", tag)])
        #expect(moved.status == 200)
        #expect(moved.headers["ETag"]?.hasPrefix("\"1-") == true)
        #expect(try client.sender.send("GET", path).status == 401)
        #expect(try client.sender.send("GET", path, headers: [("Authorization", "Bearer nope")]).status == 401)
        #expect(try client.sender.send("GET", "/v1/sessions/s_unknown/bundle", headers: session.auth).status == 404)
    }
}
