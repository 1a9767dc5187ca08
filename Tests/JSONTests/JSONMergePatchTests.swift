// JSONMergePatchTests: RFC 7396's own examples (Appendix A), and member order kept.

import JSON
import Testing

struct JSONMergePatchTests {
    /// Every example of RFC 7396 Appendix A gives the RFC's result.
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func rfc7396Examples(_ example: (target: String, patch: String, result: String)) throws {
        let merged = try JSONParser.parse(example.target).mergePatched(with: JSONParser.parse(example.patch))
        #expect(merged.jsonText == example.result)
    }

    /// Patched members stay where they were written; new ones are appended.
    @Test func keepsMemberOrder() throws {
        let stored = try JSONParser.parse(#"{"variants":[{"key":"a"}],"coverage":0.5,"seed":"s"}"#)
        let merged = stored.mergePatched(with: try JSONParser.parse(#"{"status":"stopped","coverage":1}"#))
        #expect(merged.jsonText == #"{"variants":[{"key":"a"}],"coverage":1,"seed":"s","status":"stopped"}"#)
    }
}
