// NavigationPlan+RenderedTree: a renderer as a value — what it shows, and the steps applied to it.
import FlowEngine

/// What a renderer that mirrors the flow tree shows, as a value, and the plan steps applied to
/// it with the checks a real one would trip on (a step for a container it does not have, a
/// present over a node already presenting, a change in the middle of a swipe).
///
/// The tests check every transition of the sample app with it: applying
/// `NavigationPlan(from: a, to: b)` to `RenderedTree(a)` gives `RenderedTree(b)`. A renderer
/// can keep one next to its controllers to know what it shows.
///
/// ```swift
/// var shown = RenderedTree(state)
/// try shown.apply(NavigationPlan(from: state, to: next))
/// shown == RenderedTree(next)     // true
/// ```
public struct RenderedTree: Sendable, Equatable {
    /// The root container and everything in it, presentations under unselected tabs left out.
    public private(set) var root: NavigationState.Node?
    /// The step an interaction in progress drives, with its progress.
    public private(set) var interaction: NavigationPlan.Step?

    /// Nothing shown yet.
    public init() {}

    /// What a renderer shows for `state`.
    public init(_ state: NavigationState) {
        root = state.root.shown
        interaction = NavigationPlan.interactionStep(state)
    }

    /// Applies a plan: its renames, then its steps in order.
    public mutating func apply(_ plan: NavigationPlan) throws(RenderError) {
        if !plan.renamed.isEmpty {
            guard let root else { throw RenderError(step: nil, message: "renames with nothing shown") }
            self.root = root.renaming(plan.renamed)
            interaction = interaction.map { $0.renaming(plan.renamed) }
        }
        for step in plan.steps { try apply(step) }
    }

    /// Applies one step.
    public mutating func apply(_ step: NavigationPlan.Step) throws(RenderError) {
        switch step.interaction {
        case .progress:
            if let pending = interaction {
                guard pending.isSameChange(as: step) else { throw RenderError(step: step, message: "another interaction is in progress: \(pending)") }
            } else {
                var trial = self
                try trial.perform(step)  // it must be possible now
            }
            interaction = step
        case .finish, .cancel:
            guard let pending = interaction, pending.isSameChange(as: step) else {
                throw RenderError(step: step, message: "no such interaction in progress (\(interaction.map(\.description) ?? "none"))")
            }
            interaction = nil
            if step.interaction == .finish { try perform(step) }
        case nil:
            if let pending = interaction { throw RenderError(step: step, message: "an interaction is in progress: \(pending)") }
            try perform(step)
        }
    }

    private mutating func perform(_ step: NavigationPlan.Step) throws(RenderError) {
        if case .window = step.container {
            guard case .replaceRoot(let node) = step.operation else { throw RenderError(step: step, message: "the window only takes replaceRoot") }
            root = node.withoutPresentations
            return
        }
        guard let current = root else { throw RenderError(step: step, message: "nothing is shown yet") }
        var failure: String?
        let id: String
        switch step.container {
        case .stack(let node), .tabs(let node), .presentation(over: let node): id = node
        case .window: id = ""
        }
        let (updated, found) = current.updating(id) { node in failure = Self.perform(step, on: &node) }
        guard found else { throw RenderError(step: step, message: "no node \(id) is shown") }
        if let failure { throw RenderError(step: step, message: failure) }
        root = updated
    }

