// The JavaScript client's modules (clients/js/src/), embedded as they are and served under /sdk/ by
// OperationController, so a web page (the playground first) imports `/sdk/index.js` with no build step.
import HTTPServer

extension Application {
    /// The modules by their path under /sdk/ (`index.js`, `engine/engine.js`, `client/flow-session.js`),
    /// with their tags; the relative imports between them (`./engine/index.js`, `./json.js`)
    /// resolve to these paths because the folders are kept.
    static let sdkFiles: [String: (bytes: [UInt8], etag: String)] = {
        var files: [String: (bytes: [UInt8], etag: String)] = [:]
        for file in EmbeddedResources.files where file.path.hasPrefix(sdkSource) && file.path.hasSuffix(".js") {
            let bytes = Array(file.text.utf8)
            files[String(file.path.dropFirst(sdkSource.count))] = (bytes, contentTag(bytes))
        }
        return files
    }()

    /// The package's source folder, as the embedded paths start.
    static let sdkSource = "clients/js/src/"

    /// Modules are JavaScript whatever their folder (the playground's own content type for .js).
    static let sdkContentType = "text/javascript; charset=utf-8"

    /// The modules' paths under /sdk/, sorted, for tests and documentation.
    public static var sdkFileNames: [String] {
        sdkFiles.keys.sorted()
    }
}
