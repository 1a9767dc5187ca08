// Where schemathesis (every check) found the server and openapi.yaml disagreeing, the server side of
// the agreement: what the spec allows is accepted, what it forbids is refused.
import FlowEngine
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct SpecAgreementTests {
    static let admin = FlowAdminTests.admin

    /// A method a path does not serve is 405 with `Allow` naming the methods of that path's own
    /// routes, as openapi.yaml lists them: `/v1/flags/evaluate` is POST only, although
    /// `PUT /v1/flags/{key}` and `GET /v1/flags/{key}` also match it (they answer for the name).
    @Test func allowNamesThePathsOwnMethods() throws {
        let test = try TestApp()
        let routes = test.app.routes
        // A method no route serves (PATCH was, until PATCH /v1/experiments/{key}).
        #expect(!routes.contains { $0.method == "TRACE" })
        var checked = 0
        try test.withLiveServer { sender in
            for pattern in Set(routes.map(\.pattern)) {
                let path = pattern.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.hasPrefix("{") ? "x1" : String($0) }.joined(separator: "/")
                let expected = routes.filter { $0.pattern == pattern }.flatMap { $0.method == "GET" ? ["GET", "HEAD"] : [$0.method] }
                let response = try sender.send("TRACE", path, headers: Self.admin)
                #expect(response.status == 405, "TRACE \(path)")
                #expect(response.headers["Allow"] == expected.joined(separator: ", "), "TRACE \(path)")
                checked += 1
            }
        }
        #expect(checked >= 30)
        let evaluate = try test.direct.send("OPTIONS", "/v1/flags/evaluate", headers: Self.admin)
        #expect(evaluate.headers["Allow"]?.contains("PUT") == false)
        #expect(evaluate.headers["Allow"]?.contains("POST") == true)
    }

    /// `attributes: null` is no attributes, as the spec's `nullable` says (it was 400, "must be an
    /// object; found null": `nil` in the closure read as JSON null).
    @Test func evaluateTakesNullAttributesAsNone() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let response = try sender.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"u","attributes":null}"#, headers: Self.admin)
            #expect(response.status == 200, "\(response.text)")
            let none = try sender.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"u"}"#, headers: Self.admin)
            #expect(response.text == none.text)
            #expect(try sender.send("POST", "/v1/flags/evaluate", body: #"{"attributes":3}"#, headers: Self.admin).status == 400)
        }
    }

    /// Length limits count characters (Unicode scalars), as JSON Schema's `maxLength` does, not
    /// UTF-8 bytes: 100 characters of `é` (200 bytes) make a client key name, 101 do not.
    @Test func clientKeyNameLimitCountsCharacters() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let name = String(repeating: "é", count: 100)
            #expect(try sender.send("POST", "/v1/client-keys", body: #"{"name":"\#(name)"}"#, headers: Self.admin).status == 201)
            let long = try sender.send("POST", "/v1/client-keys", body: #"{"name":"\#(name)é"}"#, headers: Self.admin)
            #expect(long.status == 400)
            #expect(long.json["errors"][0]["pointer"].stringValue == "/name")
            #expect(try sender.send("POST", "/v1/client-keys", body: #"{"name":"a\u0001"}"#, headers: Self.admin).status == 400)
        }
    }

    /// A user id is 1 to 128 characters (a 128-`é` id is 256 bytes), at session creation and at
    /// link resolution alike; 129 characters are refused at both. The same for `userHash`.
    @Test func userIdLimitCountsCharacters() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let userId = String(repeating: "é", count: 128)
            let hash = String(repeating: "é", count: 128)
            let created = try sender.send("POST", "/v1/sessions", body: #"{"userId":"\#(userId)","userHash":"\#(hash)"}"#)
            #expect(created.status == 201, "\(created.text)")
            #expect(try sender.send("POST", "/v1/sessions", body: #"{"userId":"\#(userId)é"}"#).status == 400)
            #expect(try sender.send("POST", "/v1/sessions", body: #"{"userId":"u","userHash":"\#(hash)é"}"#).status == 400)
            let encoded = userId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let resolved = try sender.send("GET", "/v1/links/resolve?uri=/home&userId=\(encoded)", headers: Self.admin)
            #expect(resolved.status == 200, "\(resolved.text)")
            #expect(try sender.send("GET", "/v1/links/resolve?uri=/home&userId=\(encoded)%C3%A9", headers: Self.admin).status == 400)
        }
    }

    /// A batch may repeat a key, as its schema allows (JSON Schema cannot ask an array of objects
    /// for keys of their own; it was 400): an item repeating an earlier item's key is judged as a
    /// POST repeating that key after it, so the same action is skipped with the version the first
    /// produced, and another action is refused as a reused key, stopping the batch.
    @Test func batchRepeatingAKeyIsJudgedAsARepeatedPost() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "repeats")
        let same = try client.batch(session, [
            Tap(key: "a", version: 0, action: #"{"type":"onboarding.showSecond"}"#),
            Tap(key: "a", version: 1, action: #"{"type":"onboarding.showSecond"}"#),
            Tap(key: "b", version: 1, action: #"{"type":"back"}"#),
        ])
        #expect(same.status == 200, "\(same.text)")
        #expect(same.json.batchStatuses == ["applied", "skipped", "applied"])
        #expect(same.json.batchVersions == [1, 1, 2])
        #expect(same.json["applied"] == 2 && same.json["skipped"] == 1)
        #expect(try client.log(session).count == 2)
        let other = try client.batch(session, [
            Tap(key: "c", version: 2, action: #"{"type":"onboarding.showSecond"}"#),
            Tap(key: "c", version: 3, action: #"{"type":"back"}"#),
        ])
        #expect(other.status == 200, "\(other.text)")
        #expect(other.json.batchStatuses == ["applied", "refused"])
        #expect(other.json["refused"]["status"] == 422)
        #expect(other.json["refused"]["code"] == "idempotency-key-reused", "\(other.text)")
        #expect(try client.state(session).json["version"] == 3)
    }

    /// A flow test scenario's name is up to 200 characters, not bytes; its user id up to 128.
    @Test func scenarioLimitsCountCharacters() throws {
        let test = try TestApp()
        let name = String(repeating: "é", count: 200)
        let body = #"{"scenarios":[{"name":"\#(name)","steps":[]}]}"#
        let response = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: body, headers: Self.admin)
        #expect(response.status == 200, "\(response.text)")
        let long = #"{"scenarios":[{"name":"\#(name)é","steps":[]}]}"#
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: long, headers: Self.admin).status == 422)
        // The same for a scenario's user id: 128 characters.
        let userId = String(repeating: "é", count: 128)
        let user = #"{"scenarios":[{"name":"u","context":{"userId":"\#(userId)"},"steps":[]}]}"#
        let answered = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: user, headers: Self.admin)
        #expect(answered.status == 200, "\(answered.text)")
        let longUser = #"{"scenarios":[{"name":"u","context":{"userId":"\#(userId)é"},"steps":[]}]}"#
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: longUser, headers: Self.admin).status == 422)
    }

    /// The state document as the server writes it (``SessionState/document()``, the body of every
    /// session answer) uses only members openapi.yaml declares, and has every member it requires:
    /// with a guard's pending action, a result received and a hand-off on top, `pendingActions`,
    /// a transition's `result` and a screen's `handoff` are each described.
    @Test func stateDocumentMembersAreDeclared() throws {
        let spec = try OpenAPISchemas(text: String(contentsOf: Self.repo.appending(path: "openapi.yaml"), encoding: .utf8))
        let app = #"""
            {"name": "app", "kind": "stacked", "initial": ["shop.home"], "on": {
              "shop.checkout": [{"from": "shop.home", "guard": {"when": {"user": "loggedIn", "is": true}, "else": {"present": "login"}},
                                 "do": [{"push": "shop.review"}]}],
              "shop.chooseAddress": [{"from": "shop.review", "do": [{"present": "address"}]}],
              "shop.buy": [{"from": "shop.review", "do": [{"push": {"handoff": "purchase", "params": {"productId": "p1"}}}]}]}}
            """#
        let login = #"""
            {"name": "login", "kind": "stacked", "initial": ["login.form"],
             "on": {"login.submit": [{"from": "login.form", "do": [{"setUser": {"loggedIn": true}}, {"dismiss": {}}]}]}}
            """#
        let address = #"""
            {"name": "address", "kind": "stacked", "initial": ["address.list"],
             "on": {"address.chosen": [{"from": "address.list", "params": {"address": "object"},
                                        "do": [{"dismiss": {}}, {"result": {"into": "address", "value": {"$param": "address"}}}]}]}}
            """#
        var definitions: [FlowDefinition] = []
        for document in [app, login, address] { definitions.append(try FlowDefinition.parse(Array(document.utf8))) }
        let catalog = FlowCatalog(definitions)
        #expect(catalog.validate().isEmpty)
        let context = FlowContext(userId: "u")
        var state = SessionState(
            sessionId: "s_1", userId: "u", version: 0, tree: try FlowEngine.start(catalog: catalog, context: context), context: context,
            catalog: catalog, flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
        var documents = [try JSONParser.parse(state.document())]
        for (type, params) in [("shop.checkout", JSONObject()), ("login.submit", [:]), ("shop.chooseAddress", [:]),
                               ("address.chosen", ["address": ["city": "Lyon"]]), ("shop.buy", [:])] {
            state = try state.applying(FlowAction(type: type, from: state.tree.top?.entryId, params: params)).next
            documents.append(try JSONParser.parse(state.document()))
        }
        // The walk reached each new part, so each was checked below.
        #expect(documents[1]["pendingActions"].arrayValue?.count == 1)
        #expect(documents[2]["top"]["feature"] == "shop.review" && documents[2]["pendingActions"] == [])
        #expect(documents[4]["transition"]["result"]["into"] == "address")
        #expect(documents[5]["top"]["handoff"] == "purchase")

        for document in documents {
            spec.check(document, against: "State", exactly: true)
            for screen in (document["screens"].arrayValue ?? []) + [document["top"]] { spec.check(screen, against: "Screen") }
            spec.check(document["transition"], against: "Transition")
            for end in ["from", "to"] { spec.check(document["transition"][end], against: "Screen") }
            spec.check(document["transition"]["result"], against: "ResultReceipt", exactly: true)
            for pending in document["pendingActions"].arrayValue ?? [] {
                spec.check(pending, against: "PendingAction", exactly: true)
                spec.check(pending["action"], against: "PendingAction", at: ["action"], exactly: true)
                spec.check(pending["guard"], against: "PendingAction", at: ["guard"], exactly: true)
            }
            spec.checkNodes(document["root"])
        }
    }

    /// Every operation on a resource named in its path is the target of a link in openapi.yaml,
    /// so the stateful phase of scripts/conformance.sh calls it with an id the server made (a
    /// generated id only ever meets the 404), and every link names an operation that exists.
    /// The playground's files and the schemas are named by the binary, not made by a call.
    @Test func everyOperationOnAResourceIsTheTargetOfALink() throws {
        let text = try String(contentsOf: Self.repo.appending(path: "openapi.yaml"), encoding: .utf8)
        var pathOf: [String: String] = [:]
        var targets: Set<String> = []
        var path = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            if line.hasPrefix("      operationId: ") { pathOf[String(line.dropFirst(19))] = path }
            if line.hasPrefix("              operationId: ") { targets.insert(String(line.dropFirst(27))) }
        }
        #expect(pathOf.count >= 60)
        #expect(targets.subtracting(pathOf.keys).isEmpty, "links to no operation: \(targets.subtracting(pathOf.keys).sorted())")
        let fixedNames: Set = ["getPlaygroundFile", "getSdkFile", "getSdkEngineFile", "getSdkClientFile", "getSchema"]
        let unlinked = pathOf.filter { $0.value.contains("{") && !targets.contains($0.key) && !fixedNames.contains($0.key) }.keys.sorted()
        #expect(unlinked.isEmpty, "no link leads to \(unlinked)")
    }

    /// The names `/playground/{file}`, `/sdk/…/{file}` and `/v1/schemas/{name}` serve are the files
    /// of their folders, embedded at build time, and openapi.yaml lists exactly those as the parameter's
    /// `enum` (so a schema-valid request names a file that is served).
    @Test func servedFileNamesAreTheSpecsEnums() throws {
        let text = try String(contentsOf: Self.repo.appending(path: "openapi.yaml"), encoding: .utf8)
        let enums = text.split(separator: "\n").filter { $0.contains("enum: [") && $0.contains(".js") || $0.contains("enum: [") && $0.contains(".schema.json") }
            .map { Set($0.split(separator: "[")[1].dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
        for folder in ["playground", "schemas", "clients/js/src", "clients/js/src/engine", "clients/js/src/client"] {
            let files = Set(try FileManager.default.contentsOfDirectory(atPath: Self.repo.appending(path: folder).path))
                .filter { !folder.hasPrefix("clients/") || $0.hasSuffix(".js") }
            #expect(enums.contains(files), "\(folder): \(files.sorted()) is no enum of openapi.yaml")
        }
        let test = try TestApp()
        for name in ["app.js", "index.html"] { #expect(try test.direct.send("GET", "/playground/\(name)").status == 200) }
        #expect(try test.direct.send("GET", "/v1/schemas/flow.schema.json").status == 200)
    }

    static let repo = Repository.root
}

/// The members (`properties`) and required members of openapi.yaml's component schemas, read
/// from its indentation: enough to check a document's keys against them.
struct OpenAPISchemas {
    let lines: [Substring]

    init(text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false) }

    private static func indent(_ line: Substring) -> Int { line.prefix { $0 == " " }.count }

    /// The lines of the member `name` at `indent` inside `range`, up to the next line as shallow.
    private func block(_ name: String, indent: Int, in range: Range<Int>) -> Range<Int>? {
        let header = String(repeating: " ", count: indent) + name + ":"
        guard let start = range.first(where: { lines[$0] == header }) else { return nil }
        let end = (start + 1..<range.upperBound).first { !lines[$0].trimmingCharacters(in: .whitespaces).isEmpty && Self.indent(lines[$0]) <= indent }
        return start + 1..<(end ?? range.upperBound)
    }

    /// (properties, required) of `schema`, or of its property at `path`.
    func members(of schema: String, at path: [String] = []) -> (properties: Set<String>, required: Set<String>) {
        guard let components = block("schemas", indent: 2, in: 0..<lines.count), var range = block(schema, indent: 4, in: components)
        else { return ([], []) }
        var indent = 4
        for name in path {
            guard let properties = block("properties", indent: indent + 2, in: range),
                let inner = block(name, indent: indent + 4, in: properties)
            else { return ([], []) }
            range = inner
            indent += 4
        }
        var properties: Set<String> = []
        if let block = block("properties", indent: indent + 2, in: range) {
            for index in block where Self.indent(lines[index]) == indent + 4 {
                let line = lines[index].trimmingCharacters(in: .whitespaces)
                if line.hasSuffix(":") { properties.insert(String(line.dropLast()).trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
            }
        }
        var required: Set<String> = []
        let prefix = String(repeating: " ", count: indent + 2) + "required: ["
        if let line = range.lazy.map({ self.lines[$0] }).first(where: { $0.hasPrefix(prefix) }) {
            required = Set(line.dropFirst(prefix.count).dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        return (properties, required)
    }

    /// Every key of `value` is a declared member, every required member is there, and with
    /// `exactly` every declared member is there too. Null (an absent part) passes.
    func check(
        _ value: JSONValue, against schema: String, at path: [String] = [], exactly: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let object = value.objectValue else { return }
        let declared = members(of: schema, at: path)
        #expect(!declared.properties.isEmpty, "openapi.yaml has no \(schema) \(path)", sourceLocation: sourceLocation)
        let keys = Set(object.members.map(\.key))
        #expect(keys.subtracting(declared.properties).isEmpty, "\(schema) \(path) does not declare \(keys.subtracting(declared.properties).sorted())",
                sourceLocation: sourceLocation)
        #expect(declared.required.subtracting(keys).isEmpty, "\(schema) \(path) requires \(declared.required.subtracting(keys).sorted())",
                sourceLocation: sourceLocation)
        if exactly {
            #expect(declared.required == keys, "\(schema) \(path) does not require \(keys.subtracting(declared.required).sorted())",
                    sourceLocation: sourceLocation)
        }
    }

    /// A `FlowNode` and its entries, screens (`ScreenEntry`) and child or presented nodes.
    func checkNodes(_ node: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
        guard node.objectValue != nil else { return }
        check(node, against: "FlowNode", sourceLocation: sourceLocation)
        for entry in node["entries"].arrayValue ?? [] {
            if entry["feature"] != .null {
                check(entry, against: "ScreenEntry", sourceLocation: sourceLocation)
            } else {
                checkNodes(entry, sourceLocation: sourceLocation)
            }
        }
        checkNodes(node["presented"], sourceLocation: sourceLocation)
    }
}
