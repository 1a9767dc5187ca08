// FlowNode: a flow controller in the tree — its entries, selected tab and what it presents.

/// A flow controller: a stack of entries or a set of tabs, and optionally one flow it presents
/// modally over itself.
///
/// Only flows on the visible path present anything: when a presenter leaves the screen
/// (popped, covered by a push, its tab deselected), what it presented is dismissed with it, so
/// no hidden modal lingers.
public struct FlowNode: Sendable, Equatable {
    /// The id number; clients see it as `"f\(id)"`.
    public internal(set) var id: Int
    /// The name of the flow's definition.
    public internal(set) var flow: String
    public internal(set) var kind: FlowKind
    /// Bottom to top for a stacked flow; the tabs for a tabbed flow. Never empty.
    public internal(set) var entries: [FlowEntry]
    /// The selected tab of a tabbed flow; 0 for a stacked flow.
    public internal(set) var selected: Int
    /// How this flow is presented (`fullScreen`, …) when it is presented; `nil` otherwise.
    public internal(set) var presentationStyle: String?
    /// Zero or one element: an array gives the recursive field value semantics and in-place
    /// mutation without a hand-written box.
    var presentedStorage: [FlowNode]

    init(
        id: Int, flow: String, kind: FlowKind, entries: [FlowEntry], selected: Int = 0,
        presentationStyle: String? = nil, presented: FlowNode? = nil
    ) {
        self.id = id
        self.flow = flow
        self.kind = kind
        self.entries = entries
        self.selected = selected
        self.presentationStyle = presentationStyle
        self.presentedStorage = presented.map { [$0] } ?? []
    }

    /// The flow this one presents, if any.
    public var presented: FlowNode? { presentedStorage.first }

    /// The id as clients see it, such as `"f3"`.
    public var flowId: String { EntryId.flow(id) }

    /// The index of the entry on screen: the top of a stack, the selected tab.
    public var activeIndex: Int { kind == .stacked ? entries.count - 1 : selected }

    /// Stands in for a node while it is taken out of the tree to be changed in place.
    static let placeholder = FlowNode(id: 0, flow: "", kind: .stacked, entries: [])
}

/// One step from a node to a child: into an entry, or into the presented flow.
enum TreeStep: Sendable, Equatable {
    case entry(Int)
    case presented
}

extension FlowNode {
    /// The node at `path`, if the path exists.
    func node(at path: ArraySlice<TreeStep>) -> FlowNode? {
        var node = self
        for step in path {
            switch step {
            case .presented:
                guard let presented = node.presented else { return nil }
                node = presented
            case .entry(let index):
                guard node.entries.indices.contains(index), case .flow(let child) = node.entries[index] else { return nil }
                node = child
            }
        }
        return node
    }

    /// Takes the node at `path` out of the tree, leaving a placeholder, so the caller can change
    /// it without copying its storage; ``put(_:at:)`` puts it back.
    mutating func take(at path: ArraySlice<TreeStep>) -> FlowNode? {
        guard let step = path.first else {
            let node = self
            self = .placeholder
            return node
        }
        switch step {
        case .presented:
            guard !presentedStorage.isEmpty else { return nil }
            return presentedStorage[0].take(at: path.dropFirst())
        case .entry(let index):
            guard entries.indices.contains(index), case .flow(var child) = entries[index] else { return nil }
            entries[index] = .screen(.placeholder)  // drops the array's reference so `child` is unique
            let taken = child.take(at: path.dropFirst())
            entries[index] = .flow(child)
            return taken
        }
    }

    /// Puts `node` at `path` (replacing what is there); false when the path does not exist.
    @discardableResult
    mutating func put(_ node: FlowNode, at path: ArraySlice<TreeStep>) -> Bool {
        guard let step = path.first else {
            self = node
            return true
        }
        switch step {
        case .presented:
            guard !presentedStorage.isEmpty else { return false }
            return presentedStorage[0].put(node, at: path.dropFirst())
        case .entry(let index):
            guard entries.indices.contains(index), case .flow(var child) = entries[index] else { return false }
            entries[index] = .screen(.placeholder)
            let done = child.put(node, at: path.dropFirst())
            entries[index] = .flow(child)
            return done
        }
    }

    /// Whether this node or any node inside it presents something.
    var containsPresentation: Bool {
        if !presentedStorage.isEmpty { return true }
        for entry in entries {
            if case .flow(let child) = entry, child.containsPresentation { return true }
        }
        return false
    }

    /// Dismisses every presentation held off the visible path (`isVisible` tells whether this
    /// node is on it), keeping the invariant that only visible flows present.
    mutating func dismissHiddenPresentations(isVisible: Bool) {
        if !isVisible {
            presentedStorage.removeAll()
        } else if !presentedStorage.isEmpty {
            presentedStorage[0].dismissHiddenPresentations(isVisible: true)
        }
        let active = activeIndex
        for index in entries.indices {
            guard case .flow(var child) = entries[index] else { continue }
            guard child.containsPresentation else { continue }
            let childVisible = isVisible && index == active
            entries[index] = .screen(.placeholder)
            child.dismissHiddenPresentations(isVisible: childVisible)
            entries[index] = .flow(child)
        }
    }

    /// Dismisses every presentation in this node and inside it; returns the style of the
    /// outermost dismissed presentation, if any.
    mutating func dismissAllPresentations() -> String? {
        var style = presentedStorage.first?.presentationStyle
        presentedStorage.removeAll()
        for index in entries.indices {
            guard case .flow(var child) = entries[index], child.containsPresentation else { continue }
            entries[index] = .screen(.placeholder)
            let inner = child.dismissAllPresentations()
            entries[index] = .flow(child)
            if style == nil { style = inner }
        }
        return style
    }

    /// The number of entries (screens and flows, this node included) and the deepest nesting.
    func measure() -> (entries: Int, depth: Int) {
        var count = 1
        var depth = 1
        for entry in entries {
            switch entry {
            case .screen: count += 1
            case .flow(let child):
                let inner = child.measure()
                count += inner.entries
                depth = max(depth, inner.depth + 1)
            }
        }
        if let presented {
            let inner = presented.measure()
            count += inner.entries
            depth = max(depth, inner.depth + 1)
        }
        return (count, depth)
    }
}
