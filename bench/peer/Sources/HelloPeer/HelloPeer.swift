// Hummingbird 2 hello world: GET / answers {"hello":"world"} as JSON. Usage: HelloPeer PORT
import Hummingbird

@main
struct HelloPeer {
    static func main() async throws {
        let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8081 : 8081
        let router = Router()
        router.get("/") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"hello":"world"}"#)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        print("peer listening on http://127.0.0.1:\(port)")
        try await app.runService()
    }
}
