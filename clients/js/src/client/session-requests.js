// SessionRequests: the requests a session's turn makes (a tap, a batch of taps, a reload), built in one place.
import { batchItem, postedAction } from './client-event.js';

/** @typedef {import('./http-transport.js').FlowRequest} FlowRequest */
/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */

/** The requests of one session's turn, as `FlowSession` sends them (and tests check them). */
export class SessionRequests {
  /**
   * @param {string} sessionId
   * @param {string} token
   */
  constructor(sessionId, token) {
    this.sessionId = sessionId;
    this.token = token;
  }

  /** @returns {Record<string, string>} */
  get authorization() {
    return { Authorization: `Bearer ${this.token}` };
  }

  /** The session's path, its id escaped (it comes from the server, but a URL is no place to trust it). */
  get path() {
    return `/v1/sessions/${encodeURIComponent(this.sessionId)}`;
  }

  /**
   * `POST …/actions` for one tap: `If-Match` on the version it was made at, so the server refuses
   * it on any other, and its idempotency key, so a retry of a lost answer is answered from the
   * log instead of applied twice. `predict` asks for the next screens' states, for a client with
   * no local engine to draw them.
   * @param {QueuedAction} item
   * @param {boolean} predict
   * @returns {FlowRequest}
   */
  post(item, predict) {
    /** @type {FlowRequest} */
    const request = {
      method: 'POST', path: this.path + '/actions',
      headers: { ...this.authorization, 'If-Match': `"${item.version}"`, 'Idempotency-Key': item.key },
      body: JSON.stringify(postedAction(item.action)),
    };
    if (predict) request.query = 'predict=true';
    return request;
  }

  /**
   * `POST …/actions/batch` for queued taps, each with its key and version, in order.
   * @param {QueuedAction[]} items
   * @returns {FlowRequest}
   */
  batch(items) {
    return { method: 'POST', path: this.path + '/actions/batch', headers: this.authorization, body: JSON.stringify({ actions: items.map(batchItem) }) };
  }

  /**
   * `GET /v1/sessions/{id}?predict=true`: the confirmed state again, with its predictions.
   * @returns {FlowRequest}
   */
  reload() {
    return { method: 'GET', path: this.path, query: 'predict=true', headers: this.authorization };
  }

  /**
   * `GET …/bundle`, revalidated with the tag of the one kept.
   * @param {string} [tag]
   * @returns {FlowRequest}
   */
  bundle(tag) {
    /** @type {Record<string, string>} */
    const headers = { ...this.authorization };
    if (tag) headers['If-None-Match'] = tag;
    return { method: 'GET', path: this.path + '/bundle', headers };
  }

  /**
   * `POST …/events/ticket`: a short-lived ticket to open the event stream with no token in the URL.
   * @returns {FlowRequest}
   */
  ticket() {
    return { method: 'POST', path: this.path + '/events/ticket', headers: this.authorization };
  }
}
