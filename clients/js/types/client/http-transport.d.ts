/**
 * An error in words, with its cause when fetch wraps one (node's "fetch failed").
 * @param {unknown} error
 * @returns {string}
 */
export function describe(error: unknown): string;
/**
 * The answer as the machine reads it.
 * @param {FlowAnswer} answer
 * @returns {import('./client-machine.js').Reply}
 */
export function replyOf(answer: FlowAnswer): import('./client-machine.js').Reply;
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
    constructor({ server, fetch: fetchFunction, timeout, latency, setTimeout: schedule, clearTimeout: cancel }: {
        server: string;
        fetch?: Fetch | undefined;
        timeout?: number | undefined;
        latency?: number | undefined;
        setTimeout?: ((callback: () => void, ms: number) => unknown) | undefined;
        clearTimeout?: ((handle: any) => void) | undefined;
    });
    server: string;
    /** @type {Fetch} */
    fetch: Fetch;
    timeout: number;
    latency: number;
    setTimeout: ((callback: () => void, ms: number) => unknown) | ((callback: () => void, ms: number) => number);
    clearTimeout: (handle: any) => void;
    /**
     * @param {string} path
     * @param {string} [query]
     */
    url(path: string, query?: string | undefined): string;
    /**
     * @param {FlowRequest} request
     * @returns {Promise<FlowAnswer>}
     */
    send(request: FlowRequest): Promise<FlowAnswer>;
}
/**
 * One request to the server: method, path from `/`, query without `?`, headers, a JSON body.
 */
export type FlowRequest = {
    method: string;
    path: string;
    query?: string;
    headers?: Record<string, string>;
    body?: string;
};
/**
 * An answer, whatever its status: the status, the headers that matter here, and the body as text.
 */
export type FlowAnswer = {
    status: number;
    etag?: string;
    contentType?: string;
    body: string;
};
/**
 * How the client reaches the server: one request, one answer of any status; rejects with
 * `Unreachable` when there is no answer at all. `FetchTransport` is the one an app uses; tests
 * give their own (or wrap `fetch` to inject faults).
 */
export type FlowTransport = {
    send(request: FlowRequest): Promise<FlowAnswer>;
};
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;
