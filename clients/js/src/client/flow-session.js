// FlowSession: the client driver, which performs what ClientMachine asks (HTTP, store, events) one request at a time.
import { ActionRefused, checkedAction, keptItem, Unreachable } from './client-event.js';
import { ClientMachine } from './client-machine.js';
import { fetchCanStream, openEventStream, openXHREventStream } from './event-stream.js';
import { describe, FetchTransport, replyOf } from './http-transport.js';
import { asObject, tryParse } from './json.js';
import { NavigationState } from './navigation-state.js';
import { RetryPolicy } from './retry-policy.js';
import { SessionFlags } from './session-flags.js';
import { SessionRequests } from './session-requests.js';
import { MemorySessionStore, normalizeServer, SessionKey } from './session-store.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */
/** @typedef {import('./client-event.js').ClientEvent} ClientEvent */
/** @typedef {import('./client-event.js').Restart} Restart */
/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** @typedef {import('./client-machine.js').Reply} Reply */
/** @typedef {import('./client-machine.js').Prediction} Prediction */
/** @typedef {import('./client-machine.js').EngineState} EngineState */
/** @typedef {import('./http-transport.js').FlowRequest} FlowRequest */
/** @typedef {import('./http-transport.js').FlowAnswer} FlowAnswer */
/** @typedef {import('./http-transport.js').FlowTransport} FlowTransport */
/** @typedef {import('./session-store.js').StoredSession} StoredSession */
/** @typedef {import('./session-store.js').SessionStore} SessionStore */

/**
 * The local engine as the session uses it: the machine's engine, with the session it is for, the
 * bundle it writes at its version (kept in the store), and the actions it offers.
 * @typedef {EngineState & {readonly sessionId: string, bundle?(from: string): string,
 *   availableActions?(): Array<{type: string, handledBy: string, interactive: boolean, params: Array<{name: string, type: string, required: boolean}>, rowKinds?: string[]}>}} SessionEngine
 */

/**
 * How a session makes its local engine from the bundle's text (`localEngine(engineModule)`, or a
 * test's double).
 * @typedef {{fromBundle(text: string): SessionEngine}} EngineFactory
 */

/**
 * The configuration a running session holds: its engine, if any, is there (one given as a
 * promise is set once it has loaded).
 * @typedef {Configuration & {engine?: EngineFactory}} SessionConfiguration
 */

/**
 * @param {unknown} value
 * @returns {value is PromiseLike<any>}
 */
const isThenable = (value) => typeof value === 'object' && value !== null && typeof (/** @type {any} */ (value).then) === 'function';

/**
 * The engine an app gave as a promise, once it is there, or why it is not.
 * @param {PromiseLike<EngineFactory>} loading
 * @returns {Promise<{factory: EngineFactory} | {error: unknown}>}
 */
async function engineLoaded(loading) {
  try {
    const factory = await loading;
    if (typeof factory?.fromBundle !== 'function') throw new TypeError('the engine promise did not give an engine factory (localEngine(...))');
    return { factory };
  } catch (error) {
    return { error };
  }
}

/**
 * What `loading` gives, or undefined when it has not come within `ms` (never, when `ms` is not
 * finite: it waits for it).
 * @template T
 * @param {Promise<T>} loading
 * @param {number} ms
 * @returns {Promise<T | undefined>}
 */
function awaitedFor(loading, ms) {
  if (!Number.isFinite(ms)) return loading;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {Promise<undefined>} */
  const spent = new Promise((resolve) => { timer = setTimeout(() => resolve(undefined), Math.max(0, ms)); });
  return Promise.race([loading, spent]).finally(() => clearTimeout(timer));
}

/**
 * What the app gives a session:
 * - `server`, `clientKey` (`fsk_…`, sent as `X-API-Key` when a session is created), `userId`,
 *   `userHash` (HMAC of the user id from the app's backend), `attributes`, `traits`;
 * - `client`: what this build draws (`{platform, appVersion, features}`);
 * - `store`: where the session is kept between launches (memory unless given);
 * - `engine`: runs the session's bundle locally (`localEngine({ SessionState, readAction })`, both from the engine module); without it, taps are shown
 *   from the server's predictions and a tap with none waits for its answer. It may be a promise
 *   of one (`import('@flowstack/client/engine').then(localEngine)`: the engine as a chunk of its
 *   own, loaded while the session starts): a new session does not wait for it and draws on the
 *   predictions until it is there, as it does until the bundle comes; a session kept in the store
 *   that the server still knows (or that starts offline from the store) waits for it, since its
 *   bundle or its queued taps need it at once, but no longer than `engineWait` ms once the server
 *   has answered or not (5,000 unless given; `Infinity` waits for ever): then it starts without
 *   it, as a new session does, and takes it when it comes (the kept bundle at once, when it is at
 *   the confirmed version). One that fails to load leaves the session on the predictions, and
 *   `engineError` says why;
 * - `usesPredictions`: whether to show predictions when there is no local engine;
 * - `XMLHttpRequest`: what follows the event stream where `fetch` cannot stream a body (React
 *   Native); `globalThis.XMLHttpRequest` unless given, and `eventTransport` (`'auto'`, the default:
 *   `XMLHttpRequest` where the platform's `fetch` has no streaming body, as React Native's, or where
 *   a `fetch` answered without one, `fetch` otherwise; or `'fetch'`, `'xhr'`), `streamRenewAfter` (the characters such a stream holds before it is renewed, 4 Mi);
 * - `retry`, `timeout` (ms), `latency` (ms added before every request, to try the app on a slow
 *   network), `transport` or `fetch` (how requests reach the server), `sleep`, `newKey` and `now`
 *   (injected where a test needs control of time and keys; `newKey` also where the platform has
 *   no `crypto.getRandomValues`: it must return a new key, unique to the tap, on every call, as a
 *   UUID is; a key already used is refused. The default, `randomKey`, makes UUIDv7s: keys that
 *   sort by time cost the server less than random ones).
 *
 * @typedef {{server: string, clientKey?: string, userId: string, userHash?: string, attributes?: JSONObject,
 *   traits?: Record<string, string>, client?: {platform: string, appVersion: string, features: string[]},
 *   store?: SessionStore, engine?: EngineFactory | PromiseLike<EngineFactory>, engineWait?: number, usesPredictions?: boolean, retry?: RetryPolicy, timeout?: number, latency?: number,
 *   transport?: FlowTransport, fetch?: import('./http-transport.js').Fetch, sleep?: (ms: number) => Promise<void>,
 *   XMLHttpRequest?: import('./event-stream.js').XHRConstructor, eventTransport?: 'auto' | 'fetch' | 'xhr', streamRenewAfter?: number,
 *   newKey?: () => string, now?: () => string}} Configuration
 */

/**
 * The server refused to create or resume a session (a problem document: a 422
 * `unsupported-client`, a 403…), or answered something that is not a session.
 */
