// SimulatedTransport: FlowSession's requests to a SimulatedServer with seeded faults and short real
// delays, so taps interleave with requests on the wire (Simulation/SimulatedTransport.swift's port).
import { Unreachable } from '../../src/client/index.js';
import { SeededGenerator } from './random.js';

/** @typedef {import('../../src/client/http-transport.js').FlowRequest} FlowRequest */
/** @typedef {import('../../src/client/http-transport.js').FlowAnswer} FlowAnswer */

/** Chances per thousand requests. */
const defaultFaults = { lostRequest: 50, lostAnswer: 50, errorBefore: 30, errorAfter: 30, garbageAfter: 30 };

export class SimulatedTransport {
  /**
   * @param {import('./simulated-server.js').SimulatedServer} server
   * @param {bigint} seed
   */
  constructor(server, seed) {
    this.server = server;
    this.random = new SeededGenerator(seed);
    this.faults = { ...defaultFaults };
    this.killed = false;
    this.failing = false;
    this.requests = 0;
    this.faultsInjected = 0;
  }

  /** The app was killed: nothing it sends from now on reaches the server. */
  kill() {
    this.killed = true;
  }

  /** Every request meets a 500 from a broken node (nothing reaches the server), or not. @param {boolean} on */
  failEverything(on) {
    this.failing = on;
  }

  /** The faults stop. */
  heal() {
    this.faults = { lostRequest: 0, lostAnswer: 0, errorBefore: 0, errorAfter: 0, garbageAfter: 0 };
  }

  /** A short real wait: the next turn of the event loop, or a millisecond. */
  async pause() {
    const delay = this.random.below(400);
    await new Promise((resolve) => (delay < 300 ? setImmediate(resolve) : setTimeout(resolve, 1)));
  }

  /** @param {FlowRequest} request @returns {Promise<FlowAnswer>} */
  async send(request) {
    await this.pause();
    if (this.killed || this.server.down) throw new Unreachable(this.killed ? 'the app was killed' : 'connection refused');
    this.requests += 1;
    const html = (/** @type {number} */ status, /** @type {string} */ text) => ({ status, contentType: 'text/html', body: text });
    if (this.failing) return html(500, '<html>Internal Server Error</html>');
    let roll = this.random.below(1000);
    if (roll < this.faults.lostRequest) return this.fault(new Unreachable('request lost'));
    roll -= this.faults.lostRequest;
    if (roll < this.faults.errorBefore) return this.fault(html(500, '<html>Internal Server Error</html>'));
    const answer = this.server.handle(request);
    await this.pause();
    if (this.killed) throw new Unreachable('the app was killed');
    roll = this.random.below(1000);
    if (roll < this.faults.lostAnswer) return this.fault(new Unreachable('answer lost'));
    roll -= this.faults.lostAnswer;
    if (roll < this.faults.errorAfter) return this.fault(html(502, '<html>Bad Gateway</html>'));
    roll -= this.faults.errorAfter;
    if (roll < this.faults.garbageAfter) return this.fault({ status: answer.status, body: '<html>cut' });
    return answer;
  }

  /** @param {FlowAnswer | Unreachable} outcome @returns {FlowAnswer} */
  fault(outcome) {
    this.faultsInjected += 1;
    if (outcome instanceof Unreachable) throw outcome;
    return outcome;
  }
}

/**
 * A store the killed app can no longer write: the session object keeps running in the test
 * process after a simulated kill, but a killed app writes nothing. It notes every tap a save of
 * this launch held (taken or refused) and whether its last save was refused, which is what a kill
 * may lose: taps no save took, held only by the dead app's memory.
 */
export class KillableStore {
  /** @param {import('../../src/client/session-store.js').SessionStore} base */
  constructor(base) {
    this.base = base;
    this.killed = false;
    /** The keys of every queue this launch asked to keep: every tap it made. @type {Set<string>} */
    this.asked = new Set();
    /** Whether the last save this launch asked for was refused (none taken since). */
    this.refused = false;
  }

  /** Killed: returns whether the last save was refused, so taps made since are only in memory. */
  kill() {
    this.killed = true;
    return this.refused;
  }

  /** @param {import('../../src/client/session-store.js').SessionKey} key */
  load(key) {
    return this.base.load(key);
  }

  /** @param {import('../../src/client/session-store.js').StoredSession} session */
  async save(session) {
    if (this.killed) return;
    for (const item of session.queue) this.asked.add(item.key);
    try {
      await this.base.save(session);
      this.refused = false;
    } catch (error) {
      this.refused = true;
      throw error;
    }
  }

  /** @param {import('../../src/client/session-store.js').SessionKey} key */
  async remove(key) {
    if (!this.killed) await this.base.remove(key);
  }
}

/**
 * The storage under the app's store (`localStorage`'s three methods over a `Map`), the same for
 * every launch: while `full` (stretches the schedule chooses, which outlast a kill as a full disk
 * would) every `setItem` throws as a full `localStorage` does; reads and removals go on.
 */
export class RefusingStorage {
  /** @param {Map<string, string>} file */
  constructor(file) {
    this.file = file;
    this.full = false;
    /** The writes refused so far. */
    this.refusals = 0;
  }

  /** @param {string} key */
  getItem(key) {
    return this.file.get(key) ?? null;
  }

  /** @param {string} key @param {string} value */
  setItem(key, value) {
    if (this.full) {
      this.refusals += 1;
      const error = new Error(`Setting the value of '${key}' exceeded the quota (simulated)`);
      error.name = 'QuotaExceededError';
      throw error;
    }
    this.file.set(key, value);
  }

  /** @param {string} key */
  removeItem(key) {
    this.file.delete(key);
  }
}
