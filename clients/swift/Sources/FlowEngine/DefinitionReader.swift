// DefinitionReader: the checks that turn a definition's JSON into a FlowDefinition or a list of problems.
// Here the document's top level; each part is read in DefinitionReader+initial, +rules, +effects,
// +conditions and +links.

import JSON

/// Reads a definition document, recording every problem with its path and carrying on, so one
/// PUT reports everything wrong at once.
struct DefinitionReader {
    private(set) var problems: [DefinitionProblem] = []
    var references: [FlowReference] = []
    var kind: FlowKind?
    var flowName = "this flow"
    /// The definition's `name` as written, once read.
    var flowNameValue: String?
    var tabCount: Int?
    /// Param references of the rule being read, checked against its declared params.
    var paramReferences: [(name: String, path: JSONPointer)] = []
    /// Whether the rule being read matches row taps (`row`), whose `row.id`, `row.kind` and
    /// `row.values` params the engine supplies, so references to them need no declaration.
    var ruleMatchesRows = false
    /// Whether the definition is being uploaded to a server (`FlowDefinition(json:expectedName:
    /// uploading:)`): then what a server's stores cannot keep is refused too (`checkStorable`).
    var uploading = false

    /// `version` and `live` are what the server adds when it shows a stored definition; they are
    /// accepted and ignored so a definition read back can be uploaded again as it is.
    static let definitionKeys = ["name", "kind", "initial", "selected", "on", "links", "description", "version", "live"]
    static let ruleKeys = ["from", "row", "via", "when", "interactive", "params", "do", "guard", "description"]
    static let reservedActions = ["interaction.update", "interaction.end", "interaction.cancel", "link", "link.cancel"]
    static let operatorKeys = ["is", "isNot", "in", "notIn", "exists"]
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

    mutating func readName(_ value: JSONValue?, at path: JSONPointer) -> String? {
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

    mutating func readKind(_ value: JSONValue?, at path: JSONPointer) -> FlowKind? {
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

    mutating func readSelected(_ value: JSONValue?, at path: JSONPointer) -> Int {
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
