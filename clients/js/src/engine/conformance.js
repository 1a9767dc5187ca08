// conformance: the engine conformance suite's runner protocol (engine-suite/README.md) without I/O — one JSON
// line in, exactly one line out — so the command-line runner (bin/engine-suite-runner.mjs), the
// browser page (test/browser/runner.html) and the tests share it (a port of EngineSuite's
// EngineRunner and EngineRefusal); and the server's answers a client never computes itself (the
// available actions' document, a state document with its predictions), which only the runner and
// tests write, here and not on SessionState, so that an app's bundle leaves them out.

import { FlowError, FlowStorageError } from './errors.js';
import { JSONWriter, parseJSON, storedDataLimits, typeName } from './json.js';
import { readAction } from './action.js';
import { SessionState } from './session.js';
import { isInteractionAction } from './engine.js';
import { writeAction, writeTop } from './document.js';
import { treeTop } from './tree.js';

/** @typedef {import('./tree.js').FlowLimits} FlowLimits */

/**
 * The engine behind the runner protocol: `{"bundle": B}` starts a case and answers its state
 * document; `{"action": A}` (with `predict` or `dryRun`) applies an action; `{"available": true}`
 * answers the available actions; anything else `{"error": {message, pointer}}`.
 *
 * ```js
 * const runner = new EngineRunner();
 * runner.answer('{"bundle":{…}}');           // the state document
 * runner.answer('{"action":{"type":"back"}}');
 * ```
 */
export class EngineRunner {
  constructor() {
    /**
     * The session the last bundle started, carried forward by the actions since.
     * @type {SessionState | null}
     */
    this.state = null;
  }

  /**
   * The answer to one input line (without its newline).
   * @param {string} line
   * @returns {string}
   */
  answer(line) {
    let json;
    try {
      json = parseJSON(line, storedDataLimits);
    } catch (problem) {
      return errorLine('', `the line is not JSON: ${problem instanceof Error ? problem.message : String(problem)}`);
    }
    if (!(json instanceof Map)) return errorLine('', `a line is an object; found ${typeName(json)}`);
    const bundle = json.get('bundle');
    if (bundle !== undefined) {
      try {
        this.state = SessionState.fromBundle(bundle);
        return this.state.document();
      } catch (problem) {
        this.state = null;
        if (problem instanceof FlowStorageError) return errorLine('/bundle' + problem.path, problem.detail);
        throw problem;
      }
    }
    const state = this.state;
    if (!state) return errorLine('', 'no case has started: the first line of a case is {"bundle": …}');
    if (json.get('available') === true) return availableActionsDocument(state);
    const rawAction = json.get('action');
    if (rawAction === undefined) return errorLine('', 'expected one of bundle, action, available');
    let next;
    try {
      next = state.applying(readAction(rawAction)).next;
    } catch (problem) {
      if (problem instanceof FlowError) return refusalLine(problem);
      throw problem;
    }
    if (json.get('dryRun') !== true) this.state = next;
    const document = next.document();
    if (json.get('predict') !== true) return document;
    return withPredictions(document, predictionsJSON(next));
  }
}

/**
 * `[{"action": {type, from?, interactive?}, "state": {…}}]`, as `?predict=true` adds it: `state`'s
 * predictions written.
 * @param {SessionState} state
 * @param {FlowLimits} [limits]
 * @returns {string}
 */
export function predictionsJSON(state, limits) {
  const writer = new JSONWriter();
  writer.beginArray();
  for (const prediction of state.predictions(limits)) {
    writer.beginObject();
    writer.key('action');
    writeAction(prediction.action, writer);
    writer.key('state');
    writer.raw(prediction.next.document());
    writer.endObject();
  }
  writer.endArray();
  return writer.text();
}

/**
 * A state document with `predictions` as its last member.
 * @param {string} document
 * @param {string} predictions
 * @returns {string}
 */
export function withPredictions(document, predictions) {
  if (!document.endsWith('}')) return document;
  return document.slice(0, -1) + ',"predictions":' + predictions + '}';
}

/**
 * `state`'s document with `predictions` as its last member, as `?predict=true` answers.
 * @param {SessionState} state
 * @returns {string}
 */
export function documentWithPredictions(state) {
  return withPredictions(state.document(), predictionsJSON(state));
}

