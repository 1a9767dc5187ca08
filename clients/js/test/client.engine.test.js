// FlowSession with the local engine (src/engine) against a real `flowstack serve`: taps run on the
// session's bundle and show at once, the server's answers confirm them byte for byte, offline taps
// keep working and go as batches, and an app killed offline starts again on the engine it kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as engineModule from '../src/engine/index.js';
import { FlowSession, MemorySessionStore, SessionKey, localEngine } from '../src/client/index.js';
import { eventually, FaultyFetch, serverForTests, startSession, testRetry } from './support/server.js';

const server = serverForTests();
const retry = testRetry;
const engine = localEngine(engineModule);

/**
 * A session for a new user on the local engine, once its bundle is loaded.
 * @param {{store?: MemorySessionStore, userId?: string, network?: FaultyFetch}} [options]
 */
async function start(options = {}) {
  const started = await startSession(server, { prefix: 'engine-user', engine, timeout: undefined, ...options });
  await eventually(() => started.session.hasLocalEngine, 'the bundle loaded');
  return started;
}

/** @param {{type: string}[]} events @param {string} type */
const count = (events, type) => events.filter((event) => event.type === type).length;
/** @param {FlowSession} session */
const log = (session) => server.actionLog(session.sessionId, session.token);

test('taps run on the local engine and show before any answer could come; every answer confirms them unchanged', async () => {
  const network = new FaultyFetch();
  const { session, events } = await start({ network });
  /** @type {(value?: unknown) => void} */
  let release = () => {};
  const held = new Promise((resolve) => { release = resolve; });
  network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: held, times: 3 });
  const second = await session.send({ type: 'onboarding.showSecond' });
  const home = await session.send({ type: 'onboarding.completed' });
  const tab = await session.send({ type: 'home.selectTab', params: { index: 1 } });
  assert.deepEqual([second.top?.feature, home.top?.feature, tab.top?.feature], ['onboarding.second', 'home.first', 'home.second']);
  assert.equal(session.confirmedState.version, 0, 'all three shown while the first post is still held on the wire');
  assert.equal(session.pendingCount, 3);
  release();
  await session.settled();
  assert.equal(count(events, 'corrected'), 0, 'the engine\'s documents are the server\'s');
  assert.ok(count(events, 'confirmed') >= 1);
  assert.ok(session.state.equals(session.confirmedState));
  const served = await server.request('GET', `/v1/sessions/${session.sessionId}`, { token: session.token });
  assert.deepEqual(session.state.document, served.json);
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed', 'home.selectTab']);
  assert.ok(session.availableActions.some((action) => action.type === 'home.presentModal'), 'the engine lists what the top screen takes');
  await session.close();
});

test('a tap the local engine refuses throws its FlowError and is never posted', async () => {
  const { session, network } = await start();
  await assert.rejects(session.send({ type: 'onboarding.completed' }), (/** @type {any} */ error) => error instanceof engineModule.FlowError && error.status === 422);
  assert.equal(session.pendingCount, 0);
  assert.equal(network.requests('POST', /\/actions/).length, 0);
  await session.close();
});

test('a thousand taps offline all show at once on the engine and go as ten batches; none is corrected', async () => {
  const { session, network, events } = await start();
  await session.send({ type: 'onboarding.showSecond' });
  await session.send({ type: 'onboarding.completed' });
  await session.settled();
  session.setOffline(true);
  for (let i = 0; i < 1000; i++) {
    const shown = await session.send({ type: 'home.selectTab', params: { index: (i + 1) % 2 } });
    assert.equal(shown.version, i + 3);
  }
  session.setOffline(false);
  await session.settled();
  assert.equal(network.requests('POST', /\/batch$/).length, 10);
  assert.equal(count(events, 'corrected'), 0);
  assert.equal((await log(session)).length, 1002);
  assert.equal(session.confirmedState.version, 1002);
  assert.ok(session.state.equals(session.confirmedState));
  await session.close();
});

