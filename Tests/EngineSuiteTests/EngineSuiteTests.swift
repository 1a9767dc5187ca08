// The checked-in engine conformance suite (engine-suite/cases) run through the Swift engine in-process, and the runner protocol's edges.
import EngineSuite
import FlowEngine
import Foundation
import JSON
import Testing

struct EngineSuiteTests {
    static let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../../engine-suite").standardizedFileURL

    /// The checked-in case files, by name.
    static let caseNames: [String] = {
        let folder = suite.appending(path: "cases").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
    }()

    static func lines(of name: String) throws -> [ArraySlice<UInt8>] {
        let data = try Data(contentsOf: suite.appending(path: "cases/\(name)"))
        var lines = [UInt8](data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        #expect(lines.last?.isEmpty == true, "\(name) ends with a newline")
        lines.removeLast()
        return lines
    }

    /// The suite is there, covers many cases, and every case file is a header then input and answer pairs.
    @Test func suiteIsCheckedIn() throws {
        #expect(Self.caseNames.count >= 8, "cases: \(Self.caseNames)")
        for name in Self.caseNames {
            let lines = try Self.lines(of: name)
            let header = try JSONParser.parse(lines[0])
            #expect(header["specVersion"]?.integerValue == EngineSuite.specVersion, "\(name)")
            #expect(header["case"]?.stringValue.map { $0 + ".jsonl" } == name)
            #expect(lines.count >= 3 && lines.count % 2 == 1, "\(name): a header, then pairs of lines")
        }
    }

    /// Every feature the suite lists is exercised by some checked-in case (as observed when it was
    /// generated), and features.json, which other harnesses read, is that list.
    @Test func everyFeatureIsCovered() throws {
        var covered = Set<String>()
        for name in Self.caseNames {
            let header = try JSONParser.parse(try Self.lines(of: name)[0])
            for feature in header["features"]?.arrayValue ?? [] { if let text = feature.stringValue { covered.insert(text) } }
        }
        let missing = EngineSuite.features.map(\.name).filter { !covered.contains($0) }
        #expect(missing.isEmpty, "no case exercises \(missing)")
        let listed = try JSONParser.parse([UInt8](try Data(contentsOf: Self.suite.appending(path: "features.json"))))
        #expect((listed.arrayValue ?? []).compactMap { $0["feature"]?.stringValue } == EngineSuite.features.map(\.name))
    }

    /// Every checked-in case, run through the runner in-process, answers each line byte for byte.
    @Test(arguments: caseNames)
    func caseAnswersByteForByte(name: String) throws {
        let lines = try Self.lines(of: name)
        var runner = EngineRunner()
        var index = 1
        while index + 1 < lines.count {
            let answer = runner.answer(lines[index])
            #expect(answer.elementsEqual(lines[index + 1]),
                    "\(name) line \(index + 2): expected \(String(decoding: lines[index + 1], as: UTF8.self).prefix(300)), got \(String(decoding: answer, as: UTF8.self).prefix(300))")
            index += 2
        }
    }

    /// A line the protocol does not know, or an action before any bundle, answers an error line
    /// and leaves the case as it was.
    @Test func protocolErrorsAnswerOneLine() throws {
        var runner = EngineRunner()
        #expect(String(decoding: runner.answer(Array(#"{"action":{"type":"back"}}"#.utf8)), as: UTF8.self).hasPrefix(#"{"error":"#))
        #expect(String(decoding: runner.answer(Array("not json".utf8)), as: UTF8.self).hasPrefix(#"{"error":"#))
        #expect(String(decoding: runner.answer(Array(#"{"bundle":{"format":9}}"#.utf8)), as: UTF8.self)
                == #"{"error":{"message":"expected format 1; found 9","pointer":"/bundle/format"}}"#)
        let name = try #require(Self.caseNames.first)
        let lines = try Self.lines(of: name)
        #expect(runner.answer(lines[1]).elementsEqual(lines[2]))
        #expect(String(decoding: runner.answer(Array(#"{"what":1}"#.utf8)), as: UTF8.self).hasPrefix(#"{"error":"#))
        #expect(runner.state?.version == 0, "an error line changes nothing")
    }

    /// Each refusal says the server's status and code, and points into the action.
    @Test func refusalsPointIntoTheAction() {
        #expect(String(decoding: EngineRefusal(.staleSource(from: "e1", top: "e2")).json(), as: UTF8.self)
                == #"{"refused":{"code":"stale-source","pointer":"/from","status":409}}"#)
        #expect(String(decoding: EngineRefusal(.unhandled(action: "x", chain: ["home", "app"])).json(), as: UTF8.self)
                == #"{"refused":{"chain":["home","app"],"code":"unhandled","pointer":"/type","status":422}}"#)
        #expect(String(decoding: EngineRefusal(.invalidParams(path: "/params/index", message: "m")).json(), as: UTF8.self)
                == #"{"refused":{"code":"invalid-params","pointer":"/params/index","status":400}}"#)
    }
}
