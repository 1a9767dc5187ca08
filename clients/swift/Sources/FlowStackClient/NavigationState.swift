// NavigationState: a session's state document, read into values a renderer and the client use.
import FlowEngine
import JSON

/// What a session shows: the state document every session answer carries, as values.
///
/// The client reads the server's answers into it, and makes it from a state its local engine
/// computed (``init(_:)-SessionState``): the two compare equal exactly when the documents do.
///
/// ```swift
/// let state = try NavigationState(json: try JSONParser.parse(body))
/// state.top?.feature           // "onboarding.second"
/// state.transition?.type       // "push"
/// ```
public struct NavigationState: Sendable, Equatable {
    public var sessionId: String
    public var userId: String
    public var version: Int
    /// The flow tree: nested flow controllers and their screens.
    public var root: Node
    /// What is on screen and behind it, bottom to top.
    public var screens: [Screen]
    public var top: Screen?
    /// How the state came from the one before (nil at creation, or when nothing moved).
    public var transition: Transition?
    /// A pending interactive transition (an edge swipe in progress).
    public var interaction: Interaction?
    /// A deep link waiting for its `when` to hold: `uri` and the link's `pattern`.
    public var pendingLink: PendingLink?
    /// Actions held back by guards, outermost first: each waits until its guard's flow (a
    /// login shown instead) is done, then applies or is dropped. Empty from servers that do
    /// not send it.
    public var pendingActions: [PendingAction]
    /// The flow whose delegate handled the action that made this version.
    public var handledBy: String?
    /// Flag evaluations fixed at creation, by key.
    public var flags: [String: Flag]
    /// Experiment variants fixed at creation, by experiment key.
    public var experiments: [String: String]
    /// The document as it came, for comparing and keeping.
    public var document: JSONValue

    /// A flow controller: `stacked` (entries bottom to top) or `tabbed` (entries are tabs,
    /// `selected` the one shown), with the flow it presents modally, if any.
    public struct Node: Sendable, Equatable {
        public var id: String
        public var flow: String
        public var kind: String
        /// The presentation style, on a presented node (`fullScreen`, `sheet`, …).
        public var style: String?
        /// The selected tab, on a tabbed node.
        public var selected: Int?
        public var entries: [Entry]
        public var presented: Box?
    }

    /// A presented node, boxed so a node can hold one.
    public final class Box: Sendable, Equatable {
        public let node: Node
        public init(_ node: Node) { self.node = node }
        public static func == (lhs: Box, rhs: Box) -> Bool { lhs.node == rhs.node }
    }

    /// An entry of a node: a screen, or a child flow controller.
    public enum Entry: Sendable, Equatable {
        case screen(Screen)
        case flow(Node)
    }

    /// A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the
    /// flow that owns it.
    public struct Screen: Sendable, Equatable {
        public var id: String
        public var feature: String
        public var params: JSONObject
        public var flow: String?
        public var flowId: String?
        /// The kind of native step the app runs here instead of rendering a screen (`purchase`);
        /// nil for an ordinary screen. The app posts the step's outcome as an action from it.
        ///
        /// ```swift
        /// if state.top?.handoff == "purchase" { store.buy(state.top?.params["productId"]) }
        /// ```
        public var handoff: String?
        /// The screen's list (sections of rows), in `root` only; nil on screens without one
        /// and in `screens`, `top` and transitions, which do not repeat it.
        public var sections: [ListSection]?
    }

    /// `{type, from, to, animated, style, interactive, result?, lists?}`.
    public struct Transition: Sendable, Equatable {
        /// push, pop, popTo, setRoot, replaceRoot, present, dismiss or selectTab.
        public var type: String
        public var from: Screen?
        public var to: Screen?
        public var animated: Bool
        public var style: String?
        public var interactive: Bool
        /// The screen a `result` effect wrote a value into (its params show it); only that
        /// screen needs re-rendering.
        public var result: ResultReceipt?
        /// How the lists of screens that stay changed, by screen entry id (`e9`): the exact
        /// row and section changes, so a renderer animates them without a diff of its own.
        public var lists: [String: ListChanges] = [:]
    }

    /// Which screen received a result: `{"id": "e5", "feature": "checkout.review", "into": "address"}`.
    public struct ResultReceipt: Sendable, Equatable {
        /// The receiving screen's entry id.
        public var id: String
        public var feature: String
        /// The param the value was written to.
        public var into: String
    }

