/**
 * `"e7"` or `"f3"` read back: the digits must be canonical (no sign, no leading zero).
 * @param {string} text
 * @returns {{ isFlow: boolean, number: number } | null}
 */
export function parseEntryId(text: string): {
    isFlow: boolean;
    number: number;
} | null;
/**
 * A screen entry.
 * @param {number} id
 * @param {string} feature
 * @param {JSONObject} params
 * @param {boolean} [isHandoff]
 * @param {ListSection[] | null} [sections]
 * @returns {ScreenEntry}
 */
export function makeScreenEntry(id: number, feature: string, params: import("./json.js").JSONObject, isHandoff?: boolean | undefined, sections?: import("./screenList.js").ListSection[] | null | undefined): ScreenEntry;
/**
 * A flow node.
 * @param {number} id
 * @param {string} flow
 * @param {'stacked' | 'tabbed'} kind
 * @param {FlowEntry[]} entries
 * @param {number} [selected]
 * @param {string | null} [presentationStyle]
 * @param {FlowNode | null} [presented]
 * @returns {FlowNode}
 */
export function makeNode(id: number, flow: string, kind: 'stacked' | 'tabbed', entries: FlowEntry[], selected?: number | undefined, presentationStyle?: string | null | undefined, presented?: FlowNode | null | undefined): FlowNode;
/**
 * A screen together with the flow that owns it.
 * @param {ScreenEntry} screen
 * @param {FlowNode} owner
 * @returns {ScreenRef}
 */
export function screenRef(screen: ScreenEntry, owner: FlowNode): ScreenRef;
/**
 * The index of the entry on screen: the top of a stack, the selected tab.
 * @param {FlowNode} node
 */
export function activeIndex(node: FlowNode): number;
/**
 * A copy of `node` and every flow inside it, which the engine may then change in place; screens
 * are shared (a change to one replaces its entry).
 * @param {FlowNode} node
 * @returns {FlowNode}
 */
export function cloneNode(node: FlowNode): FlowNode;
/**
 * A copy of `tree` whose nodes and pending actions the engine may change in place.
 * @param {FlowTree} tree
 * @returns {FlowTree}
 */
export function cloneTree(tree: FlowTree): FlowTree;
/**
 * The node at `path` from `root`, if the path exists.
 * @param {FlowNode} root
 * @param {TreeStep[]} path
 * @returns {FlowNode | null}
 */
export function nodeAt(root: FlowNode, path: TreeStep[]): FlowNode | null;
/**
 * Dismisses every presentation held off the visible path, in place, keeping the invariant that
 * only visible flows present.
 * @param {FlowNode} node
 * @param {boolean} isVisible
 */
export function dismissHiddenPresentations(node: FlowNode, isVisible: boolean): void;
/**
 * Dismisses every presentation in `node` and inside it, in place; returns the style of the
 * outermost dismissed presentation, if any.
 * @param {FlowNode} node
 * @returns {string | null}
 */
export function dismissAllPresentations(node: FlowNode): string | null;
/**
 * The number of entries (screens and flows, this node included) and the deepest nesting.
 * @param {FlowNode} node
 * @returns {{ entries: number, depth: number }}
 */
export function measure(node: FlowNode): {
    entries: number;
    depth: number;
};
/**
 * Whether a flow with id `id` is anywhere in the tree below `node` (itself included).
 * @param {FlowNode} node
 * @param {number} id
 * @returns {boolean}
 */
export function containsFlow(node: FlowNode, id: number): boolean;
/**
 * Whether a screen with id `id` is anywhere below `node`.
 * @param {FlowNode} node
 * @param {number} id
 * @returns {boolean}
 */
export function containsScreen(node: FlowNode, id: number): boolean;
/**
 * The path to the screen on top; `null` only for a malformed tree.
 * @param {FlowTree} tree
 * @returns {VisiblePath | null}
 */
export function visiblePath(tree: FlowTree): VisiblePath | null;
/**
 * Whether `nodes[depth]` of a visible path is a presented flow.
 * @param {VisiblePath} visible
 * @param {number} depth
 */
