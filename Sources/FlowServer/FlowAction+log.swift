// How the action log keeps a row tap: the tapped row's id among the params, as `row.id` (read as a tap only where the catalog has lists).
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

    /// The action a log entry records: `row.id` among its params is the tapped row when the
    /// session's catalog `hasLists`.
    ///
    /// Before lists, a client could send a param named `row.id` like any other, and the log
    /// kept it as sent. A row tap needs a screen with a list, so a catalog without one (every
    /// catalog written before lists) never logged one: there `row.id` is the client's own param,
    /// and the entry rebuilds as it was applied.
    init(logged type: String, from: String?, params: JSONObject, interactive: Bool, hasLists: Bool = true) {
        var params = params
        var row: String?
        if hasLists, let id = params[FlowAction.rowIdParam]?.stringValue {
            row = id
            params[FlowAction.rowIdParam] = nil
        }
        self.init(type: type, from: from, row: row, params: params, interactive: interactive)
    }
}
