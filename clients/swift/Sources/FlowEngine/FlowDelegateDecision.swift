// FlowDelegateDecision: a delegate's answer — handle with effects, pass up, refuse, or use the definition.

/// A delegate's answer to an action.
public enum FlowDelegateDecision: Sendable, Equatable {
    /// The flow handles the action: `effects` apply to it, in order. `allowsInteractive` lets
    /// the action open an interactive transition.
    case handle(_ effects: [FlowEffect], allowsInteractive: Bool = false)
    /// The flow does not handle it; the parent is asked next.
    case passToParent
    /// The flow owns the action but will not apply it now (422 with the reason).
    case refuse(reason: String)
    /// The flow owns the action but a guard stops it: `effects` (which show the guard's flow)
    /// apply instead and the action waits as a ``PendingAction`` until that flow is done.
    case guarded(_ effects: [FlowEffect])
    /// Let the flow's definition decide (from a Swift delegate that only overrides some cases).
    case useDefinition
}
