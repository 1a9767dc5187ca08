// DefinitionReader+links: reading the root flow's `links` — patterns, placeholder types, conditions and actions.

import JSON

extension DefinitionReader {
    private static let linkKeys = ["pattern", "params", "when", "actions", "description"]
    /// Links per flow, at most: matching a URI tries each, so the bound keeps it cheap.
    static let maxLinks = 256
    /// Actions per link, at most.
    static let maxLinkActions = 32

    /// Reads `links`: only the root flow may have them, and no two patterns may match the same
    /// URIs (one would never be chosen).
    mutating func readLinks(_ value: JSONValue?, at path: JSONPointer, flow: String?) -> [FlowLink] {
        guard let value else { return [] }
        if let flow, flow != FlowCatalog.rootFlowName {
            report(path, "only the root flow \(JSONValue.string(FlowCatalog.rootFlowName).jsonText) declares links, since a link rebuilds the whole stack; move them to its definition")
            return []
        }
        guard let elements = value.arrayValue else {
            report(path, "links must be an array of links such as {\"pattern\": \"/home\"}; found \(value.typeName)")
            return []
        }
        guard elements.count <= Self.maxLinks else {
            report(path, "there are \(elements.count) links; a flow may declare at most \(Self.maxLinks)")
            return []
        }
        var links: [FlowLink] = []
        var shapes: [LinkPattern.Shape: (index: Int, pattern: String)] = [:]
        for (index, element) in elements.enumerated() {
            guard let link = readLink(element, at: path.appending(index)) else { continue }
            let shape = link.pattern.shape
            if let other = shapes[shape] {
                report(
                    path.appending(index).appending("pattern"),
                    "pattern \(JSONValue.string(link.pattern.text).jsonText) matches the same URIs as \(path.appending(other.index).appending("pattern")) (\(JSONValue.string(other.pattern).jsonText)), so one of them would never be followed; remove one or make them differ by a literal")
            } else {
                shapes[shape] = (index, link.pattern.text)
            }
            links.append(link)
        }
        return links
    }

