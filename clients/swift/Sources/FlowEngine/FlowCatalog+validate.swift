// FlowCatalog+validate: checks across definitions (unknown flows, flows containing themselves, a missing root).

import JSON

extension FlowCatalog {
    /// Every problem across the catalog, with paths prefixed by the flow's name
    /// (`/onboarding/initial/0/flow`): references to undefined flows, flows that contain
    /// themselves through `initial`, link actions of a type no flow names
    /// (`/app/links/0/actions/0/type`), and a missing root flow (reported at `/app`).
    ///
    /// Problems inside one document (unknown keys, wrong types, unknown effects, shadowed rules,
    /// out-of-range tabs, `bubble` mixed with other effects) are found when it is parsed, since a
    /// ``FlowDefinition`` cannot hold them; ``FlowCatalog/parse(_:limits:)`` reports both kinds.
    ///
    /// With `flags` (each defined flag's key and its variants' values), conditions on flags are
    /// checked too and reported as warnings (``DefinitionProblem/Severity/warning``): refuse on
    /// `problems.errors` only.
    public func validate(rootFlow: String = FlowCatalog.rootFlowName, flags: [String: [JSONValue]]? = nil) -> [DefinitionProblem] {
        var problems: [DefinitionProblem] = []
        if definitions[rootFlow] == nil {
            problems.append(DefinitionProblem(
                path: JSONPointer([rootFlow]).description,
                message: "the root flow \(JSONValue.string(rootFlow).jsonText) is not defined; every session starts from it"))
        }
        for name in names {
            let prefix = JSONPointer([name])
            for problem in self.problems(for: name, flags: flags) {
                problems.append(DefinitionProblem(path: prefix.description + problem.path, message: problem.message, severity: problem.severity))
            }
        }
        return problems
    }

    /// The catalog-level problems of the flow `name`, with paths relative to its definition, for
    /// checking one definition before it goes live (`PUT /v1/flows/{name}`): insert it into a
    /// copy of the live catalog and ask. With `flags`, warnings about flag conditions are
    /// included (see ``validate(rootFlow:flags:)``).
    public func problems(for name: String, flags: [String: [JSONValue]]? = nil) -> [DefinitionProblem] {
        guard let definition = definitions[name] else {
            return [DefinitionProblem(path: "", message: "flow \(JSONValue.string(name).jsonText) is not defined")]
        }
        var problems: [DefinitionProblem] = []
        for reference in definition.flowReferences where definitions[reference.flow] == nil {
            problems.append(DefinitionProblem(
                path: reference.path.description,
                message: "unknown flow \(JSONValue.string(reference.flow).jsonText); defined flows are \(names.joined(separator: ", "))"))
        }
        if let cycle = initialCycle(from: name) {
            problems.append(DefinitionProblem(
                path: cycle.path.description,
                message: "flow \(name) contains itself through initial: \(cycle.names.joined(separator: " → ")); it could never finish building"))
        }
        problems += linkActionProblems(of: definition)
        problems += unreachableSourceProblems(of: definition)
        problems += unhandledBubbleProblems(of: definition)
        problems += resultTargetProblems(of: definition)
        problems += listProblems(of: definition)
        problems += guardWarnings(of: definition)
        if let flags { problems += Self.flagWarnings(of: definition, flags: flags) }
        return problems
    }

