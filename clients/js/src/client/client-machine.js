// ClientMachine: a client's confirmed, shown and queued state, what every answer means, and what to do next, with no I/O.
import { postedAction } from './client-event.js';
import { asObject, sameJSON, tryParse } from './json.js';
import { NavigationState, sameState } from './navigation-state.js';
import { RetryPolicy } from './retry-policy.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */
/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** @typedef {import('./client-event.js').ClientEvent} ClientEvent */
/** @typedef {import('./client-event.js').Correction} Correction */

/**
 * The local engine at one version, as the machine uses it: the engine's `SessionState` behind
 * `localEngine` (src/client/local-engine.js), or a test's double.
 * @typedef {{readonly version: number, applying(action: FlowAction): {next: EngineState}, document(): string}} EngineState
 */

/** @typedef {{action: FlowAction, state: NavigationState}} Prediction */

/**
 * What the driver must do next:
 * - `post`: post one action with `If-Match: "<version>"` and its idempotency key;
 * - `batch`: post these (the oldest queued, at most {@link ClientMachine.batchLimit}) as one batch;
 * - `reload`: read the session's state again (a 412 said something else acted);
 * - `create`: create a new session for the same user (the server said this one is gone);
 * - `pause`: wait `ms`, then ask again (the last request had an unknown outcome).
 * @typedef {{kind: 'post', item: QueuedAction} | {kind: 'batch', items: QueuedAction[]} | {kind: 'reload'}
 *   | {kind: 'create'} | {kind: 'pause', ms: number}} Command
 */

/**
 * What came back for a command: the status and body (text) as they came, or no answer
 * (connection refused or cut, timed out, not HTTP).
 * @typedef {{status: number, body: string} | {noAnswer: string}} Reply
 */

/**
 * What an answer is, before what it means for the queue.
 * @typedef {{kind: 'success', json: JSONObject} | {kind: 'refusal', status: number, problem: JSONObject}
 *   | {kind: 'versionMismatch', problem: JSONObject} | {kind: 'gone', status: number, problem: JSONObject}
 *   | {kind: 'unknown', detail: string}} Answer
 */

/**
 * What a tap did: `shown` at once (the state the engine or a prediction gave), or `waiting` for
 * the answer to `key` (no way to predict it).
 * @typedef {{kind: 'shown', state: NavigationState} | {kind: 'waiting', key: string}} TapResult
 */

/**
 * The turns of a FlowStack client as a value: what it shows, what the server confirmed, what is
 * queued, what each answer means, and, for each event, what to do next. `FlowSession` performs the
 * I/O and hands every answer back as it came (status and body); the tests drive it directly.
 *
 * ```js
 * const machine = new ClientMachine(confirmed);
 * machine.loaded(engineAtConfirmed);
 * machine.tap({ type: 'onboarding.showSecond', from: 'e3' }, 'k1');  // {kind: 'shown', state}
 * const command = machine.nextCommand();                             // {kind: 'post', item}
 * machine.handle({ status: 200, body }, command);                    // [{type: 'confirmed', state}]
 * ```
 *
 * The rules every answer goes through (DESIGN.md, "the client's contract"):
 * - a tap leaves the queue only when the server's answer says it is stored (200, `applied` or
 *   `skipped` in a batch), or when the server refused it or a tap before it (409, 412, 422, 400
 *   problems), and then it is named in a correction;
 * - any other answer (a 5xx, 429, a body that is not what the route answers, no answer at all)
 *   is an unknown outcome: the same request goes again under the same keys after a pause, and
 *   after `retry.attempts` tries the client goes offline and waits for the server;
 * - taps made while a request is on the wire stay queued and go next;
 * - a 401 or 404 problem for the session itself means it is gone: a new one is created and the
 *   queued taps are reported in a restart.
 */
export class ClientMachine {
  /** The most taps one batch carries (the server takes at most 100). */
  static get batchLimit() {
    return 100;
  }

