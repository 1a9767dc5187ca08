/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./navigation-state.js').NavigationState} NavigationState */
/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */
/**
 * An action the client showed ahead of the server (or is waiting on) and has not yet seen
 * confirmed. `version` is the version it was applied on (the `If-Match` it is posted with); `key`
 * its idempotency key, the same on every retry and in a batch after the app restarts;
 * `expected` the state the client showed for it (absent while it waits, or when it was restored
 * after a restart and not yet replayed on a bundle); `at` when the tap happened (RFC 3339).
 *
 * @typedef {{key: string, version: number, action: FlowAction, expected?: NavigationState, at?: string}} QueuedAction
 */
/**
 * The server disagreed with what the client showed: the client now shows `to`. `taps` are the
 * taps the server did not take, oldest first, with their keys; `problem` the server's reason.
 * `reason`: `differentAnswer` (the answer to a posted action differs from what was shown),
 * `versionMismatch` (another device acted first: 412, the state read again and adopted) or
 * `refused` (409, 422 or 400: rolled back to the server's state).
 *
 * @typedef {{from: NavigationState, to: NavigationState, taps: QueuedAction[], problem?: JSONValue,
 *   reason: 'differentAnswer' | 'versionMismatch' | 'refused'}} Correction
 */
/**
 * A session the server no longer knows (deleted, expired, its token refused), replaced by a new
 * one for the same user: why, in words; the new session's first state; the taps queued on the
 * old one, never stored and not sent; the status and problem the server answered.
 *
 * @typedef {{reason: string, state: NavigationState, dropped: QueuedAction[], status: number, problem?: JSONValue}} Restart
 */
/**
 * What the client reports as the session moves:
 * - `confirmed`: the server confirmed a state shown (or answered a tap that waited);
 * - `corrected`: the server's state differs, or it refused taps; the client now shows `correction.to`;
 * - `remote`: another device made a version; the client now shows it;
 * - `offline` / `online`: the server cannot be reached (taps queue) / is back (the queue goes);
 * - `restarted`: the session was gone and a new one started; its taps were dropped.
 *
 * @typedef {{type: 'confirmed', state: NavigationState} | {type: 'corrected', correction: Correction}
 *   | {type: 'remote', state: NavigationState} | {type: 'offline'} | {type: 'online'}
 *   | {type: 'restarted', restart: Restart}} ClientEvent
 */
/**
 * The actions of the taps a correction names.
 * @param {Correction} correction
 * @returns {FlowAction[]}
 */
export function refusedActions(correction: Correction): FlowAction[];
/**
 * The action as posted, with nothing empty in it: `{type, from?, row?, params?, interactive?}` (no empty
 * params, no `interactive: false`), so two spellings of one tap compare equal.
 *
 * @param {FlowAction} action
 * @returns {FlowAction}
 */
export function postedAction(action: FlowAction): FlowAction;
/**
 * The action as the client can keep and post it, or a `TypeError` that names what is wrong:
 * `type` a non-empty string, `from` and `row` strings when given, `interactive` a boolean when given, and
 * `params` an object of JSON values only (no BigInt, cycle, function, `NaN`, `Date` or other
 * class instance; members that are `undefined` are left out, as `JSON.stringify` does). It is
 * checked before a tap is queued: a tap the request cannot be written for would stop the drain,
 * and one the store cannot read back would lose the kept session at the next launch. The params
 * are copied, so an app that changes its object after `send` does not change the tap.
 *
 * @param {unknown} action
 * @returns {FlowAction}
 * @throws {TypeError}
 */
export function checkedAction(action: unknown): FlowAction;
/**
 * `{key, version, action, at?}`: a batch item as `POST …/actions/batch` takes it, and as the store
 * keeps a queued tap (without the state it showed: replayed on the bundle when read).
 *
 * @param {QueuedAction} item
 * @returns {{key: string, version: number, action: FlowAction, at?: string}}
 */