test('killed after offline taps and started again while the server is down: the kept bundle (moved on by confirmed taps) runs the kept taps and new ones', async () => {
  const first = await start();
  await first.session.send({ type: 'onboarding.showSecond' });
  await first.session.settled();  // the engine moved on from the bundle fetched at version 0
  const kept = await first.store.load(new SessionKey(server.url, first.userId));
  assert.equal(JSON.parse(kept?.bundle ?? '{}').version, 1, 'the store keeps the bundle at the confirmed version');
  first.session.setOffline(true);
  const home = await first.session.send({ type: 'onboarding.completed' });
  await first.session.close();
  await server.stop();
  try {
    const session = await FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: new FaultyFetch().fetch, engine });
    assert.ok(session.isOffline && session.hasLocalEngine);
    assert.ok(session.state.equals(home), 'shows what the user last saw');
    const tab = await session.send({ type: 'home.selectTab', params: { index: 1 } });
    assert.equal(tab.top?.feature, 'home.second');
    await server.start();
    await eventually(() => session.pendingCount === 0, 'sent when the server is back', 15000);
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed', 'home.selectTab']);
    assert.ok(session.state.equals(session.confirmedState));
    await session.close();
  } finally {
    if (!server.process) await server.start();
  }
});

test('another device acting first: the tap is corrected (412), the bundle is fetched again and the next tap runs on it', async () => {
  const { session, events } = await start();
  await server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body: { type: 'onboarding.showSecond' } });
  await session.send({ type: 'onboarding.showSecond' });
  await session.settled();
  const correction = events.find((event) => event.type === 'corrected');
  assert.ok(correction?.type === 'corrected' && correction.correction.reason === 'versionMismatch');
  await eventually(() => session.hasLocalEngine, 'the bundle fetched again');
  const home = await session.send({ type: 'onboarding.completed' });
  assert.equal(home.version, 2);
  await session.settled();
  assert.equal(count(events, 'corrected'), 1);
  assert.equal((await log(session)).length, 2);
  await session.close();
});

test('row taps on the address picker run on the engine and the server confirms them: a swipe removes a row, a tap returns it', async () => {
  const { session, events } = await start();
  try {
    for (const type of ['onboarding.showSecond', 'onboarding.completed', 'home.checkout', 'login.submit', 'checkout.review', 'checkout.chooseAddress']) {
      await session.send({ type });
    }
    const picker = session.state.top;
    assert.equal(picker?.feature, 'address.list');
    const rows = () => (session.state.screen(picker.id)?.sections ?? []).map((section) => section.rows.map((row) => row.id));
    assert.deepEqual(rows(), [['home', 'office'], ['parents']]);
    // The engine says which rows take which taps, by kind: an app draws its cells from it.
    const rowTaps = session.availableActions.filter((action) => action.rowKinds);
    assert.deepEqual(rowTaps.map((action) => [action.type, action.rowKinds]),
      [['address.chosen', ['address.row']], ['address.removed', ['address.row']]]);
    const swiped = await session.send({ type: 'address.removed', from: picker.id, row: 'office' });
    assert.equal(swiped.transition?.type, 'list');
    assert.deepEqual(swiped.transition?.lists[picker.id]?.rows.deleted, [{ id: 'office', at: { section: 0, row: 1 } }]);
    assert.deepEqual(rows(), [['home'], ['parents']]);
    const chosen = await session.send({ type: 'address.chosen', from: picker.id, row: 'parents' });
    assert.equal(chosen.top?.feature, 'checkout.review');
    assert.equal(/** @type {any} */ (chosen.top?.params.address)?.city, 'Berlin');
    await session.settled();
    assert.equal(count(events, 'corrected'), 0, 'the engine\'s row taps are the server\'s');
    const served = await server.request('GET', `/v1/sessions/${session.sessionId}`, { token: session.token });
    assert.deepEqual(session.state.document, served.json);
    await assert.rejects(session.send({ type: 'address.chosen', from: session.state.top?.id, row: 'home' }),
      (/** @type {any} */ error) => error instanceof engineModule.FlowError);
  } finally {
    await session.close();
  }
});

/** A memory store whose saves can be held (a slow AsyncStorage), counting them. */
class HeldStore extends MemorySessionStore {
  constructor() {
    super();
    /** @type {Promise<unknown> | undefined} */
    this.gate = undefined;
    this.saves = 0;
  }

  /** @param {import('../src/client/index.js').StoredSession} session */
  async save(session) {
    if (this.gate) await this.gate;
    super.save(session);
    this.saves += 1;
  }
}

