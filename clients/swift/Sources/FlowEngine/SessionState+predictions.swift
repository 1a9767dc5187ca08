// SessionState+predictions: the state each action available now would produce, before it is posted.

/// An action a client could post now and the state posting it would produce.
public struct Prediction: Sendable {
    /// The action to post: the type, `from` the screen on top (none for the interaction
    /// actions, which address the pending interaction), no params, and `interactive` when the
    /// prediction is of the interactive form.
    public var action: FlowAction
    /// The state the answer will hold, provided nothing else acts on the session first.
    public var next: SessionState
}

extension SessionState {
    /// The next state of every action available now that needs no params, nearest flow first
    /// (``FlowEngine/availableActions(in:catalog:context:)``'s order); an action that may run
    /// interactively is predicted twice, plainly and then with `interactive: true` (which
    /// opens the interaction). Actions with a required param, `link`, which always takes a
    /// URI, and row taps, whose state depends on the row tapped (one prediction per row would
    /// repeat the whole list once per row), are left to ``applying(_:limits:)``. An action the
    /// engine would refuse after all (a rule whose `when` reads a param) is left out.
    ///
    /// The promise: posting `prediction.action` with `If-Match` on this version answers exactly
    /// `prediction.next.document()`, when nothing else acted on the session (or the user's state)
    /// meanwhile.
    public func predictions(limits: FlowLimits = .default) -> [Prediction] {
        let available = FlowEngine.availableActions(in: tree, catalog: catalog, context: context)
        let top = tree.top?.entryId
        var predictions: [Prediction] = []
        predictions.reserveCapacity(available.count + 2)
        for entry in available where entry.rowKinds == nil && !entry.params.contains(where: \.required) {
            let source = FlowAction(type: entry.type).isInteractionAction ? nil : top
            let forms = entry.interactive && tree.interaction == nil ? [false, true] : [false]
            for interactive in forms {
                let action = FlowAction(type: entry.type, from: source, interactive: interactive)
                guard let (next, _) = try? applying(action, limits: limits) else { continue }
                predictions.append(Prediction(action: action, next: next))
            }
        }
        return predictions
    }
}
