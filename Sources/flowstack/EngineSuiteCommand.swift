// `flowstack engine-suite`: generate the engine conformance suite from its sources, run the Swift engine as a conformance runner, print coverage.
import ArgumentParser
import EngineSuite
import Foundation
import JSON

struct EngineSuiteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine-suite",
        abstract: "The engine conformance suite (engine-suite/README.md): generate its cases, run the Swift engine's runner.",
        subcommands: [Generate.self, Run.self]
    )

    /// `flowstack engine-suite generate`: every source of `--sources` through the engine into `--out`.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Generate the cases from their sources; print the coverage table; fail (1) when a feature has no case.",
            discussion: """
                Each SOURCES/*.json is a case source; a string `definitions` or `flags` names a folder \
                (relative to the source) of *.json definitions or flags (a flag's key is its file's \
                name). The folder OUT/cases is replaced by the generated *.jsonl cases.
                """)

        @Option(help: "The folder of case sources.") var sources = "engine-suite/sources"
        @Option(help: "The suite's folder; its cases/ folder is rewritten.") var out = "engine-suite"

        func run() throws {
            let files = try jsonFiles(in: sources)
            guard !files.isEmpty else { throw FailureMessage("\(sources): no *.json case sources") }
            var generated: [GeneratedCase] = []
            for file in files {
                let base = (sources as NSString).appendingPathComponent(file)
                var source = try readJSON(base)
                if var object = source.objectValue {
                    let folder = (base as NSString).deletingLastPathComponent
                    for key in ["definitions", "flags"] {
                        guard let path = object[key]?.stringValue else { continue }
                        object[key] = .object(try folderMembers((folder as NSString).appendingPathComponent(path), keyedByName: key == "definitions"))
                    }
                    source = .object(object)
                }
                do throws(CaseSourceError) {
                    generated += try CaseGenerator.generate(source: source, named: (file as NSString).deletingPathExtension)
                } catch {
                    throw FailureMessage("\(base):\(error)", status: .checkFailed)
                }
            }
            let names = generated.map(\.name)
            if Set(names).count != names.count { throw FailureMessage("two cases share a name", status: .checkFailed) }
            let casesFolder = (out as NSString).appendingPathComponent("cases")
            try? FileManager.default.removeItem(atPath: casesFolder)
            try FileManager.default.createDirectory(atPath: casesFolder, withIntermediateDirectories: true)
            for generatedCase in generated {
                let path = (casesFolder as NSString).appendingPathComponent(generatedCase.name + ".jsonl")
                guard FileManager.default.createFile(atPath: path, contents: Data(generatedCase.bytes)) else {
                    throw FailureMessage("\(path): cannot write the case")
                }
            }
            // The feature list, for harnesses in any language (scripts/engine_suite.py prints its table from it).
            let entries = EngineSuite.features.map { feature -> String in
                var writer = JSONWriter()
                writer.writeValue(["feature": .string(feature.name), "meaning": .string(feature.meaning)])
                return String(decoding: writer.takeBytes(), as: UTF8.self)
            }
            let featureList = "[\n" + entries.joined(separator: ",\n") + "\n]\n"
            let featuresPath = (out as NSString).appendingPathComponent("features.json")
            guard FileManager.default.createFile(atPath: featuresPath, contents: Data(featureList.utf8)) else {
                throw FailureMessage("\(featuresPath): cannot write the feature list")
            }
            let table = CoverageTable(generated)
            print(table.text)
            let steps = generated.reduce(0) { $0 + ($1.lines.count - 1) / 2 }
            print("\(generated.count) cases, \(steps) lines answered, in \(casesFolder)")
            if !table.uncovered.isEmpty {
                throw FailureMessage("no case exercises \(table.uncovered.joined(separator: ", "))", status: .checkFailed)
            }
        }

        private func jsonFiles(in folder: String) throws -> [String] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                throw FailureMessage("\(folder): cannot read the folder")
            }
            return names.filter { $0.hasSuffix(".json") }.sorted()
        }

        private func readJSON(_ path: String) throws -> JSONValue {
            guard let data = FileManager.default.contents(atPath: path) else { throw FailureMessage("\(path): cannot read the file") }
            do {
                return try JSONParser.parse([UInt8](data), limits: .storedData)
            } catch {
                throw FailureMessage("\(path): not JSON: \(error)")
            }
        }

        /// The *.json files of `folder` as members named by their `name` (definitions) or by the
        /// file's name (flags), in name order.
        private func folderMembers(_ folder: String, keyedByName: Bool) throws -> JSONObject {
            var members: [JSONObject.Member] = []
            for file in try jsonFiles(in: folder) {
                let value = try readJSON((folder as NSString).appendingPathComponent(file))
                let key = keyedByName ? (value.objectValue?["name"]?.stringValue ?? "") : (file as NSString).deletingPathExtension
                members.append(.init(key: key, value: value))
            }
            return JSONObject(members.sorted { $0.key < $1.key })
        }
    }

    /// `flowstack engine-suite run`: the Swift engine's conformance runner on stdin and stdout.
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The Swift engine's conformance runner: JSON lines in ({\"bundle\"}, {\"action\"}, {\"available\"}), one answer line out for each.",
            discussion: "engine-suite/README.md describes the protocol. Needs no database.")

        func run() throws {
            var runner = EngineRunner()
            let output = FileHandle.standardOutput
            while let line = readLine(strippingNewline: true) {
                if line.isEmpty { continue }
                var answer = runner.answer(Array(line.utf8))
                answer.append(UInt8(ascii: "\n"))
                output.write(Data(answer))
            }
        }
    }
}