    /// An action a guard held back: posted from `source`, waiting while the guard's flow
    /// (`guardFlow`, node `guardFlowId`) is in the tree.
    public struct PendingAction: Sendable, Equatable {
        /// The action as it was posted.
        public var action: FlowAction
        /// The entry id of the screen it came from; it applies only if that screen is on top again.
        public var source: String
        /// The flow the guard showed instead (`login`) and its node id.
        public var guardFlow: String
        public var guardFlowId: String
    }

    /// A pending interactive transition: its action, progress 0…1, and what finishing would do.
    public struct Interaction: Sendable, Equatable {
        public var action: String
        public var from: String?
        public var progress: Double
        public var handledBy: String
        public var transition: Transition?
    }

    public struct PendingLink: Sendable, Equatable {
        public var uri: String
        public var pattern: String
    }

    /// A flag's evaluation: its value, variant and reason (OpenFeature's shape).
    public struct Flag: Sendable, Equatable {
        public var value: JSONValue
        public var variant: String?
        public var reason: String?
    }

    public static func == (lhs: NavigationState, rhs: NavigationState) -> Bool { lhs.document == rhs.document }
}

/// A state document that is not what the server writes, with the JSON Pointer of the first
/// part that is wrong.
public struct MalformedState: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path.isEmpty ? "/" : path): \(message)" }
}

extension NavigationState {
    /// Reads a state document, leaving out `predictions` if it carries them.
    public init(json: JSONValue) throws(MalformedState) {
        guard var object = json.objectValue else { throw MalformedState(path: "", message: "a state is an object") }
        if object.contains(key: "predictions") {
            object = JSONObject(object.members.filter { $0.key != "predictions" })
        }
        let reader = Reader()
        sessionId = try reader.string(object["sessionId"], "/sessionId")
        userId = try reader.string(object["userId"], "/userId")
        version = try reader.integer(object["version"], "/version")
        root = try reader.node(object["root"], "/root")
        screens = try reader.array(object["screens"], "/screens").enumerated().map { (index, value) throws(MalformedState) in
            try reader.screen(value, "/screens/\(index)")
        }
        top = try reader.optional(object["top"], "/top") { (value, path) throws(MalformedState) in try reader.screen(value, path) }
        transition = try reader.optional(object["transition"], "/transition") { (value, path) throws(MalformedState) in
            try reader.transition(value, path)
        }
        interaction = try reader.optional(object["interaction"], "/interaction") { (value, path) throws(MalformedState) in
            let fields = try reader.object(value, path)
            return Interaction(
                action: try reader.string(fields["action"], path + "/action"),
                from: try reader.optionalString(fields["from"], path + "/from"),
                progress: try reader.number(fields["progress"], path + "/progress"),
                handledBy: try reader.string(fields["handledBy"], path + "/handledBy"),
                transition: try reader.optional(fields["transition"], path + "/transition") { (value, path) throws(MalformedState) in
                    try reader.transition(value, path)
                })
        }
        pendingLink = try reader.optional(object["pendingLink"], "/pendingLink") { (value, path) throws(MalformedState) in
            let fields = try reader.object(value, path)
            return PendingLink(uri: try reader.string(fields["uri"], path + "/uri"), pattern: try reader.string(fields["pattern"], path + "/pattern"))
        }
        if let value = object["pendingActions"], !value.isNull {
            pendingActions = try reader.array(value, "/pendingActions").enumerated().map { (index, value) throws(MalformedState) in
                try reader.pendingAction(value, "/pendingActions/\(index)")
            }
        } else {
            pendingActions = []
        }
        handledBy = try reader.optionalString(object["handledBy"], "/handledBy")
        var flags: [String: Flag] = [:]
        for member in try reader.object(object["flags"], "/flags") {
            let path = "/flags/" + member.key
            let fields = try reader.object(member.value, path)
            flags[member.key] = Flag(value: fields["value"] ?? .null, variant: try reader.optionalString(fields["variant"], path + "/variant"),
                                     reason: try reader.optionalString(fields["reason"], path + "/reason"))
        }
        self.flags = flags
        var experiments: [String: String] = [:]
        for member in try reader.object(object["experiments"], "/experiments") {
            experiments[member.key] = try reader.string(member.value, "/experiments/" + member.key)
        }
        self.experiments = experiments
        document = .object(object)
    }

