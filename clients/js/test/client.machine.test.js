// The client's turns as a value: every interleaving a plain unit test, no I/O (the engine is a
// test double until src/engine lands).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientMachine } from '../src/client/client-machine.js';
import { NavigationState } from '../src/client/navigation-state.js';
import { RetryPolicy } from '../src/client/retry-policy.js';
import { DoubleEngine } from './support/engine-double.js';

/** @param {DoubleEngine} engine */
const stateOf = (engine) => NavigationState.fromEngine(engine);
const showSecond = { type: 'onboarding.showSecond' };
const completed = { type: 'onboarding.completed' };
const returnToFirst = { type: 'onboarding.returnToFirst' };

/** A machine with its bundle loaded at version 0. */
function machine() {
  const engine = new DoubleEngine();
  const made = new ClientMachine(stateOf(engine));
  made.loaded(engine);
  return { machine: made, engine };
}

/** @param {import('../src/client/client-event.js').ClientEvent[]} events */
function correctionOf(events) {
  const event = events.find((e) => e.type === 'corrected');
  assert.ok(event && event.type === 'corrected', `no correction in ${JSON.stringify(events.map((e) => e.type))}`);
  return event.correction;
}

test('a tap is shown at once, posted on the version shown, and an equal answer confirms it', () => {
  const { machine: m, engine } = machine();
  const result = m.tap(showSecond, 'k1');
  const expected = stateOf(engine.applying(showSecond).next);
  assert.equal(result.kind, 'shown');
  assert.ok(result.kind === 'shown' && result.state.equals(expected));
  assert.deepEqual(m.shown.features, ['onboarding.first', 'onboarding.second']);
  const command = m.nextCommand();
  assert.ok(command?.kind === 'post' && command.item.key === 'k1' && command.item.version === 0);
  assert.equal(m.nextCommand(), undefined, 'one on the wire at a time');
  const events = m.answered('k1', expected);
  assert.deepEqual(events.map((e) => e.type), ['confirmed']);
  assert.equal(m.queue.length, 0);
  assert.ok(m.confirmed.equals(expected) && m.engine !== undefined);
});

test('a replayed old answer (a tap kept by a store that missed later saves) takes the tap off the queue but not the client back', () => {
  const start = new DoubleEngine();
  const then = start.applying(showSecond).next;
  const now = then.applying(completed).next;
  const m = new ClientMachine(stateOf(now));
  m.restore([{ key: 'k1', version: 0, action: showSecond }]);
  const command = m.nextCommand();
  assert.ok(command?.kind === 'post' && command.item.key === 'k1');
  assert.deepEqual(m.answered('k1', stateOf(then)), []);
  assert.equal(m.queue.length, 0);
  assert.ok(m.confirmed.equals(stateOf(now)) && m.shown.equals(m.confirmed), `confirmed v${m.confirmed.version}, shown v${m.shown.version}`);
  m.loaded(now);
  assert.ok(m.engine !== undefined);
});

test('an answer other than the state shown is adopted as a correction; later taps are dropped and the bundle reloaded', () => {
  const { machine: m, engine } = machine();
  m.tap(showSecond, 'k1');
  m.tap(returnToFirst, 'k2');
  const shown = m.shown;
  assert.equal(m.nextCommand(false)?.kind, 'post');
  const elsewhere = engine.applying(showSecond).next.applying(completed).next;
  const other = stateOf(elsewhere);
  const fix = correctionOf(m.answered('k1', other));
  assert.ok(fix.to.equals(other) && fix.from.equals(shown));
  assert.deepEqual(fix.taps.map((t) => t.action), [returnToFirst]);
  assert.equal(fix.reason, 'differentAnswer');
  assert.ok(m.shown.equals(other) && m.queue.length === 0 && m.engine === undefined && m.needsBundle);
  m.loaded(elsewhere);
  assert.ok(m.engine !== undefined);
});

test('a refusal (409) rolls back to the confirmed state with its engine; a 412 asks to reload, then adopts', () => {
  const { machine: m } = machine();
  const start = m.shown;
  m.tap(showSecond, 'k1');
  m.nextCommand();
  const fix = correctionOf(m.refused('k1', 409, { status: 409 }));
  assert.ok(fix.to.equals(start) && fix.reason === 'refused');
  assert.ok(m.shown.equals(start) && m.engine !== undefined);

  m.tap(showSecond, 'k2');
  m.nextCommand();
  assert.deepEqual(m.refused('k2', 412, { status: 412 }), []);
  assert.equal(m.nextCommand()?.kind, 'reload');
  const mismatch = correctionOf(m.reloaded(start));
  assert.equal(mismatch.reason, 'versionMismatch');
  assert.deepEqual(mismatch.taps.map((t) => t.action), [showSecond]);
  assert.deepEqual(mismatch.problem, { status: 412 });
});

