// `flowstack flows validate`: checks flow definition files and prints each problem with its path.
// `flowstack flows graph`: draws them as SVG, DOT or Mermaid, as the server's graph routes do.
import ArgumentParser
import FlowEngine
import FlowGraph
import FlowServer
import Foundation

struct Flows: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with flow definition files.",
        subcommands: [Validate.self, Graph.self])

    /// Reads and parses definition files; each unreadable file and each problem is reported as
    /// `FILE:POINTER: message`, and `failed` says whether there was any.
    static func read(_ files: [String], report: (String) -> Void) -> (parsed: [(file: String, definition: FlowDefinition)], failed: Bool) {
        var failed = false
        var parsed: [(file: String, definition: FlowDefinition)] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                report("\(file): cannot read the file")
                failed = true
                continue
            }
            do throws(DefinitionProblems) {
                parsed.append((file, try FlowDefinition.parse(Array(data))))
            } catch {
                failed = true
                for problem in error.problems { report("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
            }
        }
        return (parsed, failed)
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check flow definitions; print every problem as FILE:POINTER: message and exit 1 if any.",
            discussion: """
                Each file holds one definition. Flows a file names (push, present, replaceRoot, initial) must be \
                defined by one of the files or by the sample app the server ships (app, onboarding, home, modal); \
                a file overrides the sample flow of the same name.
                """)

        @Argument(help: "Definition files (JSON).")
        var files: [String]

        func run() throws {
            var (parsed, failed) = Flows.read(files) { print($0) }
            var catalog = BundledFlows.catalog().catalog
            for (_, definition) in parsed { catalog.insert(definition) }
            for (file, definition) in parsed {
                let problems = catalog.problems(for: definition.name)
                for problem in problems { print("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
                if problems.isEmpty { print("\(file): ok (flow \(definition.name))") } else { failed = true }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Graph: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw flow definitions: screens as nodes, actions as edges, flows as clusters.",
            discussion: """
                Draws the flow of the first file (or --root) and every flow it reaches, taken from the files or \
                from the sample app the server ships; with no file, draws the sample app. The same picture as \
                GET /v1/flows/{name}/graph. SVG is laid out by Graphviz (libgvc).
                """)

        @Argument(help: "Definition files (JSON).")
        var files: [String] = []

        @Option(help: "svg, dot or mermaid.")
        var format: String = "svg"

        @Option(help: "The flow to start from (default: the first file's flow, else app).")
        var root: String?

        @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
        var output: String?

        func run() throws {
            guard let format = GraphFormat(rawValue: format) else {
                throw ValidationError("--format must be svg, dot or mermaid; found \(format)")
            }
            let (parsed, failed) = Flows.read(files) { printError($0) }
            if failed { throw ExitCode(1) }
            var catalog = BundledFlows.catalog().catalog
            for (_, definition) in parsed { catalog.insert(definition) }
            let root = self.root ?? parsed.first?.definition.name ?? FlowCatalog.rootFlowName
            guard catalog[root] != nil else {
                throw ValidationError("there is no flow \(root) in the files or the sample app")
            }
            let graph = FlowGraph(catalog: catalog, root: root)
            let bytes: [UInt8]
            switch format {
            case .dot: bytes = Array(graph.dot().utf8)
            case .mermaid: bytes = Array(graph.mermaid().utf8)
            case .svg:
                guard graph.canLayOut else {
                    printError("the graph is too large to lay out (\(graph.nodes.count) screens, \(graph.edges.count) edges); use --format dot or mermaid")
                    throw ExitCode(1)
                }
                bytes = try Graphviz.shared.svg(dot: graph.dot())
            }
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    printError("cannot write \(output)")
                    throw ExitCode(1)
                }
            } else {
                FileHandle.standardOutput.write(Data(bytes))
            }
        }

        private func printError(_ line: String) {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}
