/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./builder.js').FlowCatalog} FlowCatalog */
/** @typedef {import('./definition.js').FlowLink} FlowLink */
/** @typedef {import('./definition.js').RuleParam} RuleParam */
/** @typedef {import('./effects.js').UserChange} UserChange */
/** @typedef {import('./engine.js').ActionOutcome} ActionOutcome */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./tree.js').ScreenRef} ScreenRef */
/** @typedef {import('./tree.js').Transition} Transition */
/**
 * A URI resolved against the root flow's links.
 * @typedef {object} LinkMatch
 * @property {string} pattern as written
 * @property {number} index the link's index in `links`
 * @property {JSONObject} params the captured values, typed as the link declares
 * @property {FlowAction[]} actions the link's actions with every `{"$link": name}` replaced
 * @property {FlowCondition | null} when
 */
/**
 * Finds the link of the root flow that `uri` opens. When several patterns match, the most
 * specific wins (see `isMoreSpecific`), then the first declared.
 *
 * ```js
 * resolveLink('myapp://x/home/1', catalog).params;   // Map { 'tab' => 1 }
 * ```
 * @param {string} uri
 * @param {FlowCatalog} catalog
 * @param {string} [field] the JSON Pointer of the URI in the request, for errors
 * @returns {LinkMatch}
 * @throws {FlowError} invalid-params, unknown-link
 */
export function resolveLink(uri: string, catalog: import("./builder.js").FlowCatalog, field?: string | undefined): LinkMatch;
/**
 * What following a link produced.
 * @typedef {object} LinkOutcome
 * @property {LinkMatch} match
 * @property {boolean} deferred the link's `when` did not hold: it waits as the pending link
 * @property {FlowTree} tree
 * @property {Transition | null} transition
 * @property {string} handledBy
 * @property {UserChange[]} userChanges
 */
/**
 * Follows the link `uri` opens, in a running session (`tree`) or a new one (`null`): the stack is
 * rebuilt as a cold start would build it, with ids from the old tree's `nextId`, then the link's
 * actions apply in order, all or nothing. When its `when` does not hold, the link waits as the
 * tree's pending link and nothing moves.
 * @param {string} uri
 * @param {FlowTree | null} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} [limits]
 * @param {string} [field]
 * @returns {LinkOutcome}
 */
export function followLink(uri: string, tree: FlowTree | null, catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits?: import("./tree.js").FlowLimits | undefined, field?: string | undefined): LinkOutcome;
/**
 * `link {uri}` and `link.cancel`, which every flow understands.
 * @param {FlowAction} action
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {ActionOutcome}
 */
export function applyLinkAction(action: FlowAction, tree: FlowTree, catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits: FlowLimits): ActionOutcome;
/**
 * After `outcome` (an applied action on `before`), follows the tree's pending link if it now
 * holds. A pending link that no longer resolves, or whose actions are refused now, is dropped and
 * the action's own outcome stands.
 * @param {ActionOutcome} outcome
 * @param {FlowTree} before
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {ActionOutcome}
 */
export function followPendingLink(outcome: ActionOutcome, before: FlowTree, catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits: FlowLimits): ActionOutcome;
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowContext = import('./condition.js').FlowContext;
export type FlowCondition = import('./condition.js').FlowCondition;
export type FlowCatalog = import('./builder.js').FlowCatalog;
export type FlowLink = import('./definition.js').FlowLink;
export type RuleParam = import('./definition.js').RuleParam;
export type UserChange = import('./effects.js').UserChange;
export type ActionOutcome = import('./engine.js').ActionOutcome;
export type FlowTree = import('./tree.js').FlowTree;
export type FlowAction = import('./tree.js').FlowAction;
export type FlowLimits = import('./tree.js').FlowLimits;
export type ScreenRef = import('./tree.js').ScreenRef;
export type Transition = import('./tree.js').Transition;
/**
 * A URI resolved against the root flow's links.
 */
export type LinkMatch = {
    /**
     * as written
     */
    pattern: string;
    /**
     * the link's index in `links`
     */
    index: number;
    /**
     * the captured values, typed as the link declares
     */
    params: import("./json.js").JSONObject;
    /**
     * the link's actions with every `{"$link": name}` replaced
     */
    actions: FlowAction[];
    when: FlowCondition | null;
};
/**
 * What following a link produced.
 */
export type LinkOutcome = {
    match: LinkMatch;
    /**
     * the link's `when` did not hold: it waits as the pending link
     */
    deferred: boolean;
    tree: FlowTree;
    transition: Transition | null;
    handledBy: string;
    userChanges: UserChange[];
};
/**
 * A cold-start stack with a link's actions applied.
 */
export type RebuiltStack = {
    tree: FlowTree;
    handledBy: string;
    userChanges: UserChange[];
    /**
     * the transition of the last action
     */
    lastTransition: Transition | null;
    /**
     * what was on screen before the last action
     */
    screensBeforeLast: ScreenRef[];
};
