// FlowSession against a real `flowstack serve`, over a fetch that injects faults: every tap ends in
// the server's log exactly once or is reported with the server's reason (DESIGN.md, "the client's
// contract"). The session runs on the server's predictions (no local engine until src/engine lands).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActionRefused, FlowSession, MemorySessionStore, SessionKey, Unreachable } from '../src/client/index.js';
import { eventually, FaultyFetch, serverForTests, startSession, testRetry } from './support/server.js';

const server = serverForTests();
const retry = testRetry;

/**
 * A session for a new user over a faulty fetch, collecting its events.
 * @param {{store?: MemorySessionStore, userId?: string, network?: FaultyFetch}} [options]
 */
const start = (options = {}) => startSession(server, { prefix: 'user', ...options });

/** @param {{type: string}[]} events @param {string} type */
const count = (events, type) => events.filter((event) => event.type === type).length;

/** @param {FlowSession} session */
const log = (session) => server.actionLog(session.sessionId, session.token);

test('taps through onboarding are shown from the predictions at once and each is confirmed, posted with If-Match and a key', async () => {
  const { session, network, events } = await start();
  const second = await session.send({ type: 'onboarding.showSecond' });
  assert.deepEqual(second.features, ['onboarding.first', 'onboarding.second']);
  assert.equal(session.pendingCount, 1, 'shown before its answer came');
  await session.settled();
  const home = await session.send({ type: 'onboarding.completed' });
  assert.deepEqual(home.features, ['home.first']);
  await session.settled();
  assert.equal(count(events, 'confirmed'), 2);
  assert.equal(count(events, 'corrected'), 0);
  const posts = network.requests('POST', /\/actions$/);
  assert.deepEqual(posts.map((p) => p.headers['If-Match']), ['"0"', '"1"']);
  assert.ok(posts.every((p) => /^[0-9a-f-]{36}$/.test(p.headers['Idempotency-Key'])));
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  await session.close();
});