export function isPresentedAt(visible: VisiblePath, depth: number): boolean;
/**
 * The screen on top: what the user sees.
 * @param {FlowTree} tree
 * @returns {ScreenRef | null}
 */
export function treeTop(tree: FlowTree): ScreenRef | null;
/**
 * What is on screen and behind it, bottom to top: every entry of a stack, the selected tab of a
 * tabbed flow, a presented flow on top of its presenter.
 * @param {FlowTree} tree
 * @returns {ScreenRef[]}
 */
export function treeScreens(tree: FlowTree): ScreenRef[];
/**
 * Where the screen with the id number `id` is, anywhere in the tree: the path to the flow that
 * owns it and its index in that flow's entries.
 * @param {FlowNode} root
 * @param {number} id
 * @returns {{ path: TreeStep[], index: number } | null}
 */
export function placeOfScreen(root: FlowNode, id: number): {
    path: TreeStep[];
    index: number;
} | null;
/**
 * The lists of the screens that have one, anywhere below `node`, by screen id.
 * @param {FlowNode} node
 * @param {Map<number, ListSection[]>} lists
 */
export function collectLists(node: FlowNode, lists: Map<number, ListSection[]>): void;
/**
 * The topmost screen in `screens` order showing `feature`, and the path to the flow owning it.
 * @param {FlowTree} tree
 * @param {string} feature
 * @returns {{ path: TreeStep[], index: number } | null}
 */
export function topmostScreen(tree: FlowTree, feature: string): {
    path: TreeStep[];
    index: number;
} | null;
/**
 * What breaks the tree's invariants; empty for every tree the engine produces. Ids are unique,
 * at least 1 and below `nextId`; every flow has an entry and a tabbed flow selects one of its
 * tabs; a flow has a presentation style exactly when it is presented; only flows on the visible
 * path present; the tree stays within `limits`.
 * @param {FlowTree} tree
 * @param {{ maxEntries: number, maxDepth: number }} limits
 * @returns {string[]}
 */
export function structuralProblems(tree: FlowTree, limits: {
    maxEntries: number;
    maxDepth: number;
}): string[];
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/** @typedef {import('./listChanges.js').ScreenListChange} ScreenListChange */
/**
 * A screen in a flow: a stable id (`"e7"` outside), the feature it shows, its params, whether
 * it is a hand-off (a native step the app runs itself, whose kind is `feature`), and its list.
 * @typedef {object} ScreenEntry
 * @property {'screen'} type
 * @property {number} id
 * @property {string} feature
 * @property {JSONObject} params
 * @property {boolean} isHandoff
 * @property {ListSection[] | null} sections the screen's list, sections of rows; null when it has
 *   none, which the state document shows by leaving `sections` out
 */
/**
 * A flow controller: a stack of entries (bottom to top) or a set of tabs and a selected index,
 * and at most one flow it presents modally over itself.
 * @typedef {object} FlowNode
 * @property {'flow'} type
 * @property {number} id clients see it as `"f3"`
 * @property {string} flow the name of its definition
 * @property {'stacked' | 'tabbed'} kind
 * @property {FlowEntry[]} entries never empty
 * @property {number} selected the selected tab of a tabbed flow; 0 for a stacked flow
 * @property {string | null} presentationStyle how it is presented, when it is
 * @property {FlowNode | null} presented
 */
/** @typedef {ScreenEntry | FlowNode} FlowEntry */
/**
 * What happened on the client: `{type, from?, row?, params?, interactive?}`.
 * @typedef {object} FlowAction
 * @property {string} type
 * @property {string | null} from the id of the screen the action came from
 * @property {string | null} row the id of the tapped row of the `from` screen's list (a row tap);
 *   the rule that handles the action reads it as the params `row.id`, `row.kind` and `row.values`
 * @property {JSONObject} params
 * @property {boolean} interactive whether to open an interactive transition
 */
