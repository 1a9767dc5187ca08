// The definition formats as JSON Schemas (the repo's schemas/*.schema.json), embedded at build
// time and served under /v1/schemas by OperationController, public like /openapi.yaml.
import HTTPServer
import JSON

extension Application {
    /// One served schema: its file name (also its `$id`, so the relative `$ref`s between schemas
    /// resolve both in the repo's folder and under `/v1/schemas/`), title, bytes and tag.
    struct SchemaFile: Sendable {
        var name: String
        var title: String
        var description: String
        var bytes: [UInt8]
        var etag: String
    }

    /// The schemas embedded from the repo's `schemas/` at build time, by name.
    static let schemaFiles: [String: SchemaFile] = {
        var files: [String: SchemaFile] = [:]
        for file in EmbeddedResources.files where file.path.hasPrefix("schemas/") && file.path.hasSuffix(".schema.json") {
            let name = String(file.path.dropFirst("schemas/".count))
            let bytes = Array(file.text.utf8)
            let object = (try? JSONParser.parse(bytes))?.objectValue
            files[name] = SchemaFile(
                name: name, title: object?["title"]?.stringValue ?? name, description: object?["description"]?.stringValue ?? "",
                bytes: bytes, etag: contentTag(bytes))
        }
        return files
    }()

    /// `{"schemas": [{name, title, description, url}]}` in name order.
    static let schemaList: [UInt8] = {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("schemas")
        writer.beginArray()
        for file in schemaFiles.values.sorted(by: { $0.name < $1.name }) {
            writer.beginObject()
            writer.writeKey("name")
            writer.writeString(file.name)
            writer.writeKey("title")
            writer.writeString(file.title)
            writer.writeKey("description")
            writer.writeString(file.description)
            writer.writeKey("url")
            writer.writeString("/v1/schemas/\(file.name)")
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }()

    static let schemaListTag = contentTag(schemaList)
}
