// FlowKind: whether a flow controller holds a stack or a set of tabs.

/// The kind of a flow controller.
public enum FlowKind: String, Sendable, Equatable, Hashable, CaseIterable {
    /// An ordered stack of entries, bottom to top: push, pop, popTo, popToRoot, setRoot.
    case stacked
    /// A list of tabs and a selected index: selectTab.
    case tabbed
}