/**
 * A screen with the flow that owns it: an element of `screens`, the `top`, a transition's end.
 * @typedef {object} ScreenRef
 * @property {number} id
 * @property {string} feature
 * @property {JSONObject} params
 * @property {string} flow
 * @property {number} flowId
 * @property {boolean} isHandoff
 */
/**
 * Which screen a `result` effect wrote to.
 * @typedef {object} ResultReceipt
 * @property {number} id
 * @property {string} feature
 * @property {string} into
 */
/**
 * What an applied action changed on screen, so a client can animate it. `list` means nothing
 * moved but lists changed: from and to are then the top.
 * @typedef {object} Transition
 * @property {'push' | 'pop' | 'popTo' | 'setRoot' | 'replaceRoot' | 'present' | 'dismiss' | 'selectTab' | 'list'} type
 * @property {ScreenRef | null} from
 * @property {ScreenRef | null} to
 * @property {boolean} animated
 * @property {string | null} style
 * @property {boolean} interactive
 * @property {ResultReceipt | null} result
 * @property {ScreenListChange[]} lists how the lists of screens that stay in the tree changed, by
 *   screen id ascending; empty when none did (screens that arrive or leave are drawn whole)
 */
/**
 * An interactive transition in progress.
 * @typedef {object} Interaction
 * @property {FlowAction} action the action as posted, applied again when it finishes
 * @property {number} progress from 0 to 1
 * @property {string} handledBy
 * @property {Transition | null} preview what finishing would do
 */
/**
 * A deep link waiting for its `when`.
 * @typedef {object} PendingLink
 * @property {string} uri
 * @property {string} pattern
 */
/**
 * An action held back by a guard until the guard's flow has left the tree.
 * @typedef {object} PendingAction
 * @property {FlowAction} action never interactive
 * @property {number} source the screen on top when it was posted
 * @property {string} guardFlow
 * @property {number} guardFlowId
 */
/**
 * A session's navigation state.
 * @typedef {object} FlowTree
 * @property {FlowNode} root
 * @property {number} nextId the id the next flow or screen gets
 * @property {Interaction | null} interaction
 * @property {PendingLink | null} pendingLink
 * @property {PendingAction[]} pendingActions outermost first
 */
/**
 * One step from a node to a child: an entry's index, or into the presented flow.
 * @typedef {number | 'presented'} TreeStep
 */
/**
 * The visible path: the nodes from the root to the flow owning the top screen, and that screen.
 * `steps[k]` leads from `nodes[k]` to `nodes[k + 1]`.
 * @typedef {object} VisiblePath
 * @property {TreeStep[]} steps
 * @property {FlowNode[]} nodes
 * @property {ScreenEntry} screen
 */
/** Ids stay below 2^53 so they survive any JSON reader. */
export const maxId: number;
/** Guards nest at most this deep: a guard flow whose own action is guarded, and so on. */
export const maxPendingActions: 8;
/**
 * Bounds on one session's tree: an action that would cross them is refused.
 * @typedef {object} FlowLimits
 * @property {number} maxEntries most entries, screens and flows counted
 * @property {number} maxDepth deepest nesting of flows, presentations included
 */
/** 256 entries, 32 levels. @type {FlowLimits} */
export const defaultFlowLimits: Readonly<{
    maxEntries: 256;
    maxDepth: 32;
}>;
export type JSONObject = import('./json.js').JSONObject;
export type JSONValue = import('./json.js').JSONValue;
export type ListSection = import('./screenList.js').ListSection;
export type ScreenListChange = import('./listChanges.js').ScreenListChange;
/**
 * A screen in a flow: a stable id (`"e7"` outside), the feature it shows, its params, whether
 * it is a hand-off (a native step the app runs itself, whose kind is `feature`), and its list.
 */
export type ScreenEntry = {
    type: 'screen';
    id: number;
    feature: string;
    params: import("./json.js").JSONObject;
    isHandoff: boolean;
    /**
     * the screen's list, sections of rows; null when it has
     * none, which the state document shows by leaving `sections` out
     */
    sections: ListSection[] | null;
};
/**
 * A flow controller: a stack of entries (bottom to top) or a set of tabs and a selected index,
 * and at most one flow it presents modally over itself.
 */
