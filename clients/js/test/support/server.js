// A real `flowstack serve` on a loopback port for the client's tests, and a fetch that injects faults in front of it.
import { spawn } from 'node:child_process';
import { after, before } from 'node:test';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlowSession, MemorySessionStore, RetryPolicy } from '../../src/client/index.js';

/**
 * The server binary: FLOWSTACK_BIN (scripts/js.sh sets it), else the repository's debug build
 * (`swift build` at its root).
 */
export const binary = process.env.FLOWSTACK_BIN
  ?? fileURLToPath(new URL('../../../../.build/debug/flowstack', import.meta.url));

/** A `flowstack serve --port 0` on a temporary SQLite file, stopped and started again on the same database and port. */
export class FlowStackServer {
  constructor() {
    this.directory = mkdtempSync(join(tmpdir(), 'flowstack-js-client-'));
    this.database = join(this.directory, 'db.sqlite');
    this.port = 0;
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.process = undefined;
    this.starts = 0;
  }

  static async start() {
    const server = new FlowStackServer();
    await server.start();
    return server;
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the server (on the port it had, after a stop) and waits for its "listening" line. */
  async start() {
    if (!existsSync(binary)) throw new Error(`no flowstack binary at ${binary}: build it (swift build) or set FLOWSTACK_BIN`);
    const log = join(this.directory, `serve-${this.starts++}.log`);
    const { openSync } = await import('node:fs');
    const out = openSync(log, 'w');
    const child = spawn(binary, ['serve', '--port', String(this.port), '--db', this.database, '--threads', '2', '--shutdown-grace', '1'], {
      env: { ...process.env, FLOWSTACK_ADMIN_TOKEN: 'test-admin-token-' + '0'.repeat(32), FLOWSTACK_LOG_LEVEL: 'warning' },
      stdio: ['ignore', out, out],
    });
    this.process = child;
    const deadline = Date.now() + 60_000;  // seconds on a loaded machine, not minutes
    while (Date.now() < deadline) {
      const text = readFileSync(log, 'utf8');
      const match = /flowstack listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (match) {
        this.port = Number(match[1]);
        return;
      }
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`flowstack did not start: ${readFileSync(log, 'utf8')}`);
  }

  /** Stops the server (SIGTERM) and waits for it to exit. */
  async stop() {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async dispose() {
    await this.stop();
    rmSync(this.directory, { recursive: true, force: true });
  }

  /**
   * A raw request, as another device (or an operator) would make it.
   * @param {string} method
   * @param {string} path
   * @param {{token?: string, ifMatch?: number, key?: string, body?: unknown}} [options]
   * @returns {Promise<{status: number, json: any}>}
   */
  async request(method, path, options = {}) {
    /** @type {Record<string, string>} */
    const headers = {};
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    if (options.ifMatch !== undefined) headers['If-Match'] = `"${options.ifMatch}"`;
    if (options.key) headers['Idempotency-Key'] = options.key;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(this.url + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  }

  /**
   * The session's action log, every entry.
   * @param {string} sessionId
   * @param {string} token
   * @returns {Promise<any[]>}
   */
  async actionLog(sessionId, token) {
    const entries = [];
    let after = 0;
    for (;;) {
      const { status, json } = await this.request('GET', `/v1/sessions/${sessionId}/actions?after=${after}&limit=1000`, { token });
      if (status !== 200) throw new Error(`action log answered ${status}`);
      entries.push(...json.actions);
      if (json.actions.length === 0 || json.next == null) return entries;
      after = json.actions[json.actions.length - 1].version;
    }
  }
}

/**
 * A fault: which requests it takes (`match` on method and URL), what it does, and how many times.
 * - `fail-before`: fetch rejects, nothing sent (connection refused or cut before the request);
 * - `lose-answer`: the request goes and is handled, then fetch rejects (the answer is lost);
 * - `500-before` / `500-after`: a 500 problem instead of sending / after the server handled it;
 * - `garbage-after`: the server handled it, the client gets a 200 proxy page;
 * - `429-before`: rate limited, with a problem document (and `Retry-After: <retryAfter>` when given);
 * - `delay`: waits `ms` before sending (a slow network, or a request held on the wire);
 * - `hold`: waits until `until` resolves before sending (a request held on the wire as long as the test says).
 * @typedef {{match: (method: string, url: string) => boolean, kind: 'fail-before' | 'lose-answer' | '500-before' | '500-after'
 *   | 'garbage-after' | '429-before' | 'delay' | 'hold', times?: number, ms?: number, until?: Promise<unknown>, retryAfter?: string}} Fault
 */

/**
 * A fetch in front of the real one that injects planned faults and logs every request.
 */
export class FaultyFetch {
  constructor() {
    /** @type {Fault[]} */
    this.faults = [];
    /** @type {Array<{method: string, url: string, headers: Record<string, string>, body?: string, fault?: string, at: number}>} */
    this.log = [];
    /** While true every request fails before it is sent (the network is down). */
    this.down = false;
    this.fetch = this.fetch.bind(this);
  }

  /** @param {Fault} fault */
  plan(fault) {
    this.faults.push({ times: 1, ...fault });
  }

  /**
   * @param {string} url
   * @param {RequestInit} [init]
   * @returns {Promise<Response>}
   */
  async fetch(url, init = {}) {
    const method = init.method ?? 'GET';
    const headers = /** @type {Record<string, string>} */ ({ ...(init.headers ?? {}) });
    const entry = { method, url, headers, body: typeof init.body === 'string' ? init.body : undefined, fault: /** @type {string | undefined} */ (undefined), at: Date.now() };
    this.log.push(entry);
    if (this.down) {
      entry.fault = 'down';
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED (the test took the network down)') });
    }
    const fault = this.faults.find((candidate) => (candidate.times ?? 1) > 0 && candidate.match(method, url));
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      entry.fault = fault.kind;
    }
    const problem = (/** @type {number} */ status) => new Response(JSON.stringify({ type: 'urn:test', title: 'injected', status }),
      { status, headers: { 'Content-Type': 'application/problem+json', ...(fault?.retryAfter !== undefined ? { 'Retry-After': fault.retryAfter } : {}) } });
    switch (fault?.kind) {
      case 'fail-before': throw new TypeError('fetch failed', { cause: new Error('socket hang up (injected)') });
      case '500-before': return problem(500);
      case '429-before': return problem(429);
      case 'delay': await new Promise((resolve) => setTimeout(resolve, fault.ms ?? 100)); break;
      case 'hold': await fault.until; break;
      default: break;
    }
    const response = await fetch(url, init);
    if (fault?.kind === 'lose-answer' || fault?.kind === '500-after' || fault?.kind === 'garbage-after') {
      await response.text();  // the server handled it in full
      if (fault.kind === 'lose-answer') throw new TypeError('fetch failed', { cause: new Error('other side closed (injected after the answer)') });
      if (fault.kind === '500-after') return problem(500);
      return new Response('<html><body>502 Bad Gateway</body></html>', { status: 200, headers: { 'Content-Type': 'text/html' } });
    }
    return response;
  }

  /**
   * The logged requests whose method and path (without the query) match.
   * @param {string} method
   * @param {RegExp} path
   */
  requests(method, path) {
    return this.log.filter((entry) => entry.method === method && path.test(new URL(entry.url).pathname));
  }
}

/**
 * Waits until `check` holds, polling; fails with `what` after `ms`.
 * @param {() => boolean | Promise<boolean>} check
 * @param {string} what
 * @param {number} [ms]
 */
export async function eventually(check, what, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The client tests' retry policy: three tries, short pauses. */
export const testRetry = new RetryPolicy({ attempts: 3, initialDelay: 20, maximumDelay: 100 });

/**
 * The server of a test file: started before its first test, stopped and removed after its last
 * (a test may stop and start it in between).
 * @returns {FlowStackServer}
 */
export function serverForTests() {
  const server = new FlowStackServer();
  before(() => server.start());
  after(() => server.dispose());
  return server;
}

let users = 0;

/**
 * A session on `server` for a new user (`<prefix>-<pid>-<n>`, unless `userId` is given), over a
 * `FaultyFetch` (`network`) and a memory store unless given, with its events collected in
 * `events`. The other members of `options` go to the configuration as they are.
 * @param {FlowStackServer} server
 * @param {Partial<import('../../src/client/flow-session.js').Configuration> & {prefix?: string, network?: FaultyFetch}} [options]
 */
export async function startSession(server, options = {}) {
  const { prefix = 'user', network = new FaultyFetch(), store = new MemorySessionStore(), userId = `${prefix}-${process.pid}-${++users}`, ...configuration } = options;
  const session = await FlowSession.start({ server: server.url, userId, store, retry: testRetry, fetch: network.fetch, timeout: 5000, ...configuration });
  /** @type {import('../../src/client/index.js').ClientEvent[]} */
  const events = [];
  session.subscribe((event) => events.push(event));
  return { session, network, store, userId, events };
}
