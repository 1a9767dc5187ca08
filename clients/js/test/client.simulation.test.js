// FlowSession under seeded schedules (FlowSessionSimulationTests' port): the drain loop, retries,
// probe, start and store, over a simulated transport (lost requests and answers, 500s, 502s and
// bodies that are not JSON before and after commits, the server down, the app killed and started
// again with another spelling of the server's address, started while every answer is a 500, and a
// `localStorage` that fills up for stretches and refuses every write), with the engine given at
// once or as a promise (come, or coming past a kept session's `engineWait`). After every save the store completes, what it holds (read back as the next launch reads it) must
// be the queue the client's machine held when that save's snapshot was taken; and a tap whose
// `send` settled while it is still queued must be in the store (unless that save was refused). A tap
// is lost only the way a full disk loses it: never in a save the store took, never sent, and its
// launch killed while its last save was refused and the app still held it; every tap made was in
// a save its launch asked for; and a 412 comes only in a launch that started from a store that
// missed a tap the server has.
// The simulated server and the client's local engine run src/engine (on the sample app's bundles
// read once from a real server), and again on the engine double (no server needed).
// FLOWSTACK_SIM_SEED=13 [FLOWSTACK_SIM_KIND=predictions] [FLOWSTACK_SIM_TRACE=1] replays one schedule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import {
  ActionRefused, batchItem, decodeStoredSession, FlowSession, keyOf, KeyValueSessionStore, MemorySessionStore, NavigationState, randomKey,
  RetryPolicy, SessionKey, Unreachable,
} from '../src/client/index.js';
import * as engineModule from '../src/engine/index.js';
import { localEngine } from '../src/client/index.js';
import { DoubleEngine } from './support/engine-double.js';
import { realEngineWorld } from './support/engine-world.js';
import { SeededGenerator } from './support/random.js';
import { chooseAction } from './support/session-taps.js';
import { doubleWorld, SimulatedServer } from './support/simulated-server.js';
import { KillableStore, RefusingStorage, SimulatedTransport } from './support/simulated-transport.js';

/** Equivalent spellings of one server: every launch must find the session the last one kept. */
const spellings = ['http://sim.test', 'HTTP://Sim.Test:80/', 'http://sim.test/', 'http://SIM.test:80'];
const tracing = process.env.FLOWSTACK_SIM_TRACE !== undefined;
/** @param {string} line */
const trace = (line) => { if (tracing) console.log('  ' + line); };
const doubleEngine = { fromBundle: (/** @type {string} */ text) => DoubleEngine.fromBundle(text) };
const realEngine = localEngine(engineModule);
/** The real engine's world, made once (it reads two bundles from a real server). @type {Promise<import('./support/simulated-server.js').World> | undefined} */
let realWorld;

/**
 * @param {'real' | 'double'} kind
 * @returns {Promise<{world: import('./support/simulated-server.js').World, engine: import('../src/client/flow-session.js').EngineFactory}>}
 */
async function worldOf(kind) {
  if (kind === 'double') return { world: doubleWorld, engine: doubleEngine };
  realWorld ??= realEngineWorld();
  return { world: await realWorld, engine: realEngine };
}
const retry = new RetryPolicy({ attempts: 3, initialDelay: 1, maximumDelay: 8 });

/** @typedef {import('../src/client/index.js').QueuedAction} QueuedAction */

/**
 * A tap as a later launch resumes it (`ClientMachine.restore`): its key, version, action as
 * posted and when it was made; what it shows is replayed from the bundle, not kept. A copy, so a
 * queued tap changed later (a waiting tap takes its prediction's `from`) does not change it.
 * @param {QueuedAction} item
 */
const resumedForm = (item) => structuredClone(batchItem(item));

/**
 * The session a key-value store keeps under `name`, read at once (no await, so no save comes
 * between): its main entry with the taps of the journal it names (see `KeyValueSessionStore`).
 * @param {Map<string, string>} file
 * @param {string} name
 */
function readNow(file, name) {
  const text = file.get(name);
  const value = text === undefined ? undefined : JSON.parse(text);
  for (let entry = 0, taps; value?.journal !== undefined && (taps = file.get(`${name}#${value.journal}.${entry}`)) !== undefined; entry++) {
    value.queue.push(...JSON.parse(taps));
  }
  return value && decodeStoredSession(value);
}

/** @param {Array<{key: string, version: number, action: {type: string, from?: string}}>} queue */
const describeQueue = (queue) => `[${queue.map((item) => `${item.key.slice(0, 8)} v${item.version} ${item.action.type}${item.action.from ? ` from ${item.action.from}` : ''}`).join(', ')}]`;

