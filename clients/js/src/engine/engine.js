// engine: the entry points — build a session's first tree, apply an action to a tree — with the
// delegate chain, the generic `back`, guards and the actions they hold back, and interactive
// transitions (a port of FlowEngine, FlowEngine+route, +guards, +interaction and
// DefinitionDelegate).
//
// Decisions where the design is silent are the Swift engine's, documented on `FlowEngine`:
// effects apply to the flow whose delegate handled the action, all or nothing; a rule's `from`
// is matched against the source screen even when the action was passed up; only flows on the
// visible path present; `back` is routed like any action first, then pops the nearest stack with
// more than one entry within the topmost presented layer, else dismisses that layer.

import { FlowError } from './errors.js';
import { FlowBuilder } from './builder.js';
import { EffectRun } from './effects.js';
import { evaluateCondition } from './condition.js';
import { paramAccepts, ruleBubbles, rootFlowName } from './definition.js';
import { abbreviatedJSON, doubleValue, getMember, jsonPointer, removeMember, sameText, setMember, typeName, writeJSON } from './json.js';
import {
  collectLists, containsFlow, containsScreen, defaultFlowLimits, isPresentedAt, maxId, maxPendingActions, measure,
  parseEntryId, treeTop, visiblePath,
} from './tree.js';
import { applyLinkAction, followPendingLink } from './links.js';
import { rowIdParam, rowKindParam, rowParams, rowValuesParam } from './action.js';
import { placeOfRow, sameSections } from './screenList.js';
import { diffLists, listChangesAreEmpty } from './listChanges.js';

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

export const interactionUpdate = 'interaction.update';
export const interactionEnd = 'interaction.end';
export const interactionCancel = 'interaction.cancel';
export const linkAction = 'link';
export const linkCancel = 'link.cancel';

/** Velocity (points per second) above which `interaction.end` finishes whatever the progress. */
const finishVelocity = 300;
/** Progress above which `interaction.end` finishes. */
const finishProgress = 0.5;

/**
 * Whether `type` is one of the interaction actions.
 * @param {string} type
 */
export function isInteractionAction(type) {
  return type === interactionUpdate || type === interactionEnd || type === interactionCancel;
}

/**
 * An action from its parts.
 * @param {string} type
 * @param {{ from?: string | null, row?: string | null, params?: JSONObject, interactive?: boolean }} [parts]
 * @returns {FlowAction}
 */
export function makeAction(type, parts = {}) {
  return {
    type, from: parts.from ?? null, row: parts.row ?? null, params: parts.params ?? new Map(), interactive: parts.interactive ?? false,
  };
}

/**
 * @param {Partial<ActionOutcome> & { tree: FlowTree, handledBy: string }} parts
 * @returns {ActionOutcome}
 */
function outcomeOf(parts) {
  return {
    tree: parts.tree, transition: parts.transition ?? null, handledBy: parts.handledBy, userChanges: parts.userChanges ?? [],
    interactionEvent: parts.interactionEvent ?? null,
  };
}

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
export function startTree(catalog, context, limits = defaultFlowLimits, firstId = 1, rootFlow = rootFlowName) {
  const builder = new FlowBuilder(catalog, context, limits, firstId);
  const root = builder.makeNode(rootFlow, new Map());
  const size = measure(root);
  if (size.entries > limits.maxEntries || size.depth > limits.maxDepth) {
    throw FlowError.brokenDefinition(rootFlow,
      `its initial tree has ${size.entries} entries nested ${size.depth} deep; the limits are ${limits.maxEntries} and ${limits.maxDepth}`);
  }
  if (builder.nextId > maxId) throw FlowError.corruptTree(`the session has used every id up to ${maxId}`);
  return { root, nextId: builder.nextId, interaction: null, pendingLink: null, pendingActions: [] };
}

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
export function applyAction(action, tree, catalog, context, limits = defaultFlowLimits) {
  const outcome = applyWithoutLists(action, tree, catalog, context, limits);
  return withListChanges(outcome, tree);
}

/**
 * The outcome with the changes of every list that changed on a screen still in the tree
 * (`transition.lists`); a version that changed only lists gets a `list` transition from the top
 * to itself. Trees without lists pay one walk of their screens.
 * @param {ActionOutcome} outcome
 * @param {FlowTree} before
 * @returns {ActionOutcome}
 */
