// EventStream: one connection to a session's Server-Sent Events over fetch, read as it arrives.
import { describe } from './http-transport.js';

/**
 * One event of `text/event-stream`: `id`, `event` (`state`, `deleted`, …) and `data`.
 * @typedef {{id?: string, event: string, data: string}} ServerSentEvent
 */

/**
 * Splits text into events (lines `field: value`, an empty line ends an event; lines starting with
 * `:` are comments). Fed pieces as they arrive, cut anywhere.
 */
export class EventStreamParser {
  constructor() {
    this.buffer = '';
    /** @type {string | undefined} */
    this.id = undefined;
    this.event = '';
    /** @type {string[]} */
    this.data = [];
  }

  /**
   * @param {string} text
   * @returns {ServerSentEvent[]}
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
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return events;
  }
}

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
