// FlowCatalog+mistakes: checks for what authors get wrong that reads well: a `from` no screen can match, a bubble no parent takes, flags that do not exist.

import JSON

extension FlowCatalog {
    /// Rules and effects that name screens or flows this flow can never meet, so the rule never
    /// matches or the effect is always refused:
    /// - a rule's `from` feature that neither this flow nor a flow it reaches (its
    ///   ``screenFeatures(of:)``) can show: the source screen of an action this flow hears is one
    ///   of those, so `"from": "checkout.reveiw"` would never match;
    /// - a rule's `via` naming a defined flow that this flow never starts, pushes, sets as root or
    ///   presents: an action only comes up through a child;
    /// - `popTo` a feature this flow never puts on its own stack.
    ///
    /// Paths are relative to the definition; a `from` or `via` list of one is reported at the
    /// list. Skipped while a Swift delegate is registered (it may show any screen) and while the
    /// flow reaches an undefined flow (reported on its own; its screens are unknown).
    func unreachableSourceProblems(of definition: FlowDefinition) -> [DefinitionProblem] {
        guard !hasDelegates else { return [] }
        let shown = screenFeatures(of: definition.name)
        guard shown.undefinedFlows.isEmpty else { return [] }
        let own = definition.ownScreens
        var problems: [DefinitionProblem] = []
        // Suggestions compare names pairwise: only the first few problems get one, so a body
        // listing thousands of unknown features stays linear.
        var suggestions = 3
        // Which flows show each feature, built once when a `from` is first found wrong.
        var showing: [String: [String]]?
        // The list of what a flow can show, sorted once per set rather than once per problem.
        var listed: [Bool: String] = [:]
        func hint(_ feature: String, _ known: Set<String>) -> String {
            guard suggestions > 0, known.count <= 200 else {
                let isOwn = known == own.features
                if let text = listed[isOwn] { return text }
                let text = "it can show " + DefinitionReader.abbreviatedList(known.sorted())
                listed[isOwn] = text
                return text
            }
            suggestions -= 1
            return Self.closest(feature, in: known)
        }
        for handler in definition.handlers {
            for (ruleIndex, rule) in handler.rules.enumerated() {
                let rulePath = JSONPointer(["on", handler.action, String(ruleIndex)])
                for (index, feature) in (rule.from ?? []).enumerated() where !shown.features.contains(feature) {
                    let path = (rule.from?.count ?? 0) > 1 ? rulePath.appending("from").appending(index) : rulePath.appending("from")
                    if showing == nil { showing = featureOwners() }
                    let elsewhere = showing?[feature] ?? []
                    let why = elsewhere.isEmpty
                        ? hint(feature, shown.features)
                        : "it is shown by \(elsewhere.joined(separator: ", ")), which \(definition.name) never reaches (an action comes only from this flow's screens and those of the flows it starts, pushes or presents)"
                    problems.append(DefinitionProblem(
                        path: path.description,
                        message: "no screen \(JSONValue.string(feature).jsonText) can be shown by \(definition.name) or the flows it reaches, so this rule never matches; \(why)"))
                }
                for (index, flow) in (rule.via ?? []).enumerated() where definitions[flow] != nil && !own.childFlows.contains(flow) {
                    let path = (rule.via?.count ?? 0) > 1 ? rulePath.appending("via").appending(index) : rulePath.appending("via")
                    let children = own.childFlows.isEmpty ? "it has none" : "its child flows are " + own.childFlows.sorted().joined(separator: ", ")
                    problems.append(DefinitionProblem(
                        path: path.description,
                        message: "\(definition.name) never starts, pushes, sets or presents flow \(JSONValue.string(flow).jsonText), so no action comes up through it and this rule never matches; \(children)"))
                }
                for (effectIndex, effect) in rule.effects.enumerated() {
                    guard case .popTo(.feature(let feature)) = effect, !own.features.contains(feature) else { continue }
                    problems.append(DefinitionProblem(
                        path: rulePath.appending("do").appending(effectIndex).appending("popTo").description,
                        message: "\(definition.name) never puts a screen \(JSONValue.string(feature).jsonText) on its own stack, so popTo would always be refused; \(hint(feature, own.features))"))
                }
            }
        }
        return problems
    }

    /// `bubble` rules for an action type that no flow above this one names: the action would pass
    /// every parent and be refused at the root, so the rule can only fail. The root flow has no
    /// parent, so a bubble there always fails. `back` is left alone (the engine's generic back
    /// takes it), as are flows no flow reaches, and every flow while a Swift delegate is
    /// registered (it may handle any type).
    func unhandledBubbleProblems(of definition: FlowDefinition) -> [DefinitionProblem] {
        guard !hasDelegates else { return [] }
        let bubbling = definition.handlers.filter { handler in handler.action != FlowAction.back && handler.rules.contains(where: \.bubbles) }
        guard !bubbling.isEmpty else { return [] }
        var parents: [String: Set<String>] = [:]
        for name in names {
            for child in definitions[name]?.ownScreens.childFlows ?? [] { parents[child, default: []].insert(name) }
        }
        let isRoot = definition.name == FlowCatalog.rootFlowName
        guard isRoot || !(parents[definition.name] ?? []).isEmpty else { return [] }
        var ancestors: Set<String> = []
        var queue = Array(parents[definition.name] ?? [])
        while let next = queue.popLast() {
            guard ancestors.insert(next).inserted else { continue }
            queue += parents[next] ?? []
        }
        var known: Set<String> = []
        for ancestor in ancestors where ancestor != definition.name { known.formUnion(definitions[ancestor]?.actionTypes ?? []) }
        var problems: [DefinitionProblem] = []
        for handler in bubbling where !known.contains(handler.action) {
            for (index, rule) in handler.rules.enumerated() where rule.bubbles {
                let why = isRoot
                    ? "\(definition.name) is the root flow: it has no parent to hand the action to"
                    : "no flow above \(definition.name) (\(ancestors.sorted().joined(separator: ", "))) names \(handler.action) in its on, so the action would be refused at the root"
                problems.append(DefinitionProblem(
                    path: JSONPointer(["on", handler.action, String(index), "do", "0", "bubble"]).description,
                    message: "this bubble can only fail: \(why); handle it here or name it in the parent's on"))
            }
        }
        return problems
    }

