// session: one session as the engine alone carries it forward — read from the server's bundle —
// and its answers: the state document, predictions, available actions (a port of SessionState,
// SessionState+answers, +predictions and SessionBundle's reading; the answers written only for the
// suite's runner, the available actions' document and predictions written out, are in
// conformance.js).

import { FlowError, FlowStorageError } from './errors.js';
import {
  JSONWriter, abbreviatedJSON, integerValue, jsonPointer, objectValue, parseJSON, storedDataLimits, stringValue, typeName,
  writeJSON, JSONParseError,
} from './json.js';
import { DefinitionProblems } from './definition.js';
import { readDefinition } from './reader.js';
import { applyAction, availableActions, isInteractionAction, makeAction, withUserChanges } from './engine.js';
import { encodeTransition, stateDocument } from './document.js';
import { readTreeStorage, writeTreeStorage } from './storage.js';
import { defaultFlowLimits, treeTop } from './tree.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./builder.js').FlowCatalog} FlowCatalog */
/** @typedef {import('./definition.js').FlowDefinition} FlowDefinition */
/** @typedef {import('./engine.js').ActionOutcome} ActionOutcome */
/** @typedef {import('./engine.js').AvailableAction} AvailableAction */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */

/** The bundle format this engine reads. */
export const bundleFormat = 1;

/**
 * An action a client could post now and the state posting it would produce.
 * @typedef {{ action: FlowAction, next: SessionState }} Prediction
 */

/**
 * A session as the engine sees it: the tree at a version, the context its conditions read, the
 * catalog of the flow versions it runs, and what its state document shows besides the tree.
 * Values: `applying` returns a new state and leaves this one as it was.
 *
 * ```js
 * const state = SessionState.fromBundle(await (await fetch(`/v1/sessions/${id}/bundle`)).text());
 * const { next, outcome } = state.applying(readAction({ type: 'onboarding.showSecond', from: 'e3' }));
 * next.document();             // what POST /v1/sessions/{id}/actions will answer, byte for byte
 * outcome.transition?.type;    // 'push'
 * ```
 */
export class SessionState {
  /**
   * @param {object} parts
   * @param {string} parts.sessionId
   * @param {string} parts.userId
   * @param {number} parts.version
   * @param {FlowTree} parts.tree
   * @param {FlowContext} parts.context
   * @param {FlowCatalog} parts.catalog
   * @param {string} parts.flagsJSON the flag evaluation details the document shows, encoded
   * @param {string} parts.experimentsJSON `{experiment: variant}`, encoded
   * @param {string | null} [parts.transitionJSON] the transition that produced `version`
   * @param {string | null} [parts.handledBy] the flow that handled the action that produced it
   * @param {Map<string, number>} [parts.flowVersions] the version of each flow the session runs
   */
  constructor(parts) {
    /** @readonly */
    this.parts = Object.freeze({
      sessionId: parts.sessionId,
      userId: parts.userId,
      version: parts.version,
      tree: parts.tree,
      context: parts.context,
      catalog: parts.catalog,
      flagsJSON: parts.flagsJSON,
      experimentsJSON: parts.experimentsJSON,
      transitionJSON: parts.transitionJSON ?? null,
      handledBy: parts.handledBy ?? null,
      flowVersions: parts.flowVersions ?? new Map(),
    });
  }

  /** The session's id. */
  get sessionId() { return this.parts.sessionId; }

  /** The user the session belongs to. */
  get userId() { return this.parts.userId; }

  /** Grows by one with every applied action. */
  get version() { return this.parts.version; }

  /** The navigation tree at this version. */
  get tree() { return this.parts.tree; }

  /** The context conditions read, with the user's state as known now. */
  get context() { return this.parts.context; }

  /** The flow definitions the session runs, by name. */
  get catalog() { return this.parts.catalog; }

  /** The flow that handled the action that produced this version. */
  get handledBy() { return this.parts.handledBy; }

  /** The version of each flow the session runs. */
  get flowVersions() { return this.parts.flowVersions; }

  /**
   * Reads a session bundle (`GET /v1/sessions/{id}/bundle`, format 1), checking every part: the
   * definitions must read and hold every flow of `flowVersions`, and the tree must decode.
   * @param {JSONValue | string | Uint8Array} bundle the parsed bundle, or its JSON text or bytes
   * @returns {SessionState}
   * @throws {FlowStorageError} with the JSON Pointer of the first part that is wrong
   */
  static fromBundle(bundle) {
    /** @type {JSONValue} */
    let json;
    if (typeof bundle === 'string' || bundle instanceof Uint8Array) {
      try {
        json = parseJSON(bundle, storedDataLimits);
      } catch (error) {
        if (error instanceof JSONParseError) throw new FlowStorageError('', `invalid JSON: ${error.message}`);
        throw error;
      }
    } else {
      json = bundle;
    }
    return readBundle(json);
  }

