// FlowGraphBuilder+labels: an edge's label from its rule (action, conditions, guard), and whether a condition reads a flag.

import FlowEngine
import JSON

extension FlowGraphBuilder {
    static func isScreen(_ node: FlowGraph.Node) -> Bool {
        switch node.role {
        case .screen, .handoff: true
        default: false
        }
    }

    static func moves(_ effect: FlowEffect) -> Bool {
        switch effect {
        case .setUser, .bubble, .result, .list: false  // a list changes in place: nothing moves
        default: true
        }
    }

    /// `type {param, optional?}`, then `when …`, then `guard: …`, then side effects such as
    /// `setUser onboarded=true` and `→ result into address`.
    static func label(action: String, rule: FlowRule) -> [String] {
        var first = action
        if !rule.params.isEmpty {
            first += " {" + rule.params.map { $0.required ? $0.name : $0.name + "?" }.joined(separator: ", ") + "}"
        }
        if rule.interactive { first += " (interactive)" }
        // A row tap reads as such, so the list's taps stand apart from the screen's buttons.
        if let row = rule.row { first += " · tap on row " + row.joined(separator: " | ") }
        var lines = [first]
        if let when = rule.when { lines.append("when " + describe(when)) }
        if let guarded = rule.guarded { lines.append("guard: " + describe(guarded.when)) }
        for effect in rule.effects {
            switch effect {
            case .setUser(let values):
                lines.append("setUser " + values.keys.map { "\($0)=\(values[$0]?.abbreviatedJSON(limit: 30) ?? "null")" }.joined(separator: ", "))
            case .result(let result):
                lines.append("→ result into \(result.into)" + (result.to.map { " of \($0)" } ?? ""))
            case .list(let list):
                lines.append(list.name + (list.screen.map { " in \($0)" } ?? ""))
            default:
                break
            }
        }
        return lines
    }

    /// A condition as people read it: `flag eu-face-scan is true`, `not (user onboarded is true)`.
    static func describe(_ condition: FlowCondition) -> String {
        switch condition {
        case .test(let source, let key, let test):
            let value: String
            switch test {
            case .equals(let v), .notEquals(let v): value = v.abbreviatedJSON(limit: 30)
            case .oneOf(let values), .noneOf(let values): value = JSONValue.array(values).abbreviatedJSON(limit: 40)
            case .exists(let exists): value = exists ? "true" : "false"
            }
            return "\(source.rawValue) \(key) \(test.keyword) \(value)"
        case .all(let conditions):
            return conditions.map { grouped($0) }.joined(separator: " and ")
        case .any(let conditions):
            return conditions.map { grouped($0) }.joined(separator: " or ")
        case .not(let condition):
            return "not " + grouped(condition)
        }
    }

    static func grouped(_ condition: FlowCondition) -> String {
        if case .test = condition { return describe(condition) }
        return "(" + describe(condition) + ")"
    }
}

extension FlowCondition {
    /// Whether a flag's value decides it anywhere inside.
    var mentionsFlag: Bool {
        switch self {
        case .test(let source, _, _): source == .flag
        case .all(let conditions), .any(let conditions): conditions.contains { $0.mentionsFlag }
        case .not(let condition): condition.mentionsFlag
        }
    }
}
