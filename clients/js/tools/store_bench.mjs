#!/usr/bin/env node
// What a long offline queue costs the store (issue 36): a real `flowstack serve` (FLOWSTACK_BIN,
// or the repository's debug build), a FlowSession on the local engine and a KeyValueSessionStore
// over an in-memory map (the stored form written as text, as localStorage keeps it), taken
// offline at home and tapped N times (`home.selectTab`, alternating). Prints the time spent in
// `send()` per thousand taps, the bytes written to the storage per tap (keys and values) and the
// most written by one tap, then reads the store back as the next launch would.
//
//   node clients/js/tools/store_bench.mjs [taps=4000] [--root DIR]
//
// `--root` runs another copy of the package (say, a `git archive` of an earlier commit's
// clients/js) against the same server, for a before/after.

import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, resolve } from 'node:path';

const args = process.argv.slice(2);
const at = args.indexOf('--root');
const root = at >= 0 ? resolve(args.splice(at, 2)[1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
const taps = Number(args[0] ?? 4000);
const load = (/** @type {string} */ path) => import(pathToFileURL(`${root}/${path}`).href);
const engineModule = await load('src/engine/index.js');
const { FlowSession, KeyValueSessionStore, RetryPolicy, SessionKey, localEngine } = await load('src/client/index.js');
const { FlowStackServer } = await import('../test/support/server.js');

/** @type {Map<string, string>} */
const map = new Map();
let bytes = 0;
let writes = 0;
const storage = {
  getItem: (/** @type {string} */ key) => map.get(key) ?? null,
  setItem: (/** @type {string} */ key, /** @type {string} */ value) => { bytes += key.length + value.length; writes += 1; map.set(key, value); },
  removeItem: (/** @type {string} */ key) => { map.delete(key); },
};
const sleep = (/** @type {number} */ ms) => new Promise((done) => setTimeout(done, ms));
const server = await FlowStackServer.start();
try {
  const userId = `store-bench-${process.pid}`;
  const session = await FlowSession.start({
    server: server.url, userId, store: new KeyValueSessionStore(storage), engine: localEngine(engineModule),
    retry: new RetryPolicy({ attempts: 3, initialDelay: 20, maximumDelay: 100 }),
  });
  while (!session.hasLocalEngine) await sleep(25);
  await session.send({ type: 'onboarding.showSecond' });
  await session.send({ type: 'onboarding.completed' });
  await session.settled();
  session.setOffline(true);
  const began = bytes;
  let busy = 0;
  let most = 0;
  const marks = [];
  let markedAt = 0;
  for (let index = 0; index < taps; index += 1) {
    const before = bytes;
    const started = performance.now();
    await session.send({ type: 'home.selectTab', params: { index: (index + 1) % 2 } });
    busy += performance.now() - started;
    most = Math.max(most, bytes - before);
    if ((index + 1) % 1000 === 0) {
      marks.push(`${((busy - markedAt) / 1000).toFixed(2)} s`);
      markedAt = busy;
    }
  }
  const written = bytes - began;
  console.log(`${taps} offline taps: ${(busy / 1000).toFixed(2)} s in send() (each thousand: ${marks.join(', ')}); ` +
    `${(written / taps).toFixed(0)} bytes written per tap, at most ${most} in one; ${writes} writes, ${map.size} keys`);
  const kept = await new KeyValueSessionStore(storage).load(new SessionKey(server.url, userId));
  console.log(`read back as the next launch reads it: ${kept ? kept.queue.length : 0} taps queued (the session holds ${session.pending.length})`);
  await session.close();
} finally {
  await server.dispose();
}
