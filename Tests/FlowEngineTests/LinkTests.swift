// LinkTests: following deep links — the rebuilt back stack, deferral through onboarding, cancel, errors, ids, storage.

import JSON
import Testing

import FlowEngine

/// Every id in a tree, flows and screens.
private func ids(of tree: FlowTree) -> Set<Int> {
    var result: Set<Int> = []
    func visit(_ node: FlowNode) {
        result.insert(node.id)
        for entry in node.entries {
            switch entry {
            case .screen(let screen): result.insert(screen.id)
            case .flow(let child): visit(child)
            }
        }
        if let presented = node.presented { visit(presented) }
    }
    visit(tree.root)
    return result
}

private let onboarded = FlowContext(userId: "u-home", user: ["onboarded": true])
private let newcomer = FlowContext(userId: "u-new")
private let european = FlowContext(userId: "u-eu", attributes: ["country": "FR"], flags: ["eu-face-scan": true])

extension Session {
    /// Posts `link {uri}`.
    @discardableResult
    mutating func link(_ uri: String, from: String? = nil) throws(FlowError) -> ActionOutcome {
        try send(FlowAction.link, from: from, params: ["uri": .string(uri)])
    }
}

struct LinkTests {
    // MARK: new sessions

    /// A new session opened with a link gets the whole back stack: home below the modal.
    @Test func newSessionGetsTheBackStack() throws {
        let outcome = try FlowEngine.followLink("myapp://x/modal/Hi", from: nil, catalog: Fixtures.sampleCatalog, context: onboarded)
        #expect(!outcome.deferred)
        #expect(outcome.tree.screens.map(\.feature) == ["home.first", "modal"])
        #expect(outcome.tree.top?.params == ["content": "Hi"])
        #expect(outcome.tree.top?.flow == "modal")
        #expect(outcome.tree.pendingLink == nil)
        #expect(outcome.transition == nil)
        #expect(outcome.handledBy == "app")
        #expect(outcome.match.pattern == "/modal/{content}")
        #expect(outcome.match.params == ["content": "Hi"])
        #expect(outcome.tree.root.id == 1)
        #expect(outcome.tree.structuralProblems().isEmpty)
        // The same stack as a cold start followed by the action.
        var session = try Session(context: onboarded)
        try session.send("home.presentModal", params: ["content": "Hi"])
        #expect(outcome.tree == session.tree)
    }

    /// `/home/{tab}` selects the tab; `/home` is the cold-start stack, whatever the user's state.
    @Test func homeLinks() throws {
        let tab = try FlowEngine.followLink("/home/1", from: nil, catalog: Fixtures.sampleCatalog, context: onboarded)
        #expect(tab.tree.screens.map(\.feature) == ["home.second"])
        #expect(tab.handledBy == "home")
        let home = try FlowEngine.followLink("/home", from: nil, catalog: Fixtures.sampleCatalog, context: onboarded)
        #expect(home.tree == (try FlowEngine.start(catalog: Fixtures.sampleCatalog, context: onboarded)))
        let onboarding = try FlowEngine.followLink("/home", from: nil, catalog: Fixtures.sampleCatalog, context: newcomer)
        #expect(!onboarding.deferred)
        #expect(onboarding.tree.screens.map(\.feature) == ["onboarding.first"])
    }

    /// A new session whose link does not hold yet starts as usual and keeps the link pending.
    @Test func newSessionDefersTheLink() throws {
        let outcome = try FlowEngine.followLink("/modal/Hi", from: nil, catalog: Fixtures.sampleCatalog, context: newcomer, field: "/link")
        #expect(outcome.deferred)
        #expect(outcome.transition == nil)
        #expect(outcome.tree.screens.map(\.feature) == ["onboarding.first"])
        #expect(outcome.tree.pendingLink == PendingLink(uri: "/modal/Hi", pattern: "/modal/{content}"))
        #expect(outcome.userChanges.isEmpty)
    }

    // MARK: running sessions

