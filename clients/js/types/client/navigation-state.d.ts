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
 * An action as a client posts it: `{type, from?, row?, params?, interactive?}`; `row` is the id of
 * the tapped row of the `from` screen's list (a row tap).
 * @typedef {{type: string, from?: string, row?: string, params?: JSONObject, interactive?: boolean}} FlowAction
 */
/**
 * One row of a screen's list: a stable id (unique in the whole list), the cell kind the app
 * registers, and what the cell shows.
 * @typedef {{id: string, kind: string, values: JSONObject}} ListRow
 */
/**
 * One section of a screen's list.
 * @typedef {{id: string, title?: string, indexTitle?: string, rows: ListRow[]}} ListSection
 */
/**
 * A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the flow
 * that owns it; `handoff` names the native step the app runs there instead (`purchase`);
 * `sections` is its list, in `root` only (`screens`, `top` and transitions do not repeat it).
 * @typedef {{id: string, feature: string, params: JSONObject, flow?: string, flowId?: string, handoff?: string,
 *   sections?: ListSection[]}} Screen
 */
/**
 * A row's place: its section's index and its index within that section (`[section, row]` in
 * the document).
 * @typedef {{section: number, row: number}} RowPath
 */
/**
 * One level of a list's changes, in UIKit's batch-update terms: deleted at old indexes, inserted
 * at new ones, moved from old to new, then reloaded at new indexes once the batch is done.
 * @template P
 * @typedef {{deleted: Array<{id: string, at: P}>, inserted: Array<{id: string, at: P}>,
 *   moved: Array<{id: string, from: P, to: P}>, reloaded: Array<{id: string, at: P}>}} ListStage
 */
/**
 * How one screen's list changed between the version before and this one (docs/api.md, "List
 * changes"): apply `sections`, then `rows`, in one `performBatchUpdates`, and the list shows the
 * new rows without a diff of the client's own.
 * @typedef {{sections: ListStage<number>, rows: ListStage<RowPath>}} ListChanges
 */
/**
 * A flow controller: `stacked` (entries bottom to top) or `tabbed` (`selected` the tab shown),
 * with the flow it presents modally, if any.
 * @typedef {{id: string, flow: string, kind: 'stacked' | 'tabbed', style?: string, selected?: number,
 *   entries: Array<{screen: Screen} | {flow: FlowNode}>, presented?: FlowNode}} FlowNode
 */
/**
 * How a state came from the one before; `list` when nothing moved but lists changed. `lists`
 * holds the changes of each list that changed on a screen that stayed, by the screen's entry id
 * (`e9`); empty when none did.
 * @typedef {{type: string, from?: Screen, to?: Screen, animated: boolean, style?: string, interactive: boolean,
 *   result?: {id: string, feature: string, into: string}, lists: Record<string, ListChanges>}} Transition
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
    /**
     * The screen with entry id `id` anywhere in `root`, with its list (`screens` and `top` leave
     * lists out): `state.screen(state.top.id)?.sections`.
     * @param {string} id
     * @returns {Screen | undefined}
     */
    screen(id: string): Screen | undefined;
}
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
/**
 * An action as a client posts it: `{type, from?, row?, params?, interactive?}`; `row` is the id of
 * the tapped row of the `from` screen's list (a row tap).
 */
export type FlowAction = {
    type: string;
    from?: string;
    row?: string;
    params?: JSONObject;
    interactive?: boolean;
};
/**
 * One row of a screen's list: a stable id (unique in the whole list), the cell kind the app
 * registers, and what the cell shows.
 */
export type ListRow = {
    id: string;
    kind: string;
    values: JSONObject;
};
/**
 * One section of a screen's list.
 */
export type ListSection = {
    id: string;
    title?: string;
    indexTitle?: string;
    rows: ListRow[];
};
/**
 * A screen: its entry id (`e7`), its feature, its params, and (in `screens` and `top`) the flow
 * that owns it; `handoff` names the native step the app runs there instead (`purchase`);
 * `sections` is its list, in `root` only (`screens`, `top` and transitions do not repeat it).
 */
export type Screen = {
    id: string;
    feature: string;
    params: JSONObject;
    flow?: string;
    flowId?: string;
    handoff?: string;
    sections?: ListSection[];
};
/**
 * A row's place: its section's index and its index within that section (`[section, row]` in
 * the document).
 */
export type RowPath = {
    section: number;
    row: number;
};
/**
 * One level of a list's changes, in UIKit's batch-update terms: deleted at old indexes, inserted
 * at new ones, moved from old to new, then reloaded at new indexes once the batch is done.
 */
export type ListStage<P> = {
    deleted: Array<{
        id: string;
        at: P;
    }>;
    inserted: Array<{
        id: string;
        at: P;
    }>;
    moved: Array<{
        id: string;
        from: P;
        to: P;
    }>;
    reloaded: Array<{
        id: string;
        at: P;
    }>;
};
/**
 * How one screen's list changed between the version before and this one (docs/api.md, "List
 * changes"): apply `sections`, then `rows`, in one `performBatchUpdates`, and the list shows the
 * new rows without a diff of the client's own.
 */
export type ListChanges = {
    sections: ListStage<number>;
    rows: ListStage<RowPath>;
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
/**
 * How a state came from the one before; `list` when nothing moved but lists changed. `lists`
 * holds the changes of each list that changed on a screen that stayed, by the screen's entry id
 * (`e9`); empty when none did.
 */
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
    lists: Record<string, ListChanges>;
};
/**
 * How a state came from the one before; `list` when nothing moved but lists changed. `lists`
 * holds the changes of each list that changed on a screen that stayed, by the screen's entry id
 * (`e9`); empty when none did.
 */
export type Interaction = {
    action: string;
    from?: string;
    progress: number;
    handledBy: string;
    transition?: Transition;
};
/**
 * How a state came from the one before; `list` when nothing moved but lists changed. `lists`
 * holds the changes of each list that changed on a screen that stayed, by the screen's entry id
 * (`e9`); empty when none did.
 */
export type PendingAction = {
    action: FlowAction;
    source: string;
    guardFlow: string;
    guardFlowId: string;
};
/**
 * How a state came from the one before; `list` when nothing moved but lists changed. `lists`
 * holds the changes of each list that changed on a screen that stayed, by the screen's entry id
 * (`e9`); empty when none did.
 */
export type FlagEvaluation = {
    value: JSONValue;
    variant?: string;
    reason?: string;
};
