// SessionStore: where an app keeps its session's token and queued taps across being killed, behind a pluggable store.
import { batchItem, checkedAction } from './client-event.js';
import { asObject, tryParse } from './json.js';

/** @typedef {import('./client-event.js').QueuedAction} QueuedAction */
/** @typedef {import('./json.js').JSONObject} JSONObject */

/**
 * What a client keeps between launches: the session, its token, the taps not yet confirmed
 * (`{key, version, action, at?}`, oldest first), and, so an app killed while offline can start
 * again while still offline, the last confirmed state document and the session's bundle (JSON
 * text, as the server sent it) with its `ETag`.
 *
 * `skipped`, set only when read from its stored form, counts the kept taps that did not read and
 * were left out (never written: a tap is checked before it is queued).
 *
 * @typedef {{server: string, sessionId: string, token: string, userId: string, queue: QueuedAction[],
 *   confirmed?: JSONObject, bundle?: string, bundleTag?: string, skipped?: number}} StoredSession
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
 * the client then starts a new session). A queued tap that does not read is left out and
 * counted in `skipped`; the session and the other taps are kept.
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
  /** @type {StoredSession} */
  const session = { server: normalizeServer(server), sessionId, token, userId, queue: [] };
  readTaps(queue, session);
  const confirmed = asObject(value.confirmed);
  if (confirmed) session.confirmed = confirmed;
  if (asObject(value.bundle)) session.bundle = JSON.stringify(value.bundle);
  if (typeof value.bundleTag === 'string') session.bundleTag = value.bundleTag;
  return session;
}

/**
 * Adds the taps of `raw` that read to `session.queue`, and counts in `session.skipped` those that
 * do not.
 * @param {unknown[]} raw
 * @param {StoredSession} session
 */
