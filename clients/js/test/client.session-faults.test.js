// FlowSession when the app, the store or the platform misbehaves (issue 36's review): a tap JSON
// cannot write or the store cannot read back, listeners that throw, taps after close, a store that
// fails, keys that repeat, a remount on the same store, no `crypto`, no `TextDecoder`. Against a
// real `flowstack serve`, over a fetch that injects faults; each test failed before its fix.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import {
  checkedAction, decodeStoredSession, encodeStoredSession, FlowSession, KeyValueSessionStore, MemorySessionStore, NavigationState,
  localEngine, randomKey, RetryPolicy, SessionFlags, SessionKey, Unreachable,
} from '../src/client/index.js';
import * as engineModule from '../src/engine/index.js';
import { retryAfterMilliseconds } from '../src/client/http-transport.js';
import { eventually, FaultyFetch, serverForTests, startSession, testRetry } from './support/server.js';

const server = serverForTests();
const retry = testRetry;

/**
 * A session for a new user over a faulty fetch.
 * @param {{store?: import('../src/client/index.js').SessionStore, userId?: string, network?: FaultyFetch, newKey?: () => string}} [options]
 */
const start = (options = {}) => startSession(server, { prefix: 'faults', ...options });

/** @param {FlowSession} session */
const log = (session) => server.actionLog(session.sessionId, session.token);

/**
 * What a promise did within `ms`: 'resolved', the rejection's message, or 'pending'.
 * @param {Promise<unknown>} promise
 * @param {number} ms
 */
const within = (promise, ms) => Promise.race([
  promise.then(() => 'resolved', (/** @type {Error} */ error) => `rejected: ${error.message}`),
  new Promise((resolve) => setTimeout(() => resolve('pending'), ms)),
]);

/** A `localStorage` in memory. */
class MapStorage {
  constructor() {
    /** @type {Map<string, string>} */
    this.map = new Map();
  }

  /** @param {string} key */
  getItem(key) {
    return this.map.get(key) ?? null;
  }

  /** @param {string} key @param {string} value */
  setItem(key, value) {
    this.map.set(key, value);
  }

  /** @param {string} key */
  removeItem(key) {
    this.map.delete(key);
  }
}

test('a tap whose params JSON cannot write (a BigInt, a cycle) is refused before it is queued, and the next tap still goes', async () => {
  const { session, store, userId } = await start();
  await assert.rejects(session.send({ type: 'onboarding.showSecond', params: { n: 1n } }), (error) => error instanceof TypeError && /params\.n is a BigInt/.test(error.message));
  /** @type {Record<string, unknown>} */
  const cycle = {};
  cycle.self = cycle;
  await assert.rejects(session.send({ type: 'onboarding.showSecond', params: { cycle } }), /cycle/);
  await assert.rejects(session.send({ type: 'onboarding.showSecond', params: { when: new Date(0) } }), /params\.when is a Date/);
  assert.equal(session.pendingCount, 0, 'nothing queued');
  assert.equal((await store.load(new SessionKey(server.url, userId)))?.queue.length, 0, 'nothing stored');
  await session.send({ type: 'onboarding.showSecond' });
  await session.settled();
  assert.equal(session.machine.inFlight, 0);
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond']);
  await session.close();
});

