// `?predict=true`: read at the HTTP edge.
import HTTPServer

/// Whether a request asks for predictions: `?predict=true` (a query parameter rather than a
/// `Prefer` header, so a link or a curl line can ask, and no cache mixes the two answers).
struct PredictionRequest {
    let predict: Bool

    init(_ request: Request) throws(ResponseError) {
        predict = try Self.flag(request, "predict") ?? false
    }

    /// A boolean query parameter: `true` or `false`, nil when absent, else a 400 naming it.
    static func flag(_ request: Request, _ name: String) throws(ResponseError) -> Bool? {
        guard let text = request.queryValue(name) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default:
            throw ResponseError(.problem(400, "Query parameter \(name) must be true or false; found \(text).",
                                         type: ProblemType.malformed, errors: [.init(pointer: name, detail: "must be true or false")]))
        }
    }
}
