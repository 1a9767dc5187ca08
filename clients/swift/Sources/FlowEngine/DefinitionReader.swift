// DefinitionReader: the checks that turn a definition's JSON into a FlowDefinition or a list of problems.

import JSON

/// Reads a definition document, recording every problem with its path and carrying on, so one
/// PUT reports everything wrong at once.
struct DefinitionReader {
    private(set) var problems: [DefinitionProblem] = []
    private var references: [FlowReference] = []
    private var kind: FlowKind?
    private var flowName = "this flow"
    /// The definition's `name` as written, once read.
    private var flowNameValue: String?
    private var tabCount: Int?

    /// `version` and `live` are what the server adds when it shows a stored definition; they are
    /// accepted and ignored so a definition read back can be uploaded again as it is.
    private static let definitionKeys = ["name", "kind", "initial", "selected", "on", "links", "description", "version", "live"]
    private static let ruleKeys = ["from", "via", "when", "interactive", "params", "do", "guard", "description"]
    static let reservedActions = ["interaction.update", "interaction.end", "interaction.cancel", "link", "link.cancel"]
    private static let operatorKeys = ["is", "isNot", "in", "notIn", "exists"]
    /// Rules for one action type, at most: far more than a flow needs, and the bound that keeps
    /// checking them against each other (``checkShadowing(_:at:)``) cheap for any body.
    static let maxRules = 64

    mutating func report(_ path: JSONPointer, _ message: String) {
        problems.append(DefinitionProblem(path: path.description, message: message))
    }

    // MARK: definition

    mutating func readDefinition(_ json: JSONValue) -> FlowDefinition? {
        let root = JSONPointer()
        guard case .object(let object) = json else {
            report(root, "a flow definition is an object with name, kind, initial and on; found \(json.typeName)")
            return nil
        }
        checkKeys(object, allowed: Self.definitionKeys, at: root, what: "a flow definition")

        let name = readName(object["name"], at: root.appending("name"))
        if let name { flowName = "'\(name)'" }
        flowNameValue = name
        kind = readKind(object["kind"], at: root.appending("kind"))
        let initial = readInitial(object["initial"], at: root.appending("initial"))
        if kind == .tabbed, let initial { tabCount = initial.count }
        let selected = readSelected(object["selected"], at: root.appending("selected"))
        let handlers = readHandlers(object["on"], at: root.appending("on"))
        let links = readLinks(object["links"], at: root.appending("links"), flow: name)
        var summary: String?
        if let text = object["description"] {
            summary = text.stringValue
            if summary == nil { report(root.appending("description"), "description must be a string; found \(text.typeName)") }
        }
        if let version = object["version"], version.integerValue == nil {
            report(root.appending("version"), "version must be an integer (it is set by the server and ignored here); found \(version.typeName)")
        }
        if let live = object["live"], live.boolValue == nil {
            report(root.appending("live"), "live must be a boolean (it is set by the server and ignored here); found \(live.typeName)")
        }
        guard let name, let kind, let initial, let handlers, problems.isEmpty else { return nil }
        return FlowDefinition(
            name: name, kind: kind, initial: initial, selected: selected, handlers: handlers,
            summary: summary, links: links, flowReferences: references)
    }

    private mutating func readName(_ value: JSONValue?, at path: JSONPointer) -> String? {
        guard let value else {
            report(path, "name is required: the flow's name, such as \"onboarding\"")
            return nil
        }
        guard let name = value.stringValue else {
            report(path, "name must be a string; found \(value.typeName)")
            return nil
        }
        guard Self.isValidFlowName(name) else {
            report(path, "name \(value.abbreviatedJSON()) is not a valid flow name; use 1 to 100 letters, digits, '.', '_' or '-'")
            return nil
        }
        return name
    }

