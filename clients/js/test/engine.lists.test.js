// The list diff (listChanges.js): thousands of seeded random changes to lists, each diffed and the
// changes applied to the old list as UIKit would, which must give the new list with every kept row
// carried over; the exact rules of docs/api.md ("List changes") on small cases; and the diffs of
// test/fixtures/list-diffs.jsonl, which the Swift engine's runner answered
// (tools/list_diff_fixture.py), reproduced exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { JSONWriter, parseJSON, readSections, diffLists, longestIncreasingRun, writeJSON } from '../src/engine/index.js';
import { applyListChanges, writeListChanges, listChangesAreEmpty } from '../src/engine/listChanges.js';
import { ListProblem, sameSections, sizeProblem } from '../src/engine/screenList.js';

/** @typedef {import('../src/engine/screenList.js').ListSection} ListSection */
/** @typedef {import('../src/engine/screenList.js').ListRow} ListRow */
/** @typedef {import('../src/engine/listChanges.js').ListChanges} ListChanges */

/**
 * A small seeded generator (mulberry32), so a failing seed replays.
 * @param {number} seed
 */
function generator(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** @param {number} n */
  const below = (n) => Math.floor(next() * n);
  return { next, below };
}

/**
 * @param {string} id
 * @param {number} n
 * @returns {ListRow}
 */
const row = (id, n = 0) => ({ id, kind: n > 1 ? 'vip' : 'contact', values: new Map([['n', n]]) });

/**
 * @param {string} id
 * @param {ListRow[]} rows
 * @param {string | null} [title]
 * @returns {ListSection}
 */
const section = (id, rows, title = null) => ({ id, title, indexTitle: null, rows });

/**
 * A random pair: a list of up to 6 sections over up to 30 rows, then a copy changed by 1 to 8
 * random edits (rows moved within and across sections, inserted, deleted, reloaded; sections
 * moved, inserted, deleted, retitled), or, one time in ten, an unrelated list over the same ids.
 * @param {number} seed
 * @returns {{ old: ListSection[], next: ListSection[] }}
 */
