// SimulatedServer: FlowStack's session routes as the client simulation needs them, in memory, over
// an engine (src/engine's, as Tests/FlowStackClientTests/Simulation/SimulatedServer.swift runs over
// the Swift one, or the test double): If-Match, Idempotency-Key replays, batches that stop at the
// first refusal, predictions, bundles. Its answers have the real server's shapes (state documents
// byte for byte with the real engine, problem documents with status and code);
// client.session.test.js and client.engine.test.js check the client against the real server.
import { DoubleEngine } from './engine-double.js';

/**
 * The engine a simulated server runs, at one version of one session.
 * @typedef {{readonly version: number, applying(action: any): {next: SimEngine}, document(): string}} SimEngine
 */

/**
 * How the simulated server makes sessions and writes what the engine knows: a session's start
 * (at home once the user finished onboarding), a state document with or without predictions, and
 * the bundle of a session at its version.
 * @typedef {{start(sessionId: string, userId: string, onboarded: boolean): {state: SimEngine, bundle: string},
 *   body(state: SimEngine, predict: boolean): string, bundle(state: SimEngine, from: string): string}} World
 */

/** The engine double's world: sessions of the double, its own bundles and predictions. @type {World} */
export const doubleWorld = {
  start(sessionId, userId, onboarded) {
    const state = new DoubleEngine({ sessionId, userId, home: onboarded, handledBy: null });
    return { state, bundle: state.bundle() };
  },
  body: (state, predict) => body(/** @type {DoubleEngine} */ (state), predict),
  bundle: (state) => /** @type {DoubleEngine} */ (state).bundle(),
};

/** @typedef {import('../../src/client/http-transport.js').FlowRequest} FlowRequest */
/** @typedef {import('../../src/client/http-transport.js').FlowAnswer} FlowAnswer */

/** The action as compared for a reused key. @param {any} action */
const canonical = (action) => JSON.stringify({ type: action.type, from: action.from ?? null, params: action.params ?? {}, interactive: Boolean(action.interactive) });

export class SimulatedServer {
  /** @param {World} [world] */
  constructor(world = doubleWorld) {
    this.world = world;
    /**
     * Each session: its engine state, the bundle it started from, and every version's state document (index = version).
     * @type {Map<string, {id: string, token: string, userId: string, state: SimEngine, start: string, alive: boolean, documents: string[]}>}
     */
    this.sessions = new Map();
    /** @type {Array<{session: string, version: number, key?: string, type: string}>} */
    this.log = [];
    /** Stored answers by session and key. @type {Map<string, Map<string, {action: string, version: number, body: string}>>} */
    this.answers = new Map();
    /** @type {Set<string>} */
    this.onboarded = new Set();
    this.nextId = 1;
    /** While down, every request finds no server (the transport says so). */
    this.down = false;
  }

  /** Every key stored, with how many times, over every session (`all`) and over those still there (`live`). */
  keyCounts() {
    /** @type {Map<string, number>} */
    const all = new Map();
    /** @type {Map<string, number>} */
    const live = new Map();
    for (const entry of this.log) {
      if (entry.key === undefined) continue;
      all.set(entry.key, (all.get(entry.key) ?? 0) + 1);
      if (this.sessions.get(entry.session)?.alive) live.set(entry.key, (live.get(entry.key) ?? 0) + 1);
    }
    return { all, live };
  }

  /**
   * The state document a session had at a version, if it had one.
   * @param {string} id
   * @param {number} version
   */
  document(id, version) {
    return this.sessions.get(id)?.documents[version];
  }

  /**
   * Another device posts one of the actions the session accepts now (no key, no If-Match).
   * @param {string} id
   * @param {import('./random.js').SeededGenerator} random
   */
  actAsAnotherDevice(id, random) {
    const session = this.sessions.get(id);
    if (!session || !session.alive) return false;
    const available = /** @type {any} */ (session.state).predictions();
    if (available.length === 0) return false;
    const pick = available[random.below(available.length)];
    return this.commit(pick.action, undefined, session) === undefined;
  }

  /**
   * The session is deleted (support ended it, or it expired): its routes answer 404.
   * @param {string} id
   */
  delete(id) {
    const session = this.sessions.get(id);
    if (session) session.alive = false;
  }

