// Two tabs of one page over one `localStorage`: each claims its own slot of the key under a Web
// Lock, so neither writes over the other's queue, and the taps a tab closed with go out with the
// next page that opens. The locks here are node's stand-in for `navigator.locks`
// (support/tab-locks.js); scripts/browser.py runs the same story in Chromium with the real ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as engineModule from '../src/engine/index.js';
import { FlowSession, KeyValueSessionStore, SessionKey, localEngine } from '../src/client/index.js';
import { eventually, FaultyFetch, serverForTests, testRetry } from './support/server.js';
import { MapStorage, OriginLocks } from './support/tab-locks.js';

const server = serverForTests();
const engine = localEngine(engineModule);
const key = new SessionKey('http://127.0.0.1:8080', 'ada');

/**
 * @param {string} sessionId
 * @param {import('../src/client/client-event.js').QueuedAction[]} [queue]
 */
const stored = (sessionId, queue = []) => ({ server: 'http://127.0.0.1:8080', sessionId, token: `t_${sessionId}`, userId: 'ada', queue });
const tap = (/** @type {string} */ name) => ({ key: name, version: 0, action: { type: 'onboarding.showSecond' } });

test('a second tab claims a slot of its own: neither reads or writes the other\'s session', async () => {
  const storage = new MapStorage();
  const origin = new OriginLocks();
  const first = new KeyValueSessionStore(storage, { locks: origin.tab() });
  const second = new KeyValueSessionStore(storage, { locks: origin.tab() });
  assert.equal(await first.load(key), undefined);
  await first.save(stored('s_a', [tap('a1')]));
  assert.equal(await second.load(key), undefined, 'the second tab does not resume the first one\'s session');
  await second.save(stored('s_b', [tap('b1')]));
  await first.save(stored('s_a', [tap('a1'), tap('a2')]));
  assert.deepEqual((await first.load(key))?.queue.map((item) => item.key), ['a1', 'a2']);
  assert.deepEqual((await second.load(key))?.queue.map((item) => item.key), ['b1']);
  const names = [...storage.map.keys()].filter((name) => !name.includes('#')).sort();
  assert.deepEqual(names, [`flowstack.session:${key}`, `flowstack.session:${key}~2`]);
});

test('stores over one storage in one page share its slot (a remount writes where the first store did)', async () => {
  const storage = new MapStorage();
  const origin = new OriginLocks();
  const page = origin.tab();
  const other = new KeyValueSessionStore(storage, { locks: origin.tab() });
  await other.save(stored('s_other'));
  const mounted = new KeyValueSessionStore(storage, { locks: page });
  await mounted.save(stored('s_page', [tap('p1')]));
  const remounted = new KeyValueSessionStore(storage, { locks: page });
  assert.equal((await remounted.load(key))?.sessionId, 's_page');
  assert.equal(page.held.length, 1, 'the page holds one slot');
});

test('a page that opens takes a free slot holding taps not yet sent before an idle one, and lets go of the rest', async () => {
  const storage = new MapStorage();
  const origin = new OriginLocks();
  const [a, b, c] = [origin.tab(), origin.tab(), origin.tab()];
  await new KeyValueSessionStore(storage, { locks: a }).save(stored('s_a'));
  await new KeyValueSessionStore(storage, { locks: b }).save(stored('s_b'));
  await new KeyValueSessionStore(storage, { locks: c }).save(stored('s_c', [tap('c1')]));
  a.close();
  b.close();
  c.close();
  const next = origin.tab();
  assert.equal((await new KeyValueSessionStore(storage, { locks: next }).load(key))?.sessionId, 's_c', 'the slot with a tap waiting');
  assert.equal(next.held.length, 1, 'the slots it looked at and did not take were let go');
  const after = origin.tab();
  assert.equal((await new KeyValueSessionStore(storage, { locks: after }).load(key))?.sessionId, 's_a', 'then the first idle one');
});

test('without working locks the store keeps one slot per key, as before', async () => {
  const storage = new MapStorage();
  const refusing = { request: () => Promise.reject(new Error('SecurityError: locks are not available in an opaque origin')) };
  const throwing = { request: () => { throw new Error('SecurityError'); } };
  await new KeyValueSessionStore(storage, { locks: refusing }).save(stored('s_a', [tap('a1')]));
  assert.equal((await new KeyValueSessionStore(storage, { locks: throwing }).load(key))?.sessionId, 's_a');
  assert.equal((await new KeyValueSessionStore(storage, { locks: null }).load(key))?.sessionId, 's_a');
  assert.equal((await new KeyValueSessionStore(storage).load(key))?.sessionId, 's_a', 'node has no navigator.locks');
});

test('two tabs of one user, the first closed while offline with taps queued: the next page sends them, each once, and the second tab\'s taps stay its own', async () => {
  const storage = new MapStorage();
  const origin = new OriginLocks();
  const userId = `tabs-${process.pid}-${Date.now()}`;
  /** @param {import('./support/tab-locks.js').TabLocks} locks @param {FaultyFetch} network */
  const open = (locks, network) => FlowSession.start({
    server: server.url, userId, store: new KeyValueSessionStore(storage, { locks }), engine, retry: testRetry, fetch: network.fetch, timeout: 5000,
  });
  const [tabA, tabB] = [origin.tab(), origin.tab()];
  const [netA, netB] = [new FaultyFetch(), new FaultyFetch()];
  const a = await open(tabA, netA);
  const b = await open(tabB, netB);
  assert.notEqual(b.sessionId, a.sessionId, 'the second tab runs a session of its own');
  await a.settled();
  await b.settled();
  // Tab A loses the network and taps through onboarding: drawn at once, kept in its slot.
  netA.down = true;
  await a.send({ type: 'onboarding.showSecond' });
  await a.send({ type: 'onboarding.completed' });
  assert.equal(a.pendingCount, 2);
  // Tab B, online, taps once, and saves while A's taps wait.
  await b.send({ type: 'onboarding.showSecond' });
  await b.settled();
  // Tab A is closed as a browser closes it: no goodbye, its lock let go.
  tabA.close();
  const netC = new FaultyFetch();
  const c = await open(origin.tab(), netC);
  assert.equal(c.sessionId, a.sessionId, 'the next page resumes the closed tab\'s session');
  await eventually(() => c.pendingCount === 0, 'the closed tab\'s taps sent');
  assert.deepEqual((await server.actionLog(a.sessionId, a.token)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  assert.deepEqual((await server.actionLog(b.sessionId, b.token)).map((entry) => entry.type), ['onboarding.showSecond']);
  assert.deepEqual(c.state.features, ['home.first']);
  await Promise.all([a.close(), b.close(), c.close()]);
});