test('a tap is drawn before the store saves it, and send() resolves only once the store has it (a listener\'s tap with it)', async () => {
  const store = new HeldStore();
  const network = new FaultyFetch();
  const { session, userId } = await start({ store, network });
  /** @type {(value?: unknown) => void} */
  let release = () => {};
  /** @type {(value?: unknown) => void} */
  let answer = () => {};
  try {
    await session.send({ type: 'onboarding.showSecond' });
    await session.send({ type: 'onboarding.completed' });
    await session.settled();
    const key = new SessionKey(server.url, userId);
    store.gate = new Promise((resolve) => { release = resolve; });
    // The taps stay on the wire (unconfirmed) until the store has been looked at.
    const held = new Promise((resolve) => { answer = resolve; });
    network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: held, times: 2 });
    const savesBefore = store.saves;
    /** @type {Array<[string | undefined, number]>} */
    const seen = [];
    let tapAgain = true;
    const stop = session.subscribeStates((state) => {
      seen.push([state.top?.feature, store.saves]);
      // A listener that taps while the first tap is drawn: both are saved before either resolves.
      if (tapAgain && state.top?.feature === 'home.second') {
        tapAgain = false;
        session.send({ type: 'home.selectTab', params: { index: 0 } });
      }
    });
    let resolved = false;
    const sending = session.send({ type: 'home.selectTab', params: { index: 1 } }).then((state) => { resolved = true; return state; });
    assert.deepEqual(seen.slice(1), [['home.second', savesBefore], ['home.first', savesBefore]], 'drawn at once, before any save');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(resolved, false, 'send() waits for the store');
    release();
    const shown = await sending;
    assert.equal(shown.top?.feature, 'home.second');
    const kept = await store.load(key);
    assert.deepEqual(kept?.queue.slice(-2).map((item) => item.action.params?.index), [1, 0], 'both taps in the store, in order, when the first resolves');
    stop();
    store.gate = undefined;
    answer();
    await session.settled();
    assert.deepEqual((await log(session)).slice(-2).map((entry) => entry.type), ['home.selectTab', 'home.selectTab']);
  } finally {
    // A failed check leaves nothing held: close() waits for the saves.
    release();
    answer();
    await session.close();
  }
});

test('a listener that taps as it draws: every state listener gets the states in the order shown and ends on the one shown', async () => {
  const { session, events } = await start();
  try {
    /** @type {Array<string | undefined>} */
    const drawn = [];
    /** @type {Array<string | undefined>} */
    const recorded = [];
    // A screen that moves on by itself (a splash, a redirect): the renderer taps as it draws it.
    session.subscribeStates((state) => {
      drawn.push(state.top?.feature);
      if (state.top?.feature === 'onboarding.second') session.send({ type: 'onboarding.completed' });
    });
    // A second listener (analytics, a breadcrumb) subscribed after it.
    session.subscribeStates((state) => recorded.push(state.top?.feature));
    /** @type {string[]} */
    const seen = [];
    // An event listener that goes offline on the first confirmation: the other one still hears
    // the confirmation before the going offline it caused.
    session.subscribe((event) => {
      if (event.type === 'confirmed' && !session.isOffline && seen.length === 0) session.setOffline(true);
    });
    session.subscribe((event) => seen.push(event.type));
    await session.send({ type: 'onboarding.showSecond' });
    assert.deepEqual(drawn, ['onboarding.first', 'onboarding.second', 'home.first']);
    assert.deepEqual(recorded, drawn, 'the second listener sees the same states in the same order');
    assert.equal(recorded[recorded.length - 1], session.state.top?.feature, 'and ends on the state shown');
    await eventually(() => session.isOffline, 'offline');
    assert.deepEqual(seen.slice(0, 2), ['confirmed', 'offline'], 'events reach every listener in the order they happened');
    assert.deepEqual(events.slice(0, 2).map((event) => event.type), ['confirmed', 'offline']);
    session.setOffline(false);
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  } finally {
    await session.close();
  }
});