test('checkedAction names what is wrong, drops undefined members and copies the params', () => {
  assert.throws(() => checkedAction({ type: 'a', from: 7 }), /from must be a screen's id \(a string\), not the number 7/);
  assert.throws(() => checkedAction({ type: '' }), /non-empty string/);
  assert.throws(() => checkedAction({ type: 'a', interactive: 'yes' }), /interactive must be a boolean/);
  assert.throws(() => checkedAction({ type: 'a', row: 3 }), /row must be a row's id \(a string\), not the number 3/);
  assert.deepEqual(checkedAction({ type: 'contact.star', from: 'e4', row: 'bea' }), { type: 'contact.star', from: 'e4', row: 'bea' },
    'a row tap keeps its row');
  assert.throws(() => checkedAction({ type: 'a', params: [1] }), /params must be a plain object, not an array/);
  assert.throws(() => checkedAction({ type: 'a', params: { x: NaN } }), /params\.x is NaN/);
  assert.throws(() => checkedAction({ type: 'a', params: { x: [() => 1] } }), /params\.x\[0\] is a function/);
  const params = { tab: 1, note: undefined, nested: { ok: [true, null, 'x'] } };
  const checked = checkedAction({ type: 'home.selectTab', params, interactive: false });
  assert.deepEqual(checked, { type: 'home.selectTab', params: { tab: 1, nested: { ok: [true, null, 'x'] } } });
  params.tab = 2;
  assert.equal(checked.params?.tab, 1, 'a copy: the app changing its object does not change the tap');
});

test('a tap with a from that is not a string is refused; the kept session and its taps survive the next launch', async () => {
  const storage = new MapStorage();
  const config = { server: server.url, userId: `faults-h-${process.pid}`, store: new KeyValueSessionStore(storage), retry, fetch: new FaultyFetch().fetch };
  const first = await FlowSession.start(config);
  await first.settled();
  first.setOffline(true);
  await first.send({ type: 'onboarding.showSecond' });
  await assert.rejects(first.send(/** @type {any} */ ({ type: 'onboarding.completed', from: 7 })), TypeError);
  assert.equal(first.pendingCount, 1);
  await first.close();
  const second = await FlowSession.start(config);
  assert.equal(second.sessionId, first.sessionId, 'the kept session resumed');
  await second.settled();
  assert.deepEqual((await log(second)).map((entry) => entry.type), ['onboarding.showSecond'], 'the kept tap was sent');
  await second.close();
});

test('4,000 taps queued offline in a key-value store: each writes a bounded number of bytes, not the whole queue again, and all load back', async () => {
  const storage = new MapStorage();
  let written = 0;
  const counted = {
    getItem: (/** @type {string} */ key) => storage.getItem(key),
    removeItem: (/** @type {string} */ key) => storage.removeItem(key),
    setItem: (/** @type {string} */ key, /** @type {string} */ value) => {
      written += key.length + value.length;
      storage.setItem(key, value);
    },
  };
  const store = new KeyValueSessionStore(counted);
  const { session, userId } = await start({ store, engine: localEngine(engineModule) });
  try {
    await eventually(() => session.hasLocalEngine, 'the bundle loaded', 5000);
    await session.send({ type: 'onboarding.showSecond' });
    await session.send({ type: 'onboarding.completed' });
    await session.settled();
    session.setOffline(true);
    const stored = /** @type {string} */ (storage.getItem(store.prefix + new SessionKey(server.url, userId))).length;
    /** Bytes written by each thousand taps. @type {number[]} */
    const thousands = [];
    for (let tap = 0; tap < 4000; tap++) {
      if (tap % 1000 === 0) thousands.push(0);
      const before = written;
      await session.send({ type: 'home.selectTab', params: { index: (tap + 1) % 2 } });
      thousands[thousands.length - 1] += written - before;
    }
    // A tap is about 200 bytes with its key; the whole session (the bundle, the confirmed state)
    // is rewritten now and then, amortised. Rewriting it on every tap is 8 KB and more per tap.
    assert.ok(thousands.every((bytes) => bytes / 1000 < 1000), `bytes per tap, by thousand: ${thousands.map((bytes) => Math.round(bytes / 1000))} (the session is ${stored} bytes)`);
    const loaded = await new KeyValueSessionStore(storage).load(new SessionKey(server.url, userId));
    assert.deepEqual(loaded?.queue.map((item) => item.key), session.pending.map((item) => item.key), 'every tap, in order');
    assert.equal(loaded?.bundle !== undefined && loaded.confirmed?.version, session.confirmedState.version);
  } finally {
    await session.close();
  }
});

test('a stored queue with one tap that does not read keeps the session and the other taps, and counts the one left out', () => {
  const good = { key: 'k1', version: 0, action: { type: 'onboarding.showSecond' } };
  const text = JSON.stringify({
    server: 'https://flows.example.com', sessionId: 's_1', token: 't', userId: 'ada',
    queue: [good, { key: 'k2', version: 1, action: { type: 'onboarding.completed', from: 7 } }, { key: 'k3', version: 1, action: { type: 'x', params: [1] } }, { version: 2 }],
  });
  const session = decodeStoredSession(text);
  assert.ok(session, 'the session is kept');
  assert.equal(session.sessionId, 's_1');
  assert.deepEqual(session.queue, [good]);
  assert.equal(session.skipped, 3);
  assert.equal(decodeStoredSession(encodeStoredSession(session))?.skipped, undefined, 'what reads is written back whole');
});

test('an event listener that throws stops nothing: the tap is confirmed, settled() resolves, a waiting tap gets its answer', async () => {
  const { session, store, userId } = await start();
  session.subscribe((event) => {
    if (event.type === 'confirmed') throw new Error('a bug in the app\'s listener');
  });
  // No prediction has params: the tap waits for its answer, which the throwing listener hears first.
  assert.equal(await within(session.send({ type: 'onboarding.showSecond', params: { note: 'waits' } }), 3000), 'resolved');
  await session.send({ type: 'onboarding.completed' });  // shown from a prediction
  assert.equal(await within(session.settled(), 3000), 'resolved');
  assert.equal((await store.load(new SessionKey(server.url, userId)))?.queue.length, 0, 'the store has the taps confirmed');
  assert.equal(/** @type {Error} */ (session.lastListenerError)?.message, 'a bug in the app\'s listener');
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  assert.equal(session.lastDrainError, undefined);
  await session.close();
});

test('a state listener that throws does not make send() reject a tap that is queued (and later stored, once)', async () => {
  const { session } = await start();
  let calls = 0;
  session.subscribeStates(() => {
    calls += 1;
    if (calls === 2) throw new Error('a render bug');
  });
  const shown = await session.send({ type: 'onboarding.showSecond' });
  assert.deepEqual(shown.features, ['onboarding.first', 'onboarding.second']);
  await session.settled();
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond']);
  assert.equal(calls >= 2, true);
  await session.close();
});

test('a drain that stops on a bug rejects the taps that wait and resolves settled(); the next tap sends again', async () => {
  const { session } = await start();
  await session.settled();
  const perform = session.perform;
  session.perform = async () => {
    session.perform = perform;
    throw new Error('a bug in the drain');
  };
  const waiting = session.send({ type: 'onboarding.showSecond', params: { note: 'waits for its answer' } }).catch(() => {});
  const settled = session.settled();
  assert.equal(await within(settled, 2000), 'resolved');
  await waiting;
  assert.equal(/** @type {Error} */ (session.lastDrainError)?.message, 'a bug in the drain');
  assert.equal(session.machine.inFlight, 0, 'nothing is left on the wire');
  await session.send({ type: 'onboarding.completed' }).catch(() => {});
  await session.settled();
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed'], 'the queue sent after the bug');
  await session.close();
});

test('after close(), send() rejects with Unreachable and queues nothing, and settled() resolves though taps are queued', async () => {
  /** @type {(value?: unknown) => void} */
  let release = () => {};
  const network = new FaultyFetch();
  network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: new Promise((resolve) => { release = resolve; }) });
  const { session, store, userId } = await start({ network });
  await session.send({ type: 'onboarding.showSecond' });
  await session.close();
  await assert.rejects(session.send({ type: 'home.selectTab', params: { index: 1 } }), Unreachable);
  assert.equal(session.pendingCount, 1);
  assert.equal(await within(session.settled(), 1000), 'resolved');
  release();
  assert.equal((await store.load(new SessionKey(server.url, userId)))?.queue.length, 1, 'the tap stays in the store for the next start');
});