test('offline taps keep working and queue; back online they go as one batch that confirms them all', () => {
  const { machine: m } = machine();
  assert.deepEqual(m.unreachable(), [{ type: 'offline' }]);
  m.tap(showSecond, 'k1');
  m.tap(completed, 'k2');
  assert.deepEqual(m.shown.features, ['home.first']);
  assert.equal(m.nextCommand(), undefined);
  assert.deepEqual(m.reachable(), [{ type: 'online' }]);
  const command = m.nextCommand();
  assert.ok(command?.kind === 'batch');
  assert.deepEqual(command.items.map((i) => [i.key, i.version]), [['k1', 0], ['k2', 1]]);
  const final = m.shown;
  const events = m.batchAnswered(2, new Set(['k1', 'k2']), undefined, final);
  assert.deepEqual(events.map((e) => e.type), ['confirmed']);
  assert.ok(m.queue.length === 0 && m.engine !== undefined && m.confirmedEngine?.version === 2);
});

test('a batch stopped at a refusal confirms what was taken and rolls back to it, naming the taps not taken', () => {
  const { machine: m, engine } = machine();
  m.unreachable();
  m.tap(showSecond, 'k1');
  m.tap(completed, 'k2');
  m.reachable();
  m.nextCommand();
  const afterFirst = stateOf(engine.applying(showSecond).next);
  const events = m.batchAnswered(2, new Set(['k1']), { status: 422 }, afterFirst);
  assert.equal(events[0].type, 'confirmed');
  const fix = correctionOf(events);
  assert.deepEqual(fix.taps.map((t) => t.action), [completed]);
  assert.equal(fix.reason, 'refused');
  assert.ok(m.shown.equals(afterFirst) && m.queue.length === 0);
  assert.equal(m.engine?.version, 1, 'rolled back to the engine after the first tap');
});

test('taps made while a batch is on the wire stay queued and go next', () => {
  const { machine: m } = machine();
  m.unreachable();
  m.tap(showSecond, 'k1');
  m.tap(completed, 'k2');
  m.reachable();
  const command = m.nextCommand();
  assert.ok(command?.kind === 'batch' && command.items.length === 2);
  m.tap({ type: 'home.selectTab', params: { index: 1 } }, 'k3');
  assert.deepEqual(m.shown.features, ['home.second']);
  const afterTwo = /** @type {NavigationState} */ (m.queue[1].expected);
  assert.deepEqual(m.batchAnswered(2, new Set(['k1', 'k2']), undefined, afterTwo).map((e) => e.type), ['confirmed']);
  assert.deepEqual(m.queue.map((i) => i.key), ['k3']);
  assert.deepEqual(m.shown.features, ['home.second']);
  const next = m.nextCommand();
  assert.ok(next?.kind === 'post' && next.item.key === 'k3' && next.item.version === 2);
});

test('unknown outcomes retry the same request under the same key after growing pauses, then go offline', () => {
  const engine = new DoubleEngine();
  const m = new ClientMachine(stateOf(engine), { retry: new RetryPolicy({ attempts: 3, initialDelay: 10, maximumDelay: 15 }) });
  m.loaded(engine);
  m.tap(showSecond, 'k1');
  const first = m.nextCommand();
  assert.ok(first?.kind === 'post');
  const replies = [{ status: 500, body: '' }, { status: 200, body: '<html>proxy</html>' }, { noAnswer: 'connection reset' }];
  const pauses = [];
  /** @type {import('../src/client/client-event.js').ClientEvent[]} */
  let events = [];
  for (const reply of replies) {
    events = m.handle(reply, first);
    const next = m.nextCommand();
    if (next?.kind === 'pause') {
      pauses.push(next.ms);
      const again = m.nextCommand();
      assert.ok(again?.kind === 'post' && again.item.key === 'k1', 'the same key again');
    }
  }
  assert.deepEqual(pauses, [10, 15]);
  assert.deepEqual(events, [{ type: 'offline' }]);
  assert.equal(m.queue.length, 1, 'the tap stays queued: an unknown outcome is never a refusal');
  assert.equal(m.lastFailure, 'no answer: connection reset');
});