    /// Flow names appear in URLs (`/v1/flows/{name}`), so they stay URL-safe.
    static func isValidFlowName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 100 else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    private mutating func readKind(_ value: JSONValue?, at path: JSONPointer) -> FlowKind? {
        guard let value else {
            report(path, "kind is required: \"stacked\" or \"tabbed\"")
            return nil
        }
        guard let text = value.stringValue, let kind = FlowKind(rawValue: text) else {
            report(path, "kind must be \"stacked\" or \"tabbed\"; found \(value.abbreviatedJSON())")
            return nil
        }
        return kind
    }

    private mutating func readSelected(_ value: JSONValue?, at path: JSONPointer) -> Int {
        guard let value else { return 0 }
        guard kind != .stacked else {
            report(path, "selected is only for tabbed flows; \(flowName) is stacked")
            return 0
        }
        guard let index = value.integerValue else {
            report(path, "selected must be an integer tab index; found \(value.typeName)")
            return 0
        }
        if let tabCount, index < 0 || index >= tabCount {
            report(path, "selected \(index) is out of range; \(flowName) has tabs 0...\(max(tabCount - 1, 0))")
            return 0
        }
        return index
    }

    // MARK: initial

    private mutating func readInitial(_ value: JSONValue?, at path: JSONPointer) -> [FlowDefinition.InitialEntry]? {
        guard let value else {
            report(path, "initial is required: the entries the flow starts with, such as [\"onboarding.first\"]")
            return nil
        }
        guard let elements = value.arrayValue else {
            report(path, "initial must be an array of entries; found \(value.typeName)")
            return nil
        }
        guard !elements.isEmpty else {
            let what = kind == .tabbed ? "a tabbed flow needs at least one tab" : "a stacked flow needs at least one entry"
            report(path, "initial is empty; \(what)")
            return nil
        }
        var entries: [FlowDefinition.InitialEntry] = []
        var valid = true
        for (index, element) in elements.enumerated() {
            if let entry = readInitialEntry(element, at: path.appending(index)) {
                entries.append(entry)
            } else {
                valid = false
            }
        }
        return valid ? entries : nil
    }

    private mutating func readInitialEntry(_ value: JSONValue, at path: JSONPointer) -> FlowDefinition.InitialEntry? {
        if case .string = value {
            guard let target = readTarget(value, at: path, stringIsFlow: false, allowParamReferences: false) else { return nil }
            return FlowDefinition.InitialEntry(target: target)
        }
        guard case .object(var object) = value else {
            report(path, "an initial entry is a feature name, {\"screen\": feature}, or {\"flow\": name}; found \(value.typeName)")
            return nil
        }
        var when: FlowCondition?
        var valid = true
        if let condition = object["when"] {
            when = readCondition(condition, at: path.appending("when"))
            valid = when != nil
            object["when"] = nil
        }
        // `when` was read above; the rest of the object is an ordinary target (`when` is named
        // among the allowed keys only for the message about an unknown one).
        guard let target = readTarget(.object(object), at: path, stringIsFlow: false, allowParamReferences: false, extraKeys: ["when"]),
            valid
        else { return nil }
        if case .flow(let name, _) = target {
            references.append(FlowReference(flow: name, path: path.appending("flow"), isInitial: true))
        }
        return FlowDefinition.InitialEntry(target: target, when: when)
    }

