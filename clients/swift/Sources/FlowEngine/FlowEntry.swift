// FlowEntry: one entry of a flow — a screen or a child flow controller.

/// One entry of a flow controller: a screen, or a child flow controller (for a tabbed flow,
/// each entry is a tab).
public enum FlowEntry: Sendable, Equatable {
    case screen(ScreenEntry)
    case flow(FlowNode)

    /// The entry's id number (a screen's or a flow's; they share one counter).
    public var id: Int {
        switch self {
        case .screen(let screen): return screen.id
        case .flow(let node): return node.id
        }
    }

    /// The id as clients see it: `"e7"` for a screen, `"f3"` for a flow.
    public var entryId: String {
        switch self {
        case .screen(let screen): return screen.entryId
        case .flow(let node): return node.flowId
        }
    }
}
