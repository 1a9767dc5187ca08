// errors: why an action was not applied (FlowError), and why stored data could not be read back
// (FlowStorageError), with the status and code the server answers.

import { abbreviatedJSON } from './json.js';

/**
 * The details a FlowError carries besides its code, as the Swift enum's associated values.
 * @typedef {object} FlowErrorDetails
 * @property {string} [action] the action type
 * @property {string} [from] a stale `from`
 * @property {string} [top] the screen on top, for a stale `from`
 * @property {string} [row] a stale row's id
 * @property {string} [screen] the screen whose list lacks a stale row
 * @property {string[]} [chain] the flows an unhandled action passed through
 * @property {string} [flow] the flow that refused, or whose definition is broken
 * @property {string} [reason] why a flow refused
 * @property {string} [pending] the pending interaction's action type
 * @property {string} [path] the JSON Pointer into the action of an invalid param
 * @property {string} [message] the sentence of an invalid param, broken definition or corrupt tree
 * @property {string} [uri] an unknown link's URI
 * @property {string} [link] a refused link's pattern
 * @property {number} [step] the index of a refused link's failing action
 * @property {FlowError} [underlying] why that action failed
 */

/** HTTP statuses the server answers for each code. */
const statuses = /** @type {Record<string, number>} */ ({
  'stale-source': 409,
  'stale-row': 409,
  unhandled: 422,
  refused: 422,
  'list-too-large': 422,
  'interaction-pending': 409,
  'no-interaction': 409,
  'invalid-params': 400,
  'broken-definition': 422,
  'corrupt-tree': 500,
  'unknown-link': 422,
  'link-refused': 422,
});

/**
 * Why an action was not applied (the tree is then unchanged), or why a tree could not be built.
 * `code` is stable (`stale-source`, `stale-row`, `unhandled`, `refused`, `list-too-large`, `interaction-pending`,
 * `no-interaction`, `invalid-params`, `broken-definition`, `corrupt-tree`, `unknown-link`,
 * `link-refused`), `status` the HTTP status the server answers, `pointer` where in the posted
 * action the problem is; `chain`, `flow`, `link` and `step` are the problem's extension members.
 *
 * ```js
 * try { state.applying(readAction({ type: 'nope' })); }
 * catch (error) { error.code; error.chain; }   // 'unhandled', ['onboarding', 'app']
 * ```
 */
export class FlowError extends Error {
  /**
   * @param {string} code
   * @param {FlowErrorDetails} details
   */
  constructor(code, details) {
    super(describe(code, details));
    this.name = 'FlowError';
    /** @type {string} */
    this.code = code;
    /** @type {number} */
    this.status = statuses[code] ?? 422;
    /** @type {FlowErrorDetails} */
    this.details = details;
    /** @type {string[] | undefined} */
    this.chain = code === 'unhandled' ? details.chain : undefined;
    /** @type {string | undefined} */
    this.flow = code === 'refused' || code === 'list-too-large' ? details.flow : undefined;
    /** @type {string | undefined} */
    this.link = code === 'link-refused' ? details.link : undefined;
    /** @type {number | undefined} */
    this.step = code === 'link-refused' ? details.step : undefined;
    /** @type {string} */
    this.pointer = pointerOf(code, details);
  }

  /**
   * `from` is not the screen on top (409).
   * @param {string} from
   * @param {string} top
   */
  static staleSource(from, top) { return new FlowError('stale-source', { from, top }); }

  /**
   * `row` is not in the list of the screen the action came from (409): the row was removed (or
   * never there) and the client tapped what it still showed.
   * @param {string} row
   * @param {string} screen
   */
  static staleRow(row, screen) { return new FlowError('stale-row', { row, screen }); }

  /**
   * No flow on the chain handles the action (422).
   * @param {string} action
   * @param {string[]} chain
   */
  static unhandled(action, chain) { return new FlowError('unhandled', { action, chain }); }

  /**
   * A flow owns the action but refused it (422).
   * @param {string} flow
   * @param {string} action
   * @param {string} reason
   */
  static refused(flow, action, reason) { return new FlowError('refused', { flow, action, reason }); }

  /**
   * A flow owns the action, but its effects would make a screen's list larger than the engine
   * keeps (422): values nested too deep, a row or the whole list too many bytes.
   * @param {string} flow
   * @param {string} action
   * @param {string} reason
   */
  static listTooLarge(flow, action, reason) { return new FlowError('list-too-large', { flow, action, reason }); }