export class SessionFailure extends Error {
  /** @param {FlowAnswer} answer */
  constructor(answer) {
    const problem = asObject(tryParse(answer.body));
    const named = typeof problem?.detail === 'string' ? problem.detail : typeof problem?.title === 'string' ? problem.title : undefined;
    const body = named === undefined ? answer.body.slice(0, 200) : undefined;
    super(named !== undefined ? `FlowStack answered ${answer.status}: ${named}`
      : body ? `FlowStack answered ${answer.status}, not a session nor a problem: ${body}` : `FlowStack answered ${answer.status} with no body`);
    this.name = 'SessionFailure';
    this.status = answer.status;
    this.problem = problem;
    this.body = body;
  }
}

/**
 * One FlowStack session seen from an app: taps show their next screen at once, are posted in the
 * background, confirmed or corrected, queued while offline, and the session follows other devices.
 *
 * ```js
 * const session = await FlowSession.start({ server: 'https://flows.example.com', userId: 'ada',
 *   store: new KeyValueSessionStore(localStorage), engine: localEngine({ SessionState, readAction }) });
 * session.subscribe((event) => { if (event.type === 'corrected') render(event.correction.to); });
 * const next = await session.send({ type: 'onboarding.showSecond' });   // no network wait
 * ```
 */
export class FlowSession {
  /**
   * @param {SessionConfiguration} configuration
   * @param {FlowTransport} transport
   * @param {StoredSession} stored
   * @param {ClientMachine} machine
   */
  constructor(configuration, transport, stored, machine) {
    this.configuration = configuration;
    this.transport = transport;
    this.stored = stored;
    this.machine = machine;
    this.store = configuration.store ?? new MemorySessionStore();
    this.retry = configuration.retry ?? new RetryPolicy();
    /** @type {(ms: number) => Promise<void>} */
    this.sleep = configuration.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    /** @type {() => string} */
    this.newKey = configuration.newKey ?? randomKey;
    this.now = configuration.now ?? (() => new Date().toISOString());
    /** @type {string | undefined} */
    this.bundleTag = undefined;
    /** @type {(SessionEngine) | undefined} */
    this.bundleCache = undefined;
    /** @type {number | undefined} */
    this.bundleTriedAt = undefined;
    /**
     * The bundle the server sent (or the store kept): its version, text and tag.
     * @type {{version: number, text: string, tag?: string} | undefined}
     */
    this.fetchedBundle = undefined;
    /** Set when the engine came from the store: its bundle is revalidated once the drain is idle. */
    this.revalidateBundle = false;
    this.batchSupported = true;
    this.draining = false;
    this.forcedOffline = false;
    this.closed = false;
    /** @type {{cancelled: boolean} | undefined} */
    this.probe = undefined;
    /** @type {Map<string, {resolve: (state: NavigationState) => void, reject: (error: Error) => void}>} */
    this.waiters = new Map();
    /** @type {Map<string, ActionRefused>} */
    this.refusals = new Map();
    /** @type {Set<(event: ClientEvent) => void>} */
    this.listeners = new Set();
    /** @type {Set<(state: NavigationState) => void>} */
    this.stateListeners = new Set();
    this.published = machine.shown;
    /**
     * Events and states on their way to the listeners, oldest first, each with the listeners
     * that were subscribed when it happened: one a listener causes (a tap as it draws, going
     * offline on an event) waits until the one it is handling has reached every listener.
     * @type {Array<{listeners: Set<(value: any) => void>, to: Array<(value: any) => void>, value: unknown}>}
     */
    this.deliveries = [];
    /** True while `deliver` hands values to the listeners. */
    this.delivering = false;
    /** @type {Array<() => void>} */
    this.settleWaiters = [];
    this.following = false;
    this.followWithTicket = false;
    /** @type {{cancel(): void} | undefined} */
    this.stream = undefined;
    this.streamGeneration = 0;
    /** @type {string | undefined} */
    this.lastEventId = undefined;
    this.streamFailures = 0;
    /** The event stream goes over `XMLHttpRequest`: asked for, or `fetch` showed it cannot stream. */
    this.streamsOverXHR = configuration.eventTransport === 'xhr'
      || ((configuration.eventTransport ?? 'auto') === 'auto' && !fetchCanStream());
    /** @type {number | undefined} */
    this.persistedConfirmedVersion = undefined;
    /** @type {number | undefined} */
    this.persistedBundleVersion = undefined;
    /** @type {WeakMap<QueuedAction, {action: FlowAction, kept: QueuedAction}>} */
    this.keptForms = new WeakMap();
    /**
     * Saves run one after another, in the order they were made.
     * @type {Promise<void>}
     */
    this.saving = Promise.resolve();
    /**
     * The last error the store threw (the save is retried with backoff until one succeeds).
     * @type {unknown}
     */
    this.lastStoreError = undefined;
    /**
     * Why the engine given as a promise did not load (the session draws on the predictions).
     * @type {unknown}
     */
    this.engineError = undefined;
    /** Whether an engine given as a promise is still to come (`settled()` waits for it). */
    this.engineAwaited = false;
    /**
     * An error the drain stopped on: a bug, never a network fault (those are replies).
     * @type {unknown}
     */
    this.lastDrainError = undefined;
    /**
     * The last error one of the app's listeners threw (the session goes on without it).
     * @type {unknown}
     */
    this.lastListenerError = undefined;
    /** Saves that failed in a row: the next is retried after the retry policy's delay for it. */
    this.saveFailures = 0;
    /** True while a retry of a failed save is scheduled. */
    this.saveRetryScheduled = false;
    /**
     * The wait the last answer's `Retry-After` asked for (ms), until the drain hands it on.
     * @type {number | undefined}
     */
    this.lastRetryAfter = undefined;
    /** The least the probe waits before its first try (a `Retry-After` seen as it went offline). */
    this.probeWait = 0;
    /**
     * Every event reported so far, oldest first (the last 1,000).
     * @type {ClientEvent[]}
     */
    this.history = [];
    /**
     * The last time the session was found gone and a new one started.
     * @type {Restart | undefined}
     */
    this.lastRestart = undefined;
  }

  // MARK: starting

