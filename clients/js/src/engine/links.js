// links: deep links — resolving a URI against the root flow's links, following it as a cold
// start would, deferring it until its `when` holds, cancelling it (a port of FlowEngine+links).

import { FlowError } from './errors.js';
import { abbreviatedJSON, getMember, setMember, jsonEquals, jsonPointer, sameText, stringValue, typeName, writeJSON } from './json.js';
import { evaluateCondition } from './condition.js';
import { rootFlowName } from './definition.js';
import { LinkSyntaxError, captures, isMoreSpecific, parseLinkURI } from './linkPattern.js';
import { treeScreens, treeTop, maxId, defaultFlowLimits } from './tree.js';
import {
  applyAction, checkSource, isInteractionAction, linkAction, linkCancel, startTree, withUserChanges,
} from './engine.js';

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
export function resolveLink(uri, catalog, field = '/params/uri') {
  /** @type {import('./linkPattern.js').LinkURI} */
  let parsed;
  try {
    parsed = parseLinkURI(uri);
  } catch (error) {
    if (!(error instanceof LinkSyntaxError)) throw error;
    throw FlowError.invalidParams(field, `${error.message}; found ${abbreviatedJSON(uri, 80)}`);
  }
  const links = catalog.get(rootFlowName)?.links ?? [];
  /** @type {{ index: number, link: FlowLink, captures: { name: string, value: string }[] } | null} */
  let best = null;
  links.forEach((link, index) => {
    const captured = captures(link.pattern, parsed);
    if (!captured) return;
    if (best && !isMoreSpecific(link.pattern, best.link.pattern)) return;
    best = { index, link, captures: captured };
  });
  if (!best) throw FlowError.unknownLink(uri);
  /** @type {{ index: number, link: FlowLink, captures: { name: string, value: string }[] }} */
  const found = best;
  const pattern = found.link.pattern.text;
  /** @type {JSONObject} */
  const params = new Map();
  for (const capture of found.captures) {
    const type = found.link.params.find((param) => sameText(param.name, capture.name))?.type ?? 'string';
    const value = linkValue(capture.value, type);
    if (value === undefined) {
      const article = ['integer', 'object', 'array', 'any'].includes(type) ? 'an' : 'a';
      throw FlowError.invalidParams(field,
        `placeholder {${capture.name}} of link ${pattern} must be ${article} ${type}; found ${abbreviatedJSON(capture.value, 40)}`);
    }
    setMember(params, capture.name, value);
  }
  const actions = found.link.actions.map((action) => {
    const substituted = substitute(action.params, params, pattern);
    return { type: action.type, from: null, row: null, params: substituted instanceof Map ? substituted : new Map(), interactive: false };
  });
  return { pattern, index: found.index, params, actions, when: found.link.when };
}

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
export function followLink(uri, tree, catalog, context, limits = defaultFlowLimits, field = '/params/uri') {
  if (tree) {
    if (!(tree.nextId >= 1 && tree.nextId <= maxId)) throw FlowError.corruptTree(`nextId ${tree.nextId} is outside 1...${maxId}`);
    if (tree.interaction) throw FlowError.interactionPending(linkAction, tree.interaction.action.type);
  }
  const match = resolveLink(uri, catalog, field);
  return follow(match, uri, tree, catalog, context, limits);
}

/**
 * @param {LinkMatch} match
 * @param {string} uri
 * @param {FlowTree | null} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {LinkOutcome}
 */
function follow(match, uri, tree, catalog, context, limits) {
  if (!linkHolds(match, context)) {
    const base = tree ?? startTree(catalog, context, limits);
    const kept = { ...base, pendingLink: { uri, pattern: match.pattern } };
    return { match, deferred: true, tree: kept, transition: null, handledBy: rootFlowName, userChanges: [] };
  }
  const rebuilt = rebuild(match, tree ? tree.nextId : 1, catalog, context, limits);
  const transition = tree ? linkTransition(tree, rebuilt) : null;
  return { match, deferred: false, tree: rebuilt.tree, transition, handledBy: rebuilt.handledBy, userChanges: rebuilt.userChanges };
}

/**
 * Whether the link may be followed in `context`, with its captured values as the `param` source.
 * @param {LinkMatch} match
 * @param {FlowContext} context
 */
