// FlowActionDelegate: the Swift extension point — a flow's delegate decides what an action does.

/// Decides what a flow does with an action: FLXFlow's `process(action:) -> Bool`, with the
/// answer spelled out (handle with effects, pass to the parent, refuse with a reason).
///
/// Definitions cover most flows (``DefinitionDelegate`` interprets them). Register a Swift
/// delegate with ``FlowCatalog/register(_:for:)`` for behaviour no definition can express; it
/// returns the same ``FlowEffect`` values, so the engine applies both kinds alike.
///
/// ```swift
/// struct QuietHours: FlowActionDelegate {
///     func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision {
///         guard request.action.type == "home.presentModal" else { return .useDefinition }
///         if request.context.attributes["quietHours"] == true {
///             return .refuse(reason: "modals are off during quiet hours")
///         }
///         return .useDefinition
///     }
/// }
/// catalog.register(QuietHours(), for: "app")
/// ```
public protocol FlowActionDelegate: Sendable {
    /// Decides what the flow does with `request.action`. Throw
    /// ``FlowError/invalidParams(path:message:)`` for params the action should not have sent.
    func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision
}