test('a remount on the same store: the closed session\'s late answer does not overwrite what the new one keeps', async () => {
  const store = new MemorySessionStore();
  const userId = `faults-e-${process.pid}`;
  const key = new SessionKey(server.url, userId);
  const slow = new FaultyFetch();
  slow.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'delay', ms: 600 });
  const first = await start({ network: slow, store, userId });
  await first.session.send({ type: 'onboarding.showSecond' });  // on the wire for 600 ms
  await first.session.close();
  const held = new FaultyFetch();
  held.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: new Promise((resolve) => setTimeout(resolve, 3000)), times: 100 });
  const second = await FlowSession.start({ server: server.url, userId, store, retry, fetch: held.fetch, timeout: 5000 });
  await eventually(() => held.requests('POST', /\/actions/).length > 0, 'the kept tap sent again');
  second.send({ type: 'onboarding.completed' }).catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 1000));  // the first session's answer has come
  assert.deepEqual((await store.load(key))?.queue.map((item) => item.action.type), second.pending.map((item) => item.action.type));
  assert.equal(second.pendingCount, 2);
  await second.close();
});

test('a save that fails is retried with backoff: the tap is in the store without another change, and send() resolves', async () => {
  const memory = new MemorySessionStore();
  let failures = 0;
  const flaky = {
    load: (/** @type {SessionKey} */ key) => memory.load(key),
    remove: (/** @type {SessionKey} */ key) => memory.remove(key),
    save: (/** @type {import('../src/client/index.js').StoredSession} */ session) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('QuotaExceededError');
      }
      memory.save(session);
    },
  };
  const { session, userId } = await start({ store: flaky });
  await session.settled();
  session.setOffline(true);
  failures = 2;
  const shown = await session.send({ type: 'onboarding.showSecond' });
  assert.deepEqual(shown.features, ['onboarding.first', 'onboarding.second']);
  assert.equal(/** @type {Error} */ (session.lastStoreError)?.message, 'QuotaExceededError');
  await eventually(() => memory.load(new SessionKey(server.url, userId))?.queue.length === 1, 'the tap saved on a retry', 2000);
  await session.close();
});

