// The client's time of an offline tap, as a batch item's `at` gives it and the log stores it.
@testable import FlowServer
import Testing

struct ClientTimeTests {
    /// Client times with an offset are stored in UTC with milliseconds (the server's own form).
    @Test(arguments: [
        ("2026-11-25T10:00:00.123Z", "2026-11-25T10:00:00.123Z"),
        ("2026-11-25T10:00:00Z", "2026-11-25T10:00:00.000Z"),
        ("2026-11-25t10:00:00.1z", "2026-11-25T10:00:00.100Z"),
        ("2026-11-25T11:30:00.123456789+01:30", "2026-11-25T10:00:00.123Z"),
        ("2026-01-01T00:30:00-01:00", "2026-01-01T01:30:00.000Z"),
        ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000Z"),
        ("2024-02-29T23:59:60Z", "2024-03-01T00:00:00.000Z"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"),
    ])
    func clientTimesNormalize(text: String, stored: String) {
        #expect(ClientTime.normalized(text) == stored)
    }

    /// Times that are not RFC 3339 date-times with real calendar values, or fall outside years 1 to 9999 in UTC, are refused.
    @Test(arguments: [
        "", "2026-11-25", "2026-11-25T10:00:00", "2026-11-25 10:00:00Z", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
        "2026-11-31T00:00:00Z", "2026-11-25T24:00:00Z", "2026-11-25T10:60:00Z", "2026-11-25T10:00:61Z",
        "2026-11-25T10:00:00.Z", "2026-11-25T10:00:00.1234567890Z", "2026-11-25T10:00:00+0100", "2026-11-25T10:00:00+24:00",
        "2026-11-25T10:00:00ZZ", "+2026-11-25T10:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
        "２０２６-11-25T10:00:00Z", "2026-11-25T10:00:00 Z",
    ])
    func clientTimesRefused(text: String) {
        #expect(ClientTime.normalized(text) == nil)
    }
}