  /**
   * @param {NavigationState} confirmed
   * @param {{predictions?: Prediction[], retry?: RetryPolicy}} [options]
   */
  constructor(confirmed, options = {}) {
    const { predictions = [], retry = new RetryPolicy() } = options;
    /** The last state the server answered. */
    this.confirmed = confirmed;
    /** What the app shows: `confirmed` with the queued taps applied. */
    this.shown = confirmed;
    /**
     * The local engine at `shown`, when the session's bundle is loaded and still valid.
     * @type {EngineState | undefined}
     */
    this.engine = undefined;
    /**
     * The local engine at `confirmed`, for rolling back (and for the store to keep).
     * @type {EngineState | undefined}
     */
    this.confirmedEngine = undefined;
    /**
     * The engine after each queued tap, to move `confirmedEngine` on as answers confirm them.
     * @type {Map<string, EngineState>}
     */
    this.enginesAfter = new Map();
    /** The server's predictions for `confirmed`, used when there is no engine; kept until the answer that replaces them. */
    this.predictions = predictions;
    /**
     * Taps shown (or waiting) and not yet answered, oldest first.
     * @type {QueuedAction[]}
     */
    this.queue = [];
    /** How many of the oldest queued taps are on the wire (-1: a reload or a creation). */
    this.inFlight = 0;
    /** True while the server cannot be reached (or keeps failing, or the app said so). */
    this.offline = false;
    /** True when the local engine is gone and the bundle must be fetched again. */
    this.needsBundle = true;
    /**
     * Set when the server said the session is gone: the next command creates a new one.
     * @type {{status: number, problem?: JSONValue} | undefined}
     */
    this.gone = undefined;
    /** How requests that got no usable answer are retried. */
    this.retry = retry;
    /** Unknown outcomes in a row since the last try went out online (reset by any answer that says what happened, and when the server answers again). */
    this.failures = 0;
    /**
     * Unknown outcomes in a row, across going offline and back (reset only by an answer that
     * says what happened): the backoff grows with it, so a server that answers `/healthz` but
     * fails every request (a persisting 500) is not asked at the first delay after every probe.
     */
    this.streak = 0;
    /**
     * What the last unknown outcome was ("status 500", "no answer: timed out", …).
     * @type {string | undefined}
     */
    this.lastFailure = undefined;
    /** @type {number | undefined} */
    this.pauseOwed = undefined;
    /**
     * Keys of queued taps that have been on the wire (their action can no longer change).
     * @type {Set<string>}
     */
    this.sent = new Set();
    /**
     * Set after a 412: the state is read again, and the problem reported with the correction.
     * @type {{problem?: JSONValue} | undefined}
     */
    this.reloadPending = undefined;
  }

  /**
   * A copy that shares nothing mutable with this one (states and engines are immutable values),
   * so a simulation can branch a machine or keep it as it was.
   * @returns {ClientMachine}
   */
  copy() {
    const copy = new ClientMachine(this.confirmed, { predictions: this.predictions.slice(), retry: this.retry });
    Object.assign(copy, this);
    copy.enginesAfter = new Map(this.enginesAfter);
    copy.queue = this.queue.map((item) => ({ ...item }));
    copy.sent = new Set(this.sent);
    return copy;
  }

  /** True while a request is on the wire. */
  get busy() {
    return this.inFlight !== 0;
  }

  // MARK: the bundle and taps kept across a restart

  /**
   * The session's bundle arrived: its state becomes the local engine if it is at the confirmed
   * version and nothing shown is queued; taps queued without a state shown (kept across a
   * restart, or waiting) are replayed on it.
   * @param {EngineState} bundle
   */
  loaded(bundle) {
    if (bundle.version !== this.confirmed.version) return;
    const replayable = this.inFlight === 0 && this.queue.every((item) => item.expected == null) && this.queue[0]?.version === bundle.version;
    if (this.queue.length > 0 && !replayable) return;
    this.confirmedEngine = bundle;
    this.engine = bundle;
    this.needsBundle = false;
    if (this.queue.length > 0) this.replayQueue(bundle);
  }

  /**
   * Taps queued before the app restarted, put back in the queue (shown once the bundle loads and
   * they replay on it).
   * @param {QueuedAction[]} queued
   */
  restore(queued) {
    this.queue = queued.map((item) => {
      /** @type {QueuedAction} */
      const kept = { key: item.key, version: item.version, action: postedAction(item.action) };
      if (item.at != null) kept.at = item.at;
      return kept;
    });
    const engine = this.confirmedEngine;
    if (engine && engine.version === this.confirmed.version) this.replayQueue(engine);
  }

