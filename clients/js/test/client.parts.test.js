// The client's parts on their own: the event-stream reader, session keys and stored sessions, the
// state document reader, requests and retry delays. No server.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { test } from 'node:test';
import {
  EventStreamParser, KeyValueSessionStore, openEventStream, MalformedState, MemorySessionStore, NavigationState, RetryPolicy, SessionKey,
  SessionRequests, decodeStoredSession, encodeStoredSession, randomKey,
} from '../src/client/index.js';
import { DoubleEngine } from './support/engine-double.js';

test('an event or a line that grows past the limit throws rather than fill the memory; one under it reads', () => {
  const parser = new EventStreamParser({ limit: 100 });
  assert.deepEqual(parser.feed(`data: ${'x'.repeat(80)}\n\n`), [{ event: 'message', data: 'x'.repeat(80) }]);
  assert.throws(() => parser.feed('data: ' + 'y'.repeat(120)), RangeError, 'a line that never ends');
  const many = new EventStreamParser({ limit: 100 });
  assert.throws(() => { for (let i = 0; i < 20; i++) many.feed('data: 0123456789\n'); }, RangeError, 'an event that never ends');
  assert.equal(new EventStreamParser().limit, 8 << 20);
});

test('events are cut at empty lines whatever the chunks; comments are skipped, CRLF is a newline, the last id is kept', () => {
  const parser = new EventStreamParser();
  const text = ': keep-alive\n\nid: 5\r\nevent: state\r\ndata: {"version":5}\r\n\r\nid: 6\nevent: state\ndata: {"a":\ndata: 1}\n\nevent: deleted\ndata: {}\n\n';
  const events = [];
  for (let i = 0; i < text.length; i += 7) events.push(...parser.feed(text.slice(i, i + 7)));
  assert.deepEqual(events, [
    { id: '5', event: 'state', data: '{"version":5}' },
    { id: '6', event: 'state', data: '{"a":\n1}' },
    { id: '6', event: 'deleted', data: '{}' },
  ]);
});

test('equivalent spellings of a server are one key; other schemes, ports, paths and hosts are not', () => {
  const key = new SessionKey('https://flows.example.com', 'ada');
  for (const spelling of ['HTTPS://Flows.Example.com', 'https://flows.example.com:443', 'https://flows.example.com/', 'https://FLOWS.example.com:443//']) {
    assert.ok(new SessionKey(spelling, 'ada').equals(key), spelling);
  }
  assert.ok(new SessionKey('http://h:80/', 'u').equals(new SessionKey('http://h', 'u')));
  assert.ok(!new SessionKey('http://flows.example.com', 'ada').equals(key));
  assert.ok(!new SessionKey('https://flows.example.com:8443', 'ada').equals(key));
  assert.ok(!new SessionKey('https://flows.example.com/eu', 'ada').equals(key));
  assert.ok(!new SessionKey('http://localhost:8080', 'u').equals(new SessionKey('http://127.0.0.1:8080', 'u')));
  assert.ok(!new SessionKey('https://flows.example.com', 'bob').equals(key));
});

test('a stored session round-trips, queue, confirmed state and bundle text; what is not one reads as none', () => {
  const session = {
    server: 'http://127.0.0.1:1', sessionId: 's_1', token: 't', userId: 'u',
    queue: [{ key: 'k', version: 3, action: { type: 'home.selectTab', from: 'e6', params: { index: 1 } }, at: '2026-11-28T12:00:00.000Z' }],
    confirmed: { sessionId: 's_1', version: 3 }, bundle: '{"format":1,"sessionId":"s_1"}', bundleTag: '"b3"',
  };
  const text = encodeStoredSession(session);
  assert.deepEqual(JSON.parse(text).bundle, { format: 1, sessionId: 's_1' }, 'the bundle is kept as JSON, as the Swift client keeps it');
  assert.deepEqual(decodeStoredSession(text), session);
  assert.equal(decodeStoredSession('{}'), undefined);
  assert.equal(decodeStoredSession('not json'), undefined);
  // A tap that does not read is left out and counted; the session is kept.
  const skipping = decodeStoredSession(JSON.stringify({ ...JSON.parse(text), queue: [{ key: 'k', version: 'x', action: { type: 't' } }] }));
  assert.deepEqual([skipping?.sessionId, skipping?.queue, skipping?.skipped], [session.sessionId, [], 1]);
});