  /**
   * The state after `action`, as the server commits it: the next version, the new tree, its
   * transition and handler, and the user's state with the action's changes. This state is
   * unchanged; a refused action throws.
   * @param {FlowAction} action
   * @param {FlowLimits} [limits]
   * @returns {{ next: SessionState, outcome: ActionOutcome }}
   * @throws {FlowError}
   */
  applying(action, limits = defaultFlowLimits) {
    const parts = this.parts;
    const outcome = applyAction(action, parts.tree, parts.catalog, parts.context, limits);
    const next = new SessionState({
      ...parts,
      version: parts.version + 1,
      tree: outcome.tree,
      handledBy: outcome.handledBy,
      transitionJSON: outcome.transition ? encodeTransition(outcome.transition) : null,
      context: withUserChanges(parts.context, outcome.userChanges),
    });
    return { next, outcome };
  }

  /**
   * The state document: the body of every session answer, byte for byte the server's.
   * @returns {string}
   */
  document() {
    const parts = this.parts;
    return stateDocument({
      sessionId: parts.sessionId, userId: parts.userId, version: parts.version, tree: parts.tree,
      transitionJSON: parts.transitionJSON, handledBy: parts.handledBy, flagsJSON: parts.flagsJSON,
      experimentsJSON: parts.experimentsJSON,
    });
  }

  /**
   * The state document parsed into this engine's JSON model (member order kept).
   * @returns {JSONValue}
   */
  documentValue() {
    return parseJSON(this.document(), storedDataLimits);
  }

  /**
   * The next state of every action available now that needs no params, nearest flow first; an
   * action that may run interactively is predicted twice, plainly and then with
   * `interactive: true`. Actions with a required param and row taps (whose state depends on the
   * row tapped) are left out, as is an action the engine would refuse after all.
   *
   * The promise: posting `prediction.action` on this version answers exactly
   * `prediction.next.document()`, when nothing else acted on the session meanwhile.
   * @param {FlowLimits} [limits]
   * @returns {Prediction[]}
   */
  predictions(limits = defaultFlowLimits) {
    const tree = this.parts.tree;
    const available = availableActions(tree, this.parts.catalog, this.parts.context);
    const top = treeTop(tree);
    const source = top ? `e${top.id}` : null;
    /** @type {Prediction[]} */
    const predictions = [];
    for (const entry of available) {
      if (entry.rowKinds || entry.params.some((param) => param.required)) continue;
      const from = isInteractionAction(entry.type) ? null : source;
      const forms = entry.interactive && !tree.interaction ? [false, true] : [false];
      for (const interactive of forms) {
        const action = makeAction(entry.type, { from, interactive });
        try {
          predictions.push({ action, next: this.applying(action, limits).next });
        } catch (error) {
          if (!(error instanceof FlowError)) throw error;
        }
      }
    }
    return predictions;
  }

  /**
   * The actions the state accepts now (see `availableActions` of the engine).
   * @returns {AvailableAction[]}
   */
  availableActions() {
    return availableActions(this.parts.tree, this.parts.catalog, this.parts.context);
  }

  /**
   * The session's bundle at this version, written over the one it was read from (which brings
   * the definitions, flags and variants, none of which an action changes): the version, the
   * tree, the user's state, the transition and the handler of this state. A client's store keeps
   * it, so an app killed offline after local taps starts again on the engine where it was.
   * @param {string} from the bundle text this session was read from
   * @returns {string}
   * @throws {TypeError} when `from` is not a bundle's JSON object
   */
  bundle(from) {
    const bundle = parseJSON(from, storedDataLimits);
    const context = bundle instanceof Map ? bundle.get('context') : undefined;
    if (!(bundle instanceof Map) || !(context instanceof Map)) throw new TypeError('the bundle read is not an object with a context');
    const document = /** @type {JSONObject} */ (parseJSON(this.document(), storedDataLimits));
    bundle.set('version', this.version);
    context.set('user', new Map(this.context.user));
    bundle.set('tree', parseJSON(this.treeStorageJSON(), storedDataLimits));
    bundle.set('transition', document.get('transition') ?? null);
    bundle.set('handledBy', document.get('handledBy') ?? null);
    return writeJSON(bundle);
  }

