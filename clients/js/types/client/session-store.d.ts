/**
 * The server, normalized: `scheme://host[:port][/path]`, lowercased scheme and host, no default
 * port, no trailing slash, no query. Text that is not such a URL is kept, less trailing slashes.
 * @param {string} text
 */
export function normalizeServer(text: string): string;
/**
 * The key a stored session is kept under.
 * @param {StoredSession} session
 */
export function keyOf(session: StoredSession): SessionKey;
/**
 * The stored form: `{server, sessionId, token, userId, queue: [{key, version, action, at?}],
 * confirmed?, bundle?, bundleTag?}` (the bundle as its JSON value), the same as the Swift
 * client's, so a store file reads in either.
 * @param {StoredSession} session
 * @returns {string}
 */
export function encodeStoredSession(session: StoredSession): string;
/**
 * Reads the stored form; undefined when it is not one (written by something else, or corrupt:
 * the client then starts a new session). A queued tap that does not read is left out and
 * counted in `skipped`; the session and the other taps are kept.
 * @param {string | unknown} encoded text, or its parsed value
 * @returns {StoredSession | undefined}
 */
export function decodeStoredSession(encoded: string | unknown): StoredSession | undefined;
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
    constructor(server: string, userId: string);
    server: string;
    userId: string;
    /** The key as one string (for key-value stores). */
    toString(): string;
    /** @param {SessionKey} other */
    equals(other: SessionKey): boolean;
}
/** A store that lives as long as the object: for tests, previews and sessions that need not survive a restart. */
export class MemorySessionStore {
    /** @param {StoredSession[]} sessions */
    constructor(...sessions: StoredSession[]);
    /** @type {Map<string, StoredSession>} */
    sessions: Map<string, StoredSession>;
    /** @param {SessionKey} key */
    load(key: SessionKey): StoredSession | undefined;
    /** @param {StoredSession} session */
    save(session: StoredSession): void;
    /** @param {SessionKey} key */
    remove(key: SessionKey): void;
    /** Every session kept. */
    get all(): StoredSession[];
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
    constructor(storage: KeyValueStorage, options?: {
        prefix?: string | undefined;
        locks?: LockManagerLike | null | undefined;
    } | undefined);
    storage: KeyValueStorage;
    prefix: string;
    /** @type {LockManagerLike | undefined} */
    locks: LockManagerLike | undefined;
    /** What each key's entries hold, as this store last wrote them. @type {Map<string, KeptEntries>} */
    kept: Map<any, any>;
    /** @type {Promise<unknown>} */
    last: Promise<unknown>;
    /**
     * Runs `operation` once the ones before it are done, so each works from what the last wrote.
     * @template T
     * @param {() => Promise<T>} operation
     * @returns {Promise<T>}
     */
    queued<T>(operation: () => Promise<T>): Promise<T>;
    /** @param {SessionKey} key */
    load(key: SessionKey): Promise<StoredSession | undefined>;
    /** @param {StoredSession} session */
    save(session: StoredSession): Promise<void>;
    /** @param {SessionKey} key */
    remove(key: SessionKey): Promise<void>;
    /**
     * The name this page writes `key`'s session under: the key itself without Web Locks, else the
     * slot the page claimed (once, for every store in the page with these locks and prefix).
     * @param {string} key
     * @returns {Promise<string>}
     */
    slot(key: string): Promise<string>;
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
    claim(key: string, locks: LockManagerLike): Promise<string>;
    /**
     * The main entry and its journal's entries, read as one session; the entries of the generation
     * before, left by a kill, are removed.
     * @param {string} name the entries' name: the key, or one of its slots (`<key>~2`)
     * @param {string} key the session's key, which what is read must have
     * @returns {Promise<KeptEntries>}
     */
    read(name: string, key: string): Promise<KeptEntries>;
    /**
     * Writes `session` whole in the main entry, naming a new generation (the commit), then removes
     * the journal's entries.
     * @param {string} name
     * @param {KeptEntries} kept
     * @param {StoredSession} session
     */
    rewrite(name: string, kept: KeptEntries, session: StoredSession): Promise<void>;
    /**
     * Removes the entries `<base>0`, `<base>1`… (at least `count` of them), the last first, so that
     * a kill leaves the first ones, which the next try finds. A failure leaves them to the next load.
     * @param {string} base
     * @param {number} [count]
     */
    drop(base: string, count?: number | undefined): Promise<void>;
}
export type QueuedAction = import('./client-event.js').QueuedAction;
export type JSONObject = import('./json.js').JSONObject;
/**
 * What a client keeps between launches: the session, its token, the taps not yet confirmed
 * (`{key, version, action, at?}`, oldest first), and, so an app killed while offline can start
 * again while still offline, the last confirmed state document and the session's bundle (JSON
 * text, as the server sent it) with its `ETag`.
 *
 * `skipped`, set only when read from its stored form, counts the kept taps that did not read and
 * were left out (never written: a tap is checked before it is queued).
 */
export type StoredSession = {
    server: string;
    sessionId: string;
    token: string;
    userId: string;
    queue: QueuedAction[];
    confirmed?: JSONObject;
    bundle?: string;
    bundleTag?: string;
    skipped?: number;
};
/**
 * Where the client keeps its sessions, one per server and user. Every method may answer a value
 * or a promise, so a synchronous store (memory, `localStorage`) and an asynchronous one (React
 * Native's AsyncStorage, IndexedDB) both fit.
 */
export type SessionStore = {
    load(key: SessionKey): StoredSession | undefined | Promise<StoredSession | undefined>;
    save(session: StoredSession): void | Promise<void>;
    remove(key: SessionKey): void | Promise<void>;
};
/**
 * A key-value storage as the platforms have it: `localStorage` in a browser, AsyncStorage in
 * React Native (promises), or anything with the same three methods.
 */
export type KeyValueStorage = {
    getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
    setItem(key: string, value: string): void | Promise<void>;
    removeItem(key: string): void | Promise<void>;
};
/**
 * What a key-value store knows a key's entries hold: the session (none when none reads), the
 * generation of the journal the main entry names (none in the form written before there was a
 * journal), and how many entries that journal has.
 */
export type KeptEntries = {
    session?: StoredSession;
    generation?: number;
    entries: number;
};
/**
 * What `KeyValueSessionStore` needs of the Web Locks API (`navigator.locks`): a lock asked for with
 * `ifAvailable` is given to the callback (or `null` when another holder has it) and held until the
 * promise the callback returns settles.
 */
export type LockManagerLike = {
    request(name: string, options: {
        ifAvailable: boolean;
    }, callback: (lock: unknown) => unknown): Promise<unknown>;
};