  /**
   * An interaction is pending, so other actions wait (409).
   * @param {string} action
   * @param {string} pending
   */
  static interactionPending(action, pending) { return new FlowError('interaction-pending', { action, pending }); }

  /**
   * An interaction action arrived with no interaction pending (409).
   * @param {string} action
   */
  static noInteraction(action) { return new FlowError('no-interaction', { action }); }

  /**
   * The action's fields or params are malformed or missing (400).
   * @param {string} path
   * @param {string} message
   */
  static invalidParams(path, message) { return new FlowError('invalid-params', { path, message }); }

  /**
   * The definitions cannot build what they name (422).
   * @param {string} flow
   * @param {string} message
   */
  static brokenDefinition(flow, message) { return new FlowError('broken-definition', { flow, message }); }

  /**
   * The tree breaks its own invariants (500).
   * @param {string} message
   */
  static corruptTree(message) { return new FlowError('corrupt-tree', { message }); }

  /**
   * No pattern of the root flow's links matches the URI (422).
   * @param {string} uri
   */
  static unknownLink(uri) { return new FlowError('unknown-link', { uri }); }

  /**
   * A link matched but one of its actions was refused (422).
   * @param {string} link
   * @param {number} step
   * @param {string} action
   * @param {FlowError} underlying
   */
  static linkRefused(link, step, action, underlying) {
    return new FlowError('link-refused', { link, step, action, underlying });
  }
}

/**
 * Where in the action posted the problem is, as the conformance suite and the server's problem
 * documents say.
 * @param {string} code
 * @param {FlowErrorDetails} details
 */
function pointerOf(code, details) {
  switch (code) {
    case 'stale-source': return '/from';
    case 'stale-row': return '/row';
    case 'invalid-params': return details.path ?? '';
    case 'broken-definition':
    case 'corrupt-tree': return '';
    case 'unknown-link':
    case 'link-refused': return '/params/uri';
    default: return '/type';
  }
}

/**
 * A sentence for people: what was wrong and what to do.
 * @param {string} code
 * @param {FlowErrorDetails} d
 * @returns {string}
 */
function describe(code, d) {
  switch (code) {
    case 'stale-source':
      return `the action comes from screen ${d.from}, but the screen on top is ${d.top}; reload the state and act on what is shown`;
    case 'stale-row':
      return `the action taps row ${abbreviatedJSON(d.row ?? '', 60)}, but the list of screen ${d.screen} has no such row; reload the state and act on what is shown`;
    case 'unhandled':
      return `no flow handles ${d.action}: it passed through ${(d.chain ?? []).join(' → ')} and none of them names it`;
    case 'refused':
      return `${d.flow} refused ${d.action}: ${d.reason}`;
    case 'list-too-large':
      return `${d.flow} refused ${d.action}, as its list would grow too large: ${d.reason}`;
    case 'interaction-pending':
      return `an interactive ${d.pending} is in progress; send interaction.end or interaction.cancel before ${d.action}`;
    case 'no-interaction':
      return `${d.action} needs an interaction in progress; open one by posting an action with "interactive": true`;
    case 'invalid-params':
      return d.path ? `${d.path}: ${d.message}` : `${d.message}`;
    case 'broken-definition':
      return `flow ${d.flow} cannot be built: ${d.message}`;
    case 'corrupt-tree':
      return `the flow tree is corrupt: ${d.message}`;
    case 'unknown-link':
      return `no link matches ${abbreviatedJSON(d.uri ?? '', 80)}; the root flow's links name the URIs a session can open`;
    case 'link-refused':
      return `link ${d.link} cannot be followed: its step ${d.step} (${d.action}) failed: ${d.underlying?.message}`;
    default:
      return code;
  }
}

/**
 * Stored data (a bundle, a tree) that cannot be read back: where (a JSON Pointer into the stored
 * document) and what is wrong. Reading never trusts storage, so bad data fails here.
 */
export class FlowStorageError extends Error {
  /**
   * @param {string} path
   * @param {string} message
   */
  constructor(path, message) {
    super(`${path === '' ? '/' : path}: ${message}`);
    this.name = 'FlowStorageError';
    this.path = path;
    this.detail = message;
  }
}
