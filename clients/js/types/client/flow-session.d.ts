/**
 * A new idempotency key: a UUIDv7 (RFC 9562, section 5.7), the Unix time in milliseconds in its
 * first 48 bits, then the version, 12 random bits, the variant and 62 random bits, written
 * lowercase. The server's index of keys leads by the key, so keys that sort by time are added at
 * its end instead of on a random page: a keyed action costs the server less than under a random
 * (v4) key, which it still takes. Keys made in one millisecond are not ordered among themselves;
 * 74 random bits keep them apart. The random bits come from `crypto.getRandomValues`, which
 * browsers, node 19+ and React Native (with its usual polyfill) have as a global. Node 18 has it
 * only with `--experimental-global-webcrypto`: there, set `globalThis.crypto = webcrypto` from
 * `node:crypto` before starting a session, or pass `newKey`. The package imports no node module,
 * so it cannot take it itself.
 *
 * ```js
 * randomKey();  // '019a1b2c-3d4e-7f60-9a1b-2c3d4e5f6071'
 * ```
 * The time is `Date.now()`'s, a whole number of milliseconds after 1970.
 * @returns {string}
 */
export function randomKey(): string;
/**
 * What the app gives a session:
 * - `server`, `clientKey` (`fsk_…`, sent as `X-API-Key` when a session is created), `userId`,
 *   `userHash` (HMAC of the user id from the app's backend), `attributes`, `traits`;
 * - `client`: what this build draws (`{platform, appVersion, features}`);
 * - `store`: where the session is kept between launches (memory unless given);
 * - `engine`: runs the session's bundle locally (`localEngine({ SessionState, readAction })`, both from the engine module); without it, taps are shown
 *   from the server's predictions and a tap with none waits for its answer. It may be a promise
 *   of one (`import('@flowstack/client/engine').then(localEngine)`: the engine as a chunk of its
 *   own, loaded while the session starts): a new session does not wait for it and draws on the
 *   predictions until it is there, as it does until the bundle comes; a session kept in the store
 *   that the server still knows (or that starts offline from the store) waits for it, since its
 *   bundle or its queued taps need it at once, but no longer than `engineWait` ms once the server
 *   has answered or not (5,000 unless given; `Infinity` waits for ever): then it starts without
 *   it, as a new session does, and takes it when it comes (the kept bundle at once, when it is at
 *   the confirmed version). One that fails to load leaves the session on the predictions, and
 *   `engineError` says why;
 * - `usesPredictions`: whether to show predictions when there is no local engine;
 * - `XMLHttpRequest`: what follows the event stream where `fetch` cannot stream a body (React
 *   Native); `globalThis.XMLHttpRequest` unless given, and `eventTransport` (`'auto'`, the default:
 *   `XMLHttpRequest` where the platform's `fetch` has no streaming body, as React Native's, or where
 *   a `fetch` answered without one, `fetch` otherwise; or `'fetch'`, `'xhr'`), `streamRenewAfter` (the characters such a stream holds before it is renewed, 4 Mi);
 * - `retry`, `timeout` (ms), `latency` (ms added before every request, to try the app on a slow
 *   network), `transport` or `fetch` (how requests reach the server), `sleep`, `newKey` and `now`
 *   (injected where a test needs control of time and keys; `newKey` also where the platform has
 *   no `crypto.getRandomValues`: it must return a new key, unique to the tap, on every call, as a
 *   UUID is; a key already used is refused. The default, `randomKey`, makes UUIDv7s: keys that
 *   sort by time cost the server less than random ones).
 *
 * @typedef {{server: string, clientKey?: string, userId: string, userHash?: string, attributes?: JSONObject,
 *   traits?: Record<string, string>, client?: {platform: string, appVersion: string, features: string[]},
 *   store?: SessionStore, engine?: EngineFactory | PromiseLike<EngineFactory>, engineWait?: number, usesPredictions?: boolean, retry?: RetryPolicy, timeout?: number, latency?: number,
 *   transport?: FlowTransport, fetch?: import('./http-transport.js').Fetch, sleep?: (ms: number) => Promise<void>,
 *   XMLHttpRequest?: import('./event-stream.js').XHRConstructor, eventTransport?: 'auto' | 'fetch' | 'xhr', streamRenewAfter?: number,
 *   newKey?: () => string, now?: () => string}} Configuration
 */
