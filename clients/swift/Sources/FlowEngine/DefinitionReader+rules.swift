// DefinitionReader+rules: reading `on` — the rules of each action type, their `from`, `via` and params, and rules that shadow one another.

import JSON

extension DefinitionReader {
    mutating func readHandlers(_ value: JSONValue?, at path: JSONPointer) -> [FlowDefinition.ActionHandler]? {
        guard let value else { return [] }
        guard let object = value.objectValue else {
            report(path, "on must be an object mapping action types to lists of rules; found \(value.typeName)")
            return nil
        }
        var handlers: [FlowDefinition.ActionHandler] = []
        var valid = true
        for member in object.members {
            let handlerPath = path.appending(member.key)
            if member.key.isEmpty || member.key.unicodeScalars.count > 200 {
                report(handlerPath, "an action type must be a non-empty string of at most 200 characters")
                valid = false
                continue
            }
            if Self.reservedActions.contains(member.key) {
                report(handlerPath, "\(member.key) is handled by the engine itself and cannot be redefined")
                valid = false
                continue
            }
            guard let elements = member.value.arrayValue, !elements.isEmpty else {
                report(handlerPath, "the rules for \(member.key) must be a non-empty array of rules; found \(member.value.abbreviatedJSON())")
                valid = false
                continue
            }
            guard elements.count <= Self.maxRules else {
                report(handlerPath, "\(member.key) has \(elements.count) rules; an action type may have at most \(Self.maxRules)")
                valid = false
                continue
            }
            var rules: [FlowRule] = []
            for (index, element) in elements.enumerated() {
                if let rule = readRule(element, at: handlerPath.appending(index)) {
                    rules.append(rule)
                } else {
                    valid = false
                }
            }
            if rules.count == elements.count {
                checkShadowing(rules, at: handlerPath)
                handlers.append(FlowDefinition.ActionHandler(action: member.key, rules: rules))
            }
        }
        return valid ? handlers : nil
    }

    /// A rule after one with no `when` whose `from` and `via` cover it can never match.
    ///
    /// Pairs of rules are few (``maxRules``), but a `from` may list thousands of features: they
    /// are compared as sets, and a message names only the first few, so that neither the time
    /// nor the problems grow with the square of the body.
    mutating func checkShadowing(_ rules: [FlowRule], at path: JSONPointer) {
        let sources = rules.map { $0.from.map(Set.init) }
        func covers(_ outer: Set<String>?, _ inner: [String]?) -> Bool {
            switch (outer, inner) {
            case (nil, _): return true
            case (_?, nil): return false
            case let (outer?, inner?): return inner.allSatisfy(outer.contains)
            }
        }
        for (later, rule) in rules.enumerated() {
            for earlier in 0..<later where rules[earlier].when == nil {
                if covers(sources[earlier], rule.from) && covers(rules[earlier].via.map(Set.init), rule.via)
                    && covers(rules[earlier].row.map(Set.init), rule.row)
                {
                    var scopes: [String] = []
                    if let from = rules[earlier].from { scopes.append("from \(Self.abbreviatedList(from))") }
                    if let via = rules[earlier].via { scopes.append("via \(Self.abbreviatedList(via))") }
                    if let row = rules[earlier].row { scopes.append("row \(Self.abbreviatedList(row))") }
                    let scope = scopes.isEmpty ? "any source" : scopes.joined(separator: " ")
                    report(
                        path.appending(later),
                        "this rule never matches: rule \(path.appending(earlier)) matches \(scope) with no when, and it comes first")
                    break
                }
            }
        }
    }

    /// `names` joined with commas; only the first few when there are many, since a message may be
    /// repeated for every rule.
    static func abbreviatedList(_ names: [String], limit: Int = 5) -> String {
        guard names.count > limit else { return names.joined(separator: ", ") }
        return names.prefix(limit).joined(separator: ", ") + " and \(names.count - limit) more"
    }