    private mutating func readLink(_ value: JSONValue, at path: JSONPointer) -> FlowLink? {
        guard let object = value.objectValue else {
            report(path, "a link is an object {pattern, params?, when?, actions?, description?}; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, allowed: Self.linkKeys, at: path, what: "a link")
        var pattern: LinkPattern?
        if let raw = object["pattern"] {
            if let text = raw.stringValue {
                do throws(LinkPattern.SyntaxError) {
                    pattern = try LinkPattern(text)
                } catch {
                    report(path.appending("pattern"), error.message)
                }
            } else {
                report(path.appending("pattern"), "pattern must be a string such as \"/modal/{content}\"; found \(raw.typeName)")
            }
        } else {
            report(path, "a link needs a pattern, such as \"/modal/{content}\"")
        }
        let placeholders = pattern?.placeholders
        var params: [FlowRule.Param] = []
        if let raw = object["params"] {
            params = readLinkParams(raw, at: path.appending("params"), placeholders: placeholders)
        }
        var when: FlowCondition?
        if let raw = object["when"], let condition = readCondition(raw, at: path.appending("when")) {
            when = condition
            if let placeholders { checkParamSources(condition, at: path.appending("when"), placeholders: placeholders) }
        }
        var actions: [FlowAction] = []
        if let raw = object["actions"] {
            actions = readLinkActions(raw, at: path.appending("actions"), placeholders: placeholders)
        }
        var summary: String?
        if let text = object["description"] {
            summary = text.stringValue
            if summary == nil { report(path.appending("description"), "description must be a string; found \(text.typeName)") }
        }
        guard let pattern, problems.count == before else { return nil }
        return FlowLink(pattern: pattern, params: params, when: when, actions: actions, summary: summary)
    }

    /// `{"tab": "integer"}`: each key a placeholder of the pattern, each type one a URI can carry.
    private mutating func readLinkParams(_ value: JSONValue, at path: JSONPointer, placeholders: [String]?) -> [FlowRule.Param] {
        guard let object = value.objectValue else {
            report(path, "params must be an object mapping placeholders to types, such as {\"tab\": \"integer\"}; found \(value.typeName)")
            return []
        }
        let typeNames = FlowLink.paramTypes.map(\.rawValue).joined(separator: ", ")
        var params: [FlowRule.Param] = []
        for member in object.members {
            let memberPath = path.appending(member.key)
            if let placeholders, !placeholders.contains(member.key) {
                let known = placeholders.isEmpty ? "it has none" : "it has " + placeholders.map { "{\($0)}" }.joined(separator: ", ")
                report(memberPath, "\(JSONValue.string(member.key).jsonText) is not a placeholder of the pattern; \(known)")
                continue
            }
            guard let text = member.value.stringValue, let type = FlowRule.ParamType(rawValue: text), FlowLink.paramTypes.contains(type) else {
                report(memberPath, "a placeholder's type is one of \(typeNames); found \(member.value.abbreviatedJSON())")
                continue
            }
            params.append(FlowRule.Param(name: member.key, type: type))
        }
        return params
    }

    /// A `when` may read the captured values through `{"param": name}`; the name must be a
    /// placeholder, else the test would read a value that is never there.
    private mutating func checkParamSources(_ condition: FlowCondition, at path: JSONPointer, placeholders: [String]) {
        switch condition {
        case .test(let source, let key, _):
            if source == .param, !placeholders.contains(key) {
                report(path.appending("param"), "\(JSONValue.string(key).jsonText) is not a placeholder of the link's pattern; a link's param conditions read its captured values")
            }
        case .all(let conditions), .any(let conditions):
            let combinator = if case .all = condition { "all" } else { "any" }
            for (index, inner) in conditions.enumerated() {
                checkParamSources(inner, at: path.appending(combinator).appending(index), placeholders: placeholders)
            }
        case .not(let inner):
            checkParamSources(inner, at: path.appending("not"), placeholders: placeholders)
        }
    }

    private mutating func readLinkActions(_ value: JSONValue, at path: JSONPointer, placeholders: [String]?) -> [FlowAction] {
        guard let elements = value.arrayValue else {
            report(path, "actions must be an array of actions such as {\"type\": \"home.selectTab\", \"params\": {\"index\": 1}}; found \(value.typeName)")
            return []
        }
        guard elements.count <= Self.maxLinkActions else {
            report(path, "a link has \(elements.count) actions; it may have at most \(Self.maxLinkActions)")
            return []
        }
        var actions: [FlowAction] = []
        for (index, element) in elements.enumerated() {
            if let action = readLinkAction(element, at: path.appending(index), placeholders: placeholders) { actions.append(action) }
        }
        return actions
    }

    private mutating func readLinkAction(_ value: JSONValue, at path: JSONPointer, placeholders: [String]?) -> FlowAction? {
        guard let object = value.objectValue else {
            report(path, "a link's action is an object {type, params?}; found \(value.typeName)")
            return nil
        }
        let before = problems.count
        for member in object.members where member.key != "type" && member.key != "params" {
            let why = member.key == "from" || member.key == "interactive"
                ? "a link's actions apply to the screen on top as the stack is rebuilt, never interactively"
                : "expected type and params"
            report(path.appending(member.key), "unknown key \(JSONValue.string(member.key).abbreviatedJSON()) in a link's action; \(why)")
        }
        var type: String?
        if let raw = object["type"] {
            if let text = raw.stringValue, !text.isEmpty, text.unicodeScalars.count <= 200 {
                if Self.reservedActions.contains(text) {
                    report(path.appending("type"), "\(text) cannot be one of a link's actions; a link's actions move through the flows")
                } else {
                    type = text
                }
            } else {
                report(path.appending("type"), "type must be a non-empty action type of at most 200 characters, such as \"home.selectTab\"; found \(raw.abbreviatedJSON())")
            }
        } else {
            report(path, "a link's action needs a type, such as \"home.selectTab\"")
        }
        var params = JSONObject()
        if let raw = object["params"] {
            if let object = raw.objectValue {
                params = object
                checkLinkReferences(raw, at: path.appending("params"), placeholders: placeholders)
            } else {
                report(path.appending("params"), "params must be an object; found \(raw.typeName)")
            }
        }
        guard let type, problems.count == before else { return nil }
        return FlowAction(type: type, params: params)
    }

    /// `{"$link": name}` must name a placeholder; `{"$param": …}` belongs to rules, where an
    /// action supplies it, and would reach the action as data here.
    private mutating func checkLinkReferences(_ value: JSONValue, at path: JSONPointer, placeholders: [String]?) {
        switch value {
        case .object(let object):
            if object.contains(key: "$link") {
                guard object.count == 1, let name = object["$link"]?.stringValue, !name.isEmpty else {
                    report(path, "a link reference is written {\"$link\": \"name\"} with nothing else in the object")
                    return
                }
                if let placeholders, !placeholders.contains(name) {
                    let known = placeholders.isEmpty ? "the pattern has none" : "the pattern has " + placeholders.map { "{\($0)}" }.joined(separator: ", ")
                    report(path.appending("$link"), "\(JSONValue.string(name).jsonText) is not captured by the pattern; \(known)")
                }
                return
            }
            if object.contains(key: "$param") {
                report(path, "{\"$param\": …} is for rules; in a link's actions use {\"$link\": \"name\"} to pass a placeholder's value")
                return
            }
            for member in object.members {
                checkLinkReferences(member.value, at: path.appending(member.key), placeholders: placeholders)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                checkLinkReferences(element, at: path.appending(index), placeholders: placeholders)
            }
        default:
            break
        }
    }
}