  /**
   * Answers one request as FlowStack would.
   * @param {FlowRequest} request
   * @returns {FlowAnswer}
   */
  handle(request) {
    const parts = request.path.split('/').filter((part) => part !== '');
    const predict = request.query?.includes('predict=true') ?? false;
    const headers = request.headers ?? {};
    if (request.method === 'GET' && request.path === '/healthz') return { status: 200, body: 'ok' };
    if (request.method === 'POST' && parts.join('/') === 'v1/sessions') return this.create(request.body ?? '', predict);
    if (parts.length < 3 || parts[0] !== 'v1' || parts[1] !== 'sessions') return problem(404, 'not-found', 'no route');
    const id = decodeURIComponent(parts[2]);
    const session = this.sessions.get(id);
    if (!session || !session.alive) return problem(404, 'not-found', `There is no session ${id}.`);
    if (headers.Authorization !== `Bearer ${session.token}`) return problem(401, 'unauthorized', 'wrong token');
    const rest = parts.slice(3).join('/');
    if (request.method === 'GET' && rest === '') return { status: 200, body: this.world.body(session.state, predict) };
    if (request.method === 'GET' && rest === 'bundle') {
      const tag = `"${session.state.version}"`;
      if (headers['If-None-Match'] === tag) return { status: 304, etag: tag, body: '' };
      return { status: 200, etag: tag, body: this.world.bundle(session.state, session.start) };
    }
    if (request.method === 'POST' && rest === 'actions') {
      let action;
      try {
        action = JSON.parse(request.body ?? '');
      } catch {
        return problem(400, 'malformed', 'not an action');
      }
      const match = /^"(\d+)"$/.exec(headers['If-Match'] ?? '');
      return this.apply(action, headers['Idempotency-Key'], match ? Number(match[1]) : undefined, session, predict);
    }
    if (request.method === 'POST' && rest === 'actions/batch') {
      let items;
      try {
        items = JSON.parse(request.body ?? '').actions;
      } catch {
        return problem(400, 'malformed', 'not a batch');
      }
      if (!Array.isArray(items) || items.length > 100) return problem(400, 'malformed', 'not a batch');
      return this.batch(items, session);
    }
    return problem(404, 'not-found', 'no route');
  }

  /** @param {string} text @param {boolean} predict @returns {FlowAnswer} */
  create(text, predict) {
    let userId;
    try {
      userId = JSON.parse(text).userId;
    } catch {
      userId = undefined;
    }
    if (typeof userId !== 'string') return problem(400, 'malformed', 'no userId');
    const id = `s_${this.nextId}`;
    const token = `t_${this.nextId}`;
    this.nextId += 1;
    const { state, bundle } = this.world.start(id, userId, this.onboarded.has(userId));
    this.sessions.set(id, { id, token, userId, state, start: bundle, alive: true, documents: [state.document()] });
    return { status: 201, body: `{"session":{"id":${JSON.stringify(id)},"token":${JSON.stringify(token)}},"state":${this.world.body(state, predict)}}` };
  }

  /**
   * One action under the rules of `POST …/actions`: a known key replays its answer (or is refused
   * when it came with another action), then If-Match, then the engine.
   * @param {any} action
   * @param {string | undefined} key
   * @param {number | undefined} ifMatch
   * @param {{id: string, state: SimEngine, userId: string, documents: string[]}} session
   * @param {boolean} predict
   * @returns {FlowAnswer}
   */
  apply(action, key, ifMatch, session, predict) {
    const stored = key === undefined ? undefined : this.answers.get(session.id)?.get(key);
    if (stored) {
      if (stored.action !== canonical(action)) return problem(422, 'idempotency-key-reused', `key ${key} was used for another action`);
      return { status: 200, body: stored.body };
    }
    if (ifMatch !== undefined && ifMatch !== session.state.version) {
      return problem(412, 'version-mismatch', `If-Match asks for ${ifMatch}, the session is at ${session.state.version}`);
    }
    const error = this.commit(action, key, session);
    if (error) return problem(error.status, error.code, error.message);
    const answer = this.world.body(session.state, predict);
    if (key !== undefined) this.remember(session.id, key, action, session.state.version, answer);
    return { status: 200, body: answer };
  }

