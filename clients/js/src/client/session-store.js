// SessionStore: where an app keeps its session's token and queued taps across being killed, behind a pluggable store.
import { batchItem, postedAction } from './client-event.js';
import { asObject, tryParse } from './json.js';

/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** @typedef {import('./json.js').JSONObject} JSONObject */

/**
 * What a client keeps between launches: the session, its token, the taps not yet confirmed
 * (`{key, version, action, at?}`, oldest first), and, so an app killed while offline can start
 * again while still offline, the last confirmed state document and the session's bundle (JSON
 * text, as the server sent it) with its `ETag`.
 *
 * @typedef {{server: string, sessionId: string, token: string, userId: string, queue: QueuedAction[],
 *   confirmed?: JSONObject, bundle?: string, bundleTag?: string}} StoredSession
 */

/**
 * Where the client keeps its sessions, one per server and user. Every method may answer a value
 * or a promise, so a synchronous store (memory, `localStorage`) and an asynchronous one (React
 * Native's AsyncStorage, IndexedDB) both fit.
 *
 * @typedef {{load(key: SessionKey): StoredSession | undefined | Promise<StoredSession | undefined>,
 *   save(session: StoredSession): void | Promise<void>, remove(key: SessionKey): void | Promise<void>}} SessionStore
 */

/**
 * Which session a store keeps: one per server and user. Equivalent spellings of a server are one
 * key (scheme and host in any case, the default port written or not, trailing slashes), so
 * `HTTP://Flows.example.com:443/` after `https://flows.example.com` resumes the same session;
 * different hosts (`localhost` and `127.0.0.1`) are different keys.
 */
export class SessionKey {
  /**
   * @param {string} server
   * @param {string} userId
   */
  constructor(server, userId) {
    this.server = normalizeServer(server);
    this.userId = userId;
  }

  /** The key as one string (for key-value stores). */
  toString() {
    return `${this.userId} on ${this.server}`;
  }

  /** @param {SessionKey} other */
  equals(other) {
    return this.server === other.server && this.userId === other.userId;
  }
}

/**
 * The server, normalized: `scheme://host[:port][/path]`, lowercased scheme and host, no default
 * port, no trailing slash, no query. Text that is not such a URL is kept, less trailing slashes.
 * @param {string} text
 */
