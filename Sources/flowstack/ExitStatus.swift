// The exit statuses of every `flowstack` command, in one place (docs/configuration.md, "Exit status").
import ArgumentParser
import FlowStore
import Foundation

extension ExitCode {
    /// 1: the command ran and its check failed (`flows validate` found a problem, a flow test failed).
    static let checkFailed = ExitCode(1)
    /// 2: the command line is wrong (an unknown option, a bad value, a command that does not
    /// apply to this database); the subcommand's usage is printed.
    static let usage = ExitCode(2)
    /// 3: an input or the database cannot be used, and trying again will not help: a missing or
    /// unreadable file, input that does not parse, a SQLite file that cannot be opened or that
    /// another flowstack serves, a database that refuses the login or is newer than this binary.
    static let cannotUse = ExitCode(3)
    /// 4: the database did not answer in the time allowed (PostgreSQL unreachable, `--db-wait`);
    /// starting again later may work.
    static let unavailable = ExitCode(4)
}

/// An error whose message is printed as it is (after `Error: `), with its exit status.
struct FailureMessage: Error, CustomStringConvertible {
    let description: String
    let status: ExitCode
    init(_ description: String, status: ExitCode = .cannotUse) {
        self.description = description
        self.status = status
    }

    /// A store's error with its status: unavailable (4) when the database did not answer,
    /// cannot use (3) when it refused the login or cannot be used as it is.
    init(_ error: StoreError) {
        switch error {
        case .unavailable(_, let detail) where Serve.isRefusal(detail): self.init(error.description, status: .cannotUse)
        case .unavailable, .outcomeUnknown: self.init(error.description, status: .unavailable)
        case .unsupportedLocation: self.init(error.description, status: .usage)
        default: self.init(error.description, status: .cannotUse)
        }
    }
}

extension FlowStackCommand {
    /// Parses and runs a command the way ArgumentParser's `main()` does, with this tool's exit
    /// statuses: 2 (not ArgumentParser's 64) for every usage error, and a `ValidationError` thrown
    /// while running shows the usage of the subcommand that threw it, not the top-level one.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }  // --help, --version: stdout, 0
            printError(fullMessage(for: error))
            Foundation.exit(code == .validationFailure ? ExitCode.usage.rawValue : code.rawValue)
        }
        do {
            try command.run()
            Foundation.exit(0)
        } catch let error as FailureMessage {
            printError("Error: \(oneLine(error.description))")
            Foundation.exit(error.status.rawValue)
        } catch let error as StoreError {
            let failure = FailureMessage(error)
            printError("Error: \(oneLine(failure.description))")
            Foundation.exit(failure.status.rawValue)
        } catch let error as ValidationError {
            let usage = usageString(for: type(of: command))
            let name = usage.split(separator: " ").prefix { !"<[-".contains($0.first ?? "<") }.joined(separator: " ")
            printError("Error: \(error.message)\nUsage: \(usage)\n  See '\(name) --help' for more information.")
            Foundation.exit(ExitCode.usage.rawValue)
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch {
            // `help` (a command whose run throws the help request), and anything else ArgumentParser knows.
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }
            printError(fullMessage(for: error))
            Foundation.exit(code == .validationFailure ? ExitCode.usage.rawValue : code.rawValue)
        }
    }

    /// A message on one line: libpq's messages span several ("…failed: Connection refused\n\tIs the server running…").
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }
}