export function withListChanges(outcome, before) {
  /** @type {Map<number, ListSection[]>} */
  const old = new Map();
  collectLists(before.root, old);
  if (old.size === 0) return outcome;
  /** @type {Map<number, ListSection[]>} */
  const next = new Map();
  collectLists(outcome.tree.root, next);
  /** @type {ScreenListChange[]} */
  const lists = [];
  for (const id of [...next.keys()].sort((a, b) => a - b)) {
    const was = old.get(id);
    const now = next.get(id);
    if (!was || !now || was === now || sameSections(was, now)) continue;
    const changes = diffLists(was, now);
    if (!listChangesAreEmpty(changes)) lists.push({ id, changes });
  }
  if (lists.length === 0) return outcome;
  if (!outcome.transition) {
    const top = treeTop(outcome.tree);
    return {
      ...outcome,
      transition: { type: 'list', from: top, to: top, animated: true, style: null, interactive: false, result: null, lists },
    };
  }
  return { ...outcome, transition: { ...outcome.transition, lists } };
}

/**
 * `applyAction` before the list changes are worked out.
 * @param {FlowAction} action
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {ActionOutcome}
 */
function applyWithoutLists(action, tree, catalog, context, limits) {
  if (action.type === '') throw FlowError.invalidParams('/type', 'type must be a non-empty action type, such as "back"');
  if (!(tree.nextId >= 1 && tree.nextId <= maxId)) throw FlowError.corruptTree(`nextId ${tree.nextId} is outside 1...${maxId}`);
  /** @type {ActionOutcome} */
  let outcome;
  if (tree.interaction) {
    outcome = continueInteraction(tree.interaction, action, tree, catalog, context, limits);
    if (outcome.interactionEvent !== 'finished') return outcome;
  } else if (isInteractionAction(action.type)) {
    throw FlowError.noInteraction(action.type);
  } else if (action.type === linkAction || action.type === linkCancel) {
    return applyLinkAction(action, tree, catalog, context, limits);
  } else {
    outcome = applyNow(action, tree, catalog, context, limits, false);
    if (outcome.interactionEvent === 'started') return outcome;
  }
  let resumed = outcome;
  if (outcome.tree.pendingActions.length > 0) {
    resumed = resumePendingActions(outcome, tree, catalog, context, limits);
  }
  if (!resumed.tree.pendingLink) return resumed;
  return followPendingLink(resumed, tree, catalog, context, limits);
}

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
export function applyNow(action, tree, catalog, context, limits, finishing, resuming = false) {
  const visible = visiblePath(tree);
  if (!visible) throw FlowError.corruptTree('no screen is on top');
  const source = topOf(visible);
  if (action.from !== null) checkSource(action.from, source);
  // A row tap reaches the rules with the row as params; the action itself (kept while a guard
  // waits, or while an interaction is pending) stays as the client sent it.
  const routed = withRowParams(action, visible.screen);
  const plan = route(routed, visible, catalog, context);
  const run = new EffectRun(tree, plan.path, plan.handledBy, routed, catalog, context, limits, source.id);
  if (plan.isGuard) return applyGuard(plan, action, source, run, resuming, finishing);
  if (action.interactive && !finishing) {
    if (!plan.allowsInteractive) {
      throw FlowError.refused(plan.handledBy, action.type, 'it cannot run as an interactive transition; its rule does not set "interactive": true');
    }
    // A dry run proves the action would apply and gives the preview; the tree itself does not
    // change until the interaction finishes.
    run.apply(plan.effects);
    const pending = {
      ...tree,
      interaction: { action, progress: 0, handledBy: plan.handledBy, preview: run.transition(source, true) },
    };
    return outcomeOf({ tree: pending, handledBy: plan.handledBy, interactionEvent: 'started' });
  }
  run.apply(plan.effects);
  return outcomeOf({
    tree: run.tree, transition: run.transition(source, finishing), handledBy: plan.handledBy, userChanges: run.userChanges,
    interactionEvent: finishing ? 'finished' : null,
  });
}