    mutating func readRule(_ value: JSONValue, at path: JSONPointer) -> FlowRule? {
        guard let object = value.objectValue else {
            report(path, "a rule is an object with optional from, via, when, interactive, params and a do list; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: Self.ruleKeys, at: path, what: "a rule")
        paramReferences = []

        var from: [String]?
        if let rawFrom = object["from"] { from = readFrom(rawFrom, at: path.appending("from")) }
        var row: [String]?
        if let rawRow = object["row"] { row = readRowKinds(rawRow, at: path.appending("row")) }
        ruleMatchesRows = object["row"] != nil
        var via: [String]?
        if let rawVia = object["via"] { via = readVia(rawVia, at: path.appending("via")) }
        var when: FlowCondition?
        if let rawWhen = object["when"] { when = readCondition(rawWhen, at: path.appending("when")) }
        var interactive = false
        if let rawInteractive = object["interactive"] {
            if let flag = rawInteractive.boolValue {
                interactive = flag
            } else {
                report(path.appending("interactive"), "interactive must be true or false; found \(rawInteractive.typeName)")
            }
        }
        var params: [FlowRule.Param] = []
        let declaresParams = object["params"] != nil
        if let rawParams = object["params"] { params = readParamDeclarations(rawParams, at: path.appending("params")) }
        var summary: String?
        if let text = object["description"] {
            summary = text.stringValue
            if summary == nil { report(path.appending("description"), "description must be a string; found \(text.typeName)") }
        }
        var effects: [FlowEffect] = []
        if let rawEffects = object["do"] {
            effects = readEffects(rawEffects, at: path.appending("do"), params: params)
            checkResults(effects, rawEffects, at: path.appending("do"), declaresParams: declaresParams)
        } else {
            report(path, "a rule needs a do list of effects, such as \"do\": [{\"push\": \"feature\"}]")
        }
        var guarded: FlowGuard?
        if let rawGuard = object["guard"] {
            if effects == [.bubble] {
                report(
                    path.appending("guard"),
                    "a guard is checked by the rule that handles the action, and this rule only bubbles it; put the guard on the parent flow's rule")
            } else {
                guarded = readGuard(rawGuard, at: path.appending("guard"), params: params)
            }
        }
        // A bubble rule passes the action on before params or interactivity are looked at
        // (DefinitionDelegate): only the rule that handles the action enforces them, so here they
        // would look like a check that never runs.
        if effects == [.bubble] {
            if declaresParams {
                report(
                    path.appending("params"),
                    "params are checked only by the rule that handles the action, and this rule only bubbles it, so they would never be enforced; declare them on the parent flow's rule that handles it")
            }
            if interactive {
                report(
                    path.appending("interactive"),
                    "interactive is decided by the rule that handles the action, and this rule only bubbles it; set it on the parent flow's rule that handles it")
            }
        }
        if declaresParams {
            for reference in paramReferences where !(ruleMatchesRows && FlowAction.rowParams.contains(reference.name)) {
                let name = JSONValue.string(reference.name).jsonText
                guard let declared = params.first(where: { $0.name == reference.name }) else {
                    report(reference.path.appending("$param"), "param \(name) is not declared in this rule's params; declare it or fix the name")
                    continue
                }
                // A reference needs its param (a missing one is refused), so it cannot be optional.
                if !declared.required {
                    report(
                        reference.path.appending("$param"),
                        "param \(name) is declared optional but an effect uses it, which makes it required; drop the ? from its type")
                }
            }
        }
        guard problems.count == before else { return nil }
        return FlowRule(
            from: from, row: row, via: via, when: when, interactive: interactive, params: params, effects: effects, summary: summary,
            guarded: guarded)
    }

    /// `via`: a child flow's name, or a non-empty array of them; each is a flow reference, so an
    /// unknown name is reported when the catalog is checked.
    mutating func readVia(_ value: JSONValue, at path: JSONPointer) -> [String]? {
        guard let elements = readNameOrNames(
            value, at: path, expected: "via must be a child flow's name or a non-empty array of them, such as \"onboarding\"")
        else { return nil }
        var flows: [String] = []
        for (element, elementPath) in elements {
            guard let name = element.stringValue, Self.isValidFlowName(name) else {
                report(elementPath, "via names a flow (1 to 100 letters, digits, '.', '_' or '-'); found \(element.abbreviatedJSON())")
                continue
            }
            if name == flowNameValue {
                report(elementPath, "via names the child flow an action comes up through; an action from this flow's own screens is matched with from")
                continue
            }
            references.append(FlowReference(flow: name, path: elementPath, isInitial: false))
            flows.append(name)
        }
        return flows.count == elements.count ? flows : nil
    }

    /// A value written as one name or a non-empty array of names (`via`, a rule's `row`): its
    /// elements with their pointers, each still to be checked as a name; `expected` is reported
    /// when it is neither.
    mutating func readNameOrNames(_ value: JSONValue, at path: JSONPointer, expected: String) -> [(JSONValue, JSONPointer)]? {
        if value.stringValue != nil { return [(value, path)] }
        if let array = value.arrayValue, !array.isEmpty {
            return array.enumerated().map { ($0.element, path.appending($0.offset)) }
        }
        report(path, "\(expected); found \(value.abbreviatedJSON())")
        return nil
    }

    mutating func readFrom(_ value: JSONValue, at path: JSONPointer) -> [String]? {
        if value.stringValue != nil {
            return readFeature(value, at: path).map { [$0] }
        }
        guard let elements = value.arrayValue, !elements.isEmpty else {
            report(path, "from must be a feature name or a non-empty array of feature names; found \(value.abbreviatedJSON())")
            return nil
        }
        var features: [String] = []
        for (index, element) in elements.enumerated() {
            if let feature = readFeature(element, at: path.appending(index)) { features.append(feature) }
        }
        return features.count == elements.count ? features : nil
    }

    mutating func readParamDeclarations(_ value: JSONValue, at path: JSONPointer) -> [FlowRule.Param] {
        guard let object = value.objectValue else {
            report(path, "params must be an object mapping param names to types, such as {\"index\": \"integer\"}; found \(value.typeName)")
            return []
        }
        var params: [FlowRule.Param] = []
        let typeNames = FlowRule.ParamType.allCases.map(\.rawValue).joined(separator: ", ")
        for member in object.members {
            let memberPath = path.appending(member.key)
            guard var text = member.value.stringValue else {
                report(memberPath, "a param type is a string (\(typeNames), with a trailing ? when optional); found \(member.value.typeName)")
                continue
            }
            var required = true
            if text.hasSuffix("?") {
                required = false
                text.removeLast()
            }
            guard let type = FlowRule.ParamType(rawValue: text) else {
                report(memberPath, "unknown param type \(member.value.abbreviatedJSON()); expected one of \(typeNames), with a trailing ? when optional")
                continue
            }
            params.append(FlowRule.Param(name: member.key, type: type, required: required))
        }
        return params
    }
}