/**
 * `GET /v1/sessions/{id}/actions/available`'s answer for `state`: `{sessionId, version, from,
 * actions: [{type, handledBy, from, rowKinds?, params, interactive, next, nextInteractive?}]}`.
 * `rowKinds`, only for a row tap, lists the kinds of the rows it takes. `next` is the state
 * posting the action with no params would answer (null when it needs params or a row);
 * `nextInteractive` the state posting it with `"interactive": true` would answer.
 * @param {SessionState} state
 * @returns {string}
 */
export function availableActionsDocument(state) {
  const tree = state.tree;
  const available = state.availableActions();
  const predictions = state.predictions();
  const top = treeTop(tree);
  const writer = new JSONWriter();
  writer.beginObject();
  writer.key('sessionId');
  writer.string(state.sessionId);
  writer.key('version');
  writer.number(state.version);
  writer.key('from');
  writeTop(tree, writer);
  writer.key('actions');
  writer.beginArray();
  for (const action of available) {
    writer.beginObject();
    writer.key('type');
    writer.string(action.type);
    writer.key('handledBy');
    writer.string(action.handledBy);
    writer.key('from');
    writer.optionalString(isInteractionAction(action.type) || !top ? null : `e${top.id}`);
    if (action.rowKinds) {
      writer.key('rowKinds');
      writer.beginArray();
      for (const kind of action.rowKinds) writer.string(kind);
      writer.endArray();
    }
    writer.key('params');
    writer.beginArray();
    for (const param of action.params) {
      writer.beginObject();
      writer.key('name');
      writer.string(param.name);
      writer.key('type');
      writer.string(param.type);
      writer.key('required');
      writer.bool(param.required);
      writer.endObject();
    }
    writer.endArray();
    writer.key('interactive');
    writer.bool(action.interactive);
    // A row tap is never predicted; the type's plain prediction is not its.
    const tap = Boolean(action.rowKinds);
    writer.key('next');
    const plain = tap ? undefined : predictions.find((prediction) => prediction.action.type === action.type && !prediction.action.interactive);
    if (plain) writer.raw(plain.next.document());
    else writer.null();
    if (action.interactive && !tree.interaction) {
      writer.key('nextInteractive');
      const interactive = tap ? undefined : predictions.find((prediction) => prediction.action.type === action.type && prediction.action.interactive);
      if (interactive) writer.raw(interactive.next.document());
      else writer.null();
    }
    writer.endObject();
  }
  writer.endArray();
  writer.endObject();
  return writer.text();
}

/**
 * A fresh runner, as the browser page makes it: `createConformanceRunner().answer(line)`.
 * @returns {EngineRunner}
 */
export function createConformanceRunner() {
  return new EngineRunner();
}

/**
 * @param {string} pointer
 * @param {string} message
 */
function errorLine(pointer, message) {
  const writer = new JSONWriter();
  writer.beginObject();
  writer.key('error');
  writer.beginObject();
  writer.key('message');
  writer.string(message);
  writer.key('pointer');
  writer.string(pointer);
  writer.endObject();
  writer.endObject();
  return writer.text();
}

/**
 * A refused action as the suite writes it: `{"refused": {chain?, code, flow?, link?, pointer,
 * status, step?}}`, keys sorted. The message is for people and not part of the suite.
 * @param {FlowError} refusal
 */
export function refusalLine(refusal) {
  const writer = new JSONWriter();
  writer.beginObject();
  writer.key('refused');
  writer.beginObject();
  if (refusal.chain) {
    writer.key('chain');
    writer.beginArray();
    for (const flow of refusal.chain) writer.string(flow);
    writer.endArray();
  }
  writer.key('code');
  writer.string(refusal.code);
  if (refusal.flow !== undefined) {
    writer.key('flow');
    writer.string(refusal.flow);
  }
  if (refusal.link !== undefined) {
    writer.key('link');
    writer.string(refusal.link);
  }
  writer.key('pointer');
  writer.string(refusal.pointer);
  writer.key('status');
  writer.number(refusal.status);
  if (refusal.step !== undefined) {
    writer.key('step');
    writer.number(refusal.step);
  }
  writer.endObject();
  writer.endObject();
  return writer.text();
}
