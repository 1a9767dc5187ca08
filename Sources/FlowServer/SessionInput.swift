// The body of POST /v1/sessions, checked field by field.
import JSON
import FlowEngine
import HTTPServer

/// `{userId, attributes?, traits?, link?, userHash?, client?}`, validated.
struct SessionInput {
    static let maxUserIdLength = 128
    static let maxAttributes = 64
    static let maxTraits = 16

    var userId: String
    var attributes: [String: JSONValue]
    var traits: [String: String]
    /// A deep link the session starts at (`/modal/Hi`, `myapp://x/home/1`), checked by the engine.
    var link: String?
    /// HMAC-SHA256(user secret, userId) in lowercase hex, from the app's backend (checked only
    /// when the server has a user secret).
    var userHash: String?
    /// What the app build can render (`{platform?, appVersion?, features?}`); nil when not sent.
    var client: ClientCapabilities?

    /// 1 to `maxUserIdLength` characters (Unicode scalars, as JSON Schema's maxLength counts
    /// them) with no control characters (a NUL never reaches a database).
    static func isValidUserId(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.count <= maxUserIdLength && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Reads the body, collecting every field problem into one 400.
    init(json: JSONValue) throws(ResponseError) {
        guard let object = json.objectValue else {
            throw ResponseError(.problem(400, "The body must be an object {userId, attributes?, traits?, link?, userHash?, client?}; found \(json.typeName).",
                                         type: ProblemType.malformed))
        }
        var errors: [ProblemDetails.FieldError] = []
        for key in object.keys where !["userId", "attributes", "traits", "link", "userHash", "client"].contains(key) {
            errors.append(.init(pointer: JSONPointer([key]).description,
                                detail: "unknown field; expected userId, attributes, traits, link, userHash, client"))
        }
        var client: ClientCapabilities?
        if let raw = object["client"], !raw.isNull {
            do throws(DefinitionProblems) {
                client = try ClientCapabilities(json: raw, at: JSONPointer(["client"]))
            } catch {
                errors += error.problems.map { .init(pointer: $0.path, detail: $0.message) }
            }
        }
        var userHash: String?
        if let raw = object["userHash"], !raw.isNull {
            if let text = raw.stringValue, text.unicodeScalars.count <= 128 {
                userHash = text
            } else {
                errors.append(.init(pointer: "/userHash", detail: "must be a string: the lowercase hex HMAC-SHA256 of the userId"))
            }
        }
        var link: String?
        if let raw = object["link"], !raw.isNull {
            if let text = raw.stringValue {
                link = text
            } else {
                errors.append(.init(pointer: "/link", detail: "must be a string, a deep link such as \"/modal/Hi\"; found \(raw.typeName)"))
            }
        }
        var userId = ""
        if let text = object["userId"]?.stringValue {
            if !Self.isValidUserId(text) {
                errors.append(.init(pointer: "/userId", detail: "must be 1 to \(Self.maxUserIdLength) characters with no control characters"))
            }
            userId = text
        } else {
            errors.append(.init(pointer: "/userId", detail: object["userId"] == nil
                ? "is required: the id of the user this session is for"
                : "must be a string; found \(object["userId"]?.typeName ?? "nothing")"))
        }
        var attributes: [String: JSONValue] = [:]
        if let raw = object["attributes"], !raw.isNull {
            if let members = raw.objectValue {
                if members.count > Self.maxAttributes {
                    errors.append(.init(pointer: "/attributes", detail: "at most \(Self.maxAttributes) attributes"))
                }
                for member in members {
                    switch member.value {
                    case .string, .integer, .number, .bool:
                        attributes[member.key] = member.value
                    default:
                        errors.append(.init(pointer: JSONPointer(["attributes", member.key]).description,
                                            detail: "must be a string, number or boolean; found \(member.value.typeName)"))
                    }
                }
            } else {
                errors.append(.init(pointer: "/attributes", detail: "must be an object; found \(raw.typeName)"))
            }
        }
        var traits: [String: String] = [:]
        if let raw = object["traits"], !raw.isNull {
            if let members = raw.objectValue {
                if members.count > Self.maxTraits {
                    errors.append(.init(pointer: "/traits", detail: "at most \(Self.maxTraits) traits"))
                }
                for member in members {
                    if let value = member.value.stringValue {
                        traits[member.key] = value
                    } else {
                        errors.append(.init(pointer: JSONPointer(["traits", member.key]).description,
                                            detail: "must be a string, such as \"compact\"; found \(member.value.typeName)"))
                    }
                }
                if let sizeClass = traits["horizontalSizeClass"], !["compact", "regular"].contains(sizeClass) {
                    errors.append(.init(pointer: "/traits/horizontalSizeClass", detail: "must be compact or regular"))
                }
            } else {
                errors.append(.init(pointer: "/traits", detail: "must be an object; found \(raw.typeName)"))
            }
        }
        guard errors.isEmpty else {
            throw ResponseError(.problem(400, "The session request has \(errors.count) invalid field\(errors.count == 1 ? "" : "s").",
                                         type: ProblemType.malformed, errors: errors))
        }
        self.userId = userId
        self.attributes = attributes
        self.traits = traits
        self.link = link
        self.userHash = userHash
        self.client = client
    }
}