/**
 * The server refused to create or resume a session (a problem document: a 422
 * `unsupported-client`, a 403…), or answered something that is not a session.
 */
export class SessionFailure extends Error {
    /** @param {FlowAnswer} answer */
    constructor(answer: FlowAnswer);
    status: number;
    problem: import("./json.js").JSONObject | undefined;
    body: string | undefined;
}
/**
 * One FlowStack session seen from an app: taps show their next screen at once, are posted in the
 * background, confirmed or corrected, queued while offline, and the session follows other devices.
 *
 * ```js
 * const session = await FlowSession.start({ server: 'https://flows.example.com', userId: 'ada',
 *   store: new KeyValueSessionStore(localStorage), engine: localEngine({ SessionState, readAction }) });
 * session.subscribe((event) => { if (event.type === 'corrected') render(event.correction.to); });
 * const next = await session.send({ type: 'onboarding.showSecond' });   // no network wait
 * ```
 */
export class FlowSession {
    /**
     * Resumes the session kept in the store for this server and user, or starts a new one. A kept
     * session the server no longer knows (a 401 or 404 problem) is replaced by a new one, and
     * `lastRestart` (and a `restarted` event) says so, with the taps it dropped. Taps kept in the
     * store are sent, under the keys they were made with.
     *
     * When no working server answers (no answer, a 5xx, a body that is not FlowStack's, after the
     * retries) and the store kept the session's confirmed state, the session starts from the store
     * alone, offline: the local engine from the kept bundle, the kept taps replayed on it, a probe
     * of `/healthz` with backoff, and the queue sent as batches when the server is back.
     *
     * @param {Configuration} given
     * @returns {Promise<FlowSession>}
     * @throws {SessionFailure} when the server refuses to create the session (422 `unsupported-client`: "update the app")
     * @throws {Unreachable} when no working server answers and nothing is kept to start from
     */
    static start(given: Configuration): Promise<FlowSession>;
    /**
     * A session made from the store alone: the confirmed state, the bundle (its engine), the queued
     * taps replayed on it; offline, probing `/healthz`. Undefined when the store kept no state or
     * what it kept does not read.
     * @param {SessionConfiguration} configuration
     * @param {FlowTransport} transport
     * @param {StoredSession} kept
     */
    static restoredOffline(configuration: SessionConfiguration, transport: FlowTransport, kept: StoredSession): FlowSession | undefined;
    /**
     * @param {SessionConfiguration} configuration
     * @param {FlowTransport} transport
     * @param {StoredSession} stored
     * @param {ClientMachine} machine
     */
    constructor(configuration: SessionConfiguration, transport: FlowTransport, stored: StoredSession, machine: ClientMachine);
    configuration: SessionConfiguration;
    transport: import("./http-transport.js").FlowTransport;
    stored: import("./session-store.js").StoredSession;
    machine: ClientMachine;
    store: import("./session-store.js").SessionStore;
    retry: RetryPolicy;
    /** @type {(ms: number) => Promise<void>} */
    sleep: (ms: number) => Promise<void>;
    /** @type {() => string} */
    newKey: () => string;
    now: () => string;
    /** @type {string | undefined} */
    bundleTag: string | undefined;
    /** @type {(SessionEngine) | undefined} */
    bundleCache: (SessionEngine) | undefined;
    /** @type {number | undefined} */
    bundleTriedAt: number | undefined;
    /**
     * The bundle the server sent (or the store kept): its version, text and tag.
     * @type {{version: number, text: string, tag?: string} | undefined}
     */
    fetchedBundle: {
        version: number;
        text: string;
        tag?: string | undefined;
    } | undefined;
    /** Set when the engine came from the store: its bundle is revalidated once the drain is idle. */
    revalidateBundle: boolean;
    batchSupported: boolean;
    draining: boolean;
    forcedOffline: boolean;
    closed: boolean;
    /** @type {{cancelled: boolean} | undefined} */
    probe: {
        cancelled: boolean;
    } | undefined;
    /** @type {Map<string, {resolve: (state: NavigationState) => void, reject: (error: Error) => void}>} */
    waiters: Map<string, {
        resolve: (state: NavigationState) => void;
        reject: (error: Error) => void;
    }>;
    /** @type {Map<string, ActionRefused>} */
    refusals: Map<string, ActionRefused>;
    /** @type {Set<(event: ClientEvent) => void>} */
    listeners: Set<(event: ClientEvent) => void>;
    /** @type {Set<(state: NavigationState) => void>} */
    stateListeners: Set<(state: NavigationState) => void>;
    published: NavigationState;
    /**
     * Events and states on their way to the listeners, oldest first, each with the listeners
     * that were subscribed when it happened: one a listener causes (a tap as it draws, going
     * offline on an event) waits until the one it is handling has reached every listener.
     * @type {Array<{listeners: Set<(value: any) => void>, to: Array<(value: any) => void>, value: unknown}>}
     */
    deliveries: {
        listeners: Set<(value: any) => void>;
        to: ((value: any) => void)[];
        value: unknown;
    }[];
    /** True while `deliver` hands values to the listeners. */
    delivering: boolean;
    /** @type {Array<() => void>} */
    settleWaiters: (() => void)[];
    following: boolean;
    followWithTicket: boolean;
    /** @type {{cancel(): void} | undefined} */
    stream: {
        cancel(): void;
    } | undefined;
    streamGeneration: number;
    /** @type {string | undefined} */
    lastEventId: string | undefined;
    streamFailures: number;
    /** The event stream goes over `XMLHttpRequest`: asked for, or `fetch` showed it cannot stream. */
    streamsOverXHR: boolean;
    /** @type {number | undefined} */
    persistedConfirmedVersion: number | undefined;
    /** @type {number | undefined} */
    persistedBundleVersion: number | undefined;
    /** @type {WeakMap<QueuedAction, {action: FlowAction, kept: QueuedAction}>} */
    keptForms: WeakMap<import("./client-event.js").QueuedAction, {
        action: FlowAction;
        kept: QueuedAction;
    }>;
    /**
     * Saves run one after another, in the order they were made.
     * @type {Promise<void>}
     */
    saving: Promise<void>;
    /**
     * The last error the store threw (the save is retried with backoff until one succeeds).
     * @type {unknown}
     */
    lastStoreError: unknown;
    /**
     * Why the engine given as a promise did not load (the session draws on the predictions).
     * @type {unknown}
     */
    engineError: unknown;
    /** Whether an engine given as a promise is still to come (`settled()` waits for it). */
    engineAwaited: boolean;
    /**
     * An error the drain stopped on: a bug, never a network fault (those are replies).
     * @type {unknown}
     */
    lastDrainError: unknown;
    /**
     * The last error one of the app's listeners threw (the session goes on without it).
     * @type {unknown}
     */
    lastListenerError: unknown;
    /** Saves that failed in a row: the next is retried after the retry policy's delay for it. */
    saveFailures: number;
    /** True while a retry of a failed save is scheduled. */
    saveRetryScheduled: boolean;
    /**
     * The wait the last answer's `Retry-After` asked for (ms), until the drain hands it on.
     * @type {number | undefined}
     */
    lastRetryAfter: number | undefined;
    /** The least the probe waits before its first try (a `Retry-After` seen as it went offline). */
    probeWait: number;
    /**
     * Every event reported so far, oldest first (the last 1,000).
     * @type {ClientEvent[]}
     */
    history: ClientEvent[];
    /**
     * The last time the session was found gone and a new one started.
     * @type {Restart | undefined}
     */
    lastRestart: Restart | undefined;
    /**
     * Resumed online on the kept bundle: the first request the drain makes when idle revalidates it.
     * @param {SessionEngine} bundle
     * @param {StoredSession} kept
     */
    resumedOnline(bundle: SessionEngine, kept: StoredSession): void;
    afterStart(): void;
    /**
     * What `start` learnt of an engine given as a promise: why it failed, or, when it is still to
     * come, that it is taken when it does (`settled()` waiting for it up to `wait` ms).
     * @param {Promise<{factory: EngineFactory} | {error: unknown}> | undefined} loading
     * @param {unknown} error
     * @param {number} wait
     */
    engineAfterStart(loading: Promise<{
        factory: EngineFactory;
    } | {
        error: unknown;
    }> | undefined, error: unknown, wait: number): void;
    /**
     * The engine given as a promise, taken when it comes: the bundle the store kept, when it is at
     * the confirmed version (a kept session that did not wait for it), is loaded at once and its
     * kept taps replayed on it; otherwise the drain fetches the bundle and loads it; taps are drawn
     * on it from there.
     *
     * `settled()` waits for it `wait` ms at most (a new session's `engineWait`; none for a kept
     * session, which waited in `start`), so a chunk that never comes does not hold it for ever.
     * @param {Promise<{factory: EngineFactory} | {error: unknown}>} loading
     * @param {number} wait
     */
    engineComing(loading: Promise<{
        factory: EngineFactory;
    } | {
        error: unknown;
    }>, wait: number): void;
    /**
     * The engine came after the session started from the store: the bundle the store kept, when it
     * is at the confirmed version, becomes the local engine (revalidated by the drain when online),
     * and the kept taps show on it again.
     */
    loadKeptBundle(): void;
    /** What to show now: the confirmed state with the taps not yet confirmed applied. */
    get state(): NavigationState;
    /** The last state the server answered. */
    get confirmedState(): NavigationState;
    /** The session's id (`s_…`); a new one after the session was found gone. */
    get sessionId(): string;
    /** The session's token, as kept in the store. */
    get token(): string;
    /** Taps shown and not yet confirmed. */
    get pendingCount(): number;
    /** The taps not yet confirmed, oldest first, with their keys. */
    get pending(): import("./client-event.js").QueuedAction[];
    /** True while the server cannot be reached (or `setOffline(true)` said so). */
    get isOffline(): boolean;
    /** True when taps run on the local engine (the session's bundle is loaded). */
    get hasLocalEngine(): boolean;
    /** The session's flag values and experiment variants. */
    get flags(): SessionFlags;
    /**
     * The actions the screen on top can post now, from the local engine (with their params), or
     * else from the last answer's predictions (those that need no params), which are for the
     * confirmed state only: none while a tap shown ahead of them waits for its answer. A row tap
     * (local engine only: row taps are not predicted) has `rowKinds`, the kinds of rows it takes.
     * @returns {Array<{type: string, handledBy: string, interactive: boolean, params: Array<{name: string, type: string, required: boolean}>, rowKinds?: string[]}>}
     */
    get availableActions(): {
        type: string;
        handledBy: string;
        interactive: boolean;
        params: Array<{
            name: string;
            type: string;
            required: boolean;
        }>;
        rowKinds?: string[] | undefined;
    }[];
    /**
     * Calls `listener` with everything that happens: confirmations, corrections, other devices'
     * versions, offline and back online, restarts. Returns the function that stops it.
     * @param {(event: ClientEvent) => void} listener
     * @returns {() => void}
     */
    subscribe(listener: (event: ClientEvent) => void): () => void;
    /**
     * Calls `listener` with every state the app should show, in order: the one shown now first,
     * then each change (a tap shown at once, a correction, another device's version, a new
     * session after a restart). Returns the function that stops it.
     * @param {(state: NavigationState) => void} listener
     * @returns {() => void}
     */
    subscribeStates(listener: (state: NavigationState) => void): () => void;
    /** @param {ClientEvent[]} events */
    emit(events: ClientEvent[]): void;
    /** Sends the state shown to the state listeners when it changed. */
    publish(): void;
    /**
     * Hands the waiting events and states to the listeners, one at a time, each to every listener
     * before the next. A listener that taps or goes offline makes another while it is called: that
     * one waits its turn here, so no listener gets it before the one it follows, nor ends on a
     * state older than the one shown (as the Swift client's streams deliver them).
     */
    deliver(): void;
    /**
     * Calls one of the app's listeners. One that throws is the app's bug, not the session's: it must
     * not stop the drain (taps would never be sent, \`settled()\` and waiting taps never settle) nor
     * reject a \`send\` whose tap is queued (an app that retried would apply it twice). Its error is
     * kept in \`lastListenerError\` and reported with \`reportError\` where the platform has it (a
     * browser's console and \`error\` event).
     * @template T
     * @param {(value: T) => void} listener
     * @param {T} value
     */
    call<T>(listener: (value: T) => void, value: T): void;
    /**
     * Applies `action` and returns what to show, at once when the local engine (or a prediction)
     * can tell; then posts it with `If-Match` and an idempotency key in the background. The answer
     * confirms it, or corrects it (a `corrected` event). With neither engine nor prediction, it
     * waits for the answer.
     *
     * The tap is in the store before the promise resolves, unless the store fails (a full
     * `localStorage`): then the save is retried with backoff until it succeeds (`lastStoreError`
     * says why it failed) and the tap is still sent while the app runs. The promise does not reject
     * for a failed save: the tap is queued and goes to the server, so an app that sent it again
     * would apply it twice. A promise that rejects means the tap was not queued, except for a tap
     * that waited and was refused by the server or could not be answered (below).
     *
     * Each tap's idempotency key (`newKey`) must be new: a key already queued or on the wire is
     * refused, since the server would answer the second tap with the first's state (or 422
     * `idempotency-key-reused`).
     *
     * @param {FlowAction} action
     * @returns {Promise<NavigationState>}
     * @throws {TypeError} when the action is not one the client can post and keep (see
     *   `checkedAction`: a BigInt or a cycle in its params, a `from` that is not a string), or the
     *   key `newKey` gave is not new (nothing is queued)
     * @throws {Unreachable} when the session is closed (nothing is queued), or a tap that waited
     *   cannot be answered because the client is offline (it stays queued)
     * @throws the engine's refusal when the local engine refuses it (nothing is posted), or
     *   `ActionRefused` when a tap that waited was not taken by the server
     */
    send(action: FlowAction): Promise<NavigationState>;
    /**
     * Simulates losing the network (true) or getting it back (false): while offline, taps are
     * applied locally and queued; when back, the queue goes in batches.
     * @param {boolean} offline
     */
    setOffline(offline: boolean): void;
    /**
     * Resolves when nothing is queued or on the wire (after coming back online if need be) and an
     * engine given as a promise has come (and run the bundle, when online), or once the session is
     * closed or its drain stopped on a bug (`lastDrainError`).
     * @returns {Promise<void>}
     */
    settled(): Promise<void>;
    get isSettled(): boolean;
    notifySettled(): void;
    /**
     * Stops following events, probing and sending; the session stays on the server (and in the
     * store, with the taps not yet confirmed: the next `start` sends them). A tap still waiting for
     * its answer rejects with `Unreachable`, `settled()` resolves, and a later `send` rejects with
     * `Unreachable`. Nothing is written to the store after the promise resolves: an answer still on
     * the wire is not kept (the tap stays queued in the store and the next `start` sends it again
     * under its key, answered from the server's log), so a new session on the same store (a
     * remount) is not overwritten by this one.
     * @returns {Promise<void>} when the store has everything
     */
    close(): Promise<void>;
    drain(): void;
    /** Performs what the machine asks, one request at a time, and hands each reply back to it. */
    drainLoop(): Promise<void>;
    /**
     * Sends one request: the answer as a reply for the machine, or no answer.
     * @param {FlowRequest} request
     * @returns {Promise<Reply>}
     */
    perform(request: FlowRequest): Promise<Reply>;
    /**
     * The last answer asked for a wait (`Retry-After` on a 429 or 503): the machine's pause is at
     * least that long, and so is the probe's first wait when it went offline.
     */
    honourRetryAfter(): void;
    /** The requests of the session as it is now (a restart changes its id and token). */
    get requests(): SessionRequests;
    /**
     * Resolves the callers of taps that waited: with the state they show once they show one, with
     * the server's reason when they were not taken, and with `Unreachable` while offline (the tap
     * stays queued).
     */
    resolveWaiters(): void;
    /**
     * The session is gone (the machine read a 401 or 404 problem for it): a new one is created for
     * the same user and the machine restarts on it, reporting the taps it drops; a creation that
     * gets no usable answer is retried like any unknown outcome.
     */
    recreate(): Promise<void>;
    /** Fetches the session's bundle (revalidating the one kept) and loads it as the local engine. */
    refreshBundle(): Promise<void>;
    /**
     * @param {SessionEngine} bundle
     * @param {string} text
     * @param {string | undefined} tag
     */
    rememberBundle(bundle: SessionEngine, text: string, tag: string | undefined): void;
    /**
     * Probes `/healthz` with backoff until the server answers, then sends what is queued (after the
     * pause the machine owes for the unknown outcomes in a row, which do not start again at the
     * first delay).
     */
    startProbe(): void;
    backOnline(): void;
    /**
     * Writes the store when what it keeps changed: the queue (on every tap), the confirmed state
     * (when its version moves), the bundle (when the engine at the confirmed version is the one the
     * server sent). Saves go one after another; the promise is that of this one.
     * @returns {Promise<void>}
     */
    persist(): Promise<void>;
    /**
     * The tap as the store keeps it, made once per tap (again only if its action changed: a tap
     * that waited takes its prediction's), not for the whole queue on every tap.
     * @param {QueuedAction} item
     * @returns {QueuedAction}
     */
    keptForm(item: QueuedAction): QueuedAction;
    /**
     * Saves what the store keeps as it is now, after the saves before it. A save that fails is
     * retried with the retry policy's backoff (and by any later change) until one succeeds: a tap
     * the store lost would be lost with the app.
     * @returns {Promise<void>}
     */
    saveNow(): Promise<void>;
    scheduleSaveRetry(): void;
    /**
     * Follows the session's event stream (`GET …/events`, `Last-Event-ID` on reconnection, with
     * backoff): versions other devices make are adopted and reported as `remote`. With `ticket`,
     * each connection first asks `POST …/events/ticket` and opens `…/events?ticket=…` without the
     * token, as a browser's `EventSource` must.
     * @param {{ticket?: boolean}} [options]
     */
    follow(options?: {
        ticket?: boolean | undefined;
    } | undefined): void;
    /** Stops following the event stream. */
    stopFollowing(): void;
    stopStream(): void;
    connectEvents(): void;
    /**
     * @param {import('./event-stream.js').ServerSentEvent} event
     * @param {number} generation
     */
    receivedEvent(event: import('./event-stream.js').ServerSentEvent, generation: number): void;
    /** @param {number} generation */
    streamEnded(generation: number): Promise<void>;
}
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowAction = import('./navigation-state.js').FlowAction;
export type ClientEvent = import('./client-event.js').ClientEvent;
export type Restart = import('./client-event.js').Restart;
export type QueuedAction = import('./client-event.js').QueuedAction;
export type Reply = import('./client-machine.js').Reply;
export type Prediction = import('./client-machine.js').Prediction;
export type EngineState = import('./client-machine.js').EngineState;
export type FlowRequest = import('./http-transport.js').FlowRequest;
export type FlowAnswer = import('./http-transport.js').FlowAnswer;
export type FlowTransport = import('./http-transport.js').FlowTransport;
export type StoredSession = import('./session-store.js').StoredSession;
export type SessionStore = import('./session-store.js').SessionStore;
/**
 * The local engine as the session uses it: the machine's engine, with the session it is for, the
 * bundle it writes at its version (kept in the store), and the actions it offers.
 */
