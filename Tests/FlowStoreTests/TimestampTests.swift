// Stored times are written by hand, byte for byte as Foundation's ISO 8601 style writes them.
import Foundation
@testable import FlowStore
import Testing

@Suite("Timestamp")
struct TimestampTests {
    static func expectAsTheStyle(_ time: Double, _ comment: String = "") {
        let date = Date(timeIntervalSince1970: time)
        #expect(Timestamp.string(date) == Timestamp.style.format(date), "\(String(format: "%.9f", time)) \(comment)")
    }

    /// Fixed times: the epoch, leap days, ends of years and centuries, milliseconds at their edges.
    @Test(arguments: [
        0, 0.0005, 0.999, 0.9995, 1, 59.999, 86_399.999_9, 68_169_600, 951_782_400, 951_868_799.999,
        978_307_199.999, 1_709_164_800.5, 1_764_460_800.123, 4_107_542_399.999, 253_402_300_799.999,
    ] as [Double])
    func fixedTimes(_ time: Double) {
        Self.expectAsTheStyle(time)
        #expect(Timestamp.written(Date(timeIntervalSince1970: time)) != nil)
    }

    /// Random times from 1970 to 2100, and times one or a few units in the last place either
    /// side of a whole millisecond, where a product rounded up would write the next one.
    @Test func randomTimesAsTheStyleWritesThem() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            Self.expectAsTheStyle(Double.random(in: 0..<4_102_444_800, using: &generator))
            let whole = Double(Int.random(in: 0...4_102_444_800, using: &generator))
            let millisecond = whole + Double(Int.random(in: 0...999, using: &generator)) / 1000
            var below = millisecond
            for _ in 0...Int.random(in: 0...3, using: &generator) { below = below.nextDown }
            Self.expectAsTheStyle(below, "below")
            Self.expectAsTheStyle(millisecond.nextUp, "above")
        }
    }

    /// Outside the years the hand-written form covers, the style writes the time.
    @Test(arguments: [-1, -86_400.5, 253_402_300_800, 1e15] as [Double])
    func outsideTheYearsTheStyleWrites(_ time: Double) {
        #expect(Timestamp.written(Date(timeIntervalSince1970: time)) == nil)
        Self.expectAsTheStyle(time)
    }
}
