#!/usr/bin/env node
// A tap's synchronous cost in the client (issue 36): a real `flowstack serve` (FLOWSTACK_BIN, or
// the repository's debug build), a FlowSession on the local engine, and N presses of the sample
// app's tab bar (`home.selectTab {index}`, alternating, as scripts/browser.py presses them), each
// timed from the `send()` call to the moment the state listener sees the new state (the page
// draws it there, synchronously). Offline (`setOffline(true)`, taps queued, sent when back every
// 100 taps) and online (a fetch that waits LATENCY ms before each request and before each answer
// is used, as the playground's slider does; taps queue while a batch is on the wire).
//
//   node clients/js/tools/tap_bench.mjs [taps=1000] [--latency 300] [--interval 30] [--store memory|kv]
//   node --cpu-prof --cpu-prof-dir /tmp/prof clients/js/tools/tap_bench.mjs 2000
//
// Every tap is timed twice over: a plain run for the distribution (p50/p90/p99/max), then the same
// number of taps with the session's and engine's steps wrapped in performance.now() for the split
// (each stage's median and p99 in µs; the wrapping adds a few µs). `--store kv` keeps the session
// in a KeyValueSessionStore over an in-memory map (the stored form written as text, as the page's
// localStorage is) instead of a MemorySessionStore.

import { performance } from 'node:perf_hooks';
import * as engineModule from '../src/engine/index.js';
import {
  ClientMachine, FlowSession, KeyValueSessionStore, LocalEngine, MemorySessionStore, NavigationState, RetryPolicy, localEngine,
} from '../src/client/index.js';
import { FlowStackServer } from '../test/support/server.js';

const args = process.argv.slice(2);
/** @param {string} name @param {string} fallback */
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args.splice(at, 2)[1] : fallback;
};
const latency = Number(option('--latency', '300'));
const interval = Number(option('--interval', '30'));
const storeKind = option('--store', 'memory');
const taps = Number(args[0] ?? 1000);

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The playground's network: `latency` ms before each request and again before its answer is used. */
const slowFetch = /** @type {typeof fetch} */ (async (input, init) => {
  if (latency > 0) await sleep(latency);
  const response = await fetch(input, init);
  const body = await response.arrayBuffer();
  if (latency > 0) await sleep(latency);
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
});

/** @returns {import('../src/client/index.js').SessionStore} */
function makeStore() {
  if (storeKind === 'memory') return new MemorySessionStore();
  const map = new Map();
  return new KeyValueSessionStore({ getItem: (key) => map.get(key), setItem: (key, value) => void map.set(key, value), removeItem: (key) => void map.delete(key) });
}

// MARK: the split

/** µs spent in each stage during the tap being timed, by stage. */
let current = /** @type {Map<string, number> | undefined} */ (undefined);
/** @type {Map<string, number[]>} */
const stages = new Map();

/**
 * Wraps `object[name]` so its time (inclusive) is added to `stage` while a tap is timed.
 * @param {any} object
 * @param {string} name
 * @param {string} stage
 */
function timed(object, name, stage) {
  const original = object[name];
  object[name] = function (/** @type {any[]} */ ...parameters) {
    if (!current) return original.apply(this, parameters);
    const began = performance.now();
    try {
      return original.apply(this, parameters);
    } finally {
      current.set(stage, (current.get(stage) ?? 0) + (performance.now() - began) * 1000);
    }
  };
  return () => { object[name] = original; };
}

/** Wraps the steps of a tap: the machine's (engine, state document read), the session's (store, drain, publish). */
function instrument() {
  return [
    timed(ClientMachine.prototype, 'tap', 'machine.tap (all)'),
    timed(LocalEngine.prototype, 'applying', '  engine.applying'),
    timed(LocalEngine.prototype, 'document', '  engine.document'),
    timed(NavigationState, 'fromJSON', '  NavigationState.fromJSON'),
    timed(JSON, 'parse', '  JSON.parse (anywhere)'),
    timed(FlowSession.prototype, 'persist', 'persist'),
    timed(FlowSession.prototype, 'drain', 'drain'),
    timed(FlowSession.prototype, 'publish', 'publish (listener included)'),
  ];
}

// MARK: the run