export type SessionEngine = import("./client-machine.js").EngineState & {
    readonly sessionId: string;
    bundle?(from: string): string;
    availableActions?(): Array<{
        type: string;
        handledBy: string;
        interactive: boolean;
        params: Array<{
            name: string;
            type: string;
            required: boolean;
        }>;
        rowKinds?: string[];
    }>;
};
/**
 * How a session makes its local engine from the bundle's text (`localEngine(engineModule)`, or a
 * test's double).
 */
export type EngineFactory = {
    fromBundle(text: string): SessionEngine;
};
/**
 * The configuration a running session holds: its engine, if any, is there (one given as a
 * promise is set once it has loaded).
 */
export type SessionConfiguration = Configuration & {
    engine?: EngineFactory;
};
/**
 * What the app gives a session:
 * - `server`, `clientKey` (`fsk_…`, sent as `X-API-Key` when a session is created), `userId`,
 *   `userHash` (HMAC of the user id from the app's backend), `attributes`, `traits`;
 * - `client`: what this build draws (`{platform, appVersion, features}`);
 * - `store`: where the session is kept between launches (memory unless given);
 * - `engine`: runs the session's bundle locally (`localEngine({ SessionState, readAction })`, both from the engine module); without it, taps are shown
 *   from the server's predictions and a tap with none waits for its answer. It may be a promise
 *   of one (`import('@flowstack/client/engine').then(localEngine)`: the engine as a chunk of its
 *   own, loaded while the session starts): a new session does not wait for it and draws on the
 *   predictions until it is there, as it does until the bundle comes; a session kept in the store
 *   that the server still knows (or that starts offline from the store) waits for it, since its
 *   bundle or its queued taps need it at once, but no longer than `engineWait` ms once the server
 *   has answered or not (5,000 unless given; `Infinity` waits for ever): then it starts without
 *   it, as a new session does, and takes it when it comes (the kept bundle at once, when it is at
 *   the confirmed version). One that fails to load leaves the session on the predictions, and
 *   `engineError` says why;
 * - `usesPredictions`: whether to show predictions when there is no local engine;
 * - `XMLHttpRequest`: what follows the event stream where `fetch` cannot stream a body (React
 *   Native); `globalThis.XMLHttpRequest` unless given, and `eventTransport` (`'auto'`, the default:
 *   `XMLHttpRequest` where the platform's `fetch` has no streaming body, as React Native's, or where
 *   a `fetch` answered without one, `fetch` otherwise; or `'fetch'`, `'xhr'`), `streamRenewAfter` (the characters such a stream holds before it is renewed, 4 Mi);
 * - `retry`, `timeout` (ms), `latency` (ms added before every request, to try the app on a slow
 *   network), `transport` or `fetch` (how requests reach the server), `sleep`, `newKey` and `now`
 *   (injected where a test needs control of time and keys; `newKey` also where the platform has
 *   no `crypto.getRandomValues`: it must return a new key, unique to the tap, on every call, as a
 *   UUID is; a key already used is refused. The default, `randomKey`, makes UUIDv7s: keys that
 *   sort by time cost the server less than random ones).
 */