test('a tap posts a UUIDv7 key made while it was sent', async () => {
  const { session, network } = await start();
  const before = Date.now();
  await session.send({ type: 'onboarding.showSecond' });
  const sent = Date.now();
  await session.settled();
  const keys = network.requests('POST', /\/actions$/).map((post) => post.headers['Idempotency-Key']);
  assert.equal(keys.length, 1);
  assert.match(keys[0], /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const made = parseInt(keys[0].slice(0, 13).replace('-', ''), 16);  // the first 48 bits
  assert.ok(before <= made && made <= sent, `made at ${made}, sent between ${before} and ${sent}`);
  await session.close();
});

test('a 500 before the commit, then a 500 and a lost answer after it: the tap goes again under the same key and is stored exactly once', async () => {
  const { session, network, events } = await start();
  const post = (/** @type {string} */ method, /** @type {string} */ url) => method === 'POST' && url.includes('/actions');
  network.plan({ match: post, kind: '500-before' });
  network.plan({ match: post, kind: '500-after' });
  await session.send({ type: 'onboarding.showSecond' });
  await session.settled();
  network.plan({ match: post, kind: 'lose-answer' });
  network.plan({ match: post, kind: 'garbage-after' });
  await session.send({ type: 'onboarding.completed' });
  await session.settled();
  const posts = network.requests('POST', /\/actions$/);
  assert.equal(posts.length, 6, 'three tries each');
  assert.equal(new Set(posts.slice(0, 3).map((p) => p.headers['Idempotency-Key'])).size, 1, 'one key for the first tap');
  assert.equal(new Set(posts.slice(3).map((p) => p.headers['Idempotency-Key'])).size, 1, 'one key for the second tap');
  assert.deepEqual(posts.map((p) => p.headers['If-Match']), ['"0"', '"0"', '"0"', '"1"', '"1"', '"1"']);
  const entries = await log(session);
  assert.deepEqual(entries.map((entry) => [entry.version, entry.type]), [[1, 'onboarding.showSecond'], [2, 'onboarding.completed']]);
  assert.equal(session.confirmedState.version, 2);
  assert.equal(count(events, 'corrected'), 0, 'an unknown outcome is never a refusal');
  assert.deepEqual(session.state.features, ['home.first']);
  await session.close();
});

test('no answer after the retries: offline, taps queue; when the server answers again they go as one batch', async () => {
  const { session, network, events } = await start();
  network.down = true;
  await session.send({ type: 'onboarding.showSecond' });  // shown from the prediction
  await eventually(() => session.isOffline, 'offline');
  await assert.rejects(session.send({ type: 'onboarding.completed' }), Unreachable, 'a tap with nothing to show it waits, and offline says so');
  assert.equal(session.pendingCount, 2, 'both taps stay queued');
  network.down = false;
  await eventually(() => !session.isOffline && session.pendingCount === 0, 'back online and sent');
  assert.ok(count(events, 'offline') === 1 && count(events, 'online') === 1);
  assert.equal(network.requests('POST', /\/actions\/batch$/).length, 1);
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  assert.deepEqual(session.state.features, ['home.first']);
  await session.close();
});

test('taps made while a batch is on the wire stay queued and go next, each stored once and in order', async () => {
  const { session, network } = await start();
  session.setOffline(true);
  await session.send({ type: 'onboarding.showSecond' });
  await assert.rejects(session.send({ type: 'onboarding.completed' }), Unreachable);
  /** @type {(value?: unknown) => void} */
  let release = () => {};
  network.plan({ match: (method, url) => method === 'POST' && url.endsWith('/batch'), kind: 'hold', until: new Promise((resolve) => { release = resolve; }) });
  session.setOffline(false);
  await eventually(() => network.requests('POST', /\/batch$/).length === 1, 'the batch on the wire');
  const third = session.send({ type: 'home.selectTab', params: { index: 1 } });
  const fourth = session.send({ type: 'home.selectTab', params: { index: 0 } });
  assert.equal(session.pendingCount, 4, 'taps made while the batch is on the wire stay queued behind it');
  release();
  // With no engine and no prediction for them they wait; a waiting tap's caller gets what is
  // shown once it is answered (as the Swift client's does), here after both went as one batch.
  const [shownThird, shownFourth] = await Promise.all([third, fourth]);
  assert.ok(shownThird.version >= 3);
  assert.equal(shownFourth.version, 4);
  assert.equal(shownFourth.top?.feature, 'home.first');
  await session.settled();
  const entries = await log(session);
  assert.deepEqual(entries.map((entry) => [entry.version, entry.type, entry.params.index ?? null]),
    [[1, 'onboarding.showSecond', null], [2, 'onboarding.completed', null], [3, 'home.selectTab', 1], [4, 'home.selectTab', 0]]);
  await session.close();
});

test('a thousand taps queued offline go as ten batches of 100 on reconnect, every one stored once', async () => {
  const { session, network } = await start();
  await session.send({ type: 'onboarding.showSecond' });
  await session.send({ type: 'onboarding.completed' }).catch(() => undefined);
  await session.settled();
  session.setOffline(true);
  const taps = [];
  for (let i = 0; i < 1000; i++) taps.push(session.send({ type: 'home.selectTab', params: { index: (i + 1) % 2 } }).catch((error) => error));
  const outcomes = await Promise.all(taps);
  assert.equal(session.pendingCount, 1000);
  assert.ok(outcomes.slice(1).every((outcome) => outcome instanceof Unreachable), 'taps past the first wait, and offline says so');
  session.setOffline(false);
  await session.settled();
  const batches = network.requests('POST', /\/batch$/);
  assert.equal(batches.length, 10);
  assert.ok(batches.every((batch) => JSON.parse(batch.body ?? '{}').actions.length === 100));
  const entries = await log(session);
  assert.equal(entries.length, 1002);
  assert.deepEqual(entries.map((entry) => entry.version), Array.from({ length: 1002 }, (_, i) => i + 1));
  assert.equal(session.confirmedState.version, 1002);
  assert.equal(session.state.top?.feature, 'home.first');
  await session.close();
});

test('another device acting first: the tap shown is corrected to the server\'s state (412, then read again)', async () => {
  const { session, events } = await start();
  const other = await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, ifMatch: 0, body: { type: 'onboarding.showSecond' } });
  assert.equal(other.status, 200);
  const shown = await session.send({ type: 'onboarding.showSecond' });  // shown from a prediction on version 0
  assert.equal(shown.version, 1);
  await session.settled();
  const correction = events.find((event) => event.type === 'corrected');
  assert.ok(correction?.type === 'corrected');
  assert.equal(correction.correction.reason, 'versionMismatch');
  assert.equal(correction.correction.problem?.status, 412);
  assert.deepEqual(correction.correction.taps.map((tap) => tap.action.type), ['onboarding.showSecond']);
  assert.equal(session.state.version, 1);
  assert.deepEqual(session.state.features, ['onboarding.first', 'onboarding.second']);
  assert.equal((await log(session)).length, 1, 'the client\'s tap was not applied on top');
  await session.close();
});

