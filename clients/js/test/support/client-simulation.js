// ClientSimulation: one seeded schedule of a user, a network and a server, run on ClientMachine
// (Tests/FlowStackClientTests/Simulation/ClientSimulation.swift's port).
//
// Everything the client meets (taps, the order in which requests reach the server and answers come
// back, lost requests and answers, 500s before and after a commit, bodies that are not JSON, the
// network going down, the app killed at any step and started again from what it kept, another
// device acting, the session deleted) is drawn from one seeded generator, so a failing seed replays
// exactly: nothing here waits on a clock. The client is the real ClientMachine and its engine; the
// server is SimulatedServer, that engine behind FlowStack's rules. After each schedule the client's
// contract is checked:
// - every tap the user made is in the server's log exactly once, or was reported to the app as not
//   taken (a correction or a restart naming it), and never both (a tap stored on a session deleted
//   later went with that session's log; it may be reported with the restart or not);
// - every state reported confirmed is one the server stored at that version;
// - once the faults stop, the client settles: nothing queued, and it shows the server's state;
// - what the client keeps (its store) never loses a queued tap across a kill.
import { ClientMachine, NavigationState, RetryPolicy, SessionRequests } from '../../src/client/index.js';
import { SeededGenerator } from './random.js';
import { SimulatedServer } from './simulated-server.js';

/** @typedef {import('../../src/client/index.js').ClientEvent} ClientEvent */
/** @typedef {import('../../src/client/client-machine.js').Command} Command */
/** @typedef {import('../../src/client/client-machine.js').Reply} Reply */
/** @typedef {import('../../src/client/navigation-state.js').FlowAction} FlowAction */
/** @typedef {import('../../src/client/client-event.js').QueuedAction} QueuedAction */

/**
 * Chances per thousand of each fault (drawn per request or per step), the taps over the schedule,
 * and what the client runs on.
 * @typedef {{taps: [number, number], usesBundle: boolean, usesPredictions: boolean, lostRequest: number, lostAnswer: number,
 *   serverErrorBefore: number, serverErrorAfter: number, garbageAfter: number, networkFlap: number, kill: number,
 *   otherDevice: number, deleteSession: number, tapRate: number, offlineTaps: number}} SimulationOptions
 */

/** @type {SimulationOptions} */
export const standardOptions = Object.freeze({
  taps: [5, 40], usesBundle: true, usesPredictions: true, lostRequest: 40, lostAnswer: 40, serverErrorBefore: 25, serverErrorAfter: 25,
  garbageAfter: 25, networkFlap: 15, kill: 15, otherDevice: 10, deleteSession: 3, tapRate: 400, offlineTaps: 0,
});

/** The sample app's actions, some of which will not apply where they are tapped. @type {FlowAction[]} */
const vocabulary = [
  { type: 'onboarding.showSecond' }, { type: 'onboarding.completed' }, { type: 'onboarding.returnToFirst' }, { type: 'back' },
  { type: 'home.selectTab', params: { index: 1 } }, { type: 'home.selectTab', params: { index: 0 } },
  { type: 'home.presentModal', params: { content: 'Hi' } }, { type: 'modal.dismiss' },
];

/** @param {string} feature @param {string} type */
function offers(feature, type) {
  switch (feature) {
    case 'onboarding.first': return type === 'onboarding.showSecond';
    case 'onboarding.second': return ['onboarding.completed', 'onboarding.returnToFirst', 'back'].includes(type);
    case 'home.first': case 'home.second': return type.startsWith('home.');
    case 'modal': return type === 'modal.dismiss' || type === 'back';
    default: return type === 'back';
  }
}

