// DefinitionReader+effects: reading a rule's `do` and `guard` — push, pop, present, select a tab, and the results a screen returns.

import JSON

extension DefinitionReader {
    mutating func readEffects(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> [FlowEffect] {
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

    mutating func readEffect(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> FlowEffect? {
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
        case "setSections", "setRows", "insertRow", "removeRow", "moveRow", "updateRow":
            effect = readListEffect(member.key, argument, at: effectPath)
        case "setUser":
            guard let values = argument.objectValue, !values.isEmpty else {
                report(effectPath, "setUser takes a non-empty object of user-state keys and values, such as {\"onboarded\": true}; found \(argument.abbreviatedJSON())")
                return nil
            }
            let before = problems.count
            for value in values.members where value.key.isEmpty {
                report(effectPath, "setUser keys must be non-empty")
            }
            if uploading { checkStorable(argument, at: effectPath) }
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

    /// Reports each key and string a `setUser` writes as it is that holds U+0000: no user state
    /// can keep it (PostgreSQL's jsonb refuses it), so the engine would refuse every action the
    /// rule handles. A param reference is judged when an action brings its value. Only for an
    /// upload: a definition stored before the check, and the bundles made of it, still read.
    mutating func checkStorable(_ value: JSONValue, at path: JSONPointer) {
        switch value {
        case .string(let text) where text.utf8.contains(0):
            report(path, "setUser cannot store a string holding the character U+0000")
        case .object(let object) where !object.contains(key: "$param"):
            for member in object.members {
                let memberPath = path.appending(member.key)
                if member.key.utf8.contains(0) {
                    report(memberPath, "setUser cannot store a key holding the character U+0000")
                }
                checkStorable(member.value, at: memberPath)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() { checkStorable(element, at: path.appending(index)) }
        default:
            break
        }
    }

    /// `{"into": param, "value": …, "to"?: feature}`.
    mutating func readResult(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.ScreenResult? {
        guard let object = value.objectValue else {
            report(path, "result takes {\"into\": param, \"value\": value, \"to\"?: feature}; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: ["into", "value", "to"], at: path, what: "result")
        var into: String?
        if let rawInto = object["into"] {
            if let name = rawInto.stringValue, !name.isEmpty, name.unicodeScalars.count <= 200 {
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
    mutating func checkResults(_ effects: [FlowEffect], _ raw: JSONValue, at path: JSONPointer, declaresParams: Bool) {
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
        let undeclared = paramReferences.contains { reference in
            reference.path.tokens.starts(with: value.tokens) && !(ruleMatchesRows && FlowAction.rowParams.contains(reference.name))
        }
        if !declaresParams, undeclared {
            report(
                value,
                "a result's value must have a declared type: declare the params it uses in this rule's params, such as \"params\": {\"address\": \"object\"}")
        }
    }

    /// `{"when": condition, "else": effect or [effects]}`: the else effects show exactly one flow.
    mutating func readGuard(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> FlowGuard? {
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

    static func showsFlow(_ effect: FlowEffect) -> Bool {
        switch effect {
        case .present, .push(.flow): return true
        default: return false
        }
    }

    mutating func readPopTo(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.PopTarget? {
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

    mutating func readPresent(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.Presentation? {
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

    mutating func readStyle(_ value: JSONValue, at path: JSONPointer) -> FlowEffect.PresentationStyle? {
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

    mutating func readSelectTab(_ value: JSONValue, at path: JSONPointer, params: [FlowRule.Param]) -> FlowEffect.TabChoice? {
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
}
