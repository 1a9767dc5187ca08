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

/// The flags a fresh server ships with (the repo's flags/*.json): `eu-face-scan`.
public enum BundledFlags {
    /// Each flag's key (its file name without `.json`) and definition text.
    public static let documents: [(key: String, text: String)] = EmbeddedResources.files
        .filter { $0.path.hasPrefix("flags/") && $0.path.hasSuffix(".json") }
        .map { (String($0.path.dropFirst("flags/".count).dropLast(".json".count)), $0.text) }
}
