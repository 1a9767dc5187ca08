// The definition reader refuses what the Swift reader refuses, at the same place, in the same
// words. fixtures/broken-definitions.jsonl pairs bundles whose definitions are broken in one way
// each (a shadowed rule, a result with nothing revealed, a guard showing two flows, links of one
// shape, a flow naming itself in via, a tab out of range, an optional param an effect needs, a
// reserved action, a guard on a bubbling rule, a link's unknown placeholder, a bad selected)
// with the answers of the Swift engine's runner.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DefinitionProblems, parseJSON, readDefinition } from '../src/engine/index.js';
import { EngineRunner } from '../src/engine/conformance.js';

test('broken definitions are refused at the Swift reader\'s pointer with its message', () => {
  const lines = readFileSync(fileURLToPath(new URL('fixtures/broken-definitions.jsonl', import.meta.url)), 'utf8').split('\n');
  lines.pop();
  assert.equal(lines.length, 24);
  for (let index = 0; index < lines.length; index += 2) {
    assert.equal(new EngineRunner().answer(lines[index]), lines[index + 1], `bundle ${index / 2}`);
  }
});

test('every problem of a definition is reported, not only the first', () => {
  const definition = parseJSON(JSON.stringify({
    name: 'x', kind: 'stacked', initial: [], frm: 1,
    on: { 'a.b': [{ do: [{ push: 'a' }, { bubble: {} }] }], link: [{ do: [{ pop: {} }] }] },
  }));
  assert.throws(() => readDefinition(definition, 'y'), (error) => {
    assert.ok(error instanceof DefinitionProblems);
    assert.deepEqual(error.problems.map((/** @type {{path: string}} */ problem) => problem.path),
      ['/frm', '/initial', '/on/a.b/0/do/1/bubble', '/on/link']);
    return true;
  });
  const good = readDefinition(parseJSON('{"name":"m","kind":"stacked","initial":["m"],"on":{"m.close":[{"do":[{"dismiss":{}}]}]}}'), 'm');
  assert.equal(good.rulesByAction.get('m.close')?.[0].effects[0].name, 'dismiss');
});

/**
 * The paths of a definition's problems, as the Swift reader reports them; [] when it reads.
 * @param {string} text
 * @returns {string[]}
 */
function problemPaths(text) {
  try {
    readDefinition(parseJSON(text));
    return [];
  } catch (error) {
    if (!(error instanceof DefinitionProblems)) throw error;
    return error.problems.map((/** @type {{path: string}} */ problem) => problem.path);
  }
}

test('lists written out are held to the size caps, and counted across sections, as in Swift', () => {
  let deep = '{"v":1}';
  for (let level = 1; level < 17; level += 1) deep = `{"v":${deep}}`;
  assert.deepEqual(problemPaths(`{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": [{"id": "s", "rows": [{"id": "r", "kind": "k", "values": ${deep}}]}]}]}`),
    ['/initial/0/sections/0/rows/0/values']);
  const section = (/** @type {string} */ id, /** @type {number} */ count) =>
    `{"id": "${id}", "rows": [${Array.from({ length: count }, (_, n) => `{"id": "${id}${n}", "kind": "k"}`).join(',')}]}`;
  const list = (/** @type {number} */ count) =>
    `{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": [${section('a', count)}, ${section('b', count)}]}]}`;
  assert.deepEqual(problemPaths(list(6000)), ['/initial/0/sections']);
  assert.deepEqual(problemPaths(list(5000)), []);
});

test('an undeclared param inside setSections is reported once; row and via keep their messages', () => {
  for (const [sections, path] of [['{"$param": "nope"}', '/on/x/0/do/0/setSections/sections/$param'],
    ['[{"id": "s", "rows": {"$param": "nope"}}]', '/on/x/0/do/0/setSections/sections/0/rows/$param']]) {
    assert.deepEqual(problemPaths(`{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "params": {"a": "string"}, "do": [{"setSections": {"sections": ${sections}}}]}]}}`),
      [path]);
  }
  assert.throws(() => readDefinition(parseJSON('{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "row": [], "do": [{"pop": {}}]}]}}')),
    (error) => error instanceof DefinitionProblems
      && error.problems[0].message === 'row must be a row kind or a non-empty array of them, such as "address.row"; found []');
  assert.throws(() => readDefinition(parseJSON('{"name": "a", "kind": "stacked", "initial": ["l"], "on": {"x": [{"via": 3, "do": [{"pop": {}}]}]}}')),
    (error) => error instanceof DefinitionProblems
      && error.problems[0].message === 'via must be a child flow\'s name or a non-empty array of them, such as "onboarding"; found 3');
});