    /// The state a local engine computed, as the server's answer for it would read.
    public init(_ state: SessionState) throws(MalformedState) {
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONParser.parse(state.document(), limits: .storedData)
        } catch {
            throw MalformedState(path: "", message: "the engine's document does not parse: \(error.description)")
        }
        try self.init(json: value)
    }

    /// The screen features on screen and behind it, bottom to top.
    public var features: [String] { screens.map(\.feature) }
}

/// Reads the parts of a state document, naming the path of the first that is wrong.
private struct Reader {
    func object(_ value: JSONValue?, _ path: String) throws(MalformedState) -> JSONObject {
        guard let object = value?.objectValue else { throw MalformedState(path: path, message: "must be an object") }
        return object
    }

    func array(_ value: JSONValue?, _ path: String) throws(MalformedState) -> [JSONValue] {
        guard let array = value?.arrayValue else { throw MalformedState(path: path, message: "must be an array") }
        return array
    }

    func string(_ value: JSONValue?, _ path: String) throws(MalformedState) -> String {
        guard let text = value?.stringValue else { throw MalformedState(path: path, message: "must be a string") }
        return text
    }

    func optionalString(_ value: JSONValue?, _ path: String) throws(MalformedState) -> String? {
        guard let value, !value.isNull else { return nil }
        return try string(value, path)
    }

    func integer(_ value: JSONValue?, _ path: String) throws(MalformedState) -> Int {
        guard let number = value?.integerValue else { throw MalformedState(path: path, message: "must be a whole number") }
        return number
    }

    func number(_ value: JSONValue?, _ path: String) throws(MalformedState) -> Double {
        guard let number = value?.doubleValue else { throw MalformedState(path: path, message: "must be a number") }
        return number
    }

    func bool(_ value: JSONValue?, _ path: String) throws(MalformedState) -> Bool {
        guard let flag = value?.boolValue else { throw MalformedState(path: path, message: "must be true or false") }
        return flag
    }

    func optional<T>(_ value: JSONValue?, _ path: String, _ read: (JSONValue, String) throws(MalformedState) -> T) throws(MalformedState) -> T? {
        guard let value, !value.isNull else { return nil }
        return try read(value, path)
    }

    func screen(_ value: JSONValue, _ path: String) throws(MalformedState) -> NavigationState.Screen {
        let fields = try object(value, path)
        return NavigationState.Screen(
            id: try string(fields["id"], path + "/id"), feature: try string(fields["feature"], path + "/feature"),
            params: try object(fields["params"], path + "/params"), flow: try optionalString(fields["flow"], path + "/flow"),
            flowId: try optionalString(fields["flowId"], path + "/flowId"), handoff: try optionalString(fields["handoff"], path + "/handoff"),
            sections: try optional(fields["sections"], path + "/sections") { (value, path) throws(MalformedState) in
                do throws(ListProblem) {
                    return try ScreenList.readSections(value)
                } catch {
                    throw MalformedState(path: path + error.pointer.description, message: error.message)
                }
            })
    }

    /// `{"deleted": [{"id", "at"}], "inserted": […], "moved": [{"id", "from", "to"}], "reloaded": […]}`.
    func stage<Position>(_ value: JSONValue?, _ path: String, _ position: (JSONValue?, String) throws(MalformedState) -> Position)
        throws(MalformedState) -> ListChanges.Stage<Position>
    {
        let fields = try object(value, path)
        func changes(_ key: String) throws(MalformedState) -> [ListChanges.Change<Position>] {
            var list: [ListChanges.Change<Position>] = []
            for (index, element) in try array(fields[key], path + "/" + key).enumerated() {
                let at = path + "/\(key)/\(index)"
                let change = try object(element, at)
                list.append(.init(id: try string(change["id"], at + "/id"), at: try position(change["at"], at + "/at")))
            }
            return list
        }
        var moved: [ListChanges.Move<Position>] = []
        for (index, element) in try array(fields["moved"], path + "/moved").enumerated() {
            let at = path + "/moved/\(index)"
            let move = try object(element, at)
            moved.append(.init(id: try string(move["id"], at + "/id"), from: try position(move["from"], at + "/from"), to: try position(move["to"], at + "/to")))
        }
        return ListChanges.Stage(deleted: try changes("deleted"), inserted: try changes("inserted"), moved: moved, reloaded: try changes("reloaded"))
    }

