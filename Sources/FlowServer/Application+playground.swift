// The playground: one page of plain HTML, CSS and JavaScript at `/`, embedded from playground/.
import HTTPServer

extension Application {
    /// The playground's files, by file name, with their content types; embedded at build time.
    static let playgroundFiles: [String: (contentType: String, bytes: [UInt8])] = {
        var files: [String: (contentType: String, bytes: [UInt8])] = [:]
        for file in EmbeddedResources.files where file.path.hasPrefix("playground/") {
            let name = String(file.path.dropFirst("playground/".count))
            guard let contentType = playgroundContentType(of: name) else { continue }
            files[name] = (contentType, Array(file.text.utf8))
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

    static func addPlaygroundRoutes(to router: inout Router) {
        router.route("GET", "/") { _ throws(ResponseError) in
            try playgroundFile("index.html")
        }
        router.route("GET", "/playground/{file}") { request throws(ResponseError) in
            try playgroundFile(request.pathParameters["file"] ?? "")
        }
    }

    private static func playgroundFile(_ name: String) throws(ResponseError) -> Response {
        guard let file = playgroundFiles[name] else {
            throw ResponseError(.problem(404, "The playground has no such file.", type: ProblemType.notFound))
        }
        var response = Response.bytes(file.bytes, contentType: file.contentType)
        // The files change only with the binary; a reload after an upgrade must not show old ones.
        response.headers.add(name: "Cache-Control", value: "no-cache")
        response.headers.add(name: "X-Content-Type-Options", value: "nosniff")
        return response
    }
}
