// SessionBundle: everything the engine needs to reproduce one session's decisions offline.

import JSON

/// A session's bundle (`GET /v1/sessions/{id}/bundle`): the flow definitions in the versions
/// the session runs, its flag values and experiment variants, the user state its flows read,
/// its tree in the engine's storage encoding (with the next entry id), and its version.
///
/// A client that holds it runs the same engine as the server: ``state`` applies any action
/// and its ``SessionState/document()`` is the answer the server would give, byte for byte.
///
/// ```swift
/// let bundle = try SessionBundle(json: try JSONParser.parse(body))
/// let (next, _) = try bundle.state.applying(FlowAction(type: "home.selectTab", params: ["index": 1]))
/// ```
///
/// The document, `format` 1:
/// `{format, sessionId, userId, version, flowVersions: {name: n}, definitions: {name: definition},
/// context: {attributes, traits, flags: {key: value}, user}, flags: {key: details},
/// experiments: {key: variant}, tree, transition, handledBy}`.
public struct SessionBundle: Sendable {
    public static let format = 1

    /// The session at its version, with the catalog built from the bundle's definitions.
    public var state: SessionState
    /// The version of each flow the session runs.
    public var flowVersions: [String: Int]

    public init(state: SessionState, flowVersions: [String: Int]) {
        self.state = state
        self.flowVersions = flowVersions
    }

