// HTTPTransport: one request to the server over `fetch` (FlowTransport), and what came back.
import { Unreachable } from './client-event.js';

/**
 * One request to the server: method, path from `/`, query without `?`, headers, a JSON body.
 * @typedef {{method: string, path: string, query?: string, headers?: Record<string, string>, body?: string}} FlowRequest
 */

/**
 * An answer, whatever its status: the status, the headers that matter here, and the body as text.
 * @typedef {{status: number, etag?: string, contentType?: string, body: string}} FlowAnswer
 */

/**
 * How the client reaches the server: one request, one answer of any status; rejects with
 * `Unreachable` when there is no answer at all. `FetchTransport` is the one an app uses; tests
 * give their own (or wrap `fetch` to inject faults).
 * @typedef {{send(request: FlowRequest): Promise<FlowAnswer>}} FlowTransport
 */

/** @typedef {(input: string, init?: RequestInit) => Promise<Response>} Fetch */

/**
 * Sends requests with `fetch` (the platform's: browsers, React Native, node 18+), each bounded by
 * `timeout` milliseconds, after the simulated latency if one is set.
 */
export class FetchTransport {
  /**
   * @param {{server: string, fetch?: Fetch, timeout?: number, latency?: number,
   *   setTimeout?: (callback: () => void, ms: number) => unknown, clearTimeout?: (handle: any) => void}} options
   */
  constructor({ server, fetch: fetchFunction, timeout = 10000, latency = 0, setTimeout: schedule, clearTimeout: cancel }) {
    this.server = server.replace(/\/+$/, '');
    /** @type {Fetch} */
    this.fetch = fetchFunction ?? ((input, init) => globalThis.fetch(input, init));
    this.timeout = timeout;
    this.latency = latency;
    this.setTimeout = schedule ?? ((callback, ms) => globalThis.setTimeout(callback, ms));
    this.clearTimeout = cancel ?? ((handle) => globalThis.clearTimeout(handle));
  }

  /**
   * @param {string} path
   * @param {string} [query]
   */
  url(path, query) {
    return this.server + path + (query ? '?' + query : '');
  }

  /**
   * @param {FlowRequest} request
   * @returns {Promise<FlowAnswer>}
   */
  async send(request) {
    if (this.latency > 0) await new Promise((resolve) => this.setTimeout(() => resolve(undefined), this.latency));
    const controller = typeof AbortController === 'function' ? new AbortController() : undefined;
    const timer = controller ? this.setTimeout(() => controller.abort(), this.timeout) : undefined;
    /** @type {Record<string, string>} */
    const headers = { ...(request.headers ?? {}) };
    if (request.body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      let response;
      try {
        response = await this.fetch(this.url(request.path, request.query), {
          method: request.method, headers, body: request.body, signal: controller?.signal, cache: 'no-store',
        });
      } catch (error) {
        throw new Unreachable(controller?.signal.aborted ? `timed out after ${this.timeout} ms` : describe(error));
      }
      let body;
      try {
        body = await response.text();
      } catch (error) {
        // The status came but the body was cut: nothing says what happened.
        throw new Unreachable(`the answer was cut: ${describe(error)}`);
      }
      /** @type {FlowAnswer} */
      const answer = { status: response.status, body };
      const etag = response.headers.get('ETag');
      if (etag != null) answer.etag = etag;
      const contentType = response.headers.get('Content-Type');
      if (contentType != null) answer.contentType = contentType;
      return answer;
    } finally {
      if (timer !== undefined) this.clearTimeout(timer);
    }
  }
}

/**
 * An error in words, with its cause when fetch wraps one (node's "fetch failed").
 * @param {unknown} error
 * @returns {string}
 */
export function describe(error) {
  if (error instanceof Error) {
    const cause = /** @type {{cause?: unknown}} */ (error).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

/**
 * The answer as the machine reads it.
 * @param {FlowAnswer} answer
 * @returns {import('./client-machine.js').Reply}
 */
export function replyOf(answer) {
  return { status: answer.status, body: answer.body };
}
