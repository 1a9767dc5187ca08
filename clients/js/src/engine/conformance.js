// conformance: the engine conformance suite's runner protocol (engine-suite/README.md) without I/O — one JSON
// line in, exactly one line out — so the command-line runner (bin/engine-suite-runner.mjs), the
// browser page (test/browser/runner.html) and the tests share it (a port of EngineSuite's
// EngineRunner and EngineRefusal).

import { FlowError, FlowStorageError } from './errors.js';
import { JSONWriter, parseJSON, storedDataLimits, typeName } from './json.js';
import { readAction } from './action.js';
import { SessionState, withPredictions } from './session.js';

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
    if (json.get('available') === true) return state.availableActionsDocument();
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
    return withPredictions(document, next.predictionsJSON());
  }
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
