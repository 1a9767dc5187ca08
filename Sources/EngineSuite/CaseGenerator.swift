// CaseGenerator: case sources (definitions, a session, steps) run through the Swift engine into the suite's case files.

import FeatureFlags
import FlowEngine
import JSON

/// A problem in a case source, at a JSON Pointer into it.
public struct CaseSourceError: Error, Sendable, CustomStringConvertible {
    public var pointer: String
    public var message: String
    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
}

/// One generated case: its file name (without `.jsonl`), the features it exercised, and its lines.
public struct GeneratedCase: Sendable {
    public var name: String
    public var features: Set<String>
    /// The case file: the header, then each input line followed by the answer expected for it.
    public var lines: [[UInt8]]

    /// The file's bytes: every line ends with a newline.
    public var bytes: [UInt8] { lines.flatMap { $0 + [UInt8(ascii: "\n")] } }
}

/// Runs case sources through the engine. A source is what a person writes:
///
/// ```json
/// {"description": "…",
///  "definitions": {"app": {…}, "home": {…}},   (the CLI reads a folder named by a string)
///  "flowVersions": {"home": 2},                  (default: 1 for each)
///  "flags": {"eu-face-scan": {…}},               (flag definitions, evaluated as the server does)
///  "cases": [{"name": "…", "description": "…", "userId": "u-1", "attributes": {}, "traits": {},
///             "user": {}, "experiments": {"key": "variant"},
///             "steps": [{"action": {"type": "…", "from": "$top"}, "expect": "applied"},
///                       {"action": {…}, "predict": true}, {"action": {…}, "dryRun": true},
///                       {"available": true}]}]}
/// ```
///
/// In an action, the string `"$top"` is the id of the screen on top before the step, and
/// `"$screen:FEATURE"` the id of the topmost screen of that feature. `expect` (optional) is
/// `"applied"` or a refusal code; a step that does otherwise fails the generation, so a change
/// in the engine or the definitions cannot quietly turn a case into something else. The expected
/// answers are the runner's (``EngineRunner``), never written by hand.
public enum CaseGenerator {
    /// The cases of one source, named `<source>.<case>`.
    public static func generate(source json: JSONValue, named sourceName: String) throws(CaseSourceError) -> [GeneratedCase] {
        guard let object = json.objectValue else { throw CaseSourceError(pointer: "", message: "a case source is an object") }
        let allowed: Set<String> = ["description", "definitions", "flowVersions", "flags", "cases"]
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            throw CaseSourceError(pointer: JSONPointer([unknown]).description, message: "unknown member; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
        guard let definitionMembers = object["definitions"]?.objectValue, !definitionMembers.isEmpty else {
            throw CaseSourceError(pointer: "/definitions", message: "must be an object of flow definitions by name")
        }
        var definitions: [FlowDefinition] = []
        var definitionBytes: [(name: String, json: [UInt8])] = []
        for member in definitionMembers {
            do throws(DefinitionProblems) {
                definitions.append(try FlowDefinition(json: member.value, expectedName: member.key))
            } catch {
                let first = error.problems.first
                throw CaseSourceError(pointer: JSONPointer(["definitions", member.key]).description + (first?.path ?? ""),
                                      message: first?.message ?? "invalid definition")
            }
            definitionBytes.append((member.key, compact(member.value)))
        }
        var flowVersions: [String: Int] = [:]
        for definition in definitions { flowVersions[definition.name] = 1 }
        for member in object["flowVersions"]?.objectValue ?? JSONObject() {
            guard let version = member.value.integerValue, version >= 1, flowVersions[member.key] != nil else {
                throw CaseSourceError(pointer: JSONPointer(["flowVersions", member.key]).description, message: "must be a version from 1 of a defined flow")
            }
            flowVersions[member.key] = version
        }
        var flags: [(key: String, value: FlagDefinition)] = []
        for member in object["flags"]?.objectValue ?? JSONObject() {
            do throws(InvalidDefinition) {
                flags.append((member.key, try FlagDefinition(json: member.value)))
            } catch {
                throw CaseSourceError(pointer: JSONPointer(["flags", member.key]).description, message: "\(error)")
            }
        }
        flags.sort { $0.key < $1.key }
        let catalog = FlowCatalog(definitions)
        guard let cases = object["cases"]?.arrayValue, !cases.isEmpty else {
            throw CaseSourceError(pointer: "/cases", message: "must be a non-empty array of cases")
        }
        var generated: [GeneratedCase] = []
        for (index, script) in cases.enumerated() {
            generated.append(try generateCase(script, at: "/cases/\(index)", source: sourceName, catalog: catalog, flags: flags,
                                              flowVersions: flowVersions, definitions: definitionBytes))
        }
        return generated
    }

    private static func generateCase(
        _ script: JSONValue, at pointer: String, source: String, catalog: FlowCatalog, flags: [(key: String, value: FlagDefinition)],
        flowVersions: [String: Int], definitions: [(name: String, json: [UInt8])]
    ) throws(CaseSourceError) -> GeneratedCase {
        guard let object = script.objectValue else { throw CaseSourceError(pointer: pointer, message: "a case is an object") }
        let allowed: Set<String> = ["name", "description", "userId", "attributes", "traits", "user", "experiments", "steps"]
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            throw CaseSourceError(pointer: pointer + "/" + unknown, message: "unknown member; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
        guard let caseName = object["name"]?.stringValue, !caseName.isEmpty,
              caseName.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw CaseSourceError(pointer: pointer + "/name", message: "must be a name of letters, digits and -")
        }
        let name = source + "." + caseName
        func dictionary(_ key: String) throws(CaseSourceError) -> [String: JSONValue] {
            var result: [String: JSONValue] = [:]
            guard let value = object[key] else { return result }
            guard let members = value.objectValue else { throw CaseSourceError(pointer: pointer + "/" + key, message: "must be an object") }
            for member in members { result[member.key] = member.value }
            return result
        }
        let userId = object["userId"]?.stringValue ?? "u-1"
        let attributes = try dictionary("attributes")
        var traits: [String: String] = [:]
        for (key, value) in try dictionary("traits") {
            guard let text = value.stringValue else { throw CaseSourceError(pointer: pointer + "/traits/" + key, message: "must be a string") }
            traits[key] = text
        }
        // Flags are evaluated once, as a new session's are (SessionService.start).
        let evaluations = FlagSet.evaluateAll(flags: flags, context: EvaluationContext(targetingKey: userId, attributes: attributes))
        var flagValues: [String: JSONValue] = [:]
        for entry in evaluations { flagValues[entry.key] = entry.details.value }
        var flagsWriter = JSONWriter()
        evaluations.write(to: &flagsWriter)
        var experimentsWriter = JSONWriter()
        experimentsWriter.beginObject()
        let experiments = try dictionary("experiments")
        for key in experiments.keys.sorted() {
            guard let variant = experiments[key]?.stringValue else {
                throw CaseSourceError(pointer: pointer + "/experiments/" + key, message: "must be the variant's key")
            }
            experimentsWriter.writeKey(key)
            experimentsWriter.writeString(variant)
        }
        experimentsWriter.endObject()
        let context = FlowContext(userId: userId, attributes: attributes, traits: traits, flags: flagValues, user: try dictionary("user"))
        let tree: FlowTree
        do throws(FlowError) {
            tree = try FlowEngine.start(catalog: catalog, context: context)
        } catch {
            throw CaseSourceError(pointer: pointer, message: "the definitions cannot start a session: \(error.message)")
        }
        var state = SessionState(sessionId: "case-" + name, userId: userId, version: 0, tree: tree, context: context, catalog: catalog,
                                 flagsJSON: flagsWriter.takeBytes(), experimentsJSON: experimentsWriter.takeBytes())
        var features = Set<String>()
        FeatureObserver.tree(tree, catalog: catalog, into: &features)
        var runner = EngineRunner()
        var bundleWriter = JSONWriter(capacity: 8192)
        bundleWriter.beginObject()
        bundleWriter.writeKey("bundle")
        SessionBundle.write(state, flowVersions: flowVersions, definitions: definitions, into: &bundleWriter)
        bundleWriter.endObject()
        var lines: [[UInt8]] = []
        let bundleLine = bundleWriter.takeBytes()
        lines.append(bundleLine)
        lines.append(runner.answer(bundleLine))
        guard let steps = object["steps"]?.arrayValue, !steps.isEmpty else {
            throw CaseSourceError(pointer: pointer + "/steps", message: "must be a non-empty array of steps")
        }
        for (index, step) in steps.enumerated() {
            let at = pointer + "/steps/\(index)"
            guard let members = step.objectValue else { throw CaseSourceError(pointer: at, message: "a step is an object") }
            if let unknown = members.keys.first(where: { !["action", "predict", "dryRun", "available", "expect"].contains($0) }) {
                throw CaseSourceError(pointer: at + "/" + unknown, message: "unknown member; expected action, predict, dryRun, available, expect")
            }
            var input = JSONObject()
            if members["available"]?.boolValue == true {
                input["available"] = .bool(true)
                features.insert("available")
                if FlowEngine.availableActions(in: state.tree, catalog: state.catalog, context: state.context).contains(where: { $0.rowKinds != nil }) {
                    features.insert("list.rowTapsAvailable")
                }
                let line = compact(.object(input))
                lines.append(line)
                lines.append(runner.answer(line))
                continue
            }
            guard let rawAction = members["action"] else { throw CaseSourceError(pointer: at, message: "a step has action or available") }
            let resolved = try resolve(rawAction, in: state.tree, at: at + "/action")
            input["action"] = resolved
            let predict = members["predict"]?.boolValue == true, dryRun = members["dryRun"]?.boolValue == true
            if dryRun { input["dryRun"] = .bool(true); features.insert("dryRun") }
            if predict { input["predict"] = .bool(true); features.insert("predictions") }
            let line = compact(.object(input))
            lines.append(line)
            lines.append(runner.answer(line))
            let result: Result<(next: SessionState, outcome: ActionOutcome), FlowError>
            do throws(FlowError) {
                result = .success(try state.applying(try FlowAction(json: resolved)))
            } catch {
                result = .failure(error)
            }
            let happened: String
            switch result {
            case .success(let (next, outcome)):
                happened = "applied"
                FeatureObserver.applied(try action(resolved, at: at), before: state, outcome: outcome, into: &features)
                if !dryRun { state = next }
            case .failure(let error):
                happened = error.code
                features.insert("refusal." + error.code)
                // The engine's wording for a row from params whose kind the catalog does not declare.
                if case .invalidParams(_, let message) = error, message.contains("is not declared; a row from params") {
                    features.insert("list.undeclaredRowKind")
                }
            }
            if let expected = members["expect"] {
                guard expected.stringValue == happened else {
                    throw CaseSourceError(pointer: at + "/expect", message: "expected \(expected.abbreviatedJSON()), but the engine answered \(happened)")
                }
            }
        }
        var header = JSONWriter()
        header.beginObject()
        header.writeKey("case")
        header.writeString(name)
        header.writeKey("description")
        header.writeString(object["description"]?.stringValue ?? "")
        header.writeKey("features")
        header.beginArray()
        for feature in features.sorted() { header.writeString(feature) }
        header.endArray()
        header.writeKey("specVersion")
        header.writeInteger(EngineSuite.specVersion)
        header.endObject()
        return GeneratedCase(name: name, features: features, lines: [header.takeBytes()] + lines)
    }

    private static func action(_ json: JSONValue, at pointer: String) throws(CaseSourceError) -> FlowAction {
        do throws(FlowError) {
            return try FlowAction(json: json)
        } catch {
            throw CaseSourceError(pointer: pointer + "/action", message: error.message)
        }
    }

    /// The action with `"$top"` and `"$screen:FEATURE"` replaced by entry ids of `tree`.
    static func resolve(_ value: JSONValue, in tree: FlowTree, at pointer: String) throws(CaseSourceError) -> JSONValue {
        switch value {
        case .string(let text) where text == "$top":
            guard let top = tree.top else { throw CaseSourceError(pointer: pointer, message: "$top: no screen is on top") }
            return .string(top.entryId)
        case .string(let text) where text.hasPrefix("$screen:"):
            let feature = String(text.dropFirst("$screen:".count))
            guard let screen = tree.screens.last(where: { $0.feature == feature }) else {
                throw CaseSourceError(pointer: pointer, message: "\(text): no screen of \(feature) is shown")
            }
            return .string(screen.entryId)
        case .array(let elements):
            var resolved: [JSONValue] = []
            for (index, element) in elements.enumerated() { resolved.append(try resolve(element, in: tree, at: pointer + "/\(index)")) }
            return .array(resolved)
        case .object(let object):
            var members: [JSONObject.Member] = []
            for member in object {
                members.append(.init(key: member.key, value: try resolve(member.value, in: tree, at: JSONPointer([member.key]).description.isEmpty ? pointer : pointer + JSONPointer([member.key]).description)))
            }
            return .object(JSONObject(uniqueMembers: members))
        default:
            return value
        }
    }

    /// A value written compactly, its members in the order they were written (the engine reads
    /// order: rules in `on` are tried, and actions listed, in it).
    static func compact(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.writeValue(value)
        return writer.takeBytes()
    }
}
