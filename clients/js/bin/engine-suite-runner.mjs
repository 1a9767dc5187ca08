#!/usr/bin/env node
// The engine conformance runner (engine-suite/README.md) for the JavaScript engine: one JSON line
// in on standard input, exactly one line out, flushed before the next line is read. A bundle line
// starts a case; actions carry it forward; anything else answers {"error": {message, pointer}}.
//
//   python3 scripts/engine_suite.py node clients/js/bin/engine-suite-runner.mjs

import { createInterface } from 'node:readline';
import {
  FlowError, FlowStorageError, JSONWriter, SessionState, parseJSON, readAction, storedDataLimits, withPredictions,
} from '../src/engine/index.js';

/** @type {SessionState | null} */
let state = null;

/**
 * @param {string} pointer
 * @param {string} message
 */
function error(pointer, message) {
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
 * status, step?}}`, keys sorted.
 * @param {FlowError} refusal
 */
function refused(refusal) {
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

/**
 * The answer to one input line.
 * @param {string} line
 */
function answer(line) {
  let json;
  try {
    json = parseJSON(line, storedDataLimits);
  } catch (problem) {
    return error('', `the line is not JSON: ${problem instanceof Error ? problem.message : String(problem)}`);
  }
  if (!(json instanceof Map)) return error('', 'a line is an object');
  const bundle = json.get('bundle');
  if (bundle !== undefined) {
    try {
      state = SessionState.fromBundle(bundle);
      return state.document();
    } catch (problem) {
      state = null;
      if (problem instanceof FlowStorageError) return error('/bundle' + problem.path, problem.detail);
      throw problem;
    }
  }
  if (!state) return error('', 'no case has started: the first line of a case is {"bundle": …}');
  if (json.get('available') === true) return state.availableActionsDocument();
  const rawAction = json.get('action');
  if (rawAction === undefined) return error('', 'expected one of bundle, action, available');
  let next;
  try {
    next = state.applying(readAction(rawAction)).next;
  } catch (problem) {
    if (problem instanceof FlowError) return refused(problem);
    throw problem;
  }
  if (json.get('dryRun') !== true) state = next;
  const document = next.document();
  if (json.get('predict') !== true) return document;
  return withPredictions(document, next.predictionsJSON());
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const out = answer(line) + '\n';
  if (!process.stdout.write(out)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}
