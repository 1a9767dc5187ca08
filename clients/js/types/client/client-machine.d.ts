/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */
/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** @typedef {import('./client-event.js').ClientEvent} ClientEvent */
/** @typedef {import('./client-event.js').Correction} Correction */
/**
 * The local engine at one version, as the machine uses it: the engine's `SessionState` behind
 * `localEngine` (src/client/local-engine.js), or a test's double.
 * @typedef {{readonly version: number, applying(action: FlowAction): {next: EngineState}, document(): string}} EngineState
 */
/** @typedef {{action: FlowAction, state: NavigationState}} Prediction */
/**
 * What the driver must do next:
 * - `post`: post one action with `If-Match: "<version>"` and its idempotency key;
 * - `batch`: post these (the oldest queued, at most {@link ClientMachine.batchLimit}) as one batch;
 * - `reload`: read the session's state again (a 412 said something else acted);
 * - `create`: create a new session for the same user (the server said this one is gone);
 * - `pause`: wait `ms`, then ask again (the last request had an unknown outcome).
 * @typedef {{kind: 'post', item: QueuedAction} | {kind: 'batch', items: QueuedAction[]} | {kind: 'reload'}
 *   | {kind: 'create'} | {kind: 'pause', ms: number}} Command
 */
/**
 * What came back for a command: the status and body (text) as they came, or no answer
 * (connection refused or cut, timed out, not HTTP).
 * @typedef {{status: number, body: string} | {noAnswer: string}} Reply
 */
/**
 * What an answer is, before what it means for the queue.
 * @typedef {{kind: 'success', json: JSONObject} | {kind: 'refusal', status: number, problem: JSONObject}
 *   | {kind: 'versionMismatch', problem: JSONObject} | {kind: 'gone', status: number, problem: JSONObject}
 *   | {kind: 'unknown', detail: string}} Answer
 */
/**
 * What a tap did: `shown` at once (the state the engine or a prediction gave), or `waiting` for
 * the answer to `key` (no way to predict it).
 * @typedef {{kind: 'shown', state: NavigationState} | {kind: 'waiting', key: string}} TapResult
 */
/**
 * The turns of a FlowStack client as a value: what it shows, what the server confirmed, what is
 * queued, what each answer means, and, for each event, what to do next. `FlowSession` performs the
 * I/O and hands every answer back as it came (status and body); the tests drive it directly.
 *
 * ```js
 * const machine = new ClientMachine(confirmed);
 * machine.loaded(engineAtConfirmed);
 * machine.tap({ type: 'onboarding.showSecond', from: 'e3' }, 'k1');  // {kind: 'shown', state}
 * const command = machine.nextCommand();                             // {kind: 'post', item}
 * machine.handle({ status: 200, body }, command);                    // [{type: 'confirmed', state}]
 * ```
 *
 * The rules every answer goes through (DESIGN.md, "the client's contract"):
 * - a tap leaves the queue only when the server's answer says it is stored (200, `applied` or
 *   `skipped` in a batch), or when the server refused it or a tap before it (409, 412, 422, 400
 *   problems), and then it is named in a correction;
 * - any other answer (a 5xx, 429, a body that is not what the route answers, no answer at all)
 *   is an unknown outcome: the same request goes again under the same keys after a pause, and
 *   after `retry.attempts` tries the client goes offline and waits for the server;
 * - taps made while a request is on the wire stay queued and go next;
 * - a 401 or 404 problem for the session itself means it is gone: a new one is created and the
 *   queued taps are reported in a restart.
 */