export type Configuration = {
    server: string;
    clientKey?: string | undefined;
    userId: string;
    userHash?: string | undefined;
    attributes?: import("./json.js").JSONObject | undefined;
    traits?: Record<string, string> | undefined;
    client?: {
        platform: string;
        appVersion: string;
        features: string[];
    } | undefined;
    store?: import("./session-store.js").SessionStore | undefined;
    engine?: EngineFactory | PromiseLike<EngineFactory> | undefined;
    engineWait?: number | undefined;
    usesPredictions?: boolean | undefined;
    retry?: RetryPolicy | undefined;
    timeout?: number | undefined;
    latency?: number | undefined;
    transport?: import("./http-transport.js").FlowTransport | undefined;
    fetch?: import("./http-transport.js").Fetch | undefined;
    sleep?: ((ms: number) => Promise<void>) | undefined;
    XMLHttpRequest?: import("./event-stream.js").XHRConstructor | undefined;
    eventTransport?: "auto" | "fetch" | "xhr" | undefined;
    streamRenewAfter?: number | undefined;
    newKey?: (() => string) | undefined;
    now?: (() => string) | undefined;
};
import { ClientMachine } from "./client-machine.js";
import { RetryPolicy } from "./retry-policy.js";
import { NavigationState } from "./navigation-state.js";
import { ActionRefused } from "./client-event.js";
import { SessionFlags } from "./session-flags.js";
import { SessionRequests } from "./session-requests.js";
