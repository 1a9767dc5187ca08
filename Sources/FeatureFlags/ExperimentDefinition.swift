// ExperimentDefinition: an A/B experiment: weighted variants that may pin flows to versions.

import JSON

/// An experiment: weighted variants, each of which may pin flows to a version, a coverage, and
/// an optional targeting condition.
///
/// The JSON users write (`PUT /v1/experiments/{key}`):
///
/// ```json
/// {"variants": [{"key": "control", "weight": 0.5},
///               {"key": "short", "weight": 0.5, "flows": {"onboarding": 2}}],
///  "coverage": 1.0, "hashAttribute": "userId"}
/// ```
///
/// ```swift
/// let experiment = try ExperimentDefinition(json: JSONParser.parse(body))
/// experiment.assign(key: "onboarding-length", context: EvaluationContext(targetingKey: "u-1"))?.variantKey
/// // "control"
/// ```
///
/// One variant is allowed: with a coverage below 1 it rolls a pinned flow out to a share of
/// users, and an experiment whose other arm was removed keeps its history. Two or more make
/// an A/B test.
public struct ExperimentDefinition: Sendable, Equatable {
    /// One arm of the experiment.
    public struct Variant: Sendable, Equatable {
        /// The name reported in `state.experiments` and in the report.
        public var key: String
        /// The share of covered users (0…1); `nil` on every variant means equal shares.
        public var weight: Double?
        /// Flows this variant pins to a version, in the order written.
        public var flows: [FlowPin]

        public init(key: String, weight: Double? = nil, flows: [FlowPin] = []) {
            self.key = key
            self.weight = weight
            self.flows = flows
        }

        /// The pins as flow name → version.
        public var pinnedFlows: [String: Int] {
            var pins: [String: Int] = [:]
            for pin in flows { pins[pin.flow] = pin.version }
            return pins
        }
    }

    /// A flow pinned to one of its versions for the users of a variant.
    public struct FlowPin: Sendable, Equatable, Hashable {
        public var flow: String
        public var version: Int

        public init(flow: String, version: Int) {
            self.flow = flow
            self.version = version
        }
    }

    /// A pin with the place it was written, so the server can refuse a version that does not
    /// exist with a path, as it does every other problem.
    public struct PinReference: Sendable, Equatable {
        public var variantKey: String
        public var pin: FlowPin
        /// Where the pin is in the experiment's JSON, e.g. `/variants/1/flows/onboarding`.
        public var path: JSONPointer

        public init(variantKey: String, pin: FlowPin, path: JSONPointer) {
            self.variantKey = variantKey
            self.pin = pin
            self.path = path
        }
    }

    /// The arms, in order; the order decides the bucket layout, so keep it stable.
    public var variants: [Variant]
    /// The share of eligible users (0…1) who enter the experiment.
    public var coverage: Double
    /// The hash seed; `nil` means the experiment's key.
    public var seed: String?
    /// The attribute whose value is hashed; `userId` means the targeting key.
    public var hashAttribute: String
    /// Who is eligible; `nil` means everyone.
    public var when: TargetingCondition?
    /// A disabled experiment assigns nobody.
    public var enabled: Bool
    /// Where the experiment is in its lifecycle; only a running one assigns new sessions.
    public var status: Status
    /// The variant made live when the experiment was concluded; `nil` unless ``status`` is
    /// ``Status/concluded``.
    public var winner: String?
    /// Free text for the people who run the experiment.
    public var description: String?

    /// An experiment's lifecycle: `draft` → `running` ⇄ `stopped`, and `running` or `stopped` →
    /// `concluded` (final). A definition without `status` is `running`, so experiments stored
    /// before the lifecycle existed keep assigning.
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// Stored and reported, assigns nobody yet.
        case draft
        /// Assigns new sessions.
        case running
        /// Assigns nobody; sessions already in it keep their variant and pinned versions.
        case stopped
        /// Stopped for good with a ``ExperimentDefinition/winner`` whose pins were made live.
        case concluded

        /// The names in the order of the lifecycle, for messages.
        public static let names = allCases.map(\.rawValue)

