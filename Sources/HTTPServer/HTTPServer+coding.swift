// What the server does to every answer on its way out: content coding, and honest 304s.
import CMicroHTTPD

extension HTTPServer {
    /// Removes the gzip variant's ETag suffix from the request's conditional headers, so that
    /// handlers compare their own tags (see `ContentCoding`).
    func stripCodedTags(_ headers: inout HTTPHeaders) {
        guard configuration.gzipMinimumBytes != nil else { return }
        let hasCodedTag = { (value: String) in ContentCoding.strippingCodedTags(value) != nil }
        guard headers.contains("If-None-Match", where: hasCodedTag) || headers.contains("If-Match", where: hasCodedTag) else { return }
        // Each field on its own, in order: a request may send If-None-Match more than once.
        var rewritten = HTTPHeaders(capacity: headers.fields.count)
        for field in headers {
            let isConditional = HTTPHeaders.equalNames(field.name, "If-None-Match") || HTTPHeaders.equalNames(field.name, "If-Match")
            let value = isConditional ? (ContentCoding.strippingCodedTags(field.value) ?? field.value) : field.value
            rewritten.add(name: field.name, value: value)
        }
        headers = rewritten
    }

    /// The answer as this client gets it: gzip-compressed when it asked and it is worth it.
    func code(_ response: inout Response, for exchange: Exchange) {
        guard let threshold = configuration.gzipMinimumBytes else { return }
        ContentCoding.negotiate(&response, acceptEncoding: exchange.headers.combinedValue("Accept-Encoding"), threshold: threshold)
    }

    /// libmicrohttpd's response for a 304: no body, and `Content-Length` the length of the 200
    /// it stands for, or none (closing the connection) when the handler did not say it.
    func notModifiedResponse(_ response: Response) -> OpaquePointer? {
        flowstack_response_not_modified(response.representation.map { Int64($0.body.count) } ?? -1)
    }
}
