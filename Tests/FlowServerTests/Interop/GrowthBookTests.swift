// The GrowthBook SDK payload over the API: client keys in the path, ETag and 304, what is served and what is left out.
import FeatureFlags
import FlowServer
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Testing

struct GrowthBookTests {
    static let admin = FlowAdminTests.admin

    static func features(_ test: TestApp, _ key: String, headers: [(String, String)] = []) throws -> Response {
        try test.direct.send("GET", "/api/features/\(key)", headers: headers)
    }

    /// Only a live client key opens the payload: none, a made-up one or a revoked one is a 401 problem.
    @Test func clientKeyInThePath() throws {
        let test = try TestApp()
        let (id, key) = try AccessTests.makeKey(test)
        let served = try Self.features(test, key)
        #expect(served.status == 200)
        #expect(served.headers["Content-Type"] == "application/json")
        #expect(served.headers["Access-Control-Allow-Origin"] == "*")
        #expect(served.json["features"]["eu-face-scan"]["defaultValue"] == false)

        for refused in ["fsk_made-up", "not-a-key", String(repeating: "k", count: 300)] {
            let answer = try Self.features(test, refused)
            #expect(answer.status == 401, "\(refused)")
            #expect(answer.headers["Content-Type"] == "application/problem+json")
            #expect(!answer.text.contains(refused))
        }
        // The admin token is not a client key, in the path or in a header.
        #expect(try Self.features(test, TestApp.adminToken).status == 401)
        #expect(try Self.features(test, "fsk_x", headers: Self.admin).status == 401)
        #expect(try test.direct.send("GET", "/api/features/").status == 404)

        #expect(try test.direct.send("DELETE", "/v1/client-keys/\(id)", headers: Self.admin).status == 204)
        #expect(try Self.features(test, key).status == 401)
    }

    /// The ETag is strong and stable; If-None-Match with it (or W/ it, or *) is a 304; any flag or experiment change gives a new one.
    @Test func etagAndNotModified() throws {
        let test = try TestApp()
        let (_, key) = try AccessTests.makeKey(test)
        let first = try Self.features(test, key)
        let etag = try #require(first.headers["ETag"])
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        #expect(first.headers["Cache-Control"] == "no-cache")
        #expect(try Self.features(test, key).headers["ETag"] == etag)
        #expect(try Self.features(test, key).body == first.body)

        for header in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
            let cached = try Self.features(test, key, headers: [("If-None-Match", header)])
            #expect(cached.status == 304, "\(header)")
            #expect(cached.body.isEmpty)
            #expect(cached.headers["ETag"] == etag)
        }
        #expect(try Self.features(test, key, headers: [("If-None-Match", "\"other\"")]).status == 200)
        #expect(try Self.features(test, key, headers: [("If-None-Match", "garbage")]).status == 200)

        let flag = #"{"variants":{"on":true,"off":false},"defaultVariant":"on"}"#
        #expect(try test.direct.send("PUT", "/v1/flags/new-home", body: flag, headers: Self.admin).status == 201)
        let afterFlag = try Self.features(test, key, headers: [("If-None-Match", etag)])
        #expect(afterFlag.status == 200)
        #expect(afterFlag.json["features"]["new-home"] == ["defaultValue": true, "rules": []])
        let flagTag = try #require(afterFlag.headers["ETag"])
        #expect(flagTag != etag)