    /// Reads a screen or flow target: a string (a feature, or a flow name when `stringIsFlow`),
    /// `{"screen": feature, "params"?}`, `{"flow": name, "params"?}` or `{"handoff": kind,
    /// "params"?}`. Flow references of effects are recorded by the caller, which knows the effect.
    private mutating func readTarget(
        _ value: JSONValue, at path: JSONPointer, stringIsFlow: Bool, allowParamReferences: Bool, extraKeys: [String] = []
    ) -> EntryTarget? {
        if let text = value.stringValue {
            if stringIsFlow {
                guard Self.isValidFlowName(text) else {
                    report(path, "\(value.abbreviatedJSON()) is not a valid flow name; use 1 to 100 letters, digits, '.', '_' or '-'")
                    return nil
                }
                return .flow(name: text, params: [:])
            }
            guard let feature = readFeature(value, at: path) else { return nil }
            return .screen(feature: feature, params: [:])
        }
        guard case .object(let object) = value else {
            report(path, "expected a feature name, {\"screen\": feature}, {\"flow\": name} or {\"handoff\": kind}; found \(value.typeName)")
            return nil
        }
        checkKeys(object, allowed: ["screen", "flow", "handoff", "params"] + extraKeys, at: path, what: "an entry")
        var params = JSONObject()
        var valid = true
        if let rawParams = object["params"] {
            if let parsed = readParamsObject(rawParams, at: path.appending("params"), allowParamReferences: allowParamReferences) {
                params = parsed
            } else {
                valid = false
            }
        }
        if let handoff = object["handoff"] {
            guard object["screen"] == nil, object["flow"] == nil else {
                report(path, "an entry has one of \"screen\", \"flow\" or \"handoff\", not several")
                return nil
            }
            guard let kind = readFeature(handoff, at: path.appending("handoff")), valid else { return nil }
            return .handoff(kind: kind, params: params)
        }
        switch (object["screen"], object["flow"]) {
        case (let screen?, nil):
            guard let feature = readFeature(screen, at: path.appending("screen")), valid else { return nil }
            return .screen(feature: feature, params: params)
        case (nil, let flow?):
            guard let name = flow.stringValue, Self.isValidFlowName(name) else {
                report(path.appending("flow"), "flow must be a flow name (1 to 100 letters, digits, '.', '_' or '-'); found \(flow.abbreviatedJSON())")
                return nil
            }
            guard valid else { return nil }
            return .flow(name: name, params: params)
        case (nil, nil):
            report(path, "an entry needs \"screen\" (a feature), \"flow\" (a flow name) or \"handoff\" (a native step's kind)")
            return nil
        case (_?, _?):
            report(path, "an entry has either \"screen\" or \"flow\", not both")
            return nil
        }
    }

    private mutating func readFeature(_ value: JSONValue, at path: JSONPointer) -> String? {
        guard let feature = value.stringValue, !feature.isEmpty, feature.utf8.count <= 200 else {
            report(path, "a feature must be a non-empty string of at most 200 bytes, such as \"onboarding.first\"; found \(value.abbreviatedJSON())")
            return nil
        }
        return feature
    }

