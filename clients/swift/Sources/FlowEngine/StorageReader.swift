// StorageReader: decodes the storage format of a FlowTree, refusing anything malformed with its path.

import JSON

/// Decodes a stored tree field by field. Every field is checked (type, range, unknown keys)
/// because storage may be corrupt or hand-edited, and a bad row must fail with a message, not
/// crash the server.
struct StorageReader {
    let limits: FlowLimits

    init(limits: FlowLimits) {
        self.limits = limits
    }

    private func fail(_ path: JSONPointer, _ message: String) -> FlowStorageError {
        FlowStorageError(path: path.description, message: message)
    }

    mutating func readTree(_ value: JSONValue) throws(FlowStorageError) -> FlowTree {
        let path = JSONPointer()
        let object = try self.object(value, at: path, allowed: ["format", "nextId", "root", "interaction", "pendingLink", "pendingActions"])
        let format = try integer(object["format"], at: path.appending("format"))
        guard format == FlowTree.storageFormat else {
            throw fail(path.appending("format"), "format \(format) is not supported; expected \(FlowTree.storageFormat)")
        }
        let nextId = try integer(object["nextId"], at: path.appending("nextId"))
        guard nextId >= 1, nextId <= FlowEngine.maxId else {
            throw fail(path.appending("nextId"), "nextId must be from 1 to \(FlowEngine.maxId); found \(nextId)")
        }
        let root = try node(object["root"], at: path.appending("root"), depth: 1)
        var interaction: Interaction?
        if let raw = object["interaction"] {
            interaction = try self.interaction(raw, at: path.appending("interaction"))
        }
        var pendingLink: PendingLink?
        if let raw = object["pendingLink"] {
            let linkPath = path.appending("pendingLink")
            let link = try self.object(raw, at: linkPath, allowed: ["uri", "pattern"])
            pendingLink = PendingLink(
                uri: try string(link["uri"], at: linkPath.appending("uri")),
                pattern: try string(link["pattern"], at: linkPath.appending("pattern")))
        }
        var pendingActions: [PendingAction] = []
        if let raw = object["pendingActions"] {
            let listPath = path.appending("pendingActions")
            guard let elements = raw.arrayValue else { throw fail(listPath, "expected an array; found \(raw.typeName)") }
            guard elements.count <= FlowEngine.maxPendingActions else {
                throw fail(listPath, "more than \(FlowEngine.maxPendingActions) pending actions")
            }
            for (index, element) in elements.enumerated() {
                pendingActions.append(try pendingAction(element, at: listPath.appending(index)))
            }
        }
        return FlowTree(root: root, nextId: nextId, interaction: interaction, pendingLink: pendingLink, pendingActions: pendingActions)
    }

    private func pendingAction(_ value: JSONValue, at path: JSONPointer) throws(FlowStorageError) -> PendingAction {
        let object = try self.object(value, at: path, allowed: ["action", "source", "guardFlow", "guardFlowId"])
        return PendingAction(
            action: try action(object["action"], at: path.appending("action")),
            source: try id(object["source"], at: path.appending("source")),
            guardFlow: try string(object["guardFlow"], at: path.appending("guardFlow")),
            guardFlowId: try id(object["guardFlowId"], at: path.appending("guardFlowId")))
    }

