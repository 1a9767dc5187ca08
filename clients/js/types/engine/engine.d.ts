/**
 * Whether `type` is one of the interaction actions.
 * @param {string} type
 */
export function isInteractionAction(type: string): boolean;
/**
 * An action from its parts.
 * @param {string} type
 * @param {{ from?: string | null, row?: string | null, params?: JSONObject, interactive?: boolean }} [parts]
 * @returns {FlowAction}
 */
export function makeAction(type: string, parts?: {
    from?: string | null | undefined;
    row?: string | null | undefined;
    params?: import("./json.js").JSONObject | undefined;
    interactive?: boolean | undefined;
} | undefined): FlowAction;
/**
 * Builds a session's first tree from the root flow: initial entries whose `when` holds, child
 * flows built recursively, ids from `firstId` (a link rebuilding a running session's stack starts
 * at the old tree's `nextId`, so no id a client saw is given again).
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} [limits]
 * @param {number} [firstId]
 * @param {string} [rootFlow]
 * @returns {FlowTree}
 * @throws {FlowError} broken-definition
 */
export function startTree(catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits?: import("./tree.js").FlowLimits | undefined, firstId?: number | undefined, rootFlow?: string | undefined): FlowTree;
/**
 * Applies `action` to `tree`; `tree` itself never changes.
 *
 * The action goes to the flow owning the source screen (`from`, which must be the screen on top),
 * then up through its ancestors until a delegate handles or refuses it. `back`, the interaction
 * actions, `link {uri}` and `link.cancel` are understood by every flow. After an applied action,
 * pending actions whose guard's flow has left are resumed and a pending link that now holds is
 * followed.
 * @param {FlowAction} action
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} [limits]
 * @returns {ActionOutcome}
 * @throws {FlowError}
 */
export function applyAction(action: FlowAction, tree: FlowTree, catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits?: import("./tree.js").FlowLimits | undefined): ActionOutcome;
/**
 * The outcome with the changes of every list that changed on a screen still in the tree
 * (`transition.lists`); a version that changed only lists gets a `list` transition from the top
 * to itself. Trees without lists pay one walk of their screens.
 * @param {ActionOutcome} outcome
 * @param {FlowTree} before
 * @returns {ActionOutcome}
 */
export function withListChanges(outcome: ActionOutcome, before: FlowTree): ActionOutcome;
/**
 * Routes and applies `action`; with `finishing` it is the action of an interaction being
 * finished, with `resuming` a pending action applied again after its guard's flow.
 * @param {FlowAction} action
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @param {boolean} finishing
 * @param {boolean} [resuming]
 * @returns {ActionOutcome}
 */
export function applyNow(action: FlowAction, tree: FlowTree, catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits: FlowLimits, finishing: boolean, resuming?: boolean | undefined): ActionOutcome;
/**
 * The action with the tapped row's `row.id`, `row.kind` and `row.values` in its params (any params
 * of those names removed when it taps no row); refused when the row is not in the source screen's
 * list.
 * @param {FlowAction} action
 * @param {ScreenEntry} screen
 * @returns {FlowAction}
 * @throws {FlowError} stale-row
 */
export function withRowParams(action: FlowAction, screen: ScreenEntry): FlowAction;
/**
 * `from` must name the screen on top: anything else is a client acting on a screen that is gone
 * or covered (a double tap's second tap), refused rather than applied twice.
 * @param {string} from
 * @param {ScreenRef} top
 */
export function checkSource(from: string, top: ScreenRef): void;
/**
 * Whether `rule` applies to an action from a screen of `feature` that came up through the child
 * flow `child` (null when it comes from the flow's own screen).
 * @param {FlowRule} rule
 * @param {string} feature
 * @param {string | null} child
 * @param {FlowContext} context
 * @param {JSONObject} params
 */
export function ruleMatches(rule: FlowRule, feature: string, child: string | null, context: FlowContext, params: import("./json.js").JSONObject): boolean;
/**
 * The generic `back`: pop the nearest stack above the top screen with more than one entry
 * within the topmost layer; else dismiss that layer if it is presented.
 * @param {VisiblePath} visible
 * @returns {RoutePlan | null}
 */
export function genericBack(visible: VisiblePath): RoutePlan | null;
/**
 * `context` with `changes` applied to its user state (a new context; the given one is kept), as
 * the server stores them, key by key: a value replaces what the key held, a `null` removes it.
 * @param {FlowContext} context
 * @param {UserChange[]} changes
 * @returns {FlowContext}
 */
