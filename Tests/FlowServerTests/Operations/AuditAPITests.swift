// The audit log over the API: every admin change is listed with the admin credential's name
// (`admin`, `key:<name>`; never the token), refused changes are not, and rolling back is an activation.
import Crypto
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct AuditAPITests {
    static let admin = FlowAdminTests.admin

    /// How the audit log names the bootstrap admin token (named keys are `key:<name>`).
    static let credential = "admin"

    static func log(_ test: TestApp, _ query: String = "") throws -> JSONValue {
        let response = try test.direct.send("GET", "/v1/audit\(query)", headers: Self.admin)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        return response.json
    }

    static func summary(_ log: JSONValue) -> [String] {
        (log["entries"].arrayValue ?? []).map { entry in
            let old = entry["oldVersion"].integerValue.map(String.init) ?? "-"
            let new = entry["newVersion"].integerValue.map(String.init) ?? "-"
            return "\(entry["action"].stringValue ?? "?") \(entry["subject"].stringValue ?? "?") \(old)→\(new)"
        }
    }

    /// Each kind of admin change appends one entry (two for a PUT that activates), in order,
    /// naming the credential; the token itself appears nowhere in the log.
    @Test func everyAdminChangeIsLogged() throws {
        let test = try TestApp()
        #expect(try Self.log(test) == ["entries": [], "next": .null])
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "ada")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"onboarding.completed"}"#)

        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", headers: Self.admin).status == 200)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        #expect(try test.direct.send("PUT", "/v1/flags/eu-face-scan", body: #"{"variants":{"on":true,"off":false},"defaultVariant":"off"}"#,
                                     headers: Self.admin).status == 200)
        #expect(try test.direct.send("PUT", "/v1/experiments/onboarding-length", body: ExperimentAPITests.experiment, headers: Self.admin).status == 201)
        #expect(try test.direct.send("DELETE", "/v1/users/ada/onboarding", headers: Self.admin).status == 204)
        let key = try test.direct.send("POST", "/v1/client-keys", body: #"{"name":"ios app"}"#, headers: Self.admin).json
        let keyId = key["id"].stringValue ?? ""
        #expect(try test.direct.send("DELETE", "/v1/client-keys/\(keyId)", headers: Self.admin).status == 204)
        #expect(try test.direct.send("DELETE", "/v1/client-keys/\(keyId)", headers: Self.admin).status == 204)

        let log = try Self.log(test)
        #expect(Self.summary(log) == [
            "flow.put onboarding 1→2",
            "flow.activate onboarding 1→2",
            "flow.put onboarding 2→3",
            "flow.activate onboarding 2→3",
            "flag.put eu-face-scan 1→2",
            "experiment.put onboarding-length -→1",
            "user.onboarding.reset ada \(test.store.dialect == .postgresql ? "1→2" : "-→-")",
            "clientKey.create \(keyId) -→-",
            "clientKey.revoke \(keyId) -→-",
        ])
        let entries = log["entries"].arrayValue ?? []
        #expect(entries.compactMap { $0["id"].integerValue } == Array(1...9))
        #expect(entries.allSatisfy { $0["credential"].stringValue == Self.credential })
        #expect(entries.allSatisfy { ($0["at"].stringValue ?? "").hasSuffix("Z") })
        #expect(log["next"] == .null)
        #expect(!(try test.direct.send("GET", "/v1/audit", headers: Self.admin).text.contains(TestApp.adminToken)))
    }

    /// Refused changes (invalid, unknown, unauthorized) and reads log nothing.
    @Test func refusedChangesAreNotLogged() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: #"{"name":"onboarding","kind":"stacked","initial":[]}"#,
                                     headers: Self.admin).status == 422)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/9/activate", headers: Self.admin).status == 404)
        #expect(try test.direct.send("PUT", "/v1/flags/f", body: #"{"variants":{"on":true},"defaultVariant":"off"}"#, headers: Self.admin).status == 422)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding).status == 401)
        #expect(try test.direct.send("DELETE", "/v1/users/nobody/onboarding", headers: Self.admin).status == 404)
        #expect(try test.direct.send("DELETE", "/v1/client-keys/ck_none", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).status == 200)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/test", body: #"{"scenarios":[{"name":"x","steps":[]}]}"#,
                                     headers: Self.admin).status == 200)
        #expect(Self.summary(try Self.log(test)).isEmpty)
    }

    /// Rolling back is activating an earlier version: sessions made after it run that version
    /// again, and the log shows the rollback.
    @Test func rollbackIsAnActivation() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        let client = SessionClient(sender: test.direct)
        #expect(try client.apply(try client.create(userId: "short"), #"{"type":"onboarding.completed"}"#).features == ["home.first"])
        let rollback = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/activate", headers: Self.admin)
        #expect(rollback.json["name"] == "onboarding" && rollback.json["version"] == 1 && rollback.json["live"] == true)
        #expect(rollback.json["impact"]["sessions"] == 1)
        #expect(try client.act(try client.create(userId: "long"), #"{"type":"onboarding.completed"}"#).status == 422)
        #expect(Self.summary(try Self.log(test)) == ["flow.put onboarding 1→2", "flow.activate onboarding 1→2", "flow.activate onboarding 2→1"])
    }

    /// Pages: `after` the last id seen, `limit` entries at most; `next` is the `after` of the
    /// following page while a page is full.
    @Test func pagesByIdAndRefusesBadQueries() throws {
        let test = try TestApp()
        for _ in 0..<5 {
            #expect(try test.direct.send("PUT", "/v1/flags/f", body: #"{"variants":{"on":true},"defaultVariant":"on"}"#, headers: Self.admin).status < 300)
        }
        let first = try Self.log(test, "?limit=2")
        #expect(first["entries"].arrayValue?.compactMap { $0["id"].integerValue } == [1, 2])
        #expect(first["next"] == 2)
        let last = try Self.log(test, "?after=4&limit=2")
        #expect(last["entries"].arrayValue?.compactMap { $0["newVersion"].integerValue } == [5])
        #expect(last["next"] == .null)
        for query in ["?after=-1", "?after=x", "?limit=0", "?limit=1001", "?limit=1.5"] {
            let response = try test.direct.send("GET", "/v1/audit\(query)", headers: Self.admin)
            #expect(response.status == 400, "\(query)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
        }
        #expect(try test.direct.send("GET", "/v1/audit").status == 401)
        #expect(try test.direct.send("GET", "/v1/audit", headers: [("Authorization", "Bearer not-the-token")]).status == 401)
    }
}
