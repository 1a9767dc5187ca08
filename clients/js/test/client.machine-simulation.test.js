// The client simulation: seeded schedules of taps and faults on ClientMachine and the engine, each
// checked against the client's contract (support/client-simulation.js, a port of
// ClientSimulationTests): no clock, so a failing seed replays exactly.
// It runs the Swift suite's 10,020 schedules, as CI does (FLOWSTACK_SIM_SCALE=0.1 runs a tenth, for a quick look);
// FLOWSTACK_SIM_SEED=1000076 [FLOWSTACK_SIM_KIND=predictions] [FLOWSTACK_SIM_ENGINE=double] replays one with its trace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientSimulation, standardOptions } from './support/client-simulation.js';
import { realEngineWorld } from './support/engine-world.js';
import { doubleWorld } from './support/simulated-server.js';

/**
 * The kinds of schedule, their options and how many of each the Swift suite runs; a kind's seeds
 * start at its index × 1,000,000 + 1, as in ClientSimulationTests.
 * @type {Array<{name: string, options: Partial<typeof standardOptions>, schedules: number}>}
 */
const kinds = [
  { name: 'engine', options: {}, schedules: 3000 },
  { name: 'predictions', options: { usesBundle: false }, schedules: 1500 },
  { name: 'waiting', options: { usesBundle: false, usesPredictions: false }, schedules: 1500 },
  { name: 'fastTaps', options: { tapRate: 850 }, schedules: 1500 },
  { name: 'soleClient', options: { otherDevice: 0, deleteSession: 0 }, schedules: 2518 },
  { name: 'offlineQueue', options: { taps: [1000, 1200], offlineTaps: 1000, tapRate: 900, kill: 2, otherDevice: 0, deleteSession: 0 }, schedules: 2 },
];
const scale = Number(process.env.FLOWSTACK_SIM_SCALE ?? '1');

/**
 * @param {import('./support/simulated-server.js').World} world
 * @param {typeof kinds[number]} kind
 * @param {number} count
 */
function runKind(world, kind, count) {
  const offset = kinds.indexOf(kind) * 1000000;
  const started = Date.now();
  const reports = [];
  for (let seed = offset + 1; seed <= offset + count; seed++) reports.push(new ClientSimulation(seed, world, kind.options).run());
  const sum = (/** @type {'taps' | 'faults' | 'kills' | 'reported'} */ field) => reports.reduce((total, report) => total + report[field], 0);
  /** @type {Record<string, number>} */
  const reasons = {};
  for (const report of reports) for (const [reason, n] of Object.entries(report.reasons)) reasons[reason] = (reasons[reason] ?? 0) + n;
  const failed = reports.filter((report) => report.failures.length > 0);
  const seconds = (Date.now() - started) / 1000;
  console.log(`simulation ${kind.name}: ${count} schedules, ${sum('taps')} taps (${sum('reported')} reported not taken), ${sum('faults')} faults, `
    + `${sum('kills')} kills in ${seconds.toFixed(2)} s; ${failed.length} failed; not taken: ${Object.entries(reasons).sort().map(([r, n]) => `${r} ${n}`).join(', ')}`);
  assert.deepEqual(failed.slice(0, 3).map((report) => `seed ${report.seed}: ${report.failures.join('; ')}\n  ${report.trace.slice(-30).join('\n  ')}`), []);
  return reasons;
}

const only = process.env.FLOWSTACK_SIM_SEED;
if (only !== undefined) {
  test(`replays seed ${only}`, async () => {
    const world = process.env.FLOWSTACK_SIM_ENGINE === 'double' ? doubleWorld : await realEngineWorld();
    const kind = kinds.find((candidate) => candidate.name === (process.env.FLOWSTACK_SIM_KIND ?? 'engine')) ?? kinds[0];
    const report = new ClientSimulation(Number(only), world, kind.options).run();
    console.log(report.trace.join('\n'));
    console.log({ ...report, trace: undefined });
  });
} else {
  /** @type {Promise<import('./support/simulated-server.js').World>} */
  let world;
  test('every kind of schedule holds the client\'s contract on the real engine', async (t) => {
    world = realEngineWorld();
    /** @type {Record<string, number>} */
    const reasons = {};
    for (const kind of kinds) {
      await t.test(kind.name, async () => {
        const found = runKind(await world, kind, Math.max(1, Math.round(kind.schedules * scale)));
        for (const [reason, n] of Object.entries(found)) reasons[reason] = (reasons[reason] ?? 0) + n;
      });
    }
    // The schedules reach the ways a tap can be not taken (a refusal, another device first, a
    // deleted session), so each of those paths of the machine ran. A different answer to a post
    // needs a lost answer, another device and a batch's replay together: about one schedule in
    // 3,000 at full scale (client.machine.test.js covers it directly).
    const expected = ['corrected (refused)', 'corrected (versionMismatch)', 'restarted'];
    if (scale >= 1) expected.push('corrected (differentAnswer)');
    for (const reason of expected) {
      assert.ok((reasons[reason] ?? 0) > 0, `no schedule reported a tap ${reason}`);
    }
  });
  test('the engine kind on the engine double', () => {
    runKind(doubleWorld, kinds[0], Math.max(1, Math.round(kinds[0].schedules * scale)));
  });
}
