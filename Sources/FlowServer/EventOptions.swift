// How event streams behave (the options of SessionEventController and SessionEvents), and the
// clock of stream tickets.
import Foundation

/// How event streams behave.
public struct EventOptions: Sendable {
    /// A comment is written to each idle stream this often, so proxies keep it open.
    public var heartbeat: Duration = .seconds(15)
    /// On a shared database, how often the sessions streamed here are checked for versions
    /// committed through other nodes.
    public var watchInterval: Duration = .milliseconds(100)
    /// How long a stream ticket may wait before it is first used.
    public var ticketLifetime: Duration = .seconds(30)
    /// How long after its last stream ended a ticket may open the stream again (an
    /// EventSource reconnecting by itself to the same URL).
    public var reconnectWindow: Duration = .seconds(60)
    /// How long after it was made a ticket opens nothing any more, whatever its streams did;
    /// a stream it opened ends then (`event: expired`).
    public var ticketMaxLifetime: Duration = .seconds(3600)

    public init() {}
}

extension Application {
    static func milliseconds() -> Int {
        Int((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
