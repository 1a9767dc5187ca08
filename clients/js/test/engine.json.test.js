// The JSON model, writer and parser: what the Swift JSONWriter writes (escaping, numbers, member
// order, exact integers) and what the strict parser refuses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONParseError, jsonEquals, jsonPointer, parseJSON, writeJSON } from '../src/engine/index.js';
import { setMembers } from '../src/engine/json.js';

/**
 * @param {string} text
 * @param {string} reason
 */
function refuses(text, reason) {
  assert.throws(() => parseJSON(text), (error) => error instanceof JSONParseError && error.reason === reason,
    `${JSON.stringify(text)} should be refused as ${reason}`);
}

test('strings escape only quote, backslash and control characters, as Swift writes them', () => {
  assert.equal(writeJSON('a/b'), '"a/b"');
  assert.equal(writeJSON('é ü 漢 😀'), '"é ü 漢 😀"');
  assert.equal(writeJSON('"\\'), '"\\"\\\\"');
  assert.equal(writeJSON('\n\r\t\b\f'), '"\\n\\r\\t\\b\\f"');
  assert.equal(writeJSON('\u0001\u001f\u0000'), '"\\u0001\\u001f\\u0000"');
  assert.equal(writeJSON('\u007f\u2028'), '"\u007f\u2028"');
});

test('numbers: integral values as integers, others in Swift\'s shortest spelling', () => {
  const cases = [
    [1, '1'], [-0, '0'], [0.5, '0.5'], [0.1, '0.1'], [123.456, '123.456'], [0.0001, '0.0001'], [0.00012, '0.00012'],
    [1e-5, '1e-05'], [1.5e-5, '1.5e-05'], [2e-7, '2e-07'], [5e-324, '5e-324'], [1e16, '10000000000000000'],
    [9.3e18, '9.3e+18'], [1e20, '1e+20'], [1.7976931348623157e308, '1.7976931348623157e+308'], [-2.5, '-2.5'],
    [NaN, 'null'], [Infinity, 'null'],
  ];
  for (const [value, text] of cases) assert.equal(writeJSON(/** @type {number} */ (value)), text, `${value}`);
  // Swift reads 1.0 as a double and writes it as the integer it is.
  assert.equal(writeJSON(parseJSON('[1.0,-0,1E2,2.50]')), '[1,0,100,2.5]');
});

test('integers stay exact beyond 2^53 and up to 64 bits', () => {
  assert.equal(writeJSON(parseJSON('9007199254740993')), '9007199254740993');
  assert.equal(writeJSON(parseJSON('-9223372036854775808')), '-9223372036854775808');
  assert.equal(writeJSON(parseJSON('9223372036854775807')), '9223372036854775807');
  assert.equal(typeof parseJSON('9007199254740993'), 'bigint');
  assert.equal(typeof parseJSON('9007199254740991'), 'number');
  // Past 64 bits an integer literal is a double, as in Swift.
  assert.equal(writeJSON(parseJSON('18446744073709551616')), '1.8446744073709552e+19');
  assert.ok(jsonEquals(parseJSON('9007199254740993'), 9007199254740993n));
  assert.ok(jsonEquals(parseJSON('1.0'), parseJSON('1')));
});

test('objects keep their written member order, integer-like keys included', () => {
  const text = '{"b":1,"a":{"2":true,"1":null},"10":[],"0":"x"}';
  assert.equal(writeJSON(parseJSON(text)), text);
  assert.ok(jsonEquals(parseJSON('{"a":1,"b":2}'), parseJSON('{"b":2,"a":1}')), 'equality ignores order');
  assert.ok(!jsonEquals(parseJSON('{"a":1}'), parseJSON('{"a":1,"b":2}')));
});

test('escapes decode, surrogate pairs included, and whitespace is ignored', () => {
  assert.equal(parseJSON('"\\u00e9\\/\\ud83d\\ude00\\n"'), 'é/😀\n');
  assert.deepEqual(parseJSON(' \t\r\n[ 1 , "a" ]\n'), [1, 'a']);
  assert.equal(parseJSON(new TextEncoder().encode('"é"')), 'é');
});

test('the parser refuses what lenient parsers let through', () => {
  refuses('\ufeff{}', 'unexpectedByte');
  refuses('{} x', 'trailingData');
  refuses('{"a":1,"a":2}', 'duplicateKey');
  refuses('"\\ud83d"', 'loneSurrogate');
  refuses('"\\ude00"', 'loneSurrogate');
  refuses('"a\nb"', 'controlCharacterInString');
  refuses('01', 'invalidNumber');
  refuses('1.', 'invalidNumber');
  refuses('-', 'invalidNumber');
  refuses('1e', 'invalidNumber');
  refuses('NaN', 'unexpectedByte');
  refuses('[1,]', 'unexpectedByte');
  refuses('{"a":1,}', 'unexpectedByte');
  refuses('"\\x"', 'invalidEscape');
  refuses('"\\u12G4"', 'invalidEscape');
  refuses('"abc', 'unexpectedEnd');
  refuses('', 'unexpectedEnd');
  refuses('tru', 'invalidLiteral');
  refuses('1e400', 'numberOutOfRange');
  refuses('"\ud800"', 'invalidUTF8');
  assert.throws(() => parseJSON(new Uint8Array([0x22, 0xc3, 0x28, 0x22])), (error) => error instanceof JSONParseError && error.reason === 'invalidUTF8');
});

