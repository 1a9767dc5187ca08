// definition: a flow as data — its kind, initial entries, the rules for each action type and
// (for the root flow) its deep links — and the state of the reader that turns a definition's JSON
// into one (a port of FlowDefinition, FlowRule, FlowEffect, FlowLink and DefinitionReader). The
// reader's parts are in reader.js (the document) and reader-initial, -rules, -effects,
// -conditions and -links.js, as the Swift reader's extensions split it.

import { abbreviatedJSON, arrayValue, idKey, integerValue, jsonPointer } from './json.js';
import { listEffectNames, literalKinds, isListEffect } from './listEffect.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./condition.js').ConditionTest} ConditionTest */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./linkPattern.js').LinkPattern} LinkPattern */
/** @typedef {import('./listEffect.js').ListEffect} ListEffect */

/**
 * What goes into a flow: a screen of a feature, a child flow built from its definition, or a
 * hand-off (a native step the app runs, shown like a screen whose feature is its kind). Params
 * may hold `{"$param": name}` references when the target comes from an effect; so may a list
 * screen's `sections` (`[{"id", "title"?, "indexTitle"?, "rows"}]` as written, or `{"$param": name}`).
 * @typedef {{ target: 'screen' | 'flow' | 'handoff', name: string, params: JSONObject, sections?: JSONValue }} EntryTarget
 */

/**
 * A declared param: `"index": "integer"`, or `"note": "string?"` when optional.
 * @typedef {object} RuleParam
 * @property {string} name
 * @property {'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'any'} type
 * @property {boolean} required
 */

/**
 * The modal presentation style: fixed, or chosen by the `horizontalSizeClass` trait.
 * @typedef {{ fixed: string } | { compact: string, regular: string }} PresentationStyle
 */

/**
 * Which entry `popTo` returns to: the topmost screen of a feature below the top, the entry with
 * an id, or the entry whose id is an action param.
 * @typedef {{ feature: string } | { id: string } | { idParam: string }} PopTarget
 */

/**
 * One effect of a handled action, applied to the flow that handled it.
 * @typedef {{ name: 'push' | 'setRoot' | 'replaceRoot', target: EntryTarget }
 *   | { name: 'pop' | 'popToRoot' | 'dismiss' | 'dismissAll' | 'bubble' }
 *   | { name: 'popTo', to: PopTarget }
 *   | { name: 'present', flow: string, params: JSONObject, style: PresentationStyle }
 *   | { name: 'selectTab', index: number | null, param: string | null }
 *   | { name: 'setUser', values: JSONObject }
 *   | { name: 'result', into: string, value: JSONValue, to: string | null }
 *   | ListEffect} FlowEffect
 */

/**
 * A rule's guard: when `when` fails, `otherwise` applies (it shows the guard's flow) and the
 * action waits until that flow is done.
 * @typedef {{ when: FlowCondition, otherwise: FlowEffect[] }} FlowGuard
 */

/**
 * One rule of a flow for an action type, tried in order with its siblings.
 * @typedef {object} FlowRule
 * @property {string[] | null} from the features the source screen may show; null: any
 * @property {string[] | null} row the kinds of the tapped row (`row` of the action) the rule
 *   matches; null matches any action, row tap or not
 * @property {string[] | null} via the child flows the action may come up through; null: any
 * @property {FlowCondition | null} when
 * @property {boolean} interactive
 * @property {RuleParam[]} params
 * @property {FlowEffect[]} effects never empty
 * @property {string | null} summary
 * @property {FlowGuard | null} guarded
 */

/**
 * A deep link of the root flow.
 * @typedef {object} FlowLink
 * @property {LinkPattern} pattern
 * @property {RuleParam[]} params placeholder types; an undeclared placeholder is a string
 * @property {FlowCondition | null} when
 * @property {FlowAction[]} actions params may hold `{"$link": name}`
 * @property {string | null} summary
 */

/**
 * A flow controller described as data.
 * @typedef {object} FlowDefinition
 * @property {string} name
 * @property {'stacked' | 'tabbed'} kind
 * @property {{ target: EntryTarget, when: FlowCondition | null }[]} initial
 * @property {number} selected
 * @property {{ action: string, rules: FlowRule[] }[]} handlers in written order
 * @property {Map<string, FlowRule[]>} rulesByAction the same, by action type
 * @property {string | null} summary
 * @property {FlowLink[]} links
 */

/**
 * One problem in a definition: a JSON Pointer and what is wrong.
 * @typedef {{ path: string, message: string }} DefinitionProblem
 */

/** Every problem found in a definition. */
export class DefinitionProblems extends Error {
  /** @param {DefinitionProblem[]} problems */
  constructor(problems) {
    super(problems.map((problem) => `${problem.path || '/'}: ${problem.message}`).join('\n'));
    this.name = 'DefinitionProblems';
    this.problems = problems;
  }
}

/** The flow every session starts from. */
export const rootFlowName = 'app';

/**
 * The row kinds this definition can put in a list: those of the rows written in its entries'
 * `sections` and in its list effects, and those its rules match (`row`). Rows a param supplies
 * whole are the client's own and cannot be known here.
 * @param {FlowDefinition} definition
 * @returns {string[]}
 */
export function ownRowKinds(definition) {
  /** @type {string[]} */
  const kinds = [];
  /** @param {EntryTarget} target */
  const add = (target) => {
    if (target.target === 'screen' && target.sections !== undefined) {
      kinds.push(...literalKinds({ name: 'setSections', sections: target.sections }));
    }
  };
  for (const entry of definition.initial) add(entry.target);
  for (const handler of definition.handlers) {
    for (const rule of handler.rules) {
      kinds.push(...(rule.row ?? []));
      for (const effect of [...rule.effects, ...(rule.guarded?.otherwise ?? [])]) {
        if (effect.name === 'push' || effect.name === 'setRoot' || effect.name === 'replaceRoot') add(effect.target);
        else if (isListEffect(effect)) kinds.push(...literalKinds(/** @type {ListEffect} */ (effect)));
      }
    }
  }
  return kinds;
}

