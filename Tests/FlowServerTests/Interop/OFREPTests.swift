// OFREP over the API: client-key auth, single and bulk evaluation equal to /v1/flags/evaluate,
// ETag and 304, the protocol's error bodies, and experiments seen as flags.
import FeatureFlags
import FlowServer
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct OFREPTests {
    static let admin = FlowAdminTests.admin
    static let single = "/ofrep/v1/evaluate/flags/"
    static let bulk = "/ofrep/v1/evaluate/flags"

    /// A new client key, made through the admin API: its id and the key itself.
    static func clientKey(_ sender: some RequestSender, name: String = "ios app") throws -> (id: String, key: String) {
        let made = try sender.send("POST", "/v1/client-keys", body: #"{"name":"\#(name)"}"#, headers: admin)
        try #require(made.status == 201, "client key: \(made.status) \(made.text)")
        return (made.json["id"].stringValue ?? "", made.json["key"].stringValue ?? "")
    }

    static func body(_ context: String) -> String { #"{"context":\#(context)}"# }

    /// Flags of every kind the evaluation has: static, targeted, split on the user, split on a
    /// device attribute, disabled, object and null values; and an experiment with a condition.
    static func seed(_ sender: some RequestSender) throws {
        let flags = [
            "banner-color": #"{"variants": {"red": "crimson", "blue": "navy"}, "defaultVariant": "blue"}"#,
            "checkout": #"{"variants": {"new": {"steps": 2}, "old": {"steps": 4}}, "defaultVariant": "old", "rules": [{"when": {"attribute": "plan", "in": ["pro"]}, "variant": "new"}], "split": [{"variant": "new", "weight": 0.5}, {"variant": "old", "weight": 0.5}]}"#,
            "device-split": #"{"variants": {"a": 1, "b": 2}, "defaultVariant": "a", "hashAttribute": "deviceId", "split": [{"variant": "a", "weight": 0.5}, {"variant": "b", "weight": 0.5}]}"#,
            "paused": #"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "enabled": false, "split": [{"variant": "on", "weight": 1}]}"#,
            "nothing": #"{"variants": {"none": null}, "defaultVariant": "none"}"#,
        ]
        for (key, flag) in flags {
            let put = try sender.send("PUT", "/v1/flags/\(key)", body: flag, headers: admin)
            try #require(put.status == 201, "\(key): \(put.text)")
        }
        let experiment = #"{"variants": [{"key": "control", "weight": 0.5}, {"key": "short", "weight": 0.5}], "coverage": 0.8, "when": {"attribute": "platform", "isNot": "web"}}"#
        try #require(try sender.send("PUT", "/v1/experiments/onboarding-length", body: experiment, headers: admin).status == 201)
    }

    /// What OFREP must answer for one flag, from FlowStack's own evaluation of the same context:
    /// the same value, variant and reason (`DEFAULT` included, as OpenFeature names it).
    static func expected(_ key: String, _ details: JSONValue) -> JSONValue {
        if let code = details["errorCode"].stringValue {
            return ["key": .string(key), "errorCode": .string(code), "errorDetails": details["errorMessage"]]
        }
        var object: JSONObject = ["key": .string(key), "reason": details["reason"], "variant": details["variant"]]
        if !details["value"].isNull { object["value"] = details["value"] }
        return .object(object)
    }

    /// Without a key, with a wrong one, with the admin token or a revoked key: 401 with no body.
    @Test func onlyLiveClientKeysOpenOFREP() throws {
        let test = try TestApp()
        let (id, key) = try Self.clientKey(test.direct)
        let context = Self.body(#"{"targetingKey":"ada"}"#)
        for headers in [[], [("X-API-Key", "fsk_wrong")], [("Authorization", "Bearer fsk_wrong")], Self.admin, [("X-API-Key", "")]] {
            for path in [Self.single + "eu-face-scan", Self.bulk] {
                let refused = try test.direct.send("POST", path, body: context, headers: headers)
                #expect(refused.status == 401, "\(headers) \(path): \(refused.status)")
                #expect(refused.body.isEmpty)
                #expect(refused.headers["Content-Type"] == nil)
            }
        }
        // Unauthenticated bodies are not read: a malformed one is still 401.
        #expect(try test.direct.send("POST", Self.bulk, body: "{").status == 401)
        #expect(try test.direct.send("POST", Self.single + "eu-face-scan", body: context, headers: [("X-API-Key", key)]).status == 200)
        #expect(try test.direct.send("POST", Self.bulk, body: context, headers: [("Authorization", "Bearer \(key)")]).status == 200)
        #expect(try test.direct.send("DELETE", "/v1/client-keys/\(id)", headers: Self.admin).status == 204)
        let revoked = try test.direct.send("POST", Self.single + "eu-face-scan", body: context, headers: [("X-API-Key", key)])
        #expect(revoked.status == 401)
        #expect(revoked.body.isEmpty)
    }

    /// Every flag, for a table of contexts, answers what /v1/flags/evaluate gives, in OFREP's shape.
    @Test func singleEqualsFlowStackEvaluation() throws {
        let test = try TestApp()
        try Self.seed(test.direct)
        let auth = [("X-API-Key", try Self.clientKey(test.direct).key)]
        let contexts: [(targetingKey: String, attributes: String)] = [
            ("ada", #"{"country":"DE","plan":"pro","deviceId":"d-1"}"#),
            ("bob", #"{"country":"US","plan":"free","deviceId":7}"#),
            ("cy", #"{"country":"FR","deviceId":true}"#),
            ("dee", "{}"),
        ] + (0..<30).map { ("user-\($0)", #"{"plan":"free","deviceId":"dev-\#($0)"}"#) }
        for context in contexts {
            let own = try test.direct.send("POST", "/v1/flags/evaluate", body: #"{"targetingKey":"\#(context.targetingKey)","attributes":\#(context.attributes)}"#, headers: Self.admin).json
            let members = context.attributes.dropFirst().dropLast()
            let ofrepContext = #"{"targetingKey":"\#(context.targetingKey)"\#(members.isEmpty ? "" : ",")\#(members)}"#
            for key in own.objectValue?.keys ?? [] {
                let answer = try test.direct.send("POST", Self.single + key, body: Self.body(ofrepContext), headers: auth)
                #expect(answer.json == Self.expected(key, own[key]), "\(key) for \(context)")
                #expect(answer.status == (own[key]["errorCode"].isNull ? 200 : 400))
                #expect(answer.headers["Content-Type"] == "application/json")
            }
        }
        // One of each kind, spelled out.
        let ada = Self.body(#"{"targetingKey":"ada","country":"DE","plan":"pro","deviceId":true}"#)
        #expect(try test.direct.send("POST", Self.single + "eu-face-scan", body: ada, headers: auth).json
            == ["key": "eu-face-scan", "value": true, "reason": "TARGETING_MATCH", "variant": "on"])
        #expect(try test.direct.send("POST", Self.single + "banner-color", body: ada, headers: auth).json
            == ["key": "banner-color", "value": "navy", "reason": "STATIC", "variant": "blue"])
        #expect(try test.direct.send("POST", Self.single + "checkout", body: ada, headers: auth).json
            == ["key": "checkout", "value": ["steps": 2], "reason": "TARGETING_MATCH", "variant": "new"])
        #expect(try test.direct.send("POST", Self.single + "paused", body: ada, headers: auth).json
            == ["key": "paused", "value": false, "reason": "DISABLED", "variant": "off"])
        #expect(try test.direct.send("POST", Self.single + "nothing", body: ada, headers: auth).json
            == ["key": "nothing", "reason": "STATIC", "variant": "none"])
        let invalid = try test.direct.send("POST", Self.single + "device-split", body: ada, headers: auth)
        #expect(invalid.status == 400)
        #expect(invalid.json["errorCode"] == "INVALID_CONTEXT")
        #expect(invalid.json["key"] == "device-split")
        let us = Self.body(#"{"targetingKey":"sam","country":"US"}"#)
        #expect(try test.direct.send("POST", Self.single + "eu-face-scan", body: us, headers: auth).json
            == ["key": "eu-face-scan", "value": false, "reason": "DEFAULT", "variant": "off"])
    }

    /// Unknown flags are 404 FLAG_NOT_FOUND; bad bodies and contexts 400 with OFREP's codes.
    @Test func errorBodies() throws {
        let test = try TestApp()
        try Self.seed(test.direct)
        let auth = [("X-API-Key", try Self.clientKey(test.direct).key)]
        let unknown = try test.direct.send("POST", Self.single + "no-such-flag", body: Self.body(#"{"targetingKey":"ada"}"#), headers: auth)
        #expect(unknown.status == 404)
        #expect(unknown.json == ["key": "no-such-flag", "errorCode": "FLAG_NOT_FOUND", "errorDetails": #"no flag is defined with key "no-such-flag""#])
        #expect(try test.direct.send("POST", Self.single + "experiment:none", body: Self.body("{}"), headers: auth).json["errorCode"] == "FLAG_NOT_FOUND")
        #expect(try test.direct.send("POST", Self.single + "bad%20key", body: Self.body("{}"), headers: auth).status == 404)

        let cases: [(body: String, code: String)] = [
            ("", "PARSE_ERROR"), ("{", "PARSE_ERROR"), ("[1]", "PARSE_ERROR"), (#""context""#, "PARSE_ERROR"),
            ("{}", "INVALID_CONTEXT"), (#"{"context":null}"#, "INVALID_CONTEXT"), (#"{"context":[1]}"#, "INVALID_CONTEXT"),
            (#"{"context":{"targetingKey":5}}"#, "INVALID_CONTEXT"), (#"{"context":{"targetingKey":{"id":"x"}}}"#, "INVALID_CONTEXT"),
        ]
        for (body, code) in cases {
            let one = try test.direct.send("POST", Self.single + "eu-face-scan", body: body, headers: auth)
            #expect(one.status == 400, "\(body)")
            #expect(one.headers["Content-Type"] == "application/json")
            #expect(one.json["key"] == "eu-face-scan", "\(body)")
            #expect(one.json["errorCode"] == .string(code), "\(body): \(one.text)")
            #expect(one.json["errorDetails"].stringValue?.isEmpty == false)
            let all = try test.direct.send("POST", Self.bulk, body: body, headers: auth)
            #expect(all.status == 400, "\(body)")
            #expect(all.json["key"].isNull)
            #expect(all.json["errorCode"] == .string(code), "\(body): \(all.text)")
        }
        // Members beside the context are allowed by OFREP's schema; a null targeting key is none.
        #expect(try test.direct.send("POST", Self.single + "banner-color", body: #"{"context":{"targetingKey":null},"extra":1}"#, headers: auth).status == 200)

        // A split on the targeting key needs one: that flag fails, the others evaluate.
        let anonymous = Self.body(#"{"plan":"free","deviceId":"d-1"}"#)
        let needsKey = try test.direct.send("POST", Self.single + "checkout", body: anonymous, headers: auth)
        #expect(needsKey.status == 400)
        #expect(needsKey.json["errorCode"] == "TARGETING_KEY_MISSING")
        #expect(try test.direct.send("POST", Self.single + "checkout", body: Self.body(#"{"plan":"pro"}"#), headers: auth).json["reason"] == "TARGETING_MATCH")
        #expect(try test.direct.send("POST", Self.single + "device-split", body: anonymous, headers: auth).json["reason"] == "SPLIT")
        let flags = try test.direct.send("POST", Self.bulk, body: anonymous, headers: auth).json["flags"].arrayValue ?? []
        let codes = Dictionary(uniqueKeysWithValues: flags.map { ($0["key"].stringValue ?? "", $0["errorCode"]) })
        #expect(codes["checkout"] == "TARGETING_KEY_MISSING")
        #expect(codes["experiment:onboarding-length"] == "TARGETING_KEY_MISSING")
        #expect(codes["banner-color"] == .null)
        #expect(codes["device-split"] == .null)
        // The server keeps serving.
        #expect(try test.direct.send("GET", "/healthz").status == 200)
    }

    /// Bulk lists every flag then every experiment, each as the single route answers it, with an
    /// ETag; If-None-Match with it is 304 until a definition changes what this context gets.
    @Test func bulkWithETag() throws {
        let test = try TestApp()
        try Self.seed(test.direct)
        let auth = [("X-API-Key", try Self.clientKey(test.direct).key)]
        let context = Self.body(#"{"targetingKey":"ada","country":"DE","platform":"ios","deviceId":"d-1"}"#)
        let first = try test.direct.send("POST", Self.bulk, body: context, headers: auth)
        #expect(first.status == 200)
        let flags = first.json["flags"].arrayValue ?? []
        #expect(flags.compactMap { $0["key"].stringValue }
            == ["banner-color", "checkout", "device-split", "eu-face-scan", "nothing", "paused", "paywall", "experiment:onboarding-length"])
        for flag in flags {
            let key = flag["key"].stringValue ?? ""
            #expect(try test.direct.send("POST", Self.single + key, body: context, headers: auth).json == flag, "\(key)")
        }
        let etag = try #require(first.headers["ETag"])
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))

        let again = try test.direct.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["ETag"] == etag)
        #expect(try test.direct.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", #""other", W/\#(etag)"#)]).status == 304)
        #expect(try test.direct.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", #""other""#)]).status == 200)
        #expect(try test.direct.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", "*")]).status == 200)

        // Another context that gets other values has another tag.
        let other = try test.direct.send("POST", Self.bulk, body: Self.body(#"{"targetingKey":"sam","country":"US"}"#), headers: auth + [("If-None-Match", etag)])
        #expect(other.status == 200)
        #expect(other.headers["ETag"] != etag)

        // A change that does not touch this context keeps the tag; one that does changes it.
        let unrelated = #"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "rules": [{"when": {"attribute": "country", "in": ["DE"]}, "variant": "on"}]}"#
        #expect(try test.direct.send("PUT", "/v1/flags/eu-face-scan", body: unrelated, headers: Self.admin).status == 200)
        #expect(try test.direct.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", etag)]).status == 304)
        #expect(try test.direct.send("PUT", "/v1/flags/banner-color", body: #"{"variants": {"red": "crimson"}, "defaultVariant": "red"}"#, headers: Self.admin).status == 200)
        let changed = try test.direct.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", etag)])
        #expect(changed.status == 200)
        #expect(changed.headers["ETag"] != etag)
    }

    /// `experiment:<key>` is the variant a session created for the same user and attributes is in.
    @Test func experimentFlagIsTheSessionsVariant() throws {
        let test = try TestApp()
        try Self.seed(test.direct)
        let client = SessionClient(sender: test.direct)
        let auth = [("X-API-Key", try Self.clientKey(test.direct).key)]
        var seen: Set<String> = []
        for index in 0..<60 {
            let platform = ["ios", "android", "web"][index % 3]
            let session = try client.create(userId: "user-\(index)", attributes: #"{"platform":"\#(platform)"}"#)
            let answer = try test.direct.send("POST", Self.single + "experiment:onboarding-length",
                                              body: Self.body(#"{"targetingKey":"user-\#(index)","platform":"\#(platform)"}"#), headers: auth)
            #expect(answer.status == 200)
            if let variant = session.state["experiments"]["onboarding-length"].stringValue {
                #expect(answer.json == ["key": "experiment:onboarding-length", "value": .string(variant), "reason": "SPLIT", "variant": .string(variant)])
                seen.insert(variant)
            } else {
                // Not in it: no value (the app's default), an empty variant.
                #expect(answer.json == ["key": "experiment:onboarding-length", "reason": "DEFAULT", "variant": ""], "user-\(index) \(platform)")
                seen.insert("-")
            }
        }
        #expect(seen == ["control", "short", "-"])
        let paused = #"{"variants": [{"key": "control"}], "enabled": false}"#
        #expect(try test.direct.send("PUT", "/v1/experiments/onboarding-length", body: paused, headers: Self.admin).status == 200)
        #expect(try test.direct.send("POST", Self.single + "experiment:onboarding-length", body: Self.body(#"{"targetingKey":"u"}"#), headers: auth).json
            == ["key": "experiment:onboarding-length", "reason": "DISABLED", "variant": ""])
        // The key may come percent-encoded (`:` as %3A).
        #expect(try test.direct.send("POST", Self.single + "experiment%3Aonboarding-length", body: Self.body(#"{"targetingKey":"u"}"#), headers: auth).json["reason"] == "DISABLED")
    }

    /// Through libmicrohttpd: the same answers, 401 without a body, 304 without a body.
    @Test func overASocket() throws {
        let test = try TestApp()
        try test.withLiveServer { sender in
            let auth = [("X-API-Key", try Self.clientKey(sender).key)]
            let context = Self.body(#"{"targetingKey":"ada","country":"DE"}"#)
            let one = try sender.send("POST", Self.single + "eu-face-scan", body: context, headers: auth)
            #expect(one.status == 200)
            #expect(one.json == ["key": "eu-face-scan", "value": true, "reason": "TARGETING_MATCH", "variant": "on"])
            let refused = try sender.send("POST", Self.single + "eu-face-scan", body: context)
            #expect(refused.status == 401)
            #expect(refused.body.isEmpty)
            let all = try sender.send("POST", Self.bulk, body: context, headers: auth)
            let etag = try #require(all.headers["ETag"])
            let same = try sender.send("POST", Self.bulk, body: context, headers: auth + [("If-None-Match", etag)])
            #expect(same.status == 304)
            #expect(same.body.isEmpty)
        }
    }
}