export class ClientSimulation {
  /**
   * @param {number} seed
   * @param {import('./simulated-server.js').World} world
   * @param {Partial<SimulationOptions>} [options]
   */
  constructor(seed, world, options = {}) {
    this.seed = seed;
    /** @type {SimulationOptions} */
    this.options = { ...standardOptions, ...options };
    this.random = new SeededGenerator(seed);
    this.server = new SimulatedServer(world);
    this.retry = new RetryPolicy({ attempts: 3, initialDelay: 1, maximumDelay: 4 });
    this.report = {
      seed, taps: 0, faults: 0, kills: 0, steps: 0, stored: 0, reported: 0,
      /** Taps reported not taken, by why. @type {Record<string, number>} */ reasons: {},
      /** @type {string[]} */ failures: [], /** @type {string[]} */ trace: [],
    };
    const [low, high] = this.options.taps;
    this.targetTaps = low + this.random.below(high - low + 1);
    const created = JSON.parse(this.server.handle({ method: 'POST', path: '/v1/sessions', query: 'predict=true', body: '{"userId":"ada"}' }).body);
    this.sessionId = /** @type {string} */ (created.session.id);
    this.token = /** @type {string} */ (created.session.token);
    this.machine = new ClientMachine(NavigationState.fromJSON(created.state), { retry: this.retry });
    /** What the app's store holds. @type {{sessionId: string, token: string, confirmed: NavigationState, bundle: any, queue: QueuedAction[]}} */
    this.kept = { sessionId: this.sessionId, token: this.token, confirmed: this.machine.confirmed, bundle: undefined, queue: [] };
    /** The request on the wire: its command, and the answer once the server has handled it. @type {{command: Command, request: import('../../src/client/http-transport.js').FlowRequest, answer?: import('../../src/client/http-transport.js').FlowAnswer} | undefined} */
    this.wire = undefined;
    this.networkDown = false;
    /** @type {Map<string, FlowAction>} */
    this.made = new Map();
    /** @type {Map<string, string>} */
    this.reportedKeys = new Map();
    /** @type {NavigationState[]} */
    this.confirmedStates = [];
    this.nextKey = 1;
    this.offlineUntilTap = this.options.offlineTaps;
    if (this.options.usesBundle) this.fetchBundle();
    if (this.offlineUntilTap > 0) {
      // The app was online long enough to load its bundle, then the network went.
      this.networkDown = true;
      this.targetTaps = Math.max(this.targetTaps, this.offlineUntilTap);
    }
    this.keep();
  }

  /** @param {number} perThousand */
  roll(perThousand) {
    return this.random.below(1000) < perThousand;
  }

  /** @param {number} count */
  pick(count) {
    return this.random.below(Math.max(1, count));
  }

  /** @param {string} line */
  note(line) {
    this.report.trace.push(`${this.report.steps}: ${line}`);
    if (this.report.trace.length > 200) this.report.trace.splice(0, 100);
  }

  /** Runs the schedule, then lets the client settle with the faults gone, and checks. */
  run() {
    let idle = 0;
    while (this.report.taps < this.targetTaps || idle < 3) {
      this.report.steps += 1;
      if (this.report.steps > 20000) {
        this.report.failures.push('the schedule did not end');
        break;
      }
      if (this.report.taps < this.targetTaps && this.roll(this.options.tapRate)) {
        this.tap();
        idle = 0;
        continue;
      }
      if (this.roll(this.options.kill)) {
        this.kill();
        continue;
      }
      if (this.roll(this.options.networkFlap) && this.report.taps >= this.offlineUntilTap) {
        this.networkDown = !this.networkDown;
        this.note(this.networkDown ? 'network down' : 'network up');
        this.report.faults += 1;
      }
      if (this.roll(this.options.otherDevice)) {
        if (this.server.actAsAnotherDevice(this.sessionId, this.random)) this.note('another device acted');
      }
      if (this.roll(this.options.deleteSession)) {
        this.server.delete(this.sessionId);
        this.note('the session was deleted on the server');
      }
      if (this.roll(200)) this.streamEvent();
      if (!this.advance()) idle += 1;
      else idle = 0;
    }
    this.settle();
    this.check();
    return this.report;
  }

