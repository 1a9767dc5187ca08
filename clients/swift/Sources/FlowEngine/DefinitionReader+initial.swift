// DefinitionReader+initial: reading `initial` — its entries and their targets, and the features and params objects that effects read too.

import JSON

extension DefinitionReader {
    mutating func readInitial(_ value: JSONValue?, at path: JSONPointer) -> [FlowDefinition.InitialEntry]? {
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

    mutating func readInitialEntry(_ value: JSONValue, at path: JSONPointer) -> FlowDefinition.InitialEntry? {
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
    mutating func readTarget(
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
        checkKeys(object, allowed: ["screen", "flow", "handoff", "params", "sections"] + extraKeys, at: path, what: "an entry")
        var sections: JSONValue?
        if let rawSections = object["sections"] {
            guard object["screen"] != nil else {
                report(path.appending("sections"), "sections belong to a screen entry {\"screen\": feature, \"sections\": […]}")
                return nil
            }
            sections = readSectionsTemplate(rawSections, at: path.appending("sections"), allowParamReferences: allowParamReferences)
            if sections == nil { return nil }
        }
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
            return .screen(feature: feature, params: params, sections: sections)
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

    mutating func readFeature(_ value: JSONValue, at path: JSONPointer) -> String? {
        guard let feature = value.stringValue, !feature.isEmpty, feature.unicodeScalars.count <= 200 else {
            report(path, "a feature must be a non-empty string of at most 200 characters, such as \"onboarding.first\"; found \(value.abbreviatedJSON())")
            return nil
        }
        return feature
    }

    /// Reads a params object; `{"$param": name}` references are allowed only in effects, where
    /// an action supplies them.
    mutating func readParamsObject(_ value: JSONValue, at path: JSONPointer, allowParamReferences: Bool) -> JSONObject? {
        guard let object = value.objectValue else {
            report(path, "params must be an object; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkParamReferences(value, at: path, allowed: allowParamReferences)
        return problems.count == before ? object : nil
    }

    mutating func checkParamReferences(_ value: JSONValue, at path: JSONPointer, allowed: Bool) {
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
}