function linkHolds(match, context) {
  return match.when ? evaluateCondition(match.when, context, match.params) : true;
}

/**
 * `link {uri}` and `link.cancel`, which every flow understands.
 * @param {FlowAction} action
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {ActionOutcome}
 */
export function applyLinkAction(action, tree, catalog, context, limits) {
  const top = treeTop(tree);
  if (!top) throw FlowError.corruptTree('no screen is on top');
  if (action.from !== null) checkSource(action.from, top);
  if (action.interactive) {
    throw FlowError.invalidParams('/interactive', `${action.type} cannot be interactive; post it without "interactive": true`);
  }
  // A link taps no row: refused, as "interactive" is, rather than carried unchecked.
  if (action.row !== null && action.row !== undefined) {
    throw FlowError.invalidParams('/row', `${action.type} taps no row; post it without "row"`);
  }
  if (action.type === linkCancel) {
    const first = action.params.keys().next();
    if (!first.done) {
      throw FlowError.invalidParams(jsonPointer(['params', first.value]), `link.cancel takes no params; found ${abbreviatedJSON(first.value)}`);
    }
    return { tree: { ...tree, pendingLink: null }, transition: null, handledBy: rootFlowName, userChanges: [], interactionEvent: null };
  }
  for (const key of action.params.keys()) {
    if (!sameText(key, 'uri')) {
      throw FlowError.invalidParams(jsonPointer(['params', key]), `unknown param ${abbreviatedJSON(key)} of link; it takes uri only`);
    }
  }
  const raw = getMember(action.params, 'uri');
  if (raw === undefined) {
    throw FlowError.invalidParams('/params/uri', 'link needs param "uri": the URI to open, such as "/modal/Hi" or "myapp://x/home/1"');
  }
  const uri = stringValue(raw);
  if (uri === undefined) throw FlowError.invalidParams('/params/uri', `uri must be a string such as "/modal/Hi"; found ${typeName(raw)}`);
  const match = resolveLink(uri, catalog, '/params/uri');
  const outcome = follow(match, uri, tree, catalog, context, limits);
  return { tree: outcome.tree, transition: outcome.transition, handledBy: outcome.handledBy, userChanges: outcome.userChanges, interactionEvent: null };
}

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
export function followPendingLink(outcome, before, catalog, context, limits) {
  const pending = outcome.tree.pendingLink;
  if (!pending) return outcome;
  const current = withUserChanges(context, outcome.userChanges);
  const dropped = { ...outcome, tree: { ...outcome.tree, pendingLink: null } };
  let match;
  try {
    match = resolveLink(pending.uri, catalog);
  } catch (error) {
    if (error instanceof FlowError) return dropped;
    throw error;
  }
  if (!linkHolds(match, current)) return outcome;
  let rebuilt;
  try {
    rebuilt = rebuild(match, outcome.tree.nextId, catalog, current, limits);
  } catch (error) {
    if (error instanceof FlowError) return dropped;
    throw error;
  }
  return {
    tree: rebuilt.tree, transition: linkTransition(before, rebuilt), handledBy: outcome.handledBy,
    userChanges: [...outcome.userChanges, ...rebuilt.userChanges], interactionEvent: outcome.interactionEvent,
  };
}

/**
 * A cold-start stack with a link's actions applied.
 * @typedef {object} RebuiltStack
 * @property {FlowTree} tree
 * @property {string} handledBy
 * @property {UserChange[]} userChanges
 * @property {Transition | null} lastTransition the transition of the last action
 * @property {ScreenRef[]} screensBeforeLast what was on screen before the last action
 */

/**
 * @param {LinkMatch} match
 * @param {number} firstId
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {RebuiltStack}
 */