  /**
   * The user taps: one of the actions the screen shown offers (from the engine when there is
   * one), or, now and then or without an engine, one of the sample app's actions that may not apply.
   */
  tap() {
    // A tap that waits shows nothing new: the user waits for it before tapping again (offline, the
    // app was told it cannot be shown yet, and the user goes on).
    if (!this.machine.offline && this.machine.queue.some((item) => item.expected === undefined)) return;
    const action = this.chooseAction();
    const key = `k${this.nextKey++}`;
    let result;
    try {
      result = this.machine.tap(action, key);
    } catch {
      this.note(`tap ${action.type} refused by the local engine`);
      return;
    }
    this.made.set(key, action);
    this.report.taps += 1;
    this.note(result.kind === 'shown' ? `tap ${key} ${action.type} shown v${result.state.version} ${result.state.top?.feature}` : `tap ${key} ${action.type} waits`);
    if (this.report.taps >= this.offlineUntilTap && this.offlineUntilTap > 0 && this.networkDown) {
      this.networkDown = false;
      this.offlineUntilTap = 0;
      this.note('network up after the offline taps');
    }
    this.keep();
  }

  /** @returns {FlowAction} */
  chooseAction() {
    const engine = /** @type {any} */ (this.machine.engine);
    if (engine && !this.roll(100) && typeof engine.availableActions === 'function') {
      const available = engine.availableActions().filter((/** @type {{type: string}} */ entry) => !entry.type.startsWith('interaction.') && entry.type !== 'link');
      if (available.length > 0) {
        const entry = available[this.pick(available.length)];
        const params = this.sampleParams(entry);
        return Object.keys(params).length > 0 ? { type: entry.type, params } : { type: entry.type };
      }
    }
    const machine = this.machine;
    if (!machine.engine && machine.shown.equals(machine.confirmed) && machine.predictions.length > 0 && !this.roll(200)) {
      // What the app lists from the last answer's predictions.
      return machine.predictions[this.pick(machine.predictions.length)].action;
    }
    const top = machine.shown.top;
    if (!this.roll(100) && top) {
      // What the screen shown offers in the sample app, from its feature.
      const offered = vocabulary.filter((action) => offers(top.feature, action.type));
      if (offered.length > 0) return offered[this.pick(offered.length)];
    }
    return vocabulary[this.pick(vocabulary.length)];
  }

  /** @param {{params: Array<{name: string, type: string, required: boolean}>}} entry */
  sampleParams(entry) {
    /** @type {Record<string, any>} */
    const params = {};
    for (const param of entry.params) {
      if (!param.required) continue;
      if (param.name === 'index') params.index = this.machine.shown.top?.feature === 'home.first' ? 1 : 0;
      else if (param.type === 'integer') params[param.name] = 1;
      else if (param.type === 'number') params[param.name] = 0.5;
      else if (param.type === 'boolean') params[param.name] = true;
      else if (param.type === 'object') params[param.name] = { line1: '1 Main St', country: 'US' };
      else if (param.type === 'array') params[param.name] = [];
      else params[param.name] = 'sample';
    }
    return params;
  }