    /// From home, a link to the modal is animated as the present it adds; no id is reused.
    @Test func linkFromHomePresents() throws {
        var session = try Session(context: onboarded)
        let before = session.tree
        let outcome = try session.link("/modal/Hi", from: session.topId)
        #expect(session.screenFeatures == ["home.first", "modal"])
        #expect(outcome.handledBy == "app")
        let transition = try #require(outcome.transition)
        #expect(transition.type == .present)
        #expect(transition.style == "fullScreen")
        #expect(transition.animated)
        #expect(transition.from == before.top)
        #expect(transition.to == session.top)
        #expect(ids(of: before).isDisjoint(with: ids(of: session.tree)))
        #expect(ids(of: session.tree).min() == before.nextId)
        #expect(session.tree.structuralProblems().isEmpty)
    }

    /// The transition rule: the last action's own when the stack below it is what the user saw,
    /// else `replaceRoot` with `crossFade` (not animated when the screens look the same).
    @Test func transitionRule() throws {
        var session = try Session(context: onboarded)
        var outcome = try session.link("/home/1")
        #expect(outcome.transition?.type == .selectTab)
        #expect(outcome.transition?.animated == false)
        #expect(session.screenFeatures == ["home.second"])

        outcome = try session.link("/home/1")
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.transition?.style == "crossFade")
        #expect(outcome.transition?.animated == false)

