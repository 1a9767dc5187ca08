// `flowstack migrate`: applies the bundled migrations to a database file.
import ArgumentParser
import FlowStore

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade a database file to this binary's schema.",
        discussion: "`serve` migrates at start as well; run this to do it ahead of a deploy. Exits 1 on a database newer than this binary.")

    @Option(name: .long, help: "SQLite file (env FLOWSTACK_DB).")
    var db: String?

    func run() throws {
        let path = Environment().string(db, "FLOWSTACK_DB", default: "./flowstack.sqlite")
        do {
            let store = try FlowStore(path: path)
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
            throw FailureMessage(error.description)
        }
    }
}

/// An error whose message is printed as it is, with exit status 1.
struct FailureMessage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