/**
 * The action with the tapped row's `row.id`, `row.kind` and `row.values` in its params (any params
 * of those names removed when it taps no row); refused when the row is not in the source screen's
 * list.
 * @param {FlowAction} action
 * @param {ScreenEntry} screen
 * @returns {FlowAction}
 * @throws {FlowError} stale-row
 */
export function withRowParams(action, screen) {
  if (action.row === null) {
    if (!rowParams.some((name) => action.params.has(name))) return action;
    const params = new Map(action.params);
    for (const name of rowParams) params.delete(name);
    return { ...action, params };
  }
  const place = screen.sections ? placeOfRow(action.row, screen.sections) : null;
  if (!screen.sections || !place) throw FlowError.staleRow(action.row, `e${screen.id}`);
  const row = screen.sections[place.section].rows[place.row];
  const params = new Map(action.params);
  setMember(params, rowIdParam, row.id);
  setMember(params, rowKindParam, row.kind);
  setMember(params, rowValuesParam, row.values);
  return { ...action, params };
}

/**
 * The top screen of a visible path, with its owner.
 * @param {VisiblePath} visible
 * @returns {ScreenRef}
 */
function topOf(visible) {
  const owner = visible.nodes[visible.nodes.length - 1];
  const screen = visible.screen;
  return { id: screen.id, feature: screen.feature, params: screen.params, flow: owner.flow, flowId: owner.id, isHandoff: screen.isHandoff };
}

/**
 * `from` must name the screen on top: anything else is a client acting on a screen that is gone
 * or covered (a double tap's second tap), refused rather than applied twice.
 * @param {string} from
 * @param {ScreenRef} top
 */
export function checkSource(from, top) {
  const id = parseEntryId(from);
  if (!id) {
    throw FlowError.invalidParams('/from', `from must be a screen id such as "e7"; found ${abbreviatedJSON(from, 40)}`);
  }
  if (id.isFlow || id.number !== top.id) throw FlowError.staleSource(from, `e${top.id}`);
}

// MARK: route

/**
 * Walks the delegate chain from the source screen's flow up to the root.
 * @param {FlowAction} action
 * @param {VisiblePath} visible
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @returns {RoutePlan}
 */
function route(action, visible, catalog, context) {
  /** @type {string[]} */
  const walked = [];
  const source = topOf(visible);
  for (let depth = visible.nodes.length - 1; depth >= 0; depth -= 1) {
    const node = visible.nodes[depth];
    walked.push(node.flow);
    const child = depth + 1 < visible.nodes.length ? visible.nodes[depth + 1].flow : null;
    const decision = decide(action, node, source, child, catalog, context);
    if (decision.kind === 'pass') continue;
    if (decision.kind === 'refuse') throw FlowError.refused(node.flow, action.type, decision.reason);
    const path = visible.steps.slice(0, depth);
    if (decision.kind === 'guarded') {
      return { path, effects: decision.effects, allowsInteractive: false, handledBy: node.flow, isGuard: true };
    }
    if (decision.effects.length === 1 && decision.effects[0].name === 'bubble') continue;
    return { path, effects: decision.effects, allowsInteractive: decision.allowsInteractive, handledBy: node.flow, isGuard: false };
  }
  if (action.type === 'back') {
    const plan = genericBack(visible);
    if (plan) return plan;
    throw FlowError.refused(visible.nodes[0].flow, action.type,
      'there is nothing to go back to: every stack on screen has a single entry and nothing is presented');
  }
  throw FlowError.unhandled(action.type, walked);
}

/**
 * What one flow's definition decides: an action type it does not name passes to the parent; for
 * one it names, the first rule whose `from`, `via` and `when` match decides (a bubble rule passes
 * up, any other has its params checked and its guard or effects applied); no match is a refusal,
 * because the flow owns the action and a client must not skip a step.
 * @param {FlowAction} action
 * @param {FlowNode} node
 * @param {ScreenRef} source
 * @param {string | null} child
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @returns {{ kind: 'pass' } | { kind: 'refuse', reason: string } | { kind: 'handle', effects: FlowEffect[], allowsInteractive: boolean } | { kind: 'guarded', effects: FlowEffect[] }}
 */
