// The request hash stored with an Idempotency-Key: of the parsed action, not of the body's bytes.
import FlowEngine
import JSON

extension FlowAction {
    /// The SHA-256 of this action in a canonical encoding, stored beside its idempotency key:
    /// a later request with the key must carry an action with the same hash (else 422
    /// `idempotency-key-reused`).
    ///
    /// Both ways of sending an action hash it this way, not the request body's bytes: a tap
    /// posted alone (`POST …/actions` with `Idempotency-Key`) and the same tap as an item of a
    /// batch (`POST …/actions/batch`, its `key`) hash equal, so a client may post taps one by
    /// one, lose the connection, and send the rest, with the same keys, as a batch: those that
    /// did arrive are skipped, not refused. Whitespace, member order and absent-versus-null or
    /// default members do not matter either: `{"type":"back"}` and
    /// `{"interactive":false, "params":{}, "type":"back"}` are one action.
    ///
    /// ```swift
    /// FlowAction(type: "back").idempotencyHash == FlowAction(type: "back", params: [:]).idempotencyHash  // true
    /// ```
    var idempotencyHash: [UInt8] {
        BearerToken.digest(canonicalJSON)
    }

    /// `{"type":…,"from":…|null,"row"?:…,"params":{…},"interactive":…}` with the params' object members
    /// sorted by key at every depth, and numbers as the writer writes them (`1.0` as `1`).
    var canonicalJSON: [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.writeKey("type")
        writer.writeString(type)
        writer.writeKey("from")
        writer.writeOptionalString(from)
        // Only on a row tap, so the hashes of keys stored before lists stay what they were.
        if let row {
            writer.writeKey("row")
            writer.writeString(row)
        }
        writer.writeKey("params")
        Self.writeCanonical(.object(params), into: &writer)
        writer.writeKey("interactive")
        writer.writeBool(interactive)
        writer.endObject()
        return writer.takeBytes()
    }

    private static func writeCanonical(_ value: JSONValue, into writer: inout JSONWriter) {
        switch value {
        case .object(let object):
            writer.beginObject()
            // Keys compare by their UTF-8 bytes, the same on every platform.
            for member in object.members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                writer.writeKey(member.key)
                writeCanonical(member.value, into: &writer)
            }
            writer.endObject()
        case .array(let elements):
            writer.beginArray()
            for element in elements { writeCanonical(element, into: &writer) }
            writer.endArray()
        default:
            writer.writeValue(value)
        }
    }
}
