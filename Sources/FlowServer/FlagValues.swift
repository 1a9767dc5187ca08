// FlagValues: each defined flag's variant values, what flow definitions' flag conditions are checked against.
import FeatureFlags
import JSON

/// The values each flag can take (its variants' values), by key: the catalog warns about a flow
/// condition on a flag that is not here or on a value the flag never has
/// (`FlowCatalog.validate(flags:)`).
public enum FlagValues {
    static func of(_ flags: [(key: String, value: FlagDefinition)]) -> [String: [JSONValue]] {
        var values: [String: [JSONValue]] = [:]
        for flag in flags { values[flag.key] = flag.value.variants.members.map(\.value) }
        return values
    }

    /// The live flags of the server.
    static func live(_ registry: DefinitionRegistry) -> [String: [JSONValue]] {
        of(registry.allFlags.map { ($0.key, $0.value.definition) })
    }

    /// The flags the binary ships (the repo's `flags/*.json`), for checks with no server.
    public static func bundled() -> [String: [JSONValue]] {
        var flags: [(key: String, value: FlagDefinition)] = []
        for document in BundledFlags.documents {
            guard let json = try? JSONParser.parse(Array(document.text.utf8), limits: .storedData),
                  let definition = try? FlagDefinition(json: json) else { continue }
            flags.append((document.key, definition))
        }
        return of(flags)
    }
}