test('a store that is full at the first launch: start() still resolves with a state to draw, and the session is saved on a retry', async () => {
  const storage = new MapStorage();
  let failures = 3;
  const full = {
    getItem: (/** @type {string} */ key) => storage.getItem(key),
    removeItem: (/** @type {string} */ key) => storage.removeItem(key),
    setItem: (/** @type {string} */ key, /** @type {string} */ value) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('QuotaExceededError');
      }
      storage.setItem(key, value);
    },
  };
  const store = new KeyValueSessionStore(full);
  const { session, userId } = await start({ store });
  try {
    assert.equal(session.state.top?.feature, 'onboarding.first');
    assert.equal(/** @type {Error} */ (session.lastStoreError)?.message, 'QuotaExceededError');
    await session.send({ type: 'onboarding.showSecond' });
    await session.settled();
    await eventually(async () => (await store.load(new SessionKey(server.url, userId)))?.sessionId === session.sessionId, 'the session saved on a retry', 3000);
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond']);
  } finally {
    await session.close();
  }
});

test('a tap that waits is refused while a slow store (AsyncStorage) saves it: the caller gets the rejection, and nothing is reported unhandled', async () => {
  const storage = new MapStorage();
  const slow = {
    getItem: async (/** @type {string} */ key) => storage.getItem(key),
    removeItem: async (/** @type {string} */ key) => storage.removeItem(key),
    setItem: async (/** @type {string} */ key, /** @type {string} */ value) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      storage.setItem(key, value);
    },
  };
  /** @type {unknown[]} */
  const unhandled = [];
  const record = (/** @type {unknown} */ reason) => unhandled.push(reason);
  process.on('unhandledRejection', record);
  const { session } = await start({ store: new KeyValueSessionStore(slow) });
  try {
    session.setOffline(true);
    await session.send({ type: 'onboarding.showSecond' });  // shown from the prediction
    // No prediction for the next one: it waits, and offline it is rejected at once, while the
    // store still writes it.
    await assert.rejects(session.send({ type: 'onboarding.completed' }), Unreachable);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(unhandled, [], 'a rejection the caller handles is not reported unhandled (node exits on one)');
    assert.equal(session.pendingCount, 2, 'the tap stays queued');
    session.setOffline(false);
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  } finally {
    process.off('unhandledRejection', record);
    await session.close();
  }
});

test('a newKey that repeats: the second tap is refused (not queued), the first is stored once, nothing is refused by the server', async () => {
  const network = new FaultyFetch();
  const { session } = await start({ network, newKey: () => 'the-same-key' });
  await session.settled();
  const first = session.send({ type: 'onboarding.showSecond' });
  await assert.rejects(session.send({ type: 'onboarding.completed' }), /already used/);
  await first;
  await session.settled();
  await assert.rejects(session.send({ type: 'onboarding.completed' }), /already used/, 'a key sent and answered is not new either');
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond']);
  assert.equal(network.requests('POST', /\/actions/).length, 1);
  await session.close();
});

test('without globalThis.crypto (node 18) start() and randomKey() say to pass newKey; with newKey it starts', async () => {
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true, writable: true });
  try {
    assert.throws(() => randomKey(), /pass newKey/);
    await assert.rejects(FlowSession.start({ server: server.url, userId: `faults-n18-${process.pid}` }), /pass newKey/);
    let keys = 0;
    const network = new FaultyFetch();
    const session = await FlowSession.start({ server: server.url, userId: `faults-n18-${process.pid}`, fetch: network.fetch, newKey: () => `n18-${process.pid}-${++keys}` });
    await session.send({ type: 'onboarding.showSecond' });
    await session.settled();
    assert.equal((await log(session)).length, 1);
    assert.deepEqual(network.requests('POST', /\/actions$/).map((post) => post.headers['Idempotency-Key']), [`n18-${process.pid}-1`]);
    await session.close();
  } finally {
    if (descriptor) Object.defineProperty(globalThis, 'crypto', descriptor);
  }
});

