// EngineRunner: the engine conformance runner's protocol, one JSON line in, one JSON line out, with no database.

import FlowEngine
import JSON

/// The Swift engine behind the conformance runner protocol (engine-suite/README.md): each input
/// line is one JSON object, answered by exactly one output line.
///
/// - `{"bundle": B}` starts a new case from session bundle `B` (the format of
///   `GET /v1/sessions/{id}/bundle`) and answers its state document;
/// - `{"action": A}` applies action `A` (`{type, from?, params?, interactive?}`, the body of
///   `POST /v1/sessions/{id}/actions`) and answers the state document, or `{"refused": …}`;
///   with `"predict": true` the document carries `predictions` (`?predict=true`); with
///   `"dryRun": true` nothing is kept (`?dryRun=true`);
/// - `{"available": true}` answers `GET /v1/sessions/{id}/actions/available`.
///
/// A line the protocol does not know, or an action before any bundle, answers
/// `{"error": {"pointer", "message"}}` and changes nothing, so a harness always gets one line back.
///
/// ```swift
/// var runner = EngineRunner()
/// let state = runner.answer(Array(#"{"bundle":{…}}"#.utf8))
/// let next = runner.answer(Array(#"{"action":{"type":"back"}}"#.utf8))
/// ```
public struct EngineRunner: Sendable {
    /// The session the last bundle started and the actions since carried forward.
    public private(set) var state: SessionState?

    public init() {}

    /// The answer to one input line (without its newline).
    public mutating func answer(_ line: some Collection<UInt8>) -> [UInt8] {
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONParser.parse(line, limits: .storedData)
        } catch {
            return Self.error("", "the line is not JSON: \(error)")
        }
        guard let object = json.objectValue else { return Self.error("", "a line is an object; found \(json.typeName)") }
        if let bundle = object["bundle"] {
            do throws(FlowStorageError) {
                let started = try SessionBundle(json: bundle).state
                state = started
                return started.document()
            } catch {
                state = nil
                return Self.error("/bundle" + error.path, error.message)
            }
        }
        guard let state else { return Self.error("", "no case has started: the first line of a case is {\"bundle\": …}") }
        if object["available"]?.boolValue == true {
            return state.availableActionsDocument()
        }
        guard let rawAction = object["action"] else {
            return Self.error("", "expected one of bundle, action, available")
        }
        let outcome: (next: SessionState, outcome: ActionOutcome)
        do throws(FlowError) {
            outcome = try state.applying(try FlowAction(json: rawAction))
        } catch {
            return EngineRefusal(error).json()
        }
        if object["dryRun"]?.boolValue != true { self.state = outcome.next }
        let document = outcome.next.document()
        guard object["predict"]?.boolValue == true else { return document }
        return SessionState.withPredictions(document, outcome.next.predictionsJSON())
    }

    static func error(_ pointer: String, _ message: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.writeKey("error")
        writer.beginObject()
        writer.writeKey("message")
        writer.writeString(message)
        writer.writeKey("pointer")
        writer.writeString(pointer)
        writer.endObject()
        writer.endObject()
        return writer.takeBytes()
    }
}
