// `flowstack admin-token --reset`: a new bootstrap admin token, kept hashed in the database.
import ArgumentParser
import FlowServer
import FlowStore

struct AdminToken: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token",
        abstract: "Replace the bootstrap admin token kept (hashed) in the database, and print the new one.",
        discussion: """
            Without FLOWSTACK_ADMIN_TOKEN, the first `serve` on a database makes the admin token, prints it once \
            and keeps only its SHA-256 in the database; later starts, and every node on a PostgreSQL database, use \
            that one. The token cannot be shown again: `admin-token --reset` makes a new one, prints it, and the old \
            one opens nothing from then on, on every running node at once (they read the kept hash at each admin \
            request). Works while a server runs. The audit log records adminToken.reset by `cli`. Servers started \
            with FLOWSTACK_ADMIN_TOKEN take that token instead and are not affected.
            """)

    @Option(name: .long, help: "SQLite file, or a PostgreSQL URL postgresql://USER@HOST:PORT/DB (env FLOWSTACK_DB).")
    var db: String?

    @Flag(name: .long, help: "Make a new admin token (required: the kept one cannot be shown).")
    var reset = false

    func run() throws {
        guard reset else {
            throw ValidationError("the admin token is kept only as its SHA-256 and cannot be shown; --reset makes a new one.")
        }
        let location = try OpenStore.location(db)
        do {
            // Not exclusive: a reset while the server runs is the point; the schema is the server's.
            let store = try OpenStore.open(location, exclusive: false)
            try store.migrate()
            let token = try Application.resetAdminToken(store: store, credential: "cli")
            try store.close()
            print("admin token (new; the old one no longer opens anything): \(token)")
        } catch let error as StoreError {
            throw FailureMessage(error)
        }
    }
}