  /**
   * A client started again while the server cannot be reached, from what the store kept: the
   * confirmed state, the engine at that version (when kept), and the queued taps replayed on it,
   * so it shows what the user last saw; offline, so taps run locally and queue until the server
   * answers. Without an engine nothing can be replayed: it shows `confirmed`, the kept taps stay
   * queued (sent when back), and a new tap waits for the server.
   *
   * @param {NavigationState} confirmed
   * @param {EngineState | undefined} bundle
   * @param {QueuedAction[]} queue
   * @param {RetryPolicy} [retry]
   */
  static restoredOffline(confirmed, bundle, queue, retry = new RetryPolicy()) {
    const machine = new ClientMachine(confirmed, { retry });
    machine.restore(queue);
    if (bundle) machine.loaded(bundle);
    machine.offline = true;
    return machine;
  }

  /**
   * Replays the queue on the engine as far as it applies; a tap that no longer applies (or was
   * made on another version) stays queued unshown, and so do those after it: the server decides
   * them, and a refusal is reported. Nothing is dropped here.
   * @param {EngineState} start
   */
  replayQueue(start) {
    let current = start;
    for (const item of this.queue) {
      if (item.version !== current.version) break;
      let next;
      let state;
      try {
        next = current.applying(item.action).next;
        state = NavigationState.fromEngine(next);
      } catch {
        break;
      }
      item.expected = state;
      this.enginesAfter.set(item.key, next);
      current = next;
    }
    this.engine = this.queue.every((item) => item.expected != null) ? current : undefined;
    this.shown = lastShown(this.queue) ?? this.confirmed;
  }

  // MARK: taps

  /**
   * A tap: applied on the local engine (or matched to a prediction) and queued.
   *
   * @param {FlowAction} action
   * @param {string} key its idempotency key
   * @param {string} [at] when it happened (RFC 3339), sent with a batch
   * @returns {TapResult}
   * @throws the engine's refusal, when the local engine refuses the action (nothing is queued:
   *   the server would refuse it too)
   */
  tap(action, key, at) {
    action = postedAction(action);
    const last = this.queue[this.queue.length - 1];
    const version = last ? last.version + 1 : this.confirmed.version;
    const engine = this.engine;
    if (engine && engine.version === version && this.queue.every((item) => item.expected != null)) {
      const { next } = engine.applying(action);  // a refusal is thrown to the caller
      let state;
      try {
        state = NavigationState.fromEngine(next);
      } catch {
        state = undefined;
      }
      if (state) {
        this.engine = next;
        this.enginesAfter.set(key, next);
        this.queue.push(withAt({ key, version, action, expected: state }, at));
        this.shown = state;
        return { kind: 'shown', state };
      }
    }
    const prediction = this.queue.length === 0 ? this.predicted(action, version) : undefined;
    if (prediction) {
      this.queue.push(withAt({ key, version, action: prediction.action, expected: prediction.state }, at));
      this.shown = prediction.state;
      return { kind: 'shown', state: prediction.state };
    }
    this.queue.push(withAt({ key, version, action }, at));
    return { kind: 'waiting', key };
  }

  /**
   * The prediction of the last answer for `action`, when it is for the version confirmed: the
   * action to post (the tap, with `from` the screen the prediction was made from when the tap
   * named none, since the server keeps the action as posted) and the state it shows.
   * @param {FlowAction} action
   * @param {number} version
   * @returns {Prediction | undefined}
   */
  predicted(action, version) {
    if (version !== this.confirmed.version || !this.shown.equals(this.confirmed)) return undefined;
    const top = this.confirmed.top?.id;
    const prediction = this.predictions.find((candidate) => ClientMachine.matches(candidate.action, action, top));
    if (!prediction) return undefined;
    const posted = { ...action };
    if (posted.from == null && prediction.action.from != null) posted.from = prediction.action.from;
    return { action: posted, state: prediction.state };
  }

