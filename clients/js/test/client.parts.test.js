// The client's parts on their own: the event-stream reader, session keys and stored sessions, the
// state document reader, requests and retry delays. No server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  EventStreamParser, KeyValueSessionStore, openEventStream, MalformedState, MemorySessionStore, NavigationState, RetryPolicy, SessionKey,
  SessionRequests, decodeStoredSession, encodeStoredSession, randomKey,
} from '../src/client/index.js';
import { DoubleEngine } from './support/engine-double.js';

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
  assert.equal(decodeStoredSession(JSON.stringify({ ...JSON.parse(text), queue: [{ key: 'k', version: 'x', action: { type: 't' } }] })), undefined);
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

test('retries back off by doubling up to the cap; keys are random v4 UUIDs', () => {
  const policy = new RetryPolicy({ attempts: 5, initialDelay: 100, maximumDelay: 350 });
  assert.deepEqual([1, 2, 3, 4].map((n) => policy.delay(n)), [100, 200, 350, 350]);
  const keys = new Set(Array.from({ length: 100 }, randomKey));
  assert.equal(keys.size, 100);
  assert.ok([...keys].every((key) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(key)));
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
