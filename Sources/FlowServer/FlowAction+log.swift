// How the action log keeps a row tap: the tapped row's id among the params, as `row.id`.
import FlowEngine
import JSON

extension FlowAction {
    /// The params the log stores for this action: its own, plus `row.id` when it taps a row.
    ///
    /// The log's entries have no column for the row; `row.id` is the name the rules read the
    /// row by and one a client can never send (FlowAction(json:) refuses it), so it marks a row
    /// tap without ambiguity, and logs written before lists read back unchanged.
    var loggedParams: JSONObject {
        guard let row else { return params }
        var logged = params
        logged[FlowAction.rowIdParam] = .string(row)
        return logged
    }

    /// The action a log entry records: `row.id` among its params is the tapped row.
    init(logged type: String, from: String?, params: JSONObject, interactive: Bool) {
        var params = params
        var row: String?
        if let id = params[FlowAction.rowIdParam]?.stringValue {
            row = id
            params[FlowAction.rowIdParam] = nil
        }
        self.init(type: type, from: from, row: row, params: params, interactive: interactive)
    }
}
