// FlowAction: what a client reports happened — a type, the source screen, params, interactivity.

import JSON

/// What happened on the client: `{type, from?, params?, interactive?}`.
///
/// ```swift
/// let action = FlowAction(type: "home.presentModal", from: "e7", params: ["content": "Hi"])
/// ```
public struct FlowAction: Sendable, Equatable {
    /// The action type, namespaced by the flow that declares it (`onboarding.showSecond`), or a
    /// generic one (`back`, `interaction.update`, `interaction.end`, `interaction.cancel`,
    /// `link`, `link.cancel`).
    public var type: String
    /// The id of the screen the action came from (`"e7"`); it must be the screen on top.
    public var from: String?
    /// The id of the tapped row of the `from` screen's list (a row tap); it must be in that list.
    /// The rule that handles the action reads the row as the params `row.id`, `row.kind` and
    /// `row.values`, and may match it by kind (`"row": "address.row"`).
    public var row: String?
    public var params: JSONObject
    /// Whether to open an interactive transition instead of applying the change at once.
    public var interactive: Bool

    public init(type: String, from: String? = nil, row: String? = nil, params: JSONObject = [:], interactive: Bool = false) {
        self.type = type
        self.from = from
        self.row = row
        self.params = params
        self.interactive = interactive
    }

    /// Generic: pop the topmost stack with more than one entry, else dismiss the topmost
    /// presented flow, else refuse. A flow may name `back` in its `on` to take it over.
    public static let back = "back"
    /// Generic: `{progress}` in 0...1 moves the pending interaction.
    public static let interactionUpdate = "interaction.update"
    /// Generic: `{progress?, velocity?}` finishes the pending interaction when velocity > 300
    /// or progress > 0.5, else cancels it.
    public static let interactionEnd = "interaction.end"
    /// Generic: cancels the pending interaction.
    public static let interactionCancel = "interaction.cancel"

    /// Generic: `{uri}` follows a deep link of the root flow, as a cold start would build it
    /// (see ``FlowEngine/followLink(_:from:catalog:context:limits:field:)``).
    public static let link = "link"
    /// Generic: drops the session's pending link, if any.
    public static let linkCancel = "link.cancel"

    /// The param holding the tapped row's id (a string).
    public static let rowIdParam = "row.id"
    /// The param holding the tapped row's kind (a string).
    public static let rowKindParam = "row.kind"
    /// The param holding the tapped row's values (an object).
    public static let rowValuesParam = "row.values"
    /// The params the engine supplies from the tapped row; a client cannot send them.
    public static let rowParams = [rowIdParam, rowKindParam, rowValuesParam]

    /// Whether the type is one of the interaction actions.
    public var isInteractionAction: Bool {
        type == Self.interactionUpdate || type == Self.interactionEnd || type == Self.interactionCancel
    }
}

extension FlowAction {
    /// Reads an action from a request body `{type, from?, params?, interactive?}`. Unknown keys
    /// are refused so a typo such as `parmas` does not silently drop the params; `null` counts
    /// as absent for the optional keys.
    ///
    /// - Throws: ``FlowError/invalidParams(path:message:)`` naming the offending key.
    public init(json: JSONValue) throws(FlowError) {
        guard let object = json.objectValue else {
            throw .invalidParams(path: "", message: "an action is an object {type, from?, row?, params?, interactive?}; found \(json.typeName)")
        }
        let allowed = ["type", "from", "row", "params", "interactive"]
        for member in object.members where !allowed.contains(member.key) {
            throw .invalidParams(
                path: JSONPointer([member.key]).description,
                message: "unknown key \(JSONValue.string(member.key).abbreviatedJSON()) in an action; expected type, from, row, params, interactive")
        }
        guard let rawType = object["type"] else {
            throw .invalidParams(path: "/type", message: "type is required: the action type, such as \"onboarding.showSecond\"")
        }
        // Its bytes counted first (a scalar is at least one byte): counting scalars walks the text.
        guard let type = rawType.stringValue, !type.isEmpty, type.utf8.count <= 200 || type.unicodeScalars.count <= 200 else {
            throw .invalidParams(path: "/type", message: "type must be a non-empty string of at most 200 characters; found \(rawType.abbreviatedJSON())")
        }
        var from: String?
        if let rawFrom = object["from"], !rawFrom.isNull {
            guard let text = rawFrom.stringValue else {
                throw .invalidParams(path: "/from", message: "from must be a screen id such as \"e7\"; found \(rawFrom.typeName)")
            }
            from = text
        }
        var row: String?
        if let rawRow = object["row"], !rawRow.isNull {
            guard let text = rawRow.stringValue, !text.isEmpty, text.unicodeScalars.count <= 200 else {
                throw .invalidParams(path: "/row", message: "row must be the id of the tapped row, a string of 1 to 200 characters; found \(rawRow.abbreviatedJSON(limit: 40))")
            }
            row = text
        }
        var params = JSONObject()
        if let rawParams = object["params"], !rawParams.isNull {
            guard let object = rawParams.objectValue else {
                throw .invalidParams(path: "/params", message: "params must be an object; found \(rawParams.typeName)")
            }
            params = object
        }
        for name in Self.rowParams where params.contains(key: name) {
            throw .invalidParams(
                path: JSONPointer(["params", name]).description,
                message: "\(name) is set by the engine from the tapped row (\"row\": id); it cannot be sent as a param")
        }
        var interactive = false
        if let rawInteractive = object["interactive"], !rawInteractive.isNull {
            guard let flag = rawInteractive.boolValue else {
                throw .invalidParams(path: "/interactive", message: "interactive must be true or false; found \(rawInteractive.typeName)")
            }
            interactive = flag
        }
        self.init(type: type, from: from, row: row, params: params, interactive: interactive)
    }
}