        try session.link("/modal/Hi")
        #expect(session.screenFeatures == ["home.first", "modal"])
        let beforeBye = session.tree
        outcome = try session.link("/modal/Bye")
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.transition?.animated == true)
        #expect(outcome.transition?.from == beforeBye.top)
        #expect(session.top?.params == ["content": "Bye"])

        outcome = try session.link("/home")
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.transition?.animated == true)
        #expect(session.screenFeatures == ["home.first"])
        outcome = try session.link("/home")
        #expect(outcome.transition?.animated == false)
        #expect(outcome.transition?.from?.feature == "home.first" && outcome.transition?.to?.feature == "home.first")
    }

    /// Ids keep growing across many links: the rebuilt trees never reuse one.
    @Test func idsAreNeverReused() throws {
        var session = try Session(context: onboarded)
        var seen = ids(of: session.tree)
        for uri in ["/modal/A", "/home/1", "/home", "/modal/B", "/home/0", "/modal/C"] {
            try session.link(uri)
            let now = ids(of: session.tree)
            #expect(now.isDisjoint(with: seen), "\(uri)")
            seen.formUnion(now)
            #expect(session.tree.structuralProblems().isEmpty)
        }
    }

    // MARK: deferred links

    /// The deferred walk without the flag: the link waits through onboarding, then the user
    /// lands on the modal over home, in the same outcome as the completing action.
    @Test func deferredThroughOnboarding() throws {
        let created = try FlowEngine.followLink("/modal/Hi", from: nil, catalog: Fixtures.sampleCatalog, context: newcomer)
        var session = try Session(context: newcomer)
        session.tree = created.tree
        try session.send("onboarding.showSecond")
        #expect(session.tree.pendingLink?.pattern == "/modal/{content}")
        #expect(session.screenFeatures == ["onboarding.first", "onboarding.second"])
        let before = session.tree
        let outcome = try session.send("onboarding.completed")
        #expect(session.screenFeatures == ["home.first", "modal"])
        #expect(session.top?.params == ["content": "Hi"])
        #expect(session.tree.pendingLink == nil)
        #expect(outcome.handledBy == "app")
        #expect(outcome.userChanges == [UserChange(key: "onboarded", value: true)])
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.transition?.style == "crossFade")
        #expect(outcome.transition?.from == before.top)
        #expect(outcome.transition?.to == session.top)
        #expect(ids(of: before).isDisjoint(with: ids(of: session.tree)))
        #expect(session.tree.structuralProblems().isEmpty)
    }

    /// With `eu-face-scan` on, completing pushes the face scan and the link still waits; it is
    /// followed after `onboarding.faceScanVerified`.
    @Test func deferredThroughFaceScan() throws {
        var session = try Session(context: european)
        try session.link("/modal/Hi")
        #expect(session.tree.pendingLink != nil)
        try session.send("onboarding.showSecond")
        var outcome = try session.send("onboarding.completed")
        #expect(outcome.transition?.type == .push)
        #expect(session.topFeature == "onboarding.faceScan")
        #expect(session.tree.pendingLink != nil)
        outcome = try session.send("onboarding.faceScanVerified")
        #expect(session.screenFeatures == ["home.first", "modal"])
        #expect(session.top?.params == ["content": "Hi"])
        #expect(session.tree.pendingLink == nil)
        #expect(outcome.userChanges == [UserChange(key: "onboarded", value: true)])
        #expect(outcome.transition?.from?.feature == "onboarding.faceScan")
        #expect(outcome.transition?.to?.feature == "modal")
    }

    /// `link` in a running session whose link does not hold keeps it pending and moves nothing.
    @Test func linkActionDefers() throws {
        var session = try Session()
        let before = session.tree
        let outcome = try session.link("/home/1", from: session.topId)
        #expect(outcome.transition == nil)
        #expect(outcome.handledBy == "app")
        #expect(session.tree.pendingLink == PendingLink(uri: "/home/1", pattern: "/home/{tab}"))
        #expect(session.tree.root == before.root && session.tree.nextId == before.nextId)
    }

    /// A newer link replaces a pending one; a link that holds clears it.
    @Test func newerLinkReplacesPending() throws {
        var session = try Session()
        try session.link("/modal/A")
        try session.link("/home/1")
        #expect(session.tree.pendingLink?.uri == "/home/1")
        try session.send("onboarding.showSecond")
        try session.send("onboarding.completed")
        #expect(session.screenFeatures == ["home.second"])
        #expect(session.tree.pendingLink == nil)

        var other = try Session()
        try other.link("/modal/A")
        try other.send("onboarding.showSecond")
        let outcome = try other.link("/home")
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(other.screenFeatures == ["onboarding.first"])
        #expect(other.tree.pendingLink == nil)
    }

    /// `link.cancel` drops the pending link (onboarding then ends at home), and succeeds without
    /// change when none is pending; `availableActions` offers it only while one is.
    @Test func cancelDropsThePendingLink() throws {
        var session = try Session()
        func available() -> [String] {
            FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context).map(\.type)
        }
        #expect(!available().contains(FlowAction.linkCancel))
        try session.link("/modal/Hi")
        #expect(available() == ["onboarding.showSecond", "link.cancel"])
        let before = session.tree
        var outcome = try session.send(FlowAction.linkCancel)
        #expect(outcome.transition == nil)
        #expect(outcome.handledBy == "app")
        #expect(session.tree.pendingLink == nil)
        #expect(session.tree.root == before.root)
        outcome = try session.send(FlowAction.linkCancel)
        #expect(outcome.tree == session.tree && outcome.transition == nil)
        try session.send("onboarding.showSecond")
        try session.send("onboarding.completed")
        #expect(session.screenFeatures == ["home.first"])
    }

    /// A pending link whose actions are refused when it finally holds is dropped, and the
    /// user's action stands as if there had been none.
    @Test func pendingLinkThatFailsIsDropped() throws {
        var session = try Session()
        try session.link("/home/5")
        try session.send("onboarding.showSecond")
        let outcome = try session.send("onboarding.completed")
        #expect(session.screenFeatures == ["home.first"])
        #expect(session.tree.pendingLink == nil)
        #expect(outcome.transition?.type == .replaceRoot)
        #expect(outcome.transition?.to?.feature == "home.first")
        #expect(outcome.userChanges == [UserChange(key: "onboarded", value: true)])
    }

    /// A pending link that no longer resolves (the catalog changed) is dropped after the next action.
    @Test func pendingLinkThatNoLongerResolvesIsDropped() throws {
        var session = try Session()
        try session.link("/modal/Hi")
        var changed = Fixtures.sampleCatalog
        let app = try #require(changed["app"])
        changed.insert(FlowDefinition(name: app.name, kind: app.kind, initial: app.initial, handlers: app.handlers))
        let outcome = try FlowEngine.apply(FlowAction(type: "onboarding.showSecond"), to: session.tree, catalog: changed, context: session.context)
        #expect(outcome.tree.pendingLink == nil)
        #expect(outcome.tree.top?.feature == "onboarding.second")
    }

    /// An interaction that only opens or moves does not follow a pending link; one that
    /// finishes does, with its user changes.
    @Test func interactionsFollowWhenTheyFinish() throws {
        let catalog = Fixtures.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": ["a.start"],
             "on": {
               "t.next": [{"do": [{"push": "a.next"}]}],
               "t.done": [{"from": "a.next", "interactive": true, "do": [{"pop": {}}, {"setUser": {"ready": true}}]}],
               "t.open": [{"do": [{"push": "a.target"}]}]
             },
             "links": [{"pattern": "/target", "when": {"user": "ready", "is": true}, "actions": [{"type": "t.open"}]}]}
            """#)
        var session = try Session(catalog: catalog)
        try session.link("/target")
        try session.send("t.next")
        var outcome = try session.send("t.done", interactive: true)
        #expect(outcome.interactionEvent == .started)
        #expect(session.tree.pendingLink != nil)
        #expect(session.failure(FlowAction.link, params: ["uri": "/target"]) == .interactionPending(action: "link", pending: "t.done"))
        outcome = try session.send("interaction.update", params: ["progress": 0.8])
        #expect(session.tree.pendingLink != nil)
        outcome = try session.send("interaction.end", params: ["progress": 0.8])
        #expect(outcome.interactionEvent == .finished)
        #expect(session.screenFeatures == ["a.start", "a.target"])
        #expect(session.tree.pendingLink == nil)
        #expect(outcome.userChanges == [UserChange(key: "ready", value: true)])
        #expect(outcome.transition?.interactive == false)
    }

    /// A link's `setUser` is seen by its later steps, and every step's changes are reported.
    @Test func userChangesReachLaterSteps() throws {
        let catalog = Fixtures.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": ["a.start"],
             "on": {
               "t.vip": [{"do": [{"setUser": {"vip": true}}]}],
               "t.lounge": [{"when": {"user": "vip", "is": true}, "do": [{"push": "a.lounge"}]}],
               "t.tag": [{"params": {"tag": "string"}, "do": [{"setUser": {"tag": {"$param": "tag"}}}]}]
             },
             "links": [{"pattern": "/lounge/{tag}", "actions": [{"type": "t.vip"}, {"type": "t.tag", "params": {"tag": {"$link": "tag"}}}, {"type": "t.lounge"}]}]}
            """#)
        let outcome = try FlowEngine.followLink("/lounge/gold", from: nil, catalog: catalog, context: FlowContext(userId: "u"))
        #expect(outcome.tree.screens.map(\.feature) == ["a.start", "a.lounge"])
        #expect(outcome.userChanges == [UserChange(key: "vip", value: true), UserChange(key: "tag", value: "gold")])
        #expect(outcome.handledBy == "app")
    }

    /// A `when` may read the captured values as params.
    @Test func whenReadsCapturedValues() throws {
        let catalog = Fixtures.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": ["a.start"], "on": {"t.open": [{"do": [{"push": "a.page"}]}]},
             "links": [{"pattern": "/page/{n}", "params": {"n": "integer"}, "when": {"param": "n", "in": [1, 2]}, "actions": [{"type": "t.open"}]}]}
            """#)
        #expect(try !FlowEngine.followLink("/page/1", from: nil, catalog: catalog, context: FlowContext(userId: "u")).deferred)
        #expect(try FlowEngine.followLink("/page/3", from: nil, catalog: catalog, context: FlowContext(userId: "u")).deferred)
    }

    // MARK: errors

    /// Errors of `link` name their field and leave the session as it was.
    @Test func linkActionErrors() throws {
        var session = try Session(context: onboarded)
        #expect(session.failure(FlowAction.link, params: ["uri": "/nowhere"]) == .unknownLink(uri: "/nowhere"))
        #expect(session.failure(FlowAction.link, params: ["uri": "/nowhere"])?.code == "unknown-link")
        for (params, path) in [
            ([:], "/params/uri"), (["uri": 5], "/params/uri"), (["uri": "modal/Hi"], "/params/uri"),
            (["uri": "/home/abc"], "/params/uri"), (["uri": "/home", "tab": 1], "/params/tab"),
        ] as [(JSONObject, String)] {
            guard case .invalidParams(let actual, _)? = session.failure(FlowAction.link, params: params) else {
                Issue.record("\(params): expected invalid-params")
                continue
            }
            #expect(actual == path)
        }
        if case .invalidParams(let path, _)? = session.failure(FlowAction.link, params: ["uri": "/home"], interactive: true) {
            #expect(path == "/interactive")
        } else {
            Issue.record("interactive link: expected invalid-params")
        }
        #expect(session.failure(FlowAction.link, from: "e99", params: ["uri": "/home"])?.code == "stale-source")
        #expect(session.failure(FlowAction.linkCancel, params: ["x": 1])?.code == "invalid-params")
        #expect(session.failure(FlowAction.linkCancel, from: "e99")?.code == "stale-source")
    }

    /// A step the flows refuse fails the whole link as `link-refused`, naming the pattern and
    /// the step; nothing changes.
    @Test func refusedStepChangesNothing() throws {
        var session = try Session(context: onboarded)
        let failure = session.failure(FlowAction.link, params: ["uri": "/home/5"])
        let error = try #require(failure)
        guard case .linkRefused(let pattern, let step, let action, let underlying) = error else {
            Issue.record("expected link-refused, got \(error)")
            return
        }
        #expect(pattern == "/home/{tab}" && step == 0 && action == "home.selectTab")
        #expect(underlying.code == "invalid-params")
        #expect(error.code == "link-refused")
        #expect(error.message.contains("/home/{tab}") && error.message.contains("step 0"))

        let catalog = Fixtures.catalog(
            #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"t.show": [{"do": [{"present": "m"}]}]}, "links": [{"pattern": "/twice", "actions": [{"type": "t.show"}, {"type": "t.show"}]}]}"#,
            #"{"name": "m", "kind": "stacked", "initial": ["m"]}"#)
        var other = try Session(catalog: catalog)
        let twice = other.failure(FlowAction.link, params: ["uri": "/twice"])
        guard case .linkRefused(_, 1, "t.show", .refused)? = twice else {
            Issue.record("expected step 1 refused, got \(String(describing: twice))")
            return
        }
        #expect(throws: FlowError.self) {
            try FlowEngine.followLink("/twice", from: nil, catalog: catalog, context: FlowContext(userId: "u"))
        }
    }

    /// `followLink` names the caller's field in its errors and refuses while an interaction is open.
    @Test func followLinkErrors() throws {
        #expect(throws: FlowError.invalidParams(path: "/link", message: "a URI is absolute, such as myapp://host/path, or a path starting with /; found \"modal\"")) {
            try FlowEngine.followLink("modal", from: nil, catalog: Fixtures.sampleCatalog, context: onboarded, field: "/link")
        }
        #expect(throws: FlowError.unknownLink(uri: "/x")) {
            try FlowEngine.followLink("/x", from: nil, catalog: Fixtures.sampleCatalog, context: onboarded, field: "/link")
        }
        var session = try Session()
        try session.send("onboarding.showSecond")
        try session.send("onboarding.returnToFirst", interactive: true)
        #expect(throws: FlowError.interactionPending(action: "link", pending: "onboarding.returnToFirst")) {
            try FlowEngine.followLink("/home", from: session.tree, catalog: session.catalog, context: session.context)
        }
    }

    // MARK: versions, storage, state

    /// Each catalog has its own links: a session pinned to another version of `app` opens
    /// that version's links, as an experiment variant's sessions would.
    @Test func variantCatalogsHaveTheirOwnLinks() throws {
        var variant = Fixtures.sampleCatalog
        variant.insert(try FlowDefinition.parse(Array(#"""
            {"name": "app", "kind": "stacked",
             "initial": [{"flow": "home", "when": {"user": "onboarded", "is": true}}, {"flow": "onboarding", "when": {"user": "onboarded", "isNot": true}}],
             "on": {
               "onboarding.completed": [{"from": "onboarding.second", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}],
               "onboarding.faceScanVerified": [{"from": "onboarding.faceScan", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}],
               "home.presentModal": [{"from": ["home.first", "home.second"], "params": {"content": "any"},
                                      "do": [{"present": {"flow": "modal", "style": "pageSheet", "params": {"content": {"$param": "content"}}}}]}],
               "home.checkout": [{"via": "home", "do": [{"present": "checkout"}]}],
               "home.upgrade": [{"via": "home", "do": [{"present": "paywall"}]}]
             },
             "links": [{"pattern": "/promo/{code}", "actions": [{"type": "home.selectTab", "params": {"index": 1}}, {"type": "home.presentModal", "params": {"content": {"promo": {"$link": "code"}}}}]}]}
            """#.utf8)))
        #expect(variant.validate().isEmpty)
        #expect(throws: FlowError.unknownLink(uri: "/promo/SPRING")) {
            try FlowEngine.resolveLink("/promo/SPRING", catalog: Fixtures.sampleCatalog)
        }
        #expect(throws: FlowError.unknownLink(uri: "/modal/Hi")) { try FlowEngine.resolveLink("/modal/Hi", catalog: variant) }
        let outcome = try FlowEngine.followLink("/promo/SPRING", from: nil, catalog: variant, context: onboarded)
        #expect(outcome.tree.screens.map(\.feature) == ["home.second", "modal"])
        #expect(outcome.tree.top?.params == ["content": ["promo": "SPRING"]])
        #expect(outcome.tree.root.presented?.presentationStyle == "pageSheet")
    }

    /// A pending link is stored with the tree; trees stored before links existed read back without one.
    @Test func pendingLinkRoundTrips() throws {
        var session = try Session()
        try session.link("/modal/Hi%20there?x=1")
        let bytes = session.tree.storageBytes()
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix(#","pendingLink":{"uri":"/modal/Hi%20there?x=1","pattern":"/modal/{content}"}}"#))
        let decoded = try FlowTree(storage: bytes)
        #expect(decoded == session.tree)
        #expect(decoded.storageBytes() == bytes)

        let old = try FlowTree(storage: Array(StorageTests.base.utf8))
        #expect(old.pendingLink == nil)
        #expect(String(decoding: old.storageBytes(), as: UTF8.self) == StorageTests.base)
        try session.send(FlowAction.linkCancel)
        #expect(!String(decoding: session.tree.storageBytes(), as: UTF8.self).contains("pendingLink"))
    }

    /// A corrupt stored pending link is refused with its path.
    @Test(arguments: [
        (#","pendingLink":{"uri":"/a"}}"#, "/pendingLink/pattern"),
        (#","pendingLink":{"uri":1,"pattern":"/a"}}"#, "/pendingLink/uri"),
        (#","pendingLink":{"uri":"/a","pattern":"/a","x":1}}"#, "/pendingLink/x"),
        (#","pendingLink":"/a"}"#, "/pendingLink"),
        (#","pendingLink":{"uri":"","pattern":"/a"}}"#, ""),
    ])
    func corruptPendingLinks(suffix: String, path: String) {
        let document = String(StorageTests.base.dropLast()) + suffix
        do throws(FlowStorageError) {
            _ = try FlowTree(storage: Array(document.utf8))
            Issue.record("should fail: \(document)")
        } catch {
            #expect(error.path == path)
        }
    }

    /// The state document shows the pending link, or null.
    @Test func stateDocumentShowsThePendingLink() throws {
        var session = try Session()
        func written() -> String {
            var writer = JSONWriter()
            session.tree.writePendingLink(into: &writer)
            return String(decoding: writer.bytes, as: UTF8.self)
        }
        #expect(written() == "null")
        try session.link("/modal/Hi")
        #expect(written() == #"{"uri":"/modal/Hi","pattern":"/modal/{content}"}"#)
        let navigation = try JSONParser.parse(session.tree.navigationJSON())
        #expect(navigation["pendingLink"] == ["uri": "/modal/Hi", "pattern": "/modal/{content}"])
    }
}
