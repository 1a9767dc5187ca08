// The durations of `serve`'s options: what reads, what is refused, and how they print.
import FlowServer
import Testing

struct DurationTextTests {
    @Test(arguments: [
        ("30d", Duration.seconds(30 * 86_400)), ("12h", .seconds(12 * 3600)), ("15m", .seconds(900)), ("3s", .seconds(3)),
        ("500ms", .milliseconds(500)), ("1ms", .milliseconds(1)), ("36500d", .seconds(36_500 * 86_400)), ("007s", .seconds(7)),
    ])
    func reads(_ text: String, _ expected: Duration) throws {
        #expect(try DurationText.parse(text) == expected)
    }

    /// Junk, a sign, a fraction, a space, an unknown or missing unit, zero, and what does not fit.
    @Test(arguments: [
        "", "d", "30", "30D", "30 d", " 30d", "30d ", "-3s", "+3s", "1.5h", "3sec", "3s3", "0s", "0ms", "000d", "36501d",
        "99999999999999999999d", "9223372036854775807ms", "1e3s", "٣s", "3µs",
    ])
    func refuses(_ text: String) {
        #expect(throws: DurationText.Problem.self) { try DurationText.parse(text) }
    }

    @Test func formatsTheLargestWholeUnit() throws {
        #expect(DurationText.format(.seconds(30 * 86_400)) == "30d")
        #expect(DurationText.format(.seconds(90)) == "90s")
        #expect(DurationText.format(.milliseconds(1500)) == "1500ms")
        #expect(DurationText.format(.seconds(3600)) == "1h")
        for text in ["30d", "12h", "15m", "3s", "500ms"] { #expect(DurationText.format(try DurationText.parse(text)) == text) }
    }
}