export function batchItem(item: QueuedAction): {
    key: string;
    version: number;
    action: FlowAction;
    at?: string;
};
/**
 * The tap as the store keeps it.
 * @param {QueuedAction} item
 * @returns {QueuedAction}
 */
export function keptItem(item: QueuedAction): QueuedAction;
/**
 * Whether two queued taps are the same (key, version, action, what they show).
 * @param {QueuedAction} a
 * @param {QueuedAction} b
 */
export function sameQueued(a: QueuedAction, b: QueuedAction): boolean;
/** A tap the client could not show (no engine, no prediction for it), and the server said no. */
export class ActionRefused extends Error {
    /**
     * @param {FlowAction} action
     * @param {number} status
     * @param {JSONValue | undefined} problem
     */
    constructor(action: FlowAction, status: number, problem: JSONValue | undefined);
    action: import("./navigation-state.js").FlowAction;
    status: number;
    problem: import("./json.js").JSONValue | undefined;
}
/**
 * No answer from the server: the connection was refused or cut, the request timed out, or what
 * came back was not HTTP. What it was sending may or may not have been applied: the client sends
 * it again under the same idempotency keys. `FlowSession.start` throws it when there is no
 * working server and nothing kept to start from ("offline at first launch").
 */
export class Unreachable extends Error {
    /** @param {string} detail */
    constructor(detail: string);
    detail: string;
}
export type JSONValue = import('./json.js').JSONValue;
export type NavigationState = import('./navigation-state.js').NavigationState;
export type FlowAction = import('./navigation-state.js').FlowAction;
/**
 * An action the client showed ahead of the server (or is waiting on) and has not yet seen
 * confirmed. `version` is the version it was applied on (the `If-Match` it is posted with); `key`
 * its idempotency key, the same on every retry and in a batch after the app restarts;
 * `expected` the state the client showed for it (absent while it waits, or when it was restored
 * after a restart and not yet replayed on a bundle); `at` when the tap happened (RFC 3339).
 */
export type QueuedAction = {
    key: string;
    version: number;
    action: FlowAction;
    expected?: NavigationState;
    at?: string;
};
/**
 * The server disagreed with what the client showed: the client now shows `to`. `taps` are the
 * taps the server did not take, oldest first, with their keys; `problem` the server's reason.
 * `reason`: `differentAnswer` (the answer to a posted action differs from what was shown),
 * `versionMismatch` (another device acted first: 412, the state read again and adopted) or
 * `refused` (409, 422 or 400: rolled back to the server's state).
 */
export type Correction = {
    from: NavigationState;
    to: NavigationState;
    taps: QueuedAction[];
    problem?: JSONValue;
    reason: 'differentAnswer' | 'versionMismatch' | 'refused';
};
/**
 * A session the server no longer knows (deleted, expired, its token refused), replaced by a new
 * one for the same user: why, in words; the new session's first state; the taps queued on the
 * old one, never stored and not sent; the status and problem the server answered.
 */
export type Restart = {
    reason: string;
    state: NavigationState;
    dropped: QueuedAction[];
    status: number;
    problem?: JSONValue;
};
/**
 * What the client reports as the session moves:
 * - `confirmed`: the server confirmed a state shown (or answered a tap that waited);
 * - `corrected`: the server's state differs, or it refused taps; the client now shows `correction.to`;
 * - `remote`: another device made a version; the client now shows it;
 * - `offline` / `online`: the server cannot be reached (taps queue) / is back (the queue goes);
 * - `restarted`: the session was gone and a new one started; its taps were dropped.
 */
export type ClientEvent = {
    type: 'confirmed';
    state: NavigationState;
} | {
    type: 'corrected';
    correction: Correction;
} | {
    type: 'remote';
    state: NavigationState;
} | {
    type: 'offline';
} | {
    type: 'online';
} | {
    type: 'restarted';
    restart: Restart;
};
