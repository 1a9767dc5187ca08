// SemanticVersion: app versions ordered the way GrowthBook's paddedVersionString orders them.

/// A version such as `5.2.0`, `v5.10` or `1.0.0-beta.2`, ordered as GrowthBook orders versions.
///
/// GrowthBook's idea (`paddedVersionString`): drop a leading `v` and any `+build` suffix, split
/// on `.` and `-`, mark a plain `major.minor.patch` with a trailing `~` (the highest ASCII
/// character, so `1.0.0` sorts after every `1.0.0-pre.release`), right-align numeric parts so
/// that `10` sorts after `9`, and compare the joined text code unit by code unit. Hence:
///
/// - `5.10` > `5.9`, `v1.2.3` == `1.2.3`, `1.2.3+build7` == `1.2.3`;
/// - `1.0.0-alpha` < `1.0.0-alpha.1` < `1.0.0-beta` < `1.0.0-rc.1` < `1.0.0`.
///
/// Two refinements, both inert on every case GrowthBook publishes:
/// - missing parts are 0 when a version is all numbers: `5.10` reads as `5.10.0`, `7` as
///   `7.0.0` (GrowthBook would put `5.10` below `5.10.0`);
/// - numeric parts are compared as numbers of any length, with leading zeros ignored
///   (GrowthBook pads to five places, so `100000` sorts below `99999` there).
///
/// ```swift
/// SemanticVersion("5.10") > SemanticVersion("5.9")            // true
/// SemanticVersion("1.0.0-beta") < SemanticVersion("v1.0.0")    // true
/// SemanticVersion("5.2") == SemanticVersion("5.2.0")          // true
/// ```
public struct SemanticVersion: Sendable, Comparable, CustomStringConvertible {
    /// One `.`- or `-`-separated piece of a version.
    enum Part: Sendable, Equatable {
        /// Digits only, without leading zeros ("0" for zero).
        case number(String)
        /// Anything else, kept as written (the empty string for `1.0.0--`).
        case text(String)
    }

    /// The version as written.
    public let text: String
    /// The parts compared, `~` included for a plain release.
    let parts: [Part]

    /// Reads `text` as a version; every string is one, as in GrowthBook (`a.b.c` sorts above
    /// every numeric version).
    public init(_ text: String) {
        self.text = text
        parts = Self.parts(of: text)
    }

    public var description: String { text }

    static func parts(of text: String) -> [Part] {
        var core = Substring(text)
        if core.first == "v" { core = core.dropFirst() }
        if let plus = core.firstIndex(of: "+") { core = core[..<plus] }
        let pieces = core.split(omittingEmptySubsequences: false) { $0 == "." || $0 == "-" }
        var parts: [Part] = pieces.map { piece in
            let isNumber = !piece.isEmpty && piece.allSatisfy { $0.isASCII && $0.isNumber }
            guard isNumber else { return .text(String(piece)) }
            let significant = piece.drop { $0 == "0" }
            return .number(significant.isEmpty ? "0" : String(significant))
        }
        // "5.10" means 5.10.0: pad an all-numeric version without pre-release to three parts.
        let allNumbers = parts.allSatisfy { if case .number = $0 { true } else { false } }
        if allNumbers && parts.count < 3 && !core.contains("-") {
            parts += Array(repeating: .number("0"), count: 3 - parts.count)
        }
        if parts.count == 3 { parts.append(.text("~")) }
        return parts
    }

    /// The comparison key: parts joined by `-`, numbers right-aligned to `width` with spaces.
    func key(width: Int) -> [UInt16] {
        var key: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if index > 0 { key.append(0x2D) }
            switch part {
            case .number(let digits):
                key += Array(repeating: 0x20, count: max(0, width - digits.utf16.count))
                key += digits.utf16
            case .text(let text):
                key += text.utf16
            }
        }
        return key
    }

    /// The width that right-aligns every numeric part of both versions: GrowthBook's 5, or
    /// more for a longer number.
    static func width(_ a: SemanticVersion, _ b: SemanticVersion) -> Int {
        var width = 5
        for part in a.parts + b.parts {
            if case .number(let digits) = part { width = max(width, digits.utf16.count) }
        }
        return width
    }

    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        let width = width(lhs, rhs)
        return lhs.key(width: width).lexicographicallyPrecedes(rhs.key(width: width))
    }

    /// Versions are equal when they sort the same (`v1.2.3` == `1.2.3+build`), not when they
    /// are written the same.
    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        let width = width(lhs, rhs)
        return lhs.key(width: width) == rhs.key(width: width)
    }
}
