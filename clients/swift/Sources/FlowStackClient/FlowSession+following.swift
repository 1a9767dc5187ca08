// FlowSession+following: the session's event stream, so versions other devices make are shown here.

import FlowEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

extension FlowSession {
    /// Follows the session's event stream (`GET …/events`, `Last-Event-ID` on reconnection, with
    /// backoff): versions other devices make are adopted and reported as `.remote`.
    public func follow() {
        guard !following, !closed else { return }
        following = true
        connectEvents()
    }

    /// Stops following the event stream.
    public func stopFollowing() {
        following = false
        stopStream()
    }

    func stopStream() {
        streamGeneration += 1
        stream?.cancel()
        stream = nil
    }

    /// `…/v1/sessions/{id}/events` on the configured server.
    var eventsURL: URL {
        var text = configuration.server.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/v1/sessions/\(stored.sessionId)/events") ?? configuration.server
    }

    func connectEvents() {
        guard following, !forcedOffline else { return }
        stopStream()
        let generation = streamGeneration
        var request = URLRequest(url: eventsURL, timeoutInterval: 60)
        request.setValue("Bearer \(stored.token)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventId { request.setValue(lastEventId, forHTTPHeaderField: "Last-Event-ID") }
        // Events go through one stream so they are handled in the order they came.
        let (events, continuation) = AsyncStream<ServerSentEvent?>.makeStream()
        stream = EventStreamConnection(request: request, onEvent: { continuation.yield($0) }, onEnd: { _ in
            continuation.yield(nil)
            continuation.finish()
        })
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                if let event {
                    await self.received(event, generation: generation)
                } else {
                    await self.streamEnded(generation: generation)
                }
            }
        }
    }

    func received(_ event: ServerSentEvent, generation: Int) {
        guard generation == streamGeneration else { return }
        streamFailures = 0
        if let id = event.id { lastEventId = id }
        switch event.event {
        case "state":
            guard let json = try? JSONParser.parse(event.data), let state = try? NavigationState(json: json) else { return }
            emit(machine.received(state))
            persist()
            if machine.needsBundle { drain() }
        case "deleted":
            following = false
        default:
            break
        }
    }

    func streamEnded(generation: Int) async {
        guard generation == streamGeneration, following else { return }
        streamFailures += 1
        let delay = configuration.retry.delay(before: streamFailures)
        try? await Task.sleep(for: delay)
        guard generation == streamGeneration, following else { return }
        connectEvents()
    }
}
