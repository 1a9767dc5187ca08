// Query parameters that are numbers or booleans, each with the 400 that names it.
import HTTPServer

extension Request {
    /// A whole-number query parameter within `range`, `fallback` when absent, else a 400 naming it.
    func integerQuery(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ResponseError) -> Int {
        guard let text = queryValue(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            let upper = range.upperBound == Int.max ? "" : " to \(range.upperBound)"
            throw ResponseError(.problem(400, "Query parameter \(name) must be a whole number from \(range.lowerBound)\(upper); found \(text).",
                                         type: ProblemType.malformed, errors: [.init(pointer: name, detail: "must be a whole number")]))
        }
        return value
    }

    /// A boolean query parameter for admin switches: `true`, `1` or a bare name are true, `false`
    /// and `0` false, `fallback` when absent, else a 400 naming it.
    func booleanQuery(_ name: String, default fallback: Bool) throws(ResponseError) -> Bool {
        guard let text = queryValue(name) else { return fallback }
        switch text {
        case "true", "1", "": return true
        case "false", "0": return false
        default:
            throw ResponseError(.problem(400, "Query parameter \(name) must be true or false; found \(text).",
                                         type: ProblemType.malformed, errors: [.init(pointer: name, detail: "must be true or false")]))
        }
    }
}