function decide(action, node, source, child, catalog, context) {
  const definition = catalog.get(node.flow);
  if (!definition) return { kind: 'pass' };
  const rules = getMember(definition.rulesByAction, action.type);
  if (!rules) return { kind: 'pass' };
  for (const rule of rules) {
    if (!ruleMatches(rule, source.feature, child, context, action.params)) continue;
    if (ruleBubbles(rule)) return { kind: 'pass' };
    checkParams(rule.params, action);
    if (rule.guarded && !evaluateCondition(rule.guarded.when, context, action.params)) {
      return { kind: 'guarded', effects: rule.guarded.otherwise };
    }
    return { kind: 'handle', effects: rule.effects, allowsInteractive: rule.interactive };
  }
  return { kind: 'refuse', reason: explainNoMatch(rules, source.feature, child, source) };
}

/**
 * Whether `rule` applies to an action from a screen of `feature` that came up through the child
 * flow `child` (null when it comes from the flow's own screen).
 * @param {FlowRule} rule
 * @param {string} feature
 * @param {string | null} child
 * @param {FlowContext} context
 * @param {JSONObject} params
 */
export function ruleMatches(rule, feature, child, context, params) {
  if (rule.from && !rule.from.some((candidate) => sameText(candidate, feature))) return false;
  // The engine puts the tapped row's kind in `row.kind` (and refuses that param otherwise).
  if (rule.row) {
    const kind = getMember(params, rowKindParam);
    if (typeof kind !== 'string' || !rule.row.some((candidate) => sameText(candidate, kind))) return false;
  }
  if (rule.via && (child === null || !rule.via.includes(child))) return false;
  if (rule.when && !evaluateCondition(rule.when, context, params)) return false;
  return true;
}

/**
 * Checks the action's params against a rule's declarations.
 * @param {RuleParam[]} declared
 * @param {FlowAction} action
 */
function checkParams(declared, action) {
  for (const param of declared) {
    const path = jsonPointer(['params', param.name]);
    const value = getMember(action.params, param.name);
    if (value === undefined) {
      if (param.required) throw FlowError.invalidParams(path, `${action.type} needs param ${writeJSON(param.name)} (${param.type})`);
      continue;
    }
    if (!paramAccepts(param.type, value)) {
      throw FlowError.invalidParams(path,
        `param ${writeJSON(param.name)} of ${action.type} must be ${param.type}; found ${typeName(value)} ${abbreviatedJSON(value, 40)}`);
    }
  }
}

/**
 * @param {FlowRule[]} rules
 * @param {string} feature
 * @param {string | null} child
 * @param {ScreenRef} source
 */
function explainNoMatch(rules, feature, child, source) {
  const viaMatches = rules.some((rule) => (rule.via ? child !== null && rule.via.includes(child) : true));
  if (!viaMatches) {
    /** @type {string[]} */
    const expected = [];
    for (const rule of rules) for (const name of rule.via ?? []) if (!expected.includes(name)) expected.push(name);
    const came = child !== null ? `it came up through ${child}` : `it came from a screen of this flow (${feature}, e${source.id})`;
    return `it is accepted only through ${expected.join(' or ')}, but ${came}`;
  }
  const fromMatches = rules.some((rule) => (rule.from ? rule.from.some((candidate) => sameText(candidate, feature)) : true));
  if (!fromMatches) {
    /** @type {string[]} */
    const expected = [];
    for (const rule of rules) for (const name of rule.from ?? []) if (!expected.includes(name)) expected.push(name);
    return `it is accepted only from ${expected.join(' or ')}, but the screen on top is ${feature} (e${source.id})`;
  }
  return `no rule matches from ${feature} (e${source.id}): the when conditions of its rules do not hold`;
}

/**
 * The generic `back`: pop the nearest stack above the top screen with more than one entry
 * within the topmost layer; else dismiss that layer if it is presented.
 * @param {VisiblePath} visible
 * @returns {RoutePlan | null}
 */