        /// Whether an experiment in this state may be moved to `next`; staying put is allowed
        /// (a PUT that changes only the coverage keeps its status).
        ///
        /// ```swift
        /// ExperimentDefinition.Status.stopped.canMove(to: .running)    // true: a restart, same buckets
        /// ExperimentDefinition.Status.concluded.canMove(to: .running)  // false: concluded is final
        /// ```
        public func canMove(to next: Status) -> Bool {
            if next == self { return self != .concluded }
            switch (self, next) {
            case (.draft, .running), (.draft, .stopped), (.running, .stopped), (.stopped, .running),
                (.running, .concluded), (.stopped, .concluded):
                return true
            default:
                return false
            }
        }
    }

    /// Whether the experiment puts new sessions into a variant: enabled and running.
    public var assignsSessions: Bool {
        enabled && status == .running && !variants.isEmpty
    }

    /// The winning variant of a concluded experiment.
    public var winningVariant: Variant? {
        guard status == .concluded, let winner else { return nil }
        return variants.first { $0.key == winner }
    }

    /// The attribute hashed when the definition names none.
    public static let defaultHashAttribute = "userId"

    /// An experiment built in code. Nothing is checked here; ``problems`` lists what is wrong.
    public init(
        variants: [Variant], coverage: Double = 1, seed: String? = nil,
        hashAttribute: String = ExperimentDefinition.defaultHashAttribute, when: TargetingCondition? = nil,
        enabled: Bool = true, status: Status = .running, winner: String? = nil, description: String? = nil
    ) {
        self.variants = variants
        self.coverage = coverage
        self.seed = seed
        self.hashAttribute = hashAttribute
        self.when = when
        self.enabled = enabled
        self.status = status
        self.winner = winner
        self.description = description
    }

    /// The weights bucketing uses: the written ones when every variant has one, else `nil`
    /// (equal shares).
    public var weights: [Double]? {
        let written = variants.compactMap(\.weight)
        return written.count == variants.count ? written : nil
    }

    /// Every flow pin with its path, for the server to check that the versions exist.
    ///
    /// ```swift
    /// experiment.pinReferences.map(\.path.description)   // ["/variants/1/flows/onboarding"]
    /// ```
    public var pinReferences: [PinReference] {
        var references: [PinReference] = []
        for (index, variant) in variants.enumerated() {
            for pin in variant.flows {
                let path = JSONPointer().appending("variants").appending(index).appending("flows").appending(pin.flow)
                references.append(PinReference(variantKey: variant.key, pin: pin, path: path))
            }
        }
        return references
    }

    /// What is wrong with the experiment's content, with paths into its JSON form.
    ///
    /// ```swift
    /// ExperimentDefinition(variants: [.init(key: "a"), .init(key: "a")]).problems
    /// // [/variants/1/key: "a" is already the key of variant 0; variant keys must be unique]
    /// ```
    public var problems: [FlagProblem] {
        var reader = DefinitionReader()
        let root = JSONPointer()
        Self.checkVariants(
            variants.map { ($0.key, $0.weight, true) }, at: root.appending("variants"), reader: &reader)
        for (index, variant) in variants.enumerated() {
            for pin in variant.flows {
                Self.checkPin(pin, at: root.appending("variants").appending(index).appending("flows").appending(pin.flow), reader: &reader)
            }
        }
        _ = reader.fraction(.number(coverage), at: root.appending("coverage"), what: "\"coverage\"")
        if let seed, seed.isEmpty {
            reader.report(root.appending("seed"), "\"seed\" must not be empty; omit it to use the experiment's key")
        }
        if hashAttribute.isEmpty {
            reader.report(root.appending("hashAttribute"), "\"hashAttribute\" must not be empty; omit it to use \"userId\"")
        }
        Self.checkWinner(winner, status: status, variantKeys: variants.map(\.key), at: root.appending("winner"), reader: &reader)
        return reader.problems
    }

    /// At least one variant; keys non-empty and unique; weights in [0, 1], on every variant or
    /// none, adding up to 1. `weightReadable` is false for a weight already reported.
    static func checkVariants(
        _ variants: [(key: String?, weight: Double?, weightReadable: Bool)], at path: JSONPointer,
        reader: inout DefinitionReader
    ) {
        guard !variants.isEmpty else {
            reader.report(path, "an experiment needs at least one variant, such as [{\"key\": \"control\"}, {\"key\": \"treatment\"}]")
            return
        }
        var firstIndex: [String: Int] = [:]
        for (index, variant) in variants.enumerated() {
            guard let key = variant.key else { continue }
            let keyPath = path.appending(index).appending("key")
            if key.isEmpty {
                reader.report(keyPath, "\"key\" must not be empty")
            } else if let first = firstIndex[key] {
                reader.report(keyPath, "\(DefinitionReader.quoted(key)) is already the key of variant \(first); variant keys must be unique")
            } else {
                firstIndex[key] = index
            }
        }
        let weighted = variants.filter { $0.weight != nil || !$0.weightReadable }.count
        let mixed = weighted > 0 && weighted < variants.count
        var weights: [Double] = []
        for (index, variant) in variants.enumerated() {
            let weightPath = path.appending(index).appending("weight")
            if let weight = variant.weight {
                if reader.fraction(.number(weight), at: weightPath, what: "\"weight\"") != nil {
                    weights.append(weight)
                }
            } else if mixed && variant.weightReadable {
                reader.report(weightPath, "missing \"weight\": give every variant a weight, or none for equal shares")
            }
        }
        if weights.count == variants.count {
            reader.checkWeightSum(weights, at: path)
        }
    }

    /// A concluded experiment names its winner, one of its variants; any other has none.
    static func checkWinner(
        _ winner: String?, status: Status, variantKeys: [String], at path: JSONPointer, reader: inout DefinitionReader
    ) {
        guard let winner else {
            if status == .concluded {
                reader.report(path, "missing \"winner\": a concluded experiment names the variant whose flows were made live, one of \(DefinitionReader.abbreviatedList(variantKeys))")
            }
            return
        }
        guard status == .concluded else {
            reader.report(path, "\"winner\" is only for a concluded experiment (\"status\": \"concluded\"); this one is \(DefinitionReader.quoted(status.rawValue))")
            return
        }
        reader.checkReference(winner, among: VariantNames(variantKeys), at: path)
    }

    /// A pin names a flow and a version from 1 up. Whether that version exists is the
    /// server's check: this module knows no store.
    static func checkPin(_ pin: FlowPin, at path: JSONPointer, reader: inout DefinitionReader) {
        if pin.flow.isEmpty {
            reader.report(path, "a flow name must not be empty")
        }
        if pin.version < 1 {
            reader.report(path, "a flow version is a positive integer, found \(pin.version)")
        }
    }
}
