// The sample app's flow definitions (the repo's flows/*.json), embedded at build time.
import FlowEngine

/// The flows a fresh server serves: `app`, `onboarding`, `home`, `modal`.
public enum BundledFlows {
    /// Each definition's name (its file name without `.json`) and bytes.
    public static let documents: [(name: String, bytes: [UInt8])] = EmbeddedResources.files
        .filter { $0.path.hasPrefix("flows/") && $0.path.hasSuffix(".json") }
        .map { file in
            let name = String(file.path.dropFirst("flows/".count).dropLast(".json".count))
            return (name, Array(file.text.utf8))
        }

    /// The bundled definitions as a catalog, with every problem found in them (none, as shipped:
    /// a test checks it).
    public static func catalog() -> (catalog: FlowCatalog, problems: [DefinitionProblem]) {
        FlowCatalog.parse(documents)
    }
}
