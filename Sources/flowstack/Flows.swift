// `flowstack flows validate`: checks flow definition files and prints each problem with its path.
// `flowstack flows graph`: draws them as SVG, DOT or Mermaid, as the server's graph routes do.
// `flowstack flows test`: runs flow tests (scenario files) against them, offline.
// Offline commands see only the definitions they are given (and the sample app with --with-sample).
import ArgumentParser
import FlowEngine
import FlowGraph
import FlowScenarios
import FlowServer
import JSON
import Foundation

struct Flows: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with flow definition files.",
        subcommands: [Validate.self, Graph.self, Test.self, Diff.self, Pull.self, Push.self, Replay.self])

    /// The files an argument list names: a folder stands for its `*.json` files (not its
    /// subfolders, so `flows/tests/` is not read as definitions); `report` hears a folder that
    /// cannot be listed.
    static func expand(_ arguments: [String], report: (String) -> Void) -> [String] {
        arguments.flatMap { argument -> [String] in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder), isFolder.boolValue else { return [argument] }
            return jsonFiles(in: argument, report: report)
        }
    }

    /// The catalog offline commands check and run: the sample app only when asked for, then the
    /// parsed definitions (replacing sample flows of the same name).
    static func catalog(_ parsed: [(file: String, definition: FlowDefinition)], withSample: Bool) -> FlowCatalog {
        var catalog = withSample ? BundledFlows.catalog().catalog : FlowCatalog()
        for (_, definition) in parsed { catalog.insert(definition) }
        return catalog
    }

    /// A problem for each flow defined by more than one file (the later file would silently win).
    static func duplicates(_ parsed: [(file: String, definition: FlowDefinition)]) -> [String] {
        var first: [String: String] = [:]
        var lines: [String] = []
        for (file, definition) in parsed {
            if let earlier = first[definition.name] {
                lines.append("\(file):/name: flow \(definition.name) is also defined by \(earlier); each flow is defined by one file")
            } else {
                first[definition.name] = file
            }
        }
        return lines
    }

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
                parsed.append((file, try FlowDefinition.parse(Array(data), uploading: true)))
            } catch {
                failed = true
                for problem in error.problems { report("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
            }
        }
        return (parsed, failed, unreadable)
    }

    /// Why `file` cannot be read, in words.
    /// The values of the flags in `arguments` (files named KEY.json, or folders of them), with the
    /// shipped flags under them when `withSample`; nil when neither is given (flag conditions are
    /// then not checked). What cannot be read or is no flag definition is reported.
    static func flagValues(_ arguments: [String], withSample: Bool, report: (String) -> Void) -> [String: [JSONValue]]? {
        guard withSample || !arguments.isEmpty else { return nil }
        var documents: [(key: String, bytes: [UInt8])] =
            withSample ? BundledFlags.documents.map { ($0.key, Array($0.text.utf8)) } : []
        for file in expand(arguments, report: report) {
            guard let data = FileManager.default.contents(atPath: file) else {
                report("\(file): \(whyUnreadable(file))")
                continue
            }
            documents.append((((file as NSString).lastPathComponent as NSString).deletingPathExtension, Array(data)))
        }
        let (values, problems) = FlagValues.read(documents)
        for problem in problems { report("flag \(problem.key):\(problem.pointer): \(problem.message)") }
        return values
    }

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
                Each file holds one definition; a folder stands for its *.json files (not its subfolders). Flows \
                a file names (push, present, replaceRoot, initial) must be defined by one of the files; with \
                --with-sample, the sample app the server ships (app, onboarding, home, modal) is there too, and a \
                file replaces the sample flow of the same name. A condition on a flag that --flags \
                (or, with --with-sample, the flags the server ships) does not define, or on a value no variant of \
                it has, is printed as FILE:POINTER: warning: message and does not fail the check; without either, \
                flag conditions are not checked.
                """)

        @Argument(help: "Definition files (JSON), or folders of them.")
        var files: [String]

        @Flag(help: "Check against the sample app too (app, onboarding, home, modal), as a fresh server has it.")
        var withSample = false

        @Option(help: "Flag definitions (files named KEY.json, or folders of them) that flow conditions are checked against.")
        var flags: [String] = []

        func run() throws {
            var listFailed = false
            let files = Flows.expand(self.files) { print($0); listFailed = true }
            if files.isEmpty {
                print("no definition files in \(self.files.joined(separator: ", "))")
                throw ExitCode.cannotUse
            }
            var (parsed, failed, unreadable) = Flows.read(files) { print($0) }
            unreadable = unreadable || listFailed
            for line in Flows.duplicates(parsed) {
                print(line)
                failed = true
            }
            let catalog = Flows.catalog(parsed, withSample: withSample)
            let flags = Flows.flagValues(self.flags, withSample: withSample) { print($0); unreadable = true }
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
                Each TESTS argument is a scenario file ({"scenarios": [...]}, see docs/flows.md, "Flow tests") or a \
                folder of them (its *.json files). They run against the definitions of --flows (a folder's *.json \
                files, or files) and nothing else; --with-sample adds the sample app the server ships, which \
                --flows then overrides flow by flow (one of the two is needed). Flags a scenario does not set are \
                evaluated from the flag definitions of --flags (a folder's *.json files, or files, each named for \
                its key), as for a new session; --with-sample adds the flags the server ships; a flag defined \
                nowhere has no value (a condition on it does not match). A scenario's \
                "client" ({"platform", "appVersion", "features"}) that cannot render these definitions gets no \
                session: its start is refused with unsupported-client, which start.expect.error may expect (the \
                server's test route instead falls back to earlier activated versions, which a folder does not \
                have). Exit status: \
                0 when every scenario passes, 1 when one fails, 3 when a file cannot be read or parsed.
                """)

        @Argument(help: "Scenario files, or folders of them (JSON).")
        var tests: [String]

        @Option(help: "The flow definitions to test: a folder (its *.json files) or a file; repeat for more.")
        var flows: [String] = []

        @Option(help: "Flag definitions the scenarios' sessions are evaluated with: a folder (its *.json files, each named for its key) or a file; repeat for more.")
        var flags: [String] = []

        @Flag(help: "Run on the sample app (and its flags) too, with --flows and --flags replacing what they name.")
        var withSample = false

        func validate() throws {
            if flows.isEmpty && !withSample {
                throw ValidationError("give the flows to test with --flows DIR (or --with-sample for the sample app the server ships)")
            }
        }

        func run() throws {
            var unreadable = false
            var catalog = withSample ? BundledFlows.catalog().catalog : FlowCatalog()
            if !flows.isEmpty {
                let files = Flows.expand(flows) { printError($0); unreadable = true }
                if files.isEmpty {
                    printError("no definition files in \(flows.joined(separator: ", "))")
                    unreadable = true
                }
                let (parsed, failed, _) = Flows.read(files) { printError($0) }
                unreadable = unreadable || failed
                for line in Flows.duplicates(parsed) {
                    printError(line)
                    unreadable = true
                }
                for (_, definition) in parsed { catalog.insert(definition) }
                for problem in catalog.validate() {
                    printError("\(flows.joined(separator: ",")):\(problem.path): \(problem.message)")
                    unreadable = true
                }
            }
            var flagDocuments: [(key: String, bytes: [UInt8])] =
                withSample ? BundledFlags.documents.map { ($0.key, Array($0.text.utf8)) } : []
            for file in Flows.expand(flags, report: { printError($0); unreadable = true }) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    printError("\(file): \(Flows.whyUnreadable(file))")
                    unreadable = true
                    continue
                }
                flagDocuments.append((((file as NSString).lastPathComponent as NSString).deletingPathExtension, Array(data)))
            }
            let (flagValues, flagProblems) = ScenarioFlags.read(flagDocuments)
            for problem in flagProblems {
                printError("flag \(problem.key):\(problem.pointer): \(problem.message)")
                unreadable = true
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
            // A flow that reads a flag no --flags file (nor a scenario's context) gives sees it
            // missing; say so, naming the flag and the flow, rather than test a flow with the
            // flag off without a word.
            let given = Set(flagDocuments.map(\.key))
            for name in catalog.names {
                for read in catalog.flagsRead(by: name) where !given.contains(read.key) {
                    let setBy = suites.filter { $0.suite.scenarios.contains { $0.context.flags[read.key] != nil } }.map(\.file)
                    let reach = setBy.isEmpty ? "" : " except in the scenarios of \(setBy.joined(separator: ", ")), which set it"
                    printError("warning: flow \(name) reads flag \(read.key) (\(read.path)), which --flags does not give: "
                               + "it is missing\(reach) (pass --flags with its definition, or --with-sample for the shipped ones)")
                }
            }
            let flags = flagValues
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
                Draws the flow given by --root (default: app when the files define it, else the first file's \
                flow) and every flow it reaches, taken from the files (a folder stands for its *.json files) and, \
                with --with-sample, from the sample app the server ships; with no file, draws the sample app. A \
                flow that none of them defines is drawn as an empty cluster. The same picture as \
                GET /v1/flows/{name}/graph. SVG is laid out by Graphviz (libgvc).
                """)

        @Argument(help: "Definition files (JSON), or folders of them.")
        var files: [String] = []

        @Flag(help: "Take the flows the files do not define from the sample app the server ships.")
        var withSample = false

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
            var listFailed = false
            let files = Flows.expand(self.files) { printError($0); listFailed = true }
            let (parsed, failed, _) = Flows.read(files) { printError($0) }
            if failed || listFailed { throw ExitCode.cannotUse }
            let catalog = Flows.catalog(parsed, withSample: withSample || self.files.isEmpty)
            let root = self.root
                ?? (parsed.contains { $0.definition.name == FlowCatalog.rootFlowName } ? FlowCatalog.rootFlowName : nil)
                ?? parsed.first?.definition.name ?? FlowCatalog.rootFlowName
            guard catalog[root] != nil else {
                throw ValidationError("there is no flow \(root) in the files\(withSample || self.files.isEmpty ? " or the sample app" : " (add --with-sample for the sample app's)")")
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
