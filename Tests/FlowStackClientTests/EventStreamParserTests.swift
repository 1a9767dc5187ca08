// The Server-Sent Events reader, on its own: no connection.
@testable import FlowStackClient
import Testing

struct EventStreamParserTests {
    /// Events are cut at empty lines whatever the chunks, comments are skipped, CRLF is a newline,
    /// and the last id is kept for Last-Event-ID.
    @Test func splitsEventsAcrossChunks() {
        var parser = EventStreamParser()
        let text = ": keep-alive\n\nid: 5\r\nevent: state\r\ndata: {\"version\":5}\r\n\r\nid: 6\nevent: state\ndata: {\"a\":\ndata: 1}\n\nevent: deleted\ndata: {}\n\n"
        var events: [ServerSentEvent] = []
        for chunk in Array(text.utf8).chunked(7) { events += parser.feed(chunk) }
        #expect(events == [
            ServerSentEvent(id: "5", event: "state", data: "{\"version\":5}"),
            ServerSentEvent(id: "6", event: "state", data: "{\"a\":\n1}"),
            ServerSentEvent(id: "6", event: "deleted", data: "{}"),
        ])
    }
}

extension Array {
    fileprivate func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
