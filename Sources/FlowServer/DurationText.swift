// Durations as operators write them in options: `30d`, `12h`, `15m`, `3s`, `500ms`.

/// Reads and writes the durations of `serve`'s options (`--retention 30d`, `--session-idle 12h`):
/// a whole number greater than zero and one unit, `ms`, `s`, `m`, `h` or `d`, nothing else (no
/// sign, space, fraction or second unit), at most 100 years.
///
/// ```swift
/// try DurationText.parse("30d")     // .seconds(2_592_000)
/// try DurationText.parse("500ms")   // .milliseconds(500)
/// DurationText.format(.seconds(90)) // "90s"
/// ```
public enum DurationText {
    /// The longest duration accepted: 100 years of days, far below `Duration`'s range and the
    /// dates it is added to.
    public static let maximumMilliseconds: Int64 = 36_500 * 86_400_000

    /// Why a text is not a duration, in a sentence for an option's error message.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    static let units: [(suffix: String, milliseconds: Int64)] = [
        ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
    ]

    /// The duration `text` names; throws a `Problem` for junk, zero, and overflow.
    public static func parse(_ text: String) throws(Problem) -> Duration {
        let example = "a whole number and a unit (ms, s, m, h, d), such as 30d, 12h, 15m, 3s or 500ms"
        let bytes = Array(text.utf8)
        let digits = bytes.prefix { $0 >= 48 && $0 <= 57 }
        let suffix = String(decoding: bytes.dropFirst(digits.count), as: UTF8.self)
        guard !digits.isEmpty, let unit = units.first(where: { $0.suffix == suffix }) else {
            throw Problem(description: "'\(text)' is not a duration: write \(example)")
        }
        var number: Int64 = 0
        for digit in digits {
            let (shifted, over1) = number.multipliedReportingOverflow(by: 10)
            let (added, over2) = shifted.addingReportingOverflow(Int64(digit - 48))
            guard !over1, !over2 else { throw Problem(description: "'\(text)' is longer than 100 years") }
            number = added
        }
        guard number > 0 else { throw Problem(description: "'\(text)' is not a duration: it must be longer than zero") }
        let (milliseconds, overflow) = number.multipliedReportingOverflow(by: unit.milliseconds)
        guard !overflow, milliseconds <= maximumMilliseconds else {
            throw Problem(description: "'\(text)' is longer than 100 years")
        }
        return .milliseconds(milliseconds)
    }

    /// The shortest text that reads back as `duration` (whole milliseconds): `30d`, `90s`, `1500ms`.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        for unit in units.reversed() where milliseconds % unit.milliseconds == 0 && milliseconds != 0 {
            return "\(milliseconds / unit.milliseconds)\(unit.suffix)"
        }
        return "\(milliseconds)ms"
    }

    /// `duration` in seconds, as a `TimeInterval` for date arithmetic.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