  /**
   * Moves the network one step: sends the next command, has the server handle what is on the
   * wire, or brings its answer back, each with its faults. False when there was nothing to do.
   */
  advance() {
    const machine = this.machine;
    if (machine.offline) {
      // The driver probes /healthz; it answers once the network is up.
      if (!this.networkDown) {
        this.deliver(machine.reachable());
        this.note('probe answered: online');
        return true;
      }
      return false;
    }
    const current = this.wire;
    if (!current) {
      const command = machine.nextCommand();
      if (!command) {
        if (this.options.usesBundle && machine.needsBundle && machine.queue.every((item) => item.expected === undefined)) return this.fetchBundle();
        return false;
      }
      if (command.kind === 'pause') {
        this.note(`pause ${command.ms}`);
      } else if (command.kind === 'create') {
        this.wire = { command, request: { method: 'POST', path: '/v1/sessions', query: 'predict=true', body: '{"userId":"ada"}' } };
        this.note('create a new session');
      } else {
        this.wire = { command, request: this.request(command) };
        this.note(`send ${describe(command)}`);
      }
      return true;
    }
    if (!current.answer) {
      // The request reaches the server, or is lost on the way, or meets a 500 before anything commits.
      if (this.networkDown || this.roll(this.options.lostRequest)) {
        this.report.faults += 1;
        this.note('request lost');
        this.reply({ noAnswer: 'request lost' });
      } else if (this.roll(this.options.serverErrorBefore)) {
        this.report.faults += 1;
        this.note('500 before commit');
        this.reply({ status: 500, body: '<html><body>Internal Server Error</body></html>' });
      } else {
        current.answer = this.server.handle(current.request);
        this.note(`server handled it: ${current.answer.status}`);
      }
      return true;
    }
    // The answer comes back, or is lost, or is replaced by a 500 or a body that is not JSON.
    const answer = current.answer;
    if (this.networkDown || this.roll(this.options.lostAnswer)) {
      this.report.faults += 1;
      this.note('answer lost after the server handled it');
      this.reply({ noAnswer: 'answer lost' });
    } else if (this.roll(this.options.serverErrorAfter)) {
      this.report.faults += 1;
      this.note('500 after the server handled it');
      this.reply({ status: 500, body: '{"oops":true}' });
    } else if (this.roll(this.options.garbageAfter)) {
      this.report.faults += 1;
      this.note('garbage after the server handled it');
      this.reply({ status: 200, body: '<html>proxy</html>' });
    } else {
      this.reply({ status: answer.status, body: answer.body });
    }
    return true;
  }

  /** @param {Reply} reply */
  reply(reply) {
    const current = this.wire;
    if (!current) return;
    this.wire = undefined;
    if (current.command.kind === 'create') {
      let made;
      try {
        const json = 'status' in reply && reply.status === 201 ? JSON.parse(reply.body) : undefined;
        if (json && typeof json.session?.id === 'string' && typeof json.session?.token === 'string') {
          made = { id: json.session.id, token: json.session.token, state: NavigationState.fromJSON(json.state) };
        }
      } catch {
        made = undefined;
      }
      if (!made) {
        this.deliver(this.machine.createFailed(JSON.stringify(reply).slice(0, 80)));
        return;
      }
      const old = this.sessionId;
      this.sessionId = made.id;
      this.token = made.token;
      this.deliver(this.machine.restarted(made.state, { oldSession: old }));
      if (this.options.usesBundle) this.fetchBundle();
      this.keep();
      return;
    }
    this.deliver(this.machine.handle(reply, current.command));
  }

  /**
   * The request of a command, built as FlowSession builds it.
   * @param {Command} command
   */
  request(command) {
    const requests = new SessionRequests(this.sessionId, this.token);
    if (command.kind === 'post') return requests.post(command.item, this.machine.engine === undefined && this.options.usesPredictions);
    if (command.kind === 'batch') return requests.batch(command.items);
    return requests.reload();
  }

  /** The bundle, as the driver fetches it when the engine is gone: the server's session state. */
  fetchBundle() {
    const session = this.server.sessions.get(this.sessionId);
    if (this.networkDown || !session || !session.alive || this.roll(this.options.lostAnswer)) return false;
    const before = this.machine.engine === undefined;
    this.machine.loaded(session.state);
    if (before && this.machine.engine !== undefined) this.note(`bundle loaded at v${session.state.version}`);
    this.keep();
    return this.machine.engine !== undefined;
  }

