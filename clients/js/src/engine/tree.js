// tree: a session's navigation state — flow controllers, screens, the id counter, a pending
// interaction, link and guarded actions — and the walks over it (the visible path, `screens`,
// `top`). A port of FlowTree, FlowNode, ScreenEntry, ScreenRef and their Swift siblings.
//
// Trees are values: the engine never changes a tree it was given. Applying an action works on a
// copy (`cloneTree`) and returns it, so a client may keep any version it saw.

import { sameText } from './json.js';

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
export const maxId = 2 ** 53;

/**
 * `"e7"` or `"f3"` read back: the digits must be canonical (no sign, no leading zero).
 * @param {string} text
 * @returns {{ isFlow: boolean, number: number } | null}
 */
export function parseEntryId(text) {
  const first = text.charCodeAt(0);
  if (first !== 0x65 && first !== 0x66) return null;
  if (text.length < 2 || text.length > 19 || text.charCodeAt(1) === 0x30) return null;
  let number = 0;
  for (let index = 1; index < text.length; index += 1) {
    const c = text.charCodeAt(index);
    if (c < 0x30 || c > 0x39) return null;
    number = number * 10 + (c - 0x30);
  }
  return { isFlow: first === 0x66, number };
}

/**
 * A screen entry.
 * @param {number} id
 * @param {string} feature
 * @param {JSONObject} params
 * @param {boolean} [isHandoff]
 * @param {ListSection[] | null} [sections]
 * @returns {ScreenEntry}
 */
export function makeScreenEntry(id, feature, params, isHandoff = false, sections = null) {
  return { type: 'screen', id, feature, params, isHandoff, sections };
}

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
export function makeNode(id, flow, kind, entries, selected = 0, presentationStyle = null, presented = null) {
  return { type: 'flow', id, flow, kind, entries, selected, presentationStyle, presented };
}

/**
 * A screen together with the flow that owns it.
 * @param {ScreenEntry} screen
 * @param {FlowNode} owner
 * @returns {ScreenRef}
 */
export function screenRef(screen, owner) {
  return { id: screen.id, feature: screen.feature, params: screen.params, flow: owner.flow, flowId: owner.id, isHandoff: screen.isHandoff };
}

/**
 * The index of the entry on screen: the top of a stack, the selected tab.
 * @param {FlowNode} node
 */
export function activeIndex(node) {
  return node.kind === 'stacked' ? node.entries.length - 1 : node.selected;
}

/**
 * A copy of `node` and every flow inside it, which the engine may then change in place; screens
 * are shared (a change to one replaces its entry).
 * @param {FlowNode} node
 * @returns {FlowNode}
 */
export function cloneNode(node) {
  return {
    type: 'flow',
    id: node.id,
    flow: node.flow,
    kind: node.kind,
    entries: node.entries.map((entry) => (entry.type === 'flow' ? cloneNode(entry) : entry)),
    selected: node.selected,
    presentationStyle: node.presentationStyle,
    presented: node.presented ? cloneNode(node.presented) : null,
  };
}

/**
 * A copy of `tree` whose nodes and pending actions the engine may change in place.
 * @param {FlowTree} tree
 * @returns {FlowTree}
 */
export function cloneTree(tree) {
  return {
    root: cloneNode(tree.root),
    nextId: tree.nextId,
    interaction: tree.interaction,
    pendingLink: tree.pendingLink,
    pendingActions: tree.pendingActions.slice(),
  };
}

/**
 * The node at `path` from `root`, if the path exists.
 * @param {FlowNode} root
 * @param {TreeStep[]} path
 * @returns {FlowNode | null}
 */
export function nodeAt(root, path) {
  let node = root;
  for (const step of path) {
    if (step === 'presented') {
      if (!node.presented) return null;
      node = node.presented;
    } else {
      const entry = node.entries[step];
      if (!entry || entry.type !== 'flow') return null;
      node = entry;
    }
  }
  return node;
}

/**
 * Whether this node or any node inside it presents something.
 * @param {FlowNode} node
 * @returns {boolean}
 */
function containsPresentation(node) {
  if (node.presented) return true;
  for (const entry of node.entries) {
    if (entry.type === 'flow' && containsPresentation(entry)) return true;
  }
  return false;
}

