// JavaScriptNumber: numbers written as JavaScript's String(number) writes them, for hashing and versions.

import JSON

/// Text for numbers the way JavaScript's `String(number)` writes them.
///
/// GrowthBook SDKs hash and compare a numeric attribute as its JavaScript text (`42`, `1.5`,
/// `1e+21`), so a numeric user id must become the same text here or it would land in another
/// bucket than the JS SDK puts it in.
enum JavaScriptNumber {
    /// The JavaScript text of a JSON number (`nil` for any other value): integers as their digits, other numbers laid out
    /// by ECMAScript's Number::toString (fixed notation for decimal exponents -6 to 21,
    /// `d.ddde±x` otherwise).
    static func text(of value: JSONValue) -> String? {
        switch value {
        case .integer(let integer):
            // JS has only doubles: integers beyond 2^53 print as the double they round to.
            if integer.magnitude <= 1 << 53 { return String(integer) }
            return text(Double(integer))
        case .number(let double):
            return text(double)
        default:
            return nil
        }
    }

    /// The JavaScript text of a double.
    static func text(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == 0 { return "0" }
        if value < 0 { return "-" + text(-value) }
        if value.isInfinite { return "Infinity" }
        // Swift's description gives the shortest digits that read back to the same double,
        // as JS does; only their layout differs ("1e-07" against "1e-7"). Read the digits and
        // the exponent out of it and lay them out again.
        let written = value.description
        let mantissa: Substring
        var exponent = 0
        if let e = written.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = written[..<e]
            exponent = Int(written[written.index(after: e)...]) ?? 0
        } else {
            mantissa = written[...]
        }
        let whole: Substring
        let fraction: Substring
        if let dot = mantissa.firstIndex(of: ".") {
            whole = mantissa[..<dot]
            fraction = mantissa[mantissa.index(after: dot)...]
        } else {
            whole = mantissa
            fraction = ""
        }
        // value = 0.d1…dk × 10^n
        let padded = String((whole + fraction).drop { $0 == "0" })
        var digits = padded
        while digits.last == "0" { digits.removeLast() }
        let k = digits.count
        let n = exponent - fraction.count + padded.count
        if k <= n && n <= 21 {
            return digits + String(repeating: "0", count: n - k)
        }
        if 0 < n && n <= 21 {
            return String(digits.prefix(n)) + "." + String(digits.dropFirst(n))
        }
        if -6 < n && n <= 0 {
            return "0." + String(repeating: "0", count: -n) + digits
        }
        let lead = String(digits.prefix(1))
        let rest = k > 1 ? "." + String(digits.dropFirst()) : ""
        return lead + rest + "e" + (n > 0 ? "+" : "-") + String((n - 1).magnitude)
    }
}