test('refusals (409 stale source, 422 unhandled) roll back and are reported, and the caller of a tap that waited gets the reason', async () => {
  const { session, events } = await start();
  const stale = session.send({ type: 'onboarding.showSecond', from: 'e99' });
  await assert.rejects(stale, (error) => error instanceof ActionRefused && error.status === 409 && error.problem?.code === 'stale-source');
  const unhandled = session.send({ type: 'no.such.action' });
  await assert.rejects(unhandled, (error) => error instanceof ActionRefused && error.status === 422);
  await session.settled();
  const corrections = events.filter((event) => event.type === 'corrected');
  assert.deepEqual(corrections.map((event) => event.type === 'corrected' && [event.correction.reason, event.correction.taps[0].action.type]),
    [['refused', 'onboarding.showSecond'], ['refused', 'no.such.action']]);
  assert.equal(session.state.version, 0);
  assert.equal(session.pendingCount, 0);
  assert.equal((await log(session)).length, 0);
  // A tap shown from a prediction and refused is rolled back on screen.
  await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body: { type: 'onboarding.showSecond' } });
  await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body: { type: 'onboarding.returnToFirst' } });
  await session.settled();
  await session.close();
});

test('a session deleted in use: the next tap is answered 404 for it, a new session starts and the dropped tap is reported', async () => {
  const { session, events } = await start();
  const old = session.sessionId;
  assert.equal((await server.request('DELETE', `/v1/sessions/${old}`, { token: session.token })).status, 204);
  await session.send({ type: 'onboarding.showSecond' });
  await eventually(() => session.sessionId !== old && session.pendingCount === 0, 'a new session');
  await session.settled();
  const restarted = events.find((event) => event.type === 'restarted');
  assert.ok(restarted?.type === 'restarted');
  assert.equal(restarted.restart.status, 404);
  assert.deepEqual(restarted.restart.dropped.map((tap) => tap.action.type), ['onboarding.showSecond']);
  assert.match(restarted.restart.reason, new RegExp(`session ${old} is gone \\(404\\); 1 queued tap\\(s\\) were dropped`));
  assert.equal(session.state.sessionId, session.sessionId);
  assert.equal(session.state.version, 0);
  assert.equal(session.lastRestart, restarted.restart);
  await session.close();
});

test('a kept session the server deleted (or whose token it refuses) starts anew at launch, and says so', async () => {
  const first = await start();
  const old = first.session.sessionId;
  first.session.setOffline(true);
  await first.session.send({ type: 'onboarding.showSecond' });
  await first.session.close();
  await server.request('DELETE', `/v1/sessions/${old}`, { token: first.session.token });
  const again = await start({ store: first.store, userId: first.userId });
  assert.notEqual(again.session.sessionId, old);
  assert.equal(again.session.lastRestart?.status, 404);
  assert.deepEqual(again.session.lastRestart?.dropped.map((tap) => tap.action.type), ['onboarding.showSecond']);
  const kept = await again.store.load(new SessionKey(server.url, again.userId));
  assert.equal(kept?.sessionId, again.session.sessionId);

  const stolen = /** @type {import('../src/client/index.js').StoredSession} */ (kept);
  await again.session.close();
  again.store.save({ ...stolen, token: 'not-the-token' });
  const third = await start({ store: again.store, userId: again.userId });
  assert.equal(third.session.lastRestart?.status, 401);
  assert.notEqual(third.session.sessionId, stolen.sessionId);
  await third.session.close();
});

test('taps kept in the store across a restart (a new client, the same store) are sent under their keys, once', async () => {
  const first = await start();
  first.session.setOffline(true);
  await first.session.send({ type: 'onboarding.showSecond' });
  await first.session.send({ type: 'onboarding.completed' }).catch(() => undefined);
  await first.session.close();
  const keys = first.session.pending.map((tap) => tap.key);
  const kept = await first.store.load(new SessionKey(server.url, first.userId));
  assert.deepEqual(kept?.queue.map((tap) => tap.key), keys);
  assert.equal((await server.actionLog(first.session.sessionId, first.session.token)).length, 0);

  // The app is killed and started again: another spelling of the same server finds the session.
  const network = new FaultyFetch();
  const spelling = server.url.replace('http://', 'HTTP://') + '/';
  const session = await FlowSession.start({ server: spelling, userId: first.userId, store: first.store, retry, fetch: network.fetch });
  assert.equal(session.sessionId, first.session.sessionId);
  await session.settled();
  const batch = network.requests('POST', /\/batch$/);
  assert.equal(batch.length, 1);
  assert.deepEqual(JSON.parse(batch[0].body ?? '{}').actions.map((/** @type {any} */ item) => item.key), keys);
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  assert.equal((await first.store.load(new SessionKey(server.url, first.userId)))?.queue.length, 0);
  await session.close();
});