export function withUserChanges(context: FlowContext, changes: UserChange[]): FlowContext;
/**
 * The actions the current state accepts from the screen on top, nearest flow first, in
 * definition order, then `back` when it would do something and `link.cancel` when a link is
 * pending. Rules are matched with no action params. While an interaction is pending, the three
 * interaction actions are the only ones.
 *
 * Row taps are listed too when the screen on top has a list: per action type, one entry per rule
 * naming `row` that a row of the list would reach, with the kinds it takes, right after the type's
 * plain entry. A tap is judged per kind with `row.kind` as its only param; a rule without `row`
 * takes a tap as it takes a plain post, so its plain entry stands for both.
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @returns {AvailableAction[]}
 */
export function availableActions(tree: FlowTree, catalog: import("./builder.js").FlowCatalog, context: FlowContext): AvailableAction[];
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./builder.js').FlowCatalog} FlowCatalog */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./definition.js').FlowRule} FlowRule */
/** @typedef {import('./definition.js').RuleParam} RuleParam */
/** @typedef {import('./effects.js').UserChange} UserChange */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./tree.js').ScreenRef} ScreenRef */
/** @typedef {import('./tree.js').Transition} Transition */
/** @typedef {import('./tree.js').TreeStep} TreeStep */
/** @typedef {import('./tree.js').VisiblePath} VisiblePath */
/** @typedef {import('./tree.js').ScreenEntry} ScreenEntry */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/** @typedef {import('./listChanges.js').ScreenListChange} ScreenListChange */
/**
 * What applying an action produced.
 * @typedef {object} ActionOutcome
 * @property {FlowTree} tree the tree after the action
 * @property {Transition | null} transition what changed on screen; null when nothing did
 * @property {string} handledBy the flow whose delegate handled the action
 * @property {UserChange[]} userChanges user state to keep, in the order the effects set it
 * @property {'started' | 'updated' | 'finished' | 'cancelled' | null} interactionEvent
 */
/**
 * The decision of the chain: which flow handles the action and with which effects.
 * @typedef {object} RoutePlan
 * @property {TreeStep[]} path from the root to the handling flow
 * @property {FlowEffect[]} effects
 * @property {boolean} allowsInteractive
 * @property {string} handledBy
 * @property {boolean} isGuard whether the effects are a guard's: the action waits for its flow
 */
export const interactionUpdate: "interaction.update";
export const interactionEnd: "interaction.end";
export const interactionCancel: "interaction.cancel";
export const linkAction: "link";
export const linkCancel: "link.cancel";
/**
 * An action the current state accepts: its type, the flow that would handle it, the params its
 * rule declares, whether it may be posted with `"interactive": true`, and for a row tap the kinds
 * of the rows it takes (absent for an action posted without a row; kinds rather than row ids, so
 * the answer stays small for a long list).
 */
export type AvailableAction = {
    type: string;
    handledBy: string;
    params: RuleParam[];
    interactive: boolean;
    rowKinds?: string[];
};
export type JSONObject = import('./json.js').JSONObject;
export type FlowContext = import('./condition.js').FlowContext;
export type FlowCatalog = import('./builder.js').FlowCatalog;
export type FlowEffect = import('./definition.js').FlowEffect;
export type FlowRule = import('./definition.js').FlowRule;
export type RuleParam = import('./definition.js').RuleParam;
export type UserChange = import('./effects.js').UserChange;
export type FlowTree = import('./tree.js').FlowTree;
export type FlowNode = import('./tree.js').FlowNode;
export type FlowAction = import('./tree.js').FlowAction;
export type FlowLimits = import('./tree.js').FlowLimits;
export type ScreenRef = import('./tree.js').ScreenRef;
export type Transition = import('./tree.js').Transition;
export type TreeStep = import('./tree.js').TreeStep;
export type VisiblePath = import('./tree.js').VisiblePath;
export type ScreenEntry = import('./tree.js').ScreenEntry;
export type ListSection = import('./screenList.js').ListSection;
export type ScreenListChange = import('./listChanges.js').ScreenListChange;
/**
 * What applying an action produced.
 */
export type ActionOutcome = {
    /**
     * the tree after the action
     */
    tree: FlowTree;
    /**
     * what changed on screen; null when nothing did
     */
    transition: Transition | null;
    /**
     * the flow whose delegate handled the action
     */
    handledBy: string;
    /**
     * user state to keep, in the order the effects set it
     */
    userChanges: UserChange[];
    interactionEvent: 'started' | 'updated' | 'finished' | 'cancelled' | null;
};
/**
 * The decision of the chain: which flow handles the action and with which effects.
 */
export type RoutePlan = {
    /**
     * from the root to the handling flow
     */
    path: TreeStep[];
    effects: FlowEffect[];
    allowsInteractive: boolean;
    handledBy: string;
    /**
     * whether the effects are a guard's: the action waits for its flow
     */
    isGuard: boolean;
};