  /** Another device's version arrives on the event stream. */
  streamEvent() {
    const session = this.server.sessions.get(this.sessionId);
    const machine = this.machine;
    if (this.networkDown || !session || !session.alive || session.state.version <= machine.confirmed.version || machine.queue.length > 0 || machine.busy) return;
    const events = machine.received(NavigationState.fromEngine(session.state));
    if (events.length > 0) this.note(`event stream: v${session.state.version}`);
    this.deliver(events);
  }

  /**
   * Records what the client reported, and keeps what the store would.
   * @param {ClientEvent[]} events
   */
  deliver(events) {
    for (const event of events) {
      switch (event.type) {
        case 'confirmed':
          this.confirmedStates.push(event.state);
          this.note(`confirmed v${event.state.version}`);
          break;
        case 'corrected':
          for (const tap of event.correction.taps) this.reportedKeys.set(tap.key, `corrected (${event.correction.reason})`);
          this.note(`corrected (${event.correction.reason}): ${event.correction.taps.map((tap) => tap.key)} to v${event.correction.to.version}`);
          break;
        case 'restarted':
          for (const tap of event.restart.dropped) this.reportedKeys.set(tap.key, 'restarted');
          this.note(`restarted: ${event.restart.reason}`);
          break;
        default:
          this.note(event.type === 'remote' ? `remote v${event.state.version}` : event.type);
      }
    }
    this.keep();
  }

  /**
   * What FlowSession persists after every step: the queue, the confirmed state, and the engine at
   * the confirmed version when there is one.
   */
  keep() {
    const machine = this.machine;
    const kept = this.kept;
    kept.sessionId = this.sessionId;
    kept.token = this.token;
    kept.queue = machine.queue.map((item) => (item.at === undefined ? { key: item.key, version: item.version, action: item.action }
      : { key: item.key, version: item.version, action: item.action, at: item.at }));
    kept.confirmed = machine.confirmed;
    const engine = machine.confirmedEngine;
    if (engine && engine.version === machine.confirmed.version) kept.bundle = engine;
    if (kept.bundle && (kept.bundle.sessionId !== this.sessionId || kept.bundle.version > machine.confirmed.version)) kept.bundle = undefined;
  }

  /**
   * The app dies: what was on the wire may or may not reach the server; the client starts again
   * from what it kept, as FlowSession.start does.
   */
  kill() {
    this.report.kills += 1;
    const current = this.wire;
    if (current && !current.answer && !this.networkDown && this.roll(500)) this.server.handle(current.request);  // it reached the server before the app died
    this.wire = undefined;
    const kept = this.kept;
    this.note(`killed; kept ${kept.queue.length} tap(s) at v${kept.confirmed.version}`);
    /** @type {Reply} */
    let reply;
    if (this.networkDown || this.roll(this.options.lostRequest)) {
      reply = { noAnswer: 'down' };
    } else {
      const answer = this.server.handle(new SessionRequests(kept.sessionId, kept.token).reload());
      reply = { status: answer.status, body: answer.body };
    }
    if ('status' in reply && reply.status === 200) {
      const read = ClientMachine.tryRead(JSON.parse(reply.body));
      if (!read) return;
      this.machine = new ClientMachine(read.state, { predictions: this.options.usesPredictions ? read.predictions : [], retry: this.retry });
      this.machine.restore(kept.queue);
      if (this.options.usesBundle && kept.queue.length > 0) this.fetchBundle();
      this.note(`started again online at v${read.state.version}`);
    } else if ('status' in reply && (reply.status === 404 || reply.status === 401)) {
      // Gone: the next command creates a new session and reports the kept taps.
      this.machine = new ClientMachine(kept.confirmed, { retry: this.retry });
      this.machine.restore(kept.queue);
      this.deliver(this.machine.handle(reply, { kind: 'reload' }));
      this.note('started again: the kept session is gone');
    } else {
      this.machine = ClientMachine.restoredOffline(kept.confirmed, this.options.usesBundle ? kept.bundle : undefined, kept.queue, this.retry);
      this.note(`started again offline from the store, showing v${this.machine.shown.version}`);
    }
    this.keep();
  }

