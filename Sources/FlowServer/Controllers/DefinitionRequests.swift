// The typed requests of flag and experiment routes: a definition's key, and an uploaded
// definition without the members the server adds.
import HTTPServer
import JSON

/// A route on one flag or experiment: `{key}` as sent (a lookup of a key no definition can have
/// simply finds nothing).
struct DefinitionRequest: RouteRequest {
    let key: String

    init(_ request: Request, limits: BodyLimits) {
        key = request.parameter("key")
    }
}

/// A flag or experiment as uploaded: its key (1 to 100 of letters, digits, `.`, `_`, `-`, else
/// 400; a `reserved` name, 422), the object without the members the server adds, and the text
/// to store.
struct DefinitionUpload {
    /// Members the server adds when it shows a stored flag or experiment; dropped from an
    /// upload, so what was read can be sent back as it is.
    static let serverMembers = ["key", "revision", "updatedAt", "warnings"]

    let key: String
    let json: JSONValue
    let text: String

    init(_ request: Request, limits: BodyLimits, reserved: [String] = [], collection: String = "") throws(ResponseError) {
        key = try request.definitionKey(reserved: reserved, collection: collection)
        let json = try request.jsonBody(limits).get()
        guard var object = json.objectValue else {
            throw ResponseError(.problem(422, "A definition is a JSON object; found \(json.typeName).", type: ProblemType.invalidDefinition))
        }
        for member in Self.serverMembers { object[member] = nil }
        var writer = JSONWriter(capacity: request.body.count)
        writer.writeObject(object)
        self.json = .object(object)
        text = String(decoding: writer.takeBytes(), as: UTF8.self)
    }
}

extension Request {
    /// The key in the URL of a flag or experiment: 1 to 100 of letters, digits, `.`, `_`, `-`
    /// (400), and none of the `reserved` names (422 `reserved-name`).
    func definitionKey(reserved: [String] = [], collection: String = "") throws(ResponseError) -> String {
        let key = parameter("key")
        let allowed = key.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...100).contains(key.utf8.count), allowed else {
            throw ResponseError(.problem(400, "A key is 1 to 100 letters, digits, '.', '_' or '-'; found \(key).",
                                         type: ProblemType.malformed))
        }
        if reserved.contains(key) {
            let names = reserved.map { JSONValue.string($0) }
            throw ResponseError(.problem(
                422, "\(key) is a route under \(collection), so it cannot name a definition there; reserved names: \(reserved.joined(separator: ", ")).",
                type: ProblemType.reservedName, extensions: [("reserved", JSONValue.array(names).jsonText)]))
        }
        return key
    }
}