test('a key-value store (sync like localStorage, or async like AsyncStorage) keeps each server\'s and user\'s session apart', async () => {
  /** @type {Map<string, string>} */
  const backing = new Map();
  const asyncStorage = {
    getItem: async (/** @type {string} */ key) => backing.get(key) ?? null,
    setItem: async (/** @type {string} */ key, /** @type {string} */ value) => { backing.set(key, value); },
    removeItem: async (/** @type {string} */ key) => { backing.delete(key); },
  };
  const store = new KeyValueSessionStore(asyncStorage);
  const local = { server: 'http://127.0.0.1:8080/', sessionId: 's_1', token: 't_1', userId: 'ada', queue: [{ key: 'k1', version: 0, action: { type: 'onboarding.showSecond' } }] };
  const named = { server: 'http://localhost:8080', sessionId: 's_2', token: 't_2', userId: 'ada', queue: [] };
  await store.save(local);
  await store.save(named);
  assert.deepEqual((await store.load(new SessionKey('http://127.0.0.1:8080', 'ada')))?.queue, local.queue);
  assert.equal((await store.load(new SessionKey('HTTP://LOCALHOST:8080/', 'ada')))?.sessionId, 's_2');
  await store.remove(new SessionKey('http://127.0.0.1:8080', 'ada'));
  assert.equal(await store.load(new SessionKey('http://127.0.0.1:8080', 'ada')), undefined);
  assert.equal(backing.size, 1);

  const memory = new MemorySessionStore(named);
  const loaded = memory.load(new SessionKey('http://localhost:8080/', 'ada'));
  loaded?.queue.push({ key: 'k', version: 0, action: { type: 'x' } });
  assert.equal(memory.load(new SessionKey('http://localhost:8080', 'ada'))?.queue.length, 0, 'a loaded session is a copy');
});

/** @typedef {import('../src/client/index.js').StoredSession} StoredSession */

/**
 * A storage over `map` that is killed at its `limit`-th write (`setItem` or `removeItem`): that
 * write and every one after it throw and write nothing, as if the app had died there. Sync like
 * `localStorage`, or answering promises like AsyncStorage.
 */
class KilledStorage {
  /**
   * @param {Map<string, string>} map
   * @param {number} limit
   * @param {boolean} async
   */
  constructor(map, limit = Infinity, async = false) {
    this.map = map;
    this.limit = limit;
    this.async = async;
    this.writes = 0;
  }

  /** @template T @param {() => T} step */
  run(step) {
    return this.async ? Promise.resolve().then(step) : step();
  }

  /** @param {string} key */
  getItem(key) {
    return this.run(() => this.map.get(key) ?? null);
  }

  /** @param {() => void} step */
  write(step) {
    return this.run(() => {
      if (this.writes >= this.limit) throw new Error('killed');
      this.writes += 1;
      step();
    });
  }

  /** @param {string} key @param {string} value */
  setItem(key, value) {
    return this.write(() => this.map.set(key, value));
  }

  /** @param {string} key */
  removeItem(key) {
    return this.write(() => this.map.delete(key));
  }
}

/**
 * The saves of a session as a FlowSession makes them (each a new object; a tap is the same object
 * in every save that keeps it): taps one by one, past the journal's length, three at once, the
 * first ten confirmed with a new confirmed state, a waiting tap whose action changes in the
 * middle of the queue, a new bundle, a new session.
 * @returns {StoredSession[]}
 */
function scriptedSaves() {
  const at = (/** @type {number} */ n) => `2026-11-28T12:${String(Math.floor(n / 60)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}.000Z`;
  const tap = (/** @type {number} */ n) => ({ key: `k${n}`, version: n, action: { type: 'home.selectTab', from: 'e2', params: { index: n % 2 } }, at: at(n) });
  /** @type {StoredSession} */
  let session = {
    server: 'http://127.0.0.1:8080', sessionId: 's_1', token: 't_1', userId: 'ada', queue: [],
    confirmed: { sessionId: 's_1', version: 0 }, bundle: '{"format":1,"sessionId":"s_1"}', bundleTag: '"b0"',
  };
  const saves = [session];
  /** @param {Partial<StoredSession>} change */
  const next = (change) => saves.push(session = { ...session, queue: session.queue.slice(), ...change });
  let made = 0;
  for (let i = 0; i < 70; i++) next({ queue: [...session.queue, tap(made++)] });
  next({ queue: [...session.queue, tap(made++), tap(made++), tap(made++)] });
  next({ queue: session.queue.slice(10), confirmed: { sessionId: 's_1', version: 10 } });
  for (let i = 0; i < 5; i++) next({ queue: [...session.queue, tap(made++)] });
  const waited = session.queue.slice();
  waited[2] = { ...waited[2], action: { type: 'home.selectTab', from: 'e9', params: { index: 0 } } };
  next({ queue: waited });
  next({ queue: [...session.queue, tap(made++)] });
  next({ bundle: '{"format":1,"sessionId":"s_1","v":2}', bundleTag: '"b2"', queue: [...session.queue, tap(made++)] });
  next({ queue: [...session.queue, tap(made++)] });
  next({ sessionId: 's_2', token: 't_2', queue: [], confirmed: { sessionId: 's_2', version: 0 } });
  for (let i = 0; i < 3; i++) next({ queue: [...session.queue, tap(made++)] });
  return saves;
}

