// ActionOutcome: the result of an applied action — the new tree, the transition and who handled it.

/// What applying an action produced.
public struct ActionOutcome: Sendable, Equatable {
    /// What happened to the interactive transition, when the action concerned one.
    public enum InteractionEvent: String, Sendable, Equatable {
        /// An action posted with `interactive: true` opened an interaction; the tree is unchanged.
        case started
        /// `interaction.update` moved it.
        case updated
        /// `interaction.end` finished it: the transition was applied.
        case finished
        /// `interaction.end` or `interaction.cancel` cancelled it: the tree is as it was.
        case cancelled
    }

    /// The tree after the action.
    public var tree: FlowTree
    /// What changed on screen; `nil` when nothing did (user state only, or an interaction that
    /// started, moved or was cancelled).
    public var transition: Transition?
    /// The flow whose delegate handled the action.
    public var handledBy: String
    /// User state to persist, in the order the effects set it.
    public var userChanges: [UserChange]
    public var interactionEvent: InteractionEvent?

    public init(
        tree: FlowTree, transition: Transition?, handledBy: String, userChanges: [UserChange] = [],
        interactionEvent: InteractionEvent? = nil
    ) {
        self.tree = tree
        self.transition = transition
        self.handledBy = handledBy
        self.userChanges = userChanges
        self.interactionEvent = interactionEvent
    }
}
