/**
 * Whether two optional states are the same (both absent, or equal documents).
 *
 * @param {NavigationState | undefined | null} a
 * @param {NavigationState | undefined | null} b
 */
export function sameState(a: NavigationState | undefined | null, b: NavigationState | undefined | null): boolean;
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/**
 * An action as a client posts it: `{type, from?, params?, interactive?}`.
 * @typedef {{type: string, from?: string, params?: JSONObject, interactive?: boolean}} FlowAction
 */
/**
 * A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the flow
 * that owns it; `handoff` names the native step the app runs there instead (`purchase`).
 * @typedef {{id: string, feature: string, params: JSONObject, flow?: string, flowId?: string, handoff?: string}} Screen
 */
/**
 * A flow controller: `stacked` (entries bottom to top) or `tabbed` (`selected` the tab shown),
 * with the flow it presents modally, if any.
 * @typedef {{id: string, flow: string, kind: 'stacked' | 'tabbed', style?: string, selected?: number,
 *   entries: Array<{screen: Screen} | {flow: FlowNode}>, presented?: FlowNode}} FlowNode
 */
/**
 * @typedef {{type: string, from?: Screen, to?: Screen, animated: boolean, style?: string, interactive: boolean,
 *   result?: {id: string, feature: string, into: string}}} Transition
 * @typedef {{action: string, from?: string, progress: number, handledBy: string, transition?: Transition}} Interaction
 * @typedef {{action: FlowAction, source: string, guardFlow: string, guardFlowId: string}} PendingAction
 * @typedef {{value: JSONValue, variant?: string, reason?: string}} FlagEvaluation
 */
/** A state document that is not what the server writes, with the JSON Pointer of the first part that is wrong. */
export class MalformedState extends Error {
    /**
     * @param {string} path
     * @param {string} message
     */
    constructor(path: string, message: string);
    path: string;
    detail: string;
}
/**
 * What a session shows: the state document every session answer carries, as values. Two states
 * are equal (`equals`) exactly when their documents are, so a state the local engine computed
 * confirms against the server's answer for it.
 *
 * ```js
 * const state = NavigationState.fromJSON(JSON.parse(body));
 * state.top?.feature        // "onboarding.second"
 * state.transition?.type    // "push"
 * ```
 */
export class NavigationState {
    /**
     * Reads a state document (parsed), leaving out `predictions` if it carries them.
     *
     * @param {unknown} json
     * @returns {NavigationState}
     * @throws {MalformedState}
     */
    static fromJSON(json: unknown): NavigationState;
    /**
     * The state a local engine computed, as the server's answer for it would read.
     *
     * @param {{document(): string}} engineState
     * @returns {NavigationState}
     * @throws {MalformedState}
     */
    static fromEngine(engineState: {
        document(): string;
    }): NavigationState;
    /**
     * @param {JSONObject} document the state document, without `predictions`
     */
    constructor(document: JSONObject);
    /** The document as it came, for comparing and keeping. */
    document: import("./json.js").JSONObject;
    sessionId: string;
    userId: string;
    version: number;
    /** The flow tree: nested flow controllers and their screens. */
    root: FlowNode;
    /**
     * What is on screen and behind it, bottom to top.
     * @type {Screen[]}
     */
    screens: Screen[];
    /** @type {Screen | undefined} */
    top: Screen | undefined;
    /**
     * How the state came from the one before (none at creation).
     * @type {Transition | undefined}
     */
    transition: Transition | undefined;
    /**
     * A pending interactive transition (an edge swipe in progress).
     * @type {Interaction | undefined}
     */
    interaction: Interaction | undefined;
    /**
     * A deep link waiting for its `when` to hold.
     * @type {{uri: string, pattern: string} | undefined}
     */
    pendingLink: {
        uri: string;
        pattern: string;
    } | undefined;
    /**
     * Actions held back by guards, outermost first (empty from servers that do not send them).
     * @type {PendingAction[]}
     */
    pendingActions: PendingAction[];
    /** The flow whose delegate handled the action that made this version. */
    handledBy: string | undefined;
    /**
     * Flag evaluations fixed at creation, by key.
     * @type {Record<string, FlagEvaluation>}
     */
    flags: Record<string, FlagEvaluation>;
    /**
     * Experiment variants fixed at creation, by experiment key.
     * @type {Record<string, string>}
     */
    experiments: Record<string, string>;
    /**
     * @param {NavigationState | undefined | null} other
     * @returns {boolean}
     */
    equals(other: NavigationState | undefined | null): boolean;
    /** The screen features on screen and behind it, bottom to top. */
    get features(): string[];
}
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
/**
 * An action as a client posts it: `{type, from?, params?, interactive?}`.
 */
export type FlowAction = {
    type: string;
    from?: string;
    params?: JSONObject;
    interactive?: boolean;
};
/**
 * A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the flow
 * that owns it; `handoff` names the native step the app runs there instead (`purchase`).
 */
export type Screen = {
    id: string;
    feature: string;
    params: JSONObject;
    flow?: string;
    flowId?: string;
    handoff?: string;
};
/**
 * A flow controller: `stacked` (entries bottom to top) or `tabbed` (`selected` the tab shown),
 * with the flow it presents modally, if any.
 */
export type FlowNode = {
    id: string;
    flow: string;
    kind: 'stacked' | 'tabbed';
    style?: string;
    selected?: number;
    entries: Array<{
        screen: Screen;
    } | {
        flow: FlowNode;
    }>;
    presented?: FlowNode;
};
export type Transition = {
    type: string;
    from?: Screen;
    to?: Screen;
    animated: boolean;
    style?: string;
    interactive: boolean;
    result?: {
        id: string;
        feature: string;
        into: string;
    };
};
export type Interaction = {
    action: string;
    from?: string;
    progress: number;
    handledBy: string;
    transition?: Transition;
};
export type PendingAction = {
    action: FlowAction;
    source: string;
    guardFlow: string;
    guardFlowId: string;
};
export type FlagEvaluation = {
    value: JSONValue;
    variant?: string;
    reason?: string;
};