/** What a store loads back of `session`: its stored form, read. @param {StoredSession} session */
const asLoaded = (session) => decodeStoredSession(encodeStoredSession(session));

for (const async of [false, true]) {
  test(`a key-value store (${async ? 'async' : 'sync'}) killed at any write loads the session before that save or after it, never a mix; the next launch goes on from it and removes it whole`, async () => {
    const saves = scriptedSaves();
    const key = new SessionKey('http://127.0.0.1:8080', 'ada');
    const full = new KilledStorage(new Map(), Infinity, async);
    const whole = new KeyValueSessionStore(full);
    for (const session of saves) await whole.save(session);
    assert.deepEqual(await whole.load(key), asLoaded(saves[saves.length - 1]));
    assert.ok(full.writes > saves.length + 64, `the script compacts the journal (${full.writes} writes for ${saves.length} saves)`);
    for (let limit = 0; limit <= full.writes; limit++) {
      const map = new Map();
      const storage = new KilledStorage(map, limit, async);
      const store = new KeyValueSessionStore(storage);
      let done = 0;
      try {
        for (const session of saves) {
          await store.save(session);
          done += 1;
        }
      } catch (error) {
        assert.equal(/** @type {Error} */ (error).message, 'killed');
      }
      const relaunched = new KeyValueSessionStore(new KilledStorage(map, Infinity, async));
      const loaded = await relaunched.load(key);
      const before = done === 0 ? undefined : asLoaded(saves[done - 1]);
      const after = done === saves.length ? before : asLoaded(saves[done]);
      assert.ok(isDeepStrictEqual(loaded, before) || isDeepStrictEqual(loaded, after),
        `killed at write ${limit}, in save ${done + 1}: loaded ${loaded?.sessionId} with ${loaded?.queue.length} taps, `
        + `not the ${before?.queue.length ?? 'no'} taps before nor the ${after?.queue.length} after`);
      const last = saves[saves.length - 1];
      await relaunched.save(last);
      assert.deepEqual(await relaunched.load(key), asLoaded(last), `killed at write ${limit}: saved again`);
      await relaunched.remove(key);
      assert.deepEqual([...map.keys()], [], `killed at write ${limit}: removed whole`);
    }
  });
}

test('a key-value store reads the one entry written before the journal, goes on from it, and never reads a journal its main entry does not name', async () => {
  const map = new Map();
  const key = new SessionKey('http://127.0.0.1:8080', 'ada');
  const name = 'flowstack.session:' + key;
  const first = { key: 'k1', version: 0, action: { type: 'onboarding.showSecond' }, at: '2026-11-28T12:00:00.000Z' };
  /** @type {StoredSession} */
  const old = { server: 'http://127.0.0.1:8080', sessionId: 's_1', token: 't_1', userId: 'ada', queue: [first], confirmed: { sessionId: 's_1', version: 0 } };
  map.set(name, encodeStoredSession(old));
  const store = new KeyValueSessionStore(new KilledStorage(map));
  assert.deepEqual(await store.load(key), old);
  const second = { key: 'k2', version: 1, action: { type: 'onboarding.completed' } };
  const third = { key: 'k3', version: 2, action: { type: 'home.selectTab', params: { index: 1 } } };
  await store.save({ ...old, queue: [first, second] });
  await store.save({ ...old, queue: [first, second, third] });
  assert.deepEqual((await new KeyValueSessionStore(new KilledStorage(map)).load(key))?.queue, [first, second, third]);
  assert.ok(map.size > 1, 'the last tap went to the journal');
  // The main entry alone, as an older client writes it: the journal beside it is not its.
  map.set(name, encodeStoredSession(old));
  assert.deepEqual(await new KeyValueSessionStore(new KilledStorage(map)).load(key), old);
});

