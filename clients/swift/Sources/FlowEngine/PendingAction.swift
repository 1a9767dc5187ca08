// PendingAction: an action held back by a guard until the flow that satisfies the guard is done.

import JSON

/// An action whose rule's guard did not hold: the guard's flow (`login`) was shown instead and
/// the action waits here. When that flow has left the tree, the action is applied again in the
/// same version if the screen it came from is back on top and the guard now holds; otherwise it
/// is dropped (the user cancelled the guard). Guards nest: the last element is the innermost.
///
/// ```json
/// {"action": {"type": "home.checkout", "from": "e4", "params": {}},
///  "source": "e4", "guard": {"flow": "login", "flowId": "f9"}}
/// ```
public struct PendingAction: Sendable, Equatable {
    /// The action as it was posted (never interactive).
    public var action: FlowAction
    /// The id number of the screen that was on top when the action was posted.
    public var source: Int
    /// The name of the flow the guard showed.
    public var guardFlow: String
    /// That flow's id number; the action waits while a flow with this id is in the tree.
    public var guardFlowId: Int

    public init(action: FlowAction, source: Int, guardFlow: String, guardFlowId: Int) {
        self.action = action
        self.source = source
        self.guardFlow = guardFlow
        self.guardFlowId = guardFlowId
    }

    /// `{"action": {"type","from","row"?,"params"}, "source": "e4", "guard": {"flow","flowId"}}`, as the
    /// state document shows it.
    func write(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "action")
        writer.beginObject()
        writer.writeKey(literal: "type")
        writer.writeString(action.type)
        writer.writeKey(literal: "from")
        writer.writeOptionalString(action.from)
        if let row = action.row {
            writer.writeKey(literal: "row")
            writer.writeString(row)
        }
        writer.writeKey(literal: "params")
        writer.writeObject(action.params)
        writer.endObject()
        writer.writeKey(literal: "source")
        writer.writeEntryId(prefix: EntryId.screenPrefix, source)
        writer.writeKey(literal: "guard")
        writer.beginObject()
        writer.writeKey(literal: "flow")
        writer.writeString(guardFlow)
        writer.writeKey(literal: "flowId")
        writer.writeEntryId(prefix: EntryId.flowPrefix, guardFlowId)
        writer.endObject()
        writer.endObject()
    }
}