test('killed while the server is down and started again still down: starts from the store, offline; sends when it is back', async () => {
  const first = await start();
  await first.session.send({ type: 'onboarding.showSecond' });
  await first.session.settled();
  await first.session.close();
  await server.stop();
  try {
    const network = new FaultyFetch();
    const session = await FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: network.fetch });
    assert.ok(session.isOffline);
    assert.equal(session.state.version, 1, 'the confirmed state the store kept');
    await assert.rejects(session.send({ type: 'onboarding.completed' }), Unreachable);
    assert.equal(session.pendingCount, 1);
    await server.start();
    await eventually(() => session.pendingCount === 0, 'sent once the server is back', 15000);
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
    assert.deepEqual(session.state.features, ['home.first']);
    await session.close();
  } finally {
    if (!server.process) await server.start();
  }
});

test('following the event stream, the client adopts versions another device makes, and reconnects with Last-Event-ID', async () => {
  const { session, network, events } = await start();
  session.follow();
  await eventually(() => network.requests('GET', /\/events$/).length === 1, 'the stream open');
  await new Promise((resolve) => setTimeout(resolve, 100));
  const other = await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body: { type: 'onboarding.showSecond' } });
  assert.equal(other.status, 200);
  await eventually(() => session.state.version === 1, 'the other device\'s version');
  const remote = events.find((event) => event.type === 'remote');
  assert.ok(remote?.type === 'remote' && remote.state.version === 1);
  assert.deepEqual(session.state.features, ['onboarding.first', 'onboarding.second']);
  // The stream is cut (the server restarts): the client reconnects naming the last event it had.
  await server.stop();
  await server.start();
  await eventually(() => network.requests('GET', /\/events$/).some((request) => request.headers['Last-Event-ID'] === '1'), 'a reconnection with Last-Event-ID', 15000);
  await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body: { type: 'onboarding.completed' } });
  await eventually(() => session.state.version === 2, 'the version made after the reconnection');
  assert.deepEqual(session.state.features, ['home.first']);
  // A tap on the adopted state is confirmed.
  await session.send({ type: 'home.selectTab', params: { index: 1 } }).catch(() => undefined);
  await session.settled();
  assert.equal(session.confirmedState.version, 3);
  assert.equal(count(events, 'corrected'), 0);
  await session.close();
});

test('following with a ticket: the stream is opened with no token in the URL or headers', async () => {
  const { session, network, events } = await start();
  session.follow({ ticket: true });
  await eventually(() => network.requests('GET', /\/events$/).length === 1, 'the stream open');
  const open = network.requests('GET', /\/events$/)[0];
  assert.match(open.url, /\?ticket=st_/);
  assert.equal(open.headers.Authorization, undefined);
  assert.ok(!open.url.includes(session.token));
  await new Promise((resolve) => setTimeout(resolve, 100));
  await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body: { type: 'onboarding.showSecond' } });
  await eventually(() => events.some((event) => event.type === 'remote'), 'the other device\'s version');
  await session.close();
});

test('flags and variants read typed from the session', async () => {
  const { session } = await start();
  assert.equal(session.flags.bool('eu-face-scan'), false);
  assert.equal(session.flags.flagVariant('eu-face-scan'), 'off');
  assert.equal(session.flags.bool('no-such-flag', true), true);
  assert.equal(session.flags.string('eu-face-scan', 'fallback'), 'fallback', 'a boolean flag read as a string takes the fallback');
  assert.equal(session.flags.variant('no-such-experiment'), undefined);
  await session.close();
});

test('a tap that waited and is then shown from the next answer\'s prediction is kept in the store with the prediction\'s from', async () => {
  const store = new MemorySessionStore();
  const { session, network, userId } = await start({ store });
  /** @type {Array<(value?: unknown) => void>} */
  const answers = [];
  for (let i = 0; i < 2; i++) {
    const until = new Promise((resolve) => answers.push(resolve));
    network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until });
  }
  try {
    await session.send({ type: 'onboarding.showSecond' });
    // Made while the first is on the wire: no prediction is for it yet, so it waits, kept without a from.
    const waiting = session.send({ type: 'onboarding.completed' });
    const key = new SessionKey(server.url, userId);
    await eventually(async () => (await store.load(key))?.queue.length === 2, 'both taps kept');
    assert.equal((await store.load(key))?.queue[1].action.from, undefined);
    answers[0]();
    // The answer's predictions show it, and it goes under the prediction's from: the store keeps that.
    await eventually(() => session.pendingCount === 1 && session.pending[0].expected !== undefined, 'the waiting tap shown');
    const from = session.pending[0].action.from;
    assert.ok(from, 'the waiting tap took the prediction\'s from');
    await eventually(async () => (await store.load(key))?.queue[0]?.action.from === from, 'the store keeps the tap as it will be posted');
    answers[1]();
    assert.deepEqual((await waiting).features, ['home.first']);
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  } finally {
    for (const answer of answers) answer();
    await session.close();
  }
});