    /// Warnings for `{"flag": key, …}` conditions (in `initial`, rules and links) on a key that
    /// `flags` does not define, or comparing with a value no variant of the flag has. Flags
    /// change independently of flows (a flag may be defined after the flow that reads it), so
    /// these are warnings: the condition still runs, reading a missing value (`is`, `in` fail;
    /// `isNot`, `notIn` hold).
    ///
    /// `flags` maps each defined flag's key to its variants' values.
    static func flagWarnings(of definition: FlowDefinition, flags: [String: [JSONValue]]) -> [DefinitionProblem] {
        var problems: [DefinitionProblem] = []
        forEachFlagTest(in: definition) { key, test, path in
            guard let values = flags[key] else {
                let known = flags.isEmpty ? "no flag is defined" : "defined flags are " + DefinitionReader.abbreviatedList(flags.keys.sorted())
                problems.append(DefinitionProblem(
                    path: path.appending("flag").description,
                    message: "there is no flag \(JSONValue.string(key).jsonText), so this condition reads a missing value (is and in fail, isNot and notIn hold) until one is defined; \(known)",
                    severity: .warning))
                return
            }
            let compared: [JSONValue]
            switch test {
            case .equals(let value), .notEquals(let value): compared = [value]
            case .oneOf(let candidates), .noneOf(let candidates): compared = candidates
            case .exists: compared = []
            }
            for value in compared where !values.contains(value) {
                let known = values.map { $0.abbreviatedJSON(limit: 40) }.joined(separator: ", ")
                problems.append(DefinitionProblem(
                    path: path.appending(test.keyword).description,
                    message: "flag \(JSONValue.string(key).jsonText) never has the value \(value.abbreviatedJSON(limit: 40)); its variants' values are \(known)",
                    severity: .warning))
            }
        }
        return problems
    }

    /// The flags flow `name`'s own conditions read (`initial`, rules, guards, links), each with
    /// the JSON Pointer of the first condition that reads it; none for a flow not defined.
    public func flagsRead(by name: String) -> [(key: String, path: String)] {
        guard let definition = definitions[name] else { return [] }
        var read: [(key: String, path: String)] = []
        Self.forEachFlagTest(in: definition) { key, _, path in
            if !read.contains(where: { $0.key == key }) { read.append((key, path.appending("flag").description)) }
        }
        return read
    }

    /// Calls `body` with every flag test in a definition's conditions and where it is.
    static func forEachFlagTest(in definition: FlowDefinition, _ body: (String, FlowCondition.Test, JSONPointer) -> Void) {
        func check(_ condition: FlowCondition, at path: JSONPointer) {
            switch condition {
            case .test(.flag, let key, let test):
                body(key, test, path)
            case .test:
                break
            case .all(let conditions), .any(let conditions):
                let combinator = if case .all = condition { "all" } else { "any" }
                for (index, inner) in conditions.enumerated() { check(inner, at: path.appending(combinator).appending(index)) }
            case .not(let inner):
                check(inner, at: path.appending("not"))
            }
        }
        for (index, entry) in definition.initial.enumerated() {
            if let when = entry.when { check(when, at: JSONPointer(["initial", String(index), "when"])) }
        }
        for handler in definition.handlers {
            for (index, rule) in handler.rules.enumerated() {
                if let when = rule.when { check(when, at: JSONPointer(["on", handler.action, String(index), "when"])) }
                if let guarded = rule.guarded { check(guarded.when, at: JSONPointer(["on", handler.action, String(index), "guard", "when"])) }
            }
        }
        for (index, link) in definition.links.enumerated() {
            if let when = link.when { check(when, at: JSONPointer(["links", String(index), "when"])) }
        }
    }

    /// Feature → the flows whose own definitions can show it, in name order.
    func featureOwners() -> [String: [String]] {
        var owners: [String: [String]] = [:]
        for name in names {
            for feature in definitions[name]?.ownScreens.features ?? [] { owners[feature, default: []].append(name) }
        }
        return owners
    }

    /// "did you mean …" for the known name nearest to `name` (at most a quarter of it, and at
    /// least 2, edits away), or the known names when none is near.
    static func closest(_ name: String, in known: Set<String>) -> String {
        let sorted = known.sorted()
        guard !sorted.isEmpty else { return "it shows none" }
        let target = Array(name.utf8)
        let limit = max(2, target.count / 4)
        var best: (name: String, distance: Int)?
        if target.count <= 64 {
            for candidate in sorted {
                let bytes = Array(candidate.utf8)
                // Lengths further apart than the limit are further apart in edits too.
                guard bytes.count <= 64, abs(bytes.count - target.count) <= limit else { continue }
                let distance = editDistance(target, bytes)
                if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
            }
        }
        if let best { return "did you mean \(JSONValue.string(best.name).jsonText)?" }
        return "it can show " + DefinitionReader.abbreviatedList(sorted)
    }

    /// Levenshtein distance over UTF-8 bytes; callers compare only names of at most 64 bytes.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