    /// Writes a bundle. `definitions` are the definitions' JSON documents by flow name, as
    /// stored (each a valid definition; the server keeps the text it accepted).
    public static func write(_ state: SessionState, flowVersions: [String: Int], definitions: [(name: String, json: [UInt8])],
                             into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "format")
        writer.writeInteger(format)
        writer.writeKey(literal: "sessionId")
        writer.writeString(state.sessionId)
        writer.writeKey(literal: "userId")
        writer.writeString(state.userId)
        writer.writeKey(literal: "version")
        writer.writeInteger(state.version)
        writer.writeKey(literal: "flowVersions")
        writer.beginObject()
        for name in flowVersions.keys.sorted() {
            writer.writeKey(name)
            writer.writeInteger(flowVersions[name] ?? 0)
        }
        writer.endObject()
        writer.writeKey(literal: "definitions")
        writer.beginObject()
        for definition in definitions.sorted(by: { $0.name < $1.name }) {
            writer.writeKey(definition.name)
            writer.writeRawValue(definition.json)
        }
        writer.endObject()
        writer.writeKey(literal: "context")
        writer.beginObject()
        writer.writeKey(literal: "attributes")
        writeSorted(state.context.attributes, into: &writer)
        writer.writeKey(literal: "traits")
        writeSorted(state.context.traits.mapValues(JSONValue.string), into: &writer)
        writer.writeKey(literal: "flags")
        writeSorted(state.context.flags, into: &writer)
        writer.writeKey(literal: "user")
        writeSorted(state.context.user, into: &writer)
        writer.endObject()
        writer.writeKey(literal: "flags")
        writer.writeRawValue(state.flagsJSON)
        writer.writeKey(literal: "experiments")
        writer.writeRawValue(state.experimentsJSON)
        writer.writeKey(literal: "tree")
        state.tree.writeStorage(into: &writer)
        writer.writeKey(literal: "transition")
        if let transition = state.transitionJSON { writer.writeRawValue(transition) } else { writer.writeNull() }
        writer.writeKey(literal: "handledBy")
        writer.writeOptionalString(state.handledBy)
        writer.endObject()
    }

    private static func writeSorted(_ values: [String: JSONValue], into writer: inout JSONWriter) {
        writer.beginObject()
        for key in values.keys.sorted() {
            writer.writeKey(key)
            writer.writeValue(values[key] ?? .null)
        }
        writer.endObject()
    }

    /// Reads a bundle, checking every part: the definitions must parse and build a catalog
    /// holding every flow of `flowVersions`, and the tree must decode.
    ///
    /// - Throws: ``FlowStorageError`` with the JSON Pointer of the first part that is wrong.
    public init(json: JSONValue) throws(FlowStorageError) {
        guard let object = json.objectValue else {
            throw FlowStorageError(path: "", message: "a bundle is an object; found \(json.typeName)")
        }
        guard object["format"]?.integerValue == Self.format else {
            throw FlowStorageError(path: "/format", message: "expected format \(Self.format); found \(object["format"]?.abbreviatedJSON() ?? "nothing")")
        }
        func string(_ key: String) throws(FlowStorageError) -> String {
            guard let value = object[key]?.stringValue else {
                throw FlowStorageError(path: "/\(key)", message: "must be a string")
            }
            return value
        }
        func members(_ value: JSONValue?, _ path: String) throws(FlowStorageError) -> JSONObject {
            guard let value = value?.objectValue else { throw FlowStorageError(path: path, message: "must be an object") }
            return value
        }
        func dictionary(_ value: JSONValue?, _ path: String) throws(FlowStorageError) -> [String: JSONValue] {
            var result: [String: JSONValue] = [:]
            for member in try members(value, path) { result[member.key] = member.value }
            return result
        }
        let sessionId = try string("sessionId")
        let userId = try string("userId")
        guard let version = object["version"]?.integerValue, version >= 0 else {
            throw FlowStorageError(path: "/version", message: "must be a whole number from 0")
        }
        var flowVersions: [String: Int] = [:]
        for member in try members(object["flowVersions"], "/flowVersions") {
            guard let number = member.value.integerValue else {
                throw FlowStorageError(path: JSONPointer(["flowVersions", member.key]).description, message: "must be a version number")
            }
            flowVersions[member.key] = number
        }
        var definitions: [FlowDefinition] = []
        for member in try members(object["definitions"], "/definitions") {
            do throws(DefinitionProblems) {
                definitions.append(try FlowDefinition(json: member.value, expectedName: member.key))
            } catch {
                let first = error.problems.first
                throw FlowStorageError(path: JSONPointer(["definitions", member.key]).description + (first?.path ?? ""),
                                       message: first?.message ?? "invalid definition")
            }
        }
        let catalog = FlowCatalog(definitions)
        for name in flowVersions.keys where catalog[name] == nil {
            throw FlowStorageError(path: JSONPointer(["definitions", name]).description, message: "flow \(name) runs in the session but has no definition")
        }
        let context = try members(object["context"], "/context")
        var traits: [String: String] = [:]
        for member in try members(context["traits"], "/context/traits") {
            guard let text = member.value.stringValue else {
                throw FlowStorageError(path: JSONPointer(["context", "traits", member.key]).description, message: "must be a string")
            }
            traits[member.key] = text
        }
        let flowContext = FlowContext(
            userId: userId, attributes: try dictionary(context["attributes"], "/context/attributes"), traits: traits,
            flags: try dictionary(context["flags"], "/context/flags"), user: try dictionary(context["user"], "/context/user"))
        guard let flags = object["flags"], flags.objectValue != nil else {
            throw FlowStorageError(path: "/flags", message: "must be an object")
        }
        guard let experiments = object["experiments"], experiments.objectValue != nil else {
            throw FlowStorageError(path: "/experiments", message: "must be an object")
        }
        let tree: FlowTree
        do throws(FlowStorageError) {
            tree = try FlowTree(storage: object["tree"] ?? .null)
        } catch {
            throw FlowStorageError(path: "/tree" + error.path, message: error.message)
        }
        var transitionJSON: [UInt8]?
        if let transition = object["transition"], !transition.isNull {
            guard transition.objectValue != nil else { throw FlowStorageError(path: "/transition", message: "must be an object or null") }
            transitionJSON = Self.encode(transition)
        }
        var handledBy: String?
        if let raw = object["handledBy"], !raw.isNull {
            guard let text = raw.stringValue else { throw FlowStorageError(path: "/handledBy", message: "must be a string or null") }
            handledBy = text
        }
        state = SessionState(
            sessionId: sessionId, userId: userId, version: version, tree: tree, context: flowContext, catalog: catalog,
            flagsJSON: Self.encode(flags), experimentsJSON: Self.encode(experiments), transitionJSON: transitionJSON,
            handledBy: handledBy)
        self.flowVersions = flowVersions
    }

    private static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.writeValue(value)
        return writer.takeBytes()
    }
}