    /// Applies `step` to its node; a message says why it cannot.
    private static func perform(_ step: NavigationPlan.Step, on node: inout NavigationState.Node) -> String? {
        switch (step.container, step.operation) {
        case (.stack, .refresh(let screen)), (.tabs, .refresh(let screen)):
            let index = node.entries.firstIndex {
                if case .screen(let shown) = $0 { shown.isSameScreen(as: screen) } else { false }
            }
            guard let index else { return "no screen \(screen.id) (\(screen.feature)) in \(node.id) to refresh" }
            // A refresh shows new params; the list is the list steps' to change.
            var refreshed = screen
            if case .screen(let shown) = node.entries[index] { refreshed.sections = shown.sections }
            node.entries[index] = .screen(refreshed)
        case (.stack, .updateList(let id, let changes, let sections)), (.tabs, .updateList(let id, let changes, let sections)):
            let index = node.entries.firstIndex {
                if case .screen(let shown) = $0 { shown.id == id } else { false }
            }
            guard let index, case .screen(var screen) = node.entries[index] else { return "no screen \(id) in \(node.id) to change the list of" }
            let shown = screen.sections ?? []
            // Built from the next state already (pushed or presented again): nothing to change.
            guard shown != sections else { return nil }
            guard let updated = changes.apply(to: shown, new: sections), updated == sections else {
                return "the list changes of \(id) do not turn the list it shows into the new one"
            }
            screen.sections = updated
            node.entries[index] = .screen(screen)
        case (.stack, let operation):
            guard node.kind == "stacked" else { return "node \(node.id) is \(node.kind), not stacked" }
            switch operation {
            case .push(let entry):
                node.entries.append(entry.withoutPresentations)
            case .pop:
                guard node.entries.count > 1 else { return "cannot pop the last entry of \(node.id)" }
                node.entries.removeLast()
            case .popTo(let target):
                guard let index = node.entries.firstIndex(where: { $0.id == target }) else { return "no entry \(target) in \(node.id)" }
                guard index < node.entries.count - 1 else { return "\(target) is already on top of \(node.id)" }
                node.entries.removeSubrange((index + 1)...)
            case .setStack(let entries):
                guard !entries.isEmpty else { return "a stack cannot be empty" }
                node.entries = keeping(node.entries, as: entries)
            default:
                return "a stack does not take \(operation.kind.rawValue)"
            }
        case (.tabs, let operation):
            guard node.isTabbed else { return "node \(node.id) is \(node.kind), not tabbed" }
            switch operation {
            case .selectTab(let index):
                guard node.entries.indices.contains(index) else { return "no tab \(index) in \(node.id)" }
                if let problem = node.leavingTabs(for: index) { return problem }
                node.selected = index
            case .setTabs(let entries, let selected):
                guard entries.indices.contains(selected) else { return "no tab \(selected) among \(entries.count)" }
                node.entries = keeping(node.entries, as: entries)
                if let problem = node.leavingTabs(for: selected) { return problem }
                node.selected = selected
            default:
                return "a tab bar does not take \(operation.kind.rawValue)"
            }
        case (.presentation, .present(let presented)):
            guard node.presented == nil else { return "\(node.id) already presents \(node.presented?.node.id ?? "")" }
            node.presented = NavigationState.Box(presented.withoutPresentations)
        case (.presentation, .dismiss):
            guard node.presented != nil else { return "\(node.id) presents nothing" }
            node.presented = nil
        case (.presentation, let operation):
            return "a presentation level does not take \(operation.kind.rawValue)"
        case (.window, _):
            return "the window only takes replaceRoot"
        }
        return nil
    }

    /// `entries`, reusing what is shown for those already there (same screen or flow).
    private static func keeping(_ shown: [NavigationState.Entry], as entries: [NavigationState.Entry]) -> [NavigationState.Entry] {
        entries.map { entry in shown.first(where: { $0.isSameEntry(as: entry) }) ?? entry.withoutPresentations }
    }
}

/// A step a renderer cannot apply to what it shows, and why.
public struct RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The step refused (nil for a plan's renames).
    public var step: NavigationPlan.Step?
    /// Why, naming the node or entry.
    public var message: String
    /// An error for `step`.
    public init(step: NavigationPlan.Step?, message: String) {
        self.step = step
        self.message = message
    }
    /// `push e4 on stack f2, animated: node f2 is tabbed, not stacked`.
    public var description: String { step.map { "\($0): \(message)" } ?? message }
}

extension NavigationPlan.Step {
    /// The step with ids replaced through `map`.
    func renaming(_ map: [String: String]) -> NavigationPlan.Step {
        func rename(_ id: String) -> String { map[id] ?? id }
        var step = self
        switch container {
        case .stack(let id): step.container = .stack(rename(id))
        case .tabs(let id): step.container = .tabs(rename(id))
        case .presentation(let id): step.container = .presentation(over: rename(id))
        case .window: break
        }
        switch operation {
        case .popTo(let id): step.operation = .popTo(rename(id))
        case .push(.screen(var screen)):
            screen.id = rename(screen.id)
            step.operation = .push(.screen(screen))
        case .refresh(var screen):
            screen.id = rename(screen.id)
            step.operation = .refresh(screen)
        default: break
        }
        return step
    }
}

extension NavigationState.Node {
    /// The tree with node `id` changed by `change`, and whether it was found.
    func updating(_ target: String, _ change: (inout NavigationState.Node) -> Void) -> (NavigationState.Node, Bool) {
        var node = self
        if id == target {
            change(&node)
            return (node, true)
        }
        for index in node.entries.indices {
            guard case .flow(let child) = node.entries[index] else { continue }
            let (updated, found) = child.updating(target, change)
            if found {
                node.entries[index] = .flow(updated)
                return (node, true)
            }
        }
        if let presented = node.presented?.node {
            let (updated, found) = presented.updating(target, change)
            if found {
                node.presented = NavigationState.Box(updated)
                return (node, true)
            }
        }
        return (node, false)
    }

    /// Why tab `index` cannot be selected: a tab left behind still presents something (a
    /// modal stays on screen when its presenter's tab is left; dismiss it first).
    func leavingTabs(for index: Int) -> String? {
        for (offset, entry) in entries.enumerated() where offset != index {
            if case .flow(let child) = entry, child != child.withoutPresentations {
                return "tab \(offset) of \(id) still presents a flow; dismiss it before selecting tab \(index)"
            }
        }
        return nil
    }
}