  /**
   * A prediction is for a tap when the type, tapped row, params and interactivity agree and
   * `from` is the same screen (a tap without `from` acts on the screen on top). A row tap
   * reaches its rule with the row's id and values, so a prediction of the plain action is not
   * one of it.
   * @param {FlowAction} predicted
   * @param {FlowAction} action
   * @param {string | undefined} top
   */
  static matches(predicted, action, top) {
    return predicted.type === action.type && (predicted.row ?? null) === (action.row ?? null)
      && sameJSON(predicted.params ?? {}, action.params ?? {})
      && Boolean(predicted.interactive) === Boolean(action.interactive) && (predicted.from ?? top) === (action.from ?? top);
  }

  /**
   * The state a queued tap shows, when it shows one (none while it waits).
   * @param {string} key
   */
  expected(key) {
    return this.queue.find((item) => item.key === key)?.expected;
  }

  // MARK: what to send

  /**
   * The next thing to do, if any: a pause owed after an unknown outcome, a new session for one
   * that is gone, a reload after a 412, then one action, or the oldest queued ones as a batch
   * (after being offline, or when taps came faster than answers). Nothing while offline or while
   * a request is on the wire.
   * @param {boolean} [batches] false for a server without the batch route
   * @returns {Command | undefined}
   */
  nextCommand(batches = true) {
    if (this.offline || this.inFlight !== 0) return undefined;
    if (this.pauseOwed !== undefined) {
      const ms = this.pauseOwed;
      this.pauseOwed = undefined;
      return { kind: 'pause', ms };
    }
    if (this.gone) {
      this.inFlight = -1;
      return { kind: 'create' };
    }
    if (this.reloadPending) {
      this.inFlight = -1;
      return { kind: 'reload' };
    }
    const first = this.queue[0];
    if (!first) return undefined;
    if (this.sent.size > 2 * this.queue.length + 16) {
      // Keys answered since they went out are forgotten.
      const queued = new Set(this.queue.map((item) => item.key));
      for (const key of this.sent) if (!queued.has(key)) this.sent.delete(key);
    }
    if (this.queue.length > 1 && batches) {
      const items = this.queue.slice(0, ClientMachine.batchLimit);
      this.inFlight = items.length;
      for (const item of items) this.sent.add(item.key);
      return { kind: 'batch', items };
    }
    this.inFlight = 1;
    this.sent.add(first.key);
    return { kind: 'post', item: first };
  }

  // MARK: answers

  /**
   * The answer (or the lack of one) to `command`, read by the rules above.
   * @param {Reply} reply
   * @param {Command} command
   * @returns {ClientEvent[]}
   */
  handle(reply, command) {
    switch (command.kind) {
      case 'post': return this.handlePost(reply, command.item);
      case 'batch': return this.handleBatch(reply, command.items);
      case 'reload': return this.handleReload(reply);
      default: return [];  // a new session is read by the driver (`restarted`), a pause has none
    }
  }

  /**
   * Sorts an answer: only the server's own problem documents refuse; a success must carry a JSON
   * object, and anything unexpected is an unknown outcome.
   * @param {Reply} reply
   * @param {number} [success]
   * @returns {Answer}
   */
  static classify(reply, success = 200) {
    if ('noAnswer' in reply) return { kind: 'unknown', detail: `no answer: ${reply.noAnswer}` };
    const { status, body } = reply;
    const object = asObject(tryParse(body));
    if (status === success) {
      if (!object) return { kind: 'unknown', detail: `status ${status} with a body that is not a JSON object` };
      return { kind: 'success', json: object };
    }
    // A problem document names its status; a proxy's or a crashed node's page does not.
    if (!object || !(object.status === status || typeof object.type === 'string')) {
      return { kind: 'unknown', detail: `status ${status}${body === '' ? '' : ' with a body that is not a problem document'}` };
    }
    if (status === 412) return { kind: 'versionMismatch', problem: object };
    if (status === 401 || status === 404) return { kind: 'gone', status, problem: object };
    if (status === 408 || status === 425 || status === 429) return { kind: 'unknown', detail: `status ${status}` };
    if (status >= 400 && status < 500) return { kind: 'refusal', status, problem: object };
    return { kind: 'unknown', detail: `status ${status}` };
  }