test('started again after the kept taps were committed but their answer never came: the engine loads and the next tap shows at once', async () => {
  const first = await start();
  first.session.setOffline(true);
  for (const action of [{ type: 'onboarding.showSecond' }, { type: 'onboarding.completed' }, { type: 'home.selectTab', params: { index: 1 } }]) {
    await first.session.send(action);
  }
  await first.session.close();
  const kept = await first.store.load(new SessionKey(server.url, first.userId));
  assert.equal(kept?.queue.length, 3);
  // The batch that was on the wire when the app was killed: the server applied it, the answer was lost.
  const applied = await server.request('POST', `/v1/sessions/${first.session.sessionId}/actions/batch`, { token: first.session.token, body: { actions: kept?.queue } });
  assert.equal(applied.status, 200);
  const network = new FaultyFetch();
  const session = await FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: network.fetch, engine });
  try {
    await session.settled();
    assert.equal(session.pendingCount, 0, 'the kept taps were answered as already applied');
    assert.equal(session.state.top?.feature, 'home.second');
    await eventually(() => session.hasLocalEngine, 'the bundle at the confirmed version loaded', 3000);
    /** @type {(value?: unknown) => void} */
    let release = () => {};
    network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: new Promise((resolve) => { release = resolve; }) });
    const shown = await Promise.race([session.send({ type: 'home.selectTab', params: { index: 0 } }), new Promise((resolve) => setTimeout(() => resolve(undefined), 1000))]);
    assert.equal(/** @type {any} */ (shown)?.top?.feature, 'home.first', 'shown with no network wait');
    release();
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed', 'home.selectTab', 'home.selectTab']);
  } finally {
    await session.close();
  }
});

/** A promise the test settles when it says, as an engine chunk loaded with `import()` comes. */
function deferred() {
  /** @type {(value: any) => void} */
  let resolve = () => {};
  /** @type {(error: unknown) => void} */
  let reject = () => {};
  const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
  return { promise, resolve, reject };
}

test('an engine given as a promise: a new session starts without it, draws on the predictions, and runs taps on it once it has come', async () => {
  const chunk = deferred();
  const { session, network, events } = await startSession(server, { prefix: 'lazy-engine', engine: chunk.promise, timeout: undefined });
  assert.ok(!session.hasLocalEngine, 'started before the engine came');
  // Drawn from the predictions the start's answer carried, at once.
  const held = deferred();
  network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: held.promise, times: 1 });
  const second = await session.send({ type: 'onboarding.showSecond' });
  assert.equal(second.top?.feature, 'onboarding.second');
  assert.equal(session.confirmedState.version, 0, 'shown while its post is held');
  held.resolve(undefined);
  await eventually(() => session.pendingCount === 0, 'the tap answered');
  let settled = false;
  const settling = session.settled().then(() => { settled = true; });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(!settled, 'settled() waits for the engine');
  assert.ok(!session.hasLocalEngine, 'no bundle is fetched before the engine is there');
  assert.ok(!network.log.some((entry) => entry.url.includes('/bundle')), 'nothing asked the bundle');
  chunk.resolve(engine);
  await settling;
  assert.ok(session.hasLocalEngine, 'settled once the engine came and ran the bundle');
  // A tap with params, which no prediction covers, is drawn on the engine while its post is held.
  const release = deferred();
  network.plan({ match: (method, url) => method === 'POST' && url.includes('/actions'), kind: 'hold', until: release.promise, times: 2 });
  const home = await session.send({ type: 'onboarding.completed' });
  const tab = await session.send({ type: 'home.selectTab', params: { index: 1 } });
  assert.deepEqual([home.top?.feature, tab.top?.feature], ['home.first', 'home.second']);
  assert.equal(session.confirmedState.version, 1);
  release.resolve(undefined);
  await session.settled();
  assert.ok(session.state.equals(session.confirmedState));
  assert.equal(count(events, 'corrected'), 0);
  assert.equal(session.engineError, undefined);
  await session.close();
});

/**
 * A session on the engine that made one tap offline (kept in its store, not sent) and was closed,
 * and the server stopped: the next start is from the store. The caller starts the server again.
 */
async function keptOfflineTapThenServerDown() {
  const first = await start();
  first.session.setOffline(true);
  const second = await first.session.send({ type: 'onboarding.showSecond' });
  await first.session.close();
  await server.stop();
  return { first, second };
}

test('a kept session waits for an engine given as a promise: started while the server is down, the kept taps and new ones are drawn on it at once', async () => {
  const { first, second } = await keptOfflineTapThenServerDown();
  try {
    const chunk = deferred();
    setTimeout(() => chunk.resolve(engine), 30);
    const session = await FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: new FaultyFetch().fetch, engine: chunk.promise });
    assert.ok(session.isOffline && session.hasLocalEngine, 'offline, on the engine that came while the server was asked');
    assert.ok(session.state.equals(second));
    const home = await session.send({ type: 'onboarding.completed' });
    assert.equal(home.top?.feature, 'home.first');
    await server.start();
    await eventually(() => session.pendingCount === 0, 'sent when the server is back', 15000);
    await session.settled();
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
    await session.close();
  } finally {
    if (!server.process) await server.start();
  }
});