/**
 * Dismisses every presentation held off the visible path, in place, keeping the invariant that
 * only visible flows present.
 * @param {FlowNode} node
 * @param {boolean} isVisible
 */
export function dismissHiddenPresentations(node, isVisible) {
  if (!isVisible) node.presented = null;
  else if (node.presented) dismissHiddenPresentations(node.presented, true);
  const active = activeIndex(node);
  node.entries.forEach((entry, index) => {
    if (entry.type !== 'flow' || !containsPresentation(entry)) return;
    dismissHiddenPresentations(entry, isVisible && index === active);
  });
}

/**
 * Dismisses every presentation in `node` and inside it, in place; returns the style of the
 * outermost dismissed presentation, if any.
 * @param {FlowNode} node
 * @returns {string | null}
 */
export function dismissAllPresentations(node) {
  let style = node.presented ? node.presented.presentationStyle : null;
  node.presented = null;
  for (const entry of node.entries) {
    if (entry.type !== 'flow' || !containsPresentation(entry)) continue;
    const inner = dismissAllPresentations(entry);
    if (style === null) style = inner;
  }
  return style;
}

/**
 * The number of entries (screens and flows, this node included) and the deepest nesting.
 * @param {FlowNode} node
 * @returns {{ entries: number, depth: number }}
 */
export function measure(node) {
  let count = 1;
  let depth = 1;
  for (const entry of node.entries) {
    if (entry.type === 'screen') {
      count += 1;
    } else {
      const inner = measure(entry);
      count += inner.entries;
      depth = Math.max(depth, inner.depth + 1);
    }
  }
  if (node.presented) {
    const inner = measure(node.presented);
    count += inner.entries;
    depth = Math.max(depth, inner.depth + 1);
  }
  return { entries: count, depth };
}

/**
 * Whether a flow with id `id` is anywhere in the tree below `node` (itself included).
 * @param {FlowNode} node
 * @param {number} id
 * @returns {boolean}
 */
export function containsFlow(node, id) {
  if (node.id === id) return true;
  for (const entry of node.entries) {
    if (entry.type === 'flow' && containsFlow(entry, id)) return true;
  }
  return node.presented ? containsFlow(node.presented, id) : false;
}

/**
 * Whether a screen with id `id` is anywhere below `node`.
 * @param {FlowNode} node
 * @param {number} id
 * @returns {boolean}
 */
export function containsScreen(node, id) {
  for (const entry of node.entries) {
    if (entry.type === 'screen') {
      if (entry.id === id) return true;
    } else if (containsScreen(entry, id)) {
      return true;
    }
  }
  return node.presented ? containsScreen(node.presented, id) : false;
}

/**
 * The path to the screen on top; `null` only for a malformed tree.
 * @param {FlowTree} tree
 * @returns {VisiblePath | null}
 */
export function visiblePath(tree) {
  /** @type {TreeStep[]} */
  const steps = [];
  /** @type {FlowNode[]} */
  const nodes = [];
  let node = tree.root;
  // Bounded so a malformed tree cannot loop; real trees are far shallower.
  for (let guard = 0; guard < 4096; guard += 1) {
    nodes.push(node);
    if (node.presented) {
      steps.push('presented');
      node = node.presented;
      continue;
    }
    const index = activeIndex(node);
    const entry = node.entries[index];
    if (!entry) return null;
    if (entry.type === 'screen') return { steps, nodes, screen: entry };
    steps.push(index);
    node = entry;
  }
  return null;
}

/**
 * Whether `nodes[depth]` of a visible path is a presented flow.
 * @param {VisiblePath} visible
 * @param {number} depth
 */
export function isPresentedAt(visible, depth) {
  return depth > 0 && visible.steps[depth - 1] === 'presented';
}

/**
 * The screen on top: what the user sees.
 * @param {FlowTree} tree
 * @returns {ScreenRef | null}
 */
export function treeTop(tree) {
  let node = tree.root;
  for (let guard = 0; guard < 4096; guard += 1) {
    if (node.presented) {
      node = node.presented;
      continue;
    }
    const entry = node.entries[activeIndex(node)];
    if (!entry) return null;
    if (entry.type === 'screen') return screenRef(entry, node);
    node = entry;
  }
  return null;
}