export function genericBack(visible) {
  for (let depth = visible.nodes.length - 1; depth >= 0; depth -= 1) {
    const node = visible.nodes[depth];
    const path = visible.steps.slice(0, depth);
    if (node.kind === 'stacked' && node.entries.length > 1) {
      return { path, effects: [{ name: 'pop' }], allowsInteractive: true, handledBy: node.flow, isGuard: false };
    }
    if (isPresentedAt(visible, depth)) {
      return { path, effects: [{ name: 'dismiss' }], allowsInteractive: true, handledBy: node.flow, isGuard: false };
    }
  }
  return null;
}

// MARK: guards

/**
 * A rule's guard failed: its `else` effects apply (they show the guard's flow) and the action
 * waits in the tree's pending actions until that flow has left the tree.
 * @param {RoutePlan} plan
 * @param {FlowAction} action
 * @param {ScreenRef} source
 * @param {EffectRun} run
 * @param {boolean} resuming
 * @param {boolean} finishing
 * @returns {ActionOutcome}
 */
function applyGuard(plan, action, source, run, resuming, finishing) {
  if (resuming) throw FlowError.refused(plan.handledBy, action.type, 'its guard still does not hold');
  if (action.interactive && !finishing) {
    throw FlowError.refused(plan.handledBy, action.type,
      'its guard does not hold, so it cannot start as an interactive transition; post it without "interactive": true');
  }
  if (run.tree.pendingActions.length >= maxPendingActions) {
    throw FlowError.refused(plan.handledBy, action.type,
      `${maxPendingActions} guarded actions already wait for their guards; finish or cancel one first`);
  }
  run.apply(plan.effects);
  const shown = run.shownFlows[0];
  if (!shown) throw FlowError.refused(plan.handledBy, action.type, "its guard's effects show no flow to satisfy the guard");
  // The guard's flow must be what the user sees, over the screen the action came from; else the
  // action could never resume or the user would not see the flow.
  const visible = visiblePath(run.tree);
  if (!visible || !visible.nodes.some((node) => node.id === shown.id)) {
    throw FlowError.refused(plan.handledBy, action.type,
      `its guard's flow ${shown.name} would not be on screen (something ${plan.handledBy} presents covers it)`);
  }
  if (!containsScreen(run.tree.root, source.id)) {
    throw FlowError.refused(plan.handledBy, action.type, "its guard's effects remove the screen it came from, so it could never resume");
  }
  const tree = {
    ...run.tree,
    pendingActions: [...run.tree.pendingActions, { action: { ...action, interactive: false }, source: source.id, guardFlow: shown.name, guardFlowId: shown.id }],
  };
  return outcomeOf({
    tree, transition: run.transition(source, false), handledBy: plan.handledBy, userChanges: run.userChanges,
    interactionEvent: finishing ? 'finished' : null,
  });
}

/**
 * After `outcome` (an applied action on `before`), resumes the pending actions whose guard flow
 * has left the tree, innermost first, with the action's user changes in the context. One whose
 * screen is not on top, or that is refused now, is dropped and the action's own outcome stands.
 * @param {ActionOutcome} outcome
 * @param {FlowTree} before
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {ActionOutcome}
 */
function resumePendingActions(outcome, before, catalog, context, limits) {
  let current = withUserChanges(context, outcome.userChanges);
  let tree = outcome.tree;
  let userChanges = outcome.userChanges;
  /** @type {Transition | null} */
  let lastResumed = null;
  for (;;) {
    const pending = tree.pendingActions[tree.pendingActions.length - 1];
    if (!pending || containsFlow(tree.root, pending.guardFlowId)) break;
    tree = { ...tree, pendingActions: tree.pendingActions.slice(0, -1) };
    const top = treeTop(tree);
    if (!top || top.id !== pending.source) continue;
    const action = { ...pending.action, from: `e${top.id}` };
    /** @type {ActionOutcome} */
    let again;
    try {
      again = applyNow(action, tree, catalog, current, limits, false, true);
    } catch (error) {
      if (error instanceof FlowError) continue;
      throw error;
    }
    current = withUserChanges(current, again.userChanges);
    tree = again.tree;
    userChanges = [...userChanges, ...again.userChanges];
    if (again.transition) lastResumed = again.transition;
  }
  /** @type {ActionOutcome} */
  const result = { ...outcome, tree, userChanges };
  if (lastResumed) {
    result.transition = {
      type: lastResumed.type, from: treeTop(before), to: treeTop(tree), animated: lastResumed.animated,
      style: lastResumed.style, interactive: false, result: lastResumed.result ?? outcome.transition?.result ?? null, lists: [],
    };
  }
  return result;
}