    /// A transition's `lists`: `[{"id": "e9", "sections": stage, "rows": stage}]`.
    func lists(_ value: JSONValue?, _ path: String) throws(MalformedState) -> [String: ListChanges] {
        guard let value, !value.isNull else { return [:] }
        var result: [String: ListChanges] = [:]
        for (index, element) in try array(value, path).enumerated() {
            let at = path + "/\(index)"
            let fields = try object(element, at)
            let sections = try stage(fields["sections"], at + "/sections") { (value, path) throws(MalformedState) in try integer(value, path) }
            let rows = try stage(fields["rows"], at + "/rows") { (value, path) throws(MalformedState) -> RowPath in
                let pair = try array(value, path)
                guard pair.count == 2, let section = pair[0].integerValue, let row = pair[1].integerValue else {
                    throw MalformedState(path: path, message: "must be [section, row]")
                }
                return RowPath(section: section, row: row)
            }
            result[try string(fields["id"], at + "/id")] = ListChanges(sections: sections, rows: rows)
        }
        return result
    }

    func pendingAction(_ value: JSONValue, _ path: String) throws(MalformedState) -> NavigationState.PendingAction {
        let fields = try object(value, path)
        let action = try object(fields["action"], path + "/action")
        let guardFields = try object(fields["guard"], path + "/guard")
        return NavigationState.PendingAction(
            action: FlowAction(
                type: try string(action["type"], path + "/action/type"), from: try optionalString(action["from"], path + "/action/from"),
                row: try optionalString(action["row"], path + "/action/row"),
                params: try optional(action["params"], path + "/action/params") { (value, path) throws(MalformedState) in try object(value, path) } ?? [:]),
            source: try string(fields["source"], path + "/source"),
            guardFlow: try string(guardFields["flow"], path + "/guard/flow"),
            guardFlowId: try string(guardFields["flowId"], path + "/guard/flowId"))
    }

    func transition(_ value: JSONValue, _ path: String) throws(MalformedState) -> NavigationState.Transition {
        let fields = try object(value, path)
        return NavigationState.Transition(
            type: try string(fields["type"], path + "/type"),
            from: try optional(fields["from"], path + "/from") { (value, path) throws(MalformedState) in try screen(value, path) },
            to: try optional(fields["to"], path + "/to") { (value, path) throws(MalformedState) in try screen(value, path) },
            animated: try bool(fields["animated"], path + "/animated"), style: try optionalString(fields["style"], path + "/style"),
            interactive: try bool(fields["interactive"], path + "/interactive"),
            result: try optional(fields["result"], path + "/result") { (value, path) throws(MalformedState) in
                let receipt = try object(value, path)
                return NavigationState.ResultReceipt(
                    id: try string(receipt["id"], path + "/id"), feature: try string(receipt["feature"], path + "/feature"),
                    into: try string(receipt["into"], path + "/into"))
            },
            lists: try lists(fields["lists"], path + "/lists"))
    }

    func node(_ value: JSONValue?, _ path: String) throws(MalformedState) -> NavigationState.Node {
        let fields = try object(value, path)
        var entries: [NavigationState.Entry] = []
        for (index, entry) in try array(fields["entries"], path + "/entries").enumerated() {
            let entryPath = path + "/entries/\(index)"
            if try object(entry, entryPath)["feature"] != nil {
                entries.append(.screen(try screen(entry, entryPath)))
            } else {
                entries.append(.flow(try node(entry, entryPath)))
            }
        }
        let kind = try string(fields["kind"], path + "/kind")
        guard kind == "stacked" || kind == "tabbed" else {
            throw MalformedState(path: path + "/kind", message: "must be stacked or tabbed")
        }
        return NavigationState.Node(
            id: try string(fields["id"], path + "/id"), flow: try string(fields["flow"], path + "/flow"), kind: kind,
            style: try optionalString(fields["style"], path + "/style"),
            selected: try optional(fields["selected"], path + "/selected") { (value, path) throws(MalformedState) in try integer(value, path) },
            entries: entries,
            presented: try optional(fields["presented"], path + "/presented") { (value, path) throws(MalformedState) in
                NavigationState.Box(try node(value, path))
            })
    }
}