test('the backoff goes on across going offline and back: after a probe the next try waits longer, until an answer says what happened', () => {
  const engine = new DoubleEngine();
  const m = new ClientMachine(stateOf(engine), { retry: new RetryPolicy({ attempts: 2, initialDelay: 10, maximumDelay: 1000 }) });
  m.loaded(engine);
  m.tap(showSecond, 'k1');
  const failed = { status: 500, body: '' };
  /** The pauses before each try of one offline cycle, and whether it went offline. */
  const cycle = () => {
    const pauses = [];
    for (;;) {
      let command = m.nextCommand();
      if (command?.kind === 'pause') {
        pauses.push(command.ms);
        command = m.nextCommand();
      }
      assert.ok(command?.kind === 'post');
      if (m.handle(failed, command).some((event) => event.type === 'offline')) return pauses;
    }
  };
  assert.deepEqual(cycle(), [10]);
  assert.deepEqual(m.reachable(), [{ type: 'online' }]);  // /healthz answers, the actions still fail
  assert.deepEqual(cycle(), [20, 40], 'not 10 again');
  m.reachable();
  assert.deepEqual(cycle(), [80, 160]);
  m.reachable();
  const command = m.nextCommand();
  assert.deepEqual(command, { kind: 'pause', ms: 320 });
  const post = m.nextCommand();
  assert.ok(post?.kind === 'post');
  assert.equal(m.handle({ status: 200, body: JSON.stringify(m.shown.document) }, post)[0].type, 'confirmed');
  assert.equal(m.streak, 0);
  m.unreachable();
  m.tap(completed, 'k2');
  m.reachable();
  assert.equal(m.nextCommand()?.kind, 'post', 'after an answer (and an outage the app made) no pause is owed');
});

test('a Retry-After longer than the backoff is the pause owed; a shorter one changes nothing', () => {
  const engine = new DoubleEngine();
  const m = new ClientMachine(stateOf(engine), { retry: new RetryPolicy({ attempts: 3, initialDelay: 10, maximumDelay: 1000 }) });
  m.loaded(engine);
  m.tap(showSecond, 'k1');
  let post = m.nextCommand();
  assert.ok(post?.kind === 'post');
  m.handle({ status: 429, body: JSON.stringify({ type: 'about:blank', status: 429 }) }, post);
  m.retryAfter(2000);
  assert.deepEqual(m.nextCommand(), { kind: 'pause', ms: 2000 });
  post = m.nextCommand();
  assert.ok(post?.kind === 'post');
  m.handle({ status: 429, body: '' }, post);
  m.retryAfter(5);
  assert.deepEqual(m.nextCommand(), { kind: 'pause', ms: 20 });
});

test('only the server\'s own problem documents refuse; a 503 problem, a 429 and a proxy page are unknown', () => {
  const problem = (/** @type {number} */ status) => JSON.stringify({ type: 'about:blank', status, title: 't' });
  assert.equal(ClientMachine.classify({ status: 409, body: problem(409) }).kind, 'refusal');
  assert.equal(ClientMachine.classify({ status: 422, body: problem(422) }).kind, 'refusal');
  assert.equal(ClientMachine.classify({ status: 412, body: problem(412) }).kind, 'versionMismatch');
  assert.equal(ClientMachine.classify({ status: 404, body: problem(404) }).kind, 'gone');
  assert.equal(ClientMachine.classify({ status: 401, body: problem(401) }).kind, 'gone');
  assert.equal(ClientMachine.classify({ status: 503, body: problem(503) }).kind, 'unknown');
  assert.equal(ClientMachine.classify({ status: 429, body: problem(429) }).kind, 'unknown');
  assert.equal(ClientMachine.classify({ status: 404, body: '<html>nginx</html>' }).kind, 'unknown');
  assert.equal(ClientMachine.classify({ status: 409, body: '{"error": "x"}' }).kind, 'unknown');
  assert.equal(ClientMachine.classify({ status: 200, body: '[1]' }).kind, 'unknown');
});

test('another device\'s version is adopted when nothing is pending, left to the answer while a tap is', () => {
  const { machine: m, engine } = machine();
  const next = stateOf(engine.applying(showSecond).next);
  assert.deepEqual(m.received(m.confirmed), []);
  m.tap(showSecond, 'k1');
  assert.deepEqual(m.received(next), []);
  m.nextCommand();
  m.answered('k1', next);
  const remote = stateOf(engine.applying(showSecond).next.applying(completed).next);
  assert.deepEqual(m.received(remote), [{ type: 'remote', state: remote }]);
  assert.ok(m.shown.equals(remote) && m.needsBundle);
});

