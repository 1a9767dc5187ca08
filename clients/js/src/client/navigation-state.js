// NavigationState: a session's state document, read into values a renderer and the client use.
import { asObject, sameJSON } from './json.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */

/**
 * An action as a client posts it: `{type, from?, params?, interactive?}`.
 * @typedef {{type: string, from?: string, params?: JSONObject, interactive?: boolean}} FlowAction
 */

/**
 * A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the flow
 * that owns it; `handoff` names the native step the app runs there instead (`purchase`).
 * @typedef {{id: string, feature: string, params: JSONObject, flow?: string, flowId?: string, handoff?: string}} Screen
 */

/**
 * A flow controller: `stacked` (entries bottom to top) or `tabbed` (`selected` the tab shown),
 * with the flow it presents modally, if any.
 * @typedef {{id: string, flow: string, kind: 'stacked' | 'tabbed', style?: string, selected?: number,
 *   entries: Array<{screen: Screen} | {flow: FlowNode}>, presented?: FlowNode}} FlowNode
 */

/**
 * @typedef {{type: string, from?: Screen, to?: Screen, animated: boolean, style?: string, interactive: boolean,
 *   result?: {id: string, feature: string, into: string}}} Transition
 * @typedef {{action: string, from?: string, progress: number, handledBy: string, transition?: Transition}} Interaction
 * @typedef {{action: FlowAction, source: string, guardFlow: string, guardFlowId: string}} PendingAction
 * @typedef {{value: JSONValue, variant?: string, reason?: string}} FlagEvaluation
 */

/** A state document that is not what the server writes, with the JSON Pointer of the first part that is wrong. */
export class MalformedState extends Error {
  /**
   * @param {string} path
   * @param {string} message
   */
  constructor(path, message) {
    super(`${path === '' ? '/' : path}: ${message}`);
    this.name = 'MalformedState';
    this.path = path;
    this.detail = message;
  }
}

/**
 * What a session shows: the state document every session answer carries, as values. Two states
 * are equal (`equals`) exactly when their documents are, so a state the local engine computed
 * confirms against the server's answer for it.
 *
 * ```js
 * const state = NavigationState.fromJSON(JSON.parse(body));
 * state.top?.feature        // "onboarding.second"
 * state.transition?.type    // "push"
 * ```
 */
