// What the flag, experiment and OFREP routes share: pins checked against the live flows,
// evaluation contexts read one way, definition problems, GrowthBook warnings, store calls.
import FeatureFlags
import FlowEngine
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// Every pinned flow version must exist, and with the live flows it must form a valid catalog.
    static func checkPins(_ definition: ExperimentDefinition, key: String, registry: DefinitionRegistry) throws(ResponseError) {
        var problems: [ProblemDetails.FieldError] = []
        for reference in definition.pinReferences where registry.flow(reference.pin.flow, version: reference.pin.version) == nil {
            problems.append(.init(pointer: reference.path.description,
                                  detail: "flow \(reference.pin.flow) has no version \(reference.pin.version)"))
        }
        if problems.isEmpty {
            for (index, variant) in definition.variants.enumerated() where !variant.pinnedFlows.isEmpty {
                var versions = registry.liveVersions
                for (flow, version) in variant.pinnedFlows { versions[flow] = version }
                let catalogProblems = registry.catalog(for: versions)?.validate() ?? []
                for problem in catalogProblems {
                    problems.append(.init(pointer: JSONPointer(["variants", String(index), "flows"]).description,
                                          detail: "with the live flows, these versions do not fit: \(problem.path): \(problem.message)"))
                }
            }
        }
        guard problems.isEmpty else {
            throw ResponseError(.problem(422, "Experiment \(key) pins flow versions that cannot run; see errors.",
                                         type: ProblemType.invalidDefinition, errors: problems))
        }
    }

    /// `{targetingKey?, attributes?}` of `POST /v1/flags/evaluate`.
    static func evaluationContext(_ json: JSONValue) throws(ResponseError) -> EvaluationContext {
        guard let object = json.objectValue else {
            throw ResponseError(.problem(400, "The body must be an object {targetingKey?, attributes?}.", type: ProblemType.malformed))
        }
        var errors: [ProblemDetails.FieldError] = []
        for key in object.keys where !["targetingKey", "attributes"].contains(key) {
            errors.append(.init(pointer: JSONPointer([key]).description, detail: "unknown field; expected targetingKey, attributes"))
        }
        // JSONValue is ExpressibleByNilLiteral: spell the Optional out, or `nil` reads as JSON null.
        let attributes = object["attributes"].flatMap { $0.isNull ? JSONValue?.none : $0 }
        let (context, problems) = evaluationContext(targetingKey: object["targetingKey"], at: JSONPointer(["targetingKey"]),
                                                    attributes: attributes?.objectValue?.members ?? [])
        errors += problems
        if let attributes, attributes.objectValue == nil {
            errors.append(.init(pointer: "/attributes", detail: "must be an object; found \(attributes.typeName)"))
        }
        guard errors.isEmpty else {
            throw ResponseError(.problem(400, "The evaluation context has invalid fields.", type: ProblemType.malformed, errors: errors))
        }
        return context
    }

    /// A targeting key and attributes read into a context, the one way every evaluation route
    /// reads them (`POST /v1/flags/evaluate`, OFREP), so equal contexts get equal values: the key
    /// is a string, or null or absent for none; attributes are kept as sent, a repeated name
    /// keeping its last value. Problems are located at `pointer`.
    static func evaluationContext(targetingKey raw: JSONValue?, at pointer: JSONPointer,
                                  attributes: [JSONObject.Member]) -> (EvaluationContext, [ProblemDetails.FieldError]) {
        var errors: [ProblemDetails.FieldError] = []
        var targetingKey: String?
        if let raw, !raw.isNull {
            if let text = raw.stringValue { targetingKey = text } else {
                errors.append(.init(pointer: pointer.description, detail: "must be a string; found \(raw.typeName)"))
            }
        }
        var values: [String: JSONValue] = [:]
        for member in attributes { values[member.key] = member.value }
        return (EvaluationContext(targetingKey: targetingKey, attributes: values), errors)
    }

    static func invalidFlagDefinition(_ what: String, _ problems: [FlagProblem]) -> ResponseError {
        ResponseError(.problem(
            422, "The definition of \(what) has \(problems.count) problem\(problems.count == 1 ? "" : "s"); see errors.",
            type: ProblemType.invalidDefinition,
            errors: problems.map { .init(pointer: $0.path.description, detail: $0.message) }))
    }

    /// What an upload accepted as valid still cannot do, as `{pointer, detail}` (the shape of a
    /// problem's `errors`): for now, be served to GrowthBook SDKs. Empty when all is well.
    static func growthBookWarnings(_ translate: () throws(GrowthBookPayload.Untranslatable) -> Void) -> [ProblemDetails.FieldError] {
        do throws(GrowthBookPayload.Untranslatable) {
            try translate()
            return []
        } catch {
            return [.init(pointer: error.path.description,
                          detail: "left out of the GrowthBook payload (GET /api/features/{clientKey}): \(error.reason)")]
        }
    }

    /// A store call in a route: a database failure is logged and answered 503.
    static func store<T>(_ logger: Logger, _ call: () throws -> T) throws(ResponseError) -> T {
        do {
            return try call()
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
    }
}
