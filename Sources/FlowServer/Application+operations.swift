// The API contract served at /openapi.yaml (OperationController), embedded at build time.

extension Application {
    /// The API contract served at `/openapi.yaml`, embedded from the repo's file at build time.
    static let openAPIDocument: [UInt8] = Array(
        (EmbeddedResources.files.first { $0.path == "openapi.yaml" }?.text ?? "").utf8)

    static let openAPITag = contentTag(openAPIDocument)
}