    /// Reads a params object; `{"$param": name}` references are allowed only in effects, where
    /// an action supplies them.
    private mutating func readParamsObject(_ value: JSONValue, at path: JSONPointer, allowParamReferences: Bool) -> JSONObject? {
        guard let object = value.objectValue else {
            report(path, "params must be an object; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkParamReferences(value, at: path, allowed: allowParamReferences)
        return problems.count == before ? object : nil
    }

    private mutating func checkParamReferences(_ value: JSONValue, at path: JSONPointer, allowed: Bool) {
        switch value {
        case .object(let object):
            if object.contains(key: "$param") {
                guard allowed else {
                    report(path, "{\"$param\": …} references an action's param and is only allowed in effects")
                    return
                }
                guard object.count == 1, let name = object["$param"]?.stringValue, !name.isEmpty else {
                    report(path, "a param reference is written {\"$param\": \"name\"} with nothing else in the object")
                    return
                }
                paramReferences.append((name, path))
                return
            }
            for member in object.members {
                checkParamReferences(member.value, at: path.appending(member.key), allowed: allowed)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                checkParamReferences(element, at: path.appending(index), allowed: allowed)
            }
        default:
            break
        }
    }

    /// Param references of the rule being read, checked against its declared params.
    private var paramReferences: [(name: String, path: JSONPointer)] = []

    // MARK: handlers and rules

    private mutating func readHandlers(_ value: JSONValue?, at path: JSONPointer) -> [FlowDefinition.ActionHandler]? {
        guard let value else { return [] }
        guard let object = value.objectValue else {
            report(path, "on must be an object mapping action types to lists of rules; found \(value.typeName)")
            return nil
        }
        var handlers: [FlowDefinition.ActionHandler] = []
        var valid = true
        for member in object.members {
            let handlerPath = path.appending(member.key)
            if member.key.isEmpty || member.key.utf8.count > 200 {
                report(handlerPath, "an action type must be a non-empty string of at most 200 bytes")
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
    private mutating func checkShadowing(_ rules: [FlowRule], at path: JSONPointer) {
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
                if covers(sources[earlier], rule.from) && covers(rules[earlier].via.map(Set.init), rule.via) {
                    var scopes: [String] = []
                    if let from = rules[earlier].from { scopes.append("from \(Self.abbreviatedList(from))") }
                    if let via = rules[earlier].via { scopes.append("via \(Self.abbreviatedList(via))") }
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

    private mutating func readRule(_ value: JSONValue, at path: JSONPointer) -> FlowRule? {
        guard let object = value.objectValue else {
            report(path, "a rule is an object with optional from, via, when, interactive, params and a do list; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: Self.ruleKeys, at: path, what: "a rule")
        paramReferences = []

        var from: [String]?
        if let rawFrom = object["from"] { from = readFrom(rawFrom, at: path.appending("from")) }
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
            for reference in paramReferences {
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
            from: from, via: via, when: when, interactive: interactive, params: params, effects: effects, summary: summary,
            guarded: guarded)
    }

    /// `via`: a child flow's name, or a non-empty array of them; each is a flow reference, so an
    /// unknown name is reported when the catalog is checked.
    private mutating func readVia(_ value: JSONValue, at path: JSONPointer) -> [String]? {
        let elements: [(JSONValue, JSONPointer)]
        if value.stringValue != nil {
            elements = [(value, path)]
        } else if let array = value.arrayValue, !array.isEmpty {
            elements = array.enumerated().map { ($0.element, path.appending($0.offset)) }
        } else {
            report(path, "via must be a child flow's name or a non-empty array of them, such as \"onboarding\"; found \(value.abbreviatedJSON())")
            return nil
        }
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

    private mutating func readFrom(_ value: JSONValue, at path: JSONPointer) -> [String]? {
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

    private mutating func readParamDeclarations(_ value: JSONValue, at path: JSONPointer) -> [FlowRule.Param] {
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

    // MARK: effects

    private mutating func readEffects(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> [FlowEffect] {
        guard let elements = value.arrayValue, !elements.isEmpty else {
            report(path, "do must be a non-empty array of effects, such as [{\"push\": \"feature\"}]; found \(value.abbreviatedJSON())")
            return []
        }
        var effects: [FlowEffect] = []
        for (index, element) in elements.enumerated() {
            if let effect = readEffect(element, at: path.appending(index), params: params) { effects.append(effect) }
        }
        if elements.count > 1 {
            for (index, element) in elements.enumerated() where element.objectValue?.contains(key: "bubble") == true {
                report(
                    path.appending(index).appending("bubble"),
                    "bubble hands the action to the parent flow, so it must be the only effect of its rule")
            }
        }
        return effects
    }

    private mutating func readEffect(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> FlowEffect? {
        guard let object = value.objectValue, object.count == 1, let member = object.members.first else {
            let found = value.objectValue.map { "an object with \($0.count) keys" } ?? value.typeName
            report(path, "an effect is an object with exactly one key naming it, such as {\"push\": \"feature\"}; found \(found)")
            return nil
        }
        let effectPath = path.appending(member.key)
        let argument = member.value
        let effect: FlowEffect?
        switch member.key {
        case "push", "setRoot", "replaceRoot":
            let stringIsFlow = member.key == "replaceRoot"
            guard let target = readTarget(argument, at: effectPath, stringIsFlow: stringIsFlow, allowParamReferences: true) else {
                return nil
            }
            if case .flow(let name, _) = target {
                let referencePath = argument.stringValue != nil ? effectPath : effectPath.appending("flow")
                references.append(FlowReference(flow: name, path: referencePath, isInitial: false))
            }
            switch member.key {
            case "push": effect = .push(target)
            case "setRoot": effect = .setRoot(target)
            default: effect = .replaceRoot(target)
            }
        case "pop", "popToRoot", "dismiss", "dismissAll", "bubble":
            guard let arguments = argument.objectValue, arguments.isEmpty else {
                report(effectPath, "\(member.key) takes no arguments; write {\"\(member.key)\": {}}")
                return nil
            }
            switch member.key {
            case "pop": effect = .pop
            case "popToRoot": effect = .popToRoot
            case "dismiss": effect = .dismiss
            case "dismissAll": effect = .dismissAll
            default: effect = .bubble
            }
        case "popTo":
            effect = readPopTo(argument, at: effectPath).map(FlowEffect.popTo)
        case "present":
            effect = readPresent(argument, at: effectPath).map(FlowEffect.present)
        case "selectTab":
            effect = readSelectTab(argument, at: effectPath, params: params).map(FlowEffect.selectTab)
        case "result":
            effect = readResult(argument, at: effectPath).map(FlowEffect.result)
        case "setUser":
            guard let values = argument.objectValue, !values.isEmpty else {
                report(effectPath, "setUser takes a non-empty object of user-state keys and values, such as {\"onboarded\": true}; found \(argument.abbreviatedJSON())")
                return nil
            }
            let before = problems.count
            for value in values.members where value.key.isEmpty {
                report(effectPath, "setUser keys must be non-empty")
            }
            checkParamReferences(argument, at: effectPath, allowed: true)
            guard problems.count == before else { return nil }
            effect = .setUser(values)
        default:
            report(effectPath, "unknown effect \(JSONValue.string(member.key).abbreviatedJSON()); expected one of \(FlowEffect.names.joined(separator: ", "))")
            return nil
        }
        guard let effect else { return nil }
        if let kind {
            if kind == .tabbed && effect.needsStack {
                report(effectPath, "\(effect.name) changes a stack, but \(flowName) is tabbed; use selectTab, or bubble the action to a stacked parent")
                return nil
            }
            if kind == .stacked, case .selectTab = effect {
                report(effectPath, "selectTab needs a tabbed flow, but \(flowName) is stacked; bubble the action to the tabbed flow instead")
                return nil
            }
        }
        return effect
    }

    /// `{"into": param, "value": …, "to"?: feature}`.
    private mutating func readResult(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.ScreenResult? {
        guard let object = value.objectValue else {
            report(path, "result takes {\"into\": param, \"value\": value, \"to\"?: feature}; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: ["into", "value", "to"], at: path, what: "result")
        var into: String?
        if let rawInto = object["into"] {
            if let name = rawInto.stringValue, !name.isEmpty, name.utf8.count <= 200 {
                into = name
            } else {
                report(path.appending("into"), "into names the param of the receiving screen that gets the value, a non-empty string; found \(rawInto.abbreviatedJSON())")
            }
        } else {
            report(path, "result needs \"into\": the param of the receiving screen that gets the value, such as \"address\"")
        }
        let resultValue = object["value"]
        if let resultValue {
            checkParamReferences(resultValue, at: path.appending("value"), allowed: true)
        } else {
            report(path, "result needs \"value\": what to return, such as {\"$param\": \"address\"}")
        }
        var to: String?
        if let rawTo = object["to"] { to = readFeature(rawTo, at: path.appending("to")) }
        guard let into, let resultValue, problems.count == before else { return nil }
        return FlowEffect.ScreenResult(into: into, value: resultValue, to: to)
    }

    /// A rule returns at most one result, after an effect that brings a screen back on top, and
    /// the value's params have declared types (as a link's placeholders do).
    private mutating func checkResults(_ effects: [FlowEffect], _ raw: JSONValue, at path: JSONPointer, declaresParams: Bool) {
        guard let elements = raw.arrayValue else { return }
        let indices = elements.indices.filter { elements[$0].objectValue?.contains(key: "result") == true }
        guard let first = indices.first else { return }
        for index in indices.dropFirst() {
            report(path.appending(index).appending("result"), "a rule returns at most one result; \(path.appending(first)) already does")
        }
        if !effects.contains(where: \.revealsScreen) {
            report(
                path.appending(first).appending("result"),
                "result returns a value to the screen that a pop, popTo, popToRoot or dismiss of the same rule brings back on top; this rule has none")
        }
        // The value's references were collected with the rule's others when the effect was read.
        let value = path.appending(first).appending("result").appending("value")
        if !declaresParams, paramReferences.contains(where: { $0.path.tokens.starts(with: value.tokens) }) {
            report(
                value,
                "a result's value must have a declared type: declare the params it uses in this rule's params, such as \"params\": {\"address\": \"object\"}")
        }
    }

    /// `{"when": condition, "else": effect or [effects]}`: the else effects show exactly one flow.
    private mutating func readGuard(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> FlowGuard? {
        guard let object = value.objectValue else {
            report(path, "guard takes {\"when\": condition, \"else\": effects that show the flow satisfying it}; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: ["when", "else"], at: path, what: "a guard")
        var condition: FlowCondition?
        if let rawWhen = object["when"] {
            condition = readCondition(rawWhen, at: path.appending("when"))
        } else {
            report(path, "a guard needs \"when\": what must hold, such as {\"user\": \"loggedIn\", \"is\": true}")
        }
        var otherwise: [FlowEffect] = []
        if let rawElse = object["else"] {
            let elsePath = path.appending("else")
            let listPath = rawElse.arrayValue != nil ? elsePath : nil
            let reported = problems.count
            if listPath != nil {
                otherwise = readEffects(rawElse, at: elsePath, params: params)
            } else {
                otherwise = readEffect(rawElse, at: elsePath, params: params).map { [$0] } ?? []
            }
            if problems.count == reported {
                let shown = otherwise.indices.filter { Self.showsFlow(otherwise[$0]) }
                let place = { (index: Int) in listPath.map { $0.appending(index) } ?? elsePath }
                if shown.isEmpty {
                    report(elsePath, "a guard's else shows the flow that satisfies it: a present of a flow, or a push of {\"flow\": name}")
                } else if shown.count > 1 {
                    report(place(shown[1]), "a guard's else shows one flow; the action resumes when that flow is done")
                }
                for (index, effect) in otherwise.enumerated() {
                    switch effect {
                    case .present, .push(.flow), .setUser:
                        break
                    default:
                        report(
                            place(index).appending(effect.name),
                            "a guard's else cannot \(effect.name): it shows its flow (present, or push of {\"flow\": name}) and may setUser, and keeps the screen the action came from under it, so the action can resume there")
                    }
                }
            }
        } else {
            report(path, "a guard needs \"else\": the effects that show the flow satisfying it, such as {\"present\": {\"flow\": \"login\"}}")
        }
        guard let condition, problems.count == before else { return nil }
        return FlowGuard(when: condition, otherwise: otherwise)
    }

    private static func showsFlow(_ effect: FlowEffect) -> Bool {
        switch effect {
        case .present, .push(.flow): return true
        default: return false
        }
    }

    private mutating func readPopTo(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.PopTarget? {
        if value.stringValue != nil {
            return readFeature(value, at: path).map(FlowEffect.PopTarget.feature)
        }
        guard let object = value.objectValue else {
            report(path, "popTo takes a feature name, {\"feature\": name} or {\"id\": \"e3\"}; found \(value.typeName)")
            return nil
        }
        checkKeys(object, allowed: ["feature", "id"], at: path, what: "popTo")
        switch (object["feature"], object["id"]) {
        case (let feature?, nil):
            return readFeature(feature, at: path.appending("feature")).map(FlowEffect.PopTarget.feature)
        case (nil, let id?):
            if let text = id.stringValue {
                guard EntryId.parse(text) != nil else {
                    report(path.appending("id"), "id must be an entry id such as \"e3\" or \"f2\"; found \(id.abbreviatedJSON())")
                    return nil
                }
                return .id(text)
            }
            guard let reference = id.objectValue, reference.count == 1, let name = reference["$param"]?.stringValue, !name.isEmpty else {
                report(path.appending("id"), "id must be an entry id such as \"e3\" or a reference {\"$param\": \"name\"}; found \(id.abbreviatedJSON())")
                return nil
            }
            paramReferences.append((name, path.appending("id")))
            return .idParam(name)
        case (nil, nil):
            report(path, "popTo needs \"feature\" or \"id\"")
            return nil
        case (_?, _?):
            report(path, "popTo takes either \"feature\" or \"id\", not both")
            return nil
        }
    }

    private mutating func readPresent(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.Presentation? {
        if let name = value.stringValue {
            guard Self.isValidFlowName(name) else {
                report(path, "present takes a flow name or {\"flow\": name, \"params\"?, \"style\"?}; found \(value.abbreviatedJSON())")
                return nil
            }
            references.append(FlowReference(flow: name, path: path, isInitial: false))
            return FlowEffect.Presentation(flow: name)
        }
        guard let object = value.objectValue else {
            report(path, "present takes a flow name or {\"flow\": name, \"params\"?, \"style\"?}; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: ["flow", "params", "style"], at: path, what: "present")
        var flow: String?
        if let rawFlow = object["flow"] {
            if let name = rawFlow.stringValue, Self.isValidFlowName(name) {
                flow = name
                references.append(FlowReference(flow: name, path: path.appending("flow"), isInitial: false))
            } else {
                report(path.appending("flow"), "flow must be a flow name; found \(rawFlow.abbreviatedJSON())")
            }
        } else {
            report(path, "present needs \"flow\": the name of the flow to present")
        }
        var params = JSONObject()
        if let rawParams = object["params"] {
            params = readParamsObject(rawParams, at: path.appending("params"), allowParamReferences: true) ?? [:]
        }
        var style = FlowEffect.PresentationStyle.fixed("automatic")
        if let rawStyle = object["style"] {
            style = readStyle(rawStyle, at: path.appending("style")) ?? style
        }
        guard let flow, problems.count == before else { return nil }
        return FlowEffect.Presentation(flow: flow, params: params, style: style)
    }

    private mutating func readStyle(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.PresentationStyle? {
        let known = FlowEffect.PresentationStyle.knownStyles
        func single(_ value: JSONValue, at path: JSONPointer) -> String? {
            guard let style = value.stringValue, known.contains(style) else {
                report(path, "unknown presentation style \(value.abbreviatedJSON()); expected one of \(known.joined(separator: ", "))")
                return nil
            }
            return style
        }
        if value.stringValue != nil {
            return single(value, at: path).map(FlowEffect.PresentationStyle.fixed)
        }
        guard let object = value.objectValue else {
            report(path, "style is a style name or {\"compact\": style, \"regular\": style}; found \(value.typeName)")
            return nil
        }
        checkKeys(object, allowed: ["compact", "regular"], at: path, what: "an adaptive style")
        guard let rawCompact = object["compact"], let rawRegular = object["regular"] else {
            report(path, "an adaptive style needs both \"compact\" and \"regular\"")
            return nil
        }
        let compact = single(rawCompact, at: path.appending("compact"))
        let regular = single(rawRegular, at: path.appending("regular"))
        guard let compact, let regular else { return nil }
        return .adaptive(compact: compact, regular: regular)
    }

    private mutating func readSelectTab(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> FlowEffect.TabChoice? {
        if let index = value.integerValue {
            guard index >= 0 else {
                report(path, "selectTab takes a tab index from 0; found \(index)")
                return nil
            }
            if let tabCount, index >= tabCount {
                report(path, "selectTab \(index) is out of range; \(flowName) has tabs 0...\(max(tabCount - 1, 0))")
                return nil
            }
            return .index(index)
        }
        guard let reference = value.objectValue, reference.count == 1, let name = reference["$param"]?.stringValue, !name.isEmpty else {
            report(path, "selectTab takes a tab index or a reference {\"$param\": \"index\"}; found \(value.abbreviatedJSON())")
            return nil
        }
        if let declared = params.first(where: { $0.name == name }), declared.type != .integer, declared.type != .any {
            report(path.appending("$param"), "selectTab needs an integer, but param \(JSONValue.string(name).jsonText) is declared \(declared.type.rawValue)")
            return nil
        }
        paramReferences.append((name, path))
        return .param(name)
    }

    // MARK: conditions

    mutating func readCondition(_ value: JSONValue, at path: JSONPointer) -> FlowCondition? {
        guard let object = value.objectValue else {
            report(path, "a condition is an object such as {\"flag\": \"key\", \"is\": true}; found \(value.typeName)")
            return nil
        }
        for combinator in ["all", "any", "not"] where object.contains(key: combinator) {
            guard object.count == 1, let argument = object[combinator] else {
                report(path, "\(combinator) must be the only key of its condition")
                return nil
            }
            let argumentPath = path.appending(combinator)
            if combinator == "not" {
                return readCondition(argument, at: argumentPath).map(FlowCondition.not)
            }
            guard let elements = argument.arrayValue, !elements.isEmpty else {
                report(argumentPath, "\(combinator) takes a non-empty array of conditions; found \(argument.abbreviatedJSON())")
                return nil
            }
            var conditions: [FlowCondition] = []
            for (index, element) in elements.enumerated() {
                if let condition = readCondition(element, at: argumentPath.appending(index)) { conditions.append(condition) }
            }
            guard conditions.count == elements.count else { return nil }
            return combinator == "all" ? .all(conditions) : .any(conditions)
        }

        let sourceNames = FlowCondition.Source.allCases.map(\.rawValue)
        let allowed = sourceNames + Self.operatorKeys
        checkKeys(object, allowed: allowed, at: path, what: "a condition")
        let sources = object.members.filter { sourceNames.contains($0.key) }
        let operators = object.members.filter { Self.operatorKeys.contains($0.key) }
        guard sources.count == 1, let sourceMember = sources.first, let source = FlowCondition.Source(rawValue: sourceMember.key) else {
            report(path, "a condition names exactly one of \(sourceNames.joined(separator: ", ")), or is all, any or not; found \(sources.count)")
            return nil
        }
        guard let key = sourceMember.value.stringValue, !key.isEmpty else {
            report(path.appending(sourceMember.key), "\(sourceMember.key) must be a non-empty key name; found \(sourceMember.value.abbreviatedJSON())")
            return nil
        }
        guard operators.count == 1, let operatorMember = operators.first else {
            report(path, "a condition has exactly one of \(Self.operatorKeys.joined(separator: ", ")); found \(operators.count)")
            return nil
        }
        let operatorPath = path.appending(operatorMember.key)
        let test: FlowCondition.Test
        switch operatorMember.key {
        case "is": test = .equals(operatorMember.value)
        case "isNot": test = .notEquals(operatorMember.value)
        case "in", "notIn":
            guard let candidates = operatorMember.value.arrayValue else {
                report(operatorPath, "\(operatorMember.key) takes an array of values; found \(operatorMember.value.typeName)")
                return nil
            }
            test = operatorMember.key == "in" ? .oneOf(candidates) : .noneOf(candidates)
        default:
            guard let flag = operatorMember.value.boolValue else {
                report(operatorPath, "exists takes true or false; found \(operatorMember.value.typeName)")
                return nil
            }
            test = .exists(flag)
        }
        return .test(source, key: key, test)
    }

    // MARK: helpers

    /// Unknown keys are reported because a typo (`"frm"`) would otherwise silently change what
    /// a rule means.
    mutating func checkKeys(_ object: JSONObject, allowed: [String], at path: JSONPointer, what: String) {
        for member in object.members where !allowed.contains(member.key) {
            report(
                path.appending(member.key),
                "unknown key \(JSONValue.string(member.key).abbreviatedJSON()) in \(what); expected one of \(allowed.joined(separator: ", "))")
        }
    }
}
