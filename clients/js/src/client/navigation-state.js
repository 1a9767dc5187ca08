// NavigationState: a session's state document, read into values a renderer and the client use.
import { asObject, sameJSON } from './json.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */

/**
 * An action as a client posts it: `{type, from?, row?, params?, interactive?}`; `row` is the id of
 * the tapped row of the `from` screen's list (a row tap).
 * @typedef {{type: string, from?: string, row?: string, params?: JSONObject, interactive?: boolean}} FlowAction
 */

/**
 * One row of a screen's list: a stable id (unique in the whole list), the cell kind the app
 * registers, and what the cell shows.
 * @typedef {{id: string, kind: string, values: JSONObject}} ListRow
 */

/**
 * One section of a screen's list.
 * @typedef {{id: string, title?: string, indexTitle?: string, rows: ListRow[]}} ListSection
 */

/**
 * A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the flow
 * that owns it; `handoff` names the native step the app runs there instead (`purchase`);
 * `sections` is its list, in `root` only (`screens`, `top` and transitions do not repeat it).
 * @typedef {{id: string, feature: string, params: JSONObject, flow?: string, flowId?: string, handoff?: string,
 *   sections?: ListSection[]}} Screen
 */

/**
 * A row's place: its section's index and its index within that section (`[section, row]` in
 * the document).
 * @typedef {{section: number, row: number}} RowPath
 */

/**
 * One level of a list's changes, in UIKit's batch-update terms: deleted at old indexes, inserted
 * at new ones, moved from old to new, then reloaded at new indexes once the batch is done.
 * @template P
 * @typedef {{deleted: Array<{id: string, at: P}>, inserted: Array<{id: string, at: P}>,
 *   moved: Array<{id: string, from: P, to: P}>, reloaded: Array<{id: string, at: P}>}} ListStage
 */

/**
 * How one screen's list changed between the version before and this one (docs/api.md, "List
 * changes"): apply `sections`, then `rows`, in one `performBatchUpdates`, and the list shows the
 * new rows without a diff of the client's own.
 * @typedef {{sections: ListStage<number>, rows: ListStage<RowPath>}} ListChanges
 */

/**
 * A flow controller: `stacked` (entries bottom to top) or `tabbed` (`selected` the tab shown),
 * with the flow it presents modally, if any.
 * @typedef {{id: string, flow: string, kind: 'stacked' | 'tabbed', style?: string, selected?: number,
 *   entries: Array<{screen: Screen} | {flow: FlowNode}>, presented?: FlowNode}} FlowNode
 */

/**
 * How a state came from the one before; `list` when nothing moved but lists changed. `lists`
 * holds the changes of each list that changed on a screen that stayed, by the screen's entry id
 * (`e9`); empty when none did.
 * @typedef {{type: string, from?: Screen, to?: Screen, animated: boolean, style?: string, interactive: boolean,
 *   result?: {id: string, feature: string, into: string}, lists: Record<string, ListChanges>}} Transition
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

  /**
   * The screen with entry id `id` anywhere in `root`, with its list (`screens` and `top` leave
   * lists out): `state.screen(state.top.id)?.sections`.
   * @param {string} id
   * @returns {Screen | undefined}
   */
  screen(id) {
    /**
     * @param {FlowNode} node
     * @returns {Screen | undefined}
     */
    const find = (node) => {
      for (const entry of node.entries) {
        const found = 'screen' in entry ? (entry.screen.id === id ? entry.screen : undefined) : find(entry.flow);
        if (found) return found;
      }
      return node.presented ? find(node.presented) : undefined;
    };
    return find(this.root);
  }
}

/** Ids, kinds and titles are strings of at most this many characters (ids and kinds at least one). */
const maxListText = 200;
/** At most this many sections, and this many rows, in one list. */
const maxListRows = 10_000;

/**
 * The key an id is compared by: ids canonically equivalent (`"é"` and `"e\u0301"`) are one id, as
 * the server's Swift strings say.
 * @param {string} id
 */
