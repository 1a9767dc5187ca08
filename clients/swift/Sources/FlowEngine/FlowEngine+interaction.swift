// FlowEngine+interaction: interactive transitions — update, end (finish or cancel) and cancel.

import JSON

extension FlowEngine {
    /// Velocity (points per second) above which `interaction.end` finishes whatever the progress.
    public static let finishVelocity = 300.0
    /// Progress above which `interaction.end` finishes.
    public static let finishProgress = 0.5

    /// While an interaction is pending only the interaction actions apply; `from` and
    /// `interactive` are ignored on them.
    static func continueInteraction(
        _ interaction: Interaction, with action: FlowAction, tree: FlowTree, catalog: FlowCatalog,
        context: FlowContext, limits: FlowLimits
    ) throws(FlowError) -> ActionOutcome {
        switch action.type {
        case FlowAction.interactionUpdate:
            let progress = try progressParam(of: action, required: true) ?? interaction.progress
            var moved = tree
            moved.interaction?.progress = progress
            return ActionOutcome(tree: moved, transition: nil, handledBy: interaction.handledBy, interactionEvent: .updated)
        case FlowAction.interactionEnd:
            let progress = try progressParam(of: action, required: false) ?? interaction.progress
            let velocity = try velocityParam(of: action) ?? 0
            guard velocity > finishVelocity || progress > finishProgress else {
                return cancelled(interaction, tree: tree)
            }
            var settled = tree
            settled.interaction = nil
            // Effects are computed again now: the tree has not changed since the interaction
            // opened, so they are those of the preview.
            return try applyNow(interaction.action, to: settled, catalog: catalog, context: context, limits: limits, finishing: true)
        case FlowAction.interactionCancel:
            return cancelled(interaction, tree: tree)
        default:
            throw .interactionPending(action: action.type, pending: interaction.action.type)
        }
    }

    private static func cancelled(_ interaction: Interaction, tree: FlowTree) -> ActionOutcome {
        var restored = tree
        restored.interaction = nil
        return ActionOutcome(tree: restored, transition: nil, handledBy: interaction.handledBy, interactionEvent: .cancelled)
    }

    private static func progressParam(of action: FlowAction, required: Bool) throws(FlowError) -> Double? {
        guard let value = action.params["progress"] else {
            if required {
                throw .invalidParams(path: "/params/progress", message: "\(action.type) needs param \"progress\", a number from 0 to 1")
            }
            return nil
        }
        guard let progress = value.doubleValue, progress >= 0, progress <= 1 else {
            throw .invalidParams(path: "/params/progress", message: "progress must be a number from 0 to 1; found \(value.abbreviatedJSON(limit: 40))")
        }
        return progress
    }

    private static func velocityParam(of action: FlowAction) throws(FlowError) -> Double? {
        guard let value = action.params["velocity"] else { return nil }
        guard let velocity = value.doubleValue, velocity.isFinite else {
            throw .invalidParams(path: "/params/velocity", message: "velocity must be a number (points per second); found \(value.abbreviatedJSON(limit: 40))")
        }
        return velocity
    }
}