test('an engine promise that fails leaves the session on the predictions, and engineError says why', async () => {
  const failed = Promise.reject(new Error('the engine chunk did not load'));
  const { session } = await startSession(server, { prefix: 'lazy-engine-failed', engine: failed, timeout: undefined });
  await session.settled();
  assert.ok(session.engineError !== undefined, 'settled once the failure is seen');
  assert.equal(/** @type {Error} */ (session.engineError).message, 'the engine chunk did not load');
  const second = await session.send({ type: 'onboarding.showSecond' });
  assert.equal(second.top?.feature, 'onboarding.second', 'drawn from the predictions');
  await session.settled();
  assert.ok(!session.hasLocalEngine);
  // Not a factory at all: said, not thrown at the app.
  const { session: other } = await startSession(server, { prefix: 'lazy-engine-wrong', engine: Promise.resolve({}), timeout: undefined });
  await eventually(() => other.engineError !== undefined, 'the wrong value is seen');
  assert.match(String(other.engineError), /engine factory/);
  await other.close();
  await session.close();
});

/**
 * What `promise` gives, or `'hung'` when it has not settled within `ms`.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T | 'hung'>}
 */
function within(promise, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  return Promise.race([promise, new Promise((resolve) => { timer = setTimeout(() => resolve('hung'), ms); })])
    .finally(() => clearTimeout(timer));
}

test('a kept session waits for an engine promise no longer than engineWait: started online on the predictions, it takes the engine when it comes', async () => {
  const first = await start();
  await first.session.send({ type: 'onboarding.showSecond' });
  await first.session.settled();
  await first.session.close();
  const chunk = deferred();  // a chunk that does not come (a stalled network), until the test says
  const started = await within(FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: new FaultyFetch().fetch, engine: chunk.promise, engineWait: 200 }), 5000);
  assert.notEqual(started, 'hung', 'start of a kept session returned once engineWait was spent');
  const session = /** @type {FlowSession} */ (started);
  try {
    assert.ok(!session.hasLocalEngine && !session.isOffline);
    assert.ok(!session.engineAwaited, 'settled() does not wait again: the wait was spent in start');
    assert.equal(session.state.top?.feature, 'onboarding.second');
    const home = await session.send({ type: 'onboarding.completed' });
    assert.equal(home.top?.feature, 'home.first', 'drawn from the predictions meanwhile');
    chunk.resolve(engine);
    await eventually(() => session.hasLocalEngine, 'the engine came late and ran the bundle');
    await session.settled();
    assert.equal(session.engineError, undefined);
    assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  } finally {
    await session.close();
  }
});

test('a kept session started offline with an engine that comes after engineWait shows its kept taps on the kept bundle as soon as it comes', async () => {
  const { first, second } = await keptOfflineTapThenServerDown();
  try {
    const chunk = deferred();
    const started = await within(FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: new FaultyFetch().fetch, engine: chunk.promise, engineWait: 100 }), 5000);
    assert.notEqual(started, 'hung', 'start of a kept session returned offline once engineWait was spent');
    const session = /** @type {FlowSession} */ (started);
    try {
      assert.ok(session.isOffline && !session.hasLocalEngine);
      assert.equal(session.state.version, 0, 'the kept tap is not shown without an engine');
      assert.equal(session.pendingCount, 1, 'and stays queued');
      /** @type {string[]} */
      const drawn = [];
      session.subscribeStates((state) => drawn.push(String(state.top?.feature)));
      chunk.resolve(engine);
      await eventually(() => session.hasLocalEngine, 'the kept bundle loaded when the engine came, offline');
      assert.ok(session.state.equals(second), 'the kept tap shows again');
      assert.equal(drawn[drawn.length - 1], 'onboarding.second', 'and the state listeners were told');
      const home = await session.send({ type: 'onboarding.completed' });
      assert.equal(home.top?.feature, 'home.first', 'a new tap is drawn on it at once, offline');
      await server.start();
      await eventually(() => session.pendingCount === 0, 'sent when the server is back', 15000);
      await session.settled();
      assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
    } finally {
      await session.close();
    }
  } finally {
    if (!server.process) await server.start();
  }
});