export type FlowNode = {
    type: 'flow';
    /**
     * clients see it as `"f3"`
     */
    id: number;
    /**
     * the name of its definition
     */
    flow: string;
    kind: 'stacked' | 'tabbed';
    /**
     * never empty
     */
    entries: FlowEntry[];
    /**
     * the selected tab of a tabbed flow; 0 for a stacked flow
     */
    selected: number;
    /**
     * how it is presented, when it is
     */
    presentationStyle: string | null;
    presented: FlowNode | null;
};
export type FlowEntry = ScreenEntry | FlowNode;
/**
 * What happened on the client: `{type, from?, row?, params?, interactive?}`.
 */
export type FlowAction = {
    type: string;
    /**
     * the id of the screen the action came from
     */
    from: string | null;
    /**
     * the id of the tapped row of the `from` screen's list (a row tap);
     * the rule that handles the action reads it as the params `row.id`, `row.kind` and `row.values`
     */
    row: string | null;
    params: import("./json.js").JSONObject;
    /**
     * whether to open an interactive transition
     */
    interactive: boolean;
};
/**
 * A screen with the flow that owns it: an element of `screens`, the `top`, a transition's end.
 */
export type ScreenRef = {
    id: number;
    feature: string;
    params: import("./json.js").JSONObject;
    flow: string;
    flowId: number;
    isHandoff: boolean;
};
/**
 * Which screen a `result` effect wrote to.
 */
export type ResultReceipt = {
    id: number;
    feature: string;
    into: string;
};
/**
 * What an applied action changed on screen, so a client can animate it. `list` means nothing
 * moved but lists changed: from and to are then the top.
 */
export type Transition = {
    type: 'push' | 'pop' | 'popTo' | 'setRoot' | 'replaceRoot' | 'present' | 'dismiss' | 'selectTab' | 'list';
    from: ScreenRef | null;
    to: ScreenRef | null;
    animated: boolean;
    style: string | null;
    interactive: boolean;
    result: ResultReceipt | null;
    /**
     * how the lists of screens that stay in the tree changed, by
     * screen id ascending; empty when none did (screens that arrive or leave are drawn whole)
     */
    lists: ScreenListChange[];
};
/**
 * An interactive transition in progress.
 */
export type Interaction = {
    /**
     * the action as posted, applied again when it finishes
     */
    action: FlowAction;
    /**
     * from 0 to 1
     */
    progress: number;
    handledBy: string;
    /**
     * what finishing would do
     */
    preview: Transition | null;
};
/**
 * A deep link waiting for its `when`.
 */
export type PendingLink = {
    uri: string;
    pattern: string;
};
/**
 * An action held back by a guard until the guard's flow has left the tree.
 */
export type PendingAction = {
    /**
     * never interactive
     */
    action: FlowAction;
    /**
     * the screen on top when it was posted
     */
    source: number;
    guardFlow: string;
    guardFlowId: number;
};
/**
 * A session's navigation state.
 */
export type FlowTree = {
    root: FlowNode;
    /**
     * the id the next flow or screen gets
     */
    nextId: number;
    interaction: Interaction | null;
    pendingLink: PendingLink | null;
    /**
     * outermost first
     */
    pendingActions: PendingAction[];
};
/**
 * One step from a node to a child: an entry's index, or into the presented flow.
 */
export type TreeStep = number | 'presented';
/**
 * The visible path: the nodes from the root to the flow owning the top screen, and that screen.
 * `steps[k]` leads from `nodes[k]` to `nodes[k + 1]`.
 */
export type VisiblePath = {
    steps: TreeStep[];
    nodes: FlowNode[];
    screen: ScreenEntry;
};
/**
 * Bounds on one session's tree: an action that would cross them is refused.
 */
export type FlowLimits = {
    /**
     * most entries, screens and flows counted
     */
    maxEntries: number;
    /**
     * deepest nesting of flows, presentations included
     */
    maxDepth: number;
};