export class ClientMachine {
    /** The most taps one batch carries (the server takes at most 100). */
    static get batchLimit(): number;
    /**
     * A client started again while the server cannot be reached, from what the store kept: the
     * confirmed state, the engine at that version (when kept), and the queued taps replayed on it,
     * so it shows what the user last saw; offline, so taps run locally and queue until the server
     * answers. Without an engine nothing can be replayed: it shows `confirmed`, the kept taps stay
     * queued (sent when back), and a new tap waits for the server.
     *
     * @param {NavigationState} confirmed
     * @param {EngineState | undefined} bundle
     * @param {QueuedAction[]} queue
     * @param {RetryPolicy} [retry]
     */
    static restoredOffline(confirmed: NavigationState, bundle: EngineState | undefined, queue: QueuedAction[], retry?: RetryPolicy | undefined): ClientMachine;
    /**
     * A prediction is for a tap when the type, tapped row, params and interactivity agree and
     * `from` is the same screen (a tap without `from` acts on the screen on top). A row tap
     * reaches its rule with the row's id and values, so a prediction of the plain action is not
     * one of it.
     * @param {FlowAction} predicted
     * @param {FlowAction} action
     * @param {string | undefined} top
     */
    static matches(predicted: FlowAction, action: FlowAction, top: string | undefined): boolean;
    /**
     * Sorts an answer: only the server's own problem documents refuse; a success must carry a JSON
     * object, and anything unexpected is an unknown outcome.
     * @param {Reply} reply
     * @param {number} [success]
     * @returns {Answer}
     */
    static classify(reply: Reply, success?: number | undefined): Answer;
    /**
     * A state document with its predictions.
     * @param {JSONValue} json
     * @returns {{state: NavigationState, predictions: Prediction[]}}
     * @throws {import('./navigation-state.js').MalformedState} when it is not a state
     */
    static read(json: JSONValue): {
        state: NavigationState;
        predictions: Prediction[];
    };
    /**
     * @param {JSONValue} json
     * @returns {{state: NavigationState, predictions: Prediction[]} | undefined}
     */
    static tryRead(json: JSONValue): {
        state: NavigationState;
        predictions: Prediction[];
    } | undefined;
    /**
     * @param {NavigationState} confirmed
     * @param {{predictions?: Prediction[], retry?: RetryPolicy}} [options]
     */
    constructor(confirmed: NavigationState, options?: {
        predictions?: Prediction[] | undefined;
        retry?: RetryPolicy | undefined;
    } | undefined);
    /** The last state the server answered. */
    confirmed: NavigationState;
    /** What the app shows: `confirmed` with the queued taps applied. */
    shown: NavigationState;
    /**
     * The local engine at `shown`, when the session's bundle is loaded and still valid.
     * @type {EngineState | undefined}
     */
    engine: EngineState | undefined;
    /**
     * The local engine at `confirmed`, for rolling back (and for the store to keep).
     * @type {EngineState | undefined}
     */
    confirmedEngine: EngineState | undefined;
    /**
     * The engine after each queued tap, to move `confirmedEngine` on as answers confirm them.
     * @type {Map<string, EngineState>}
     */
    enginesAfter: Map<string, EngineState>;
    /** The server's predictions for `confirmed`, used when there is no engine; kept until the answer that replaces them. */
    predictions: Prediction[];
    /**
     * Taps shown (or waiting) and not yet answered, oldest first.
     * @type {QueuedAction[]}
     */
    queue: QueuedAction[];
    /** How many of the oldest queued taps are on the wire (-1: a reload or a creation). */
    inFlight: number;
    /** True while the server cannot be reached (or keeps failing, or the app said so). */
    offline: boolean;
    /** True when the local engine is gone and the bundle must be fetched again. */
    needsBundle: boolean;
    /**
     * Set when the server said the session is gone: the next command creates a new one.
     * @type {{status: number, problem?: JSONValue} | undefined}
     */
    gone: {
        status: number;
        problem?: import("./json.js").JSONValue | undefined;
    } | undefined;
    /** How requests that got no usable answer are retried. */
    retry: RetryPolicy;
    /** Unknown outcomes in a row since the last try went out online (reset by any answer that says what happened, and when the server answers again). */
    failures: number;
    /**
     * Unknown outcomes in a row, across going offline and back (reset only by an answer that
     * says what happened): the backoff grows with it, so a server that answers `/healthz` but
     * fails every request (a persisting 500) is not asked at the first delay after every probe.
     */
    streak: number;
    /**
     * What the last unknown outcome was ("status 500", "no answer: timed out", …).
     * @type {string | undefined}
     */
    lastFailure: string | undefined;
    /** @type {number | undefined} */
    pauseOwed: number | undefined;
    /**
     * Keys of queued taps that have been on the wire (their action can no longer change).
     * @type {Set<string>}
     */
    sent: Set<string>;
    /**
     * Set after a 412: the state is read again, and the problem reported with the correction.
     * @type {{problem?: JSONValue} | undefined}
     */
    reloadPending: {
        problem?: import("./json.js").JSONValue | undefined;
    } | undefined;
    /**
     * A copy that shares nothing mutable with this one (states and engines are immutable values),
     * so a simulation can branch a machine or keep it as it was.
     * @returns {ClientMachine}
     */
    copy(): ClientMachine;
    /** True while a request is on the wire. */
    get busy(): boolean;
    /**
     * The session's bundle arrived: its state becomes the local engine if it is at the confirmed
     * version and nothing shown is queued; taps queued without a state shown (kept across a
     * restart, or waiting) are replayed on it.
     * @param {EngineState} bundle
     */
    loaded(bundle: EngineState): void;
    /**
     * Taps queued before the app restarted, put back in the queue (shown once the bundle loads and
     * they replay on it).
     * @param {QueuedAction[]} queued
     */
    restore(queued: QueuedAction[]): void;
    /**
     * Replays the queue on the engine as far as it applies; a tap that no longer applies (or was
     * made on another version) stays queued unshown, and so do those after it: the server decides
     * them, and a refusal is reported. Nothing is dropped here.
     * @param {EngineState} start
     */
    replayQueue(start: EngineState): void;
    /**
     * A tap: applied on the local engine (or matched to a prediction) and queued.
     *
     * @param {FlowAction} action
     * @param {string} key its idempotency key
     * @param {string} [at] when it happened (RFC 3339), sent with a batch
     * @returns {TapResult}
     * @throws the engine's refusal, when the local engine refuses the action (nothing is queued:
     *   the server would refuse it too)
     */
    tap(action: FlowAction, key: string, at?: string | undefined): TapResult;
    /**
     * The prediction of the last answer for `action`, when it is for the version confirmed: the
     * action to post (the tap, with `from` the screen the prediction was made from when the tap
     * named none, since the server keeps the action as posted) and the state it shows.
     * @param {FlowAction} action
     * @param {number} version
     * @returns {Prediction | undefined}
     */
    predicted(action: FlowAction, version: number): Prediction | undefined;
    /**
     * The state a queued tap shows, when it shows one (none while it waits).
     * @param {string} key
     */
    expected(key: string): NavigationState | undefined;
    /**
     * The next thing to do, if any: a pause owed after an unknown outcome, a new session for one
     * that is gone, a reload after a 412, then one action, or the oldest queued ones as a batch
     * (after being offline, or when taps came faster than answers). Nothing while offline or while
     * a request is on the wire.
     * @param {boolean} [batches] false for a server without the batch route
     * @returns {Command | undefined}
     */
    nextCommand(batches?: boolean | undefined): Command | undefined;
    /**
     * The answer (or the lack of one) to `command`, read by the rules above.
     * @param {Reply} reply
     * @param {Command} command
     * @returns {ClientEvent[]}
     */
    handle(reply: Reply, command: Command): ClientEvent[];
    /**
     * @param {Reply} reply
     * @param {QueuedAction} item
     * @returns {ClientEvent[]}
     */
    handlePost(reply: Reply, item: QueuedAction): ClientEvent[];
    /**
     * @param {Reply} reply
     * @param {QueuedAction[]} items
     * @returns {ClientEvent[]}
     */
    handleBatch(reply: Reply, items: QueuedAction[]): ClientEvent[];
    /**
     * @param {Reply} reply
     * @returns {ClientEvent[]}
     */
    handleReload(reply: Reply): ClientEvent[];
    /**
     * No usable answer: the taps stay queued under the same keys; after a pause the same request
     * goes again, and after `retry.attempts` tries in a row the client is offline until the driver
     * sees the server answer again (`reachable()`).
     * @param {string} detail
     * @returns {ClientEvent[]}
     */
    unknownOutcome(detail: string): ClientEvent[];
    /**
     * The server asked for a wait before the next try (`Retry-After` on a 429 or a 503, in
     * milliseconds): the pause owed is at least that long. Offline, the driver's probe waits it.
     * @param {number} ms
     */
    retryAfter(ms: number): void;
    /**
     * The server stored `key` (a post's 200, or its replay) and is at `state`.
     * @param {string} key
     * @param {NavigationState} state
     * @param {Prediction[]} [predictions]
     * @returns {ClientEvent[]}
     */
    answered(key: string, state: NavigationState, predictions?: Prediction[] | undefined): ClientEvent[];
    /**
     * The server's answer after `last` was stored: confirmed when it is what was shown; a tap that
     * showed nothing takes the answer as what to show; any other answer is adopted, and the taps
     * still queued (made on a state the server did not reach) are reported.
     * @param {NavigationState} state
     * @param {Prediction[]} predictions
     * @param {QueuedAction} last
     * @param {JSONValue} [refusal]
     * @returns {ClientEvent[]}
     */
    settle(state: NavigationState, predictions: Prediction[], last: QueuedAction, refusal?: import("./json.js").JSONValue | undefined): ClientEvent[];
    /**
     * The oldest queued tap, when it waits right after the confirmed state, is shown from the
     * answer's predictions if one is for it (so a tap made while the one before it was on the wire
     * waits one round trip, not two). Its action takes the prediction's `from` only if it never
     * went out under its key.
     */
    showFirstWaiting(): void;
    /**
     * The server refused a posted action (or a batch as a whole). A 412 asks for a reload; the
     * others roll back to the confirmed state, dropping the refused tap and those after it, which
     * are reported (even when nothing on screen changes: a tap that waited).
     * @param {string} key
     * @param {number} status
     * @param {JSONValue} [problem]
     * @returns {ClientEvent[]}
     */
    refused(key: string, status: number, problem?: import("./json.js").JSONValue | undefined): ClientEvent[];
    /**
     * The server's state, read after a 412: adopted, the queue dropped and reported.
     * @param {NavigationState} state
     * @param {Prediction[]} [predictions]
     * @returns {ClientEvent[]}
     */
    reloaded(state: NavigationState, predictions?: Prediction[] | undefined): ClientEvent[];
    /**
     * The answer to a batch of the `sent` oldest queued taps: `done` the keys applied or skipped
     * (already applied), `refusal` the problem that stopped it, `state` the session after it. Taps
     * made while it was on the wire stay queued (they follow the last one sent).
     * @param {number} sent
     * @param {Set<string>} done
     * @param {JSONValue | undefined} refusal
     * @param {NavigationState} state
     * @returns {ClientEvent[]}
     */
    batchAnswered(sent: number, done: Set<string>, refusal: JSONValue | undefined, state: NavigationState): ClientEvent[];
    /**
     * A version from the event stream. Adopted when nothing of this client's is pending and it is
     * newer than the confirmed one; while taps are pending, their answers settle it.
     * @param {NavigationState} state
     * @returns {ClientEvent[]}
     */
    received(state: NavigationState): ClientEvent[];
    /**
     * The server said the session is gone: the next command creates a new one.
     * @param {number} status
     * @param {JSONValue} [problem]
     * @returns {ClientEvent[]}
     */
    sessionGone(status: number, problem?: import("./json.js").JSONValue | undefined): ClientEvent[];
    /**
     * The session is gone (`gone`, or found gone at start) and `state` is the new one's: it is
     * shown, and the taps queued on the old one are reported as dropped.
     * @param {NavigationState} state
     * @param {{predictions?: Prediction[], oldSession: string, status?: number, problem?: JSONValue}} options
     * @returns {ClientEvent[]}
     */
    restarted(state: NavigationState, { predictions, oldSession, status, problem }: {
        predictions?: Prediction[];
        oldSession: string;
        status?: number;
        problem?: JSONValue;
    }): ClientEvent[];
    /**
     * The answer to a `create` command could not be read (no answer, a 5xx): the same goes again.
     * @param {string} detail
     */
    createFailed(detail: string): import("./client-event.js").ClientEvent[];
    /** A request the driver could not make (a route the server lacks): its taps stay queued. */
    unsent(): void;
    /**
     * The server could not be reached (or the app said so): taps run locally and queue.
     * @returns {ClientEvent[]}
     */
    unreachable(): ClientEvent[];
    /**
     * The server answers again: what is queued goes next, after the backoff the unknown outcomes
     * in a row reached (none after an answer that said what happened, or an outage the app made).
     * @returns {ClientEvent[]}
     */
    reachable(): ClientEvent[];
    /**
     * Adopts the server's state, dropping the queue (reported unless empty); the local engine is
     * gone until the bundle is fetched again.
     * @param {NavigationState} state
     * @param {Prediction[]} predictions
     * @param {QueuedAction[]} dropped
     * @param {JSONValue | undefined} problem
     * @param {Correction['reason']} reason
     * @returns {ClientEvent[]}
     */
    adopt(state: NavigationState, predictions: Prediction[], dropped: QueuedAction[], problem: JSONValue | undefined, reason: Correction['reason']): ClientEvent[];
}
export { sameState };
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowAction = import('./navigation-state.js').FlowAction;
export type QueuedAction = import('./client-event.js').QueuedAction;
export type ClientEvent = import('./client-event.js').ClientEvent;
export type Correction = import('./client-event.js').Correction;
/**
 * The local engine at one version, as the machine uses it: the engine's `SessionState` behind
 * `localEngine` (src/client/local-engine.js), or a test's double.
 */
