// Build-tool plugin: embeds the repo's migrations/, flows/, flags/, schemas/, playground/, the JavaScript
// client's modules (clients/js/src/, served under /sdk/) and openapi.yaml into the binary, so the one copy at the repo root is what every build (local, CI, Docker image) serves.
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
                // The package's modules, folder by folder, so a page imports them as they are (no build step).
                + (try SDKFolders.names.flatMap { folder in
                    let source = root.appending(path: "clients/js/src")
                    return try files(in: folder.isEmpty ? source : source.appending(path: folder), withExtension: "js")
                })
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

/// The folders of clients/js/src/ the server serves under /sdk/ ("" is the package's index), as
/// `Application.sdkFiles` names them; a new folder of the package is added here and to openapi.yaml.
enum SDKFolders {
    static let names = ["", "engine", "client"]
}

/// The folders of migrations/, one per dialect the stores speak (FlowStore's `SQLDialect`).
enum SQLDialectFolders {
    static let names = ["sqlite", "postgresql"]
}