/**
 * What is on screen and behind it, bottom to top: every entry of a stack, the selected tab of a
 * tabbed flow, a presented flow on top of its presenter.
 * @param {FlowTree} tree
 * @returns {ScreenRef[]}
 */
export function treeScreens(tree) {
  /** @type {ScreenRef[]} */
  const result = [];
  collectScreens(tree.root, result);
  return result;
}

/**
 * @param {FlowNode} node
 * @param {ScreenRef[]} result
 */
function collectScreens(node, result) {
  /** @param {FlowEntry} entry */
  const collect = (entry) => {
    if (entry.type === 'screen') result.push(screenRef(entry, node));
    else collectScreens(entry, result);
  };
  if (node.kind === 'stacked') {
    for (const entry of node.entries) collect(entry);
  } else if (node.selected >= 0 && node.selected < node.entries.length) {
    collect(node.entries[node.selected]);
  }
  if (node.presented) collectScreens(node.presented, result);
}

/**
 * Where the screen with the id number `id` is, anywhere in the tree: the path to the flow that
 * owns it and its index in that flow's entries.
 * @param {FlowNode} root
 * @param {number} id
 * @returns {{ path: TreeStep[], index: number } | null}
 */
export function placeOfScreen(root, id) {
  /** @type {TreeStep[]} */
  const path = [];
  /**
   * @param {FlowNode} node
   * @returns {{ path: TreeStep[], index: number } | null}
   */
  const visit = (node) => {
    for (let index = 0; index < node.entries.length; index += 1) {
      const entry = node.entries[index];
      if (entry.type === 'screen') {
        if (entry.id === id) return { path: path.slice(), index };
        continue;
      }
      path.push(index);
      const found = visit(entry);
      if (found) return found;
      path.pop();
    }
    if (node.presented) {
      path.push('presented');
      const found = visit(node.presented);
      if (found) return found;
      path.pop();
    }
    return null;
  };
  return visit(root);
}

/**
 * The lists of the screens that have one, anywhere below `node`, by screen id.
 * @param {FlowNode} node
 * @param {Map<number, ListSection[]>} lists
 */
export function collectLists(node, lists) {
  for (const entry of node.entries) {
    if (entry.type === 'screen') {
      if (entry.sections) lists.set(entry.id, entry.sections);
    } else {
      collectLists(entry, lists);
    }
  }
  if (node.presented) collectLists(node.presented, lists);
}

/**
 * The topmost screen in `screens` order showing `feature`, and the path to the flow owning it.
 * @param {FlowTree} tree
 * @param {string} feature
 * @returns {{ path: TreeStep[], index: number } | null}
 */
export function topmostScreen(tree, feature) {
  /** @type {{ path: TreeStep[], index: number } | null} */
  let found = null;
  /** @type {TreeStep[]} */
  const path = [];
  /** @param {FlowNode} node */
  const visit = (node) => {
    const shown = node.kind === 'stacked'
      ? node.entries.map((_, index) => index)
      : (node.selected >= 0 && node.selected < node.entries.length ? [node.selected] : []);
    for (const index of shown) {
      const entry = node.entries[index];
      if (entry.type === 'screen') {
        if (sameText(entry.feature, feature)) found = { path: path.slice(), index };
      } else {
        path.push(index);
        visit(entry);
        path.pop();
      }
    }
    if (node.presented) {
      path.push('presented');
      visit(node.presented);
      path.pop();
    }
  };
  visit(tree.root);
  return found;
}

/**
 * What breaks the tree's invariants; empty for every tree the engine produces. Ids are unique,
 * at least 1 and below `nextId`; every flow has an entry and a tabbed flow selects one of its
 * tabs; a flow has a presentation style exactly when it is presented; only flows on the visible
 * path present; the tree stays within `limits`.
 * @param {FlowTree} tree
 * @param {{ maxEntries: number, maxDepth: number }} limits
 * @returns {string[]}
 */