test('without TextDecoder (React Native\'s Hermes) the package imports and ASCII links match', () => {
  const root = new URL('../src/index.js', import.meta.url).href;
  const links = new URL('../src/engine/linkPattern.js', import.meta.url).href;
  const script = `delete globalThis.TextDecoder;
    const flowstack = await import(${JSON.stringify(root)});
    const { captures, parseLinkPattern, parseLinkURI } = await import(${JSON.stringify(links)});
    const found = captures(parseLinkPattern('/modal/{content}?tab={tab}'), parseLinkURI('myapp://x/modal/news%2D1?tab=2'));
    console.log(typeof flowstack.FlowSession);
    console.log(JSON.stringify(found));
    try { captures(parseLinkPattern('/modal/{content}'), parseLinkURI('/modal/caf%C3%A9')); } catch (error) { console.log(error.message); }`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const [imported, matched, other] = run.stdout.trim().split('\n');
  assert.equal(imported, 'function');
  assert.deepEqual(JSON.parse(matched), [{ name: 'content', value: 'news-1' }, { name: 'tab', value: '2' }]);
  assert.match(other, /needs TextDecoder.*polyfill/, 'a link with other characters says what it needs');
});

test('flags and experiments are own members only: constructor and __proto__ are none', () => {
  const state = /** @type {NavigationState} */ (/** @type {unknown} */ ({
    flags: { beta: { value: true, variant: 'on', reason: 'rule' } }, experiments: { checkout: 'b' },
  }));
  const flags = new SessionFlags(state);
  assert.equal(flags.variant('constructor'), undefined);
  assert.equal(flags.variant('__proto__'), undefined);
  assert.equal(flags.json('constructor'), undefined);
  assert.equal(flags.flagVariant('toString'), undefined);
  assert.equal(flags.bool('beta'), true);
  assert.equal(flags.variant('checkout'), 'b');
});

test('a 500 that persists while /healthz answers: the backoff grows across going offline and back, not reset by each probe', async () => {
  const network = new FaultyFetch();
  const { session } = await start({ network });
  await session.settled();
  session.retry = new RetryPolicy({ attempts: 3, initialDelay: 20, maximumDelay: 400 });
  session.machine.retry = session.retry;
  network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: '500-before', times: 100000 });
  const events = [];
  session.subscribe((event) => events.push(event.type));
  session.send({ type: 'onboarding.showSecond' }).catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const posts = network.requests('POST', /\/actions/);
  const gaps = posts.slice(1).map((post, index) => post.at - posts[index].at);
  await session.close();
  assert.ok(events.includes('offline') && events.includes('online'), 'it went offline and came back');
  assert.ok(posts.length <= 14, `${posts.length} posts in 2.5 s (at the first delays, every 20-40 ms, it is more than 50)`);
  // Gaps of 20, 40 ms; then 160 (a probe and a pause of 80 each), 160, 320; then 400 ms and more.
  assert.ok(gaps.slice(5).every((gap) => gap >= 380), `from the sixth on, the gaps are at the longest delay: ${gaps}`);
});

test('a 429 with Retry-After: the tap goes again no sooner than the server asked', async () => {
  const network = new FaultyFetch();
  const { session } = await start({ network });
  await session.settled();
  network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: '429-before', retryAfter: '1' });
  await session.send({ type: 'onboarding.showSecond' });
  await session.settled();
  const posts = network.requests('POST', /\/actions/);
  assert.equal(posts.length, 2);
  assert.ok(posts[1].at - posts[0].at >= 950, `the retry came after ${posts[1].at - posts[0].at} ms`);
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond']);
  await session.close();
});

test('Retry-After reads as seconds or an HTTP date, capped; anything else is none', () => {
  const now = Date.parse('Sun, 29 Nov 2026 00:00:00 GMT');
  assert.equal(retryAfterMilliseconds('3', now), 3000);
  assert.equal(retryAfterMilliseconds('Sun, 29 Nov 2026 00:00:10 GMT', now), 10000);
  assert.equal(retryAfterMilliseconds('Sat, 28 Nov 2026 00:00:00 GMT', now), 0);
  assert.equal(retryAfterMilliseconds('86400', now), 5 * 60 * 1000);
  assert.equal(retryAfterMilliseconds('soon', now), undefined);
  assert.equal(retryAfterMilliseconds('-1', now), undefined);
  assert.equal(retryAfterMilliseconds(null, now), undefined);
});