test('limits bound depth, string length and input size', () => {
  const deep = '['.repeat(65) + ']'.repeat(65);
  refuses(deep, 'tooDeep');
  assert.doesNotThrow(() => parseJSON('['.repeat(64) + ']'.repeat(64)));
  assert.doesNotThrow(() => parseJSON(deep, { maxDepth: 512, maxStringLength: Infinity, maxInputSize: Infinity }));
  assert.throws(() => parseJSON('"ééé"', { maxDepth: 64, maxStringLength: 5, maxInputSize: 100 }),
    (error) => error instanceof JSONParseError && error.reason === 'stringTooLong');
  assert.throws(() => parseJSON('[1,2,3]', { maxDepth: 64, maxStringLength: 5, maxInputSize: 4 }),
    (error) => error instanceof JSONParseError && error.reason === 'inputTooLarge');
});

test('pointers escape ~ and / in tokens', () => {
  assert.equal(jsonPointer([]), '');
  assert.equal(jsonPointer(['on', 'a/b', 'c~d', 0]), '/on/a~1b/c~0d/0');
});

test('integral numbers read as integers as Swift\'s Int(exactly:) reads them', async () => {
  const { integerValue } = await import('../src/engine/json.js');
  const { paramAccepts } = await import('../src/engine/definition.js');
  assert.equal(integerValue(parseJSON('1.0')), 1);
  assert.equal(integerValue(1e17), 1e17);
  assert.equal(integerValue(-(2 ** 63)), -(2 ** 63));
  assert.equal(integerValue(2 ** 63), undefined);
  assert.equal(integerValue(1.5), undefined);
  assert.equal(integerValue('1'), undefined);
  assert.equal(integerValue(parseJSON('9223372036854775807')), 2 ** 63);
  assert.ok(paramAccepts('integer', 1e17) && paramAccepts('integer', 9007199254740993n) && !paramAccepts('integer', 0.5));
  assert.ok(paramAccepts('number', 1) && paramAccepts('number', 0.5) && !paramAccepts('number', '1'));
});

// A quadratic algorithm does 5·10⁹ key comparisons on 100,000-key objects: minutes. Objects of
// 10,000 keys come first, so such a build fails here in seconds rather than hanging; the bounds
// are generous (a busy machine), not a benchmark.

/**
 * How long `body` takes, in seconds.
 * @param {() => void} body
 */
function seconds(body) {
  const start = performance.now();
  body();
  return (performance.now() - start) / 1000;
}

test('objects of 10,000 and 100,000 keys parse, compare and merge in linear time, as Swift\'s', () => {
  for (const [count, bound] of [[10_000, 1], [100_000, 8]]) {
    const keys = Array.from({ length: count }, (_, index) => `k${index}`);
    const last = `k${count - 1}`;
    const text = `{${keys.map((key, index) => `"${key}":${index}`).join(',')}}`;
    const reversedText = `{${keys.map((key, index) => `"${key}":${index}`).reverse().join(',')}}`;
    // Keys outside ASCII go through canonical equivalence: spelled composed on one side and
    // decomposed on the other, they are the same keys.
    const composed = `{${keys.map((key, index) => `"é${key}":${index}`).join(',')}}`;
    const decomposed = `{${keys.map((key, index) => `"e\\u0301${key}":${index}`).reverse().join(',')}}`;
    /** @type {any[]} */
    let parsed = [];
    let results = /** @type {boolean[]} */ ([]);
    const elapsed = seconds(() => {
      parsed = [text, reversedText, composed, decomposed].map((json) => parseJSON(json));
      const changed = new Map(parsed[0]);
      changed.set(last, -1);
      results = [jsonEquals(parsed[0], parsed[1]), jsonEquals(parsed[1], parsed[0]), jsonEquals(parsed[2], parsed[3]),
        jsonEquals(parsed[0], changed), jsonEquals(parsed[1], changed), jsonEquals(parsed[0], parsed[2])];
      const merged = new Map(parsed[2]);
      setMembers(merged, parsed[3]);
      results.push(merged.size === count && merged.get('ék0') === 0 && writeJSON(merged) === writeJSON(parsed[2]));
    });
    assert.deepEqual(results, [true, true, true, false, false, false, true]);
    assert.ok(elapsed < bound, `parsing, comparing and merging ${count}-key objects took ${elapsed} s (bound ${bound} s)`);
    refuses(`${text.slice(0, -1)},"k3":0}`, 'duplicateKey');
    refuses(`${composed.slice(0, -1)},"e\\u0301k3":0}`, 'duplicateKey');
  }
});

test('setMembers sets as setMember does: a canonically equal key keeps its spelling and place', () => {
  const map = new Map([['café', 1], ['K', 2], ['x', 3]]);
  setMembers(map, new Map([['cafe\u0301', 10], ['\u212a', 20], ['new', 30], ['ne\u0077', 40]]));
  assert.deepEqual([...map], [['café', 10], ['K', 20], ['x', 3], ['new', 40]]);
});