export function structuralProblems(tree, limits) {
  /** @type {string[]} */
  const problems = [];
  const seen = new Set();
  const nextId = tree.nextId;
  if (nextId < 1 || nextId > maxId) problems.push(`nextId ${nextId} is outside 1...${maxId}`);
  /**
   * @param {number} id
   * @param {string} path
   */
  const checkId = (id, path) => {
    if (id < 1 || id >= nextId) problems.push(`${path}: id ${id} is outside 1..<${nextId}`);
    if (seen.has(id)) problems.push(`${path}: id ${id} is used twice`);
    seen.add(id);
  };
  /**
   * @param {FlowNode} node
   * @param {string} path
   * @param {boolean} isPresented
   * @param {boolean} isVisible
   * @param {number} depth
   */
  const visit = (node, path, isPresented, isVisible, depth) => {
    if (depth > 4096) {
      problems.push(`${path}: nesting is too deep`);
      return;
    }
    checkId(node.id, path);
    if (node.flow === '') problems.push(`${path}: the flow name is empty`);
    if (node.entries.length === 0) problems.push(`${path}: flow ${node.flow} has no entries`);
    if (node.kind === 'stacked' && node.selected !== 0) {
      problems.push(`${path}: stacked flow ${node.flow} has selected ${node.selected}; it must be 0`);
    } else if (node.kind === 'tabbed' && !(node.selected >= 0 && node.selected < node.entries.length)) {
      problems.push(`${path}: tabbed flow ${node.flow} selects tab ${node.selected} of ${node.entries.length}`);
    }
    if (isPresented && node.presentationStyle === null) problems.push(`${path}: presented flow ${node.flow} has no presentation style`);
    if (!isPresented && node.presentationStyle !== null) problems.push(`${path}: flow ${node.flow} has a presentation style but is not presented`);
    if (node.presented) {
      if (!isVisible) problems.push(`${path}: flow ${node.flow} presents ${node.presented.flow} while off screen`);
      visit(node.presented, path + '/presented', true, isVisible, depth + 1);
    }
    const active = activeIndex(node);
    node.entries.forEach((entry, index) => {
      const entryPath = `${path}/entries/${index}`;
      if (entry.type === 'screen') {
        checkId(entry.id, entryPath);
        if (entry.feature === '') problems.push(`${entryPath}: the feature is empty`);
      } else {
        visit(entry, entryPath, false, isVisible && index === active, depth + 1);
      }
    });
  };
  visit(tree.root, 'root', false, true, 1);
  const size = measure(tree.root);
  if (size.entries > limits.maxEntries) problems.push(`the tree holds ${size.entries} entries; the limit is ${limits.maxEntries}`);
  if (size.depth > limits.maxDepth) problems.push(`flows nest ${size.depth} levels deep; the limit is ${limits.maxDepth}`);
  const interaction = tree.interaction;
  if (interaction) {
    if (!(interaction.progress >= 0 && interaction.progress <= 1)) {
      problems.push(`the interaction's progress ${interaction.progress} is outside 0...1`);
    }
    if (interaction.action.type === '' || interaction.handledBy === '') {
      problems.push("the interaction lacks its action type or handling flow");
    }
  }
  if (tree.pendingLink && (tree.pendingLink.uri === '' || tree.pendingLink.pattern === '')) {
    problems.push('the pending link lacks its uri or pattern');
  }
  if (tree.pendingActions.length > maxPendingActions) {
    problems.push(`${tree.pendingActions.length} actions wait for guards; the limit is ${maxPendingActions}`);
  }
  tree.pendingActions.forEach((pending, index) => {
    if (pending.action.type === '' || pending.guardFlow === '') problems.push(`pending action ${index} lacks its type or its guard's flow`);
    if (pending.source < 1 || pending.source >= nextId || pending.guardFlowId < 1 || pending.guardFlowId >= nextId) {
      problems.push(`pending action ${index} names an id outside 1..<${nextId}`);
    }
  });
  return problems;
}

/** Guards nest at most this deep: a guard flow whose own action is guarded, and so on. */
export const maxPendingActions = 8;

/**
 * Bounds on one session's tree: an action that would cross them is refused.
 * @typedef {object} FlowLimits
 * @property {number} maxEntries most entries, screens and flows counted
 * @property {number} maxDepth deepest nesting of flows, presentations included
 */

/** 256 entries, 32 levels. @type {FlowLimits} */
export const defaultFlowLimits = Object.freeze({ maxEntries: 256, maxDepth: 32 });
