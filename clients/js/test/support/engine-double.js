// A TEST DOUBLE of the engine's SessionState (src/engine is ported in parallel): the sample app's
// onboarding and home tabs only, enough to drive the client machine with no I/O. Its documents
// have the state document's shape but are not byte-equal to the server's; never use it against one.

/** @typedef {{type: string, from?: string, params?: Record<string, unknown>, interactive?: boolean}} FlowAction */

/** A refusal as the engine throws it: `code`, `status`. */
export class DoubleRefusal extends Error {
  /** @param {string} code @param {number} status @param {string} message */
  constructor(code, status, message) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

export class DoubleEngine {
  /**
   * @param {{sessionId?: string, userId?: string, version?: number, screens?: Array<{id: string, feature: string}>,
   *   home?: boolean, tab?: number, nextId?: number, handledBy?: string | null}} [fields]
   */
  constructor(fields = {}) {
    this.sessionId = fields.sessionId ?? 's_1';
    this.userId = fields.userId ?? 'u';
    this.version = fields.version ?? 0;
    this.screens = fields.screens ?? [{ id: 'e3', feature: 'onboarding.first' }];
    this.home = fields.home ?? false;
    this.tab = fields.tab ?? 0;
    this.nextId = fields.nextId ?? 4;
    this.handledBy = fields.handledBy ?? null;
  }

  /**
   * The double's "bundle": its fields as JSON text (a real bundle is the server's
   * `GET …/bundle`, read by the engine's `SessionState.fromBundle`).
   */
  bundle() {
    const { sessionId, userId, version, screens, home, tab, nextId, handledBy } = this;
    return JSON.stringify({ double: true, sessionId, userId, version, screens, home, tab, nextId, handledBy });
  }

  /** @param {string} text */
  static fromBundle(text) {
    const fields = JSON.parse(text);
    if (fields.double !== true) throw new Error('not a double\'s bundle');
    return new DoubleEngine(fields);
  }

  /** @param {Partial<ConstructorParameters<typeof DoubleEngine>[0]>} changes */
  with(changes) {
    return new DoubleEngine({ ...this, version: this.version + 1, ...changes });
  }

  /** @param {FlowAction} action */
  applying(action) {
    const top = this.home ? { id: 'e' + (5 + this.tab), feature: this.tab === 0 ? 'home.first' : 'home.second' } : this.screens[this.screens.length - 1];
    if (action.from != null && action.from !== top.id) throw new DoubleRefusal('stale-source', 409, `${action.from} is not on top`);
    const onboardingTop = this.home ? undefined : top.feature;
    switch (action.type) {
      case 'onboarding.showSecond':
        if (onboardingTop !== 'onboarding.first') break;
        return { next: this.with({ screens: [...this.screens, { id: 'e' + this.nextId, feature: 'onboarding.second' }], nextId: this.nextId + 1, handledBy: 'onboarding' }), outcome: {} };
      case 'onboarding.returnToFirst':
        if (onboardingTop !== 'onboarding.second') break;
        return { next: this.with({ screens: this.screens.slice(0, -1), handledBy: 'onboarding' }), outcome: {} };
      case 'onboarding.completed':
        if (onboardingTop !== 'onboarding.second') break;
        return { next: this.with({ home: true, tab: 0, handledBy: 'app' }), outcome: {} };
      case 'home.selectTab': {
        const index = action.params?.index;
        if (!this.home || (index !== 0 && index !== 1)) break;
        return { next: this.with({ tab: index, handledBy: 'home' }), outcome: {} };
      }
      default:
        break;
    }
    throw new DoubleRefusal('unhandled', 422, `${action.type} is not handled here`);
  }

  /** The state document, in the server's shape. */
  document() {
    const screen = (/** @type {{id: string, feature: string}} */ s, /** @type {string} */ flow, /** @type {string} */ flowId) =>
      ({ id: s.id, feature: s.feature, params: {}, flow, flowId });
    const screens = this.home
      ? [screen({ id: 'e' + (5 + this.tab), feature: this.tab === 0 ? 'home.first' : 'home.second' }, 'home', 'f4')]
      : this.screens.map((s) => screen(s, 'onboarding', 'f2'));
    const child = this.home
      ? { id: 'f4', flow: 'home', kind: 'tabbed', selected: this.tab, entries: [{ id: 'e5', feature: 'home.first', params: {} }, { id: 'e6', feature: 'home.second', params: {} }], presented: null }
      : { id: 'f2', flow: 'onboarding', kind: 'stacked', entries: this.screens.map((s) => ({ id: s.id, feature: s.feature, params: {} })), presented: null };
    return JSON.stringify({
      sessionId: this.sessionId, userId: this.userId, version: this.version,
      root: { id: 'f1', flow: 'app', kind: 'stacked', entries: [child], presented: null },
      screens, top: screens[screens.length - 1], transition: null, interaction: null, pendingLink: null, pendingActions: [],
      handledBy: this.handledBy, flags: { 'eu-face-scan': { value: false, variant: 'off', reason: 'DEFAULT' } }, experiments: {},
    });
  }

  /** Every action that applies now, with the state it makes (as the engine's predictions()). */
  predictions() {
    /** @type {Array<{action: FlowAction, next: DoubleEngine}>} */
    const made = [];
    for (const action of [{ type: 'onboarding.showSecond' }, { type: 'onboarding.returnToFirst' }, { type: 'onboarding.completed' }]) {
      try {
        made.push({ action, next: this.applying(action).next });
      } catch {
        // not available here
      }
    }
    return made;
  }
}