export function normalizeServer(text) {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?([^?#]*)/.exec(text);
  if (!match || match[2] === '') return text.replace(/\/+$/, '');
  const scheme = match[1].toLowerCase();
  const host = match[2].toLowerCase();
  const port = match[3] ? Number(match[3]) : undefined;
  let result = `${scheme}://${host}`;
  if (port !== undefined && !(scheme === 'http' && port === 80) && !(scheme === 'https' && port === 443)) result += `:${port}`;
  return result + match[4].replace(/\/+$/, '');
}

/**
 * The key a stored session is kept under.
 * @param {StoredSession} session
 */
export function keyOf(session) {
  return new SessionKey(session.server, session.userId);
}

/**
 * The stored form: `{server, sessionId, token, userId, queue: [{key, version, action, at?}],
 * confirmed?, bundle?, bundleTag?}` (the bundle as its JSON value), the same as the Swift
 * client's, so a store file reads in either.
 * @param {StoredSession} session
 * @returns {string}
 */
export function encodeStoredSession(session) {
  /** @type {Record<string, unknown>} */
  const value = {
    server: normalizeServer(session.server), sessionId: session.sessionId, token: session.token, userId: session.userId,
    queue: session.queue.map(batchItem),
  };
  if (session.confirmed) value.confirmed = session.confirmed;
  let text = JSON.stringify(value);
  // The bundle is kept as the text it came as: spliced in, not parsed and written again.
  if (session.bundle !== undefined) text = text.slice(0, -1) + ',"bundle":' + session.bundle + '}';
  if (session.bundleTag !== undefined) text = text.slice(0, -1) + ',"bundleTag":' + JSON.stringify(session.bundleTag) + '}';
  return text;
}

/**
 * Reads the stored form; undefined when it is not one (written by something else, or corrupt:
 * the client then starts a new session).
 * @param {string | unknown} encoded text, or its parsed value
 * @returns {StoredSession | undefined}
 */
export function decodeStoredSession(encoded) {
  const value = asObject(typeof encoded === 'string' ? tryParse(encoded) : encoded);
  if (!value) return undefined;
  const { server, sessionId, token, userId, queue } = value;
  if (typeof server !== 'string' || typeof sessionId !== 'string' || typeof token !== 'string' || typeof userId !== 'string' || !Array.isArray(queue)) {
    return undefined;
  }
  /** @type {QueuedAction[]} */
  const items = [];
  for (const raw of queue) {
    const item = asObject(raw);
    const action = asObject(item?.action);
    if (!item || typeof item.key !== 'string' || !Number.isSafeInteger(item.version) || !action || typeof action.type !== 'string') return undefined;
    if (action.from != null && typeof action.from !== 'string') return undefined;
    if (action.params != null && !asObject(action.params)) return undefined;
    /** @type {QueuedAction} */
    const kept = { key: item.key, version: /** @type {number} */ (item.version), action: postedAction(/** @type {any} */ (action)) };
    if (typeof item.at === 'string') kept.at = item.at;
    items.push(kept);
  }
  /** @type {StoredSession} */
  const session = { server: normalizeServer(server), sessionId, token, userId, queue: items };
  const confirmed = asObject(value.confirmed);
  if (confirmed) session.confirmed = confirmed;
  if (asObject(value.bundle)) session.bundle = JSON.stringify(value.bundle);
  if (typeof value.bundleTag === 'string') session.bundleTag = value.bundleTag;
  return session;
}

/**
 * A copy of a stored session that shares no array with it.
 * @param {StoredSession} session
 * @returns {StoredSession}
 */
function copied(session) {
  return { ...session, queue: session.queue.map((item) => ({ ...item })) };
}

/** A store that lives as long as the object: for tests, previews and sessions that need not survive a restart. */
export class MemorySessionStore {
  /** @param {StoredSession[]} sessions */
  constructor(...sessions) {
    /** @type {Map<string, StoredSession>} */
    this.sessions = new Map();
    for (const session of sessions) this.save(session);
  }

  /** @param {SessionKey} key */
  load(key) {
    const session = this.sessions.get(key.toString());
    return session && copied(session);
  }

  /** @param {StoredSession} session */
  save(session) {
    this.sessions.set(keyOf(session).toString(), copied(session));
  }

  /** @param {SessionKey} key */
  remove(key) {
    this.sessions.delete(key.toString());
  }

  /** Every session kept. */
  get all() {
    return [...this.sessions.values()].map(copied);
  }
}

/**
 * A key-value storage as the platforms have it: `localStorage` in a browser, AsyncStorage in
 * React Native (promises), or anything with the same three methods.
 * @typedef {{getItem(key: string): string | null | undefined | Promise<string | null | undefined>,
 *   setItem(key: string, value: string): void | Promise<void>, removeItem(key: string): void | Promise<void>}} KeyValueStorage
 */

/**
 * Keeps each server's and user's session in a key-value storage, under `<prefix><user> on
 * <server>`, in the stored form (the Swift client's). The tokens are in it in clear: use storage
 * only the app can read.
 *
 * ```js
 * const store = new KeyValueSessionStore(window.localStorage);
 * const session = await FlowSession.start({ server, userId: 'ada', store });
 * ```
 */
export class KeyValueSessionStore {
  /**
   * @param {KeyValueStorage} storage
   * @param {{prefix?: string}} [options]
   */
  constructor(storage, options = {}) {
    const { prefix = 'flowstack.session:' } = options;
    this.storage = storage;
    this.prefix = prefix;
  }

  /** @param {SessionKey} key */
  async load(key) {
    const text = await this.storage.getItem(this.prefix + key.toString());
    if (text == null) return undefined;
    const session = decodeStoredSession(text);
    return session && keyOf(session).equals(key) ? session : undefined;
  }

  /** @param {StoredSession} session */
  async save(session) {
    await this.storage.setItem(this.prefix + keyOf(session).toString(), encodeStoredSession(session));
  }

  /** @param {SessionKey} key */
  async remove(key) {
    await this.storage.removeItem(this.prefix + key.toString());
  }
}
