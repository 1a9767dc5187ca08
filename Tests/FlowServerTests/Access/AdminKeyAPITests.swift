// Named admin keys and roles over the API: each key opens exactly the routes its role allows (as
// the README's table and openapi.yaml say), the audit log names it, revocation is immediate on
// every node, and the bootstrap admin token is kept across restarts.
import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Testing

struct AdminKeyAPITests {
    static let admin = FlowAdminTests.admin
    static let roles = ["read", "edit", "publish", "admin"]
    static let repo = Repository.root

    static func bearer(_ key: String) -> [(String, String)] { [("Authorization", "Bearer \(key)")] }

    /// Makes a key with the bootstrap token; returns its document (with `key`).
    static func make(_ sender: some RequestSender, _ name: String, _ role: String, as headers: [(String, String)] = admin) throws -> JSONValue {
        let response = try sender.send("POST", "/v1/admin-keys", body: #"{"name":"\#(name)","role":"\#(role)"}"#, headers: headers)
        #expect(response.status == 201, "\(response.text)")
        return response.json
    }

    /// `METHOD /path` → role, from the table of docs/api.md between the admin-roles markers.
    static func readmeTable() throws -> [String: String] {
        let text = try String(contentsOf: repo.appending(path: "docs/api.md"), encoding: .utf8)
        let start = try #require(text.range(of: "<!-- admin-roles:begin -->"))
        let end = try #require(text.range(of: "<!-- admin-roles:end -->"))
        var table: [String: String] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2 else { continue }
            let role = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            for match in cells[0].matches(of: /`(GET|PUT|POST|DELETE|PATCH) (\/[^`]*)`/) {
                #expect(table["\(match.1) \(match.2)"] == nil, "\(match.1) \(match.2) twice in docs/api.md's table")
                table["\(match.1) \(match.2)"] = role
            }
        }
        return table
    }

    /// `METHOD /path` → role, from openapi.yaml's `x-flowstack-role` members.
    static func openAPIRoles() throws -> [String: String] {
        let text = try String(contentsOf: repo.appending(path: "openapi.yaml"), encoding: .utf8)
        var roles: [String: String] = [:]
        var path: String?
        var method: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.wholeMatch(of: /\ \ (\/\S*):\s*/) { path = String(match.1); method = nil }
            else if let match = line.wholeMatch(of: /\ {4}(get|put|post|delete|patch):\s*/) { method = String(match.1).uppercased() }
            else if !line.hasPrefix(" ") && !line.isEmpty { path = nil; method = nil }
            if let match = line.wholeMatch(of: /\ {6}x-flowstack-role: ([a-z]+)\s*/), let path, let method {
                roles["\(method) \(path)"] = String(match.1)
            }
        }
        return roles
    }

    /// The roles the server gives its admin routes are those of the README's table and of
    /// openapi.yaml, route for route: a new admin route cannot go undocumented.
    @Test func everyAdminRouteHasTheRoleOfTheTable() throws {
        let test = try TestApp()
        var served: [String: String] = [:]
        for route in test.app.adminRoutes { served["\(route.method) \(route.pattern)"] = route.role }
        #expect(served.count == test.app.adminRoutes.count)
        #expect(served.count >= 25)
        #expect(try Self.readmeTable() == served)
        #expect(try Self.openAPIRoles() == served)
        #expect(served["POST /v1/flows/{name}/versions/{version}/activate"] == "publish")
        #expect(served["PUT /v1/flags/{key}"] == "publish")
        #expect(served["POST /v1/admin-keys"] == "admin")
        #expect(served["GET /v1/audit"] == "read")
    }

    /// Through a real socket, every admin route with a key of each role: a role at or above the
    /// route's is let through (whatever the handler then answers), a lower one gets 403
    /// `insufficient-role` naming both roles; no key at all gets 401.
    @Test func eachRoleOpensExactlyItsRoutes() throws {
        let test = try TestApp()
        var keys: [String: String] = [:]
        for role in Self.roles { keys[role] = try Self.make(test.direct, "walker-\(role)", role)["key"].stringValue }
        let routes = test.app.adminRoutes
        var refused = 0, passed = 0
        try test.withLiveServer { sender in
            for route in routes {
                let path = route.pattern.replacing(/\{[^}]+\}/, with: "x1")
                let needed = try #require(Self.roles.firstIndex(of: route.role))
                for (index, role) in Self.roles.enumerated() {
                    let response = try sender.send(route.method, path, headers: Self.bearer(try #require(keys[role])))
                    if index >= needed {
                        #expect(response.status != 401 && response.status != 403, "\(role) key, \(route.method) \(path): \(response.status)")
                        passed += 1
                    } else {
                        #expect(response.status == 403, "\(role) key, \(route.method) \(path): \(response.status)")
                        #expect(response.headers["Content-Type"] == "application/problem+json")
                        #expect(response.json["code"] == "insufficient-role")
                        #expect(response.json["requiredRole"].stringValue == route.role)
                        #expect(response.json["role"].stringValue == role)
                        refused += 1
                    }
                }
                #expect(try sender.send(route.method, path).status == 401, "no credential, \(route.method) \(path)")
            }
        }
        #expect(refused + passed == routes.count * Self.roles.count)
        #expect(refused >= 20)
    }

    /// `PUT /v1/flows/{name}` stores with `edit`; with `?activate=true` it makes the version live,
    /// which needs `publish` (refused before anything is stored).
    @Test func activatingPutNeedsPublish() throws {
        let test = try TestApp()
        let edit = try #require(try Self.make(test.direct, "uploader", "edit")["key"].stringValue)
        let publish = try #require(try Self.make(test.direct, "releaser", "publish")["key"].stringValue)
        let stored = try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: Self.bearer(edit))
        #expect(stored.status == 201)
        #expect(stored.json["live"] == false)
        let refused = try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding, headers: Self.bearer(edit))
        #expect(refused.status == 403)
        #expect(refused.json["requiredRole"] == "publish")
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)
        let live = try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding, headers: Self.bearer(publish))
        #expect(live.status == 201)
        #expect(live.json["version"] == 3)
        #expect(live.json["live"] == true)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", headers: Self.bearer(edit)).status == 403)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", headers: Self.bearer(publish)).status == 200)
    }

    /// The key is in the creation's answer only; the list shows every key (live and revoked)
    /// without it, with who made it; an admin key may make keys too, and is named as their maker.
    @Test func keysAreShownOnceAndListed() throws {
        let test = try TestApp()
        let response = try test.direct.send("POST", "/v1/admin-keys", body: #"{"name":"ops","role":"admin"}"#, headers: Self.admin)
        #expect(response.status == 201)
        #expect(response.headers["Cache-Control"] == "no-store")
        let ops = response.json
        let id = try #require(ops["id"].stringValue)
        #expect(response.headers["Location"] == "/v1/admin-keys/\(id)")
        #expect(id.hasPrefix("ak_"))
        let key = try #require(ops["key"].stringValue)
        #expect(key.hasPrefix("fsa_") && key.count > 40)
        #expect(ops["role"] == "admin" && ops["createdBy"] == "admin" && ops["revokedAt"] == .null)
        // Keys are listed oldest first by their stored time (milliseconds): two made in the same
        // millisecond have no order between them (this failed once in CI), so the second waits one.
        Thread.sleep(forTimeInterval: 0.002)
        let ci = try Self.make(test.direct, "ci", "edit", as: Self.bearer(key))
        #expect(ci["createdBy"] == "key:ops")
        let list = try test.direct.send("GET", "/v1/admin-keys", headers: Self.bearer(key))
        #expect(list.status == 200)
        #expect((list.json["adminKeys"].arrayValue ?? []).compactMap { $0["name"].stringValue } == ["ops", "ci"])
        #expect(!list.text.contains(key) && !list.text.contains("\"key\""))
        // Nothing the database keeps is the key: only its SHA-256.
        #expect(try test.store.adminKeys().allSatisfy { $0.keyHash.count == 32 })
    }

    /// The audit log names the key that made each change (`key:<name>`), and the bootstrap token
    /// `admin`; making and revoking keys are entries too.
    @Test func auditNamesTheKey() throws {
        let test = try TestApp()
        let ci = try Self.make(test.direct, "ci-deploy", "publish")
        let key = try #require(ci["key"].stringValue)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding,
                                     headers: Self.bearer(key)).status == 201)
        // Through libmicrohttpd's own threads too (the credential is the request's, not the thread's).
        let status = try test.withLiveServer { sender in
            try sender.send("PUT", "/v1/flags/eu-face-scan", body: #"{"variants":{"on":true,"off":false},"defaultVariant":"off"}"#,
                            headers: Self.bearer(key)).status
        }
        #expect(status == 200)
        let id = try #require(ci["id"].stringValue)
        #expect(try test.direct.send("DELETE", "/v1/admin-keys/\(id)", headers: Self.admin).status == 204)
        let entries = (try test.direct.send("GET", "/v1/audit", headers: Self.admin).json["entries"].arrayValue ?? []).map {
            "\($0["action"].stringValue ?? "") \($0["subject"].stringValue ?? "") \($0["credential"].stringValue ?? "")"
        }
        #expect(entries == [
            "adminKey.create \(id) admin",
            "flow.put onboarding key:ci-deploy",
            "flow.activate onboarding key:ci-deploy",
            "flag.put eu-face-scan key:ci-deploy",
            "adminKey.revoke \(id) admin",
        ])
        #expect(!(try test.direct.send("GET", "/v1/audit", headers: Self.admin).text.contains(key)))
    }

    /// A revoked key gets 401 at once, on this node and on another node of the same database;
    /// revoking again is 204 and logs nothing more; an unknown id is 404.
    @Test func revocationIsImmediateOnEveryNode() throws {
        let first = try TestApp()
        let second = try TestApp(beside: first)
        let made = try Self.make(first.direct, "temp", "read")
        let key = try #require(made["key"].stringValue), id = try #require(made["id"].stringValue)
        try second.withLiveServer { sender in
            #expect(try sender.send("GET", "/v1/flows", headers: Self.bearer(key)).status == 200)
            #expect(try first.direct.send("DELETE", "/v1/admin-keys/\(id)", headers: Self.admin).status == 204)
            let refused = try sender.send("GET", "/v1/flows", headers: Self.bearer(key))
            #expect(refused.status == 401)
            #expect(refused.headers["WWW-Authenticate"] == "Bearer")
        }
        #expect(try first.direct.send("GET", "/v1/flows", headers: Self.bearer(key)).status == 401)
        #expect(try first.direct.send("DELETE", "/v1/admin-keys/\(id)", headers: Self.admin).status == 204)
        #expect(try first.direct.send("DELETE", "/v1/admin-keys/ak_nothing", headers: Self.admin).status == 404)
        #expect(try first.direct.send("DELETE", "/v1/admin-keys/a%00b", headers: Self.admin).status == 404)
        let list = try first.direct.send("GET", "/v1/admin-keys", headers: Self.admin).json
        #expect(list["adminKeys"].arrayValue?.first?["revokedAt"].stringValue != nil)
        #expect(try first.store.auditLog(after: 0, limit: 10).filter { $0.action == "adminKey.revoke" }.count == 1)
    }

    /// Names are unique among live keys: a second live one is 409 `name-in-use`; once the first
    /// is revoked the name may be used again.
    @Test func namesAreUniqueAmongLiveKeys() throws {
        let test = try TestApp()
        let first = try Self.make(test.direct, "ci", "edit")
        let again = try test.direct.send("POST", "/v1/admin-keys", body: #"{"name":"ci","role":"read"}"#, headers: Self.admin)
        #expect(again.status == 409)
        #expect(again.json["code"] == "name-in-use")
        #expect(again.json["errors"][0]["pointer"] == "/name")
        #expect(try test.direct.send("DELETE", "/v1/admin-keys/\(first["id"].stringValue ?? "")", headers: Self.admin).status == 204)
        _ = try Self.make(test.direct, "ci", "read")
        #expect(try test.store.auditLog(after: 0, limit: 10).map(\.action) == ["adminKey.create", "adminKey.revoke", "adminKey.create"])
    }

    /// Bad requests are 400 problems pointing at each field; a non-admin key cannot make keys
    /// (403); a made-up or overlong key is 401.
    @Test func badKeyRequestsAreProblems() throws {
        let test = try TestApp()
        for (body, pointers) in [(#"{"name":"x"}"#, ["/role"]), (#"{"role":"owner","name":""}"#, ["/name", "/role"]),
                                 (#"{"name":"x","role":"read","scope":"all"}"#, ["/scope"]), (#"{"name":"a\u0001","role":"read"}"#, ["/name"]),
                                 (#"{"name":"x","role":"READ"}"#, ["/role"]), (#"{"name":7,"role":["read"]}"#, ["/name", "/role"])] {
            let response = try test.direct.send("POST", "/v1/admin-keys", body: body, headers: Self.admin)
            #expect(response.status == 400, "\(body)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect((response.json["errors"].arrayValue ?? []).compactMap { $0["pointer"].stringValue }.sorted() == pointers, "\(body)")
        }
        #expect(try test.direct.send("POST", "/v1/admin-keys", body: "[]", headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/admin-keys", body: "{", headers: Self.admin).status == 400)
        let publish = try #require(try Self.make(test.direct, "p", "publish")["key"].stringValue)
        let refused = try test.direct.send("POST", "/v1/admin-keys", body: #"{"name":"mine","role":"admin"}"#, headers: Self.bearer(publish))
        #expect(refused.status == 403)
        #expect(refused.json["requiredRole"] == "admin")
        #expect(try test.direct.send("GET", "/v1/admin-keys", headers: Self.bearer(publish)).status == 403)
        for token in ["fsa_made-up", "fsa_" + String(repeating: "k", count: 4000), String(publish.dropLast()), publish + "x"] {
            #expect(try test.direct.send("GET", "/v1/flows", headers: Self.bearer(token)).status == 401)
        }
        #expect(try test.store.adminKeys().map(\.name) == ["p"])
    }

    /// Without FLOWSTACK_ADMIN_TOKEN the bootstrap token is made once and kept hashed: a
    /// restart, or another node, keeps opening with it; `resetAdminToken` replaces it at once on
    /// every node (audited by `cli`), and the old one gets 401.
    @Test func bootstrapTokenIsKeptAcrossRestarts() throws {
        let database = try TestDatabase()
        defer { withExtendedLifetime(database) {} }
        var store = try database.migratedStore()
        #expect(try Application(store: store, adminToken: nil).handle(Request(method: "GET", path: "/v1/flows", headers: ["Authorization": "Bearer x"])).status == 401)
        let token = try #require(try Application.makeAdminTokenIfNone(store: store))
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        #expect(try Application.makeAdminTokenIfNone(store: store) == nil)
        #expect(try store.adminTokenHash()?.count == 32)
        var app = try Application(store: store, adminToken: nil)
        #expect(try DirectSender(app.handle).send("GET", "/v1/flows", headers: Self.bearer(token)).status == 200)

        // A restart: a new store and application on the same database.
        try store.close()
        store = try database.migratedStore()
        #expect(try Application.makeAdminTokenIfNone(store: store) == nil)
        app = try Application(store: store, adminToken: nil)
        let other = try database.migratedStore()
        defer { try? other.close() }
        let node = try Application(store: other, adminToken: nil)
        #expect(try DirectSender(app.handle).send("GET", "/v1/flows", headers: Self.bearer(token)).status == 200)
        #expect(try DirectSender(node.handle).send("GET", "/v1/flows", headers: Self.bearer(token)).status == 200)

        let fresh = try Application.resetAdminToken(store: other, credential: "cli")
        #expect(fresh != token)
        for application in [app, node] {
            #expect(try DirectSender(application.handle).send("GET", "/v1/flows", headers: Self.bearer(token)).status == 401)
            #expect(try DirectSender(application.handle).send("GET", "/v1/flows", headers: Self.bearer(fresh)).status == 200)
        }
        #expect(try store.auditLog(after: 0, limit: 10).map { "\($0.action) \($0.credential)" } == ["adminToken.reset cli"])
        // FLOWSTACK_ADMIN_TOKEN, when set, is the token: the kept one does not open this server.
        let configured = try Application(store: store, adminToken: "from-the-environment")
        #expect(try DirectSender(configured.handle).send("GET", "/v1/flows", headers: Self.bearer(fresh)).status == 401)
        #expect(try DirectSender(configured.handle).send("GET", "/v1/flows", headers: Self.bearer("from-the-environment")).status == 200)
        try store.close()
    }
}