function readTaps(raw, session) {
  for (const value of raw) {
    const item = asObject(value);
    let action;
    try {
      action = checkedAction(item?.action);
    } catch {
      action = undefined;
    }
    // One tap that does not read (written by an older client that did not check its taps) is left
    // out, not the session with every other tap: the taps after it were made on a version it
    // moved to, so the server refuses them (412) and the correction reports them.
    if (!item || typeof item.key !== 'string' || !Number.isSafeInteger(item.version) || !action) {
      session.skipped = (session.skipped ?? 0) + 1;
      continue;
    }
    /** @type {QueuedAction} */
    const kept = { key: item.key, version: /** @type {number} */ (item.version), action };
    if (typeof item.at === 'string') kept.at = item.at;
    session.queue.push(kept);
  }
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
 * What a key-value store knows a key's entries hold: the session (none when none reads), the
 * generation of the journal the main entry names (none in the form written before there was a
 * journal), and how many entries that journal has.
 * @typedef {{session?: StoredSession, generation?: number, entries: number}} KeptEntries
 */

/**
 * What `KeyValueSessionStore` needs of the Web Locks API (`navigator.locks`): a lock asked for with
 * `ifAvailable` is given to the callback (or `null` when another holder has it) and held until the
 * promise the callback returns settles.
 * @typedef {{request(name: string, options: {ifAvailable: boolean}, callback: (lock: unknown) => unknown): Promise<unknown>}} LockManagerLike
 */

/** The slots of one key a page looks at: more pages than a person keeps open. */
const maximumSlots = 64;

/**
 * The slots this page claimed, by lock manager and then by the key's entry name: every store in a
 * page writes where the page's first claim put it (locks are the origin's, whatever the storage).
 * @type {WeakMap<LockManagerLike, Map<string, Promise<string>>>}
 */
const claimedSlots = new WeakMap();

/**
 * Takes the lock `name` if no one holds it, for as long as the page lives.
 * @param {LockManagerLike} locks
 * @param {string} name
 * @returns {Promise<(() => void) | undefined | null>} a function that lets it go; nothing when
 *   another holder has it; `null` when the lock manager refuses to be used
 */
function holdLock(locks, name) {
  return new Promise((resolve) => {
    try {
      locks.request(name, { ifAvailable: true }, (lock) => lock ? new Promise((release) => resolve(() => release(undefined))) : resolve(undefined))
        .catch(() => resolve(null));
    } catch {
      resolve(null);
    }
  });
}

/**
 * Keeps each server's and user's session in a key-value storage, under `<prefix><user> on
 * <server>`, in the stored form (the Swift client's), with a journal beside it so that a tap
 * writes the tap, not the whole queue again.
 *
 * A save that only adds taps writes them as one journal entry, `<that key>#<generation>.<n>`
 * (`n` counting from 0). Any other save (taps confirmed, a new confirmed state, bundle or token),
 * or one that finds the journal as long as the taps before it (and at least 64 entries), writes
 * the main entry whole, naming a new generation (`"journal": <generation>`, picked at random, and
 * `"previous"`), then removes the old generation's entries: a tap costs amortised O(1). Each save
 * is one write that commits it (the entry, or the main entry), so a kill between two writes loads
 * the session before that save or after it: the entries of a generation the main entry does not
 * name are never read, and those of the previous one are removed at the next load. A main entry
 * with no journal (written before there was one) loads as it is. Key listing is not used.
 *
 * **Pages open at once.** Where the platform has Web Locks (`navigator.locks`: browsers and their
 * workers), each page claims the key's entries for itself, so two tabs never write one queue: the
 * first page takes `<key>`, a page opened while it runs `<key>~2` (a session of its own), and so
 * on, each slot held under a lock of the same name until its page closes. A page that starts
 * takes a free slot that holds taps not yet sent (a tab closed while offline) before an idle one,
 * so those taps go out with the next page. Without Web Locks (React Native, Node) there is one
 * slot, written by one running session at a time. `locks: null` turns the claiming off.
 *
 * The store compares a save's taps with the ones it wrote by identity: use one store per storage,
 * and do not change taps once saved (`FlowSession` makes each anew). Stores over one storage in
 * one page share the page's slot (a remount's new store writes where the old one did). The random
 * generations keep a writer from reading another's journal as its own after a rewrite. The tokens
 * are in it in clear: use storage only the app can read.
 *
 * ```js
 * const store = new KeyValueSessionStore(window.localStorage);
 * const session = await FlowSession.start({ server, userId: 'ada', store });
 * ```
 */
export class KeyValueSessionStore {
  /**
   * @param {KeyValueStorage} storage
   * @param {{prefix?: string, locks?: LockManagerLike | null}} [options] `locks`: the page's Web
   *   Locks (`navigator.locks` where there is one), or `null` for one slot per key, unclaimed
   */
  constructor(storage, options = {}) {
    const { prefix = 'flowstack.session:', locks = /** @type {{navigator?: {locks?: LockManagerLike}}} */ (globalThis).navigator?.locks } = options;
    this.storage = storage;
    this.prefix = prefix;
    /** @type {LockManagerLike | undefined} */
    this.locks = locks ?? undefined;
    /** What each key's entries hold, as this store last wrote them. @type {Map<string, KeptEntries>} */
    this.kept = new Map();
    /** @type {Promise<unknown>} */
    this.last = Promise.resolve();
  }

  /**
   * Runs `operation` once the ones before it are done, so each works from what the last wrote.
   * @template T
   * @param {() => Promise<T>} operation
   * @returns {Promise<T>}
   */
  queued(operation) {
    const done = this.last.then(operation);
    this.last = done.catch(() => {});
    return done;
  }

  /** @param {SessionKey} key */
  load(key) {
    const name = key.toString();
    return this.queued(async () => (await this.read(await this.slot(name), name)).session);
  }

  /** @param {StoredSession} session */
  save(session) {
    const key = keyOf(session).toString();
    return this.queued(async () => {
      const name = await this.slot(key);
      const kept = this.kept.get(name) ?? await this.read(name, key);
      // Unknown until a write succeeds: after a failure the next save reads the storage again.
      this.kept.delete(name);
      const old = kept.session;
      const queue = session.queue;
      const count = old?.queue.length ?? 0;
      // Each entry holds a tap or more, so the journal is rewritten before it holds more taps
      // than the main entry.
      if (old && kept.generation !== undefined && queue.length > count && kept.entries < Math.max(64, count - kept.entries)
        && /** @type {const} */ (['sessionId', 'token', 'confirmed', 'bundle', 'bundleTag']).every((field) => old[field] === session[field])
        && old.queue.every((/** @type {QueuedAction} */ item, /** @type {number} */ index) => item === queue[index])) {
        const added = queue.slice(count);
        await this.storage.setItem(`${this.prefix}${name}#${kept.generation}.${kept.entries}`, JSON.stringify(added.map(batchItem)));
        old.queue.push(...added);
        kept.entries += 1;
        this.kept.set(name, kept);
      } else {
        await this.rewrite(name, kept, session);
      }
    });
  }

  /** @param {SessionKey} key */
  remove(key) {
    const wanted = key.toString();
    return this.queued(async () => {
      const name = await this.slot(wanted);
      const kept = this.kept.get(name) ?? await this.read(name, wanted);
      this.kept.delete(name);
      // The journal's taps go into the main entry first, so a kill before the end leaves the
      // session whole, or nothing.
      if (kept.session && kept.entries > 0) await this.rewrite(name, kept, kept.session);
      await this.storage.removeItem(this.prefix + name);
      this.kept.delete(name);
    });
  }

  /**
   * The name this page writes `key`'s session under: the key itself without Web Locks, else the
   * slot the page claimed (once, for every store in the page with these locks and prefix).
   * @param {string} key
   * @returns {Promise<string>}
   */
  slot(key) {
    const locks = this.locks;
    if (!locks) return Promise.resolve(key);
    let claims = claimedSlots.get(locks);
    if (!claims) claimedSlots.set(locks, claims = new Map());
    const name = this.prefix + key;
    let claim = claims.get(name);
    if (!claim) {
      claims.set(name, claim = this.claim(key, locks));
      // A claim that failed (the storage could not be read) is tried again by the next operation.
      claim.catch(() => claims?.delete(name));
    }
    return claim;
  }

  /**
   * Claims a slot of `key` for this page, held until the page closes: the first free one that
   * keeps taps not yet sent, else the first free one. Slots are looked at in order up to the
   * first free one that holds nothing, and the other free ones looked at are let go. Past
   * `maximumSlots` pages, or where the locks refuse to be used (an opaque origin), the key's
   * own entries are written unclaimed, as without locks.
   * @param {string} key
   * @param {LockManagerLike} locks
   * @returns {Promise<string>}
   */
  async claim(key, locks) {
    /** @type {{name: string, release: () => void, waiting: boolean}[]} */
    const free = [];
    for (let n = 1, release; n <= maximumSlots && release !== null; n++) {
      const name = n > 1 ? `${key}~${n}` : key;
      release = await holdLock(locks, this.prefix + name);
      if (release) {
        const { session } = await this.read(name, key);
        free.push({ name, release, waiting: !!session?.queue.length });
        if (!session) break;
      }
    }
    const chosen = free.find((slot) => slot.waiting) ?? free[0];
    for (const slot of free) if (slot !== chosen) slot.release();
    return chosen?.name ?? key;
  }

  /**
   * The main entry and its journal's entries, read as one session; the entries of the generation
   * before, left by a kill, are removed.
   * @param {string} name the entries' name: the key, or one of its slots (`<key>~2`)
   * @param {string} key the session's key, which what is read must have
   * @returns {Promise<KeptEntries>}
   */
  async read(name, key) {
    const main = this.prefix + name;
    const value = asObject(tryParse((await this.storage.getItem(main)) ?? ''));
    const session = decodeStoredSession(value);
    const generation = Number.isSafeInteger(value?.journal) ? /** @type {number} */ (value?.journal) : undefined;
    let entries = 0;
    if (generation !== undefined) {
      for (let text; session && (text = await this.storage.getItem(`${main}#${generation}.${entries}`)) != null; entries++) {
        readTaps(/** @type {unknown[]} */ ([]).concat(tryParse(text)), session);
      }
      if (Number.isSafeInteger(value?.previous)) await this.drop(`${main}#${value?.previous}.`);
    }
    return { session: session && keyOf(session).toString() === key ? session : undefined, generation, entries };
  }

  /**
   * Writes `session` whole in the main entry, naming a new generation (the commit), then removes
   * the journal's entries.
   * @param {string} name
   * @param {KeptEntries} kept
   * @param {StoredSession} session
   */
  async rewrite(name, kept, session) {
    const main = this.prefix + name;
    // A generation no other writer picks: a second store on the same storage (another tab,
    // against the advice above) then never has its journal read as this main entry's. The one
    // before is named, so a load removes what a kill left of it. 53 random bits: a clock would not
    // help, two tabs rewrite in the same millisecond (ten random bits beside one met about once in
    // 250 runs of the two-tab test).
    let generation;
    do generation = Math.floor(Math.random() * Number.MAX_SAFE_INTEGER); while (generation === kept.generation);
    const previous = kept.generation === undefined ? '' : `,"previous":${kept.generation}`;
    await this.storage.setItem(main, encodeStoredSession(session).slice(0, -1) + `,"journal":${generation}${previous}}`);
    this.kept.set(name, { session: { ...session, queue: session.queue.slice() }, generation, entries: 0 });
    if (kept.generation !== undefined) await this.drop(`${main}#${kept.generation}.`, kept.entries);
  }

  /**
   * Removes the entries `<base>0`, `<base>1`… (at least `count` of them), the last first, so that
   * a kill leaves the first ones, which the next try finds. A failure leaves them to the next load.
   * @param {string} base
   * @param {number} [count]
   */
  async drop(base, count = 0) {
    try {
      while (await this.storage.getItem(base + count) != null) count += 1;
      while (count > 0) await this.storage.removeItem(base + --count);
    } catch {
      // kept for the next load
    }
  }
}