/**
 * @param {number[]} values
 * @param {number} p
 */
const percentile = (values, p) => values[Math.max(0, Math.ceil((p / 100) * values.length) - 1)];

/**
 * @param {FlowSession} session
 * @param {boolean} offline
 * @param {number} count
 * @param {boolean} split
 */
async function run(session, offline, count, split) {
  let sentAt = 0;
  let seenAt = 0;
  const unsubscribe = session.subscribeStates(() => { seenAt = performance.now(); });
  const undo = split ? instrument() : [];
  /** @type {number[]} */
  const times = [];
  let tab = session.state.top?.feature === 'home.second' ? 0 : 1;
  for (let done = 0; done < count; done++) {
    if (offline && done % 100 === 0) {
      if (done > 0) {
        session.setOffline(false);
        await session.settled();
      }
      session.setOffline(true);
    }
    seenAt = 0;
    if (split) current = new Map();
    sentAt = performance.now();
    const sent = session.send({ type: 'home.selectTab', params: { index: tab } });
    const returned = performance.now();
    if (split && current) {
      for (const [stage, micros] of current) (stages.get(stage) ?? stages.set(stage, []).get(stage) ?? []).push(micros);
      const total = stages.get('send() returned') ?? stages.set('send() returned', []).get('send() returned') ?? [];
      total.push((returned - sentAt) * 1000);
      current = undefined;
    }
    if (seenAt === 0) throw new Error(`tap ${done}: the state listener saw nothing during send()`);
    times.push(seenAt - sentAt);
    await sent;
    tab = 1 - tab;
    if (interval > 0) await sleep(interval);
  }
  for (const restore of undo) restore();
  unsubscribe();
  if (offline) session.setOffline(false);
  await session.settled();
  return times.sort((a, b) => a - b);
}

const server = await FlowStackServer.start();
try {
  const session = await FlowSession.start({
    server: server.url, userId: `tap-bench-${process.pid}`, store: makeStore(), engine: localEngine(engineModule),
    fetch: slowFetch, retry: new RetryPolicy({ attempts: 3, initialDelay: 20, maximumDelay: 100 }),
  });
  for (let tries = 0; !session.hasLocalEngine; tries++) {
    if (tries > 400) throw new Error('the bundle did not load');
    await sleep(25);
  }
  await session.send({ type: 'onboarding.showSecond' });
  await session.send({ type: 'onboarding.completed' });
  await session.settled();
  if (session.state.top?.feature !== 'home.first') throw new Error(`not on home.first: ${session.state.top?.feature}`);
  // Warm up (the JIT) offline, then measure.
  await run(session, true, Math.min(200, taps), false);
  console.log(`tap_bench: ${taps} taps of home.selectTab per run, ${interval} ms apart, ${latency} ms each way online, ${storeKind} store, node ${process.version}`);
  console.log('from send() to the state listener, ms:');
  for (const offline of [true, false]) {
    const times = await run(session, offline, taps, false);
    console.log(`  ${offline ? 'offline' : 'online '}: p50 ${percentile(times, 50).toFixed(3)}  p90 ${percentile(times, 90).toFixed(3)}  p99 ${percentile(times, 99).toFixed(3)}  max ${times[times.length - 1].toFixed(3)}`);
  }
  for (const offline of [true, false]) {
    stages.clear();
    await run(session, offline, taps, true);
    console.log(`split, ${offline ? 'offline' : 'online'} (µs per tap, inclusive; indented stages are inside machine.tap):`);
    for (const [stage, values] of stages) {
      values.sort((a, b) => a - b);
      console.log(`  ${stage.padEnd(30)} p50 ${percentile(values, 50).toFixed(1).padStart(7)}  p99 ${percentile(values, 99).toFixed(1).padStart(7)}  (${values.length} taps)`);
    }
  }
  const served = await server.request('GET', `/v1/sessions/${session.sessionId}`, { token: session.token });
  if (served.json?.version !== session.state.version || !session.state.equals(session.confirmedState)) {
    throw new Error(`the server is at ${served.json?.version}, the client at ${session.state.version}`);
  }
  console.log(`tap_bench: the server holds all ${served.json.version} versions, the client agrees`);
  await session.close();
} finally {
  await server.dispose();
}
