// How a session's creation-time data is stored: flag evaluations, exposures, its context.
import FeatureFlags
import FlowEngine
import JSON

/// The stored forms of what a session fixes at creation.
enum SessionCodecs {
    static func encode(_ evaluations: FlagEvaluations) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        evaluations.write(to: &writer)
        return writer.takeBytes()  // kept with the cached session: an array of exactly its bytes
    }

    /// `{"experiment":"variant",…}`.
    static func encode(_ exposures: [(experiment: String, variant: String)]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for exposure in exposures {
            writer.writeKey(exposure.experiment)
            writer.writeString(exposure.variant)
        }
        writer.endObject()
        return writer.takeBytes()  // kept with the cached session: an array of exactly its bytes
    }

    /// `{"attributes":{…},"traits":{…},"flags":{…}}`; the user's state lives in the users table.
    static func encodeContext(_ context: FlowContext) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("attributes")
        writer.beginObject()
        for key in context.attributes.keys.sorted() {
            writer.writeKey(key)
            writer.writeValue(context.attributes[key] ?? .null)
        }
        writer.endObject()
        writer.writeKey("traits")
        writer.beginObject()
        for key in context.traits.keys.sorted() {
            writer.writeKey(key)
            writer.writeString(context.traits[key] ?? "")
        }
        writer.endObject()
        writer.writeKey("flags")
        writer.beginObject()
        for key in context.flags.keys.sorted() {
            writer.writeKey(key)
            writer.writeValue(context.flags[key] ?? .null)
        }
        writer.endObject()
        writer.endObject()
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }

    static func decodeContext(_ text: String, userId: String) -> FlowContext {
        let object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject()
        var traits: [String: String] = [:]
        for member in object["traits"]?.objectValue ?? JSONObject() {
            if let value = member.value.stringValue { traits[member.key] = value }
        }
        return FlowContext(userId: userId, attributes: dictionary(object["attributes"]), traits: traits,
                           flags: dictionary(object["flags"]))
    }

    private static func dictionary(_ value: JSONValue?) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for member in value?.objectValue ?? JSONObject() { result[member.key] = member.value }
        return result
    }
}
