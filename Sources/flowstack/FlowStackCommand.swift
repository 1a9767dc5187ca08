// The `flowstack` command line: serve, migrate, and the flow tools.
import ArgumentParser

@main
struct FlowStackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flowstack",
        abstract: "A navigation-state server: flow-controller trees per session, over HTTP, stored in SQLite or PostgreSQL.",
        discussion: """
            Every option of `serve` can also come from an environment variable (FLOWSTACK_PORT, …); \
            an option given on the command line wins over the environment.

            Exit status, for every command: 0 done; 1 a check failed (flows validate, flows test, \
            the tests of a flows push); 2 a usage error; 3 an input or the database cannot be used (a \
            missing or unreadable file, a SQLite file another flowstack uses, a refused login or admin \
            token); 4 the database did not answer within serve's --db-wait, or the server of flows \
            diff/pull/push could not be reached (starting again later may work).
            """,
        version: FlowStackVersion.number,
        subcommands: [Serve.self, Migrate.self, Backup.self, Flows.self, Experiments.self, Init.self, AdminToken.self, EngineSuiteCommand.self],
        defaultSubcommand: nil
    )
}
