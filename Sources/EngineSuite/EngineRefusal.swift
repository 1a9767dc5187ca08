// EngineRefusal: a refused action as the conformance suite writes it: the server's status and code, and where in the action.

import FlowEngine
import JSON

/// An action the engine refused, as a runner answers it:
/// `{"refused": {chain?, code, flow?, link?, pointer, status, step?}}` (keys sorted).
///
/// `code` and `status` are the server's problem's (`code` member and HTTP status); `chain`,
/// `flow`, `link` and `step` are its extension members when it has them. `pointer` is a JSON
/// Pointer into the action posted: `/from` for a stale source, the param's path for invalid
/// params, `/params/uri` for links, `/type` for the rest (the action type nobody handles, or
/// that was refused, or that must wait for an interaction), `""` when the definitions or tree are
/// at fault. The message is for people and not part of the suite.
public struct EngineRefusal: Sendable, Equatable {
    public var code: String
    public var status: Int
    public var pointer: String
    public var chain: [String]?
    public var flow: String?
    public var link: String?
    public var step: Int?

    public init(_ error: FlowError) {
        code = error.code
        switch error {
        case .staleSource:
            status = 409
            pointer = "/from"
        case .staleRow:
            status = 409
            pointer = "/row"
        case .interactionPending, .noInteraction:
            status = 409
            pointer = "/type"
        case .unhandled(_, let chain):
            status = 422
            pointer = "/type"
            self.chain = chain
        case .refused(let flow, _, _), .listTooLarge(let flow, _, _):
            status = 422
            pointer = "/type"
            self.flow = flow
        case .invalidParams(let path, _):
            status = 400
            pointer = path
        case .brokenDefinition:
            status = 422
            pointer = ""
        case .corruptTree:
            status = 500
            pointer = ""
        case .unknownLink:
            status = 422
            pointer = "/params/uri"
        case .linkRefused(let pattern, let step, _, _):
            status = 422
            pointer = "/params/uri"
            link = pattern
            self.step = step
        }
    }

    /// The runner's output line.
    public func json() -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.writeKey("refused")
        writer.beginObject()
        if let chain {
            writer.writeKey("chain")
            writer.beginArray()
            for flow in chain { writer.writeString(flow) }
            writer.endArray()
        }
        writer.writeKey("code")
        writer.writeString(code)
        if let flow {
            writer.writeKey("flow")
            writer.writeString(flow)
        }
        if let link {
            writer.writeKey("link")
            writer.writeString(link)
        }
        writer.writeKey("pointer")
        writer.writeString(pointer)
        writer.writeKey("status")
        writer.writeInteger(status)
        if let step {
            writer.writeKey("step")
            writer.writeInteger(step)
        }
        writer.endObject()
        writer.endObject()
        return writer.takeBytes()
    }
}