function idKey(id) {
  return /[^\u0000-\u007f]/.test(id) ? id.normalize('NFD') : id;
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
      sections: this.optional(fields.sections, path + '/sections', (v, p) => this.sections(v, p)),
    };
  }

  /**
   * A screen's list as the engine writes it (and reads it: unknown keys, missing or overlong ids
   * and an id used twice are refused).
   * @param {unknown} value
   * @param {string} path
   * @returns {ListSection[]}
   */
  sections(value, path) {
    const elements = this.array(value, path);
    if (elements.length > maxListRows) throw new MalformedState(path, `a list has at most ${maxListRows} sections`);
    const sectionIds = new Set();
    const rowIds = new Set();
    return elements.map((element, index) => {
      const at = `${path}/${index}`;
      const fields = this.listObject(element, at, ['id', 'title', 'indexTitle', 'rows']);
      const id = this.listId(fields.id, at + '/id');
      if (sectionIds.has(idKey(id))) throw new MalformedState(at + '/id', `section id ${JSON.stringify(id)} is used twice`);
      sectionIds.add(idKey(id));
      /** @type {ListSection} */
      const section = { id, rows: [] };
      for (const key of /** @type {const} */ (['title', 'indexTitle'])) {
        const title = this.optionalString(fields[key], `${at}/${key}`);
        if (title === undefined) continue;
        if (Array.from(title).length > maxListText) throw new MalformedState(`${at}/${key}`, `must be at most ${maxListText} characters`);
        section[key] = title;
      }
      if (fields.rows === undefined) throw new MalformedState(at, 'a section needs "rows": an array of rows, possibly empty');
      const rows = this.array(fields.rows, at + '/rows');
      section.rows = rows.map((rowValue, rowIndex) => {
        const rowPath = `${at}/rows/${rowIndex}`;
        const row = this.listObject(rowValue, rowPath, ['id', 'kind', 'values']);
        const rowId = this.listId(row.id, rowPath + '/id');
        if (rowIds.has(idKey(rowId))) throw new MalformedState(rowPath + '/id', `row id ${JSON.stringify(rowId)} is used twice in the list`);
        rowIds.add(idKey(rowId));
        return {
          id: rowId,
          kind: this.listId(row.kind, rowPath + '/kind'),
          values: this.optional(row.values, rowPath + '/values', (v, p) => this.object(v, p)) ?? {},
        };
      });
      if (rowIds.size > maxListRows) throw new MalformedState(at + '/rows', `a list has at most ${maxListRows} rows`);
      return section;
    });
  }

  /**
   * An object of a list, refusing keys it does not know.
   * @param {unknown} value
   * @param {string} path
   * @param {string[]} allowed
   * @returns {JSONObject}
   */
  listObject(value, path, allowed) {
    const fields = this.object(value, path);
    for (const key of Object.keys(fields)) {
      if (!allowed.includes(key)) throw new MalformedState(`${path}/${key}`, `unknown key; expected ${allowed.join(', ')}`);
    }
    return fields;
  }

  /**
   * A row or section id, or a row's kind: a string of 1 to 200 characters.
   * @param {unknown} value
   * @param {string} path
   * @returns {string}
   */
  listId(value, path) {
    const text = this.string(value, path);
    if (text === '' || Array.from(text).length > maxListText) throw new MalformedState(path, `must be 1 to ${maxListText} characters`);
    return text;
  }

  /**
   * A transition's `lists`: `[{"id": "e9", "sections": stage, "rows": stage}]`, by screen id.
   * @param {unknown} value
   * @param {string} path
   * @returns {Record<string, ListChanges>}
   */
  lists(value, path) {
    /** @type {Record<string, ListChanges>} */
    const result = {};
    if (value == null) return result;
    this.array(value, path).forEach((element, index) => {
      const at = `${path}/${index}`;
      const fields = this.object(element, at);
      const sections = this.stage(fields.sections, at + '/sections', (v, p) => this.integer(v, p));
      const rows = this.stage(fields.rows, at + '/rows', (v, p) => {
        const pair = this.array(v, p);
        if (pair.length !== 2) throw new MalformedState(p, 'must be [section, row]');
        return { section: this.integer(pair[0], p + '/0'), row: this.integer(pair[1], p + '/1') };
      });
      result[this.string(fields.id, at + '/id')] = { sections, rows };
    });
    return result;
  }

  /**
   * `{"deleted": [{"id", "at"}], "inserted": […], "moved": [{"id", "from", "to"}], "reloaded": […]}`.
   * @template P
   * @param {unknown} value
   * @param {string} path
   * @param {(value: unknown, path: string) => P} position
   * @returns {ListStage<P>}
   */
  stage(value, path, position) {
    const fields = this.object(value, path);
    /** @param {'deleted' | 'inserted' | 'reloaded'} key */
    const changes = (key) => this.array(fields[key], `${path}/${key}`).map((element, index) => {
      const at = `${path}/${key}/${index}`;
      const change = this.object(element, at);
      return { id: this.string(change.id, at + '/id'), at: position(change.at, at + '/at') };
    });
    const moved = this.array(fields.moved, path + '/moved').map((element, index) => {
      const at = `${path}/moved/${index}`;
      const move = this.object(element, at);
      return { id: this.string(move.id, at + '/id'), from: position(move.from, at + '/from'), to: position(move.to, at + '/to') };
    });
    return { deleted: changes('deleted'), inserted: changes('inserted'), moved, reloaded: changes('reloaded') };
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
    const row = this.optionalString(action.row, path + '/action/row');
    if (row !== undefined) posted.row = row;
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
      lists: this.lists(fields.lists, path + '/lists'),
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