/**
 * `context` with `changes` applied to its user state (a new context; the given one is kept), as
 * the server stores them, key by key: a value replaces what the key held, a `null` removes it.
 * @param {FlowContext} context
 * @param {UserChange[]} changes
 * @returns {FlowContext}
 */
export function withUserChanges(context, changes) {
  if (changes.length === 0) return context;
  const user = new Map(context.user);
  for (const change of changes) {
    if (change.value === null) removeMember(user, change.key);
    else setMember(user, change.key, change.value);
  }
  return { ...context, user };
}

// MARK: interaction

/**
 * While an interaction is pending only the interaction actions apply; `from` and `interactive`
 * are ignored on them.
 * @param {import('./tree.js').Interaction} interaction
 * @param {FlowAction} action
 * @param {FlowTree} tree
 * @param {FlowCatalog} catalog
 * @param {FlowContext} context
 * @param {FlowLimits} limits
 * @returns {ActionOutcome}
 */
function continueInteraction(interaction, action, tree, catalog, context, limits) {
  switch (action.type) {
    case interactionUpdate: {
      const progress = progressParam(action, true) ?? interaction.progress;
      const moved = { ...tree, interaction: { ...interaction, progress } };
      return outcomeOf({ tree: moved, handledBy: interaction.handledBy, interactionEvent: 'updated' });
    }
    case interactionEnd: {
      const progress = progressParam(action, false) ?? interaction.progress;
      const velocity = velocityParam(action) ?? 0;
      if (!(velocity > finishVelocity || progress > finishProgress)) return cancelled(interaction, tree);
      // Effects are computed again now: the tree has not changed since the interaction opened,
      // so they are those of the preview.
      return applyNow(interaction.action, { ...tree, interaction: null }, catalog, context, limits, true);
    }
    case interactionCancel:
      return cancelled(interaction, tree);
    default:
      throw FlowError.interactionPending(action.type, interaction.action.type);
  }
}

/**
 * @param {import('./tree.js').Interaction} interaction
 * @param {FlowTree} tree
 */
function cancelled(interaction, tree) {
  return outcomeOf({ tree: { ...tree, interaction: null }, handledBy: interaction.handledBy, interactionEvent: 'cancelled' });
}

/**
 * @param {FlowAction} action
 * @param {boolean} required
 * @returns {number | null}
 */
function progressParam(action, required) {
  const value = getMember(action.params, 'progress');
  if (value === undefined) {
    if (required) throw FlowError.invalidParams('/params/progress', `${action.type} needs param "progress", a number from 0 to 1`);
    return null;
  }
  const progress = doubleValue(value);
  if (progress === undefined || !(progress >= 0 && progress <= 1)) {
    throw FlowError.invalidParams('/params/progress', `progress must be a number from 0 to 1; found ${abbreviatedJSON(value, 40)}`);
  }
  return progress;
}

/**
 * @param {FlowAction} action
 * @returns {number | null}
 */
function velocityParam(action) {
  const value = getMember(action.params, 'velocity');
  if (value === undefined) return null;
  const velocity = doubleValue(value);
  if (velocity === undefined || !Number.isFinite(velocity)) {
    throw FlowError.invalidParams('/params/velocity', `velocity must be a number (points per second); found ${abbreviatedJSON(value, 40)}`);
  }
  return velocity;
}

// MARK: available actions

/**
 * An action the current state accepts: its type, the flow that would handle it, the params its
 * rule declares, whether it may be posted with `"interactive": true`, and for a row tap the kinds
 * of the rows it takes (absent for an action posted without a row; kinds rather than row ids, so
 * the answer stays small for a long list).
 * @typedef {{ type: string, handledBy: string, params: RuleParam[], interactive: boolean, rowKinds?: string[] }} AvailableAction
 */

/**
 * What `rule` offers: its params, and whether it may start interactively now.
 * @param {FlowRule} rule
 * @param {string} type
 * @param {string} flow
 * @param {FlowContext} context
 * @param {JSONObject} params
 * @returns {AvailableAction}
 */