  /**
   * A state document with its predictions.
   * @param {JSONValue} json
   * @returns {{state: NavigationState, predictions: Prediction[]}}
   * @throws {import('./navigation-state.js').MalformedState} when it is not a state
   */
  static read(json) {
    const state = NavigationState.fromJSON(json);
    /** @type {Prediction[]} */
    const predictions = [];
    const listed = asObject(json)?.predictions;
    for (const item of Array.isArray(listed) ? listed : []) {
      const fields = asObject(item);
      const action = asObject(fields?.action);
      if (!fields || !action || fields.state == null) continue;
      if (typeof action.type !== 'string') throw new TypeError('a prediction\'s action has no type');
      predictions.push({ action: postedAction(/** @type {FlowAction} */ (/** @type {unknown} */ (action))), state: NavigationState.fromJSON(fields.state) });
    }
    return { state, predictions };
  }

  /**
   * @param {JSONValue} json
   * @returns {{state: NavigationState, predictions: Prediction[]} | undefined}
   */
  static tryRead(json) {
    try {
      return ClientMachine.read(json);
    } catch {
      return undefined;
    }
  }

  /**
   * @param {Reply} reply
   * @param {QueuedAction} item
   * @returns {ClientEvent[]}
   */
  handlePost(reply, item) {
    this.inFlight = 0;
    const answer = ClientMachine.classify(reply);
    switch (answer.kind) {
      case 'success': {
        const read = ClientMachine.tryRead(answer.json);
        if (!read) return this.unknownOutcome('status 200 with a body that is not a state');
        return this.answered(item.key, read.state, read.predictions);
      }
      case 'refusal': return this.refused(item.key, answer.status, answer.problem);
      case 'versionMismatch': return this.refused(item.key, 412, answer.problem);
      case 'gone': return this.sessionGone(answer.status, answer.problem);
      default: return this.unknownOutcome(answer.detail);
    }
  }

  /**
   * @param {Reply} reply
   * @param {QueuedAction[]} items
   * @returns {ClientEvent[]}
   */
  handleBatch(reply, items) {
    this.inFlight = 0;
    const answer = ClientMachine.classify(reply);
    switch (answer.kind) {
      case 'success': {
        let state;
        try {
          state = NavigationState.fromJSON(answer.json.state);
        } catch {
          state = undefined;
        }
        const results = answer.json.results;
        if (!state || !Array.isArray(results)) return this.unknownOutcome('status 200 with a body that is not a batch\'s answer');
        /** @type {Set<string>} */
        const done = new Set();
        for (const result of results) {
          const fields = asObject(result);
          if (fields && typeof fields.key === 'string' && (fields.status === 'applied' || fields.status === 'skipped')) done.add(fields.key);
        }
        const refusal = answer.json.refused == null ? undefined : answer.json.refused;
        return this.batchAnswered(items.length, done, refusal, state);
      }
      // The batch as a whole was refused (400: malformed): nothing in it was applied.
      case 'refusal': return this.refused(items[0].key, answer.status, answer.problem);
      case 'versionMismatch': return this.refused(items[0].key, 412, answer.problem);
      case 'gone': return this.sessionGone(answer.status, answer.problem);
      default: return this.unknownOutcome(answer.detail);
    }
  }

  /**
   * @param {Reply} reply
   * @returns {ClientEvent[]}
   */
  handleReload(reply) {
    this.inFlight = 0;
    const answer = ClientMachine.classify(reply);
    switch (answer.kind) {
      case 'success': {
        const read = ClientMachine.tryRead(answer.json);
        if (!read) return this.unknownOutcome('status 200 with a body that is not a state');
        return this.reloaded(read.state, read.predictions);
      }
      case 'gone': return this.sessionGone(answer.status, answer.problem);
      case 'refusal': return this.unknownOutcome(`status ${answer.status} to a read`);
      case 'versionMismatch': return this.unknownOutcome('status 412 to a read');
      default: return this.unknownOutcome(answer.detail);
    }
  }

  /**
   * No usable answer: the taps stay queued under the same keys; after a pause the same request
   * goes again, and after `retry.attempts` tries in a row the client is offline until the driver
   * sees the server answer again (`reachable()`).
   * @param {string} detail
   * @returns {ClientEvent[]}
   */
  unknownOutcome(detail) {
    this.inFlight = 0;
    this.failures += 1;
    this.streak += 1;
    this.lastFailure = detail;
    if (this.failures >= this.retry.attempts) {
      this.pauseOwed = undefined;
      if (this.offline) return [];
      this.offline = true;
      return [{ type: 'offline' }];
    }
    this.pauseOwed = this.retry.delay(this.streak);
    return [];
  }