/**
 * The schedule's store, which checks every save it completes against the session as it was when
 * the save's snapshot was taken (`snapshotted`, called from `FlowSession.saveNow` below): the
 * store, read back as the next launch reads it, holds that session's id, confirmed state and
 * queue, tap for tap. Saves are chained in the order their snapshots were taken, so the n-th save
 * the store is given is the n-th snapshot; the one save before any (`FlowSession.start`'s, of a
 * new session) keeps no tap. A violation is the schedule's failure.
 */
class CheckedStore extends KillableStore {
  /**
   * @param {KeyValueSessionStore} base
   * @param {(failure: string) => void} fail
   * @param {{savesChecked: number}} tally counts the saves compared with their snapshot
   * @param {Set<string>} saved gathers the keys of every queue a save the store took held: taps no kill can lose
   */
  constructor(base, fail, tally, saved) {
    super(base);
    this.kept = base;
    this.fail = fail;
    this.tally = tally;
    this.saved = saved;
    /** @type {Array<{queue: ReturnType<typeof resumedForm>[], sessionId: string, confirmed: NavigationState}>} */
    this.snapshots = [];
    this.saves = 0;
  }

  /** @param {FlowSession} session as it is while `saveNow` takes its snapshot */
  snapshotted(session) {
    this.snapshots.push({ queue: session.pending.map(resumedForm), sessionId: session.sessionId, confirmed: session.confirmedState });
  }

  /** @param {import('../src/client/index.js').StoredSession} session */
  async save(session) {
    const snapshot = this.snapshots.shift();
    const writes = !this.killed;
    await super.save(session);  // a refused save throws: nothing to check, the client saves again
    this.saves += 1;
    if (!writes) return;  // killed: nothing written, and the store is the next launch's
    for (const item of session.queue) this.saved.add(item.key);
    const read = await this.kept.load(keyOf(session));
    const at = `save ${this.saves}`;
    if (!read) return this.fail(`${at}: the store holds no session a launch reads`);
    const queue = read.queue.map(resumedForm);
    if (!snapshot) {
      if (this.saves !== 1 || queue.length > 0) this.fail(`${at}: saved with no snapshot taken, holding ${describeQueue(queue)}`);
      return;
    }
    this.tally.savesChecked += 1;
    if (read.skipped) this.fail(`${at}: ${read.skipped} kept taps do not read`);
    if (read.sessionId !== snapshot.sessionId) this.fail(`${at}: the store holds session ${read.sessionId}, the client was on ${snapshot.sessionId}`);
    if (!isDeepStrictEqual(queue, snapshot.queue)) {
      this.fail(`${at}: the store holds the queue ${describeQueue(queue)}, the client's was ${describeQueue(snapshot.queue)}`);
    }
    let confirmed;
    try {
      confirmed = read.confirmed && NavigationState.fromJSON(read.confirmed);
    } catch {
      confirmed = undefined;
    }
    if (!confirmed?.equals(snapshot.confirmed)) {
      this.fail(`${at}: the store holds ${confirmed ? `v${confirmed.version}` : 'no state that reads'} as confirmed, the client had v${snapshot.confirmed.version}`);
    }
  }
}

// The one place a session takes its store's snapshot: a CheckedStore is told the session's queue
// there, before the save is chained (test-only; the client's own behaviour is unchanged).
const saveNow = FlowSession.prototype.saveNow;
FlowSession.prototype.saveNow = function saveNowChecked() {
  if (this.store instanceof CheckedStore) this.store.snapshotted(this);
  return saveNow.call(this);
};

/**
 * One schedule: a user taps 15 to 40 times through faults, kills and restarts; then the checks of
 * the client's contract.
 * @param {number} seed
 * @param {boolean} usesEngine
 * @param {'real' | 'double'} kind
 */
