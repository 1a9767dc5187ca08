// Flags between their routes and the store: read them, store a new revision of one, evaluate
// them all for a context.
import FeatureFlags
import FlowStore
import HTTPServer
import JSON
import Logging

/// What the flag routes do, with the store and the registry of definitions behind them.
///
/// ```swift
/// let flags = FlagService(store: store, registry: registry, logger: logger)
/// let stored = try flags.store(key: "eu-face-scan", json: json, text: text, audit: stamp)
/// stored.revision   // 2
/// ```
final class FlagService: Sendable {
    /// A flag just stored: whether it is new, its revision and time, and what the GrowthBook
    /// payload cannot say of it.
    struct Stored: Sendable {
        var created: Bool
        var revision: Int
        var updatedAt: String
        var warnings: [ProblemDetails.FieldError]
    }

    let store: any DefinitionStore
    let registry: DefinitionRegistry
    let logger: Logger

    init(store: any DefinitionStore, registry: DefinitionRegistry, logger: Logger) {
        self.store = store
        self.registry = registry
        self.logger = logger
    }

    /// Every flag, by key.
    var all: [(key: String, value: DefinitionRegistry.Keyed<FlagDefinition>)] { registry.allFlags }

    /// Flag `key` (404 when there is none).
    func flag(_ key: String) throws(ResponseError) -> DefinitionRegistry.Keyed<FlagDefinition> {
        guard let flag = registry.flag(key) else {
            throw ResponseError(.problem(404, "There is no flag \(key).", type: ProblemType.notFound))
        }
        return flag
    }

    /// Stores `json` (as `text`) as the next revision of flag `key` (422 when it is no flag).
    func store(key: String, json: JSONValue, text: String, audit: AuditStamp) throws(ResponseError) -> Stored {
        let definition: FlagDefinition
        do throws(InvalidDefinition) {
            definition = try FlagDefinition(json: json)
        } catch {
            throw Application.invalidFlagDefinition("flag \(key)", error.problems)
        }
        let existed = registry.flag(key) != nil
        let revision = try Application.store(logger) { try store.putDefinition(.flag, key: key, definition: text, audit: audit) }
        let now = Timestamp.string()
        registry.setFlag(key, .init(definition: definition, text: text, revision: revision, updatedAt: now))
        let warnings = Application.growthBookWarnings { () throws(GrowthBookPayload.Untranslatable) in
            _ = try GrowthBookPayload.feature(flag: definition, key: key)
        }
        return Stored(created: !existed, revision: revision, updatedAt: now, warnings: warnings)
    }

    /// Every flag's value for `context`, in key order.
    func evaluate(_ context: EvaluationContext) -> FlagEvaluations {
        FlagSet.evaluateAll(flags: registry.allFlags.map { ($0.key, $0.value.definition) }, context: context)
    }
}
