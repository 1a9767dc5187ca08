// builder: builds flow controllers from their definitions, drawing ids from the session's
// counter (a port of FlowBuilder).

import { FlowError } from './errors.js';
import { jsonPointer, setMembers, writeJSON } from './json.js';
import { evaluateCondition } from './condition.js';
import { makeNode, makeScreenEntry } from './tree.js';
import { ListProblem, readSections } from './screenList.js';

/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./definition.js').FlowDefinition} FlowDefinition */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowEntry} FlowEntry */
/** @typedef {import('./tree.js').ScreenEntry} ScreenEntry */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./screenList.js').ListSection} ListSection */

/**
 * The flows a session can use: definitions by name. The root flow is `app`.
 * @typedef {Map<string, FlowDefinition>} FlowCatalog
 */

/**
 * Builds flow controllers: initial entries filtered by their `when`, child flows built
 * recursively, ids from the session's counter. A flow built with params hands them to its
 * initial entries (a screen's own params win), which is how
 * `present {"flow": "modal", "params": {"content": …}}` puts `content` on the `modal` screen.
 */
export class FlowBuilder {
  /**
   * @param {FlowCatalog} catalog
   * @param {FlowContext} context
   * @param {FlowLimits} limits
   * @param {number} nextId
   */
  constructor(catalog, context, limits, nextId) {
    this.catalog = catalog;
    this.context = context;
    this.limits = limits;
    this.nextId = nextId;
    /** Entries made so far, checked as they are made so a fanning-out definition fails early. */
    this.created = 0;
  }

  allocateId() {
    const id = this.nextId;
    this.nextId += 1;
    this.created += 1;
    return id;
  }

  /**
   * @param {string} feature
   * @param {JSONObject} params
   * @param {boolean} [isHandoff]
   * @param {ListSection[] | null} [sections]
   * @returns {ScreenEntry}
   */
  makeScreen(feature, params, isHandoff = false, sections = null) {
    return makeScreenEntry(this.allocateId(), feature, params, isHandoff, sections);
  }

  /**
   * Builds the flow `name`; `ancestors` are the flows being built around it, to catch a flow
   * that contains itself.
   * @param {string} name
   * @param {JSONObject} params
   * @param {string[]} [ancestors]
   * @returns {FlowNode}
   * @throws {FlowError} broken-definition
   */
  makeNode(name, params, ancestors = []) {
    const definition = this.catalog.get(name);
    if (!definition) {
      throw FlowError.brokenDefinition(name, `no definition named ${writeJSON(name)} is live`);
    }
    if (ancestors.includes(name)) {
      throw FlowError.brokenDefinition(name, `it contains itself through initial: ${[...ancestors, name].join(' → ')}`);
    }
    if (ancestors.length >= this.limits.maxDepth) {
      throw FlowError.brokenDefinition(name, `flows nest deeper than ${this.limits.maxDepth} levels through initial`);
    }
    const id = this.allocateId();
    /** @type {FlowEntry[]} */
    const entries = [];
    for (const entry of definition.initial) {
      if (entry.when && !evaluateCondition(entry.when, this.context, params)) continue;
      const target = entry.target;
      const merged = mergeParams(params, target.params);
      if (target.target === 'screen') entries.push(this.makeScreen(target.name, merged, false, initialSections(name, target)));
      else if (target.target === 'handoff') entries.push(this.makeScreen(target.name, merged, true));
      else entries.push(this.makeNode(target.name, merged, [...ancestors, name]));
      if (this.created > this.limits.maxEntries) {
        throw FlowError.brokenDefinition(name, `building it takes more than ${this.limits.maxEntries} entries`);
      }
    }
    if (entries.length === 0) {
      throw FlowError.brokenDefinition(name, 'the when conditions of its initial entries left none; a flow needs at least one entry');
    }
    const selected = definition.kind === 'tabbed' && definition.selected < entries.length ? definition.selected : 0;
    return makeNode(id, name, definition.kind, entries, selected);
  }
}

/**
 * An initial screen's list: static, checked when the definition was read, so a problem here is
 * the definition's.
 * @param {string} flow
 * @param {import('./definition.js').EntryTarget} target
 * @returns {ListSection[] | null}
 * @throws {FlowError} broken-definition
 */
function initialSections(flow, target) {
  if (target.sections === undefined) return null;
  try {
    return readSections(target.sections);
  } catch (problem) {
    if (!(problem instanceof ListProblem)) throw problem;
    throw FlowError.brokenDefinition(flow, `the list of ${target.name} is invalid at ${jsonPointer(problem.pointer)}: ${problem.detail}`);
  }
}

/**
 * `base` overlaid by `own` (own values win, in base's order then own's new keys).
 * @param {JSONObject} base
 * @param {JSONObject} own
 * @returns {JSONObject}
 */
export function mergeParams(base, own) {
  if (base.size === 0) return own;
  if (own.size === 0) return base;
  const merged = new Map(base);
  setMembers(merged, own);
  return merged;
}
