// Every case of the engine conformance suite (engine-suite/cases) through the JavaScript engine in
// process: each input line through EngineRunner, each answer compared byte for byte with the
// line the Swift engine wrote.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EngineRunner } from '../src/engine/conformance.js';

const casesFolder = fileURLToPath(new URL('../../../engine-suite/cases/', import.meta.url));
const caseFiles = readdirSync(casesFolder).filter((name) => name.endsWith('.jsonl')).sort();

test('the suite has cases to run', () => {
  assert.ok(caseFiles.length >= 9, `found ${caseFiles.length} case files in ${casesFolder}`);
});

// One runner for every case, as the harness runs them: a case that leaks into the next fails.
const runner = new EngineRunner();

for (const name of caseFiles) {
  test(`suite case ${name} answers byte for byte`, () => {
    const text = readFileSync(casesFolder + name, 'utf8');
    assert.ok(text.endsWith('\n'), 'every line ends in a newline');
    const lines = text.slice(0, -1).split('\n');
    const header = JSON.parse(lines[0]);
    assert.equal(header.specVersion, 1);
    const pairs = lines.slice(1);
    assert.equal(pairs.length % 2, 0, 'input and answer lines come in pairs');
    assert.ok(pairs[0].startsWith('{"bundle":'), 'a case starts with its bundle');
    for (let index = 0; index < pairs.length; index += 2) {
      const got = runner.answer(pairs[index]);
      assert.equal(got, pairs[index + 1], `line ${index + 2} of ${name}: ${pairs[index].slice(0, 120)}`);
    }
  });
}

test('the runner answers an error line, and changes nothing, for what the protocol does not know', () => {
  const fresh = new EngineRunner();
  assert.equal(fresh.answer('{"action":{"type":"back"}}'),
    '{"error":{"message":"no case has started: the first line of a case is {\\"bundle\\": …}","pointer":""}}');
  assert.match(fresh.answer('not json'), /^\{"error":\{"message":"the line is not JSON: .*","pointer":""\}\}$/);
  assert.match(fresh.answer('[1]'), /"pointer":""/);
  const bundle = readFileSync(casesFolder + caseFiles[0], 'utf8').split('\n')[1];
  const first = fresh.answer(bundle);
  assert.ok(first.startsWith('{"sessionId":'));
  assert.match(fresh.answer('{"nothing":true}'), /expected one of bundle, action, available/);
  assert.equal(fresh.answer('{"available":false,"action":{"type":"link.cancel"},"dryRun":true}').startsWith('{"sessionId":'), true);
  assert.match(fresh.answer('{"bundle":{"format":2}}'), /^\{"error":\{"message":"expected format 1; found 2","pointer":"\/bundle\/format"\}\}$/);
  assert.match(fresh.answer('{"action":{"type":"back"}}'), /no case has started/, 'a bad bundle forgets the last case');
});
