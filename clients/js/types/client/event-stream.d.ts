/**
 * A live `GET …/events` request over `fetch` (which, unlike `EventSource`, can send the session's
 * token in a header and `Last-Event-ID` on reconnection): hands each event to `onEvent` and calls
 * `onEnd` once when the stream closes or fails, with the HTTP status when the server refused it.
 * Needs a streaming `fetch` body (browsers, node 18+); where `fetch` has none (React Native's), it
 * ends at once with `unsupported` set, and the session goes on with `openXHREventStream`.
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
 * Whether this platform's `fetch` can hand a body over as it arrives: its `Response` has a
 * `body` stream (browsers, node 18+). React Native's `fetch` (over its `XMLHttpRequest`) has
 * none, and does not even resolve before the whole body is in, which an event stream never is:
 * there the stream must go over `XMLHttpRequest` from the start.
 * @returns {boolean}
 */
export function fetchCanStream(): boolean;
/**
 * The same stream over `XMLHttpRequest`, read at each `progress` event from the text received so
 * far: what React Native offers, whose `fetch` cannot stream a body but whose `XMLHttpRequest`
 * reports a response as it arrives (as browsers' does). Ends as `openEventStream` does.
 *
 * An `XMLHttpRequest` keeps all the text it received for as long as it is open, so a stream that
 * lives for hours would hold every state document it ever carried. Once it holds more than
 * `renewAfter` characters, between two events, it ends with `renew` set: the session reconnects at
 * once with `Last-Event-ID`, so nothing is missed and the old text is let go.
 *
 * @param {{XMLHttpRequest: XHRConstructor, url: string, headers: Record<string, string>, renewAfter?: number,
 *   onEvent: (event: ServerSentEvent) => void,
 *   onEnd: (status: number | undefined, detail: string, unsupported?: boolean, renew?: boolean) => void}} options
 * @returns {{cancel(): void}}
 */
export function openXHREventStream({ XMLHttpRequest, url, headers, renewAfter, onEvent, onEnd }: {
    XMLHttpRequest: XHRConstructor;
    url: string;
    headers: Record<string, string>;
    renewAfter?: number | undefined;
    onEvent: (event: ServerSentEvent) => void;
    onEnd: (status: number | undefined, detail: string, unsupported?: boolean, renew?: boolean) => void;
}): {
    cancel(): void;
};
/**
 * One event of `text/event-stream`: `id`, `event` (`state`, `deleted`, …) and `data`.
 * @typedef {{id?: string, event: string, data: string}} ServerSentEvent
 */
/**
 * Splits text into events (lines `field: value`, an empty line ends an event; lines starting with
 * `:` are comments). Fed pieces as they arrive, cut anywhere. An event (or a line) longer than
 * `limit` characters is no state document: `feed` throws rather than hold a stream that never
 * ends a line in memory.
 */
export class EventStreamParser {
    /** @param {{limit?: number}} [options] */
    constructor(options?: {
        limit?: number | undefined;
    } | undefined);
    /** The most characters one event (its unfinished line included) may hold. */
    limit: number;
    /** Characters of `data` held for the event being read. */
    held: number;
    buffer: string;
    /** @type {string | undefined} */
    id: string | undefined;
    event: string;
    /** @type {string[]} */
    data: string[];
    /** True between events: no line nor field of an unfinished event is held. */
    get idle(): boolean;
    /**
     * @param {string} text
     * @returns {ServerSentEvent[]}
     * @throws {RangeError} when the event being read grows past `limit`
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
/**
 * What `openXHREventStream` uses of an `XMLHttpRequest`: browsers' and React Native's have it.
 */
export type XHRConstructor = new () => {
    open(method: string, url: string, async: boolean): void;
    setRequestHeader(name: string, value: string): void;
    send(): void;
    abort(): void;
    readonly readyState: number;
    readonly status: number;
    readonly responseText: string;
    onprogress: (() => void) | null;
    onreadystatechange: (() => void) | null;
    onerror: (() => void) | null;
};