test('a key-value store removes everything a session has in the storage, journal included, and nothing of another', async () => {
  const map = new Map();
  const storage = new KilledStorage(map);
  const ada = new SessionKey('http://127.0.0.1:8080', 'ada');
  const bob = new SessionKey('http://127.0.0.1:8080', 'bob');
  for (const [userId, count] of [['ada', 100], ['bob', 3]]) {
    const store = new KeyValueSessionStore(storage);
    /** @type {StoredSession} */
    let session = { server: 'http://127.0.0.1:8080', sessionId: `s_${userId}`, token: 't', userId, queue: [] };
    await store.save(session);
    for (let n = 0; n < count; n++) await store.save(session = { ...session, queue: [...session.queue, { key: `${userId}${n}`, version: n, action: { type: 'x' } }] });
  }
  const bobs = [...map.keys()].filter((key) => key.startsWith('flowstack.session:bob on '));
  assert.ok(bobs.length > 1 && map.size > bobs.length + 1);
  await new KeyValueSessionStore(storage).remove(ada);  // a new store: what it removes is read, not remembered
  assert.deepEqual([...map.keys()].sort(), bobs.sort());
  assert.equal(await new KeyValueSessionStore(storage).load(ada), undefined);
  assert.equal((await new KeyValueSessionStore(storage).load(bob))?.queue.length, 3);
  const store = new KeyValueSessionStore(storage);
  await store.load(bob);
  await store.remove(bob);
  assert.equal(map.size, 0);
});

test('two key-value stores writing one key (two tabs): a main entry one rewrites never takes up the journal the other writes', async () => {
  const map = new Map();
  const key = new SessionKey('http://127.0.0.1:8080', 'ada');
  const tap = (/** @type {string} */ name, /** @type {number} */ version) => ({ key: name, version, action: { type: 'x' } });
  /** @type {StoredSession} */
  const base = { server: 'http://127.0.0.1:8080', sessionId: 's_ada', token: 't', userId: 'ada', queue: [] };
  const first = new KeyValueSessionStore(new KilledStorage(map));
  await first.save(base);
  const second = new KeyValueSessionStore(new KilledStorage(map));
  const loaded = await second.load(key);
  assert.ok(loaded);
  // Each tab goes on from what it holds: appends, then a rewrite (a tap confirmed), then appends.
  /** @type {Record<string, StoredSession>} */
  const last = { first: base, second: loaded };
  const stores = { first, second };
  const script = /** @type {const} */ ([['second', 'b1'], ['second', 'confirm'], ['second', 'b2'], ['first', 'a1'], ['first', 'confirm'],
    ['first', 'a2'], ['second', 'b3'], ['second', 'confirm'], ['second', 'b4'], ['first', 'confirm'], ['first', 'a3'], ['second', 'b5']]);
  for (const [tab, step] of script) {
    const session = last[tab];
    last[tab] = step === 'confirm'
      ? { ...session, queue: session.queue.slice(1), confirmed: new Map([['version', session.queue.length]]) }
      : { ...session, queue: [...session.queue, tap(step, session.queue.length)] };
    await stores[tab].save(last[tab]);
    const now = await new KeyValueSessionStore(new KilledStorage(map)).load(key);
    const keys = now?.queue.map((item) => item.key) ?? [];
    assert.ok(new Set(keys.map((name) => name[0])).size <= 1, `after ${tab} ${step}: the store mixes both tabs' taps: ${keys}`);
  }
});

test('a state document reads into values, equal exactly when the documents are; a wrong one names its path', () => {
  const document = JSON.parse(new DoubleEngine().document());
  const state = NavigationState.fromJSON({ ...document, predictions: [] });
  assert.equal(state.top?.feature, 'onboarding.first');
  assert.equal(state.root.entries.length, 1);
  assert.ok(state.equals(NavigationState.fromJSON(JSON.parse(JSON.stringify(document)))));
  assert.ok(!state.equals(NavigationState.fromJSON({ ...document, version: 1 })));
  assert.throws(() => NavigationState.fromJSON({ ...document, screens: [{ id: 'e3' }] }),
    (/** @type {unknown} */ error) => error instanceof MalformedState && error.path === '/screens/0/feature');
  assert.throws(() => NavigationState.fromJSON({ ...document, root: { ...document.root, kind: 'grid' } }),
    (/** @type {unknown} */ error) => error instanceof MalformedState && error.path === '/root/kind');
});

test('requests carry If-Match on the tap\'s version, its key, and the batch items in order', () => {
  const requests = new SessionRequests('s_1', 'tok');
  const post = requests.post({ key: 'k1', version: 4, action: { type: 'home.selectTab', params: { index: 1 }, interactive: false } }, true);
  assert.equal(post.path, '/v1/sessions/s_1/actions');
  assert.equal(post.query, 'predict=true');
  assert.deepEqual(post.headers, { Authorization: 'Bearer tok', 'If-Match': '"4"', 'Idempotency-Key': 'k1' });
  assert.equal(post.body, '{"type":"home.selectTab","params":{"index":1}}');
  const batch = requests.batch([{ key: 'a', version: 1, action: { type: 'x' }, at: 'T' }, { key: 'b', version: 2, action: { type: 'y', params: {} } }]);
  assert.equal(batch.body, '{"actions":[{"key":"a","version":1,"action":{"type":"x"},"at":"T"},{"key":"b","version":2,"action":{"type":"y"}}]}');
});