  /**
   * The server asked for a wait before the next try (`Retry-After` on a 429 or a 503, in
   * milliseconds): the pause owed is at least that long. Offline, the driver's probe waits it.
   * @param {number} ms
   */
  retryAfter(ms) {
    if (this.pauseOwed !== undefined && ms > this.pauseOwed) this.pauseOwed = ms;
  }

  // MARK: outcomes

  /**
   * The server stored `key` (a post's 200, or its replay) and is at `state`.
   * @param {string} key
   * @param {NavigationState} state
   * @param {Prediction[]} [predictions]
   * @returns {ClientEvent[]}
   */
  answered(key, state, predictions = []) {
    this.inFlight = 0;
    this.failures = 0;
    this.streak = 0;
    const index = this.queue.findIndex((item) => item.key === key);
    if (index < 0) return [];
    const item = this.queue[index];
    for (const taken of this.queue.slice(0, index)) this.enginesAfter.delete(taken.key);
    this.queue.splice(0, index + 1);
    // An answer older than the state confirmed is a replay: a tap kept by a store that missed
    // the saves after it (a full disk), sent again once the server had moved on. The tap is
    // stored; the state it made then is not the session's now, and is not shown again.
    if (state.version < this.confirmed.version) {
      this.enginesAfter.delete(key);
      if (this.queue.length === 0) {
        this.shown = this.confirmed;
        this.engine = this.confirmedEngine;
        this.needsBundle = this.engine === undefined;
      }
      return [];
    }
    return this.settle(state, predictions, item);
  }

  /**
   * The server's answer after `last` was stored: confirmed when it is what was shown; a tap that
   * showed nothing takes the answer as what to show; any other answer is adopted, and the taps
   * still queued (made on a state the server did not reach) are reported.
   * @param {NavigationState} state
   * @param {Prediction[]} predictions
   * @param {QueuedAction} last
   * @param {JSONValue} [refusal]
   * @returns {ClientEvent[]}
   */
  settle(state, predictions, last, refusal) {
    this.confirmed = state;
    // When a batch stopped at a refusal, that is why the rest is dropped.
    const reason = refusal === undefined ? 'differentAnswer' : problemStatus(refusal) === 412 ? 'versionMismatch' : 'refused';
    if (last.expected) {
      if (!last.expected.equals(state)) return this.adopt(state, predictions, this.queue, refusal, reason);
      this.confirmedEngine = this.enginesAfter.get(last.key);
      this.enginesAfter.delete(last.key);
      this.predictions = predictions;
      if (this.queue.length === 0) this.shown = state;
      this.showFirstWaiting();
      return [{ type: 'confirmed', state }];
    }
    // A tap that showed nothing: the answer is what to show. Later taps that showed nothing
    // either still wait on it.
    this.confirmedEngine = undefined;
    this.engine = undefined;
    this.needsBundle = true;
    this.enginesAfter.clear();
    if (!this.queue.every((item) => item.expected == null)) return this.adopt(state, predictions, this.queue, refusal, reason);
    this.shown = state;
    this.predictions = predictions;
    this.showFirstWaiting();
    return [{ type: 'confirmed', state }];
  }

  /**
   * The oldest queued tap, when it waits right after the confirmed state, is shown from the
   * answer's predictions if one is for it (so a tap made while the one before it was on the wire
   * waits one round trip, not two). Its action takes the prediction's `from` only if it never
   * went out under its key.
   */
  showFirstWaiting() {
    const first = this.queue[0];
    if (!first || first.expected || this.sent.has(first.key) || !this.shown.equals(this.confirmed)) return;
    const prediction = this.predicted(first.action, first.version);
    if (!prediction) return;
    first.action = prediction.action;
    first.expected = prediction.state;
    this.shown = prediction.state;
  }

