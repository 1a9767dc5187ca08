// Reads an option from the command line, else from a FLOWSTACK_* environment variable, else a default.
import ArgumentParser
import Foundation

/// Resolves options the way docs/configuration.md's table says: flag, then environment, then default.
struct Environment {
    var values: [String: String] = ProcessInfo.processInfo.environment

    func string(_ flag: String?, _ variable: String, default fallback: String) -> String {
        if let flag { return flag }
        if let value = values[variable], !value.isEmpty { return value }
        return fallback
    }

    func integer(_ flag: Int?, _ variable: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        let value: Int
        if let flag {
            value = flag
        } else if let text = values[variable], !text.isEmpty {
            guard let parsed = Int(text) else {
                throw ValidationError("\(variable)=\(text) is not a whole number.")
            }
            value = parsed
        } else {
            value = fallback
        }
        guard range.contains(value) else {
            throw ValidationError("\(variable) (or its option) must be in \(range.lowerBound)...\(range.upperBound); got \(value).")
        }
        return value
    }
}