  /** @param {string} id @param {string} key @param {any} action @param {number} version @param {string} answer */
  remember(id, key, action, version, answer) {
    let answers = this.answers.get(id);
    if (!answers) this.answers.set(id, answers = new Map());
    answers.set(key, { action: canonical(action), version, body: answer });
  }

  /**
   * @param {any} action
   * @param {string | undefined} key
   * @param {{id: string, state: SimEngine, userId: string, documents: string[]}} session
   * @returns {{status: number, code: string, message: string} | undefined}
   */
  commit(action, key, session) {
    try {
      const { next } = session.state.applying(action);
      session.state = next;
      session.documents.push(next.document());
      if (JSON.parse(next.document()).screens.some((/** @type {{feature: string}} */ screen) => screen.feature.startsWith('home.'))) this.onboarded.add(session.userId);
      /** @type {{session: string, version: number, key?: string, type: string}} */
      const entry = { session: session.id, version: next.version, type: action.type };
      if (key !== undefined) entry.key = key;
      this.log.push(entry);
      return undefined;
    } catch (error) {
      const refusal = /** @type {{status: number, code: string, message: string}} */ (error);
      return { status: refusal.status, code: refusal.code, message: refusal.message };
    }
  }

  /**
   * `POST …/actions/batch`: each item as if posted with its key and version, in order, stopping at
   * the first refusal.
   * @param {any[]} items
   * @param {{id: string, state: SimEngine, userId: string, documents: string[]}} session
   * @returns {FlowAnswer}
   */
  batch(items, session) {
    /** @type {any[]} */
    const results = [];
    /** @type {any} */
    let refused = null;
    let applied = 0;
    let skipped = 0;
    for (const [index, item] of items.entries()) {
      const { key, version, action } = item ?? {};
      if (typeof key !== 'string' || typeof version !== 'number' || typeof action?.type !== 'string') return problem(400, 'malformed', `item ${index} is malformed`);
      if (refused !== null) {
        results.push({ key, status: 'notApplied' });
        continue;
      }
      const stored = this.answers.get(session.id)?.get(key);
      if (stored) {
        if (stored.action === canonical(action)) {
          skipped += 1;
          results.push({ key, status: 'skipped', version: stored.version });
        } else {
          refused = problemJSON(422, 'idempotency-key-reused', `key ${key} was used for another action`);
          results.push({ key, status: 'refused' });
        }
        continue;
      }
      if (version !== session.state.version) {
        refused = problemJSON(412, 'version-mismatch', `item ${index} was made on ${version}, the session is at ${session.state.version}`);
        results.push({ key, status: 'refused' });
        continue;
      }
      const error = this.commit(action, key, session);
      if (error) {
        refused = problemJSON(error.status, error.code, error.message);
        results.push({ key, status: 'refused' });
        continue;
      }
      applied += 1;
      this.remember(session.id, key, action, session.state.version, this.world.body(session.state, false));
      results.push({ key, status: 'applied', version: session.state.version });
    }
    return { status: 200, body: `{"applied":${applied},"skipped":${skipped},"results":${JSON.stringify(results)},"refused":${JSON.stringify(refused)},"state":${session.state.document()}}` };
  }
}

/**
 * A state document, with `predictions` (their `from` the screen on top) when asked.
 * @param {DoubleEngine} state
 * @param {boolean} predict
 */
export function body(state, predict) {
  const document = state.document();
  if (!predict) return document;
  const top = JSON.parse(document).top?.id;
  const predictions = state.predictions().map((p) => `{"action":${JSON.stringify({ ...p.action, from: top })},"state":${p.next.document()}}`);
  return document.slice(0, -1) + `,"predictions":[${predictions.join(',')}]}`;
}

/** @param {number} status @param {string} code @param {string} detail */
function problemJSON(status, code, detail) {
  return { type: `https://flowstack.dev/problems/${code}`, title: code, status, detail, code };
}

/** @param {number} status @param {string} code @param {string} detail @returns {FlowAnswer} */
function problem(status, code, detail) {
  return { status, contentType: 'application/problem+json', body: JSON.stringify(problemJSON(status, code, detail)) };
}
