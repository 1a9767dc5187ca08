// FlagsFuzzer: bytes → JSON → FlagDefinition and ExperimentDefinition → evaluate and assign for fixed contexts, and translate for GrowthBook.

import JSON
import FeatureFlags

/// Contexts every definition that parses is evaluated for: an EU user with the usual
/// attributes, an anonymous one, and one whose attributes have the wrong types.
let contexts = [
    EvaluationContext(targetingKey: "fuzz-1", attributes: [
        "country": "DE", "platform": "ios", "appVersion": "2.10.1", "age": 30, "beta": true, "score": 0.75,
    ]),
    EvaluationContext(),
    EvaluationContext(attributes: [
        "userId": 12345678901, "country": ["DE"], "appVersion": 2, "platform": ["os": "ios"], "age": "thirty",
        "score": -0.0, "beta": .null, "id": 1e300,
    ]),
]

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let sample = repositoryFile("flags/eu-face-scan.json")
    do {
        _ = try FlagDefinition(json: try JSONParser.parse(sample, limits: bodyLimits))
    } catch {
        fail("flags/eu-face-scan.json does not parse: \(error)")
    }
    return 0
}

/// The input is one definition document, read both as a flag and as an experiment (the bodies
/// of `PUT /v1/flags/{key}` and `PUT /v1/experiments/{key}`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let json: JSONValue
    do throws(JSONParseError) {
        json = try JSONParser.parse(UnsafeBufferPointer(start: data, count: size), limits: bodyLimits)
    } catch {
        return 0
    }
    do throws(InvalidDefinition) {
        let flag = try FlagDefinition(json: json)
        requireSameDefinition(flag, try? FlagDefinition(json: flag.jsonValue), "flag")
        var set = FlagSet()
        set.flags["fuzz-flag"] = flag
        for context in contexts {
            let details = flag.evaluate(key: "fuzz-flag", context: context)
            // A flag that parsed names only variants it defines: GENERAL is for flags built in code.
            require(details.errorCode != .general, "a parsed flag failed to evaluate: \(details)")
            require((details.reason == .error) == (details.errorCode != nil), "reason and error code disagree: \(details)")
            if let variant = details.variant {
                require(flag.variants[variant] == details.value, "variant \(variant) does not give value \(details.value)")
            }
            var writer = JSONWriter()
            details.write(to: &writer)
            _ = set.evaluateAll(context: context).jsonValue
        }
        requireGrowthBookFeature { () throws(GrowthBookPayload.Untranslatable) in
            let feature = try GrowthBookPayload.feature(flag: flag, key: "fuzz-flag")
            require(feature["defaultValue"] == flag.variants[flag.defaultVariant], "the feature's default is not the flag's: \(feature)")
            return feature
        }
    } catch {
        _ = error.description
    }
    do throws(InvalidDefinition) {
        let experiment = try ExperimentDefinition(json: json)
        requireSameDefinition(experiment, try? ExperimentDefinition(json: experiment.jsonValue), "experiment")
        for context in contexts {
            if let assignment = experiment.assign(key: "fuzz-experiment", context: context) {
                require(experiment.variants.indices.contains(assignment.variantIndex), "variant \(assignment.variantIndex) of \(experiment.variants.count)")
                _ = assignment.jsonValue
            }
        }
        requireGrowthBookFeature { () throws(GrowthBookPayload.Untranslatable) in
            try GrowthBookPayload.feature(experiment: experiment, key: "fuzz-experiment")
        }
    } catch {
        _ = error.description
    }
    return 0
}

/// A definition written back as JSON reads back as the same definition.
func requireSameDefinition<Definition: Equatable>(_ definition: Definition, _ readBack: Definition?, _ what: String) {
    require(readBack == definition, "a \(what) written as JSON reads back \(readBack == nil ? "with problems" : "different"): \(definition)")
}

/// A definition that parsed either translates to a GrowthBook feature, written as JSON that
/// parses back to the same value, or is refused with a path and a reason.
func requireGrowthBookFeature(_ translate: () throws(GrowthBookPayload.Untranslatable) -> JSONValue) {
    do throws(GrowthBookPayload.Untranslatable) {
        let feature = try translate()
        let text = feature.jsonText
        let readBack = try? JSONParser.parse(Array(text.utf8), limits: .storedData)
        require(readBack == feature, "a GrowthBook feature does not read back: \(text)")
    } catch {
        require(!error.reason.isEmpty, "an untranslatable definition without a reason at \(error.path)")
    }
}
