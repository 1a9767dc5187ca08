/** @typedef {import('./http-transport.js').FlowRequest} FlowRequest */
/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** The requests of one session's turn, as `FlowSession` sends them (and tests check them). */
export class SessionRequests {
    /**
     * @param {string} sessionId
     * @param {string} token
     */
    constructor(sessionId: string, token: string);
    sessionId: string;
    token: string;
    /** @returns {Record<string, string>} */
    get authorization(): Record<string, string>;
    /** The session's path, its id escaped (it comes from the server, but a URL is no place to trust it). */
    get path(): string;
    /**
     * `POST …/actions` for one tap: `If-Match` on the version it was made at, so the server refuses
     * it on any other, and its idempotency key, so a retry of a lost answer is answered from the
     * log instead of applied twice. `predict` asks for the next screens' states, for a client with
     * no local engine to draw them.
     * @param {QueuedAction} item
     * @param {boolean} predict
     * @returns {FlowRequest}
     */
    post(item: QueuedAction, predict: boolean): FlowRequest;
    /**
     * `POST …/actions/batch` for queued taps, each with its key and version, in order.
     * @param {QueuedAction[]} items
     * @returns {FlowRequest}
     */
    batch(items: QueuedAction[]): FlowRequest;
    /**
     * `GET /v1/sessions/{id}?predict=true`: the confirmed state again, with its predictions.
     * @returns {FlowRequest}
     */
    reload(): FlowRequest;
    /**
     * `GET …/bundle`, revalidated with the tag of the one kept.
     * @param {string} [tag]
     * @returns {FlowRequest}
     */
    bundle(tag?: string | undefined): FlowRequest;
    /**
     * `POST …/events/ticket`: a short-lived ticket to open the event stream with no token in the URL.
     * @returns {FlowRequest}
     */
    ticket(): FlowRequest;
}
export type FlowRequest = import('./http-transport.js').FlowRequest;
export type QueuedAction = import('./client-event.js').QueuedAction;
