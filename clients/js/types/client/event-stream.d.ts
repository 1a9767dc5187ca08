/**
 * A live `GET …/events` request over `fetch` (which, unlike `EventSource`, can send the session's
 * token in a header and `Last-Event-ID` on reconnection): hands each event to `onEvent` and calls
 * `onEnd` once when the stream closes or fails, with the HTTP status when the server refused it.
 * Needs a streaming `fetch` body (browsers, node 18+); where `fetch` has none (React Native's), it
 * ends at once with `unsupported` set, and the session is followed by its own answers only.
 *
 * @param {{fetch: import('./http-transport.js').Fetch, url: string, headers: Record<string, string>,
 *   onEvent: (event: ServerSentEvent) => void, onEnd: (status: number | undefined, detail: string, unsupported?: boolean) => void}} options
 * @returns {{cancel(): void}}
 */
export function openEventStream({ fetch, url, headers, onEvent, onEnd }: {
    fetch: import('./http-transport.js').Fetch;
    url: string;
    headers: Record<string, string>;
    onEvent: (event: ServerSentEvent) => void;
    onEnd: (status: number | undefined, detail: string, unsupported?: boolean) => void;
}): {
    cancel(): void;
};
/**
 * One event of `text/event-stream`: `id`, `event` (`state`, `deleted`, …) and `data`.
 * @typedef {{id?: string, event: string, data: string}} ServerSentEvent
 */
/**
 * Splits text into events (lines `field: value`, an empty line ends an event; lines starting with
 * `:` are comments). Fed pieces as they arrive, cut anywhere.
 */
export class EventStreamParser {
    buffer: string;
    /** @type {string | undefined} */
    id: string | undefined;
    event: string;
    /** @type {string[]} */
    data: string[];
    /**
     * @param {string} text
     * @returns {ServerSentEvent[]}
     */
    feed(text: string): ServerSentEvent[];
}
/**
 * One event of `text/event-stream`: `id`, `event` (`state`, `deleted`, …) and `data`.
 */
export type ServerSentEvent = {
    id?: string;
    event: string;
    data: string;
};