    /// List effects and row rules need screens that hold a list: a feature some entry of the
    /// catalog writes with `sections`. Without `screen`, a list effect changes the source
    /// screen's list, so the rule must name its sources with `from`, each a list screen.
    private func listProblems(of definition: FlowDefinition) -> [DefinitionProblem] {
        var listScreens: Set<String> = []
        for name in names { listScreens.formUnion(definitions[name]?.ownListScreens ?? []) }
        var problems: [DefinitionProblem] = []
        func noList(_ feature: String) -> String {
            "\(feature) never holds a list: no entry of the catalog writes it with \"sections\" (write {\"screen\": \"\(feature)\", \"sections\": []} where it is shown)"
        }
        for handler in definition.handlers {
            for (ruleIndex, rule) in handler.rules.enumerated() {
                let rulePath = JSONPointer(["on", handler.action, String(ruleIndex)])
                if rule.row != nil {
                    for feature in rule.from ?? [] where !listScreens.contains(feature) {
                        problems.append(DefinitionProblem(path: rulePath.appending("row").description, message: "row matches a tap on a row of the source screen's list, but \(noList(feature))"))
                    }
                }
                for (effectIndex, effect) in rule.effects.enumerated() {
                    guard case .list(let list) = effect else { continue }
                    let path = rulePath.appending("do").appending(effectIndex).appending(list.name)
                    if let feature = list.screen {
                        if !listScreens.contains(feature) {
                            problems.append(DefinitionProblem(path: path.appending("screen").description, message: "\(list.name) changes the list of \(noList(feature))"))
                        }
                    } else if let from = rule.from {
                        for feature in from where !listScreens.contains(feature) {
                            problems.append(DefinitionProblem(path: path.description, message: "\(list.name) changes the source screen's list, but \(noList(feature)); name the screen with \"screen\""))
                        }
                    } else {
                        problems.append(DefinitionProblem(
                            path: path.description,
                            message: "\(list.name) changes the list of the screen the action came from, but the rule has no from to say which screens those are; add from, or name the screen with \"screen\""))
                    }
                }
            }
        }
        return problems
    }

    /// A `result` with `to` must name a screen that can still be in the tree once the rule's
    /// effects have applied: a screen of a flow that holds or presents the handling flow (directly
    /// or through others), or, when the rule pops (or dismisses what this flow presents), a screen
    /// the handling flow itself holds.
    private func resultTargetProblems(of definition: FlowDefinition) -> [DefinitionProblem] {
        var targets: [(feature: String, path: JSONPointer, keepsOwn: Bool)] = []
        let presents = definition.handlers.contains { handler in
            handler.rules.contains { rule in rule.effects.contains { if case .present = $0 { true } else { false } } }
        }
        for handler in definition.handlers {
            for (ruleIndex, rule) in handler.rules.enumerated() {
                let pops = rule.effects.contains { effect in
                    switch effect {
                    case .pop, .popTo, .popToRoot: true
                    default: false
                    }
                }
                for (index, effect) in rule.effects.enumerated() {
                    guard case .result(let result) = effect, let feature = result.to else { continue }
                    targets.append((
                        feature, JSONPointer(["on", handler.action, String(ruleIndex), "do", String(index), "result", "to"]),
                        pops || (presents && rule.effects.contains(.dismiss))))
                }
            }
        }
        guard !targets.isEmpty else { return [] }
        var behind: Set<String> = []
        for other in names where other != definition.name && screenFeatures(of: other).flows.contains(definition.name) {
            behind.formUnion(definitions[other]?.ownScreens.features ?? [])
        }
        var own = definition.ownScreens.features
        for child in Self.heldFlows(of: definition) { own.formUnion(screenFeatures(of: child).features) }
        return targets.compactMap { target in
            guard !behind.contains(target.feature), !(target.keepsOwn && own.contains(target.feature)) else { return nil }
            let why = own.contains(target.feature)
                ? "\(definition.name) shows it, but this rule takes \(definition.name) away (its dismiss), so it is gone when the result arrives"
                : "a result goes to a screen still in the stack, shown by \(definition.name) below its top or by a flow that holds or presents it"
            return DefinitionProblem(
                path: target.path.description,
                message: "no screen of \(JSONValue.string(target.feature).jsonText) can be below or behind \(definition.name) after this rule: \(why)")
        }
    }

    /// The child flows a definition holds in its stack or tabs (initial entries, push, setRoot,
    /// replaceRoot), not those it presents.
    private static func heldFlows(of definition: FlowDefinition) -> Set<String> {
        var flows: Set<String> = []
        for entry in definition.initial {
            if case .flow(let name, _) = entry.target { flows.insert(name) }
        }
        for handler in definition.handlers {
            for rule in handler.rules {
                for effect in rule.effects {
                    switch effect {
                    case .push(.flow(let name, _)), .setRoot(.flow(let name, _)), .replaceRoot(.flow(let name, _)): flows.insert(name)
                    default: break
                    }
                }
            }
        }
        return flows
    }

