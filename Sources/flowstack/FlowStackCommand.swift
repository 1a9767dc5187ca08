// The `flowstack` command line: serve, migrate, and the flow tools.
import ArgumentParser

@main
struct FlowStackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flowstack",
        abstract: "A navigation-state server: flow-controller trees per session, over HTTP, stored in SQLite.",
        discussion: """
            Every option of `serve` can also come from an environment variable (FLOWSTACK_PORT, …);
            an option given on the command line wins over the environment.
            """,
        subcommands: [Serve.self, Migrate.self, Backup.self, Flows.self, Experiments.self],
        defaultSubcommand: nil
    )
}