async function schedule(seed, usesEngine, kind) {
  const { world, engine } = await worldOf(kind);
  const outcome = {
    seed, made: 0, stored: 0, reported: 0, lost: 0, launches: 0, faults: 0, refusals: 0, savesChecked: 0, queuedChecked: 0, /** @type {string[]} */ failures: [],
  };
  const random = new SeededGenerator(seed);
  const server = new SimulatedServer(world);
  /** @type {Map<string, string>} */
  const file = new Map();
  const disk = new RefusingStorage(file);
  const kept = new KeyValueSessionStore(disk);
  // The disk fills up from its own seed, so the schedule's taps, kills and outages are those it
  // drew before the disk could fill.
  const diskRandom = new SeededGenerator(BigInt(seed) ^ 0x6469736b66756c6cn);
  let fullFor = 0;
  // Half the times the disk has room again, the app is killed right after the next tap: its save
  // is the first one taken after the refused ones, and what it holds may not be sent.
  let killAfterTap = false;
  let tappedWithRoom = false;
  /** The keys of every queue a save the store took held. @type {Set<string>} */
  const saved = new Set();
  /**
   * What each launch asked its store to keep, whether its kill came with its last save refused,
   * the taps its app still held when killed (the only ones a refused save can lose), and whether
   * it started from a store that had missed taps the server has (a kill with a save refused):
   * kept taps made on states the server has left, which the server refuses with a 412.
   * @type {Array<{store: CheckedStore, killedUnsaved: boolean, held: Set<string>, stale: boolean}>}
   */
  const launched = [];
  /** The key of every tap made (queued: shown, or waited and refused or offline). @type {Set<string>} */
  const madeKeys = new Set();
  /** @type {Set<string>} */
  const reported = new Set();
  /** Why each correction came, and in which launch (counted from 1). @type {Array<{reason: string, launch: number}>} */
  const corrections = [];
  /** Violations of the store's invariants: the first few are told, the rest counted. */
  let violations = 0;
  /** @param {string} failure */
  const fail = (failure) => {
    violations += 1;
    if (violations <= 2) outcome.failures.push(failure);
  };
  /** The key of the last tap made (sends are made one after another). @type {string | undefined} */
  let lastKey;
  const newKey = () => (lastKey = randomKey());
  const target = 15 + random.below(25);

  /** @param {import('../src/client/index.js').ClientEvent} event @param {number} launch */
  const take = (event, launch) => {
    trace(`event ${event.type}${event.type === 'corrected' ? ` ${event.correction.reason}` : ''}`);
    if (event.type === 'corrected') {
      for (const tap of event.correction.taps) reported.add(tap.key);
      corrections.push({ reason: event.correction.reason, launch });
    } else if (event.type === 'restarted') {
      for (const tap of event.restart.dropped) reported.add(tap.key);
      corrections.push({ reason: 'restarted', launch });
    }
  };

  // How each launch is given its engine: at once, as a promise that has come (an engine chunk
  // loaded before), or as one that comes a little later, past the kept session's `engineWait`
  // (a chunk still loading): the session starts without it and takes it when it comes.
  const engineRandom = new SeededGenerator(BigInt(seed) ^ 0x656e67696e65n);
  /** @param {number} how */
  const engineOf = (how) => how === 0 ? engine : how === 1 ? Promise.resolve(engine)
    : new Promise((resolve) => setTimeout(() => resolve(engine), 2 + engineRandom.below(10)));

  /** @param {boolean} failingStart */
  const launch = async (failingStart) => {
    const transport = new SimulatedTransport(server, random.nextBig());
    const store = new CheckedStore(kept, fail, outcome, saved);
    const spelling = spellings[random.below(spellings.length)];
    // Whether this launch starts from a store that missed what the app did last: the server
    // applied a tap that no save the store took held, past the confirmed state it kept (or it
    // keeps taps the server has not applied, made on a state the server has left).
    const before = readNow(file, kept.prefix + new SessionKey(spellings[0], 'ada'));
    const serverVersion = before && server.sessions.get(before.sessionId)?.state.version;
    const applied = before && server.answers.get(before.sessionId);
    const keptVersion = typeof before?.confirmed?.version === 'number' ? before.confirmed.version : -1;
    const stale = before !== undefined && serverVersion !== undefined
      && (server.log.some((entry) => entry.session === before.sessionId && entry.key !== undefined && !saved.has(entry.key) && entry.version > keptVersion)
        || before.queue.some((item) => !applied?.has(item.key) && item.version < serverVersion));
    // A start while no server answers: connection refused, or a 500 to everything.
    if (failingStart) {
      if (random.below(2) === 0) server.down = true;
      else transport.failEverything(true);
    }
    const session = await FlowSession.start({ server: spelling, userId: 'ada', store, retry, transport, newKey, engine: usesEngine ? engineOf(engineRandom.below(3)) : undefined, engineWait: 1 });
    server.down = false;
    transport.failEverything(false);
    outcome.launches += 1;
    trace(`launched: shows v${session.state.version}, pending ${session.pending.map((p) => `v${p.version}${p.expected ? '' : ' blind'}`)}`);
    launched.push({ store, killedUnsaved: false, held: new Set(), stale });
    const number = launched.length;
    for (const event of session.history) take(event, number);  // what start reported before the subscription
    // What the server confirmed never goes back within a launch (but to a new session's start,
    // after a restart): an answer the server replays for a tap it stored long ago is not news.
    let confirmed = session.confirmedState.version;
    session.subscribe((event) => {
      take(event, number);
      if (event.type === 'restarted') confirmed = session.confirmedState.version;
      if (session.confirmedState.version < confirmed) {
        fail(`launch ${number}: the confirmed state went back from v${confirmed} to v${session.confirmedState.version} (${event.type})`);
      }
      confirmed = Math.max(confirmed, session.confirmedState.version);
    });
    return { session, transport, store };
  };

  let { session, transport, store } = await launch(false);
  while (outcome.made < target) {
    // A full disk: a stretch of a few steps, begun at random, in which every write is refused.
    if (fullFor > 0) {
      fullFor -= 1;
      if (fullFor === 0) {
        disk.full = false;
        killAfterTap = diskRandom.below(2) === 0;
        trace('disk has room');
      }
    } else if (diskRandom.below(100) < 8) {
      fullFor = 2 + diskRandom.below(6);
      disk.full = true;
      trace(`disk full for ${fullFor} steps`);
    }
    if ((killAfterTap && tappedWithRoom) || random.below(100) < 6) {
      killAfterTap = tappedWithRoom = false;
      // Killed: nothing more is sent or written; started again from the store, with another
      // spelling of the server, and now and then while no server answers.
      trace('kill');
      transport.kill();
      launched[launched.length - 1].killedUnsaved = store.kill();
      launched[launched.length - 1].held = new Set(session.pending.map((item) => item.key));
      outcome.faults += transport.faultsInjected;
      await session.close();
      ({ session, transport, store } = await launch(random.below(4) === 0));
      continue;
    }
    if (random.below(100) < 4) server.down = !server.down;
    const action = chooseAction(session, random);
    lastKey = undefined;
    try {
      const shown = await session.send(action);
      trace(`tap ${action.type} shown v${shown.version} ${shown.top?.feature}`);
      outcome.made += 1;
      if (lastKey !== undefined) madeKeys.add(lastKey);
      tappedWithRoom = killAfterTap;
    } catch (error) {
      if (error instanceof ActionRefused || error instanceof Unreachable) {
        outcome.made += 1;  // a tap that waited: refused by the server (reported), or offline (it stays queued)
        if (lastKey !== undefined) madeKeys.add(lastKey);
        tappedWithRoom = killAfterTap;
      } else if (!(typeof error === 'object' && error !== null && 'code' in error)) {
        throw error;  // not the engine's refusal (which queues nothing, as the server would refuse it too)
      }
    }
    // `send` settles once the store has the tap: still queued, it is in the store now (read at
    // once, so no later save comes between the two looks), unless the disk refused that save.
    const key = /** @type {string | undefined} */ (lastKey);  // set by newKey during the send
    if (key !== undefined && !store.refused && session.pending.some((item) => item.key === key)) {
      outcome.queuedChecked += 1;
      const read = readNow(file, kept.prefix + new SessionKey(spellings[0], 'ada'));
      if (!read?.queue.some((item) => item.key === key)) fail(`tap ${outcome.made} (${action.type}, ${key.slice(0, 8)}): send settled, the tap is queued and not in the store`);
    }
    if (!tappedWithRoom && random.below(3) === 0) await new Promise((resolve) => setTimeout(resolve, random.below(2)));
  }
  server.down = false;
  transport.heal();
  disk.full = false;
  outcome.faults += transport.faultsInjected;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const settled = await Promise.race([session.settled().then(() => true), new Promise((resolve) => { timer = setTimeout(() => resolve(false), 20000); })]);
  clearTimeout(timer);
  if (!settled) outcome.failures.push(`did not settle in 20 s (${session.pendingCount} queued, offline ${session.isOffline})`);
  await session.close();

  const counts = server.keyCounts();
  const storedKeys = new Set(counts.all.keys());
  outcome.stored = storedKeys.size;
  outcome.reported = [...reported].filter((key) => !storedKeys.has(key)).length;
  outcome.refusals = disk.refusals;
  for (const [key, count] of counts.all) if (count > 1) outcome.failures.push(`key ${key} stored ${count} times`);
  for (const key of reported) if (counts.live.has(key)) outcome.failures.push(`key ${key} stored but reported not taken`);
  // A tap the store took survives any kill: it reaches the server once, or is reported.
  for (const key of [...saved].sort()) {
    if (!storedKeys.has(key) && !reported.has(key)) outcome.failures.push(`key ${key.slice(0, 8)} was in a save the store took, and was neither stored nor reported`);
  }
  // Every tap made was in a save its launch asked for (taken or refused) before its send settled.
  const asked = new Set(launched.flatMap((launch) => [...launch.store.asked]));
  for (const key of [...madeKeys].sort()) {
    if (!asked.has(key)) outcome.failures.push(`key ${key.slice(0, 8)} was made and never in a save the client asked for`);
  }
  // One neither stored nor reported is lost only the way a full disk loses it: its launch was
  // killed with its last save refused, while the app still held it (a tap the client let go of
  // before the kill, unsent and unreported, is the client's loss, not the disk's).
  launched.forEach((launch, index) => {
    for (const key of [...launch.store.asked].sort()) {
      if (storedKeys.has(key) || reported.has(key) || saved.has(key)) continue;
      if (launch.killedUnsaved && launch.held.has(key)) {
        outcome.lost += 1;
      } else {
        outcome.failures.push(`key ${key.slice(0, 8)} of launch ${index + 1} was neither stored nor reported, and no kill came while its save was refused `
          + `and the app held it (${index + 1 === launched.length ? 'the last launch' : launch.killedUnsaved ? 'let go of before the kill' : 'killed with its last save taken'})`);
      }
    }
  });
  if (outcome.made !== outcome.stored + outcome.reported + outcome.lost) {
    outcome.failures.push(`${outcome.made} taps made, ${outcome.stored} stored, ${outcome.reported} reported, ${outcome.lost} lost with the disk full: `
      + `${outcome.made - outcome.stored - outcome.reported - outcome.lost} lost otherwise`);
  }
  // Once a kill came with a save refused, the store missed what the app did last, and a launch
  // that starts from it (and the ones after, until one sends what it kept, which may be several
  // offline ones) posts kept taps made on states the server has left, and taps queued behind
  // them: a 412, in such a launch only. Any other correction needs someone else on the session.
  const firstKilledUnsaved = launched.findIndex((launch) => launch.killedUnsaved);
  const firstStale = (firstKilledUnsaved === -1 ? launched.length : firstKilledUnsaved) + 2;
  const reasons = corrections.filter(({ reason, launch }) => reason !== 'refused'
    && !(reason === 'versionMismatch' && launch >= firstStale && launched[launch - 1].stale))
    .map(({ reason, launch }) => `${reason} in launch ${launch}`);
  if (reasons.length > 0) outcome.failures.push(`corrections with nobody else on the session: ${reasons}`);
  const live = server.sessions.get(session.sessionId);
  if (settled && live) {
    const state = NavigationState.fromEngine(live.state);
    if (!session.state.equals(state)) outcome.failures.push(`shows v${session.state.version}, the server is at v${state.version}`);
  }
  // (A creation whose 201 was lost is sent again and leaves an unused session on the server:
  // POST /v1/sessions takes no Idempotency-Key. No tap is ever made on it.)
  const used = new Set(server.log.map((entry) => entry.session));
  if (used.size > 1) outcome.failures.push(`taps went to ${used.size} sessions of one user on one server: ${[...used]}`);
  if (file.size !== 1) outcome.failures.push(`the store holds ${file.size} sessions`);
  if (violations > 2) outcome.failures.push(`${violations - 2} more violations of the store's invariants`);
  return outcome;
}

