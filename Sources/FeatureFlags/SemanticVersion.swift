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
        var parts = pieces(of: text)
        if parts.count == 3 { parts.append(.text("~")) }
        return parts
    }

    /// The parts before the `~` of a plain release: `5.2` → `5, 2, 0`, `1.0.0-rc.1` → `1, 0, 0, rc, 1`.
    static func pieces(of text: String) -> [Part] {
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
        return parts
    }

    /// Whether `text` is a well-formed version, the only kind an attribute's version test
    /// compares (any other value fails every version test but `versionIsNot`, like a missing one):
    ///
    /// - an optional leading `v`, then pieces separated by `.` or `-`, then an optional `+build`
    ///   of ASCII letters, digits, `.` and `-`;
    /// - each piece is a number from 0 to 99999 without leading zeros (as SemVer asks), or ASCII
    ///   letters and digits with at least one letter (`beta`, `rc1`, `2b`).
    ///
    /// So `5`, `5.2`, `v5.2.0`, `1.0.0-beta.2`, `1.0.0-rc.1+build.7` and GrowthBook's own odd
    /// cases (`1-2-3`, `1.2.3.4`, `a.b.c`) are versions; `05`, `1.02.3`, `100000.0.0`, the empty
    /// string, `1..2`, `5.2 ` and non-ASCII digits are not. These are exactly the versions on
    /// which GrowthBook SDKs' `$v…` operators, given a threshold in canonical form, order as
    /// FlowStack does (``GrowthBookPayload`` guards the attribute with
    /// ``wellFormedPattern``): outside them GrowthBook keeps leading zeros, pads numbers to five
    /// digits, reads the empty string as `0`, and its Python SDK takes non-ASCII digits for numbers.
    ///
    /// ```swift
    /// SemanticVersion.isWellFormed("5.2")    // true
    /// SemanticVersion.isWellFormed("05")     // false
    /// ```
    public static func isWellFormed(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "v" { rest = rest.dropFirst() }
        if let plus = rest.firstIndex(of: "+") {
            let build = rest[rest.index(after: plus)...]
            guard !build.isEmpty, build.utf8.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }) else { return false }
            rest = rest[..<plus]
        }
        let pieces = rest.utf8.split(omittingEmptySubsequences: false) { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
        return pieces.allSatisfy { piece in
            guard !piece.isEmpty, piece.allSatisfy(isLetterOrDigit) else { return false }
            if piece.contains(where: { !isDigit($0) }) { return true }  // has a letter
            return piece.count <= 5 && (piece.count == 1 || piece.first != UInt8(ascii: "0"))
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    /// ``isWellFormed(_:)`` as a regular expression that JavaScript and Python's `re` read alike
    /// (GrowthBook's `$regex`): a leading `v` is always the prefix, never part of a piece (both
    /// strip it), and `(?![\s\S])` ends it, as Python's `$` also matches before a final newline.
    public static let wellFormedPattern = #"^(?:v|(?!v))\#(piecePattern)(?:[.-]\#(piecePattern))*\#(buildPattern)(?![\s\S])"#

    /// A well-formed version that FlowStack reads with missing parts as zeros (`5` as `5.0.0`,
    /// `v5.2+7` as `5.2.0`): one or two numbers separated by `.`. GrowthBook does not pad
    /// them, so ``GrowthBookPayload`` compares them with a threshold of as many parts.
    static func paddedPattern(numbers: Int) -> String {
        #"^(?:v|(?!v))\#(Array(repeating: numberPattern, count: numbers).joined(separator: #"\."#))\#(buildPattern)(?![\s\S])"#
    }

    /// A well-formed version that FlowStack does not pad: ``wellFormedPattern`` but neither
    /// ``paddedPattern(numbers:)``.
    static var unpaddedPattern: String {
        let padded = #"(?:v|(?!v))\#(numberPattern)(?:\.\#(numberPattern))?\#(buildPattern)(?![\s\S])"#
        return "^(?!\(padded))" + wellFormedPattern.dropFirst()
    }

    static let numberPattern = "(?:0|[1-9][0-9]{0,4})"
    static let piecePattern = "(?:0|[1-9][0-9]{0,4}|[0-9]*[A-Za-z][0-9A-Za-z]*)"
    static let buildPattern = #"(?:\+[0-9A-Za-z.-]+)?"#

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
