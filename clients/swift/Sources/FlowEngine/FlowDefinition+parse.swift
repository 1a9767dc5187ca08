// FlowDefinition+parse: reading a definition from JSON text or a JSONValue, collecting every problem.

import JSON

extension FlowDefinition {
    /// Parses a definition from JSON bytes, reporting every problem found (a JSON syntax error
    /// is reported alone, at path `""`). When `expectedName` is given, a different `name` is a
    /// problem at `/name` (a `PUT /v1/flows/{name}` body must name the flow it is stored as).
    /// `uploading`: see ``init(json:expectedName:uploading:)``.
    ///
    /// ```swift
    /// let definition = try FlowDefinition.parse(Array(text.utf8), expectedName: "onboarding")
    /// ```
    public static func parse(
        _ bytes: some Collection<UInt8>, expectedName: String? = nil, limits: JSONParser.Limits = JSONParser.Limits(),
        uploading: Bool = false
    ) throws(DefinitionProblems) -> FlowDefinition {
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONParser.parse(bytes, limits: limits)
        } catch {
            throw DefinitionProblems([DefinitionProblem(path: "", message: "invalid JSON: \(error.description)")])
        }
        return try FlowDefinition(json: json, expectedName: expectedName, uploading: uploading)
    }

    /// Reads a definition from a parsed JSON value, reporting every problem found. With
    /// `uploading`, for a definition on its way into a server's store (an upload, a release, a
    /// local check before either), what the stores cannot keep is a problem too: a `setUser`
    /// that writes U+0000 as it is, in a key or a string. Without it (a stored definition, a
    /// session's bundle) such a definition reads, and the engine refuses each action that would
    /// store it, so a definition stored before the check is not lost.
    public init(json: JSONValue, expectedName: String? = nil, uploading: Bool = false) throws(DefinitionProblems) {
        var reader = DefinitionReader()
        reader.uploading = uploading
        let definition = reader.readDefinition(json)
        if let expectedName, let definition, definition.name != expectedName {
            reader.report(
                JSONPointer(["name"]),
                "name is \(JSONValue.string(definition.name)) but the flow is stored as \(JSONValue.string(expectedName)); they must match")
        }
        guard let definition, reader.problems.isEmpty else {
            throw DefinitionProblems(reader.problems)
        }
        self = definition
    }

    /// The problem with this definition's name, when it is not `expected` (for callers that
    /// parsed without `expectedName`).
    public func nameProblem(expected: String) -> DefinitionProblem? {
        guard name != expected else { return nil }
        return DefinitionProblem(
            path: "/name",
            message: "name is \(JSONValue.string(name)) but the flow is stored as \(JSONValue.string(expected)); they must match")
    }
}
