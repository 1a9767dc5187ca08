// GrowthBookPayload: FlowStack's flags and experiments as the features payload GrowthBook SDKs load.

import JSON

/// FlowStack's flags and experiments in GrowthBook's SDK payload format, so an unmodified
/// GrowthBook SDK pointed at FlowStack (`apiHost`) evaluates them itself, offline, with the
/// answers FlowStack gives.
///
/// - A flag becomes the feature of the same key: its rules become force rules, its split an
///   experiment rule (`hashVersion: 2`, the flag's seed, its weights), its default variant the
///   `defaultValue`.
/// - An experiment `KEY` becomes the feature `experiment:KEY` (a colon never occurs in a flag
///   key): its value is the key of the variant the user is in, `null` when not in it.
/// - Version tests become `$v…` operators guarded to well-formed versions
///   (``versionCondition(_:_:comparison:at:)``).
/// - A definition with something no GrowthBook SDK evaluates as FlowStack does (a version
///   threshold with no canonical form, an attribute name the SDKs read as a path, a rule
///   serving `null`) is left out whole, and listed in `omitted` with where and why; a partial translation would answer
///   differently without anyone seeing it.
///
/// The SDKs must be given FlowStack's attributes, plus the session's user id as `userId`.
///
/// ```swift
/// let payload = GrowthBookPayload(flags: [("eu-face-scan", flag)], experiments: [], dateUpdated: "2026-01-01T00:00:00.000Z")
/// payload.features["eu-face-scan"]   // {"defaultValue":false,"rules":[{"condition":{"country":{"$in":[…]}},"force":true}]}
/// payload.jsonValue                  // {"status":200,"features":{…},"experiments":[],"dateUpdated":…,"flowstack":{"omitted":[]}}
/// ```
public struct GrowthBookPayload: Sendable, Equatable {
    /// A definition left out of the payload, and why.
    public struct Omission: Sendable, Equatable {
        /// The feature key it would have had (`new-checkout`, `experiment:onboarding-length`).
        public var key: String
        /// Where in the FlowStack definition the untranslatable part is.
        public var path: JSONPointer
        public var reason: String

        public init(key: String, path: JSONPointer, reason: String) {
            self.key = key
            self.path = path
            self.reason = reason
        }
    }

    /// A part of a definition that GrowthBook SDKs would evaluate differently: where it is in
    /// the definition's JSON, and why.
    public struct Untranslatable: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: JSONPointer
        public var reason: String

        public init(path: JSONPointer, reason: String) {
            self.path = path
            self.reason = reason
        }

        public var description: String { "\(path): \(reason)" }
    }

    /// Feature key → `{defaultValue, rules}`: flags in key order, then experiments in key order.
    public var features: JSONObject
    /// What was left out, in the same order.
    public var omitted: [Omission]
    /// The latest time any flag or experiment changed (ISO 8601), GrowthBook's `dateUpdated`.
    public var dateUpdated: String

    /// The prefix of the feature that carries an experiment's variant.
    public static let experimentPrefix = "experiment:"

    /// The feature key of the experiment `key`.
    ///
    /// ```swift
    /// GrowthBookPayload.featureKey(experiment: "onboarding-length")   // "experiment:onboarding-length"
    /// ```
    public static func featureKey(experiment key: String) -> String { experimentPrefix + key }

    /// Translates every flag and experiment; those that cannot be translated go to ``omitted``.
    public init(
        flags: some Sequence<(key: String, value: FlagDefinition)>,
        experiments: some Sequence<(key: String, value: ExperimentDefinition)>,
        dateUpdated: String
    ) {
        var features: [JSONObject.Member] = []
        var omitted: [Omission] = []
        for (key, flag) in flags.sorted(by: { FlagEvaluations.precedes($0.key, $1.key) }) {
            do throws(Untranslatable) {
                features.append(.init(key: key, value: try Self.feature(flag: flag, key: key)))
            } catch {
                omitted.append(Omission(key: key, path: error.path, reason: error.reason))
            }
        }
        for (key, experiment) in experiments.sorted(by: { FlagEvaluations.precedes($0.key, $1.key) }) {
            let featureKey = Self.featureKey(experiment: key)
            do throws(Untranslatable) {
                features.append(.init(key: featureKey, value: try Self.feature(experiment: experiment, key: key)))
            } catch {
                omitted.append(Omission(key: featureKey, path: error.path, reason: error.reason))
            }
        }
        self.features = JSONObject(uniqueMembers: features)
        self.omitted = omitted
        self.dateUpdated = dateUpdated
    }

    /// The document `GET /api/features/{clientKey}` answers: GrowthBook's `status`, `features`,
    /// `experiments` (none: FlowStack has no auto experiments) and `dateUpdated`, and a
    /// `flowstack` member (SDKs ignore members they do not know) listing what was left out.
    public var jsonValue: JSONValue {
        let omissions = omitted.map { omission -> JSONValue in
            ["key": .string(omission.key), "path": .string(omission.path.description), "reason": .string(omission.reason)]
        }
        return [
            "status": 200,
            "features": .object(features),
            "experiments": [],
            "dateUpdated": .string(dateUpdated),
            "flowstack": ["omitted": .array(omissions)],
        ]
    }
}
