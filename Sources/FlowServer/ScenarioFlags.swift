// Flag values for flow tests: what a new session's evaluation would give a scenario's context.
import FeatureFlags
import FlowScenarios
import JSON

/// The flag values a flow test's session starts with, before the scenario's own `flags`: the
/// flags evaluated for its user id and attributes exactly as ``SessionService`` evaluates them
/// for a new session.
///
/// ```swift
/// let results = suite.run(catalog: catalog, flags: ScenarioFlags.bundled())   // offline
/// ```
public enum ScenarioFlags {
    /// Evaluates `flags` (in key order) for each scenario's context.
    static func values(_ flags: [(key: String, value: FlagDefinition)]) -> FlowScenario.FlagValues {
        { userId, attributes in
            let evaluations = FlagSet.evaluateAll(flags: flags, context: EvaluationContext(targetingKey: userId, attributes: attributes))
            var values: [String: JSONValue] = [:]
            for entry in evaluations { values[entry.key] = entry.details.value }
            return values
        }
    }

    /// Flags read from files (`flowstack flows test --flags`): each document's key (its file name
    /// without `.json`) and bytes; a later document replaces an earlier one of the same key. The
    /// problems of the documents that do not parse come back as `(key, pointer, message)`, and
    /// those documents are left out.
    public static func read(_ documents: [(key: String, bytes: [UInt8])])
        -> (values: FlowScenario.FlagValues, problems: [(key: String, pointer: String, message: String)]) {
        var flags: [String: FlagDefinition] = [:]
        var problems: [(key: String, pointer: String, message: String)] = []
        for document in documents {
            let json: JSONValue
            do throws(JSONParseError) {
                json = try JSONParser.parse(document.bytes, limits: .storedData)
            } catch {
                problems.append((document.key, "/", "\(error)"))
                continue
            }
            do throws(InvalidDefinition) {
                flags[document.key] = try FlagDefinition(json: json)
            } catch {
                for problem in error.problems { problems.append((document.key, problem.path.tokens.isEmpty ? "/" : problem.path.description, problem.message)) }
            }
        }
        return (values(flags.map { (key: $0.key, value: $0.value) }.sorted { $0.key < $1.key }), problems)
    }

    /// The flags the binary ships (the repo's `flags/*.json`), for runs with no server: a
    /// shipped flag that does not parse (a test checks none does) is left out.
    public static func bundled() -> FlowScenario.FlagValues {
        var flags: [(key: String, value: FlagDefinition)] = []
        for document in BundledFlags.documents {
            guard let json = try? JSONParser.parse(Array(document.text.utf8), limits: .storedData),
                  let definition = try? FlagDefinition(json: json) else { continue }
            flags.append((document.key, definition))
        }
        return values(flags.sorted { $0.key < $1.key })
    }
}
