// `flowstack flows validate`: checks flow definition files and prints each problem with its path.
import ArgumentParser
import FlowEngine
import FlowServer
import Foundation

struct Flows: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with flow definition files.",
        subcommands: [Validate.self])

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
            var failed = false
            var parsed: [(file: String, definition: FlowDefinition)] = []
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("\(file): cannot read the file")
                    failed = true
                    continue
                }
                do throws(DefinitionProblems) {
                    parsed.append((file, try FlowDefinition.parse(Array(data))))
                } catch {
                    failed = true
                    for problem in error.problems { print("\(file):\(problem.path.isEmpty ? "/" : problem.path): \(problem.message)") }
                }
            }
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
}
