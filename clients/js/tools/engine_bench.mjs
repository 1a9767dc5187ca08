#!/usr/bin/env node
// The engine's cost per action in node: a seeded walk of the sample app, in process, choosing
// each step among the actions available without params (a refused one or a dead end starts the
// walk again from the bundle), timing `applying(action)` and `document()` only.
//
//   node clients/js/tools/engine_bench.mjs [steps=10000] [seed=36]
//
// For the runner against the Swift one on the same input, time both over the suite's input
// lines repeated (see the engine's report in the pull request for the command).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SessionState, makeAction, parseJSON, storedDataLimits, treeTop } from '../src/engine/index.js';

const steps = Number(process.argv[2] ?? 10000);
let seed = Number(process.argv[3] ?? 36);
/** A linear congruential generator: the same walk for the same seed. */
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

const casePath = fileURLToPath(new URL('../../../engine-suite/cases/sample-app.links.jsonl', import.meta.url));
const line = readFileSync(casePath, 'utf8').split('\n')[1];
const bundle = /** @type {Map<string, any>} */ (parseJSON(line, storedDataLimits)).get('bundle');
const start = SessionState.fromBundle(bundle);

let state = start;
let applied = 0;
let restarts = 0;
let bytes = 0;
let elapsed = 0n;
for (let step = 0; step < steps; step += 1) {
  const available = state.availableActions().filter((action) => !action.params.some((param) => param.required) && action.type !== 'link.cancel');
  if (available.length === 0 || state.version > 60) {
    state = start;
    restarts += 1;
    continue;
  }
  const pick = available[Math.floor(random() * available.length)];
  const top = treeTop(state.tree);
  const from = pick.type.startsWith('interaction.') || !top ? null : `e${top.id}`;
  const action = makeAction(pick.type, { from });
  const began = process.hrtime.bigint();
  let next = start;
  try {
    next = state.applying(action).next;
    bytes += next.document().length;
  } catch {
    restarts += 1;
  }
  elapsed += process.hrtime.bigint() - began;
  state = next;
  applied += 1;
}
const micros = Number(elapsed) / 1000 / applied;
console.log(`${applied} actions (${restarts} restarts): ${micros.toFixed(1)} µs per action (applying + document), ${Math.round(bytes / applied)} bytes per document`);