  /**
   * The tree in the engine's storage encoding, as a bundle's `tree` carries it.
   * @returns {string}
   */
  treeStorageJSON() {
    const writer = new JSONWriter();
    writeTreeStorage(this.parts.tree, writer);
    return writer.text();
  }
}

/**
 * Reads a parsed bundle: `{format, sessionId, userId, version, flowVersions, definitions,
 * context: {attributes, traits, flags, user}, flags, experiments, tree, transition, handledBy}`.
 * @param {JSONValue} json
 * @returns {SessionState}
 */
function readBundle(json) {
  const object = objectValue(json);
  if (!object) throw new FlowStorageError('', `a bundle is an object; found ${typeName(json)}`);
  const format = object.get('format');
  if (integerValue(format) !== bundleFormat) {
    throw new FlowStorageError('/format', `expected format ${bundleFormat}; found ${format === undefined ? 'nothing' : abbreviatedJSON(format)}`);
  }
  /** @param {string} key */
  const string = (key) => {
    const value = stringValue(object.get(key));
    if (value === undefined) throw new FlowStorageError(`/${key}`, 'must be a string');
    return value;
  };
  /**
   * @param {JSONValue | undefined} value
   * @param {string} path
   */
  const members = (value, path) => {
    const found = objectValue(value);
    if (!found) throw new FlowStorageError(path, 'must be an object');
    return found;
  };
  const sessionId = string('sessionId');
  const userId = string('userId');
  const version = integerValue(object.get('version'));
  if (version === undefined || version < 0) throw new FlowStorageError('/version', 'must be a whole number from 0');
  /** @type {Map<string, number>} */
  const flowVersions = new Map();
  for (const [name, value] of members(object.get('flowVersions'), '/flowVersions')) {
    const number = integerValue(value);
    if (number === undefined) throw new FlowStorageError(jsonPointer(['flowVersions', name]), 'must be a version number');
    flowVersions.set(name, number);
  }
  /** @type {FlowCatalog} */
  const catalog = new Map();
  for (const [name, value] of members(object.get('definitions'), '/definitions')) {
    try {
      catalog.set(name, readDefinition(value, name));
    } catch (error) {
      if (!(error instanceof DefinitionProblems)) throw error;
      const first = error.problems[0];
      throw new FlowStorageError(jsonPointer(['definitions', name]) + (first ? first.path : ''), first ? first.message : 'invalid definition');
    }
  }
  for (const name of flowVersions.keys()) {
    if (!catalog.has(name)) {
      throw new FlowStorageError(jsonPointer(['definitions', name]), `flow ${name} runs in the session but has no definition`);
    }
  }
  const context = members(object.get('context'), '/context');
  /** @type {Map<string, string>} */
  const traits = new Map();
  for (const [name, value] of members(context.get('traits'), '/context/traits')) {
    const text = stringValue(value);
    if (text === undefined) throw new FlowStorageError(jsonPointer(['context', 'traits', name]), 'must be a string');
    traits.set(name, text);
  }
  /** @type {FlowContext} */
  const flowContext = {
    userId,
    attributes: new Map(members(context.get('attributes'), '/context/attributes')),
    traits,
    flags: new Map(members(context.get('flags'), '/context/flags')),
    user: new Map(members(context.get('user'), '/context/user')),
  };
  const flags = object.get('flags');
  if (!objectValue(flags)) throw new FlowStorageError('/flags', 'must be an object');
  const experiments = object.get('experiments');
  if (!objectValue(experiments)) throw new FlowStorageError('/experiments', 'must be an object');
  let tree;
  try {
    tree = readTreeStorage(object.get('tree') ?? null);
  } catch (error) {
    if (error instanceof FlowStorageError) throw new FlowStorageError('/tree' + error.path, error.detail);
    throw error;
  }
  /** @type {string | null} */
  let transitionJSON = null;
  const transition = object.get('transition');
  if (transition !== undefined && transition !== null) {
    if (!objectValue(transition)) throw new FlowStorageError('/transition', 'must be an object or null');
    transitionJSON = writeJSON(transition);
  }
  /** @type {string | null} */
  let handledBy = null;
  const rawHandledBy = object.get('handledBy');
  if (rawHandledBy !== undefined && rawHandledBy !== null) {
    const text = stringValue(rawHandledBy);
    if (text === undefined) throw new FlowStorageError('/handledBy', 'must be a string or null');
    handledBy = text;
  }
  return new SessionState({
    sessionId, userId, version, tree, context: flowContext, catalog,
    flagsJSON: writeJSON(/** @type {JSONValue} */ (flags)), experimentsJSON: writeJSON(/** @type {JSONValue} */ (experiments)),
    transitionJSON, handledBy, flowVersions,
  });
}
