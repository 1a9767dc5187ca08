// ExperimentAssignment: the variant a user was bucketed into, with the numbers that put them there.

import JSON

/// The variant a user landed in, with what bucketed them there, so an assignment can be
/// explained and cross-checked with a GrowthBook SDK.
///
/// ```swift
/// let assignment = experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "u-1"))
/// assignment?.variantKey    // "control"
/// assignment?.bucket        // 0.3973: GrowthBook's hash v2 of ("onboarding-length", "u-1")
/// assignment?.pinnedFlows   // [:]
/// ```
public struct ExperimentAssignment: Sendable, Equatable {
    /// The experiment's key.
    public var experimentKey: String
    /// The key of the variant the user is in.
    public var variantKey: String
    /// The variant's position in the definition.
    public var variantIndex: Int
    /// The flows this variant pins, flow name → version.
    public var pinnedFlows: [String: Int]
    /// The attribute that was hashed.
    public var hashAttribute: String
    /// The attribute's value as hashed (a number as JavaScript writes it).
    public var hashValue: String
    /// GrowthBook's hash v2 of the seed and `hashValue`, in [0, 1): GrowthBook calls it `n`.
    public var bucket: Double

    public init(
        experimentKey: String, variantKey: String, variantIndex: Int, pinnedFlows: [String: Int],
        hashAttribute: String, hashValue: String, bucket: Double
    ) {
        self.experimentKey = experimentKey
        self.variantKey = variantKey
        self.variantIndex = variantIndex
        self.pinnedFlows = pinnedFlows
        self.hashAttribute = hashAttribute
        self.hashValue = hashValue
        self.bucket = bucket
    }

    /// `{"variant", "variantIndex", "bucket", "hashAttribute", "hashValue", "flows"}`, flows in
    /// name order, for storing with a session or showing in a debug view.
    public var jsonValue: JSONValue {
        let flows = pinnedFlows.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map {
            JSONObject.Member(key: $0, value: .integer(pinnedFlows[$0] ?? 0))
        }
        return [
            "variant": .string(variantKey), "variantIndex": .integer(variantIndex), "bucket": .number(bucket),
            "hashAttribute": .string(hashAttribute), "hashValue": .string(hashValue),
            "flows": .object(JSONObject(uniqueMembers: flows)),
        ]
    }
}
