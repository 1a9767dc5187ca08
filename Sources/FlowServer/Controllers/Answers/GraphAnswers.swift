// The answer of the graph routes: a picture or a graph's source, in its own media type.
import HTTPServer

/// SVG, DOT or Mermaid bytes, with the format's content type.
struct GraphAnswer: ResponseEncodable {
    let body: [UInt8]
    let contentType: String

    func response() -> Response {
        Response.bytes(body, contentType: contentType)
    }
}
