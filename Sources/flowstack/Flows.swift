// `flowstack flows validate`: checks flow definition files and prints each problem with its path.
// `flowstack flows graph`: draws them as SVG, DOT or Mermaid, as the server's graph routes do.
// `flowstack flows test`: runs flow tests (scenario files) against them, offline.
import ArgumentParser
import FlowEngine
import FlowGraph
import FlowScenarios
import FlowServer
import Foundation

struct Flows: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with flow definition files.",
        subcommands: [Validate.self, Graph.self, Test.self, Replay.self])

    /// Reads and parses definition files; each unreadable file and each problem is reported as
    /// `FILE:POINTER: message`; `unreadable` says whether a file could not be read, `failed`
    /// whether any file could not be read or parsed.
    static func read(_ files: [String], report: (String) -> Void)
        -> (parsed: [(file: String, definition: FlowDefinition)], failed: Bool, unreadable: Bool) {
        var failed = false
        var unreadable = false
        var parsed: [(file: String, definition: FlowDefinition)] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                report("\(file): \(Flows.whyUnreadable(file))")
                failed = true
                unreadable = true
                continue
            }
            do throws(DefinitionProblems) {
                parsed.append((file, try FlowDefinition.parse(Array(data))))
            } catch {
                failed = true
                for problem in error.problems { report("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
            }
        }
        return (parsed, failed, unreadable)
    }

    /// Why `file` cannot be read, in words.
    static func whyUnreadable(_ file: String) -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isFolder) else { return "cannot read the file: there is no such file" }
        if isFolder.boolValue { return "cannot read the file: it is a folder" }
        return "cannot read the file: permission denied"
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check flow definitions; print every problem as FILE:POINTER: message and exit 1 if any (3 if a file cannot be read).",
            discussion: """
                Each file holds one definition. Flows a file names (push, present, replaceRoot, initial) must be \
                defined by one of the files or by the sample app the server ships (app, onboarding, home, modal); \
                a file overrides the sample flow of the same name. A condition on a flag the server does not ship \
                (flags/*.json), or on a value no variant of it has, is printed as FILE:POINTER: warning: message \
                and does not fail the check.
                """)

        @Argument(help: "Definition files (JSON).")
        var files: [String]

        func run() throws {
            var (parsed, failed, unreadable) = Flows.read(files) { print($0) }
            var catalog = BundledFlows.catalog().catalog
            for (_, definition) in parsed { catalog.insert(definition) }
            let flags = FlagValues.bundled()
            for (file, definition) in parsed {
                let problems = catalog.problems(for: definition.name, flags: flags)
                for problem in problems.errors { print("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
                // Warnings do not fail the check: flags change independently of flows.
                for warning in problems.warnings { print("\(file):\(warning.path.isEmpty ? "/" : warning.path): warning: \(warning.message)") }
                if problems.errors.isEmpty { print("\(file): ok (flow \(definition.name))") } else { failed = true }
            }
            if unreadable { throw ExitCode.cannotUse }
            if failed { throw ExitCode.checkFailed }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run flow tests against definition files; exit 1 naming each difference, 0 when all pass.",
            discussion: """
                Each TESTS argument is a scenario file ({"scenarios": [...]}, see the README, "Flow tests") or a \
                folder of them (its *.json files). They run against the sample app the server ships, with the \
                definitions of --flows DIR (its *.json files) in place of the flows they name. Flags a scenario \
                does not set are evaluated from the flags the server ships, as for a new session. A scenario's \
                "client" ({"platform", "appVersion", "features"}) that cannot render these definitions gets no \
                session: its start is refused with unsupported-client, which start.expect.error may expect (the \
                server's test route instead falls back to earlier activated versions, which a folder does not \
                have). Exit status: \
                0 when every scenario passes, 1 when one fails, 3 when a file cannot be read or parsed.
                """)

        @Argument(help: "Scenario files, or folders of them (JSON).")
        var tests: [String]

        @Option(help: "A folder of flow definitions (*.json) to test instead of the sample flows of the same name.")
        var flows: String?

        func run() throws {
            var unreadable = false
            var catalog = BundledFlows.catalog().catalog
            if let flows {
                let files = Flows.jsonFiles(in: flows) { printError($0); unreadable = true }
                let (parsed, failed, _) = Flows.read(files) { printError($0) }
                unreadable = unreadable || failed
                for (_, definition) in parsed { catalog.insert(definition) }
                for problem in catalog.validate() {
                    printError("\(flows):\(problem.path): \(problem.message)")
                    unreadable = true
                }
            }
            var suites: [(file: String, suite: FlowScenarioSuite)] = []
            for argument in tests {
                var isFolder: ObjCBool = false
                let files = FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) && isFolder.boolValue
                    ? Flows.jsonFiles(in: argument) { printError($0); unreadable = true } : [argument]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        printError("\(file): \(Flows.whyUnreadable(file))")
                        unreadable = true
                        continue
                    }
                    do throws(ScenarioProblems) {
                        suites.append((file, try FlowScenarioSuite.parse(Array(data))))
                    } catch {
                        for problem in error.problems { printError("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
                        unreadable = true
                    }
                }
            }
            if unreadable { throw ExitCode.cannotUse }
            if suites.isEmpty {
                printError("no scenario files in \(tests.joined(separator: ", "))")
                throw ExitCode.cannotUse
            }
            let flags = ScenarioFlags.bundled()
            var passed = 0
            var failed = 0
            for (file, suite) in suites {
                for result in suite.run(catalog: catalog, flags: flags) {
                    if result.passed {
                        passed += 1
                        print("\(file): \(result.name): ok (\(result.stepsRun) step\(result.stepsRun == 1 ? "" : "s"))")
                    } else {
                        failed += 1
                        print("\(file): \(result.name): FAILED")
                        for failure in result.failures { print("  \(failure.description) (\(failure.pointer))") }
                    }
                }
            }
            print("flows test: \(passed) passed, \(failed) failed")
            if failed > 0 { throw ExitCode.checkFailed }
        }

        private func printError(_ line: String) {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// The `*.json` files directly in `folder`, sorted; `report` hears when it cannot be listed.
    static func jsonFiles(in folder: String, report: (String) -> Void) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            report("\(folder): cannot list the folder")
            return []
        }
        return names.filter { $0.hasSuffix(".json") }.sorted().map { (folder as NSString).appendingPathComponent($0) }
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
            let (parsed, failed, _) = Flows.read(files) { printError($0) }
            if failed { throw ExitCode.cannotUse }
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
                    throw ExitCode.usage
                }
                bytes = try Graphviz.shared.svg(dot: graph.dot())
            }
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    printError("cannot write \(output)")
                    throw ExitCode.cannotUse
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
