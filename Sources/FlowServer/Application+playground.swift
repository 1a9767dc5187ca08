// The playground's files: one page of plain HTML, CSS and JavaScript, embedded from playground/
// (served at `/` by OperationController).
import HTTPServer

extension Application {
    /// The playground's files, by file name, with their content types; embedded at build time.
    static let playgroundFiles: [String: (contentType: String, bytes: [UInt8], etag: String)] = {
        var files: [String: (contentType: String, bytes: [UInt8], etag: String)] = [:]
        for file in EmbeddedResources.files where file.path.hasPrefix("playground/") {
            let name = String(file.path.dropFirst("playground/".count))
            guard let contentType = playgroundContentType(of: name) else { continue }
            let bytes = Array(file.text.utf8)
            files[name] = (contentType, bytes, contentTag(bytes))
        }
        return files
    }()

    /// The playground's file names and content types, for tests and documentation.
    public static var playgroundFileNames: [(name: String, contentType: String)] {
        playgroundFiles.map { ($0.key, $0.value.contentType) }.sorted { $0.name < $1.name }
    }

    static func playgroundContentType(of name: String) -> String? {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        default: nil
        }
    }

    /// A strong tag of fixed bytes (a digest), for files embedded in the binary.
    static func contentTag(_ bytes: [UInt8]) -> String {
        "\"" + BearerToken.base64URL(Array(BearerToken.digest(bytes).prefix(18))) + "\""
    }
}
