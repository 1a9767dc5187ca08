// The answers of the operations routes: health, and files served as they are.
import HTTPServer
import JSON

/// `{"status":"ok","database":"ok","schemaVersion":N}`.
struct HealthAnswer: JSONAnswer {
    let schemaVersion: Int

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("status")
        writer.writeString("ok")
        writer.writeKey("database")
        writer.writeString("ok")
        writer.writeKey("schemaVersion")
        writer.writeInteger(schemaVersion)
        writer.endObject()
    }
}

/// Bytes served as they are (a file embedded in the binary, the metrics' text), with their
/// content type, their tag and any other header.
struct StaticFileAnswer: ResponseEncodable {
    let bytes: [UInt8]
    let contentType: String
    let etag: String?
    var headers: [(name: String, value: String)] = []

    func response() -> Response {
        var response = Response.bytes(bytes, contentType: contentType)
        if let etag { response.headers.add(name: "ETag", value: etag) }
        for header in headers { response.headers.add(name: header.name, value: header.value) }
        return response
    }
}
