// Where the repository's own files are (openapi.yaml, flows/, schemas/, docs/), for the tests
// that check the server against them.
import Foundation

enum Repository {
    /// The repository's root, found from this file's place in it (Tests/FlowServerTests/Support/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../../..").standardizedFileURL

    /// A file or folder of the repository, by its path from the root.
    static func path(_ relative: String) -> URL { root.appending(path: relative) }
}