    private func node(_ value: JSONValue?, at path: JSONPointer, depth: Int) throws(FlowStorageError) -> FlowNode {
        guard depth <= limits.maxDepth else {
            throw fail(path, "flows nest deeper than \(limits.maxDepth) levels")
        }
        let object = try self.object(value, at: path, allowed: ["id", "flow", "kind", "selected", "style", "entries", "presented"])
        let id = try self.id(object["id"], at: path.appending("id"))
        let flow = try string(object["flow"], at: path.appending("flow"))
        let kindText = try string(object["kind"], at: path.appending("kind"))
        guard let kind = FlowKind(rawValue: kindText) else {
            throw fail(path.appending("kind"), "kind must be \"stacked\" or \"tabbed\"; found \(JSONValue.string(kindText).abbreviatedJSON())")
        }
        var selected = 0
        if let raw = object["selected"] {
            guard kind == .tabbed else { throw fail(path.appending("selected"), "selected is only stored for tabbed flows") }
            selected = try integer(raw, at: path.appending("selected"))
        }
        var style: String?
        if let raw = object["style"] { style = try string(raw, at: path.appending("style")) }
        guard let rawEntries = object["entries"] else { throw fail(path.appending("entries"), "entries is required") }
        guard let elements = rawEntries.arrayValue else {
            throw fail(path.appending("entries"), "entries must be an array; found \(rawEntries.typeName)")
        }
        guard elements.count <= limits.maxEntries else {
            throw fail(path.appending("entries"), "more than \(limits.maxEntries) entries")
        }
        var entries: [FlowEntry] = []
        entries.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let entryPath = path.appending("entries").appending(index)
            if element.objectValue?.contains(key: "flow") == true {
                entries.append(.flow(try node(element, at: entryPath, depth: depth + 1)))
            } else {
                entries.append(.screen(try screen(element, at: entryPath)))
            }
        }
        var presented: FlowNode?
        if let raw = object["presented"] {
            presented = try node(raw, at: path.appending("presented"), depth: depth + 1)
        }
        return FlowNode(
            id: id, flow: flow, kind: kind, entries: entries, selected: selected, presentationStyle: style,
            presented: presented)
    }

    private func screen(_ value: JSONValue, at path: JSONPointer) throws(FlowStorageError) -> ScreenEntry {
        let object = try self.object(value, at: path, allowed: ["id", "feature", "params", "handoff", "sections"])
        let id = try self.id(object["id"], at: path.appending("id"))
        let feature = try string(object["feature"], at: path.appending("feature"))
        let params = try self.params(object["params"], at: path.appending("params"))
        var sections: [ListSection]?
        if let raw = object["sections"] {
            do throws(ListProblem) {
                sections = try ScreenList.readSections(raw)
            } catch {
                throw fail(JSONPointer(path.appending("sections").tokens + error.pointer.tokens), error.message)
            }
        }
        return ScreenEntry(
            id: id, feature: feature, params: params, isHandoff: try handoff(object["handoff"], at: path.appending("handoff")),
            sections: sections)
    }

    /// A screen's `handoff` mark: absent or `true`.
    private func handoff(_ value: JSONValue?, at path: JSONPointer) throws(FlowStorageError) -> Bool {
        guard let value else { return false }
        guard value.boolValue == true else { throw fail(path, "handoff is stored as true or not at all; found \(value.abbreviatedJSON())") }
        return true
    }

    private func interaction(_ value: JSONValue, at path: JSONPointer) throws(FlowStorageError) -> Interaction {
        let object = try self.object(value, at: path, allowed: ["action", "progress", "handledBy", "preview"])
        let action = try self.action(object["action"], at: path.appending("action"))
        guard let progress = object["progress"]?.doubleValue else {
            throw fail(path.appending("progress"), "progress must be a number")
        }
        let handledBy = try string(object["handledBy"], at: path.appending("handledBy"))
        var preview: Transition?
        if let raw = object["preview"] { preview = try transition(raw, at: path.appending("preview")) }
        return Interaction(action: action, progress: progress, handledBy: handledBy, preview: preview)
    }

    private func action(_ value: JSONValue?, at path: JSONPointer) throws(FlowStorageError) -> FlowAction {
        let object = try self.object(value, at: path, allowed: ["type", "from", "row", "params", "interactive"])
        let type = try string(object["type"], at: path.appending("type"))
        var from: String?
        if let raw = object["from"] { from = try string(raw, at: path.appending("from")) }
        var row: String?
        if let raw = object["row"] { row = try string(raw, at: path.appending("row")) }
        let params = try self.params(object["params"], at: path.appending("params"))
        guard let interactive = object["interactive"]?.boolValue else {
            throw fail(path.appending("interactive"), "interactive must be a boolean")
        }
        return FlowAction(type: type, from: from, row: row, params: params, interactive: interactive)
    }

    private func transition(_ value: JSONValue, at path: JSONPointer) throws(FlowStorageError) -> Transition {
        let object = try self.object(value, at: path, allowed: ["type", "from", "to", "animated", "style", "interactive", "result"])
        let typeText = try string(object["type"], at: path.appending("type"))
        guard let type = Transition.Kind(rawValue: typeText) else {
            throw fail(path.appending("type"), "unknown transition type \(JSONValue.string(typeText).abbreviatedJSON())")
        }
        var from: ScreenRef?
        if let raw = object["from"] { from = try screenRef(raw, at: path.appending("from")) }
        var to: ScreenRef?
        if let raw = object["to"] { to = try screenRef(raw, at: path.appending("to")) }
        guard let animated = object["animated"]?.boolValue else {
            throw fail(path.appending("animated"), "animated must be a boolean")
        }
        var style: String?
        if let raw = object["style"] { style = try string(raw, at: path.appending("style")) }
        guard let interactive = object["interactive"]?.boolValue else {
            throw fail(path.appending("interactive"), "interactive must be a boolean")
        }
        var result: ResultReceipt?
        if let raw = object["result"] {
            let resultPath = path.appending("result")
            let fields = try self.object(raw, at: resultPath, allowed: ["id", "feature", "into"])
            result = ResultReceipt(
                id: try id(fields["id"], at: resultPath.appending("id")),
                feature: try string(fields["feature"], at: resultPath.appending("feature")),
                into: try string(fields["into"], at: resultPath.appending("into")))
        }
        return Transition(type: type, from: from, to: to, animated: animated, style: style, interactive: interactive, result: result)
    }

    private func screenRef(_ value: JSONValue, at path: JSONPointer) throws(FlowStorageError) -> ScreenRef {
        let object = try self.object(value, at: path, allowed: ["id", "feature", "params", "flow", "flowId", "handoff"])
        return ScreenRef(
            id: try id(object["id"], at: path.appending("id")),
            feature: try string(object["feature"], at: path.appending("feature")),
            params: try params(object["params"], at: path.appending("params")),
            flow: try string(object["flow"], at: path.appending("flow")),
            flowId: try id(object["flowId"], at: path.appending("flowId")),
            isHandoff: try handoff(object["handoff"], at: path.appending("handoff")))
    }

    // MARK: fields

    private func object(_ value: JSONValue?, at path: JSONPointer, allowed: [String]) throws(FlowStorageError) -> JSONObject {
        guard let value else { throw fail(path, "a required object is missing") }
        guard let object = value.objectValue else { throw fail(path, "expected an object; found \(value.typeName)") }
        for member in object.members where !allowed.contains(member.key) {
            throw fail(path.appending(member.key), "unknown key; expected one of \(allowed.joined(separator: ", "))")
        }
        return object
    }

    private func integer(_ value: JSONValue?, at path: JSONPointer) throws(FlowStorageError) -> Int {
        guard let value else { throw fail(path, "a required integer is missing") }
        guard let number = value.integerValue else { throw fail(path, "expected an integer; found \(value.typeName)") }
        return number
    }

    private func id(_ value: JSONValue?, at path: JSONPointer) throws(FlowStorageError) -> Int {
        let number = try integer(value, at: path)
        guard number >= 1, number < FlowEngine.maxId else {
            throw fail(path, "ids are from 1 to \(FlowEngine.maxId - 1); found \(number)")
        }
        return number
    }

    private func string(_ value: JSONValue?, at path: JSONPointer) throws(FlowStorageError) -> String {
        guard let value else { throw fail(path, "a required string is missing") }
        guard let text = value.stringValue else { throw fail(path, "expected a string; found \(value.typeName)") }
        return text
    }

    private func params(_ value: JSONValue?, at path: JSONPointer) throws(FlowStorageError) -> JSONObject {
        guard let value else { return [:] }
        guard let object = value.objectValue else { throw fail(path, "params must be an object; found \(value.typeName)") }
        return object
    }
}
