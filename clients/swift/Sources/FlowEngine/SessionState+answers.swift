// SessionState+answers: the session answers besides the state document (predictions, available actions), written once for the server and every runner.

import JSON

extension SessionState {
    /// `[{"action": {type, from?, interactive?}, "state": {…}}]`: each action a client may post
    /// next without params, as it should post it, and the state it will be answered
    /// (``predictions(limits:)``). The server appends it to a state document with `?predict=true`;
    /// the engine conformance suite's runners write it the same way, so it is one function.
    public func predictionsJSON(limits: FlowLimits = .default) -> [UInt8] {
        let predictions = predictions(limits: limits)
        var writer = JSONWriter(capacity: 64 + predictions.count * 2048)
        writer.beginArray()
        for prediction in predictions {
            writer.beginObject()
            writer.writeKey(literal: "action")
            Self.writeAction(prediction.action, into: &writer)
            writer.writeKey(literal: "state")
            writer.writeRawValue(prediction.next.document())
            writer.endObject()
        }
        writer.endArray()
        return writer.takeBytes()
    }

    /// An action as a client posts it: `{type, from?, row?, params?, interactive?}`, leaving out
    /// what is absent.
    public static func writeAction(_ action: FlowAction, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "type")
        writer.writeString(action.type)
        if let from = action.from {
            writer.writeKey(literal: "from")
            writer.writeString(from)
        }
        if let row = action.row {
            writer.writeKey(literal: "row")
            writer.writeString(row)
        }
        if !action.params.isEmpty {
            writer.writeKey(literal: "params")
            writer.writeObject(action.params)
        }
        if action.interactive {
            writer.writeKey(literal: "interactive")
            writer.writeBool(true)
        }
        writer.endObject()
    }

    /// A state document with `predictions` added as its last member.
    public static func withPredictions(_ document: [UInt8], _ predictions: [UInt8]) -> [UInt8] {
        guard document.last == UInt8(ascii: "}") else { return document }
        var body = [UInt8]()
        body.reserveCapacity(document.count + predictions.count + 16)
        body.append(contentsOf: document.dropLast())
        body.append(contentsOf: Array(#","predictions":"#.utf8))
        body.append(contentsOf: predictions)
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// The interaction actions, which address the pending interaction rather than a screen, so
    /// an available one is listed with `from: null`.
    static let interactionTypes: Set<String> = [FlowAction.interactionUpdate, FlowAction.interactionEnd, FlowAction.interactionCancel]

    /// `GET /v1/sessions/{id}/actions/available`'s answer, `{sessionId, version, from, actions:
    /// [{type, handledBy, from, rowKinds?, params: [{name, type, required}], interactive, next,
    /// nextInteractive?}]}`, from what ``FlowEngine/availableActions(in:catalog:context:)`` and
    /// ``predictions(limits:)`` found for this state. `from` is the screen on top; `rowKinds`,
    /// only for a row tap, the kinds of the rows it takes; `next` is the state posting the
    /// action with no params would answer (null when it needs params or a row);
    /// `nextInteractive`, for an action that may run interactively, the state posting it with
    /// `"interactive": true` would answer.
    public func writeAvailableActions(_ available: [AvailableAction], predictions: [Prediction], into writer: inout JSONWriter) {
        let top = tree.top
        writer.beginObject()
        writer.writeKey(literal: "sessionId")
        writer.writeString(sessionId)
        writer.writeKey(literal: "version")
        writer.writeInteger(version)
        writer.writeKey(literal: "from")
        tree.writeTop(into: &writer)
        writer.writeKey(literal: "actions")
        writer.beginArray()
        for action in available {
            writer.beginObject()
            writer.writeKey(literal: "type")
            writer.writeString(action.type)
            writer.writeKey(literal: "handledBy")
            writer.writeString(action.handledBy)
            writer.writeKey(literal: "from")
            let source: String? = Self.interactionTypes.contains(action.type) ? nil : top?.entryId
            writer.writeOptionalString(source)
            if let kinds = action.rowKinds {
                writer.writeKey(literal: "rowKinds")
                writer.beginArray()
                for kind in kinds { writer.writeString(kind) }
                writer.endArray()
            }
            writer.writeKey(literal: "params")
            writer.beginArray()
            for param in action.params {
                writer.beginObject()
                writer.writeKey(literal: "name")
                writer.writeString(param.name)
                writer.writeKey(literal: "type")
                writer.writeString(param.type.rawValue)
                writer.writeKey(literal: "required")
                writer.writeBool(param.required)
                writer.endObject()
            }
            writer.endArray()
            writer.writeKey(literal: "interactive")
            writer.writeBool(action.interactive)
            // A row tap is never predicted; the type's plain prediction is not its.
            let plain = action.rowKinds == nil
            writer.writeKey(literal: "next")
            Self.writePrediction(plain ? predictions.first { $0.action.type == action.type && !$0.action.interactive } : nil, into: &writer)
            if action.interactive && tree.interaction == nil {
                writer.writeKey(literal: "nextInteractive")
                Self.writePrediction(plain ? predictions.first { $0.action.type == action.type && $0.action.interactive } : nil, into: &writer)
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }

    /// This state's available actions answer, computed here (as the server computes it, with
    /// the user's state as the next action would be judged).
    public func availableActionsDocument() -> [UInt8] {
        let available = FlowEngine.availableActions(in: tree, catalog: catalog, context: context)
        var writer = JSONWriter(capacity: 256 + available.count * 2048)
        writeAvailableActions(available, predictions: predictions(), into: &writer)
        return writer.takeBytes()
    }

    private static func writePrediction(_ prediction: Prediction?, into writer: inout JSONWriter) {
        if let prediction { writer.writeRawValue(prediction.next.document()) } else { writer.writeNull() }
    }
}