  /**
   * Resumes the session kept in the store for this server and user, or starts a new one. A kept
   * session the server no longer knows (a 401 or 404 problem) is replaced by a new one, and
   * `lastRestart` (and a `restarted` event) says so, with the taps it dropped. Taps kept in the
   * store are sent, under the keys they were made with.
   *
   * When no working server answers (no answer, a 5xx, a body that is not FlowStack's, after the
   * retries) and the store kept the session's confirmed state, the session starts from the store
   * alone, offline: the local engine from the kept bundle, the kept taps replayed on it, a probe
   * of `/healthz` with backoff, and the queue sent as batches when the server is back.
   *
   * @param {Configuration} given
   * @returns {Promise<FlowSession>}
   * @throws {SessionFailure} when the server refuses to create the session (422 `unsupported-client`: "update the app")
   * @throws {Unreachable} when no working server answers and nothing is kept to start from
   */
  static async start(given) {
    if (!given.newKey && typeof globalThis.crypto?.getRandomValues !== 'function') {
      throw new TypeError(noRandomKeys);
    }
    const transport = given.transport
      ?? new FetchTransport({ server: given.server, fetch: given.fetch, timeout: given.timeout, latency: given.latency });
    const retry = given.retry ?? new RetryPolicy();
    const store = given.store ?? new MemorySessionStore();
    // An engine still loading is taken below, once a kept session needs it or whenever it comes.
    const loading = isThenable(given.engine) ? engineLoaded(given.engine) : undefined;
    /** @type {SessionConfiguration} */
    const configuration = { ...given, store, retry, engine: loading ? undefined : /** @type {EngineFactory | undefined} */ (given.engine) };
    /** @type {unknown} */
    let engineError;
    const sleep = configuration.sleep ?? ((/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    const usesPredictions = configuration.usesPredictions ?? true;
    const key = new SessionKey(configuration.server, configuration.userId);
    /** @type {{kept: StoredSession, status: number, problem: JSONObject} | undefined} */
    let gone;
    const kept = await store.load(key);
    if (kept) {
      const requests = new SessionRequests(kept.sessionId, kept.token);
      const { reply, answer } = await attempt(retry, transport, requests.reload(), 200, sleep);
      const sorted = ClientMachine.classify(reply);
      if (loading && (sorted.kind === 'success' || sorted.kind === 'unknown')) {
        // Loading while the session was asked for; the kept bundle and queue need it now, but an
        // engine that does not come (a stalled chunk) must not keep the app from its screen: past
        // `engineWait` the session starts without it and takes it when it comes.
        const loaded = await awaitedFor(loading, configuration.engineWait ?? 5000);
        if (loaded && 'factory' in loaded) configuration.engine = loaded.factory;
        else if (loaded) engineError = loaded.error;
      }
      if (sorted.kind === 'success' || sorted.kind === 'unknown') {
        const read = sorted.kind === 'success' ? ClientMachine.tryRead(sorted.json) : undefined;
        if (read && read.state.sessionId === kept.sessionId) {
          const machine = new ClientMachine(read.state, { predictions: usesPredictions ? read.predictions : [], retry });
          machine.restore(kept.queue);
          // The kept bundle, when it is at the version the server is at: the engine is there from
          // the first tap, and revalidated (If-None-Match) in the background.
          const bundle = keptBundle(configuration, kept, read.state.version);
          if (bundle) machine.loaded(bundle);
          const session = new FlowSession(configuration, transport, kept, machine);
          if (bundle) {
            session.resumedOnline(bundle, kept);
          } else if (kept.queue.length > 0 && configuration.engine) {
            // Taps kept from before the kill are replayed on the bundle, so they show again at once.
            session.bundleTriedAt = machine.confirmed.version;
            await session.refreshBundle();
            // Not loaded: the kept taps were made on an earlier version (the server applied them
            // and the answer was lost). Once they are answered the bundle is asked for again
            // (a 304), or the session would go on without an engine and the next tap would wait.
            if (machine.needsBundle) session.bundleTriedAt = undefined;
          }
          session.afterStart();
          session.engineAfterStart(loading, engineError, 0);
          return session;
        }
        // No working server: start from what the store kept, offline.
        const session = FlowSession.restoredOffline(configuration, transport, kept);
        if (session) {
          session.engineAfterStart(loading, engineError, 0);
          return session;
        }
        if (answer) throw new SessionFailure(answer);
        throw new Unreachable('noAnswer' in reply ? reply.noAnswer : 'no answer');
      }
      if (sorted.kind === 'gone') {
        gone = { kept, status: sorted.status, problem: sorted.problem };
      } else {
        throw answer ? new SessionFailure(answer) : new Unreachable('no answer');
      }
    }
    const { reply, answer } = await attempt(retry, transport, createRequest(configuration), 201, sleep);
    if (!answer) throw new Unreachable('noAnswer' in reply ? reply.noAnswer : 'no answer');
    const made = created(answer, usesPredictions);
    if (!made) {
      const sorted = ClientMachine.classify(reply, 201);
      if (sorted.kind === 'unknown') throw new Unreachable(sorted.detail);
      throw new SessionFailure(answer);
    }
    /** @type {StoredSession} */
    const stored = { server: normalizeServer(configuration.server), sessionId: made.id, token: made.token, userId: configuration.userId, queue: [] };
    /** @type {{error: unknown} | undefined} */
    let unsaved;
    try {
      await store.save(stored);
    } catch (error) {
      // A full store (localStorage's quota) does not keep the app from its first screen: the
      // session saves it again with backoff, as it does every save (`lastStoreError`).
      unsaved = { error };
    }
    const machine = new ClientMachine(made.state, { predictions: made.predictions, retry });
    /** @type {ClientEvent[]} */
    let events = [];
    if (gone) {
      machine.restore(gone.kept.queue);
      events = machine.restarted(made.state, { predictions: made.predictions, oldSession: gone.kept.sessionId, status: gone.status, problem: gone.problem });
    }
    const session = new FlowSession(configuration, transport, { ...stored, queue: [] }, machine);
    if (unsaved) session.lastStoreError = unsaved.error;
    session.emit(events);
    session.afterStart();
    // A new session's bundle is fetched when its engine is there (a kept one the server still
    // knows waited above, up to `engineWait`).
    session.engineAfterStart(loading, engineError, configuration.engineWait ?? 5000);
    return session;
  }

  /**
   * A session made from the store alone: the confirmed state, the bundle (its engine), the queued
   * taps replayed on it; offline, probing `/healthz`. Undefined when the store kept no state or
   * what it kept does not read.
   * @param {SessionConfiguration} configuration
   * @param {FlowTransport} transport
   * @param {StoredSession} kept
   */
  static restoredOffline(configuration, transport, kept) {
    let confirmed;
    try {
      confirmed = kept.confirmed ? NavigationState.fromJSON(kept.confirmed) : undefined;
    } catch {
      confirmed = undefined;
    }
    if (!confirmed || confirmed.sessionId !== kept.sessionId) return undefined;
    const bundle = keptBundle(configuration, kept);
    const machine = ClientMachine.restoredOffline(confirmed, bundle, kept.queue, configuration.retry);
    const session = new FlowSession(configuration, transport, kept, machine);
    session.persistedConfirmedVersion = machine.confirmed.version;
    if (bundle && kept.bundle !== undefined) {
      session.rememberBundle(bundle, kept.bundle, kept.bundleTag);
      session.persistedBundleVersion = bundle.version;
    }
    session.emit([{ type: 'offline' }]);
    session.persist();
    session.startProbe();
    return session;
  }

  /**
   * Resumed online on the kept bundle: the first request the drain makes when idle revalidates it.
   * @param {SessionEngine} bundle
   * @param {StoredSession} kept
   */
  resumedOnline(bundle, kept) {
    if (kept.bundle !== undefined) this.rememberBundle(bundle, kept.bundle, kept.bundleTag);
    this.persistedBundleVersion = bundle.version;
    this.revalidateBundle = true;
  }

  afterStart() {
    this.persist();
    this.publish();
    this.drain();
  }

  /**
   * What `start` learnt of an engine given as a promise: why it failed, or, when it is still to
   * come, that it is taken when it does (`settled()` waiting for it up to `wait` ms).
   * @param {Promise<{factory: EngineFactory} | {error: unknown}> | undefined} loading
   * @param {unknown} error
   * @param {number} wait
   */
  engineAfterStart(loading, error, wait) {
    this.engineError = error;
    if (loading && this.configuration.engine === undefined && error === undefined) this.engineComing(loading, wait);
  }

  /**
   * The engine given as a promise, taken when it comes: the bundle the store kept, when it is at
   * the confirmed version (a kept session that did not wait for it), is loaded at once and its
   * kept taps replayed on it; otherwise the drain fetches the bundle and loads it; taps are drawn
   * on it from there.
   *
   * `settled()` waits for it `wait` ms at most (a new session's `engineWait`; none for a kept
   * session, which waited in `start`), so a chunk that never comes does not hold it for ever.
   * @param {Promise<{factory: EngineFactory} | {error: unknown}>} loading
   * @param {number} wait
   */
  engineComing(loading, wait) {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    if (wait > 0) {
      this.engineAwaited = true;
      if (Number.isFinite(wait)) {
        timer = setTimeout(() => {
          this.engineAwaited = false;
          this.notifySettled();
        }, wait);
        // Not a reason for node to stay up (a script that closed its session exits).
        /** @type {any} */ (timer)?.unref?.();
      }
    }
    loading.then((loaded) => {
      clearTimeout(timer);
      this.engineAwaited = false;
      if (this.closed) return;
      if ('error' in loaded) {
        this.engineError = loaded.error;
        this.notifySettled();
        return;
      }
      this.configuration.engine = loaded.factory;
      this.loadKeptBundle();
      this.drain();
      this.notifySettled();
    });
  }

  /**
   * The engine came after the session started from the store: the bundle the store kept, when it
   * is at the confirmed version, becomes the local engine (revalidated by the drain when online),
   * and the kept taps show on it again.
   */
  loadKeptBundle() {
    const kept = this.stored;
    if (this.machine.engine !== undefined || kept.bundle === undefined) return;
    const bundle = keptBundle(this.configuration, kept, this.machine.confirmed.version);
    if (!bundle) return;
    this.machine.loaded(bundle);
    if (this.machine.confirmedEngine !== bundle) return;  // taps on the wire: the drain asks for it later
    this.rememberBundle(bundle, kept.bundle, kept.bundleTag);
    this.persistedBundleVersion = bundle.version;
    if (!this.machine.offline) this.revalidateBundle = true;
    this.publish();
    this.resolveWaiters();
  }

  // MARK: what the app reads

  /** What to show now: the confirmed state with the taps not yet confirmed applied. */
  get state() {
    return this.machine.shown;
  }

  /** The last state the server answered. */
  get confirmedState() {
    return this.machine.confirmed;
  }

  /** The session's id (`s_…`); a new one after the session was found gone. */
  get sessionId() {
    return this.stored.sessionId;
  }

  /** The session's token, as kept in the store. */
  get token() {
    return this.stored.token;
  }

  /** Taps shown and not yet confirmed. */
  get pendingCount() {
    return this.machine.queue.length;
  }

  /** The taps not yet confirmed, oldest first, with their keys. */
  get pending() {
    return this.machine.queue.slice();
  }

  /** True while the server cannot be reached (or `setOffline(true)` said so). */
  get isOffline() {
    return this.machine.offline;
  }

  /** True when taps run on the local engine (the session's bundle is loaded). */
  get hasLocalEngine() {
    return this.machine.engine !== undefined;
  }

  /** The session's flag values and experiment variants. */
  get flags() {
    return new SessionFlags(this.machine.shown);
  }

  /**
   * The actions the screen on top can post now, from the local engine (with their params), or
   * else from the last answer's predictions (those that need no params), which are for the
   * confirmed state only: none while a tap shown ahead of them waits for its answer. A row tap
   * (local engine only: row taps are not predicted) has `rowKinds`, the kinds of rows it takes.
   * @returns {Array<{type: string, handledBy: string, interactive: boolean, params: Array<{name: string, type: string, required: boolean}>, rowKinds?: string[]}>}
   */
  get availableActions() {
    const engine = /** @type {SessionEngine | undefined} */ (this.machine.engine);
    if (engine && typeof engine.availableActions === 'function') return engine.availableActions();
    if (!this.machine.shown.equals(this.machine.confirmed)) return [];
    const seen = new Set();
    /** @type {Array<{type: string, handledBy: string, interactive: boolean, params: Array<{name: string, type: string, required: boolean}>}>} */
    const actions = [];
    for (const prediction of this.machine.predictions) {
      if (seen.has(prediction.action.type)) continue;
      seen.add(prediction.action.type);
      actions.push({ type: prediction.action.type, handledBy: prediction.state.handledBy ?? '', interactive: Boolean(prediction.action.interactive), params: [] });
    }
    return actions;
  }

  /**
   * Calls `listener` with everything that happens: confirmations, corrections, other devices'
   * versions, offline and back online, restarts. Returns the function that stops it.
   * @param {(event: ClientEvent) => void} listener
   * @returns {() => void}
   */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` with every state the app should show, in order: the one shown now first,
   * then each change (a tap shown at once, a correction, another device's version, a new
   * session after a restart). Returns the function that stops it.
   * @param {(state: NavigationState) => void} listener
   * @returns {() => void}
   */
  subscribeStates(listener) {
    listener(this.published);
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** @param {ClientEvent[]} events */
  emit(events) {
    for (const event of events) {
      if (event.type === 'corrected') {
        // A tap that waited and was not taken: its caller is told why.
        const named = asObject(event.correction.problem)?.status;
        const status = typeof named === 'number' ? named : 409;
        for (const tap of event.correction.taps) {
          if (this.waiters.has(tap.key)) this.refusals.set(tap.key, new ActionRefused(tap.action, status, event.correction.problem));
        }
      } else if (event.type === 'restarted') {
        this.lastRestart = event.restart;
        for (const tap of event.restart.dropped) {
          if (this.waiters.has(tap.key)) this.refusals.set(tap.key, new ActionRefused(tap.action, event.restart.status, event.restart.problem));
        }
      }
      this.history.push(event);
      this.deliveries.push({ listeners: this.listeners, to: [...this.listeners], value: event });
    }
    if (this.history.length > 1000) this.history.splice(0, this.history.length - 1000);
    this.publish();
    this.deliver();
  }

  /** Sends the state shown to the state listeners when it changed. */
  publish() {
    const shown = this.machine.shown;
    if (shown.equals(this.published)) return;
    this.published = shown;
    this.deliveries.push({ listeners: this.stateListeners, to: [...this.stateListeners], value: shown });
    this.deliver();
  }

  /**
   * Hands the waiting events and states to the listeners, one at a time, each to every listener
   * before the next. A listener that taps or goes offline makes another while it is called: that
   * one waits its turn here, so no listener gets it before the one it follows, nor ends on a
   * state older than the one shown (as the Swift client's streams deliver them).
   */
  deliver() {
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let next = this.deliveries.shift(); next; next = this.deliveries.shift()) {
        // A listener unsubscribed (or the session closed) meanwhile is not called.
        for (const listener of next.to) if (next.listeners.has(listener)) this.call(listener, next.value);
      }
    } finally {
      this.delivering = false;
    }
  }

  /**
   * Calls one of the app's listeners. One that throws is the app's bug, not the session's: it must
   * not stop the drain (taps would never be sent, \`settled()\` and waiting taps never settle) nor
   * reject a \`send\` whose tap is queued (an app that retried would apply it twice). Its error is
   * kept in \`lastListenerError\` and reported with \`reportError\` where the platform has it (a
   * browser's console and \`error\` event).
   * @template T
   * @param {(value: T) => void} listener
   * @param {T} value
   */
  call(listener, value) {
    try {
      listener(value);
    } catch (error) {
      this.lastListenerError = error;
      const report = /** @type {{reportError?: (error: unknown) => void}} */ (globalThis).reportError;
      if (typeof report === 'function') {
        try {
          report(error);
        } catch {
          // Reporting is best effort.
        }
      }
    }
  }

  // MARK: acting

  /**
   * Applies `action` and returns what to show, at once when the local engine (or a prediction)
   * can tell; then posts it with `If-Match` and an idempotency key in the background. The answer
   * confirms it, or corrects it (a `corrected` event). With neither engine nor prediction, it
   * waits for the answer.
   *
   * The tap is in the store before the promise resolves, unless the store fails (a full
   * `localStorage`): then the save is retried with backoff until it succeeds (`lastStoreError`
   * says why it failed) and the tap is still sent while the app runs. The promise does not reject
   * for a failed save: the tap is queued and goes to the server, so an app that sent it again
   * would apply it twice. A promise that rejects means the tap was not queued, except for a tap
   * that waited and was refused by the server or could not be answered (below).
   *
   * Each tap's idempotency key (`newKey`) must be new: a key already queued or on the wire is
   * refused, since the server would answer the second tap with the first's state (or 422
   * `idempotency-key-reused`).
   *
   * @param {FlowAction} action
   * @returns {Promise<NavigationState>}
   * @throws {TypeError} when the action is not one the client can post and keep (see
   *   `checkedAction`: a BigInt or a cycle in its params, a `from` that is not a string), or the
   *   key `newKey` gave is not new (nothing is queued)
   * @throws {Unreachable} when the session is closed (nothing is queued), or a tap that waited
   *   cannot be answered because the client is offline (it stays queued)
   * @throws the engine's refusal when the local engine refuses it (nothing is posted), or
   *   `ActionRefused` when a tap that waited was not taken by the server
   */
  async send(action) {
    if (this.closed) throw new Unreachable('the session is closed; the tap was not queued');
    const checked = checkedAction(action);
    const key = this.newKey();
    if (typeof key !== 'string' || key === '') throw new TypeError(`newKey must return a non-empty string, not ${typeof key}; the tap was not queued`);
    if (this.machine.queue.some((item) => item.key === key) || this.machine.sent.has(key) || this.waiters.has(key)) {
      throw new TypeError(`newKey returned ${JSON.stringify(key)}, a key already used for a tap of this session; each tap needs a new key (the tap was not queued)`);
    }
    const result = this.machine.tap(checked, key, this.now());
    if (result.kind === 'shown') {
      // Sent first, then shown: a state listener's error is the app's and does not reject a tap
      // that is queued. Kept in the store after it is shown: the draw does not wait for the
      // store's copy of the queue, and the promise still resolves only once the store has the
      // tap (a listener that taps or closes the session saves it with its own).
      this.drain();
      this.publish();
      await this.persist();
      return result.state;
    }
    const saved = this.persist();
    /** @type {Promise<NavigationState>} */
    const answered = new Promise((resolve, reject) => this.waiters.set(key, { resolve, reject }));
    // It may be rejected (offline, refused, closed) while the store is still writing the tap,
    // before the caller holds it: not an unhandled rejection (node exits on one), since the
    // caller gets it below.
    answered.catch(() => {});
    this.drain();
    this.publish();
    this.resolveWaiters();
    await saved;
    return answered;
  }

  /**
   * Simulates losing the network (true) or getting it back (false): while offline, taps are
   * applied locally and queued; when back, the queue goes in batches.
   * @param {boolean} offline
   */
  setOffline(offline) {
    this.forcedOffline = offline;
    if (offline) {
      this.emit(this.machine.unreachable());
      this.stopStream();
      if (this.probe) this.probe.cancelled = true;
      this.probe = undefined;
      this.resolveWaiters();
    } else {
      this.emit(this.machine.reachable());
      if (this.following) this.connectEvents();
      this.drain();
    }
  }

  /**
   * Resolves when nothing is queued or on the wire (after coming back online if need be) and an
   * engine given as a promise has come (and run the bundle, when online), or once the session is
   * closed or its drain stopped on a bug (`lastDrainError`).
   * @returns {Promise<void>}
   */
  settled() {
    if (this.isSettled || this.closed) return this.saving;
    return new Promise((resolve) => this.settleWaiters.push(() => resolve(this.saving)));
  }

  get isSettled() {
    return this.machine.queue.length === 0 && !this.draining && this.machine.gone === undefined && !this.engineAwaited;
  }

  notifySettled() {
    if (!this.isSettled) return;
    const waiting = this.settleWaiters;
    this.settleWaiters = [];
    for (const waiter of waiting) waiter();
  }

  /**
   * Stops following events, probing and sending; the session stays on the server (and in the
   * store, with the taps not yet confirmed: the next `start` sends them). A tap still waiting for
   * its answer rejects with `Unreachable`, `settled()` resolves, and a later `send` rejects with
   * `Unreachable`. Nothing is written to the store after the promise resolves: an answer still on
   * the wire is not kept (the tap stays queued in the store and the next `start` sends it again
   * under its key, answered from the server's log), so a new session on the same store (a
   * remount) is not overwritten by this one.
   * @returns {Promise<void>} when the store has everything
   */
  close() {
    // What changed since the last save (or a save that failed and waits for its retry) is written
    // now: it is the last chance.
    if (!this.closed) this.persist();
    this.closed = true;
    this.following = false;
    this.stopStream();
    if (this.probe) this.probe.cancelled = true;
    this.probe = undefined;
    for (const [key, waiter] of this.waiters) {
      this.waiters.delete(key);
      waiter.reject(new Unreachable('the session was closed; the tap stays queued in the store'));
    }
    const settling = this.settleWaiters;
    this.settleWaiters = [];
    for (const waiter of settling) waiter();
    this.listeners.clear();
    this.stateListeners.clear();
    return this.saving;
  }

  // MARK: the turn

  drain() {
    if (this.draining || this.closed) return;
    this.draining = true;
    this.drainLoop().catch((error) => {
      // A bug, not a network fault (those are replies): stop draining rather than spin, and say
      // so. The request it stopped in is not on the wire any more (the next drain sends it
      // again, under its key); taps that wait are told, and `settled()` resolves.
      this.draining = false;
      this.lastDrainError = error;
      this.machine.unsent();
      this.resolveWaiters();
      for (const [key, waiter] of this.waiters) {
        this.waiters.delete(key);
        waiter.reject(new Error(`the session stopped sending on a bug (${describe(error)}); the tap stays queued and goes with the next one`));
      }
      const settling = this.settleWaiters;
      this.settleWaiters = [];
      for (const waiter of settling) waiter();
    });
  }

  /** Performs what the machine asks, one request at a time, and hands each reply back to it. */
  async drainLoop() {
    while (!this.closed) {
      const command = this.machine.nextCommand(this.batchSupported);
      if (command) {
        switch (command.kind) {
          case 'pause':
            await this.sleep(command.ms);
            break;
          case 'post': {
            const predict = this.machine.engine === undefined && (this.configuration.usesPredictions ?? true);
            this.emit(this.machine.handle(await this.perform(this.requests.post(command.item, predict)), command));
            break;
          }
          case 'batch': {
            const reply = await this.perform(this.requests.batch(command.items));
            if ('status' in reply && reply.status === 405) {
              // A server without the batch route: the same taps go one by one.
              this.batchSupported = false;
              this.machine.unsent();
            } else {
              this.emit(this.machine.handle(reply, command));
            }
            break;
          }
          case 'reload':
            this.emit(this.machine.handle(await this.perform(this.requests.reload()), command));
            break;
          case 'create':
            await this.recreate();
            break;
        }
        this.honourRetryAfter();
        if (this.machine.offline && !this.forcedOffline) this.startProbe();
        this.persist();
        this.publish();
        this.resolveWaiters();
        continue;
      }
      const machine = this.machine;
      if (this.configuration.engine && !machine.offline && (this.revalidateBundle
        || (machine.needsBundle && machine.queue.every((item) => item.expected === undefined) && this.bundleTriedAt !== machine.confirmed.version))) {
        this.revalidateBundle = false;
        this.bundleTriedAt = machine.confirmed.version;
        await this.refreshBundle();
        this.persist();
        this.publish();
        this.resolveWaiters();
        continue;
      }
      break;
    }
    this.draining = false;
    this.resolveWaiters();
    this.notifySettled();
  }

  /**
   * Sends one request: the answer as a reply for the machine, or no answer.
   * @param {FlowRequest} request
   * @returns {Promise<Reply>}
   */
  async perform(request) {
    this.lastRetryAfter = undefined;
    try {
      const answer = await this.transport.send(request);
      if (answer.retryAfter !== undefined && (answer.status === 429 || answer.status === 503)) this.lastRetryAfter = answer.retryAfter;
      return replyOf(answer);
    } catch (error) {
      return { noAnswer: error instanceof Unreachable ? error.detail : describe(error) };
    }
  }

  /**
   * The last answer asked for a wait (`Retry-After` on a 429 or 503): the machine's pause is at
   * least that long, and so is the probe's first wait when it went offline.
   */
  honourRetryAfter() {
    const ms = this.lastRetryAfter;
    if (ms === undefined) return;
    this.lastRetryAfter = undefined;
    this.machine.retryAfter(ms);
    if (this.machine.offline) this.probeWait = Math.max(this.probeWait, ms);
  }

  /** The requests of the session as it is now (a restart changes its id and token). */
  get requests() {
    return new SessionRequests(this.stored.sessionId, this.stored.token);
  }

  /**
   * Resolves the callers of taps that waited: with the state they show once they show one, with
   * the server's reason when they were not taken, and with `Unreachable` while offline (the tap
   * stays queued).
   */
  resolveWaiters() {
    for (const [key, waiter] of this.waiters) {
      const item = this.machine.queue.find((queued) => queued.key === key);
      if (item) {
        if (item.expected) {
          this.waiters.delete(key);
          waiter.resolve(item.expected);
        } else if (this.machine.offline) {
          this.waiters.delete(key);
          waiter.reject(new Unreachable('offline, and no bundle or prediction to show the tap with; it stays queued'));
        }
        continue;
      }
      this.waiters.delete(key);
      const refusal = this.refusals.get(key);
      this.refusals.delete(key);
      if (refusal) waiter.reject(refusal);
      else waiter.resolve(this.machine.shown);
    }
  }

  /**
   * The session is gone (the machine read a 401 or 404 problem for it): a new one is created for
   * the same user and the machine restarts on it, reporting the taps it drops; a creation that
   * gets no usable answer is retried like any unknown outcome.
   */
  async recreate() {
    const old = this.stored.sessionId;
    let answer;
    try {
      answer = await this.transport.send(createRequest(this.configuration));
    } catch (error) {
      this.emit(this.machine.createFailed(`no answer: ${error instanceof Unreachable ? error.detail : describe(error)}`));
      return;
    }
    const made = created(answer, this.configuration.usesPredictions ?? true);
    if (!made) {
      this.emit(this.machine.createFailed(`session creation answered ${answer.status}`));
      return;
    }
    this.stopStream();
    this.stored = { server: normalizeServer(this.configuration.server), sessionId: made.id, token: made.token, userId: this.configuration.userId, queue: [] };
    this.fetchedBundle = undefined;
    this.bundleTag = undefined;
    this.bundleCache = undefined;
    this.bundleTriedAt = undefined;
    this.persistedConfirmedVersion = undefined;
    this.persistedBundleVersion = undefined;
    this.lastEventId = undefined;
    this.batchSupported = true;
    const events = this.machine.restarted(made.state, { predictions: made.predictions, oldSession: old });
    this.persist();
    this.emit(events);
    if (this.following) this.connectEvents();
  }

  /** Fetches the session's bundle (revalidating the one kept) and loads it as the local engine. */
  async refreshBundle() {
    const factory = this.configuration.engine;
    if (!factory) return;
    let answer;
    try {
      answer = await this.transport.send(this.requests.bundle(this.bundleTag));
    } catch {
      return;
    }
    if (answer.status === 304 && this.bundleCache) {
      this.machine.loaded(this.bundleCache);
      return;
    }
    if (answer.status !== 200) return;
    let bundle;
    try {
      bundle = factory.fromBundle(answer.body);
    } catch {
      return;
    }
    if (bundle.sessionId !== this.stored.sessionId) return;
    this.rememberBundle(bundle, answer.body, answer.etag);
    this.machine.loaded(bundle);
  }

  /**
   * @param {SessionEngine} bundle
   * @param {string} text
   * @param {string | undefined} tag
   */
  rememberBundle(bundle, text, tag) {
    this.fetchedBundle = { version: bundle.version, text, tag };
    this.bundleTag = tag;
    this.bundleCache = bundle;
  }

  /**
   * Probes `/healthz` with backoff until the server answers, then sends what is queued (after the
   * pause the machine owes for the unknown outcomes in a row, which do not start again at the
   * first delay).
   */
  startProbe() {
    if (this.probe || this.forcedOffline || this.closed) return;
    const probe = { cancelled: false };
    this.probe = probe;
    (async () => {
      for (let attempt = 1; !probe.cancelled; attempt++) {
        // The backoff goes on from where the unknown outcomes left it (a server that answers
        // `/healthz` and fails every request is not asked at the first delay after each probe),
        // and the first wait is at least what a `Retry-After` asked for.
        const wait = Math.max(this.retry.delay(this.machine.streak + attempt - 1), this.probeWait);
        this.probeWait = 0;
        await this.sleep(wait);
        if (probe.cancelled) return;
        try {
          const answer = await this.transport.send({ method: 'GET', path: '/healthz' });
          if (answer.status === 200 && !probe.cancelled) {
            this.backOnline();
            return;
          }
        } catch {
          // still unreachable
        }
      }
    })();
  }

  backOnline() {
    this.probe = undefined;
    if (this.forcedOffline || this.closed) return;
    this.emit(this.machine.reachable());
    this.bundleTriedAt = undefined;
    if (this.following && !this.stream) this.connectEvents();
    this.drain();
  }

  /**
   * Writes the store when what it keeps changed: the queue (on every tap), the confirmed state
   * (when its version moves), the bundle (when the engine at the confirmed version is the one the
   * server sent). Saves go one after another; the promise is that of this one.
   * @returns {Promise<void>}
   */
  persist() {
    // Once closed, the store is no longer this session's: a new one (a remount) may own it.
    if (this.closed) return this.saving;
    const machine = this.machine;
    const stored = this.stored;
    let changed = false;
    const queue = machine.queue;
    if (queue.length !== stored.queue.length || queue.some((item, index) => stored.queue[index].key !== item.key)) {
      stored.queue = queue.map((item) => this.keptForm(item));
      changed = true;
    }
    if (this.persistedConfirmedVersion !== machine.confirmed.version) {
      this.persistedConfirmedVersion = machine.confirmed.version;
      stored.confirmed = machine.confirmed.document;
      changed = true;
    }
    const engine = /** @type {SessionEngine | undefined} */ (machine.confirmedEngine);
    const fetched = this.fetchedBundle;
    if (this.configuration.engine && engine && engine.version === machine.confirmed.version && this.persistedBundleVersion !== engine.version && fetched) {
      this.persistedBundleVersion = engine.version;
      if (fetched.version === engine.version) {
        stored.bundle = fetched.text;
        if (fetched.tag !== undefined) stored.bundleTag = fetched.tag;
        else delete stored.bundleTag;
        changed = true;
      } else if (typeof engine.bundle === 'function') {
        // The engine moved on from the bundle fetched (answers confirmed local taps): its own
        // bundle is kept, without a tag (it is not one the server sent).
        try {
          stored.bundle = engine.bundle(fetched.text);
          delete stored.bundleTag;
          changed = true;
        } catch {
          // An engine that cannot write its bundle: the one kept stays (older, so unused offline).
        }
      }
    }
    if (!changed && this.saveFailures === 0) return this.saving;
    return this.saveNow();
  }

  /**
   * The tap as the store keeps it, made once per tap (again only if its action changed: a tap
   * that waited takes its prediction's), not for the whole queue on every tap.
   * @param {QueuedAction} item
   * @returns {QueuedAction}
   */
  keptForm(item) {
    let form = this.keptForms.get(item);
    if (form?.action !== item.action) this.keptForms.set(item, form = { action: item.action, kept: keptItem(item) });
    return /** @type {{kept: QueuedAction}} */ (form).kept;
  }

  /**
   * Saves what the store keeps as it is now, after the saves before it. A save that fails is
   * retried with the retry policy's backoff (and by any later change) until one succeeds: a tap
   * the store lost would be lost with the app.
   * @returns {Promise<void>}
   */
  saveNow() {
    const snapshot = { ...this.stored, queue: this.stored.queue.slice() };
    this.saving = this.saving.then(async () => {
      try {
        await this.store.save(snapshot);
        this.saveFailures = 0;
      } catch (error) {
        this.lastStoreError = error;
        this.saveFailures += 1;
        this.scheduleSaveRetry();
      }
    });
    return this.saving;
  }

  scheduleSaveRetry() {
    if (this.saveRetryScheduled || this.closed) return;
    this.saveRetryScheduled = true;
    this.sleep(this.retry.delay(this.saveFailures)).then(() => {
      this.saveRetryScheduled = false;
      if (this.saveFailures > 0) this.persist();
    });
  }

  // MARK: following

  /**
   * Follows the session's event stream (`GET …/events`, `Last-Event-ID` on reconnection, with
   * backoff): versions other devices make are adopted and reported as `remote`. With `ticket`,
   * each connection first asks `POST …/events/ticket` and opens `…/events?ticket=…` without the
   * token, as a browser's `EventSource` must.
   * @param {{ticket?: boolean}} [options]
   */
  follow(options = {}) {
    const { ticket = false } = options;
    if (this.following) return;
    this.following = true;
    this.followWithTicket = ticket;
    this.connectEvents();
  }

  /** Stops following the event stream. */
  stopFollowing() {
    this.following = false;
    this.stopStream();
  }

  stopStream() {
    this.streamGeneration += 1;
    this.stream?.cancel();
    this.stream = undefined;
  }

  connectEvents() {
    if (!this.following || this.forcedOffline || this.closed) return;
    this.stopStream();
    const generation = this.streamGeneration;
    const fetchFunction = this.configuration.fetch ?? ((/** @type {string} */ input, /** @type {RequestInit | undefined} */ init) => globalThis.fetch(input, init));
    const base = this.configuration.server.replace(/\/+$/, '') + this.requests.path + '/events';
    /** A placeholder until the ticket is had, so `stopStream` during that wait is seen. */
    this.stream = { cancel() {} };
    (async () => {
      /** @type {Record<string, string>} */
      let headers = this.requests.authorization;
      let url = base;
      if (this.followWithTicket) {
        const answer = await this.transport.send(this.requests.ticket()).catch(() => undefined);
        const ticket = answer?.status === 201 || answer?.status === 200 ? asObject(tryParse(answer.body))?.ticket : undefined;
        if (generation !== this.streamGeneration) return;
        if (typeof ticket !== 'string') {
          this.streamEnded(generation);
          return;
        }
        headers = {};
        url = `${base}?ticket=${encodeURIComponent(ticket)}`;
      }
      if (this.lastEventId !== undefined) headers['Last-Event-ID'] = this.lastEventId;
      const XHR = this.configuration.XMLHttpRequest ?? /** @type {any} */ (globalThis).XMLHttpRequest;
      const auto = (this.configuration.eventTransport ?? 'auto') === 'auto';
      /**
       * @param {number | undefined} _status
       * @param {string} _detail
       * @param {boolean} [unsupported]
       * @param {boolean} [renew]
       */
      const onEnd = (_status, _detail, unsupported, renew) => {
        if (generation !== this.streamGeneration) return;
        if (renew) {
          // The XMLHttpRequest let go of the text it held: go on from the last event at once.
          this.connectEvents();
        } else if (unsupported && auto && XHR) {
          // A fetch that cannot stream (React Native's): the stream goes over XMLHttpRequest.
          this.streamsOverXHR = true;
          this.connectEvents();
        } else if (unsupported) {
          // Nothing here can stream: asking again would only fail again.
          this.stopFollowing();
        } else {
          this.streamEnded(generation);
        }
      };
      const onEvent = (/** @type {import('./event-stream.js').ServerSentEvent} */ event) => this.receivedEvent(event, generation);
      this.stream = this.streamsOverXHR && XHR
        ? openXHREventStream({ XMLHttpRequest: XHR, url, headers, onEvent, onEnd, renewAfter: this.configuration.streamRenewAfter })
        : openEventStream({ fetch: fetchFunction, url, headers, onEvent, onEnd });
    })();
  }

  /**
   * @param {import('./event-stream.js').ServerSentEvent} event
   * @param {number} generation
   */
  receivedEvent(event, generation) {
    if (generation !== this.streamGeneration) return;
    this.streamFailures = 0;
    if (event.id !== undefined) this.lastEventId = event.id;
    if (event.event === 'state') {
      let state;
      try {
        state = NavigationState.fromJSON(JSON.parse(event.data));
      } catch {
        return;
      }
      this.emit(this.machine.received(state));
      this.persist();
      if (this.machine.needsBundle) this.drain();
    } else if (event.event === 'deleted') {
      this.following = false;
    }
  }

  /** @param {number} generation */
  async streamEnded(generation) {
    if (generation !== this.streamGeneration || !this.following) return;
    this.streamFailures += 1;
    await this.sleep(this.retry.delay(this.streamFailures));
    if (generation !== this.streamGeneration || !this.following) return;
    this.connectEvents();
  }
}

/**
 * Sends `request` until it has an answer that says something (a success or a problem document),
 * or the retry policy's tries are spent: the last reply, and its answer if any.
 * @param {RetryPolicy} policy
 * @param {FlowTransport} transport
 * @param {FlowRequest} request
 * @param {number} success
 * @param {(ms: number) => Promise<void>} sleep
 * @returns {Promise<{reply: Reply, answer?: FlowAnswer}>}
 */
async function attempt(policy, transport, request, success, sleep) {
  for (let tried = 1; ; tried++) {
    /** @type {FlowAnswer | undefined} */
    let answer;
    /** @type {Reply} */
    let reply;
    try {
      answer = await transport.send(request);
      reply = replyOf(answer);
    } catch (error) {
      reply = { noAnswer: error instanceof Unreachable ? error.detail : describe(error) };
    }
    if (ClientMachine.classify(reply, success).kind === 'unknown' && tried < policy.attempts) {
      await sleep(policy.delay(tried));
      continue;
    }
    return answer ? { reply, answer } : { reply };
  }
}

/**
 * `POST /v1/sessions?predict=true` for the configured user.
 * @param {Configuration} configuration
 * @returns {FlowRequest}
 */
function createRequest(configuration) {
  /** @type {Record<string, unknown>} */
  const body = { userId: configuration.userId };
  if (configuration.userHash !== undefined) body.userHash = configuration.userHash;
  if (configuration.attributes && Object.keys(configuration.attributes).length > 0) body.attributes = configuration.attributes;
  if (configuration.traits && Object.keys(configuration.traits).length > 0) {
    /** @type {Record<string, string>} */
    const traits = {};
    for (const key of Object.keys(configuration.traits).sort()) traits[key] = configuration.traits[key];
    body.traits = traits;
  }
  if (configuration.client) {
    const { platform, appVersion, features } = configuration.client;
    body.client = { platform, appVersion, features };
  }
  return {
    method: 'POST', path: '/v1/sessions', query: 'predict=true',
    headers: configuration.clientKey !== undefined ? { 'X-API-Key': configuration.clientKey } : {}, body: JSON.stringify(body),
  };
}

/**
 * A session-creation answer: the new id and token, its state and predictions; undefined when it
 * is not a 201 with all of them.
 * @param {FlowAnswer} answer
 * @param {boolean} usesPredictions
 * @returns {{id: string, token: string, state: NavigationState, predictions: Prediction[]} | undefined}
 */
function created(answer, usesPredictions) {
  if (answer.status !== 201) return undefined;
  const json = asObject(tryParse(answer.body));
  const session = asObject(json?.session);
  if (!json || !session || typeof session.id !== 'string' || typeof session.token !== 'string' || json.state == null) return undefined;
  const read = ClientMachine.tryRead(json.state);
  if (!read) return undefined;
  return { id: session.id, token: session.token, state: read.state, predictions: usesPredictions ? read.predictions : [] };
}

/**
 * The bundle the store kept, as a local engine, when it reads, is the session's and (when
 * `version` is given) is at that version.
 * @param {SessionConfiguration} configuration
 * @param {StoredSession} kept
 * @param {number} [version]
 */
function keptBundle(configuration, kept, version) {
  if (!configuration.engine || kept.bundle === undefined) return undefined;
  try {
    const engine = configuration.engine.fromBundle(kept.bundle);
    if (engine.sessionId !== kept.sessionId || (version !== undefined && engine.version !== version)) return undefined;
    return engine;
  } catch {
    return undefined;
  }
}

const noRandomKeys = 'no globalThis.crypto.getRandomValues to make idempotency keys with (node 18 without '
  + '--experimental-global-webcrypto, React Native without react-native-get-random-values): install it, '
  + 'or pass newKey (a function returning a new random string for every tap)';

/** Each byte's two hex digits (a key is made on every tap: no number formatting for its random part). */
const hexDigits = Array.from({ length: 256 }, (_, byte) => (byte + 256).toString(16).slice(1));

/**
 * A new idempotency key: a UUIDv7 (RFC 9562, section 5.7), the Unix time in milliseconds in its
 * first 48 bits, then the version, 12 random bits, the variant and 62 random bits, written
 * lowercase. The server's index of keys leads by the key, so keys that sort by time are added at
 * its end instead of on a random page: a keyed action costs the server less than under a random
 * (v4) key, which it still takes. Keys made in one millisecond are not ordered among themselves;
 * 74 random bits keep them apart. The random bits come from `crypto.getRandomValues`, which
 * browsers, node 19+ and React Native (with its usual polyfill) have as a global. Node 18 has it
 * only with `--experimental-global-webcrypto`: there, set `globalThis.crypto = webcrypto` from
 * `node:crypto` before starting a session, or pass `newKey`. The package imports no node module,
 * so it cannot take it itself.
 *
 * ```js
 * randomKey();  // '019a1b2c-3d4e-7f60-9a1b-2c3d4e5f6071'
 * ```
 * The time is `Date.now()`'s, a whole number of milliseconds after 1970.
 * @returns {string}
 */
export function randomKey() {
  const bytes = new Uint8Array(16);
  if (typeof globalThis.crypto?.getRandomValues !== 'function') throw new TypeError(noRandomKeys);
  globalThis.crypto.getRandomValues(bytes);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  // The time in the first 12 hex digits (48 bits), then the random bytes from the sixth on.
  let hex = Date.now().toString(16).padStart(12, '0');
  for (const byte of bytes.subarray(6)) hex += hexDigits[byte];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
