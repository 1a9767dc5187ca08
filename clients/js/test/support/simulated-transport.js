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
 * process after a simulated kill, but a killed app writes nothing.
 */
export class KillableStore {
  /** @param {import('../../src/client/session-store.js').SessionStore} base */
  constructor(base) {
    this.base = base;
    this.killed = false;
  }

  kill() {
    this.killed = true;
  }

  /** @param {import('../../src/client/session-store.js').SessionKey} key */
  load(key) {
    return this.base.load(key);
  }

  /** @param {import('../../src/client/session-store.js').StoredSession} session */
  async save(session) {
    if (!this.killed) await this.base.save(session);
  }

  /** @param {import('../../src/client/session-store.js').SessionKey} key */
  async remove(key) {
    if (!this.killed) await this.base.remove(key);
  }
}
