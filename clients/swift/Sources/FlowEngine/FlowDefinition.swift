// FlowDefinition: a flow as data — its kind, initial entries and the rules for each action type.

import JSON

/// A flow controller described as data: what it starts with and how it handles actions; the
/// root flow also declares the deep links a session can open (``FlowLink``).
///
/// Parse one with ``FlowDefinition/parse(_:expectedName:)`` or
/// ``FlowDefinition/init(json:expectedName:)``; both collect every problem of the document.
///
/// ```json
/// {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
///  "on": {"onboarding.showSecond": [{"from": "onboarding.first",
///                                    "do": [{"push": "onboarding.second"}]}]}}
/// ```
public struct FlowDefinition: Sendable {
    /// One initial entry: a screen or a child flow, kept only when ``when`` holds at build
    /// time. For a tabbed flow the initial entries are its tabs.
    public struct InitialEntry: Sendable, Equatable {
        public var target: EntryTarget
        public var when: FlowCondition?

        public init(target: EntryTarget, when: FlowCondition? = nil) {
            self.target = target
            self.when = when
        }
    }

    /// The ordered rules for one action type.
    public struct ActionHandler: Sendable, Equatable {
        public var action: String
        public var rules: [FlowRule]

        public init(action: String, rules: [FlowRule]) {
            self.action = action
            self.rules = rules
        }
    }

    public var name: String
    public var kind: FlowKind
    public var initial: [InitialEntry]
    /// The initially selected tab of a tabbed flow (0 for stacked flows). When `when`
    /// conditions drop tabs and this index no longer exists, the first tab is selected.
    public var selected: Int
    /// The action types this flow names, in written order.
    public var handlers: [ActionHandler]
    /// The definition's `description`, free text for authors.
    public var summary: String?
    /// The deep links the session can open, in written order; only the root flow (`app`)
    /// declares them.
    public var links: [FlowLink]
    /// Where this definition names other flows, for catalog validation.
    var flowReferences: [FlowReference]

    /// A definition built in code; flow references are located at their canonical paths.
    public init(
        name: String, kind: FlowKind, initial: [InitialEntry], selected: Int = 0,
        handlers: [ActionHandler] = [], summary: String? = nil, links: [FlowLink] = []
    ) {
        self.name = name
        self.kind = kind
        self.initial = initial
        self.selected = selected
        self.handlers = handlers
        self.summary = summary
        self.links = links
        self.flowReferences = FlowReference.canonical(initial: initial, handlers: handlers)
    }

    init(
        name: String, kind: FlowKind, initial: [InitialEntry], selected: Int,
        handlers: [ActionHandler], summary: String?, links: [FlowLink], flowReferences: [FlowReference]
    ) {
        self.name = name
        self.kind = kind
        self.initial = initial
        self.selected = selected
        self.handlers = handlers
        self.summary = summary
        self.links = links
        self.flowReferences = flowReferences
    }

    /// The rules for `action`, or `nil` when this flow does not name it (the action then
    /// passes to the parent).
    public func rules(for action: String) -> [FlowRule]? {
        for handler in handlers where handler.action == action { return handler.rules }
        return nil
    }

    /// The action types this flow names.
    public var actionTypes: [String] { handlers.map(\.action) }
}

extension FlowDefinition: Equatable {
    /// Definitions are equal when they mean the same; where the source wrote references does
    /// not matter.
    public static func == (lhs: FlowDefinition, rhs: FlowDefinition) -> Bool {
        lhs.name == rhs.name && lhs.kind == rhs.kind && lhs.initial == rhs.initial
            && lhs.selected == rhs.selected && lhs.handlers == rhs.handlers && lhs.summary == rhs.summary
            && lhs.links == rhs.links
    }
}

/// A place where a definition names another flow.
struct FlowReference: Sendable, Equatable {
    var flow: String
    var path: JSONPointer
    /// Whether it is an initial entry, which makes the named flow part of this one (cycles
    /// through these would never finish building).
    var isInitial: Bool

    static func canonical(initial: [FlowDefinition.InitialEntry], handlers: [FlowDefinition.ActionHandler]) -> [FlowReference] {
        var references: [FlowReference] = []
        for (index, entry) in initial.enumerated() {
            if case .flow(let name, _) = entry.target {
                references.append(FlowReference(
                    flow: name, path: JSONPointer(["initial", String(index), "flow"]), isInitial: true))
            }
        }
        for handler in handlers {
            for (ruleIndex, rule) in handler.rules.enumerated() {
                for (index, flow) in (rule.via ?? []).enumerated() {
                    references.append(FlowReference(
                        flow: flow, path: JSONPointer(["on", handler.action, String(ruleIndex), "via", String(index)]), isInitial: false))
                }
                let guardEffects = (rule.guarded?.otherwise ?? []).enumerated().map {
                    (JSONPointer(["on", handler.action, String(ruleIndex), "guard", "else", String($0.offset)]), $0.element)
                }
                let ruleEffects = rule.effects.enumerated().map {
                    (JSONPointer(["on", handler.action, String(ruleIndex), "do", String($0.offset)]), $0.element)
                }
                for (effectPath, effect) in ruleEffects + guardEffects {
                    let path = effectPath.appending(effect.name)
                    switch effect {
                    case .push(.flow(let name, _)), .setRoot(.flow(let name, _)), .replaceRoot(.flow(let name, _)):
                        references.append(FlowReference(flow: name, path: path.appending("flow"), isInitial: false))
                    case .present(let presentation):
                        references.append(FlowReference(flow: presentation.flow, path: path.appending("flow"), isInitial: false))
                    default:
                        break
                    }
                }
            }
        }
        return references
    }
}
