// EventStream: one connection to a session's Server-Sent Events over fetch, read as it arrives.
import { describe } from './http-transport.js';

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
  constructor(options = {}) {
    const { limit = 8 << 20 } = options;
    /** The most characters one event (its unfinished line included) may hold. */
    this.limit = limit;
    /** Characters of `data` held for the event being read. */
    this.held = 0;
    this.buffer = '';
    /** @type {string | undefined} */
    this.id = undefined;
    this.event = '';
    /** @type {string[]} */
    this.data = [];
  }

  /** True between events: no line nor field of an unfinished event is held. */
  get idle() {
    return this.buffer === '' && this.data.length === 0 && this.event === '';
  }

  /**
   * @param {string} text
   * @returns {ServerSentEvent[]}
   * @throws {RangeError} when the event being read grows past `limit`
   */
  feed(text) {
    this.buffer += text;
    /** @type {ServerSentEvent[]} */
    const events = [];
    let newline;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      let line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (this.data.length > 0 || this.event !== '') {
          /** @type {ServerSentEvent} */
          const event = { event: this.event === '' ? 'message' : this.event, data: this.data.join('\n') };
          if (this.id !== undefined) event.id = this.id;
          events.push(event);
        }
        this.event = '';
        this.data = [];
        this.held = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') {
        this.data.push(value);
        this.held += value.length + 1;
      }
    }
    if (this.held + this.buffer.length > this.limit) {
      throw new RangeError(`an event of more than ${this.limit} characters: not a FlowStack event stream`);
    }
    return events;
  }
}

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
export function openEventStream({ fetch, url, headers, onEvent, onEnd }) {
  const controller = new AbortController();
  let ended = false;
  /**
   * @param {number | undefined} status
   * @param {string} detail
   * @param {boolean} [unsupported]
   */
  const end = (status, detail, unsupported = false) => {
    if (ended) return;
    ended = true;
    onEnd(status, detail, unsupported);
  };
  (async () => {
    let response;
    try {
      response = await fetch(url, { headers: { ...headers, Accept: 'text/event-stream' }, signal: controller.signal, cache: 'no-store' });
    } catch (error) {
      end(undefined, describe(error));
      return;
    }
    if (response.status !== 200 || !response.body) {
      try {
        await response.body?.cancel();
      } catch {
        // already closed
      }
      end(response.status, response.body ? `status ${response.status}` : 'no streaming body', response.status === 200 && !response.body);
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new EventStreamParser();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
          if (ended) return;
          onEvent(event);
        }
      }
      end(200, 'the stream ended');
    } catch (error) {
      controller.abort();
      end(200, describe(error));
    }
  })();
  return {
    cancel() {
      ended = true;
      controller.abort();
    },
  };
}

/**
 * Whether this platform's `fetch` can hand a body over as it arrives: its `Response` has a
 * `body` stream (browsers, node 18+). React Native's `fetch` (over its `XMLHttpRequest`) has
 * none, and does not even resolve before the whole body is in, which an event stream never is:
 * there the stream must go over `XMLHttpRequest` from the start.
 * @returns {boolean}
 */
export function fetchCanStream() {
  const response = /** @type {any} */ (globalThis).Response;
  return typeof response === 'function' && 'body' in response.prototype;
}

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
export function openXHREventStream({ XMLHttpRequest, url, headers, renewAfter = 1 << 22, onEvent, onEnd }) {
  const request = new XMLHttpRequest();
  const parser = new EventStreamParser();
  let ended = false;
  /** Characters of `responseText` already fed to the parser. */
  let read = 0;
  /**
   * @param {number | undefined} status
   * @param {string} detail
   * @param {boolean} [renew]
   */
  const end = (status, detail, renew = false) => {
    if (ended) return;
    ended = true;
    onEnd(status, detail, false, renew);
  };
  const take = () => {
    if (ended || request.status !== 200) return;
    const text = request.responseText ?? '';
    if (text.length <= read) return;
    const piece = text.slice(read);
    read = text.length;
    try {
      for (const event of parser.feed(piece)) {
        if (ended) return;
        onEvent(event);
      }
    } catch (error) {
      // Ended before the abort, whose `readystatechange` (DONE, status 0) would say "failed".
      end(200, describe(error));
      request.abort();
      return;
    }
    if (read > renewAfter && parser.idle && !ended) {
      end(200, `renewed after ${read} characters`, true);
      request.abort();
    }
  };
  request.onprogress = take;
  request.onreadystatechange = () => {
    if (request.readyState === 3) take();
    if (request.readyState !== 4) return;
    take();
    // status 0: the connection failed or was cut before an answer.
    const status = request.status === 0 ? undefined : request.status;
    end(status, status === undefined ? 'the connection failed' : status === 200 ? 'the stream ended' : `status ${status}`);
  };
  request.onerror = () => end(undefined, 'the connection failed');
  try {
    request.open('GET', url, true);
    for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
    request.setRequestHeader('Accept', 'text/event-stream');
    request.send();
  } catch (error) {
    end(undefined, describe(error));
  }
  return {
    cancel() {
      ended = true;
      request.abort();
    },
  };
}

/**
 * What `openXHREventStream` uses of an `XMLHttpRequest`: browsers' and React Native's have it.
 * @typedef {new () => {open(method: string, url: string, async: boolean): void,
 *   setRequestHeader(name: string, value: string): void, send(): void, abort(): void,
 *   readonly readyState: number, readonly status: number, readonly responseText: string,
 *   onprogress: (() => void) | null, onreadystatechange: (() => void) | null, onerror: (() => void) | null}} XHRConstructor
 */