export class NavigationState {
  /**
   * @param {JSONObject} document the state document, without `predictions`
   */
  constructor(document) {
    const read = new Reader();
    /** The document as it came, for comparing and keeping. */
    this.document = document;
    this.sessionId = read.string(document.sessionId, '/sessionId');
    this.userId = read.string(document.userId, '/userId');
    this.version = read.integer(document.version, '/version');
    /** The flow tree: nested flow controllers and their screens. */
    this.root = read.node(document.root, '/root');
    /**
     * What is on screen and behind it, bottom to top.
     * @type {Screen[]}
     */
    this.screens = read.array(document.screens, '/screens').map((value, index) => read.screen(value, `/screens/${index}`));
    /** @type {Screen | undefined} */
    this.top = read.optional(document.top, '/top', (value, path) => read.screen(value, path));
    /**
     * How the state came from the one before (none at creation).
     * @type {Transition | undefined}
     */
    this.transition = read.optional(document.transition, '/transition', (value, path) => read.transition(value, path));
    /**
     * A pending interactive transition (an edge swipe in progress).
     * @type {Interaction | undefined}
     */
    this.interaction = read.optional(document.interaction, '/interaction', (value, path) => {
      const fields = read.object(value, path);
      return {
        action: read.string(fields.action, path + '/action'),
        from: read.optionalString(fields.from, path + '/from'),
        progress: read.number(fields.progress, path + '/progress'),
        handledBy: read.string(fields.handledBy, path + '/handledBy'),
        transition: read.optional(fields.transition, path + '/transition', (v, p) => read.transition(v, p)),
      };
    });
    /**
     * A deep link waiting for its `when` to hold.
     * @type {{uri: string, pattern: string} | undefined}
     */
    this.pendingLink = read.optional(document.pendingLink, '/pendingLink', (value, path) => {
      const fields = read.object(value, path);
      return { uri: read.string(fields.uri, path + '/uri'), pattern: read.string(fields.pattern, path + '/pattern') };
    });
    /**
     * Actions held back by guards, outermost first (empty from servers that do not send them).
     * @type {PendingAction[]}
     */
    this.pendingActions = document.pendingActions == null ? []
      : read.array(document.pendingActions, '/pendingActions').map((value, index) => read.pendingAction(value, `/pendingActions/${index}`));
    /** The flow whose delegate handled the action that made this version. */
    this.handledBy = read.optionalString(document.handledBy, '/handledBy');
    /**
     * Flag evaluations fixed at creation, by key.
     * @type {Record<string, FlagEvaluation>}
     */
    this.flags = {};
    for (const [key, value] of Object.entries(read.object(document.flags, '/flags'))) {
      const path = '/flags/' + key;
      const fields = read.object(value, path);
      this.flags[key] = {
        value: fields.value === undefined ? null : fields.value,
        variant: read.optionalString(fields.variant, path + '/variant'),
        reason: read.optionalString(fields.reason, path + '/reason'),
      };
    }
    /**
     * Experiment variants fixed at creation, by experiment key.
     * @type {Record<string, string>}
     */
    this.experiments = {};
    for (const [key, value] of Object.entries(read.object(document.experiments, '/experiments'))) {
      this.experiments[key] = read.string(value, '/experiments/' + key);
    }
  }

  /**
   * Reads a state document (parsed), leaving out `predictions` if it carries them.
   *
   * @param {unknown} json
   * @returns {NavigationState}
   * @throws {MalformedState}
   */
  static fromJSON(json) {
    const object = asObject(json);
    if (!object) throw new MalformedState('', 'a state is an object');
    if (!('predictions' in object)) return new NavigationState(object);
    /** @type {JSONObject} */
    const document = {};
    for (const [key, value] of Object.entries(object)) if (key !== 'predictions') document[key] = value;
    return new NavigationState(document);
  }

  /**
   * The state a local engine computed, as the server's answer for it would read.
   *
   * @param {{document(): string}} engineState
   * @returns {NavigationState}
   * @throws {MalformedState}
   */
  static fromEngine(engineState) {
    let value;
    try {
      value = JSON.parse(engineState.document());
    } catch (error) {
      throw new MalformedState('', `the engine's document does not parse: ${String(error)}`);
    }
    return NavigationState.fromJSON(value);
  }

  /**
   * @param {NavigationState | undefined | null} other
   * @returns {boolean}
   */
  equals(other) {
    return other != null && (other === this || sameJSON(this.document, other.document));
  }

  /** The screen features on screen and behind it, bottom to top. */
  get features() {
    return this.screens.map((screen) => screen.feature);
  }
}

/**
 * Whether two optional states are the same (both absent, or equal documents).
 *
 * @param {NavigationState | undefined | null} a
 * @param {NavigationState | undefined | null} b
 */
export function sameState(a, b) {
  return a == null ? b == null : a.equals(b);
}

