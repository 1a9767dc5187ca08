// Text compared as Swift compares it: canonically equivalent strings are equal ("é" and
// "e\u0301", "K" and the Kelvin sign) in action types, features, params, conditions, user state
// and object keys, while every string is written back in its own spelling.
//
// fixtures/canonical-equivalence.jsonl holds input lines and the answers the Swift engine's
// runner (`flowstack engine-suite run`) gave to them, in pairs: a bundle whose definitions are
// written in NFC, then actions posted in NFD, a result of 2.5e-05, and strings with "/", a
// control character and U+2028.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { JSONParseError, jsonEquals, parseJSON } from '../src/engine/index.js';
import { EngineRunner } from '../src/engine/conformance.js';
import { getMember, sameText, setMember } from '../src/engine/json.js';

test('canonically equivalent strings are equal, others are not', () => {
  assert.ok(sameText('caf\u00e9', 'cafe\u0301'));
  assert.ok(sameText('K', '\u212a'));
  assert.ok(!sameText('cafe', 'caf\u00e9'));
  assert.ok(jsonEquals(parseJSON('{"caf\u00e9":"\u00e9"}'), parseJSON('{"cafe\u0301":"e\u0301"}')));
});

test('members are found and replaced by canonical equivalence, keeping their first spelling', () => {
  const map = new Map([['caf\u00e9', 1]]);
  assert.equal(getMember(map, 'cafe\u0301'), 1);
  setMember(map, 'cafe\u0301', 2);
  assert.deepEqual([...map], [['caf\u00e9', 2]]);
  assert.equal(getMember(new Map([['\u212a', 3]]), 'K'), 3);
});

test('keys that are canonically equivalent are duplicates, as the Swift parser says', () => {
  assert.throws(() => parseJSON('{"caf\u00e9":1,"cafe\u0301":2}'), (error) => error instanceof JSONParseError && error.reason === 'duplicateKey');
});

test('NFD actions against NFC definitions answer what the Swift engine answered, byte for byte', () => {
  const lines = readFileSync(fileURLToPath(new URL('fixtures/canonical-equivalence.jsonl', import.meta.url)), 'utf8').split('\n');
  lines.pop();
  const runner = new EngineRunner();
  for (let index = 0; index < lines.length; index += 2) {
    assert.equal(runner.answer(lines[index]), lines[index + 1], `line ${index + 1}: ${lines[index].slice(0, 100)}`);
  }
});
