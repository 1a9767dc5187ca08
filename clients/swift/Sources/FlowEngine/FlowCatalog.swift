// FlowCatalog: the live flow definitions by name, and the Swift delegates registered for flows.

/// The flows a session can use: definitions by name, plus Swift delegates registered for some
/// flow names. The root flow is `app`.
///
/// ```swift
/// var catalog = FlowCatalog([app, onboarding, home, modal])
/// catalog.register(QuietHours(), for: "app")
/// let problems = catalog.validate()
/// ```
public struct FlowCatalog: Sendable {
    /// The flow every session starts from.
    public static let rootFlowName = "app"

    public private(set) var definitions: [String: FlowDefinition]
    private var delegates: [String: any FlowActionDelegate]
    /// The row kinds the definitions declare: the union of their ``FlowDefinition/ownRowKinds``
    /// (kinds written in a list, or matched by a rule's `row`). A row a param supplies whole may
    /// carry only one of these, so a client that renders the catalog's kinds can draw it. Kept
    /// up to date as definitions change, so an action consults it without walking them.
    public private(set) var declaredRowKinds: Set<String>
    /// Whether any definition writes a screen with a list (`sections` in an entry): only then
    /// can an action tap a row. Kept with ``declaredRowKinds``: a replay asks it of every
    /// session, and walking every rule each time was about a twentieth of a replay's CPU.
    public private(set) var hasLists: Bool
    /// Each flow's rules by the action type they answer, kept with `definitions`. The delegate
    /// chain asks every flow on screen about every action, most of them about an action they
    /// do not name: a definition looked up for that was copied whole (its name, entries,
    /// handlers and links retained, then released) for each flow asked.
    private var rulesByAction: [RulesKey: [FlowRule]]

    private struct RulesKey: Hashable {
        var flow: String
        var action: String
    }

    /// A catalog of `definitions`; when two share a name, the later one is kept.
    public init(_ definitions: [FlowDefinition] = []) {
        self.definitions = [:]
        self.delegates = [:]
        self.declaredRowKinds = []
        self.hasLists = false
        self.rulesByAction = [:]
        for definition in definitions { self.definitions[definition.name] = definition }
        for definition in self.definitions.values { indexRules(of: definition) }
        declaredRowKinds = Self.rowKinds(of: self.definitions)
        hasLists = Self.anyLists(in: self.definitions)
    }

    /// The rules the flow named `flow` has for `action`, as its definition's
    /// ``FlowDefinition/rules(for:)`` gives them; `nil` when it does not name the action, or
    /// there is no such flow.
    func rules(of flow: String, for action: String) -> [FlowRule]? {
        rulesByAction[RulesKey(flow: flow, action: action)]
    }

    /// Adds `definition`'s rules to the index; as ``FlowDefinition/rules(for:)``, the first
    /// handler of an action type is the one that answers.
    private mutating func indexRules(of definition: FlowDefinition) {
        for handler in definition.handlers {
            let key = RulesKey(flow: definition.name, action: handler.action)
            if rulesByAction[key] == nil { rulesByAction[key] = handler.rules }
        }
    }

    private mutating func unindexRules(of definition: FlowDefinition) {
        for handler in definition.handlers {
            rulesByAction[RulesKey(flow: definition.name, action: handler.action)] = nil
        }
    }

    private static func anyLists(in definitions: [String: FlowDefinition]) -> Bool {
        definitions.values.contains { !$0.ownListScreens.isEmpty }
    }

    private static func rowKinds(of definitions: [String: FlowDefinition]) -> Set<String> {
        definitions.values.reduce(into: []) { $0.formUnion($1.ownRowKinds) }
    }

    /// The definition named `name`.
    public subscript(name: String) -> FlowDefinition? { definitions[name] }

    /// Adds `definition`, replacing one of the same name.
    public mutating func insert(_ definition: FlowDefinition) {
        let previous = definitions.updateValue(definition, forKey: definition.name)
        if let previous { unindexRules(of: previous) }
        indexRules(of: definition)
        let replaced = previous != nil
        // A replaced definition may have been the only one declaring a kind.
        if replaced { declaredRowKinds = Self.rowKinds(of: definitions) } else { declaredRowKinds.formUnion(definition.ownRowKinds) }
        hasLists = Self.anyLists(in: definitions)
    }

    /// Removes the definition named `name`.
    public mutating func removeDefinition(named name: String) {
        guard let removed = definitions.removeValue(forKey: name) else { return }
        unindexRules(of: removed)
        declaredRowKinds = Self.rowKinds(of: definitions)
        hasLists = Self.anyLists(in: definitions)
    }

    /// Makes `delegate` decide for every flow named `flow`; it is asked before the definition
    /// and may defer to it with ``FlowDelegateDecision/useDefinition``.
    public mutating func register(_ delegate: some FlowActionDelegate, for flow: String) {
        delegates[flow] = delegate
    }

    /// Removes the Swift delegate registered for `flow`.
    public mutating func unregisterDelegate(for flow: String) {
        delegates[flow] = nil
    }

    /// The Swift delegate registered for `flow`, if any.
    public func delegate(for flow: String) -> (any FlowActionDelegate)? { delegates[flow] }

    /// Whether any Swift delegate is registered (it may handle action types no definition names).
    var hasDelegates: Bool { !delegates.isEmpty }

    /// The flow names, sorted.
    public var names: [String] { definitions.keys.sorted() }
}
