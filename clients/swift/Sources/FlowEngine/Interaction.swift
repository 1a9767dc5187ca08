// Interaction: a pending interactive transition (an edge swipe in progress) and its preview.

/// An interactive transition in progress: the action that opened it, how far it has gone, and
/// what finishing it would do. While one is pending the tree does not change and every other
/// action is refused.
public struct Interaction: Sendable, Equatable {
    /// The action as posted, with `interactive: true`; it is applied again when the interaction
    /// finishes.
    public internal(set) var action: FlowAction
    /// From 0 (just started) to 1 (complete), as reported by `interaction.update`.
    public internal(set) var progress: Double
    /// The flow whose delegate accepted the action.
    public internal(set) var handledBy: String
    /// The transition finishing would apply.
    public internal(set) var preview: Transition?

    init(action: FlowAction, progress: Double, handledBy: String, preview: Transition?) {
        self.action = action
        self.progress = progress
        self.handledBy = handledBy
        self.preview = preview
    }
}