/** @type {WeakMap<Map<string, FlowDefinition>, Set<string>>} */
const declaredKindsByCatalog = new WeakMap();

/**
 * The row kinds a catalog's definitions declare, as `idKey`s (canonically equivalent spellings
 * are one kind): the union of their `ownRowKinds`. A row a param supplies whole may carry only one
 * of these, so a client that renders the catalog's kinds can draw it. Computed once per catalog (a
 * catalog is not changed once a session runs on it), so an action consults it without walking the
 * definitions.
 * @param {Map<string, FlowDefinition>} catalog
 * @returns {Set<string>}
 */
export function declaredRowKinds(catalog) {
  let kinds = declaredKindsByCatalog.get(catalog);
  if (!kinds) {
    kinds = new Set();
    for (const definition of catalog.values()) {
      for (const kind of ownRowKinds(definition)) kinds.add(idKey(kind));
    }
    declaredKindsByCatalog.set(catalog, kinds);
  }
  return kinds;
}

/** Actions the engine understands itself, which no flow may name. */
export const reservedActions = ['interaction.update', 'interaction.end', 'interaction.cancel', 'link', 'link.cancel'];
/** Every effect name, in the order messages list them. */
export const effectNames = ['push', 'pop', 'popTo', 'popToRoot', 'setRoot', 'present', 'dismiss', 'dismissAll',
  'selectTab', 'replaceRoot', 'setUser', 'bubble', 'result', ...listEffectNames];

/**
 * A JSON Pointer's tokens, outermost first.
 * @typedef {(string | number)[]} Path
 */

/**
 * Whether `value` has the declared type: `integer` accepts integral numbers such as `1.0`,
 * `number` accepts integers.
 * @param {RuleParam['type']} type
 * @param {JSONValue} value
 */
export function paramAccepts(type, value) {
  switch (type) {
    case 'any': return true;
    case 'string': return typeof value === 'string';
    case 'integer': return integerValue(value) !== undefined;
    case 'number': return typeof value === 'number' || typeof value === 'bigint';
    case 'boolean': return typeof value === 'boolean';
    case 'object': return value instanceof Map;
    default: return Array.isArray(value);
  }
}

/**
 * Flow names appear in URLs, so they stay URL-safe: 1 to 100 letters, digits, '.', '_' or '-'.
 * @param {string} name
 */
export function isValidFlowName(name) {
  return /^[A-Za-z0-9._-]{1,100}$/.test(name);
}

/** @param {string} text */
export const scalarCount = (text) => Array.from(text).length;

/**
 * A value written as one name or a non-empty array of names (`via`, a rule's `row`): its elements
 * with their paths, each still to be checked as a name; `expected` is reported when it is neither.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string} expected
 * @returns {[JSONValue, Path][] | null}
 */
export function readNameOrNames(reader, value, path, expected) {
  if (typeof value === 'string') return [[value, path]];
  const array = arrayValue(value);
  if (array && array.length > 0) return array.map((element, index) => [element, [...path, index]]);
  reader.report(path, `${expected}; found ${abbreviatedJSON(value)}`);
  return null;
}

/**
 * Whether a rule only hands the action to its parent.
 * @param {FlowRule} rule
 */
export function ruleBubbles(rule) {
  return rule.effects.some((effect) => effect.name === 'bubble');
}

/** @param {FlowEffect[]} effects */
export const onlyBubbles = (effects) => effects.length === 1 && effects[0].name === 'bubble';

/** @param {FlowEffect} effect */
export const needsStack = (effect) => ['push', 'pop', 'popTo', 'popToRoot', 'setRoot', 'replaceRoot'].includes(effect.name);
/** @param {FlowEffect} effect */
export const revealsScreen = (effect) => ['pop', 'popTo', 'popToRoot', 'dismiss'].includes(effect.name);
/** @param {FlowEffect} effect */
export const showsFlow = (effect) => effect.name === 'present' || (effect.name === 'push' && effect.target.target === 'flow');

/**
 * Reads a definition document, recording every problem with its path and carrying on, so one
 * upload reports everything wrong at once.
 */
export class DefinitionReader {
  constructor() {
    /** @type {DefinitionProblem[]} */
    this.problems = [];
    /** @type {'stacked' | 'tabbed' | null} */
    this.kind = null;
    this.flowName = 'this flow';
    /** @type {string | null} */
    this.flowNameValue = null;
    /** @type {number | null} */
    this.tabCount = null;
    /**
     * Param references of the rule being read, checked against its declared params.
     * @type {{ name: string, path: Path }[]}
     */
    this.paramReferences = [];
    /**
     * Whether the rule being read matches row taps (`row`), whose `row.id`, `row.kind` and
     * `row.values` params the engine supplies, so references to them need no declaration.
     */
    this.ruleMatchesRows = false;
  }

  /**
   * @param {Path} path
   * @param {string} message
   */
  report(path, message) {
    this.problems.push({ path: jsonPointer(path), message });
  }

  /**
   * Unknown keys are reported because a typo would otherwise silently change what a rule means.
   * @param {JSONObject} object
   * @param {string[]} allowed
   * @param {Path} path
   * @param {string} what
   */
  checkKeys(object, allowed, path, what) {
    for (const key of object.keys()) {
      if (!allowed.includes(key)) {
        this.report([...path, key], `unknown key ${abbreviatedJSON(key)} in ${what}; expected one of ${allowed.join(', ')}`);
      }
    }
  }
}