test('without a bundle, a predicted tap is shown from the prediction (with its from); any other tap waits', () => {
  const engine = new DoubleEngine();
  const predictions = engine.predictions().map((p) => ({ action: { ...p.action, from: 'e3' }, state: stateOf(p.next) }));
  const m = new ClientMachine(stateOf(engine), { predictions });
  const result = m.tap(showSecond, 'k1');
  assert.ok(result.kind === 'shown');
  assert.deepEqual(result.state.features, ['onboarding.first', 'onboarding.second']);
  assert.deepEqual(m.queue[0].action, { type: 'onboarding.showSecond', from: 'e3' }, 'posted from the predicted screen');
  assert.deepEqual(m.tap(completed, 'k2'), { kind: 'waiting', key: 'k2' });
});

test('a tap the local engine refuses throws and queues nothing', () => {
  const { machine: m } = machine();
  assert.throws(() => m.tap(completed, 'k1'), (/** @type {any} */ error) => error.code === 'unhandled' && error.status === 422);
  assert.equal(m.queue.length, 0);
});

test('a 404 for the session asks for a new session; the restart reports the queued taps as dropped', () => {
  const { machine: m } = machine();
  m.tap(showSecond, 'k1');
  const post = m.nextCommand();
  assert.ok(post);
  assert.deepEqual(m.handle({ status: 404, body: JSON.stringify({ type: 'x', status: 404, title: 'Not Found' }) }, post), []);
  assert.equal(m.nextCommand()?.kind, 'create');
  const fresh = stateOf(new DoubleEngine({ sessionId: 's_2' }));
  const events = m.restarted(fresh, { oldSession: 's_1' });
  assert.equal(events[0].type, 'restarted');
  const restart = events[0].type === 'restarted' ? events[0].restart : undefined;
  assert.equal(restart?.status, 404);
  assert.deepEqual(restart?.dropped.map((t) => t.key), ['k1']);
  assert.match(restart?.reason ?? '', /session s_1 is gone \(404\); 1 queued tap\(s\) were dropped/);
  assert.ok(m.shown.equals(fresh) && m.queue.length === 0 && m.gone === undefined);
});

test('started again offline from the store: kept taps replay on the kept engine, new taps run locally, all go as one batch', () => {
  const engine = new DoubleEngine();
  const confirmed = stateOf(engine);
  const queued = [
    { key: 'k1', version: 0, action: showSecond, at: '2026-11-25T18:00:00.000Z' },
    { key: 'k2', version: 1, action: completed, at: '2026-11-25T18:00:01.000Z' },
  ];
  const m = ClientMachine.restoredOffline(confirmed, engine, queued);
  assert.ok(m.offline && m.engine !== undefined);
  assert.deepEqual(m.shown.features, ['home.first']);
  assert.equal(m.shown.version, 2);
  assert.equal(m.tap({ type: 'home.selectTab', params: { index: 1 } }, 'k3').kind, 'shown');
  assert.deepEqual(m.shown.features, ['home.second']);
  assert.equal(m.nextCommand(), undefined);
  m.reachable();
  const command = m.nextCommand();
  assert.ok(command?.kind === 'batch');
  assert.deepEqual(command.items.map((i) => i.key), ['k1', 'k2', 'k3']);

  const bare = ClientMachine.restoredOffline(confirmed, undefined, queued);
  assert.ok(bare.offline && bare.engine === undefined && bare.shown.equals(confirmed));
  assert.deepEqual(bare.queue.map((i) => i.key), ['k1', 'k2']);
});

test('a thousand queued taps go in batches of at most 100, oldest first', () => {
  const { machine: m } = machine();
  m.unreachable();
  m.tap(showSecond, 'k0');
  m.tap(completed, 'k1');
  for (let i = 2; i < 1000; i++) m.tap({ type: 'home.selectTab', params: { index: i % 2 } }, `k${i}`);
  m.reachable();
  let batches = 0;
  while (m.queue.length > 0) {
    const command = m.nextCommand();
    assert.ok(command?.kind === 'batch' || command?.kind === 'post');
    const items = command.kind === 'batch' ? command.items : [command.item];
    assert.ok(items.length <= 100);
    assert.equal(items[0].key, `k${batches * 100}`);
    const last = /** @type {NavigationState} */ (items[items.length - 1].expected);
    assert.deepEqual(m.batchAnswered(items.length, new Set(items.map((i) => i.key)), undefined, last).map((e) => e.type), ['confirmed']);
    batches += 1;
  }
  assert.equal(batches, 10);
  assert.equal(m.confirmed.version, 1000);
});

test('a copy is a value: changing it leaves the original as it was', () => {
  const { machine: m } = machine();
  const copy = m.copy();
  copy.tap(showSecond, 'k1');
  assert.equal(m.queue.length, 0);
  assert.equal(copy.queue.length, 1);
  assert.deepEqual(m.shown.features, ['onboarding.first']);
});