  /**
   * The server refused a posted action (or a batch as a whole). A 412 asks for a reload; the
   * others roll back to the confirmed state, dropping the refused tap and those after it, which
   * are reported (even when nothing on screen changes: a tap that waited).
   * @param {string} key
   * @param {number} status
   * @param {JSONValue} [problem]
   * @returns {ClientEvent[]}
   */
  refused(key, status, problem) {
    this.inFlight = 0;
    this.failures = 0;
    this.streak = 0;
    if (status === 412) {
      this.reloadPending = { problem };
      return [];
    }
    const index = this.queue.findIndex((item) => item.key === key);
    if (index < 0) return [];
    const dropped = this.queue.splice(index);
    const from = this.shown;
    for (const item of dropped) this.enginesAfter.delete(item.key);
    if (this.queue.length === 0) {
      this.engine = this.confirmedEngine;
      this.shown = this.confirmed;
    } else {
      this.engine = this.enginesAfter.get(this.queue[this.queue.length - 1].key);
      this.shown = lastShown(this.queue) ?? this.confirmed;
    }
    this.needsBundle = this.engine === undefined;
    return [{ type: 'corrected', correction: correction(from, this.shown, dropped, problem, 'refused') }];
  }

  /**
   * The server's state, read after a 412: adopted, the queue dropped and reported.
   * @param {NavigationState} state
   * @param {Prediction[]} [predictions]
   * @returns {ClientEvent[]}
   */
  reloaded(state, predictions = []) {
    this.inFlight = 0;
    this.failures = 0;
    this.streak = 0;
    const problem = this.reloadPending?.problem;
    this.reloadPending = undefined;
    return this.adopt(state, predictions, this.queue, problem, 'versionMismatch');
  }

  /**
   * The answer to a batch of the `sent` oldest queued taps: `done` the keys applied or skipped
   * (already applied), `refusal` the problem that stopped it, `state` the session after it. Taps
   * made while it was on the wire stay queued (they follow the last one sent).
   * @param {number} sent
   * @param {Set<string>} done
   * @param {JSONValue | undefined} refusal
   * @param {NavigationState} state
   * @returns {ClientEvent[]}
   */
  batchAnswered(sent, done, refusal, state) {
    this.inFlight = 0;
    this.failures = 0;
    this.streak = 0;
    const sentItems = this.queue.slice(0, sent);
    let taken = 0;
    while (taken < sentItems.length && done.has(sentItems[taken].key)) taken += 1;
    if (taken === 0 && refusal === undefined) {
      // Nothing taken and no reason given: the same batch goes again.
      return this.unknownOutcome('a batch answered with nothing applied and no refusal');
    }
    /** @type {ClientEvent[]} */
    let events = [];
    if (taken > 0) {
      const last = this.queue[taken - 1];
      for (const item of this.queue.slice(0, taken - 1)) this.enginesAfter.delete(item.key);
      this.queue.splice(0, taken);
      events = this.settle(state, [], last, refusal);
      if (events[0]?.type === 'corrected') return events;  // adopted: the queue is already dropped
    }
    if (refusal === undefined) return events;
    const reason = problemStatus(refusal) === 412 ? 'versionMismatch' : 'refused';
    if (!state.equals(this.confirmed) || (this.confirmedEngine !== undefined && this.confirmedEngine.version !== state.version)) {
      return events.concat(this.adopt(state, [], this.queue, refusal, reason));
    }
    // The server is where the client last confirmed: roll back to it, the engine with it.
    const from = this.shown;
    const dropped = this.queue;
    this.queue = [];
    this.enginesAfter.clear();
    this.shown = this.confirmed;
    this.engine = this.confirmedEngine;
    this.needsBundle = this.engine === undefined;
    return events.concat([{ type: 'corrected', correction: correction(from, this.shown, dropped, refusal, reason) }]);
  }

  /**
   * A version from the event stream. Adopted when nothing of this client's is pending and it is
   * newer than the confirmed one; while taps are pending, their answers settle it.
   * @param {NavigationState} state
   * @returns {ClientEvent[]}
   */
  received(state) {
    if (state.version <= this.confirmed.version || this.queue.length > 0 || this.inFlight !== 0 || this.gone) return [];
    this.confirmed = state;
    const from = this.shown;
    this.shown = state;
    this.engine = undefined;
    this.confirmedEngine = undefined;
    this.needsBundle = true;
    this.predictions = [];
    return from.equals(state) ? [] : [{ type: 'remote', state }];
  }

  /**
   * The server said the session is gone: the next command creates a new one.
   * @param {number} status
   * @param {JSONValue} [problem]
   * @returns {ClientEvent[]}
   */
  sessionGone(status, problem) {
    this.inFlight = 0;
    this.failures = 0;
    this.streak = 0;
    this.gone = { status, problem };
    return [];
  }