  /** The faults stop: the network is up, the answers come back, until nothing is left to do. */
  settle() {
    const saved = this.options;
    this.options = { ...saved, lostRequest: 0, lostAnswer: 0, serverErrorBefore: 0, serverErrorAfter: 0, garbageAfter: 0 };
    this.networkDown = false;
    this.note('faults stop');
    let steps = 0;
    while (steps < 5000) {
      steps += 1;
      if (!this.advance()) {
        this.streamEvent();
        if (!this.advance()) break;
      }
    }
    if (steps >= 5000) this.report.failures.push('the client did not settle in 5,000 steps');
    this.options = saved;
  }

  check() {
    const report = this.report;
    const counts = this.server.keyCounts();
    for (const [key, action] of this.made) {
      // A tap stored on a session that was later deleted went with it: it is not lost, and
      // reporting it with the restart is right too. It must still be stored at most once.
      const everywhere = counts.all.get(key) ?? 0;
      if (everywhere > 1) report.failures.push(`tap ${key} (${action.type}) is in the server's log ${everywhere} times`);
      const stored = counts.live.get(key) ?? 0;
      if (everywhere > stored) {
        report.stored += 1;
        continue;
      }
      const reported = this.reportedKeys.get(key);
      if (stored === 0 && reported === undefined) report.failures.push(`tap ${key} (${action.type}) was lost: not in the log, never reported`);
      if (stored === 1 && reported !== undefined) report.failures.push(`tap ${key} (${action.type}) is in the log but was reported ${reported}`);
      if (stored === 1) {
        report.stored += 1;
      } else if (reported !== undefined) {
        report.reported += 1;
        report.reasons[reported] = (report.reasons[reported] ?? 0) + 1;
      }
    }
    for (const state of this.confirmedStates) {
      const document = this.server.document(state.sessionId, state.version);
      if (document === undefined) {
        report.failures.push(`v${state.version} of ${state.sessionId} was reported confirmed but the server never stored it`);
      } else if (!state.equals(NavigationState.fromJSON(JSON.parse(document)))) {
        report.failures.push(`v${state.version} was reported confirmed with a state the server did not store`);
      }
    }
    if (this.options.otherDevice === 0 && this.options.deleteSession === 0) {
      // Nobody else acts on the session: the only taps not taken are those the server's engine
      // refused (made blind, before the bundle loaded); none is dropped because the client
      // mistook its own answers for someone else's.
      for (const [reason, count] of Object.entries(report.reasons)) {
        if (reason !== 'corrected (refused)') report.failures.push(`${count} tap(s) ${reason} with nobody else on the session`);
      }
    }
    const machine = this.machine;
    if (machine.queue.length > 0) report.failures.push(`${machine.queue.length} tap(s) still queued after settling`);
    if (machine.gone) report.failures.push('the client still waits to replace a gone session');
    const session = this.server.sessions.get(this.sessionId);
    if (session && session.alive) {
      const state = NavigationState.fromEngine(session.state);
      if (!machine.confirmed.equals(state) || !machine.shown.equals(state)) {
        report.failures.push(`the client shows v${machine.shown.version} (confirmed v${machine.confirmed.version}) but the server is at v${session.state.version}`);
      }
    }
    if (this.kept.queue.map((item) => item.key).join() !== machine.queue.map((item) => item.key).join()) report.failures.push('the store\'s queue differs from the client\'s');
  }
}

/** @param {Command} command */
function describe(command) {
  switch (command.kind) {
    case 'post': return `post ${command.item.key} ${command.item.action.type} on v${command.item.version}`;
    case 'batch': return `batch ${command.items[0]?.key}…${command.items[command.items.length - 1]?.key} (${command.items.length})`;
    default: return command.kind;
  }
}
