// LinkOutcome: the result of following a link — the new tree, the transition, whether it was deferred.

/// What following a link produced.
public struct LinkOutcome: Sendable, Equatable {
    /// The link the URI matched.
    public var match: LinkMatch
    /// The link's `when` did not hold: the tree is the session's (or a new session's) with the
    /// link kept as its ``FlowTree/pendingLink``, and nothing moved.
    public var deferred: Bool
    public var tree: FlowTree
    /// From the top before to the linked top; `nil` when deferred or for a new session.
    public var transition: Transition?
    /// The flow that handled the link's last action (the root flow when it has none, or when
    /// the link was deferred).
    public var handledBy: String
    /// User state set by the link's actions, in order, for the server to persist.
    public var userChanges: [UserChange]

    public init(
        match: LinkMatch, deferred: Bool, tree: FlowTree, transition: Transition?, handledBy: String,
        userChanges: [UserChange] = []
    ) {
        self.match = match
        self.deferred = deferred
        self.tree = tree
        self.transition = transition
        self.handledBy = handledBy
        self.userChanges = userChanges
    }

    /// The outcome as an applied action's.
    public var actionOutcome: ActionOutcome {
        ActionOutcome(tree: tree, transition: transition, handledBy: handledBy, userChanges: userChanges)
    }
}
