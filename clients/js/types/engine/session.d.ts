/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./builder.js').FlowCatalog} FlowCatalog */
/** @typedef {import('./definition.js').FlowDefinition} FlowDefinition */
/** @typedef {import('./engine.js').ActionOutcome} ActionOutcome */
/** @typedef {import('./engine.js').AvailableAction} AvailableAction */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** The bundle format this engine reads. */
export const bundleFormat: 1;
/**
 * An action a client could post now and the state posting it would produce.
 * @typedef {{ action: FlowAction, next: SessionState }} Prediction
 */
/**
 * A session as the engine sees it: the tree at a version, the context its conditions read, the
 * catalog of the flow versions it runs, and what its state document shows besides the tree.
 * Values: `applying` returns a new state and leaves this one as it was.
 *
 * ```js
 * const state = SessionState.fromBundle(await (await fetch(`/v1/sessions/${id}/bundle`)).text());
 * const { next, outcome } = state.applying(readAction({ type: 'onboarding.showSecond', from: 'e3' }));
 * next.document();             // what POST /v1/sessions/{id}/actions will answer, byte for byte
 * outcome.transition?.type;    // 'push'
 * ```
 */
export class SessionState {
    /**
     * Reads a session bundle (`GET /v1/sessions/{id}/bundle`, format 1), checking every part: the
     * definitions must read and hold every flow of `flowVersions`, and the tree must decode.
     * @param {JSONValue | string | Uint8Array} bundle the parsed bundle, or its JSON text or bytes
     * @returns {SessionState}
     * @throws {FlowStorageError} with the JSON Pointer of the first part that is wrong
     */
    static fromBundle(bundle: JSONValue | string | Uint8Array): SessionState;
    /**
     * @param {object} parts
     * @param {string} parts.sessionId
     * @param {string} parts.userId
     * @param {number} parts.version
     * @param {FlowTree} parts.tree
     * @param {FlowContext} parts.context
     * @param {FlowCatalog} parts.catalog
     * @param {string} parts.flagsJSON the flag evaluation details the document shows, encoded
     * @param {string} parts.experimentsJSON `{experiment: variant}`, encoded
     * @param {string | null} [parts.transitionJSON] the transition that produced `version`
     * @param {string | null} [parts.handledBy] the flow that handled the action that produced it
     * @param {Map<string, number>} [parts.flowVersions] the version of each flow the session runs
     */
    constructor(parts: {
        sessionId: string;
        userId: string;
        version: number;
        tree: FlowTree;
        context: FlowContext;
        catalog: import("./builder.js").FlowCatalog;
        flagsJSON: string;
        experimentsJSON: string;
        transitionJSON?: string | null | undefined;
        handledBy?: string | null | undefined;
        flowVersions?: Map<string, number> | undefined;
    });
    /** @readonly */
    readonly parts: Readonly<{
        sessionId: string;
        userId: string;
        version: number;
        tree: import("./tree.js").FlowTree;
        context: import("./condition.js").FlowContext;
        catalog: import("./builder.js").FlowCatalog;
        flagsJSON: string;
        experimentsJSON: string;
        transitionJSON: string | null;
        handledBy: string | null;
        flowVersions: Map<any, any>;
    }>;
    /** The session's id. */
    get sessionId(): string;
    /** The user the session belongs to. */
    get userId(): string;
    /** Grows by one with every applied action. */
    get version(): number;
    /** The navigation tree at this version. */
    get tree(): import("./tree.js").FlowTree;
    /** The context conditions read, with the user's state as known now. */
    get context(): import("./condition.js").FlowContext;
    /** The flow definitions the session runs, by name. */
    get catalog(): import("./builder.js").FlowCatalog;
    /** The flow that handled the action that produced this version. */
    get handledBy(): string | null;
    /** The version of each flow the session runs. */
    get flowVersions(): Map<any, any>;
    /**
     * The state after `action`, as the server commits it: the next version, the new tree, its
     * transition and handler, and the user's state with the action's changes. This state is
     * unchanged; a refused action throws.
     * @param {FlowAction} action
     * @param {FlowLimits} [limits]
     * @returns {{ next: SessionState, outcome: ActionOutcome }}
     * @throws {FlowError}
     */
    applying(action: FlowAction, limits?: import("./tree.js").FlowLimits | undefined): {
        next: SessionState;
        outcome: ActionOutcome;
    };
    /**
     * The state document: the body of every session answer, byte for byte the server's.
     * @returns {string}
     */
    document(): string;
    /**
     * The state document parsed into this engine's JSON model (member order kept).
     * @returns {JSONValue}
     */
    documentValue(): JSONValue;
    /**
     * The next state of every action available now that needs no params, nearest flow first; an
     * action that may run interactively is predicted twice, plainly and then with
     * `interactive: true`. Actions with a required param and row taps (whose state depends on the
     * row tapped) are left out, as is an action the engine would refuse after all.
     *
     * The promise: posting `prediction.action` on this version answers exactly
     * `prediction.next.document()`, when nothing else acted on the session meanwhile.
     * @param {FlowLimits} [limits]
     * @returns {Prediction[]}
     */
    predictions(limits?: import("./tree.js").FlowLimits | undefined): Prediction[];
    /**
     * The actions the state accepts now (see `availableActions` of the engine).
     * @returns {AvailableAction[]}
     */
    availableActions(): AvailableAction[];
    /**
     * The session's bundle at this version, written over the one it was read from (which brings
     * the definitions, flags and variants, none of which an action changes): the version, the
     * tree, the user's state, the transition and the handler of this state. A client's store keeps
     * it, so an app killed offline after local taps starts again on the engine where it was.
     * @param {string} from the bundle text this session was read from
     * @returns {string}
     * @throws {TypeError} when `from` is not a bundle's JSON object
     */
    bundle(from: string): string;
    /**
     * The tree in the engine's storage encoding, as a bundle's `tree` carries it.
     * @returns {string}
     */
    treeStorageJSON(): string;
}
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowContext = import('./condition.js').FlowContext;
export type FlowCatalog = import('./builder.js').FlowCatalog;
export type FlowDefinition = import('./definition.js').FlowDefinition;
export type ActionOutcome = import('./engine.js').ActionOutcome;
export type AvailableAction = import('./engine.js').AvailableAction;
export type FlowTree = import('./tree.js').FlowTree;
export type FlowAction = import('./tree.js').FlowAction;
export type FlowLimits = import('./tree.js').FlowLimits;
/**
 * An action a client could post now and the state posting it would produce.
 */
export type Prediction = {
    action: FlowAction;
    next: SessionState;
};