/**
 * @param {boolean} usesEngine
 * @param {number} count
 * @param {'real' | 'double'} kind
 */
async function run(usesEngine, count, kind) {
  const totals = { made: 0, stored: 0, reported: 0, lost: 0, launches: 0, faults: 0, refusals: 0, savesChecked: 0, queuedChecked: 0 };
  const failed = [];
  for (let seed = 1; seed <= count; seed++) {
    const outcome = await schedule(seed, usesEngine, kind);
    totals.made += outcome.made;
    totals.stored += outcome.stored;
    totals.reported += outcome.reported;
    totals.lost += outcome.lost;
    totals.launches += outcome.launches;
    totals.faults += outcome.faults;
    totals.refusals += outcome.refusals;
    totals.savesChecked += outcome.savesChecked;
    totals.queuedChecked += outcome.queuedChecked;
    if (outcome.failures.length > 0) failed.push(outcome);
  }
  console.log(`FlowSession simulation (${usesEngine ? 'engine' : 'predictions'}, ${kind} engine): ${count} schedules, ${totals.made} taps made, ${totals.stored} stored, `
    + `${totals.reported} reported not taken, ${totals.lost} lost with the disk full, ${totals.launches} launches, ${totals.faults} faults, ${totals.refusals} writes refused; `
    + `${totals.savesChecked} saves checked against their snapshot, ${totals.queuedChecked} settled taps found still queued and looked for in the store; ${failed.length} failed`);
  assert.deepEqual(failed.slice(0, 5).map((o) => `seed ${o.seed}: ${o.failures.join('; ')}`), []);
  assert.ok(totals.faults > count, 'faults were injected');
  assert.ok(totals.refusals > count, 'the disk was full');
  assert.ok(totals.savesChecked > totals.made, 'saves were checked');
}