export type EngineState = {
    readonly version: number;
    applying(action: FlowAction): {
        next: EngineState;
    };
    document(): string;
};
export type Prediction = {
    action: FlowAction;
    state: NavigationState;
};
/**
 * What the driver must do next:
 * - `post`: post one action with `If-Match: "<version>"` and its idempotency key;
 * - `batch`: post these (the oldest queued, at most {@link ClientMachine.batchLimit }) as one batch;
 * - `reload`: read the session's state again (a 412 said something else acted);
 * - `create`: create a new session for the same user (the server said this one is gone);
 * - `pause`: wait `ms`, then ask again (the last request had an unknown outcome).
 */
export type Command = {
    kind: 'post';
    item: QueuedAction;
} | {
    kind: 'batch';
    items: QueuedAction[];
} | {
    kind: 'reload';
} | {
    kind: 'create';
} | {
    kind: 'pause';
    ms: number;
};
/**
 * What came back for a command: the status and body (text) as they came, or no answer
 * (connection refused or cut, timed out, not HTTP).
 */
export type Reply = {
    status: number;
    body: string;
} | {
    noAnswer: string;
};
/**
 * What an answer is, before what it means for the queue.
 */
export type Answer = {
    kind: 'success';
    json: JSONObject;
} | {
    kind: 'refusal';
    status: number;
    problem: JSONObject;
} | {
    kind: 'versionMismatch';
    problem: JSONObject;
} | {
    kind: 'gone';
    status: number;
    problem: JSONObject;
} | {
    kind: 'unknown';
    detail: string;
};
/**
 * What a tap did: `shown` at once (the state the engine or a prediction gave), or `waiting` for
 * the answer to `key` (no way to predict it).
 */
export type TapResult = {
    kind: 'shown';
    state: NavigationState;
} | {
    kind: 'waiting';
    key: string;
};
import { NavigationState } from "./navigation-state.js";
import { RetryPolicy } from "./retry-policy.js";
import { sameState } from "./navigation-state.js";
