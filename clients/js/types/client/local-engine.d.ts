/**
 * The factory a session uses to run its bundle locally.
 *
 * ```js
 * import { SessionState, readAction } from '@flowstack/client/engine';
 * const session = await FlowSession.start({ server, userId, engine: localEngine({ SessionState, readAction }) });
 * ```
 * @param {EngineModule} module
 * @returns {{fromBundle(text: string): LocalEngine}}
 */
export function localEngine(module: EngineModule): {
    fromBundle(text: string): LocalEngine;
};
/** @typedef {import('./navigation-state.js').FlowAction} FlowAction */
/**
 * What the client needs of the engine module (`@flowstack/client/engine`): `SessionState` and
 * `readAction`. The engine is passed in, not imported, so a client without it runs on the
 * server's predictions, and tests can give a double; passing these two rather than the whole
 * module (`import * as engine`) lets a bundler leave out the engine's exports an app never
 * reaches.
 * @typedef {{SessionState: {fromBundle(bundle: any): any}, readAction(json: any): any}} EngineModule
 */
/** The engine at one version: applies posted actions, writes the state document and the bundle. */
export class LocalEngine {
    /**
     * @param {any} state the engine's SessionState
     * @param {EngineModule} module
     */
    constructor(state: any, module: EngineModule);
    state: any;
    module: EngineModule;
    /** @returns {number} */
    get version(): number;
    /** @returns {string} */
    get sessionId(): string;
    /**
     * The action applied: the next engine, or the engine's refusal thrown (a FlowError with `code`
     * and `status`, as the server would answer).
     * @param {FlowAction} action
     * @returns {{next: LocalEngine, outcome: unknown}}
     */
    applying(action: FlowAction): {
        next: LocalEngine;
        outcome: unknown;
    };
    /** @returns {string} */
    document(): string;
    /**
     * Every action the screen on top takes without params, with the engine after it.
     * @returns {Array<{action: FlowAction, next: LocalEngine}>}
     */
    predictions(): Array<{
        action: FlowAction;
        next: LocalEngine;
    }>;
    /**
     * The actions the screen on top can post now, with their params; a row tap with `rowKinds`, the
     * kinds of the rows of the top screen's list it takes (post it with `from` and the row's `row`).
     * @returns {Array<{type: string, handledBy: string, interactive: boolean, params: Array<{name: string, type: string, required: boolean}>, rowKinds?: string[]}>}
     */
    availableActions(): Array<{
        type: string;
        handledBy: string;
        interactive: boolean;
        params: Array<{
            name: string;
            type: string;
            required: boolean;
        }>;
        rowKinds?: string[];
    }>;
    /**
     * The session's bundle at this version, written over the one it was read from (which brings
     * the definitions, flags and variants, none of which an action changes): the version, the
     * tree, the user's state, the transition and the handler of this state. The store keeps it, so
     * an app killed offline after local taps starts again on the engine where it was.
     * @param {string} from the bundle text this engine's session was read from
     * @returns {string}
     */
    bundle(from: string): string;
    /**
     * A predicted engine action as a client posts it: the engine predicts only actions posted
     * without params (see `SessionState.predictions`), so it has none.
     * @param {{type: string, from?: string | null, interactive?: boolean}} action
     * @returns {FlowAction}
     */
    plain(action: {
        type: string;
        from?: string | null;
        interactive?: boolean;
    }): FlowAction;
}
export type FlowAction = import('./navigation-state.js').FlowAction;
/**
 * What the client needs of the engine module (`@flowstack/client/engine`): `SessionState` and
 * `readAction`. The engine is passed in, not imported, so a client without it runs on the
 * server's predictions, and tests can give a double; passing these two rather than the whole
 * module (`import * as engine`) lets a bundler leave out the engine's exports an app never
 * reaches.
 */
export type EngineModule = {
    SessionState: {
        fromBundle(bundle: any): any;
    };
    readAction(json: any): any;
};
