// The sample app the server ships with (flows/ at the repository's root), as the client tests read it.
import FlowEngine
import Foundation

enum SampleApp {
    /// flows/, found from this file's place in the repository.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("flows").path

    /// The sample app's definitions, read once: a file that cannot be read is an empty
    /// definition, which the catalog reports as a problem (each test checks there is none).
    static let definitions: [(name: String, json: [UInt8])] = {
        ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"].map { name in
            (name, Array(((try? String(contentsOfFile: directory + "/\(name).json", encoding: .utf8)) ?? "").utf8))
        }
    }()

    /// The sample app's catalog, and the problems its definitions have (none, when flows/ is whole).
    static let parsed = FlowCatalog.parse(definitions.map { ($0.name, $0.json) })
}
