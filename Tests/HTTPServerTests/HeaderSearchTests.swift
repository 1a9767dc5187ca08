// Request ids and header searches written byte by byte, against the library calls they replace.
@testable import HTTPServer
import Testing

struct RequestIdTests {
    /// Every counter value reads as `String(n, radix: 16)` after the prefix, at every digit count.
    @Test func idsAreThePrefixAndTheCounterInHex() {
        var values: [UInt64] = [0, 1, 9, 10, 15, 16, 255, 256, 0xFFFF, 0x10000, 0xFFFF_FFFF, 1 << 32, .max - 1, .max]
        values += (0..<64).map { UInt64(1) << $0 }
        var generator = SystemRandomNumberGenerator()
        values += (0..<2_000).map { _ in generator.next() >> UInt64.random(in: 0..<64) }
        for prefix in ["", "0", "dd15f9db", "abc"] {
            for n in values {
                let id = RequestIdGenerator.format(prefix: Array(prefix.utf8), n)
                #expect(id == prefix + "-" + String(n, radix: 16), "prefix \(prefix), n \(n)")
            }
        }
    }

    @Test func successiveIdsAreUnique() {
        let generator = RequestIdGenerator()
        let ids = (0..<1_000).map { _ in generator.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy(RequestIdGenerator.isUsable))
    }
}

struct HeaderSearchTests {
    /// `contains(_:valueContaining:)` answers as the lowercased search over `values(_:)` it replaced.
    @Test func valueSearchMatchesTheLowercasedSearch() {
        let samples = ["Accept-Encoding", "accept-encoding", "Origin, Accept-Encoding", "ACCEPT-ENCODINGx", "Origin",
                       "accept-encodin", "", "x accept-encoding", "Accept-Éncoding", "aCcEpT-eNcOdInG, Origin", "*"]
        for name in ["Vary", "vary", "VARY", "Other"] {
            for first in samples {
                for second in [nil, "Origin", "accept-encoding"] {
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: "application/json")
                    headers.add(name: name, value: first)
                    if let second { headers.add(name: "Vary", value: second) }
                    let expected = headers.values("Vary").contains { $0.lowercased().contains("accept-encoding") }
                    #expect(headers.contains("Vary", valueContaining: "accept-encoding") == expected, "\(name): \(first), \(second ?? "-")")
                }
            }
        }
        #expect(!HTTPHeaders().contains("Vary", valueContaining: "accept-encoding"))
    }

    /// `combinedValue` is what `values(_:)` joined with commas gave, nil for none.
    @Test(arguments: [[], ["gzip"], ["gzip", "br"], ["identity", "", "gzip;q=0"]])
    func combinedValueJoinsTheFields(values: [String]) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "x")
        for (index, value) in values.enumerated() {
            headers.add(name: index % 2 == 0 ? "Accept-Encoding" : "accept-encoding", value: value)
            headers.add(name: "X-Other", value: "gzip")
        }
        let joined = headers.values("Accept-Encoding")
        #expect(headers.combinedValue("ACCEPT-ENCODING") == (joined.isEmpty ? nil : joined.joined(separator: ",")))
    }

    /// The subscript, `firstIndex(named:)` and `count(named:)` find fields by name in any case,
    /// first match first, as `values(_:)` lists them.
    @Test func lookUpsByNameAgreeWithValues() {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "x")
        headers.add(name: "content-length", value: "12")
        headers.add(name: "X-Other", value: "y")
        headers.add(name: "Content-Length", value: "13")
        for name in ["Content-Length", "CONTENT-LENGTH", "Host", "X-Missing", "Content-Lengt", ""] {
            let values = headers.values(name)
            #expect(headers[name] == values.first, "\(name)")
            #expect(headers.count(named: name) == values.count, "\(name)")
            #expect(headers.firstIndex(named: name).map { headers.fields[$0].value } == values.first, "\(name)")
        }
        #expect(HTTPServer.framingProblem(headers)?.contains("disagree") == true)
        headers["content-length"] = "13"
        #expect(headers.count(named: "Content-Length") == 1)
        #expect(HTTPServer.framingProblem(headers) == nil)
        headers.add(name: "transfer-encoding", value: "chunked")
        #expect(HTTPServer.framingProblem(headers) != nil)
    }
}