test('retries back off by doubling up to the cap', () => {
  const policy = new RetryPolicy({ attempts: 5, initialDelay: 100, maximumDelay: 350 });
  assert.deepEqual([1, 2, 3, 4].map((n) => policy.delay(n)), [100, 200, 350, 350]);
});

/** A UUIDv7 with the RFC 9562 variant, in the canonical lowercase 8-4-4-4-12 form. */
const canonicalV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A key's 16 bytes, read back from its text. @param {string} key */
const keyBytes = (key) => Uint8Array.from(key.replaceAll('-', '').match(/../g) ?? [], (pair) => parseInt(pair, 16));

/** A key made while `Date.now()` says `milliseconds`. @param {number} milliseconds */
const keyAt = (milliseconds) => {
  const now = Date.now;
  Date.now = () => milliseconds;
  try {
    return randomKey();
  } finally {
    Date.now = now;
  }
};

/** The time in a key's first 48 bits. @param {string} key */
const keyTime = (key) => keyBytes(key).subarray(0, 6).reduce((time, byte) => time * 256 + byte, 0);

test('keys have the version nibble 7 in byte 6 and the variant bits 10 on top of byte 8', () => {
  for (let i = 0; i < 1000; i++) {
    const bytes = keyBytes(randomKey());
    assert.equal(bytes.length, 16);
    assert.equal(bytes[6] >> 4, 7);
    assert.equal(bytes[8] >> 6, 0b10);
  }
});

test('a key\'s first 48 bits are the time it was made at, in ms, big-endian', () => {
  for (const milliseconds of [0, 1, 0x0123_4567_89ab, 1_767_225_600_123, 2 ** 32, 2 ** 48 - 1]) {
    assert.equal(keyTime(keyAt(milliseconds)), milliseconds, `at ${milliseconds}`);
  }
  assert.equal(keyAt(0x0123_4567_89ab).slice(0, 13), '01234567-89ab');
  const before = Date.now();
  const made = keyTime(randomKey());
  assert.ok(before <= made && made <= Date.now(), `made at ${made}, sent from ${before}`);
});

test('a key made a millisecond later sorts after, as text and as bytes', () => {
  for (const milliseconds of [1_767_225_600_123, 0xff, 0xffff, 0xff_ffff, 2 ** 32 - 1, 0xff_ffff_ffff]) {
    for (let i = 0; i < 100; i++) {
      const [earlier, later] = [keyAt(milliseconds), keyAt(milliseconds + 1)];
      assert.ok(earlier < later, `${earlier} < ${later}`);
      assert.ok(Buffer.compare(keyBytes(earlier), keyBytes(later)) < 0, `${earlier} < ${later} as bytes`);
    }
  }
});

test('10,000 keys are distinct, each a lowercase 8-4-4-4-12 UUIDv7', () => {
  const keys = Array.from({ length: 10_000 }, () => randomKey());
  assert.equal(new Set(keys).size, keys.length);
  for (const key of keys) assert.match(key, canonicalV7);
});

test('the event stream ends at once, saying so, where fetch cannot stream a body (React Native); it reads events where it can', async () => {
  const ended = await new Promise((resolve) => {
    openEventStream({ fetch: async () => new Response(null, { status: 200 }), url: 'http://x/events', headers: {}, onEvent: () => {},
      onEnd: (status, detail, unsupported) => resolve({ status, detail, unsupported }) });
  });
  assert.deepEqual(ended, { status: 200, detail: 'no streaming body', unsupported: true });
  /** @type {import('../src/client/index.js').ServerSentEvent[]} */
  const events = [];
  const finished = await new Promise((resolve) => {
    openEventStream({ fetch: async () => new Response('id: 3\nevent: state\ndata: {"v":3}\n\n', { status: 200 }), url: 'http://x/events', headers: {},
      onEvent: (event) => events.push(event), onEnd: (status, detail, unsupported) => resolve({ status, unsupported }) });
  });
  assert.deepEqual(events, [{ id: '3', event: 'state', data: '{"v":3}' }]);
  assert.deepEqual(finished, { status: 200, unsupported: false });
});