        let experiment = #"{"variants":[{"key":"a"},{"key":"b"}]}"#
        #expect(try test.direct.send("PUT", "/v1/experiments/paywall", body: experiment, headers: Self.admin).status == 201)
        let afterExperiment = try Self.features(test, key, headers: [("If-None-Match", flagTag)])
        #expect(afterExperiment.status == 200)
        #expect(afterExperiment.json["features"]["experiment:paywall"]["rules"][0]["variations"] == ["a", "b"])
        #expect(afterExperiment.headers["ETag"] != flagTag)
        #expect(afterExperiment.json["dateUpdated"].stringValue != first.json["dateUpdated"].stringValue)
    }

    /// The payload has GrowthBook's members, and the same flag values and variants FlowStack gives, translated.
    @Test func payloadShape() throws {
        let test = try TestApp()
        let (_, key) = try AccessTests.makeKey(test)
        let payload = try Self.features(test, key).json
        #expect(payload["status"] == 200)
        #expect(payload["experiments"] == [])
        #expect(payload["dateUpdated"].stringValue?.hasSuffix("Z") == true)
        #expect(payload["flowstack"]["omitted"] == [])
        // The shipped flag: on for EU countries.
        let rule = payload["features"]["eu-face-scan"]["rules"][0]
        #expect(rule["force"] == true)
        #expect(rule["condition"]["country"]["$in"].arrayValue?.contains("DE") == true)
    }

    /// A version rule is served to GrowthBook SDKs (it was left out), with no warning at PUT.
    @Test func versionRuleIsServed() throws {
        let test = try TestApp()
        let (_, key) = try AccessTests.makeKey(test)
        let versioned = #"{"variants":{"new":true,"old":false},"defaultVariant":"old","rules":[{"when":{"attribute":"appVersion","versionGte":"2.0"},"variant":"new"}]}"#
        let put = try test.direct.send("PUT", "/v1/flags/min-version", body: versioned, headers: Self.admin)
        #expect(put.status == 201)
        #expect(put.json["warnings"] == [])
        let payload = try Self.features(test, key).json
        #expect(payload["flowstack"]["omitted"] == [])
        let rule = payload["features"]["min-version"]["rules"][0]
        #expect(rule["force"] == true)
        #expect(rule["condition"]["$or"][0]["appVersion"]["$vgte"] == "2.0.0")
    }

    /// A flag that cannot be translated is stored (it is valid), warned about at PUT, and listed as omitted in the payload.
    @Test func untranslatableFlagIsWarnedAndOmitted() throws {
        let test = try TestApp()
        let (_, key) = try AccessTests.makeKey(test)
        let versioned = #"{"variants":{"new":true,"old":false},"defaultVariant":"old","rules":[{"when":{"attribute":"appVersion","versionGte":"5.2.0-a_b"},"variant":"new"}]}"#
        let put = try test.direct.send("PUT", "/v1/flags/min-version", body: versioned, headers: Self.admin)
        #expect(put.status == 201)
        #expect(put.json["key"] == "min-version")
        #expect(put.json["revision"] == 1)
        #expect(put.json["warnings"][0]["pointer"] == "/rules/0/when/versionGte")
        #expect(put.json["warnings"][0]["detail"].stringValue?.contains("left out of the GrowthBook payload") == true)
        // What a PUT answered can be sent back as it is.
        #expect(try test.direct.send("PUT", "/v1/flags/min-version", body: put.text, headers: Self.admin).status == 200)

        let payload = try Self.features(test, key).json
        #expect(payload["features"]["min-version"] == .null)
        let omitted = payload["flowstack"]["omitted"][0]
        #expect(omitted["key"] == "min-version")
        #expect(omitted["path"] == "/rules/0/when/versionGte")
        #expect(omitted["reason"].stringValue?.contains("major.minor.patch") == true)

        // Still evaluated by FlowStack itself.
        let evaluated = try test.direct.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"u","attributes":{"appVersion":"5.3"}}"#, headers: Self.admin)
        #expect(evaluated.json["min-version"]["value"] == true)

        // A translatable flag warns about nothing.
        let fine = try test.direct.send("PUT", "/v1/flags/fine", body: #"{"variants":{"on":1},"defaultVariant":"on"}"#, headers: Self.admin)
        #expect(fine.json["warnings"] == [])
    }

    /// An experiment that cannot be translated warns at PUT too; one that can is served as experiment:KEY.
    @Test func experimentsAreServedOrWarned() throws {
        let test = try TestApp()
        let (_, key) = try AccessTests.makeKey(test)
        let dotted = #"{"variants":[{"key":"a"},{"key":"b"}],"hashAttribute":"device.id"}"#
        let put = try test.direct.send("PUT", "/v1/experiments/dotted", body: dotted, headers: Self.admin)
        #expect(put.status == 201)
        #expect(put.json["warnings"][0]["pointer"] == "/hashAttribute")
        let fine = try test.direct.send("PUT", "/v1/experiments/onboarding-length", body: #"{"variants":[{"key":"control"},{"key":"short"}]}"#, headers: Self.admin)
        #expect(fine.json["warnings"] == [])

        let payload = try Self.features(test, key).json
        #expect(payload["flowstack"]["omitted"][0]["key"] == "experiment:dotted")
        let rule = payload["features"]["experiment:onboarding-length"]["rules"][0]
        #expect(rule["key"] == "onboarding-length")
        #expect(rule["seed"] == "onboarding-length")
        #expect(rule["hashVersion"] == 2)
        #expect(rule["meta"] == [["key": "control"], ["key": "short"]])
    }

    /// On a shared database, a flag stored through one node is in the other node's payload at once, with a new ETag.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
    func otherNodesServeChangesAtOnce() throws {
        let a = try TestApp()
        let b = try TestApp(beside: a)
        let (_, key) = try AccessTests.makeKey(a)
        let before = try Self.features(b, key)
        #expect(before.status == 200)
        let flag = #"{"variants":{"on":true,"off":false},"defaultVariant":"on"}"#
        #expect(try a.direct.send("PUT", "/v1/flags/elsewhere", body: flag, headers: Self.admin).status == 201)
        let after = try Self.features(b, key, headers: [("If-None-Match", before.headers["ETag"] ?? "")])
        #expect(after.status == 200)
        #expect(after.json["features"]["elsewhere"]["defaultValue"] == true)
    }

    /// Through libmicrohttpd: the payload, its ETag and a 304 without a body.
    @Test func overASocket() throws {
        let test = try TestApp()
        let (_, key) = try AccessTests.makeKey(test)
        try test.withLiveServer { sender in
            let served = try sender.send("GET", "/api/features/\(key)")
            #expect(served.status == 200)
            let etag = try #require(served.headers["ETag"])
            let cached = try sender.send("GET", "/api/features/\(key)", headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
            #expect(try sender.send("GET", "/api/features/fsk_nope").status == 401)
        }
    }
}
