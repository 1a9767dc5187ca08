// `flowstack migrate`: applies the bundled migrations to a database file.
import ArgumentParser
import FlowStore

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade a database (a SQLite file or a PostgreSQL database) to this binary's schema.",
        discussion: """
            `serve` migrates at start as well; run this to do it ahead of a deploy. A SQLite file that a \
            flowstack serves is refused (stop it first); PostgreSQL serializes migrations itself. Exits 3 on a \
            database newer than this binary.
            """)

    @Option(name: .long, help: "SQLite file, or a PostgreSQL URL postgresql://USER@HOST:PORT/DB (env FLOWSTACK_DB).")
    var db: String?

    func run() throws {
        let location = try OpenStore.location(db)
        let path = location.redacted
        do {
            let store = try OpenStore.open(location, exclusive: true)
            let applied = try store.migrate()
            let version = try store.schemaVersion()
            try store.close()
            if applied.isEmpty {
                print("\(path): schema is up to date at version \(version).")
            } else {
                for migration in applied { print("applied \(String(format: "%04d", migration.version))_\(migration.name)") }
                print("\(path): schema is at version \(version).")
            }
        } catch let error as StoreError {
            throw FailureMessage(error)
        }
    }
}