const only = process.env.FLOWSTACK_SIM_SEED;
if (only !== undefined) {
  test(`replays seed ${only}`, async () => {
    const outcome = await schedule(Number(only), process.env.FLOWSTACK_SIM_KIND !== 'predictions', process.env.FLOWSTACK_SIM_ENGINE === 'double' ? 'double' : 'real');
    console.log(outcome);
    assert.deepEqual(outcome.failures, []);
  });
} else {
  test('60 schedules with the local engine: every tap stored exactly once or reported, and the client shows the server\'s state', () => run(true, 60, 'real'));
  test('20 schedules with predictions only', () => run(false, 20, 'real'));
  test('the same schedules on the engine double (60 and 20)', async () => {
    await run(true, 60, 'double');
    await run(false, 20, 'double');
  });
}

test('a kept session and a server answering 500 to everything: starts from the store, offline, then sends its queue', async () => {
  const server = new SimulatedServer();
  const store = new MemorySessionStore();
  const healthy = new SimulatedTransport(server, 1n);
  healthy.heal();
  const first = await FlowSession.start({ server: 'http://sim.test', userId: 'ada', store, retry, transport: healthy, engine: doubleEngine });
  for (let i = 0; i < 100 && !first.hasLocalEngine; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(first.hasLocalEngine);
  first.setOffline(true);
  const shown = await first.send({ type: 'onboarding.showSecond' });
  await first.close();
  const failing = new SimulatedTransport(server, 2n);
  failing.failEverything(true);
  const second = await FlowSession.start({ server: 'http://sim.test', userId: 'ada', store, retry, transport: failing, engine: doubleEngine });
  assert.ok(second.isOffline);
  assert.ok(second.state.equals(shown));
  assert.equal(second.pendingCount, 1);
  failing.failEverything(false);
  failing.heal();
  await second.settled();
  assert.ok(second.confirmedState.equals(shown));
  assert.equal(server.keyCounts().all.size, 1);
  assert.ok(store.load(new SessionKey('http://sim.test', 'ada'))?.bundle, 'the bundle is kept');
  await second.close();
});

test('start failures are typed: no server is Unreachable; a problem is a SessionFailure with its detail', async () => {
  const fixed = (/** @type {import('../src/client/index.js').FlowSession['transport'] extends infer T ? any : never} */ answer) => ({
    send: async () => { if (!answer) throw new Unreachable('connection refused'); return answer; },
  });
  const start = (/** @type {any} */ transport) => FlowSession.start({ server: 'http://sim.test', userId: 'ada', retry: new RetryPolicy({ attempts: 2, initialDelay: 1, maximumDelay: 2 }), transport });
  await assert.rejects(start(fixed(undefined)), Unreachable);
  await assert.rejects(start(fixed({ status: 500, body: '<html>Internal Server Error</html>' })), (error) => error instanceof Unreachable && error.detail.includes('500'));
  await assert.rejects(start(fixed({ status: 422, body: '{"type":"https://flowstack.dev/problems/unsupported-client","status":422,"detail":"update the app"}' })),
    (/** @type {any} */ error) => error.name === 'SessionFailure' && error.status === 422 && error.message === 'FlowStack answered 422: update the app');
  await assert.rejects(start(fixed({ status: 201, body: '<html>Welcome to nginx</html>' })),
    (error) => error instanceof Unreachable && error.detail === 'status 201 with a body that is not a JSON object');
  await assert.rejects(start(fixed({ status: 201, body: '{"hello":"world"}' })), (/** @type {any} */ error) => error.name === 'SessionFailure' && error.message.includes('{"hello":"world"}'));
});
