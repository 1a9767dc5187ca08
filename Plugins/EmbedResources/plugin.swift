// Build-tool plugin: embeds the repo's migrations/, flows/, flags/, schemas/, playground/ and openapi.yaml into
// the binary, so the one copy at the repo root is what every build (local, CI, Docker image) serves.
import Foundation
import PackagePlugin

@main
struct EmbedResources: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let inputs: [URL]
        let typeName: String
        switch target.name {
        case "FlowStore":
            typeName = "EmbeddedMigrations"
            // One folder per SQL dialect: migrations/sqlite/, migrations/postgresql/.
            inputs = try SQLDialectFolders.names.flatMap { dialect in
                try files(in: root.appending(path: "migrations").appending(path: dialect), withExtension: "sql")
            }
        case "FlowServer":
            typeName = "EmbeddedResources"
            inputs = [root.appending(path: "openapi.yaml")]
                + (try files(in: root.appending(path: "flows"), withExtension: "json"))
                + (try files(in: root.appending(path: "flags"), withExtension: "json"))
                + (try files(in: root.appending(path: "schemas"), withExtension: "json"))
                + (try files(in: root.appending(path: "playground"), withExtensions: ["html", "css", "js", "svg"]))
        default:
            return []
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "\(typeName).swift")
        return [.buildCommand(
            displayName: "Embedding \(inputs.count) files as \(typeName)",
            executable: try context.tool(named: "embed-resources").url,
            arguments: [output.path, typeName, root.path] + inputs.map(\.path),
            inputFiles: inputs,
            outputFiles: [output]
        )]
    }

    private func files(in directory: URL, withExtension ext: String) throws -> [URL] {
        try files(in: directory, withExtensions: [ext])
    }

    private func files(in directory: URL, withExtensions extensions: Set<String>) throws -> [URL] {
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { extensions.contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

/// The folders of migrations/, one per dialect the stores speak (FlowStore's `SQLDialect`).
enum SQLDialectFolders {
    static let names = ["sqlite", "postgresql"]
}