  /**
   * The session is gone (`gone`, or found gone at start) and `state` is the new one's: it is
   * shown, and the taps queued on the old one are reported as dropped.
   * @param {NavigationState} state
   * @param {{predictions?: Prediction[], oldSession: string, status?: number, problem?: JSONValue}} options
   * @returns {ClientEvent[]}
   */
  restarted(state, { predictions = [], oldSession, status, problem }) {
    const goneStatus = status ?? this.gone?.status ?? 404;
    const goneProblem = problem ?? this.gone?.problem;
    const dropped = this.queue;
    const fresh = new ClientMachine(state, { predictions, retry: this.retry });
    Object.assign(this, fresh);
    const reason = `session ${oldSession} is gone (${goneStatus})`
      + (dropped.length === 0 ? '' : `; ${dropped.length} queued tap(s) were dropped`) + '; started a new one';
    /** @type {import('./client-event.js').Restart} */
    const restart = { reason, state, dropped, status: goneStatus };
    if (goneProblem !== undefined) restart.problem = goneProblem;
    return [{ type: 'restarted', restart }];
  }

  /**
   * The answer to a `create` command could not be read (no answer, a 5xx): the same goes again.
   * @param {string} detail
   */
  createFailed(detail) {
    return this.unknownOutcome(detail);
  }

  /** A request the driver could not make (a route the server lacks): its taps stay queued. */
  unsent() {
    this.inFlight = 0;
  }

  /**
   * The server could not be reached (or the app said so): taps run locally and queue.
   * @returns {ClientEvent[]}
   */
  unreachable() {
    this.inFlight = 0;
    this.pauseOwed = undefined;
    if (this.offline) return [];
    this.offline = true;
    return [{ type: 'offline' }];
  }

  /**
   * The server answers again: what is queued goes next, after the backoff the unknown outcomes
   * in a row reached (none after an answer that said what happened, or an outage the app made).
   * @returns {ClientEvent[]}
   */
  reachable() {
    this.failures = 0;
    if (!this.offline) return [];
    if (this.streak > 0) this.pauseOwed = this.retry.delay(this.streak);
    this.offline = false;
    return [{ type: 'online' }];
  }

  /**
   * Adopts the server's state, dropping the queue (reported unless empty); the local engine is
   * gone until the bundle is fetched again.
   * @param {NavigationState} state
   * @param {Prediction[]} predictions
   * @param {QueuedAction[]} dropped
   * @param {JSONValue | undefined} problem
   * @param {Correction['reason']} reason
   * @returns {ClientEvent[]}
   */
  adopt(state, predictions, dropped, problem, reason) {
    const from = this.shown;
    this.confirmed = state;
    this.shown = state;
    this.queue = [];
    this.enginesAfter.clear();
    this.engine = undefined;
    this.confirmedEngine = undefined;
    this.needsBundle = true;
    this.predictions = predictions;
    if (from.equals(state) && dropped.length === 0) return [{ type: 'confirmed', state }];
    return [{ type: 'corrected', correction: correction(from, state, dropped, problem, reason) }];
  }
}

/**
 * @param {QueuedAction} item
 * @param {string | undefined} at
 * @returns {QueuedAction}
 */
function withAt(item, at) {
  if (at != null) item.at = at;
  return item;
}

/**
 * The state the last queued tap that shows one shows.
 * @param {QueuedAction[]} queue
 */
function lastShown(queue) {
  for (let i = queue.length - 1; i >= 0; i--) if (queue[i].expected) return queue[i].expected;
  return undefined;
}

/**
 * The `status` a problem document names.
 * @param {JSONValue | undefined} problem
 */
function problemStatus(problem) {
  const status = asObject(problem)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * @param {NavigationState} from
 * @param {NavigationState} to
 * @param {QueuedAction[]} taps
 * @param {JSONValue | undefined} problem
 * @param {Correction['reason']} reason
 * @returns {Correction}
 */
function correction(from, to, taps, problem, reason) {
  /** @type {Correction} */
  const made = { from, to, taps, reason };
  if (problem !== undefined) made.problem = problem;
  return made;
}

export { sameState };