    /// A guard resumes its action when its condition comes to hold, and within a session only the
    /// user's state changes (flags, attributes and traits are fixed at creation, params are the
    /// action's own): a guard that reads no user state shows its flow and then always drops the
    /// action. A warning, since showing the flow may be all the author wants.
    private func guardWarnings(of definition: FlowDefinition) -> [DefinitionProblem] {
        func readsUser(_ condition: FlowCondition) -> Bool {
            switch condition {
            case .test(let source, _, _): source == .user
            case .all(let conditions), .any(let conditions): conditions.contains(where: readsUser)
            case .not(let inner): readsUser(inner)
            }
        }
        var problems: [DefinitionProblem] = []
        for handler in definition.handlers {
            for (index, rule) in handler.rules.enumerated() {
                guard let guarded = rule.guarded, !readsUser(guarded.when) else { continue }
                problems.append(DefinitionProblem(
                    path: JSONPointer(["on", handler.action, String(index), "guard", "when"]).description,
                    message: "this guard reads no user state, the only thing that changes within a session, so \(handler.action) can never resume after its flow; name a user key such as {\"user\": \"loggedIn\", \"is\": true}",
                    severity: .warning))
            }
        }
        return problems
    }

    /// A link's action must be a type some flow of the catalog names, or a generic one: else
    /// following the link could only fail. A registered Swift delegate may handle any type, so
    /// with one registered the check is skipped.
    private func linkActionProblems(of definition: FlowDefinition) -> [DefinitionProblem] {
        guard !definition.links.isEmpty, !hasDelegates else { return [] }
        var known: Set<String> = [FlowAction.back]
        for other in definitions.values { known.formUnion(other.actionTypes) }
        var problems: [DefinitionProblem] = []
        for (linkIndex, link) in definition.links.enumerated() {
            for (actionIndex, action) in link.actions.enumerated() where !known.contains(action.type) {
                problems.append(DefinitionProblem(
                    path: JSONPointer(["links", String(linkIndex), "actions", String(actionIndex), "type"]).description,
                    message: "unknown action type \(JSONValue.string(action.type).jsonText): no flow of the catalog names it in its on, and it is not a generic action such as back"))
            }
        }
        return problems
    }

    /// The first way `start` contains itself through initial entries: the path of the entry
    /// that leads back, and the flow names along the cycle.
    private func initialCycle(from start: String) -> (path: JSONPointer, names: [String])? {
        guard let definition = definitions[start] else { return nil }
        for reference in definition.flowReferences where reference.isInitial {
            if reference.flow == start { return (reference.path, [start, start]) }
            // Breadth-first from the referenced flow, remembering how each flow was reached.
            var cameFrom: [String: String] = [reference.flow: start]
            var queue = [reference.flow]
            var position = 0
            while position < queue.count {
                let current = queue[position]
                position += 1
                guard let next = definitions[current] else { continue }
                for edge in next.flowReferences where edge.isInitial {
                    if edge.flow == start {
                        var chain = [current]
                        var cursor = cameFrom[current]
                        while let flow = cursor, flow != start {
                            chain.append(flow)
                            cursor = cameFrom[flow]
                        }
                        return (reference.path, [start] + chain.reversed() + [start])
                    }
                    if cameFrom[edge.flow] == nil {
                        cameFrom[edge.flow] = current
                        queue.append(edge.flow)
                    }
                }
            }
        }
        return nil
    }

    /// Parses a set of definition documents, each stored under a name (a file's base name, a
    /// URL's `{name}`), and validates the result as a whole. Every problem is reported, with
    /// paths prefixed by the document's name; documents with problems are left out of the
    /// returned catalog.
    ///
    /// ```swift
    /// let (catalog, problems) = FlowCatalog.parse([("app", appBytes), ("home", homeBytes)])
    /// ```
    public static func parse(
        _ documents: [(name: String, bytes: [UInt8])], limits: JSONParser.Limits = JSONParser.Limits()
    ) -> (catalog: FlowCatalog, problems: [DefinitionProblem]) {
        var catalog = FlowCatalog()
        var problems: [DefinitionProblem] = []
        for document in documents {
            let prefix = JSONPointer([document.name]).description
            do throws(DefinitionProblems) {
                let definition = try FlowDefinition.parse(document.bytes, expectedName: document.name, limits: limits)
                catalog.insert(definition)
            } catch {
                for problem in error.problems {
                    problems.append(DefinitionProblem(path: prefix + problem.path, message: problem.message))
                }
            }
        }
        problems += catalog.validate()
        return (catalog, problems)
    }
}