function offerRule(rule, type, flow, context, params) {
  // A guard that fails now shows its flow instead, which cannot start interactively.
  const guardFails = rule.guarded ? !evaluateCondition(rule.guarded.when, context, params) : false;
  return { type, handledBy: flow, params: rule.params, interactive: rule.interactive && !guardFails };
}

/**
 * The distinct kinds of the screen's rows (canonically equivalent spellings are one kind), in the
 * order they first appear in its list.
 * @param {ScreenEntry} screen
 * @returns {string[]}
 */
function rowKindsOf(screen) {
  if (!screen.sections) return [];
  const seen = new Set();
  const kinds = [];
  for (const section of screen.sections) {
    for (const row of section.rows) {
      const key = row.kind.normalize('NFD');
      if (seen.has(key)) continue;
      seen.add(key);
      kinds.push(row.kind);
    }
  }
  return kinds;
}

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
export function availableActions(tree, catalog, context) {
  if (tree.interaction) {
    const handledBy = tree.interaction.handledBy;
    return [
      { type: interactionUpdate, handledBy, params: [{ name: 'progress', type: 'number', required: true }], interactive: false },
      {
        type: interactionEnd, handledBy, interactive: false,
        params: [{ name: 'progress', type: 'number', required: false }, { name: 'velocity', type: 'number', required: false }],
      },
      { type: interactionCancel, handledBy, params: [], interactive: false },
    ];
  }
  const visible = visiblePath(tree);
  if (!visible) return [];
  const feature = visible.screen.feature;
  const kinds = rowKindsOf(visible.screen);
  const noParams = new Map();
  /** @type {Set<string>} */
  const decided = new Set();
  /** The (type, row kind) pairs a flow has decided, by canonical spelling, as `decided` holds plain types. */
  const decidedTaps = new Set();
  /** @type {AvailableAction[]} */
  const available = [];
  for (let depth = visible.nodes.length - 1; depth >= 0; depth -= 1) {
    const flow = visible.nodes[depth].flow;
    const definition = catalog.get(flow);
    if (!definition) continue;
    const child = depth + 1 < visible.nodes.length ? visible.nodes[depth + 1].flow : null;
    for (const handler of definition.handlers) {
      if (!decided.has(handler.action)) {
        const rule = handler.rules.find((candidate) => ruleMatches(candidate, feature, child, context, noParams));
        if (!rule) {
          decided.add(handler.action); // owned but refused from here
        } else if (!ruleBubbles(rule)) { // else the parent decides
          decided.add(handler.action);
          available.push(offerRule(rule, handler.action, flow, context, noParams));
        }
      }
      // The row taps of this type, grouped by the rule each kind reaches.
      /** @type {{rule: number, kinds: string[]}[]} */
      const taps = [];
      for (const kind of kinds) {
        const key = `${handler.action.normalize('NFD')}\u0000${kind.normalize('NFD')}`;
        if (decidedTaps.has(key)) continue;
        const params = new Map([[rowKindParam, kind]]);
        const index = handler.rules.findIndex((candidate) => ruleMatches(candidate, feature, child, context, params));
        if (index < 0) {
          decidedTaps.add(key);
          continue;
        }
        if (ruleBubbles(handler.rules[index])) continue;
        decidedTaps.add(key);
        if (!handler.rules[index].row) continue;
        const group = taps.find((tap) => tap.rule === index);
        if (group) group.kinds.push(kind);
        else taps.push({ rule: index, kinds: [kind] });
      }
      taps.sort((lhs, rhs) => lhs.rule - rhs.rule);
      for (const tap of taps) {
        const entry = offerRule(handler.rules[tap.rule], handler.action, flow, context, new Map([[rowKindParam, tap.kinds[0]]]));
        entry.rowKinds = tap.kinds;
        available.push(entry);
      }
    }
  }
  if (!decided.has('back')) {
    const plan = genericBack(visible);
    if (plan) available.push({ type: 'back', handledBy: plan.handledBy, params: [], interactive: true });
  }
  if (tree.pendingLink) available.push({ type: linkCancel, handledBy: rootFlowName, params: [], interactive: false });
  return available;
}
