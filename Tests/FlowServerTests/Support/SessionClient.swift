// A small client of the session API for tests, over any RequestSender.
import JSON
import FlowEngine
import HTTPServer
import HTTPTestClient
import Testing

/// What a test needs of a created session.
struct CreatedSession {
    let id: String
    let token: String
    let state: JSONValue
    var auth: [(String, String)] { [("Authorization", "Bearer \(token)")] }
}

extension Response {
    /// The body parsed as JSON (null when it is not JSON).
    var json: JSONValue { (try? JSONParser.parse(body)) ?? .null }
}

extension JSONValue {
    subscript(key: String) -> JSONValue { objectValue?[key] ?? .null }
    subscript(index: Int) -> JSONValue {
        guard let array = arrayValue, array.indices.contains(index) else { return .null }
        return array[index]
    }
    /// The features of `screens`, bottom to top.
    var features: [String] { (self["screens"].arrayValue ?? []).compactMap { $0["feature"].stringValue } }
}

struct SessionClient {
    let sender: any RequestSender

    func create(userId: String, attributes: String = "{}", traits: String = "{}") throws -> CreatedSession {
        let response = try sender.send("POST", "/v1/sessions",
                                       body: #"{"userId":"\#(userId)","attributes":\#(attributes),"traits":\#(traits)}"#)
        try #require(response.status == 201, "create answered \(response.status): \(response.text)")
        let json = response.json
        return CreatedSession(id: json["session"]["id"].stringValue ?? "", token: json["session"]["token"].stringValue ?? "",
                              state: json["state"])
    }

    /// Posts an action; the response is returned whatever its status.
    @discardableResult
    func act(_ session: CreatedSession, _ body: String, headers: [(String, String)] = []) throws -> Response {
        try sender.send("POST", "/v1/sessions/\(session.id)/actions", body: body, headers: session.auth + headers)
    }

    /// Posts an action that must be applied; returns the new state.
    @discardableResult
    func apply(_ session: CreatedSession, _ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let response = try act(session, body)
        #expect(response.status == 200, "\(body) answered \(response.status): \(response.text)", sourceLocation: sourceLocation)
        return response.json
    }

    func state(_ session: CreatedSession) throws -> Response {
        try sender.send("GET", "/v1/sessions/\(session.id)", headers: session.auth)
    }
}
