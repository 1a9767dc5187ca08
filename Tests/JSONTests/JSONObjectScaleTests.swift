// JSONObjectScaleTests: objects with 100,000 keys are built, parsed and compared in linear time, and their index finds what a scan would.

import Foundation
import JSON
import Testing

struct JSONObjectScaleTests {
    /// Sizes and bounds in seconds. A quadratic algorithm does 5·10⁹ key comparisons on 100,000
    /// keys (minutes); 10,000 keys come first so that such a build fails in seconds rather than
    /// hanging. The bounds are generous (a debug build on a busy machine), not a benchmark.
    static let sizes: [(count: Int, bound: Double)] = [(10_000, 1), (100_000, 4)]

    /// Keys `k0` … `k<count - 1>`, each holding its number.
    static func members(_ count: Int, reversed: Bool = false) -> [JSONObject.Member] {
        let indices = reversed ? Array((0..<count).reversed()) : Array(0..<count)
        return indices.map { JSONObject.Member(key: "k\($0)", value: .integer($0)) }
    }

    /// How much of this thread's CPU time `body` takes, in seconds: not the wall clock, which
    /// counts the time other tests on the same cores hold them (up to ten times as long in the
    /// whole suite on 2 cores).
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        func now() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        let started = now()
        try body()
        return now() - started
    }

    /// Objects of 10,000 and 100,000 keys compare within their bounds, in the same order and reversed,
    /// and a single different value or key still makes them unequal.
    @Test func bigObjectsCompareInLinearTime() throws {
        for size in Self.sizes { guard try bigObjectsCompareInLinearTime(size.count, bound: size.bound) else { return } }
    }

    /// Whether the objects of `count` keys took less than `bound` (the bigger ones are not tried
    /// after a failure).
    private func bigObjectsCompareInLinearTime(_ count: Int, bound: Double) throws -> Bool {
        let object = JSONObject(uniqueMembers: Self.members(count))
        let copy = JSONObject(uniqueMembers: Self.members(count))
        let reversed = JSONObject(uniqueMembers: Self.members(count, reversed: true))
        var changed = copy
        changed["k\(count - 1)"] = .integer(-1)
        var renamed = JSONObject(uniqueMembers: Array(Self.members(count, reversed: true).dropFirst()))
        renamed["other"] = .integer(count - 1)
        var results: [Bool] = []
        let elapsed = Self.seconds {
            results = [object == copy, object == reversed, reversed == object, object == changed, reversed == changed,
                       object == renamed, renamed == reversed]
        }
        #expect(results == [true, true, true, false, false, false, false])
        #expect(elapsed < bound, "comparing \(count)-key objects took \(elapsed) s")
        return elapsed < bound
    }

    /// Building objects of 10,000 and 100,000 keys member by member through the subscript, and reading every
    /// member back, is linear.
    @Test func bigObjectsBuildByKeyInLinearTime() throws {
        for size in Self.sizes { guard try bigObjectsBuildByKeyInLinearTime(size.count, bound: size.bound) else { return } }
    }

    /// Whether the objects of `count` keys took less than `bound` (the bigger ones are not tried
    /// after a failure).
    private func bigObjectsBuildByKeyInLinearTime(_ count: Int, bound: Double) throws -> Bool {
        var object = JSONObject()
        var found = 0
        let elapsed = Self.seconds {
            for index in 0..<count { object["k\(index)"] = .integer(index) }
            for index in 0..<count where object["k\(index)"] == .integer(index) { found += 1 }
            for index in 0..<count where index.isMultiple(of: 2) { object["k\(index)"] = .bool(true) }
        }
        #expect(found == count)
        #expect(object.count == count)
        #expect(object["k4"] == .bool(true) && object["k5"] == .integer(5))
        #expect(object.keys.prefix(3) == ["k0", "k1", "k2"])
        #expect(elapsed < bound, "building a \(count)-key object took \(elapsed) s")
        return elapsed < bound
    }

    /// Bodies holding 10,000- and 100,000-key objects parse (duplicate keys checked) in linear time, and
    /// a duplicate at its end is still found.
    @Test func bigObjectsParseInLinearTime() throws {
        for size in Self.sizes { guard try bigObjectsParseInLinearTime(size.count, bound: size.bound) else { return } }
    }

    /// Whether the objects of `count` keys took less than `bound` (the bigger ones are not tried
    /// after a failure).
    private func bigObjectsParseInLinearTime(_ count: Int, bound: Double) throws -> Bool {
        let text = "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        var parsed: JSONValue = .null
        let elapsed = try Self.seconds { parsed = try JSONParser.parse(text) }
        #expect(parsed.objectValue?.count == count)
        #expect(parsed["k7777"] == .integer(7777))
        #expect(elapsed < bound, "parsing a \(count)-key object took \(elapsed) s")
        let duplicated = String(text.dropLast()) + ",\"k3\":0}"
        #expect(throws: JSONParseError.self) { try JSONParser.parse(duplicated) }
        return elapsed < bound
    }

    /// A merge patch removing and setting 100,000 members of a 100,000-key object is linear.
    @Test func bigMergePatchesInLinearTime() throws {
        for size in Self.sizes { guard try bigMergePatchesInLinearTime(size.count, bound: size.bound) else { return } }
    }

    /// Whether the patch of `count` members took less than `bound`.
    private func bigMergePatchesInLinearTime(_ count: Int, bound: Double) throws -> Bool {
        let target = JSONValue.object(JSONObject(uniqueMembers: Self.members(count)))
        let patch = JSONValue.object(JSONObject(uniqueMembers: (0..<count).map {
            JSONObject.Member(key: "k\($0)", value: $0.isMultiple(of: 2) ? .null : .bool(true))
        }))
        var merged: JSONValue = .null
        let elapsed = Self.seconds { merged = target.mergePatched(with: patch) }
        #expect(merged.objectValue?.count == count / 2)
        #expect(merged["k0"] == nil && merged["k1"] == .bool(true) && merged.objectValue?.keys.first == "k1")
        #expect(elapsed < bound, "merging a \(count)-member patch took \(elapsed) s")
        return elapsed < bound
    }

    /// Once indexed, an object still finds keys by canonical equivalence, keeps its order, and
    /// finds every member after removals shift them.
    @Test func indexedObjectsAgreeWithTheScan() throws {
        var object = JSONObject()
        for index in 0..<40 { object["k\(index)"] = .integer(index) }
        object["caf\u{E9}"] = "composed"
        #expect(object["cafe\u{301}"] == "composed")
        object["cafe\u{301}"] = "decomposed"
        #expect(object.count == 41 && object.keys.last == "caf\u{E9}" && object["caf\u{E9}"] == "decomposed")
        for index in stride(from: 0, to: 40, by: 3) { object["k\(index)"] = nil }
        #expect(object.count == 41 - 14)
        for index in 0..<40 {
            #expect(object["k\(index)"] == (index.isMultiple(of: 3) ? nil : .integer(index)))
            #expect(object.contains(key: "k\(index)") == !index.isMultiple(of: 3))
        }
        for index in 0..<40 { object["k\(index)"] = nil }
        object["again"] = 1
        #expect(object.keys == ["caf\u{E9}", "again"] && object["again"] == 1)
        #expect(object == ["again": 1, "cafe\u{301}": "decomposed"])
    }
}
