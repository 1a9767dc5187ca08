// SessionFlags: a session's flag values and experiment variants, typed.
import JSON

/// The flag evaluations and experiment variants fixed when the session was created.
///
/// ```swift
/// let flags = await session.flags
/// if flags.bool("eu-face-scan") == true { … }
/// flags.variant(of: "onboarding-length")   // "short", or nil when not enrolled
/// flags.string("paywall-copy", default: "Try it free")
/// ```
public struct SessionFlags: Sendable, Equatable {
    /// Evaluations by flag key: value, variant, reason.
    public var details: [String: NavigationState.Flag]
    /// Variant keys by experiment key; an experiment the session is not in is absent.
    public var experiments: [String: String]

    public init(_ state: NavigationState) {
        details = state.flags
        experiments = state.experiments
    }

    /// The flag's value when it is true or false; nil when the flag is unknown or another type.
    public func bool(_ key: String) -> Bool? { details[key]?.value.boolValue }
    public func bool(_ key: String, default fallback: Bool) -> Bool { bool(key) ?? fallback }

    public func string(_ key: String) -> String? { details[key]?.value.stringValue }
    public func string(_ key: String, default fallback: String) -> String { string(key) ?? fallback }

    public func number(_ key: String) -> Double? { details[key]?.value.doubleValue }
    public func number(_ key: String, default fallback: Double) -> Double { number(key) ?? fallback }

    /// The value as JSON, whatever its type.
    public func json(_ key: String) -> JSONValue? { details[key]?.value }

    /// The variant the flag evaluated to (`on`, `off`, …).
    public func flagVariant(_ key: String) -> String? { details[key]?.variant }

    /// The experiment's variant for this session, nil when the session is not in it.
    public func variant(of experiment: String) -> String? { experiments[experiment] }
}
