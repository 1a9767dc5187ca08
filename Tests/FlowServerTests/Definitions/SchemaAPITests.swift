// SchemaAPITests: the JSON Schemas served as kept in the repo, public and revalidated; warnings beside a stored flow version.
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct SchemaAPITests {
    static let admin = FlowAdminTests.admin
    static let folder = Repository.path("schemas")

    /// `GET /v1/schemas` lists every file of the repo's schemas/ folder, and each is served byte
    /// for byte, with no token, as application/schema+json.
    @Test func servesTheRepoSchemas() throws {
        let test = try TestApp()
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".schema.json") }.sorted()
        #expect(files == ["experiment.schema.json", "flag.schema.json", "flow-tests.schema.json", "flow.schema.json", "release.schema.json", "rollout.schema.json"])
        let list = try test.direct.send("GET", "/v1/schemas")
        #expect(list.status == 200)
        #expect(list.json["schemas"].arrayValue?.compactMap { $0["name"].stringValue } == files)
        #expect(list.json["schemas"][0]["url"] == "/v1/schemas/experiment.schema.json")
        for file in files {
            let response = try test.direct.send("GET", "/v1/schemas/\(file)")
            #expect(response.status == 200, "\(file)")
            #expect(response.headers["Content-Type"] == "application/schema+json")
            #expect(response.text == (try String(contentsOf: Self.folder.appending(path: file), encoding: .utf8)), "\(file)")
            #expect(response.json["$id"].stringValue == file)
        }
        let missing = try test.direct.send("GET", "/v1/schemas/nothing.json")
        #expect(missing.status == 404)
        #expect(missing.headers["Content-Type"] == "application/problem+json")
    }

    /// Through a real socket: `Cache-Control: no-cache`, an `ETag`, and a 304 for it.
    @Test func schemasAreRevalidated() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            for path in ["/v1/schemas", "/v1/schemas/flow.schema.json"] {
                let first = try sender.send("GET", path)
                #expect(first.status == 200)
                #expect(first.headers["Cache-Control"] == "no-cache")
                let tag = try #require(first.headers["ETag"])
                let again = try sender.send("GET", path, headers: [("If-None-Match", tag)])
                #expect(again.status == 304, "\(path)")
                #expect(again.headers["ETag"] == tag)
            }
        }
    }

    /// A flow whose condition reads a flag that is not defined is stored (201) with a warning at
    /// the condition's pointer; activating it shows the warning again; a `from` no screen matches
    /// is refused (422) at its pointer.
    @Test func putShowsWarningsAndRefusesErrors() throws {
        let test = try TestApp()
        let flagTypo = #"""
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.showSecond": [{"from": "onboarding.first", "when": {"flag": "eu-face-scn", "is": true}, "do": [{"push": "onboarding.second"}]}],
                    "onboarding.completed": [{"from": "onboarding.second", "do": [{"bubble": {}}]}]}}
            """#
        let put = try test.direct.send("PUT", "/v1/flows/onboarding", body: flagTypo, headers: Self.admin)
        #expect(put.status == 201, "\(put.text)")
        #expect(put.json["warnings"].arrayValue?.count == 1)
        #expect(put.json["warnings"][0]["pointer"] == "/on/onboarding.showSecond/0/when/flag")
        #expect(put.json["warnings"][0]["detail"].stringValue?.contains("eu-face-scn") == true)
        // A running experiment pinning the version: its warning follows the definition's own.
        let experiment = try test.direct.send("PUT", "/v1/experiments/pinned", body: #"{"variants": [{"key": "a", "flows": {"onboarding": 2}}]}"#, headers: Self.admin)
        #expect(experiment.status == 200 || experiment.status == 201, "\(experiment.text)")
        let activated = try test.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", headers: Self.admin)
        #expect(activated.status == 200)
        #expect(activated.json["warnings"].arrayValue?.count == 2, "\(activated.text)")
        #expect(activated.json["warnings"][0]["pointer"] == "/on/onboarding.showSecond/0/when/flag")
        #expect(activated.json["warnings"][1]["experiment"] == "pinned")

        let screenTypo = flagTypo.replacingOccurrences(of: #""from": "onboarding.second""#, with: #""from": "checkout.reveiw""#)
        let refused = try test.direct.send("PUT", "/v1/flows/onboarding", body: screenTypo, headers: Self.admin)
        #expect(refused.status == 422)
        #expect(refused.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } == ["/on/onboarding.completed/0/from"])
    }
}
