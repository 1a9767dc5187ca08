// What the server does to every answer on its way out: content coding, and honest 304s.
import CMicroHTTPD

extension HTTPServer {
    /// Removes the gzip variant's ETag suffix from the request's conditional headers, so that
    /// handlers compare their own tags (see `ContentCoding`).
    func stripCodedTags(_ headers: inout HTTPHeaders) {
        guard configuration.gzipMinimumBytes != nil else { return }
        for name in ["If-None-Match", "If-Match"] {
            guard let value = headers[name], let stripped = ContentCoding.strippingCodedTags(value) else { continue }
            headers[name] = stripped
        }
    }

    /// The answer as this client gets it: gzip-compressed when it asked and it is worth it.
    func coded(_ response: Response, for exchange: Exchange) -> Response {
        guard let threshold = configuration.gzipMinimumBytes else { return response }
        let accepted = exchange.headers.values("Accept-Encoding")
        return ContentCoding.negotiated(response, acceptEncoding: accepted.isEmpty ? nil : accepted.joined(separator: ","),
                                        threshold: threshold)
    }

    /// libmicrohttpd's response for a 304: no body, and `Content-Length` the length of the 200
    /// it stands for, or none (closing the connection) when the handler did not say it.
    func notModifiedResponse(_ response: Response) -> OpaquePointer? {
        flowstack_response_not_modified(response.representation.map { Int64($0.body.count) } ?? -1)
    }
}
