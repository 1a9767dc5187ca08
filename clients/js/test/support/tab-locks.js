// The Web Locks API as the tabs of one origin share it (`navigator.locks`), for node, which has
// none: exclusive locks asked for with `ifAvailable`, each held until the promise its callback
// returned settles or its tab closes.

/** The locks of one origin, which every tab of it sees. */
export class OriginLocks {
  constructor() {
    /** Who holds each lock. @type {Map<string, TabLocks>} */
    this.holders = new Map();
  }

  /** A new tab's `navigator.locks`. */
  tab() {
    return new TabLocks(this);
  }
}

/** One tab's `navigator.locks`: what it asks for, the origin's locks answer. */
export class TabLocks {
  /** @param {OriginLocks} origin */
  constructor(origin) {
    this.origin = origin;
    this.closed = false;
  }

  /**
   * @param {string} name
   * @param {{ifAvailable?: boolean}} options
   * @param {(lock: {name: string, mode: string} | null) => unknown} callback
   */
  async request(name, options, callback) {
    if (this.closed) throw new Error('InvalidStateError: the tab is closed');
    if (!options?.ifAvailable) throw new Error('this double answers only ifAvailable requests');
    if (this.origin.holders.has(name)) return callback(null);
    this.origin.holders.set(name, this);
    try {
      return await callback({ name, mode: 'exclusive' });
    } finally {
      if (this.origin.holders.get(name) === this) this.origin.holders.delete(name);
    }
  }

  /** The tab closes (or crashes): the browser lets go of every lock it held. */
  close() {
    this.closed = true;
    for (const [name, holder] of this.origin.holders) if (holder === this) this.origin.holders.delete(name);
  }

  /** The names of the locks this tab holds. */
  get held() {
    return [...this.origin.holders].filter(([, holder]) => holder === this).map(([name]) => name);
  }
}

/** `localStorage` over a map, shared by tabs of one origin as theirs is. */
export class MapStorage {
  constructor() {
    /** @type {Map<string, string>} */
    this.map = new Map();
  }

  /** @param {string} key */
  getItem(key) {
    return this.map.get(key) ?? null;
  }

  /** @param {string} key @param {string} value */
  setItem(key, value) {
    this.map.set(key, String(value));
  }

  /** @param {string} key */
  removeItem(key) {
    this.map.delete(key);
  }
}