/** Reads the parts of a state document, naming the path of the first that is wrong. */
class Reader {
  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {JSONObject}
   */
  object(value, path) {
    const object = asObject(value);
    if (!object) throw new MalformedState(path, 'must be an object');
    return object;
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {JSONValue[]}
   */
  array(value, path) {
    if (!Array.isArray(value)) throw new MalformedState(path, 'must be an array');
    return value;
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {string}
   */
  string(value, path) {
    if (typeof value !== 'string') throw new MalformedState(path, 'must be a string');
    return value;
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {string | undefined}
   */
  optionalString(value, path) {
    return value == null ? undefined : this.string(value, path);
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {number}
   */
  integer(value, path) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new MalformedState(path, 'must be a whole number');
    return value;
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {number}
   */
  number(value, path) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new MalformedState(path, 'must be a number');
    return value;
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {boolean}
   */
  bool(value, path) {
    if (typeof value !== 'boolean') throw new MalformedState(path, 'must be true or false');
    return value;
  }

  /**
   * @template T
   * @param {unknown} value
   * @param {string} path
   * @param {(value: JSONValue, path: string) => T} read
   * @returns {T | undefined}
   */
  optional(value, path, read) {
    return value == null ? undefined : read(/** @type {JSONValue} */ (value), path);
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {Screen}
   */
  screen(value, path) {
    const fields = this.object(value, path);
    return {
      id: this.string(fields.id, path + '/id'),
      feature: this.string(fields.feature, path + '/feature'),
      params: this.object(fields.params, path + '/params'),
      flow: this.optionalString(fields.flow, path + '/flow'),
      flowId: this.optionalString(fields.flowId, path + '/flowId'),
      handoff: this.optionalString(fields.handoff, path + '/handoff'),
    };
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {PendingAction}
   */
  pendingAction(value, path) {
    const fields = this.object(value, path);
    const action = this.object(fields.action, path + '/action');
    const guard = this.object(fields.guard, path + '/guard');
    /** @type {FlowAction} */
    const posted = { type: this.string(action.type, path + '/action/type') };
    const from = this.optionalString(action.from, path + '/action/from');
    if (from !== undefined) posted.from = from;
    const params = this.optional(action.params, path + '/action/params', (v, p) => this.object(v, p));
    if (params !== undefined) posted.params = params;
    return {
      action: posted,
      source: this.string(fields.source, path + '/source'),
      guardFlow: this.string(guard.flow, path + '/guard/flow'),
      guardFlowId: this.string(guard.flowId, path + '/guard/flowId'),
    };
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {Transition}
   */
  transition(value, path) {
    const fields = this.object(value, path);
    return {
      type: this.string(fields.type, path + '/type'),
      from: this.optional(fields.from, path + '/from', (v, p) => this.screen(v, p)),
      to: this.optional(fields.to, path + '/to', (v, p) => this.screen(v, p)),
      animated: this.bool(fields.animated, path + '/animated'),
      style: this.optionalString(fields.style, path + '/style'),
      interactive: this.bool(fields.interactive, path + '/interactive'),
      result: this.optional(fields.result, path + '/result', (v, p) => {
        const receipt = this.object(v, p);
        return { id: this.string(receipt.id, p + '/id'), feature: this.string(receipt.feature, p + '/feature'), into: this.string(receipt.into, p + '/into') };
      }),
    };
  }

  /**
   * @param {unknown} value
   * @param {string} path
   * @returns {FlowNode}
   */
  node(value, path) {
    const fields = this.object(value, path);
    /** @type {FlowNode['entries']} */
    const entries = this.array(fields.entries, path + '/entries').map((entry, index) => {
      const entryPath = `${path}/entries/${index}`;
      return this.object(entry, entryPath).feature !== undefined ? { screen: this.screen(entry, entryPath) } : { flow: this.node(entry, entryPath) };
    });
    const kind = this.string(fields.kind, path + '/kind');
    if (kind !== 'stacked' && kind !== 'tabbed') throw new MalformedState(path + '/kind', 'must be stacked or tabbed');
    return {
      id: this.string(fields.id, path + '/id'),
      flow: this.string(fields.flow, path + '/flow'),
      kind,
      style: this.optionalString(fields.style, path + '/style'),
      selected: this.optional(fields.selected, path + '/selected', (v, p) => this.integer(v, p)),
      entries,
      presented: this.optional(fields.presented, path + '/presented', (v, p) => this.node(v, p)),
    };
  }
}