function rebuild(match, firstId, catalog, context, limits) {
  let current = context;
  const tree = startTree(catalog, current, limits, firstId);
  /** @type {RebuiltStack} */
  const rebuilt = { tree, handledBy: rootFlowName, userChanges: [], lastTransition: null, screensBeforeLast: treeScreens(tree) };
  match.actions.forEach((action, step) => {
    let outcome;
    try {
      if (action.type === linkAction || action.type === linkCancel || isInteractionAction(action.type)) {
        throw FlowError.refused(rootFlowName, action.type,
          "a link's actions move through the flows; they cannot follow links or drive interactions");
      }
      outcome = applyAction(action, rebuilt.tree, catalog, current, limits);
    } catch (error) {
      if (!(error instanceof FlowError)) throw error;
      throw FlowError.linkRefused(match.pattern, step, action.type, error);
    }
    rebuilt.screensBeforeLast = treeScreens(rebuilt.tree);
    rebuilt.tree = outcome.tree;
    rebuilt.handledBy = outcome.handledBy;
    rebuilt.lastTransition = outcome.transition;
    rebuilt.userChanges = [...rebuilt.userChanges, ...outcome.userChanges];
    // As the server does between actions: later steps see the user state earlier ones set.
    current = withUserChanges(current, outcome.userChanges);
  });
  return rebuilt;
}

/**
 * One transition from the old top to the linked top: the last action's when the screens before
 * it are those the user saw, else `replaceRoot` with `crossFade` (not animated when nothing
 * shown changed).
 * @param {FlowTree} old
 * @param {RebuiltStack} rebuilt
 * @returns {Transition | null}
 */
function linkTransition(old, rebuilt) {
  const source = treeTop(old);
  const target = treeTop(rebuilt.tree);
  if (!source || !target) return null;
  const seen = treeScreens(old);
  const last = rebuilt.lastTransition;
  if (last && showSame(rebuilt.screensBeforeLast, seen)) {
    return { type: last.type, from: source, to: target, animated: last.animated, style: last.style, interactive: false, result: null, lists: [] };
  }
  const unchanged = showSame(treeScreens(rebuilt.tree), seen);
  return { type: 'replaceRoot', from: source, to: target, animated: !unchanged, style: 'crossFade', interactive: false, result: null, lists: [] };
}

/**
 * Whether two lists of screens look the same: flows, features and params, ids aside.
 * @param {ScreenRef[]} lhs
 * @param {ScreenRef[]} rhs
 */
function showSame(lhs, rhs) {
  return lhs.length === rhs.length
    && lhs.every((screen, index) => screen.flow === rhs[index].flow && sameText(screen.feature, rhs[index].feature)
      && jsonEquals(screen.params, rhs[index].params));
}

/**
 * A captured text as its placeholder's type: `integer` (`[+-]?[0-9]+`), `number` (decimal with
 * optional fraction and exponent), `boolean` (`true` or `false`, any case), `string`.
 * @param {string} text
 * @param {RuleParam['type']} type
 * @returns {JSONValue | undefined}
 */
function linkValue(text, type) {
  switch (type) {
    case 'integer':
      return /^[+-]?[0-9]+$/.test(text) ? exactInteger(text) : undefined;
    case 'number': {
      if (/^[+-]?[0-9]+$/.test(text)) {
        const integer = exactInteger(text);
        if (integer !== undefined) return integer;
      }
      if (!/^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(text)) return undefined;
      const number = Number(text);
      return Number.isFinite(number) ? number : undefined;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      return undefined;
    }
    default:
      return text;
  }
}

/**
 * The integer `text` writes when it fits in 64 bits, as a number (or a bigint past 2^53).
 * @param {string} text
 * @returns {number | bigint | undefined}
 */
function exactInteger(text) {
  const value = BigInt(text);
  if (value < -(2n ** 63n) || value > 2n ** 63n - 1n) return undefined;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/**
 * Replaces each `{"$link": name}` with the captured value.
 * @param {JSONValue} value
 * @param {JSONObject} params
 * @param {string} pattern
 * @returns {JSONValue}
 */
function substitute(value, params, pattern) {
  if (value instanceof Map) {
    const name = value.size === 1 ? stringValue(getMember(value, '$link')) : undefined;
    if (name !== undefined) {
      const captured = getMember(params, name);
      if (captured === undefined) {
        throw FlowError.brokenDefinition(rootFlowName,
          `link ${pattern} uses {"$link": ${writeJSON(name)}}, which its pattern does not capture`);
      }
      return captured;
    }
    /** @type {JSONObject} */
    const result = new Map();
    for (const [key, member] of value) result.set(key, substitute(member, params, pattern));
    return result;
  }
  if (Array.isArray(value)) return value.map((element) => substitute(element, params, pattern));
  return value;
}
