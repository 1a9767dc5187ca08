// ClientEvent: what the client machine reports and keeps — a queued tap, a correction, a restart, an event, a refused tap.
import { sameJSON } from './json.js';

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
export function refusedActions(correction) {
  return correction.taps.map((tap) => tap.action);
}

/**
 * The action as posted, with nothing empty in it: `{type, from?, row?, params?, interactive?}` (no empty
 * params, no `interactive: false`), so two spellings of one tap compare equal.
 *
 * @param {FlowAction} action
 * @returns {FlowAction}
 */
export function postedAction(action) {
  /** @type {FlowAction} */
  const posted = { type: action.type };
  if (action.from != null) posted.from = action.from;
  if (action.row != null) posted.row = action.row;
  if (action.params != null && Object.keys(action.params).length > 0) posted.params = action.params;
  if (action.interactive) posted.interactive = true;
  return posted;
}

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
export function checkedAction(action) {
  const fields = /** @type {Record<string, unknown>} */ (action !== null && typeof action === 'object' && !Array.isArray(action) ? action : undefined);
  if (!fields) throw new TypeError(`an action must be an object like {type: 'onboarding.showSecond'}, not ${kindOf(action)}`);
  if (typeof fields.type !== 'string' || fields.type === '') throw new TypeError(`an action's type must be a non-empty string, not ${kindOf(fields.type)}`);
  if (fields.from != null && typeof fields.from !== 'string') throw new TypeError(`${fields.type}: from must be a screen's id (a string), not ${kindOf(fields.from)}`);
  if (fields.row != null && typeof fields.row !== 'string') throw new TypeError(`${fields.type}: row must be a row's id (a string), not ${kindOf(fields.row)}`);
  if (fields.interactive != null && typeof fields.interactive !== 'boolean') throw new TypeError(`${fields.type}: interactive must be a boolean, not ${kindOf(fields.interactive)}`);
  /** @type {FlowAction} */
  const checked = { type: fields.type };
  if (fields.from != null) checked.from = /** @type {string} */ (fields.from);
  if (fields.row != null) checked.row = /** @type {string} */ (fields.row);
  if (fields.interactive) checked.interactive = true;
  if (fields.params != null) {
    if (!isPlainObject(fields.params)) throw new TypeError(`${fields.type}: params must be a plain object, not ${kindOf(fields.params)}`);
    const params = /** @type {Record<string, any>} */ (jsonCopy(fields.params, `${fields.type}: params`, []));
    if (Object.keys(params).length > 0) checked.params = params;
  }
  return checked;
}

/**
 * A copy of `value` made of JSON values only, or a `TypeError` naming the first member that is
 * not one.
 * @param {unknown} value
 * @param {string} path
 * @param {object[]} open the objects being copied (a cycle comes back to one)
 * @returns {import('./json.js').JSONValue}
 */
function jsonCopy(value, path, open) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${path} is ${value}, which JSON cannot write`);
    return value;
  }
  if (typeof value !== 'object') throw new TypeError(`${path} is ${kindOf(value)}, which JSON cannot write`);
  if (open.includes(value)) throw new TypeError(`${path} refers back to an object that contains it (a cycle), which JSON cannot write`);
  if (Array.isArray(value)) {
    open.push(value);
    const copy = value.map((item, index) => {
      if (item === undefined) throw new TypeError(`${path}[${index}] is undefined, which JSON cannot write`);
      return jsonCopy(item, `${path}[${index}]`, open);
    });
    open.pop();
    return copy;
  }
  if (!isPlainObject(value)) throw new TypeError(`${path} is ${kindOf(value)}, which JSON cannot write as it is (convert it to a string or a number)`);
  open.push(value);
  /** @type {Record<string, import('./json.js').JSONValue>} */
  const copy = {};
  for (const [key, member] of Object.entries(value)) {
    if (member !== undefined) copy[key] = jsonCopy(member, `${path}.${key}`, open);
  }
  open.pop();
  return copy;
}

/** @param {unknown} value */
function isPlainObject(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * What a value is, in words, for an error message.
 * @param {unknown} value
 */
function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'bigint') return `a BigInt (${value}n)`;
  if (typeof value === 'object') {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'undefined') return 'undefined';
  return `${typeof value === 'function' ? 'a function' : `the ${typeof value} ${String(value)}`}`;
}

/**
 * `{key, version, action, at?}`: a batch item as `POST …/actions/batch` takes it, and as the store
 * keeps a queued tap (without the state it showed: replayed on the bundle when read).
 *
 * @param {QueuedAction} item
 * @returns {{key: string, version: number, action: FlowAction, at?: string}}
 */
export function batchItem(item) {
  /** @type {{key: string, version: number, action: FlowAction, at?: string}} */
  const written = { key: item.key, version: item.version, action: postedAction(item.action) };
  if (item.at != null) written.at = item.at;
  return written;
}

/**
 * The tap as the store keeps it.
 * @param {QueuedAction} item
 * @returns {QueuedAction}
 */
export function keptItem(item) {
  return batchItem(item);
}

/**
 * Whether two queued taps are the same (key, version, action, what they show).
 * @param {QueuedAction} a
 * @param {QueuedAction} b
 */
export function sameQueued(a, b) {
  return a.key === b.key && a.version === b.version && sameJSON(postedAction(a.action), postedAction(b.action))
    && (a.expected == null ? b.expected == null : a.expected.equals(b.expected)) && a.at === b.at;
}

/** A tap the client could not show (no engine, no prediction for it), and the server said no. */
export class ActionRefused extends Error {
  /**
   * @param {FlowAction} action
   * @param {number} status
   * @param {JSONValue | undefined} problem
   */
  constructor(action, status, problem) {
    const fields = /** @type {Record<string, unknown>} */ (problem !== null && typeof problem === 'object' ? problem : {});
    const detail = typeof fields.detail === 'string' ? fields.detail : typeof fields.title === 'string' ? fields.title : 'no detail';
    super(`${action.type} refused (${status}): ${detail}`);
    this.name = 'ActionRefused';
    this.action = action;
    this.status = status;
    this.problem = problem;
  }
}

/**
 * No answer from the server: the connection was refused or cut, the request timed out, or what
 * came back was not HTTP. What it was sending may or may not have been applied: the client sends
 * it again under the same idempotency keys. `FlowSession.start` throws it when there is no
 * working server and nothing kept to start from ("offline at first launch").
 */
export class Unreachable extends Error {
  /** @param {string} detail */
  constructor(detail) {
    super(`server unreachable: ${detail}`);
    this.name = 'Unreachable';
    this.detail = detail;
  }
}
