// `flowstack experiments stats`: an experiment's statistics from counts on standard input, offline.
import ArgumentParser
import ExperimentStats
import Foundation
import JSON

struct Experiments: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with experiment results.",
        subcommands: [Stats.self])

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare variants from their counts: uplift, 95% CI, p-value, chance to win, sample-ratio check.",
            discussion: """
                Reads {"variants": [{"key", "sessions", "conversions", "weight"?}, …], "baseline"?: KEY} from standard \
                input (the baseline defaults to the first variant; variants without a weight are left out of the \
                sample-ratio check), or an array of such documents. The numbers are those of \
                GET /v1/experiments/{key}/report, computed by the same code: gbstats 0.8.0's TwoSidedTTest and \
                EffectBayesianABTest on proportions with default configurations, and its check_srm.
                """)

        @Flag(help: "Print JSON (an array for an array of inputs) instead of a table.")
        var json = false

        func run() throws {
            let input = FileHandle.standardInput.readDataToEndOfFile()
            let document: JSONValue
            do throws(JSONParseError) {
                document = try JSONParser.parse(Array(input), limits: .storedData)
            } catch {
                printError("standard input: \(error)")
                throw ExitCode.cannotUse
            }
            let inputs = document.arrayValue ?? [document]
            var analyses: [ExperimentAnalysis] = []
            var failed = false
            for (index, input) in inputs.enumerated() {
                do throws(InvalidAnalysisInput) {
                    analyses.append(try ExperimentAnalysis.read(input))
                } catch {
                    failed = true
                    let prefix = document.arrayValue == nil ? "" : "/\(index)"
                    for problem in error.problems {
                        let location = prefix + problem.pointer
                        printError("\(location.isEmpty ? "/" : location): \(problem.message)")
                    }
                }
            }
            if failed { throw ExitCode.cannotUse }
            if json {
                var writer = JSONWriter()
                if document.arrayValue != nil { writer.beginArray() }
                for analysis in analyses { analysis.write(to: &writer) }
                if document.arrayValue != nil { writer.endArray() }
                FileHandle.standardOutput.write(Data(writer.takeBytes() + [UInt8(ascii: "\n")]))
            } else {
                print(analyses.map(Self.table).joined(separator: "\n"))
            }
        }

        /// The analysis as a table a person reads in a terminal.
        static func table(_ analysis: ExperimentAnalysis) -> String {
            var rows = [["variant", "sessions", "conversions", "rate", "uplift", "95% CI", "p-value", "chance to win"]]
            for (index, variant) in analysis.variants.enumerated() {
                var row = [variant.key, String(variant.units), String(variant.conversions),
                           variant.rate.map { percent($0, signed: false) } ?? "–"]
                switch analysis.comparisons[index] {
                case nil: row += ["baseline", "", "", ""]
                case .estimated(let estimate)?:
                    row += [percent(estimate.uplift), "[\(percent(estimate.lower)), \(percent(estimate.upper))]",
                            String(format: "%.4f", estimate.pValue), percent(estimate.chanceToWin, signed: false)]
                case .unavailable(let problem)?: row += ["–", "–", "–", "–  (\(problem.reason))"]
                }
                rows.append(row)
            }
            let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            var lines = rows.map { row in
                row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                    .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            }
            let ratio = analysis.sampleRatio
            lines.append("sample ratio: " + (ratio.pValue.map { String(format: "p = %.4g", $0) } ?? (ratio.reason ?? "")))
            if let warning = ratio.warning { lines.append("WARNING: \(warning)") }
            return lines.joined(separator: "\n")
        }

        static func percent(_ value: Double, signed: Bool = true) -> String {
            String(format: signed ? "%+.2f%%" : "%.2f%%", value * 100)
        }

        private func printError(_ line: String) {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}