function randomPair(seed) {
  const { next: random, below } = generator(seed);
  const rowPool = Array.from({ length: 30 }, (_, n) => `r${n}`);
  const sectionPool = ['A', 'B', 'C', 'D', 'E', 'F'];
  /** @param {string[]} pool */
  const shuffled = (pool) => {
    const copy = pool.slice();
    for (let i = copy.length - 1; i > 0; i -= 1) {
      const j = below(i + 1);
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy;
  };
  const make = () => {
    const ids = shuffled(rowPool).slice(0, below(rowPool.length + 1));
    return shuffled(sectionPool).slice(0, below(sectionPool.length + 1)).map((id) => {
      const rows = ids.splice(0, below(ids.length + 1)).map((rowId) => row(rowId, below(3)));
      return section(id, rows, random() < 0.5 ? 'x' : null);
    });
  };
  const old = make();
  if (random() < 0.1) return { old, next: make() };
  /** @type {ListSection[]} */
  const next = old.map((s) => ({ ...s, rows: s.rows.slice() }));
  const edits = 1 + below(8);
  for (let edit = 0; edit < edits; edit += 1) {
    const places = next.flatMap((s, si) => s.rows.map((_, ri) => [si, ri]));
    const roll = random();
    if (roll < 0.3 && places.length > 0 && next.length > 0) {
      const [si, ri] = places[below(places.length)];
      const [moving] = next[si].rows.splice(ri, 1);
      const target = next[below(next.length)];
      target.rows.splice(below(target.rows.length + 1), 0, moving);
    } else if (roll < 0.45 && places.length > 0) {
      const [si, ri] = places[below(places.length)];
      next[si].rows.splice(ri, 1);
    } else if (roll < 0.6 && next.length > 0) {
      const used = new Set(next.flatMap((s) => s.rows.map((r) => r.id)));
      const free = rowPool.filter((id) => !used.has(id));
      if (free.length > 0) {
        const target = next[below(next.length)];
        target.rows.splice(below(target.rows.length + 1), 0, row(free[below(free.length)], below(3)));
      }
    } else if (roll < 0.72 && places.length > 0) {
      const [si, ri] = places[below(places.length)];
      next[si].rows[ri] = row(next[si].rows[ri].id, below(3));
    } else if (roll < 0.82 && next.length > 1) {
      const [moving] = next.splice(below(next.length), 1);
      next.splice(below(next.length + 1), 0, moving);
    } else if (roll < 0.88 && next.length > 0) {
      next.splice(below(next.length), 1);
    } else if (roll < 0.94) {
      const used = new Set(next.map((s) => s.id));
      const free = sectionPool.filter((id) => !used.has(id));
      if (free.length > 0) next.splice(below(next.length + 1), 0, section(free[below(free.length)], []));
    } else if (next.length > 0) {
      const at = below(next.length);
      next[at] = { ...next[at], title: next[at].title === 'x' ? 'y' : 'x' };
    }
  }
  return { old, next };
}

/** @param {ListSection[]} list */
const shape = (list) => list.map((s) => `${s.id}${s.title === null ? '' : `(${s.title})`}:${s.rows.map((r) => r.id).join(',')}`).join(' | ');

/**
 * Checks one pair; a failure names its seed in one line.
 * @param {number} seed
 * @param {ListSection[]} old
 * @param {ListSection[]} next
 */
function check(seed, old, next) {
  const changes = diffLists(old, next);
  /** @param {string} what */
  const fail = (what) => assert.fail(`seed ${seed}: ${what}; old ${shape(old)}; new ${shape(next)}; changes ${encode(changes)}`);
  const applied = applyListChanges(changes, old, next);
  if (!applied) fail('the changes do not fit the old list');
  else if (!sameSections(applied, next)) fail(`applying the changes gives ${shape(applied)}`);
  if (listChangesAreEmpty(changes) !== sameSections(old, next)) fail('the changes are empty exactly when the lists are equal');
  // Ids kept: a row neither inserted nor reloaded is the old row itself, carried over.
  const fresh = new Set([...changes.rows.inserted, ...changes.rows.reloaded].map((change) => change.id));
  const oldRows = new Map(old.flatMap((s) => s.rows.map((r) => [r.id, r])));
  const insertedSections = new Set(changes.sections.inserted.map((change) => change.id));
  for (const s of applied ?? []) {
    if (insertedSections.has(s.id)) continue;
    for (const r of s.rows) if (!fresh.has(r.id) && oldRows.get(r.id) !== r) fail(`row ${r.id} was not carried over`);
  }
  // Each list ascending, as UIKit's batch expects them documented.
  const ascending = (/** @type {number[]} */ keys) => keys.every((key, i) => i === 0 || keys[i - 1] < key);
  const rowKey = (/** @type {{section: number, row: number}} */ p) => p.section * 100_000 + p.row;
  if (!ascending(changes.sections.deleted.map((c) => c.at)) || !ascending(changes.sections.inserted.map((c) => c.at))
    || !ascending(changes.sections.moved.map((c) => c.to)) || !ascending(changes.sections.reloaded.map((c) => c.at))
    || !ascending(changes.rows.deleted.map((c) => rowKey(c.at))) || !ascending(changes.rows.inserted.map((c) => rowKey(c.at)))
    || !ascending(changes.rows.moved.map((c) => rowKey(c.to))) || !ascending(changes.rows.reloaded.map((c) => rowKey(c.at)))) {
    fail('a list of changes is not in ascending order');
  }
}

/** @param {ListChanges} changes */
function encode(changes) {
  const writer = new JSONWriter();
  writeListChanges(changes, writer);
  return writer.text();
}

test('5000 seeded random list changes: the changes applied to the old list give the new one, kept rows carried over', () => {
  for (let seed = 1; seed <= 5000; seed += 1) {
    const { old, next } = randomPair(seed);
    check(seed, old, next);
  }
});

test('the diffs the Swift engine answered for 400 random pairs (some ids in NFC on one side, NFD on the other) are reproduced exactly', () => {
  const file = fileURLToPath(new URL('./fixtures/list-diffs.jsonl', import.meta.url));
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  assert.ok(lines.length >= 400, `found ${lines.length} pairs`);
  lines.forEach((line, index) => {
    const pair = parseJSON(line);
    assert.ok(pair instanceof Map);
    const old = readSections(pair.get('old') ?? null);
    const next = readSections(pair.get('new') ?? null);
    const changes = diffLists(old, next);
    const expected = pair.get('changes');
    if (expected === null) {
      assert.ok(listChangesAreEmpty(changes), `pair ${index + 1}: Swift saw no change, the port ${encode(changes)}`);
      return;
    }
    assert.deepEqual(JSON.parse(encode(changes)), JSON.parse(JSON.stringify(mapToPlain(expected))), `pair ${index + 1}`);
    const applied = applyListChanges(changes, old, next);
    assert.ok(applied && sameSections(applied, next), `pair ${index + 1}: the changes applied give the new list`);
  });
});

/**
 * A parsed value (Maps) as plain JSON.
 * @param {unknown} value
 * @returns {unknown}
 */
function mapToPlain(value) {
  if (value instanceof Map) return Object.fromEntries([...value].map(([key, member]) => [key, mapToPlain(member)]));
  if (Array.isArray(value)) return value.map(mapToPlain);
  return value;
}

test('one row moved, inserted or removed reports exactly that row', () => {
  const rows = ['a', 'b', 'c', 'd', 'e'].map((id) => row(id));
  const old = [section('S', rows)];
  const moved = diffLists(old, [section('S', [rows[1], rows[2], rows[3], rows[0], rows[4]])]);
  assert.equal(encode(moved), '{"sections":{"deleted":[],"inserted":[],"moved":[],"reloaded":[]},'
    + '"rows":{"deleted":[],"inserted":[],"moved":[{"id":"a","from":[0,0],"to":[0,3]}],"reloaded":[]}}');
  const inserted = diffLists(old, [section('S', [rows[0], rows[1], row('x'), rows[2], rows[3], rows[4]])]);
  assert.deepEqual(inserted.rows.inserted, [{ id: 'x', at: { section: 0, row: 2 } }]);
  assert.equal(inserted.rows.moved.length + inserted.rows.deleted.length, 0);
  const removed = diffLists(old, [section('S', [rows[0], rows[2], rows[3], rows[4]])]);
  assert.deepEqual(removed.rows.deleted, [{ id: 'b', at: { section: 0, row: 1 } }]);
  assert.equal(removed.rows.moved.length + removed.rows.inserted.length, 0);
});

test('rows follow their sections: leaving a deleted section is an insert, entering an inserted one a delete', () => {
  const old = [section('A', [row('a1'), row('a2')]), section('B', [row('b1')])];
  const next = [section('C', [row('a1')]), section('B', [row('b1'), row('a2')])];
  const changes = diffLists(old, next);
  assert.equal(encode(changes), '{"sections":{"deleted":[{"id":"A","at":0}],"inserted":[{"id":"C","at":0}],"moved":[],"reloaded":[]},'
    + '"rows":{"deleted":[],"inserted":[{"id":"a2","at":[1,1]}],"moved":[],"reloaded":[]}}');
  const swapped = diffLists(old, [section('B', [row('b1', 1)], 'T'), section('A', [row('a2'), row('a1')])]);
  assert.equal(encode(swapped), '{"sections":{"deleted":[],"inserted":[],"moved":[{"id":"B","from":1,"to":0}],"reloaded":[{"id":"B","at":0}]},'
    + '"rows":{"deleted":[],"inserted":[],"moved":[{"id":"a2","from":[0,1],"to":[1,0]}],"reloaded":[{"id":"b1","at":[0,0]}]}}');
});

test('the longest increasing run is the one patience sorting finds, the same in every port', () => {
  assert.deepEqual(longestIncreasingRun([]), []);
  assert.deepEqual(longestIncreasingRun([3, 0, 1, 2]), [false, true, true, true]);
  // Ties in length go to the piles' last tops: [2, 3] here, not [0, 3] or [1, 3].
  assert.deepEqual(longestIncreasingRun([0, 2, 1, 3]), [true, false, true, true]);
  assert.deepEqual(longestIncreasingRun([4, 3, 2, 1, 0]), [false, false, false, false, true]);
});

test('changes that do not fit the old list apply as nothing', () => {
  const old = [section('A', [row('a'), row('b')])];
  const next = [section('A', [row('b'), row('a')])];
  const changes = diffLists(old, next);
  assert.ok(applyListChanges(changes, old, next));
  const wrongIndex = structuredClone({ ...changes, rows: { ...changes.rows, moved: changes.rows.moved.map((m) => ({ ...m, from: { section: 0, row: 5 } })) } });
  assert.equal(applyListChanges(wrongIndex, old, next), null);
  const twice = { ...changes, rows: { ...changes.rows, deleted: [{ id: 'a', at: { section: 0, row: 0 } }, { id: 'a', at: { section: 0, row: 0 } }] } };
  assert.equal(applyListChanges(twice, old, next), null);
});

test('lists are capped as Swift caps them: values 16 levels deep, 65536 UTF-8 bytes a row, 1 MiB a list', () => {
  /**
   * @param {import('../src/engine/json.js').JSONObject} values
   * @param {string} [id]
   * @returns {ListRow}
   */
  const cell = (values, id = 'new') => ({ id, kind: 'cell', values });
  /** @param {number} levels */
  const nested = (levels) => {
    /** @type {import('../src/engine/json.js').JSONObject} */
    let value = new Map([['v', 1]]);
    for (let level = 1; level < levels; level += 1) value = new Map([['v', value]]);
    return value;
  };
  assert.equal(sizeProblem([section('s', [cell(nested(16))])]), null);
  const deep = sizeProblem([section('s', [cell(new Map()), cell(nested(17), 'd')])]);
  assert.deepEqual([deep?.tooLarge, deep?.pointer], [true, [0, 'rows', 1, 'values']]);
  // {"id":"new","kind":"cell","values":{"text":"…"}} is 47 bytes around the text; é is 2 bytes.
  assert.equal(sizeProblem([section('s', [cell(new Map([['text', `${'é'.repeat(32744)}x`]]))])]), null);
  const big = sizeProblem([section('s', [cell(new Map([['text', 'é'.repeat(32745)]]))])]);
  assert.deepEqual([big?.pointer, big?.detail], [[0, 'rows', 0], 'row "new" takes 65537 bytes as JSON; a row takes at most 65536']);
  const share = new Map([['text', 'y'.repeat(60_000)]]);
  const rows = (/** @type {number} */ count) => Array.from({ length: count }, (_, n) => cell(share, `r${n}`));
  assert.equal(sizeProblem([section('a', rows(17))]), null);
  const total = sizeProblem([section('a', rows(10)), section('b', rows(10))]);
  assert.deepEqual([total?.pointer, total?.detail], [[], 'the list\'s rows take more than 1048576 bytes as JSON; a list takes at most 1048576']);
  assert.throws(() => readSections(parseJSON(`[{"id":"s","rows":[{"id":"r","kind":"k","values":${writeJSON(nested(17))}}]}]`)),
    (problem) => problem instanceof ListProblem && problem.tooLarge);
});

test('rows from params carry only row kinds the catalog declares, compared by canonical equivalence', async () => {
  const { readDefinition, startTree, makeAction, applyAction, FlowError } = await import('../src/engine/index.js');
  const { declaredRowKinds } = await import('../src/engine/definition.js');
  const app = readDefinition(parseJSON(`{"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": [{"id": "s", "rows": []}]}],
    "on": {"add": [{"from": "list", "params": {"row": "object"}, "do": [{"insertRow": {"section": "s", "row": {"$param": "row"}}}]}],
           "open": [{"from": "list", "row": "badge", "do": [{"push": "detail"}]}]}}`), 'app');
  const other = readDefinition(parseJSON('{"name": "other", "kind": "stacked", "initial": [{"screen": "menu", "sections": [{"id": "m", "rows": [{"id": "c", "kind": "caf\\u00e9"}]}]}]}'), 'other');
  const catalog = new Map([['app', app], ['other', other]]);
  const kinds = declaredRowKinds(catalog);
  assert.deepEqual([...kinds].sort(), ['badge', 'cafe\u0301']);
  assert.equal(declaredRowKinds(catalog), kinds, 'computed once per catalog');
  const context = { userId: 'u', user: new Map(), attributes: new Map(), traits: new Map(), flags: new Map() };
  const tree = startTree(catalog, context);
  const add = (kind) => makeAction('add', { from: 'e2', params: new Map([['row', new Map([['id', 'x'], ['kind', kind]])]]) });
  assert.equal(applyAction(add('cafe\u0301'), tree, catalog, context).tree.root.entries[0].sections[0].rows[0].kind, 'cafe\u0301');
  assert.throws(() => applyAction(add('ghost'), tree, catalog, context), (error) => error instanceof FlowError && error.code === 'invalid-params'
    && error.pointer === '/params/row'
    && error.details.message === `add's insertRow effect: at /kind of the value: row kind "ghost" is not declared; a row from params may carry only a kind the definitions declare (written in a list, or matched by a rule's "row")`);
});
