// LocalEngine: the engine's SessionState (src/engine) as the client machine uses it, over plain posted actions.

/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */

/**
 * What the client needs of the engine module: `SessionState.fromBundle` and `readAction`
 * (`parseJSON` when the engine reads actions in its own JSON model). The engine is passed in, not
 * imported, so the client runs with predictions only where no engine is shipped (and tests can
 * give a double).
 * @typedef {{SessionState: {fromBundle(bundle: any): any}, readAction(json: any): any, parseJSON?: (text: string) => any}} EngineModule
 */

/**
 * How a session makes its local engine from the bundle's text.
 * @typedef {{fromBundle(text: string): LocalEngine}} EngineFactory
 */

/** The engine at one version: applies posted actions and writes the state document. */
export class LocalEngine {
  /**
   * @param {any} state the engine's SessionState
   * @param {EngineModule} module
   */
  constructor(state, module) {
    this.state = state;
    this.module = module;
  }

  /** @returns {number} */
  get version() {
    return this.state.version;
  }

  /** @returns {string} */
  get sessionId() {
    return this.state.sessionId;
  }

  /**
   * The action applied: the next engine, or the engine's refusal thrown (a FlowError with
   * `code` and `status`).
   * @param {FlowAction} action
   * @returns {{next: LocalEngine, outcome: unknown}}
   */
  applying(action) {
    const text = JSON.stringify(action);
    const read = this.module.readAction(this.module.parseJSON ? this.module.parseJSON(text) : JSON.parse(text));
    const { next, outcome } = this.state.applying(read);
    return { next: new LocalEngine(next, this.module), outcome };
  }

  /** @returns {string} */
  document() {
    return this.state.document();
  }
}

/**
 * The factory a session uses to run its bundle locally.
 *
 * ```js
 * import * as engine from '@flowstack/client/engine';
 * const session = await FlowSession.start({ server, userId, engine: localEngine(engine) });
 * ```
 * @param {EngineModule} module
 * @returns {EngineFactory}
 */
export function localEngine(module) {
  return { fromBundle: (text) => new LocalEngine(module.SessionState.fromBundle(text), module) };
}