test('a kept session the server no longer knows does not wait for the engine: the new session starts, and takes the engine when it comes', async () => {
  const first = await start();
  await first.session.settled();
  await first.session.close();
  assert.equal((await server.request('DELETE', `/v1/sessions/${first.session.sessionId}`, { token: first.session.token })).status, 204);
  const chunk = deferred();
  // Told to wait for ever: a new session needs no engine to start.
  const started = await within(FlowSession.start({ server: server.url, userId: first.userId, store: first.store, retry, fetch: new FaultyFetch().fetch, engine: chunk.promise, engineWait: Infinity }), 5000);
  assert.notEqual(started, 'hung', 'a restarted session does not wait for the engine');
  const session = /** @type {FlowSession} */ (started);
  try {
    assert.notEqual(session.sessionId, first.session.sessionId);
    assert.ok(!session.hasLocalEngine && session.engineAwaited);
    chunk.resolve(engine);
    await session.settled();
    assert.ok(session.hasLocalEngine);
  } finally {
    await session.close();
  }
});

test('an engine that comes after close() is not taken: nothing more is asked of the server', async () => {
  const chunk = deferred();
  const { session, network } = await startSession(server, { prefix: 'lazy-engine-closed', engine: chunk.promise, timeout: undefined });
  const settling = session.settled();
  await session.close();
  await settling;
  const asked = network.log.length;
  chunk.resolve(engine);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(network.log.length, asked, 'no bundle fetched for a closed session');
  assert.ok(!session.hasLocalEngine);
});

test('an engine that comes while offline, with a tap drawn on the predictions and one that waited: sent when back, then the bundle runs the next tap', async () => {
  const chunk = deferred();
  const { session, events } = await startSession(server, { prefix: 'lazy-engine-offline', engine: chunk.promise, timeout: undefined });
  session.setOffline(true);
  assert.equal((await session.send({ type: 'onboarding.showSecond' })).top?.feature, 'onboarding.second', 'drawn from the predictions');
  await assert.rejects(session.send({ type: 'onboarding.completed' }), 'no prediction past a tap not confirmed: it waited, offline');
  chunk.resolve(engine);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(!session.hasLocalEngine, 'no bundle while offline');
  session.setOffline(false);
  await session.settled();
  assert.ok(session.hasLocalEngine && session.pendingCount === 0);
  assert.deepEqual((await log(session)).map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed']);
  assert.equal(count(events, 'corrected'), 0);
  assert.equal((await session.send({ type: 'home.selectTab', params: { index: 1 } })).top?.feature, 'home.second', 'drawn on the engine');
  await session.settled();
  await session.close();
});

test('an engine that comes after the session was found gone and restarted runs the new session\'s bundle', async () => {
  const chunk = deferred();
  const { session, events } = await startSession(server, { prefix: 'lazy-engine-restarted', engine: chunk.promise, timeout: undefined });
  const old = session.sessionId;
  assert.equal((await server.request('DELETE', `/v1/sessions/${old}`, { token: session.token })).status, 204);
  await session.send({ type: 'onboarding.showSecond' }).catch(() => {});
  await eventually(() => session.sessionId !== old, 'restarted');
  chunk.resolve(engine);
  await session.settled();
  assert.ok(session.hasLocalEngine && count(events, 'restarted') === 1);
  assert.equal((await session.send({ type: 'onboarding.showSecond' })).top?.feature, 'onboarding.second');
  await session.settled();
  assert.ok(session.state.equals(session.confirmedState));
  await session.close();
});

test('settled() waits for a new session\'s engine no longer than engineWait: a chunk that never comes does not hold it for ever', async () => {
  const never = new Promise(() => {});
  const { session } = await startSession(server, { prefix: 'lazy-engine-never', engine: never, engineWait: 300, timeout: undefined });
  const began = Date.now();
  assert.notEqual(await within(session.settled(), 5000), 'hung', 'settled() returned once engineWait was spent');
  const waited = Date.now() - began;
  assert.ok(waited >= 250, `settled after ${waited} ms`);
  assert.ok(!session.hasLocalEngine);
  const second = await session.send({ type: 'onboarding.showSecond' });
  assert.equal(second.top?.feature, 'onboarding.second', 'drawn from the predictions');
  await session.settled();
  await session.close();
});
