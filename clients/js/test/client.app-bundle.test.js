// The app's bundle (tools/app-entry.js: the README's example, bundled, tree-shaken and minified by
// esbuild as scripts/js.sh measures it) against a real `flowstack serve`: taps on the local engine
// online and offline, a refusal, and a launch from the store while the server is down. Whatever
// the bundler left out, the app did not need.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { eventually, FaultyFetch, serverForTests, testRetry } from './support/server.js';

const server = serverForTests();
const directory = mkdtempSync(join(tmpdir(), 'flowstack-js-app-bundle-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** The app's entry bundled as scripts/js.sh bundles it, imported. */
async function bundledApp() {
  const entry = fileURLToPath(new URL('../tools/app-entry.js', import.meta.url));
  const output = join(directory, 'app.mjs');
  const built = spawnSync('esbuild', [entry, '--bundle', '--minify', '--format=esm', '--log-level=warning', `--outfile=${output}`], { encoding: 'utf8' });
  if (built.error) throw new Error(`esbuild (which scripts/js.sh needs too) did not run: ${built.error.message}`);
  assert.equal(built.status, 0, built.stderr);
  return /** @type {typeof import('../tools/app-entry.js')} */ (await import(pathToFileURL(output).href));
}

/**
 * The app that loads the engine as a chunk of its own (tools/app-entry-lazy.js), bundled with code
 * splitting as scripts/js.sh bundles it, imported; its engine chunk is loaded by `import()`.
 */
async function bundledLazyApp() {
  const entry = fileURLToPath(new URL('../tools/app-entry-lazy.js', import.meta.url));
  const output = join(directory, 'lazy');
  const built = spawnSync('esbuild', [entry, '--bundle', '--splitting', '--minify', '--format=esm', '--log-level=warning', `--outdir=${output}`,
    '--out-extension:.js=.mjs'], { encoding: 'utf8' });
  if (built.error) throw new Error(`esbuild (which scripts/js.sh needs too) did not run: ${built.error.message}`);
  assert.equal(built.status, 0, built.stderr);
  return /** @type {typeof import('../tools/app-entry-lazy.js')} */ (await import(pathToFileURL(join(output, 'app-entry-lazy.mjs')).href));
}

/** localStorage's interface over a Map. */
class MapStorage {
  constructor() { this.map = new Map(); }
  /** @param {string} key */
  getItem(key) { return this.map.get(key) ?? null; }
  /** @param {string} key @param {string} value */
  setItem(key, value) { this.map.set(key, value); }
  /** @param {string} key */
  removeItem(key) { this.map.delete(key); }
}

test('the app\'s bundle draws taps on the engine online and offline, refuses what the engine refuses, and starts again from its store with the server down', async () => {
  const app = await bundledApp();
  const storage = new MapStorage();
  const userId = `app-bundle-${process.pid}`;
  const network = new FaultyFetch();
  const configuration = { server: server.url, userId, retry: testRetry, engine: app.local, fetch: network.fetch };
  const session = await app.FlowSession.start({ ...configuration, store: new app.KeyValueSessionStore(storage) });
  /** @type {string[]} */
  const events = [];
  session.subscribe((event) => events.push(event.type));
  await eventually(() => session.hasLocalEngine, 'the bundle loaded');
  const second = await session.send({ type: 'onboarding.showSecond' });
  assert.equal(second.top?.feature, 'onboarding.second');
  await assert.rejects(session.send({ type: 'home.selectTab', params: { index: 1 } }), (/** @type {any} */ error) => error.status === 422 || error.status === 409);
  await session.settled();
  session.setOffline(true);
  const home = await session.send({ type: 'onboarding.completed' });
  const tab = await session.send({ type: 'home.selectTab', params: { index: 1 } });
  assert.deepEqual([home.top?.feature, tab.top?.feature], ['home.first', 'home.second']);
  assert.equal(session.pendingCount, 2, 'drawn offline, queued');
  session.setOffline(false);
  await session.settled();
  assert.ok(session.state.equals(session.confirmedState), 'the server confirmed the engine\'s states');
  const served = await server.request('GET', `/v1/sessions/${session.sessionId}`, { token: session.token });
  assert.deepEqual(session.state.document, served.json, 'byte for byte the server\'s document');
  session.setOffline(true);
  const back = await session.send({ type: 'home.selectTab', params: { index: 0 } });
  await session.close();
  await server.stop();
  try {
    const again = await app.FlowSession.start({ ...configuration, fetch: new FaultyFetch().fetch, store: new app.KeyValueSessionStore(storage) });
    after(() => again.close());
    assert.ok(again.isOffline && again.hasLocalEngine, 'offline, on the engine the store kept');
    assert.ok(again.state.equals(back));
    const modal = await again.send({ type: 'home.presentModal', params: { content: { title: 'hi' } } });
    assert.equal(modal.version, back.version + 1);
    await server.start();
    await eventually(() => again.pendingCount === 0, 'sent when the server is back', 15000);
    await again.settled();
    assert.ok(again.state.equals(again.confirmedState));
    const log = await server.actionLog(again.sessionId, again.token);
    assert.deepEqual(log.map((entry) => entry.type), ['onboarding.showSecond', 'onboarding.completed', 'home.selectTab', 'home.selectTab', 'home.presentModal']);
    await again.close();
  } finally {
    if (!server.process) await server.start();
  }
  assert.equal(events.filter((type) => type === 'corrected').length, 0);
});

test('the app that loads its engine as a second chunk: the session starts on the first chunk, then draws on the engine once the chunk is in; a launch from the store waits for it', async () => {
  const app = await bundledLazyApp();
  const storage = new MapStorage();
  const userId = `app-lazy-${process.pid}`;
  const configuration = { server: server.url, userId, retry: testRetry };
  const session = await app.FlowSession.start({ ...configuration, engine: app.local(), fetch: new FaultyFetch().fetch, store: new app.KeyValueSessionStore(storage) });
  await eventually(() => session.hasLocalEngine, 'the engine chunk loaded and ran the bundle');
  session.setOffline(true);
  const second = await session.send({ type: 'onboarding.showSecond' });
  const home = await session.send({ type: 'onboarding.completed' });
  const tab = await session.send({ type: 'home.selectTab', params: { index: 1 } });
  assert.deepEqual([second.top?.feature, home.top?.feature, tab.top?.feature], ['onboarding.second', 'home.first', 'home.second']);
  await session.close();
  await server.stop();
  try {
    const again = await app.FlowSession.start({ ...configuration, engine: app.local(), fetch: new FaultyFetch().fetch, store: new app.KeyValueSessionStore(storage) });
    after(() => again.close());
    assert.ok(again.isOffline && again.hasLocalEngine, 'offline, on the engine chunk and the bundle the store kept');
    assert.ok(again.state.equals(tab));
    await server.start();
    await eventually(() => again.pendingCount === 0, 'sent when the server is back', 15000);
    await again.settled();
    assert.ok(again.state.equals(again.confirmedState));
    const served = await server.request('GET', `/v1/sessions/${again.sessionId}`, { token: again.token });
    assert.deepEqual(again.state.document, served.json, 'byte for byte the server\'s document');
    await again.close();
  } finally {
    if (!server.process) await server.start();
  }
});
