// definition: a flow as data — its kind, initial entries, the rules for each action type and
// (for the root flow) its deep links — and the reader that turns a definition's JSON into one,
// collecting every problem with its path (a port of FlowDefinition, FlowRule, FlowEffect,
// FlowLink and DefinitionReader with its +initial, +rules, +effects, +conditions and +links).

import {
  abbreviatedJSON, arrayValue, boolValue, integerValue, jsonPointer, objectValue, stringValue, typeName, writeJSON,
} from './json.js';
import { conditionSources } from './condition.js';
import { parseEntryId } from './tree.js';
import { LinkSyntaxError, parseLinkPattern, patternShape, placeholders as patternPlaceholders } from './linkPattern.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./condition.js').ConditionTest} ConditionTest */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./linkPattern.js').LinkPattern} LinkPattern */

/**
 * What goes into a flow: a screen of a feature, a child flow built from its definition, or a
 * hand-off (a native step the app runs, shown like a screen whose feature is its kind). Params
 * may hold `{"$param": name}` references when the target comes from an effect.
 * @typedef {{ target: 'screen' | 'flow' | 'handoff', name: string, params: JSONObject }} EntryTarget
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
 *   | { name: 'result', into: string, value: JSONValue, to: string | null }} FlowEffect
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

const definitionKeys = ['name', 'kind', 'initial', 'selected', 'on', 'links', 'description', 'version', 'live'];
const ruleKeys = ['from', 'via', 'when', 'interactive', 'params', 'do', 'guard', 'description'];
/** Actions the engine understands itself, which no flow may name. */
export const reservedActions = ['interaction.update', 'interaction.end', 'interaction.cancel', 'link', 'link.cancel'];
const operatorKeys = ['is', 'isNot', 'in', 'notIn', 'exists'];
const maxRules = 64;
const maxLinks = 256;
const maxLinkActions = 32;
const linkKeys = ['pattern', 'params', 'when', 'actions', 'description'];
/** Every effect name, in the order messages list them. */
export const effectNames = ['push', 'pop', 'popTo', 'popToRoot', 'setRoot', 'present', 'dismiss', 'dismissAll',
  'selectTab', 'replaceRoot', 'setUser', 'bubble', 'result'];
/** UIKit's modal presentation style names. */
const knownStyles = ['automatic', 'fullScreen', 'pageSheet', 'formSheet', 'currentContext', 'custom',
  'overFullScreen', 'overCurrentContext', 'popover'];
const paramTypes = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'any'];
const linkParamTypes = ['string', 'integer', 'number', 'boolean'];

/** @typedef {(string | number)[]} Path */

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
const scalarCount = (text) => Array.from(text).length;

/**
 * Reads a definition from a parsed JSON value, reporting every problem found. When
 * `expectedName` is given, a different `name` is a problem at `/name`.
 *
 * ```js
 * const onboarding = readDefinition(parseJSON(text), 'onboarding');
 * ```
 * @param {JSONValue} json
 * @param {string} [expectedName]
 * @returns {FlowDefinition}
 * @throws {DefinitionProblems}
 */
export function readDefinition(json, expectedName) {
  const reader = new DefinitionReader();
  const definition = reader.readDefinition(json);
  if (expectedName !== undefined && definition && definition.name !== expectedName) {
    reader.report(['name'], `name is ${writeJSON(definition.name)} but the flow is stored as ${writeJSON(expectedName)}; they must match`);
  }
  if (!definition || reader.problems.length > 0) throw new DefinitionProblems(reader.problems);
  return definition;
}

/**
 * Whether a rule only hands the action to its parent.
 * @param {FlowRule} rule
 */
export function ruleBubbles(rule) {
  return rule.effects.some((effect) => effect.name === 'bubble');
}

/** @param {FlowEffect[]} effects */
const onlyBubbles = (effects) => effects.length === 1 && effects[0].name === 'bubble';

/** @param {FlowEffect} effect */
const needsStack = (effect) => ['push', 'pop', 'popTo', 'popToRoot', 'setRoot', 'replaceRoot'].includes(effect.name);
/** @param {FlowEffect} effect */
const revealsScreen = (effect) => ['pop', 'popTo', 'popToRoot', 'dismiss'].includes(effect.name);
/** @param {FlowEffect} effect */
const showsFlow = (effect) => effect.name === 'present' || (effect.name === 'push' && effect.target.target === 'flow');

/**
 * Reads a definition document, recording every problem with its path and carrying on, so one
 * upload reports everything wrong at once.
 */
class DefinitionReader {
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

  /**
   * @param {JSONValue} json
   * @returns {FlowDefinition | null}
   */
  readDefinition(json) {
    const object = objectValue(json);
    if (!object) {
      this.report([], `a flow definition is an object with name, kind, initial and on; found ${typeName(json)}`);
      return null;
    }
    this.checkKeys(object, definitionKeys, [], 'a flow definition');
    const name = this.readName(object.get('name'), ['name']);
    if (name !== null) this.flowName = `'${name}'`;
    this.flowNameValue = name;
    this.kind = this.readKind(object.get('kind'), ['kind']);
    const initial = this.readInitial(object.get('initial'), ['initial']);
    if (this.kind === 'tabbed' && initial) this.tabCount = initial.length;
    const selected = this.readSelected(object.get('selected'), ['selected']);
    const handlers = this.readHandlers(object.get('on'), ['on']);
    const links = this.readLinks(object.get('links'), ['links'], name);
    /** @type {string | null} */
    let summary = null;
    const description = object.get('description');
    if (description !== undefined) {
      summary = stringValue(description) ?? null;
      if (summary === null) this.report(['description'], `description must be a string; found ${typeName(description)}`);
    }
    const version = object.get('version');
    if (version !== undefined && integerValue(version) === undefined) {
      this.report(['version'], `version must be an integer (it is set by the server and ignored here); found ${typeName(version)}`);
    }
    const live = object.get('live');
    if (live !== undefined && boolValue(live) === undefined) {
      this.report(['live'], `live must be a boolean (it is set by the server and ignored here); found ${typeName(live)}`);
    }
    if (name === null || this.kind === null || !initial || !handlers || this.problems.length > 0) return null;
    /** @type {Map<string, FlowRule[]>} */
    const rulesByAction = new Map();
    for (const handler of handlers) rulesByAction.set(handler.action, handler.rules);
    return { name, kind: this.kind, initial, selected, handlers, rulesByAction, summary, links };
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  readName(value, path) {
    if (value === undefined) {
      this.report(path, 'name is required: the flow\'s name, such as "onboarding"');
      return null;
    }
    const name = stringValue(value);
    if (name === undefined) {
      this.report(path, `name must be a string; found ${typeName(value)}`);
      return null;
    }
    if (!isValidFlowName(name)) {
      this.report(path, `name ${abbreviatedJSON(value)} is not a valid flow name; use 1 to 100 letters, digits, '.', '_' or '-'`);
      return null;
    }
    return name;
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @returns {'stacked' | 'tabbed' | null}
   */
  readKind(value, path) {
    if (value === undefined) {
      this.report(path, 'kind is required: "stacked" or "tabbed"');
      return null;
    }
    if (value !== 'stacked' && value !== 'tabbed') {
      this.report(path, `kind must be "stacked" or "tabbed"; found ${abbreviatedJSON(value)}`);
      return null;
    }
    return value;
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  readSelected(value, path) {
    if (value === undefined) return 0;
    if (this.kind === 'stacked') {
      this.report(path, `selected is only for tabbed flows; ${this.flowName} is stacked`);
      return 0;
    }
    const index = integerValue(value);
    if (index === undefined) {
      this.report(path, `selected must be an integer tab index; found ${typeName(value)}`);
      return 0;
    }
    if (this.tabCount !== null && (index < 0 || index >= this.tabCount)) {
      this.report(path, `selected ${index} is out of range; ${this.flowName} has tabs 0...${Math.max(this.tabCount - 1, 0)}`);
      return 0;
    }
    return index;
  }

  // MARK: initial

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  readInitial(value, path) {
    if (value === undefined) {
      this.report(path, 'initial is required: the entries the flow starts with, such as ["onboarding.first"]');
      return null;
    }
    const elements = arrayValue(value);
    if (!elements) {
      this.report(path, `initial must be an array of entries; found ${typeName(value)}`);
      return null;
    }
    if (elements.length === 0) {
      const what = this.kind === 'tabbed' ? 'a tabbed flow needs at least one tab' : 'a stacked flow needs at least one entry';
      this.report(path, `initial is empty; ${what}`);
      return null;
    }
    /** @type {{ target: EntryTarget, when: FlowCondition | null }[]} */
    const entries = [];
    let valid = true;
    elements.forEach((element, index) => {
      const entry = this.readInitialEntry(element, [...path, index]);
      if (entry) entries.push(entry);
      else valid = false;
    });
    return valid ? entries : null;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {{ target: EntryTarget, when: FlowCondition | null } | null}
   */
  readInitialEntry(value, path) {
    if (typeof value === 'string') {
      const target = this.readTarget(value, path, false, false);
      return target ? { target, when: null } : null;
    }
    const original = objectValue(value);
    if (!original) {
      this.report(path, `an initial entry is a feature name, {"screen": feature}, or {"flow": name}; found ${typeName(value)}`);
      return null;
    }
    const object = new Map(original);
    /** @type {FlowCondition | null} */
    let when = null;
    let valid = true;
    const condition = object.get('when');
    if (condition !== undefined) {
      when = this.readCondition(condition, [...path, 'when']);
      valid = when !== null;
      object.delete('when');
    }
    // `when` was read above; the rest of the object is an ordinary target.
    const target = this.readTarget(object, path, false, false, ['when']);
    if (!target || !valid) return null;
    return { target, when };
  }

  /**
   * Reads a screen or flow target: a string (a feature, or a flow name when `stringIsFlow`),
   * `{"screen": feature, "params"?}`, `{"flow": name, "params"?}` or `{"handoff": kind, "params"?}`.
   * @param {JSONValue} value
   * @param {Path} path
   * @param {boolean} stringIsFlow
   * @param {boolean} allowParamReferences
   * @param {string[]} [extraKeys]
   * @returns {EntryTarget | null}
   */
  readTarget(value, path, stringIsFlow, allowParamReferences, extraKeys = []) {
    if (typeof value === 'string') {
      if (stringIsFlow) {
        if (!isValidFlowName(value)) {
          this.report(path, `${abbreviatedJSON(value)} is not a valid flow name; use 1 to 100 letters, digits, '.', '_' or '-'`);
          return null;
        }
        return { target: 'flow', name: value, params: new Map() };
      }
      const feature = this.readFeature(value, path);
      return feature === null ? null : { target: 'screen', name: feature, params: new Map() };
    }
    const object = objectValue(value);
    if (!object) {
      this.report(path, `expected a feature name, {"screen": feature}, {"flow": name} or {"handoff": kind}; found ${typeName(value)}`);
      return null;
    }
    this.checkKeys(object, ['screen', 'flow', 'handoff', 'params', ...extraKeys], path, 'an entry');
    /** @type {JSONObject} */
    let params = new Map();
    let valid = true;
    const rawParams = object.get('params');
    if (rawParams !== undefined) {
      const parsed = this.readParamsObject(rawParams, [...path, 'params'], allowParamReferences);
      if (parsed) params = parsed;
      else valid = false;
    }
    const handoff = object.get('handoff');
    if (handoff !== undefined) {
      if (object.has('screen') || object.has('flow')) {
        this.report(path, 'an entry has one of "screen", "flow" or "handoff", not several');
        return null;
      }
      const kind = this.readFeature(handoff, [...path, 'handoff']);
      if (kind === null || !valid) return null;
      return { target: 'handoff', name: kind, params };
    }
    const screen = object.get('screen');
    const flow = object.get('flow');
    if (screen !== undefined && flow === undefined) {
      const feature = this.readFeature(screen, [...path, 'screen']);
      if (feature === null || !valid) return null;
      return { target: 'screen', name: feature, params };
    }
    if (screen === undefined && flow !== undefined) {
      const name = stringValue(flow);
      if (name === undefined || !isValidFlowName(name)) {
        this.report([...path, 'flow'], `flow must be a flow name (1 to 100 letters, digits, '.', '_' or '-'); found ${abbreviatedJSON(flow)}`);
        return null;
      }
      if (!valid) return null;
      return { target: 'flow', name, params };
    }
    if (screen === undefined) {
      this.report(path, 'an entry needs "screen" (a feature), "flow" (a flow name) or "handoff" (a native step\'s kind)');
    } else {
      this.report(path, 'an entry has either "screen" or "flow", not both');
    }
    return null;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   */
  readFeature(value, path) {
    const feature = stringValue(value);
    if (feature === undefined || feature === '' || scalarCount(feature) > 200) {
      this.report(path, `a feature must be a non-empty string of at most 200 characters, such as "onboarding.first"; found ${abbreviatedJSON(value)}`);
      return null;
    }
    return feature;
  }

  /**
   * A params object; `{"$param": name}` references are allowed only in effects.
   * @param {JSONValue} value
   * @param {Path} path
   * @param {boolean} allowParamReferences
   */
  readParamsObject(value, path, allowParamReferences) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `params must be an object; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    this.checkParamReferences(value, path, allowParamReferences);
    return this.problems.length === before ? object : null;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {boolean} allowed
   */
  checkParamReferences(value, path, allowed) {
    if (value instanceof Map) {
      if (value.has('$param')) {
        if (!allowed) {
          this.report(path, '{"$param": …} references an action\'s param and is only allowed in effects');
          return;
        }
        const name = stringValue(value.get('$param'));
        if (value.size !== 1 || name === undefined || name === '') {
          this.report(path, 'a param reference is written {"$param": "name"} with nothing else in the object');
          return;
        }
        this.paramReferences.push({ name, path });
        return;
      }
      for (const [key, member] of value) this.checkParamReferences(member, [...path, key], allowed);
    } else if (Array.isArray(value)) {
      value.forEach((element, index) => this.checkParamReferences(element, [...path, index], allowed));
    }
  }

  // MARK: conditions

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {FlowCondition | null}
   */
  readCondition(value, path) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `a condition is an object such as {"flag": "key", "is": true}; found ${typeName(value)}`);
      return null;
    }
    for (const combinator of /** @type {const} */ (['all', 'any', 'not'])) {
      if (!object.has(combinator)) continue;
      const argument = object.get(combinator);
      if (object.size !== 1 || argument === undefined) {
        this.report(path, `${combinator} must be the only key of its condition`);
        return null;
      }
      const argumentPath = [...path, combinator];
      if (combinator === 'not') {
        const inner = this.readCondition(argument, argumentPath);
        return inner ? { op: 'not', condition: inner } : null;
      }
      const elements = arrayValue(argument);
      if (!elements || elements.length === 0) {
        this.report(argumentPath, `${combinator} takes a non-empty array of conditions; found ${abbreviatedJSON(argument)}`);
        return null;
      }
      /** @type {FlowCondition[]} */
      const conditions = [];
      elements.forEach((element, index) => {
        const condition = this.readCondition(element, [...argumentPath, index]);
        if (condition) conditions.push(condition);
      });
      if (conditions.length !== elements.length) return null;
      return { op: combinator, conditions };
    }
    this.checkKeys(object, [...conditionSources, ...operatorKeys], path, 'a condition');
    const sources = [...object].filter(([key]) => conditionSources.includes(key));
    const operators = [...object].filter(([key]) => operatorKeys.includes(key));
    if (sources.length !== 1) {
      this.report(path, `a condition names exactly one of ${conditionSources.join(', ')}, or is all, any or not; found ${sources.length}`);
      return null;
    }
    const [sourceName, sourceValue] = sources[0];
    const key = stringValue(sourceValue);
    if (key === undefined || key === '') {
      this.report([...path, sourceName], `${sourceName} must be a non-empty key name; found ${abbreviatedJSON(sourceValue)}`);
      return null;
    }
    if (operators.length !== 1) {
      this.report(path, `a condition has exactly one of ${operatorKeys.join(', ')}; found ${operators.length}`);
      return null;
    }
    const [operator, operand] = operators[0];
    /** @type {ConditionTest} */
    let test;
    if (operator === 'is' || operator === 'isNot') {
      test = { keyword: operator, value: operand };
    } else if (operator === 'in' || operator === 'notIn') {
      const candidates = arrayValue(operand);
      if (!candidates) {
        this.report([...path, operator], `${operator} takes an array of values; found ${typeName(operand)}`);
        return null;
      }
      test = { keyword: operator, values: candidates };
    } else {
      const flag = boolValue(operand);
      if (flag === undefined) {
        this.report([...path, operator], `exists takes true or false; found ${typeName(operand)}`);
        return null;
      }
      test = { keyword: 'exists', exists: flag };
    }
    return { op: 'test', source: /** @type {'flag' | 'user' | 'attribute' | 'trait' | 'param'} */ (sourceName), key, test };
  }

  // MARK: rules

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @returns {{ action: string, rules: FlowRule[] }[] | null}
   */
  readHandlers(value, path) {
    if (value === undefined) return [];
    const object = objectValue(value);
    if (!object) {
      this.report(path, `on must be an object mapping action types to lists of rules; found ${typeName(value)}`);
      return null;
    }
    /** @type {{ action: string, rules: FlowRule[] }[]} */
    const handlers = [];
    let valid = true;
    for (const [action, rawRules] of object) {
      const handlerPath = [...path, action];
      if (action === '' || scalarCount(action) > 200) {
        this.report(handlerPath, 'an action type must be a non-empty string of at most 200 characters');
        valid = false;
        continue;
      }
      if (reservedActions.includes(action)) {
        this.report(handlerPath, `${action} is handled by the engine itself and cannot be redefined`);
        valid = false;
        continue;
      }
      const elements = arrayValue(rawRules);
      if (!elements || elements.length === 0) {
        this.report(handlerPath, `the rules for ${action} must be a non-empty array of rules; found ${abbreviatedJSON(rawRules)}`);
        valid = false;
        continue;
      }
      if (elements.length > maxRules) {
        this.report(handlerPath, `${action} has ${elements.length} rules; an action type may have at most ${maxRules}`);
        valid = false;
        continue;
      }
      /** @type {FlowRule[]} */
      const rules = [];
      elements.forEach((element, index) => {
        const rule = this.readRule(element, [...handlerPath, index]);
        if (rule) rules.push(rule);
        else valid = false;
      });
      if (rules.length === elements.length) {
        this.checkShadowing(rules, handlerPath);
        handlers.push({ action, rules });
      }
    }
    return valid ? handlers : null;
  }

  /**
   * A rule after one with no `when` whose `from` and `via` cover it can never match.
   * @param {FlowRule[]} rules
   * @param {Path} path
   */
  checkShadowing(rules, path) {
    /**
     * @param {string[] | null} outer
     * @param {string[] | null} inner
     */
    const covers = (outer, inner) => {
      if (outer === null) return true;
      if (inner === null) return false;
      const set = new Set(outer);
      return inner.every((name) => set.has(name));
    };
    /** @param {string[]} names */
    const abbreviated = (names) => (names.length > 5 ? names.slice(0, 5).join(', ') + ` and ${names.length - 5} more` : names.join(', '));
    rules.forEach((rule, later) => {
      for (let earlier = 0; earlier < later; earlier += 1) {
        const first = rules[earlier];
        if (first.when !== null) continue;
        if (covers(first.from, rule.from) && covers(first.via, rule.via)) {
          /** @type {string[]} */
          const scopes = [];
          if (first.from) scopes.push(`from ${abbreviated(first.from)}`);
          if (first.via) scopes.push(`via ${abbreviated(first.via)}`);
          const scope = scopes.length === 0 ? 'any source' : scopes.join(' ');
          this.report([...path, later], `this rule never matches: rule ${jsonPointer([...path, earlier])} matches ${scope} with no when, and it comes first`);
          break;
        }
      }
    });
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {FlowRule | null}
   */
  readRule(value, path) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `a rule is an object with optional from, via, when, interactive, params and a do list; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    this.checkKeys(object, ruleKeys, path, 'a rule');
    this.paramReferences = [];
    /** @type {string[] | null} */
    let from = null;
    const rawFrom = object.get('from');
    if (rawFrom !== undefined) from = this.readFrom(rawFrom, [...path, 'from']);
    /** @type {string[] | null} */
    let via = null;
    const rawVia = object.get('via');
    if (rawVia !== undefined) via = this.readVia(rawVia, [...path, 'via']);
    /** @type {FlowCondition | null} */
    let when = null;
    const rawWhen = object.get('when');
    if (rawWhen !== undefined) when = this.readCondition(rawWhen, [...path, 'when']);
    let interactive = false;
    const rawInteractive = object.get('interactive');
    if (rawInteractive !== undefined) {
      const flag = boolValue(rawInteractive);
      if (flag !== undefined) interactive = flag;
      else this.report([...path, 'interactive'], `interactive must be true or false; found ${typeName(rawInteractive)}`);
    }
    /** @type {RuleParam[]} */
    let params = [];
    const rawParams = object.get('params');
    const declaresParams = rawParams !== undefined;
    if (rawParams !== undefined) params = this.readParamDeclarations(rawParams, [...path, 'params']);
    /** @type {string | null} */
    let summary = null;
    const description = object.get('description');
    if (description !== undefined) {
      summary = stringValue(description) ?? null;
      if (summary === null) this.report([...path, 'description'], `description must be a string; found ${typeName(description)}`);
    }
    /** @type {FlowEffect[]} */
    let effects = [];
    const rawEffects = object.get('do');
    if (rawEffects !== undefined) {
      effects = this.readEffects(rawEffects, [...path, 'do'], params);
      this.checkResults(effects, rawEffects, [...path, 'do'], declaresParams);
    } else {
      this.report(path, 'a rule needs a do list of effects, such as "do": [{"push": "feature"}]');
    }
    /** @type {FlowGuard | null} */
    let guarded = null;
    const rawGuard = object.get('guard');
    if (rawGuard !== undefined) {
      if (onlyBubbles(effects)) {
        this.report([...path, 'guard'], 'a guard is checked by the rule that handles the action, and this rule only bubbles it; put the guard on the parent flow\'s rule');
      } else {
        guarded = this.readGuard(rawGuard, [...path, 'guard'], params);
      }
    }
    // A bubble rule passes the action on before params or interactivity are looked at: here
    // they would look like a check that never runs.
    if (onlyBubbles(effects)) {
      if (declaresParams) {
        this.report([...path, 'params'], 'params are checked only by the rule that handles the action, and this rule only bubbles it, so they would never be enforced; declare them on the parent flow\'s rule that handles it');
      }
      if (interactive) {
        this.report([...path, 'interactive'], 'interactive is decided by the rule that handles the action, and this rule only bubbles it; set it on the parent flow\'s rule that handles it');
      }
    }
    if (declaresParams) {
      for (const reference of this.paramReferences) {
        const name = writeJSON(reference.name);
        const declared = params.find((param) => param.name === reference.name);
        if (!declared) {
          this.report([...reference.path, '$param'], `param ${name} is not declared in this rule's params; declare it or fix the name`);
          continue;
        }
        if (!declared.required) {
          this.report([...reference.path, '$param'], `param ${name} is declared optional but an effect uses it, which makes it required; drop the ? from its type`);
        }
      }
    }
    if (this.problems.length !== before) return null;
    return { from, via, when, interactive, params, effects, summary, guarded };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {string[] | null}
   */
  readVia(value, path) {
    /** @type {[JSONValue, Path][]} */
    let elements;
    const array = arrayValue(value);
    if (typeof value === 'string') {
      elements = [[value, path]];
    } else if (array && array.length > 0) {
      elements = array.map((element, index) => [element, [...path, index]]);
    } else {
      this.report(path, `via must be a child flow's name or a non-empty array of them, such as "onboarding"; found ${abbreviatedJSON(value)}`);
      return null;
    }
    /** @type {string[]} */
    const flows = [];
    for (const [element, elementPath] of elements) {
      const name = stringValue(element);
      if (name === undefined || !isValidFlowName(name)) {
        this.report(elementPath, `via names a flow (1 to 100 letters, digits, '.', '_' or '-'); found ${abbreviatedJSON(element)}`);
        continue;
      }
      if (name === this.flowNameValue) {
        this.report(elementPath, 'via names the child flow an action comes up through; an action from this flow\'s own screens is matched with from');
        continue;
      }
      flows.push(name);
    }
    return flows.length === elements.length ? flows : null;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {string[] | null}
   */
  readFrom(value, path) {
    if (typeof value === 'string') {
      const feature = this.readFeature(value, path);
      return feature === null ? null : [feature];
    }
    const elements = arrayValue(value);
    if (!elements || elements.length === 0) {
      this.report(path, `from must be a feature name or a non-empty array of feature names; found ${abbreviatedJSON(value)}`);
      return null;
    }
    /** @type {string[]} */
    const features = [];
    elements.forEach((element, index) => {
      const feature = this.readFeature(element, [...path, index]);
      if (feature !== null) features.push(feature);
    });
    return features.length === elements.length ? features : null;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {RuleParam[]}
   */
  readParamDeclarations(value, path) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `params must be an object mapping param names to types, such as {"index": "integer"}; found ${typeName(value)}`);
      return [];
    }
    /** @type {RuleParam[]} */
    const params = [];
    const names = paramTypes.join(', ');
    for (const [name, member] of object) {
      let text = stringValue(member);
      if (text === undefined) {
        this.report([...path, name], `a param type is a string (${names}, with a trailing ? when optional); found ${typeName(member)}`);
        continue;
      }
      let required = true;
      if (text.endsWith('?')) {
        required = false;
        text = text.slice(0, -1);
      }
      if (!paramTypes.includes(text)) {
        this.report([...path, name], `unknown param type ${abbreviatedJSON(member)}; expected one of ${names}, with a trailing ? when optional`);
        continue;
      }
      params.push({ name, type: /** @type {RuleParam['type']} */ (text), required });
    }
    return params;
  }

  // MARK: effects

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {RuleParam[]} params
   * @returns {FlowEffect[]}
   */
  readEffects(value, path, params) {
    const elements = arrayValue(value);
    if (!elements || elements.length === 0) {
      this.report(path, `do must be a non-empty array of effects, such as [{"push": "feature"}]; found ${abbreviatedJSON(value)}`);
      return [];
    }
    /** @type {FlowEffect[]} */
    const effects = [];
    elements.forEach((element, index) => {
      const effect = this.readEffect(element, [...path, index], params);
      if (effect) effects.push(effect);
    });
    if (elements.length > 1) {
      elements.forEach((element, index) => {
        if (element instanceof Map && element.has('bubble')) {
          this.report([...path, index, 'bubble'], 'bubble hands the action to the parent flow, so it must be the only effect of its rule');
        }
      });
    }
    return effects;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {RuleParam[]} params
   * @returns {FlowEffect | null}
   */
  readEffect(value, path, params) {
    const object = objectValue(value);
    if (!object || object.size !== 1) {
      const found = object ? `an object with ${object.size} keys` : typeName(value);
      this.report(path, `an effect is an object with exactly one key naming it, such as {"push": "feature"}; found ${found}`);
      return null;
    }
    const [name, argument] = object.entries().next().value;
    const effectPath = [...path, name];
    /** @type {FlowEffect | null} */
    let effect = null;
    switch (name) {
      case 'push':
      case 'setRoot':
      case 'replaceRoot': {
        const target = this.readTarget(argument, effectPath, name === 'replaceRoot', true);
        if (!target) return null;
        effect = { name, target };
        break;
      }
      case 'pop':
      case 'popToRoot':
      case 'dismiss':
      case 'dismissAll':
      case 'bubble': {
        const arguments_ = objectValue(argument);
        if (!arguments_ || arguments_.size !== 0) {
          this.report(effectPath, `${name} takes no arguments; write {"${name}": {}}`);
          return null;
        }
        effect = { name };
        break;
      }
      case 'popTo': {
        const to = this.readPopTo(argument, effectPath);
        effect = to ? { name, to } : null;
        break;
      }
      case 'present':
        effect = this.readPresent(argument, effectPath);
        break;
      case 'selectTab':
        effect = this.readSelectTab(argument, effectPath, params);
        break;
      case 'result':
        effect = this.readResult(argument, effectPath);
        break;
      case 'setUser': {
        const values = objectValue(argument);
        if (!values || values.size === 0) {
          this.report(effectPath, `setUser takes a non-empty object of user-state keys and values, such as {"onboarded": true}; found ${abbreviatedJSON(argument)}`);
          return null;
        }
        const before = this.problems.length;
        for (const key of values.keys()) if (key === '') this.report(effectPath, 'setUser keys must be non-empty');
        this.checkParamReferences(argument, effectPath, true);
        if (this.problems.length !== before) return null;
        effect = { name, values };
        break;
      }
      default:
        this.report(effectPath, `unknown effect ${abbreviatedJSON(name)}; expected one of ${effectNames.join(', ')}`);
        return null;
    }
    if (!effect) return null;
    if (this.kind === 'tabbed' && needsStack(effect)) {
      this.report(effectPath, `${effect.name} changes a stack, but ${this.flowName} is tabbed; use selectTab, or bubble the action to a stacked parent`);
      return null;
    }
    if (this.kind === 'stacked' && effect.name === 'selectTab') {
      this.report(effectPath, `selectTab needs a tabbed flow, but ${this.flowName} is stacked; bubble the action to the tabbed flow instead`);
      return null;
    }
    return effect;
  }

  /**
   * `{"into": param, "value": …, "to"?: feature}`.
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {FlowEffect | null}
   */
  readResult(value, path) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `result takes {"into": param, "value": value, "to"?: feature}; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    this.checkKeys(object, ['into', 'value', 'to'], path, 'result');
    /** @type {string | null} */
    let into = null;
    const rawInto = object.get('into');
    if (rawInto !== undefined) {
      const name = stringValue(rawInto);
      if (name !== undefined && name !== '' && scalarCount(name) <= 200) into = name;
      else this.report([...path, 'into'], `into names the param of the receiving screen that gets the value, a non-empty string; found ${abbreviatedJSON(rawInto)}`);
    } else {
      this.report(path, 'result needs "into": the param of the receiving screen that gets the value, such as "address"');
    }
    const resultValue = object.get('value');
    if (resultValue !== undefined) this.checkParamReferences(resultValue, [...path, 'value'], true);
    else this.report(path, 'result needs "value": what to return, such as {"$param": "address"}');
    /** @type {string | null} */
    let to = null;
    const rawTo = object.get('to');
    if (rawTo !== undefined) to = this.readFeature(rawTo, [...path, 'to']);
    if (into === null || resultValue === undefined || this.problems.length !== before) return null;
    return { name: 'result', into, value: resultValue, to };
  }

  /**
   * A rule returns at most one result, after an effect that brings a screen back on top, and the
   * value's params have declared types.
   * @param {FlowEffect[]} effects
   * @param {JSONValue} raw
   * @param {Path} path
   * @param {boolean} declaresParams
   */
  checkResults(effects, raw, path, declaresParams) {
    const elements = arrayValue(raw);
    if (!elements) return;
    const indices = elements.map((element, index) => (element instanceof Map && element.has('result') ? index : -1)).filter((index) => index >= 0);
    if (indices.length === 0) return;
    const first = indices[0];
    for (const index of indices.slice(1)) {
      this.report([...path, index, 'result'], `a rule returns at most one result; ${jsonPointer([...path, first])} already does`);
    }
    if (!effects.some(revealsScreen)) {
      this.report([...path, first, 'result'], 'result returns a value to the screen that a pop, popTo, popToRoot or dismiss of the same rule brings back on top; this rule has none');
    }
    const value = [...path, first, 'result', 'value'];
    const inValue = (/** @type {Path} */ reference) => value.every((token, index) => String(reference[index]) === String(token));
    if (!declaresParams && this.paramReferences.some((reference) => reference.path.length >= value.length && inValue(reference.path))) {
      this.report(value, 'a result\'s value must have a declared type: declare the params it uses in this rule\'s params, such as "params": {"address": "object"}');
    }
  }

  /**
   * `{"when": condition, "else": effect or [effects]}`: the else effects show exactly one flow.
   * @param {JSONValue} value
   * @param {Path} path
   * @param {RuleParam[]} params
   * @returns {FlowGuard | null}
   */
  readGuard(value, path, params) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `guard takes {"when": condition, "else": effects that show the flow satisfying it}; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    this.checkKeys(object, ['when', 'else'], path, 'a guard');
    /** @type {FlowCondition | null} */
    let condition = null;
    const rawWhen = object.get('when');
    if (rawWhen !== undefined) condition = this.readCondition(rawWhen, [...path, 'when']);
    else this.report(path, 'a guard needs "when": what must hold, such as {"user": "loggedIn", "is": true}');
    /** @type {FlowEffect[]} */
    let otherwise = [];
    const rawElse = object.get('else');
    if (rawElse !== undefined) {
      const elsePath = [...path, 'else'];
      const isList = Array.isArray(rawElse);
      const reported = this.problems.length;
      if (isList) {
        otherwise = this.readEffects(rawElse, elsePath, params);
      } else {
        const effect = this.readEffect(rawElse, elsePath, params);
        otherwise = effect ? [effect] : [];
      }
      if (this.problems.length === reported) {
        const shown = otherwise.map((effect, index) => (showsFlow(effect) ? index : -1)).filter((index) => index >= 0);
        const place = (/** @type {number} */ index) => (isList ? [...elsePath, index] : elsePath);
        if (shown.length === 0) {
          this.report(elsePath, 'a guard\'s else shows the flow that satisfies it: a present of a flow, or a push of {"flow": name}');
        } else if (shown.length > 1) {
          this.report(place(shown[1]), 'a guard\'s else shows one flow; the action resumes when that flow is done');
        }
        otherwise.forEach((effect, index) => {
          if (effect.name === 'present' || effect.name === 'setUser' || (effect.name === 'push' && effect.target.target === 'flow')) return;
          this.report([...place(index), effect.name], `a guard's else cannot ${effect.name}: it shows its flow (present, or push of {"flow": name}) and may setUser, and keeps the screen the action came from under it, so the action can resume there`);
        });
      }
    } else {
      this.report(path, 'a guard needs "else": the effects that show the flow satisfying it, such as {"present": {"flow": "login"}}');
    }
    if (condition === null || this.problems.length !== before) return null;
    return { when: condition, otherwise };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {PopTarget | null}
   */
  readPopTo(value, path) {
    if (typeof value === 'string') {
      const feature = this.readFeature(value, path);
      return feature === null ? null : { feature };
    }
    const object = objectValue(value);
    if (!object) {
      this.report(path, `popTo takes a feature name, {"feature": name} or {"id": "e3"}; found ${typeName(value)}`);
      return null;
    }
    this.checkKeys(object, ['feature', 'id'], path, 'popTo');
    const feature = object.get('feature');
    const id = object.get('id');
    if (feature !== undefined && id === undefined) {
      const name = this.readFeature(feature, [...path, 'feature']);
      return name === null ? null : { feature: name };
    }
    if (feature === undefined && id !== undefined) {
      const text = stringValue(id);
      if (text !== undefined) {
        if (!parseEntryId(text)) {
          this.report([...path, 'id'], `id must be an entry id such as "e3" or "f2"; found ${abbreviatedJSON(id)}`);
          return null;
        }
        return { id: text };
      }
      const reference = objectValue(id);
      const name = reference ? stringValue(reference.get('$param')) : undefined;
      if (!reference || reference.size !== 1 || name === undefined || name === '') {
        this.report([...path, 'id'], `id must be an entry id such as "e3" or a reference {"$param": "name"}; found ${abbreviatedJSON(id)}`);
        return null;
      }
      this.paramReferences.push({ name, path: [...path, 'id'] });
      return { idParam: name };
    }
    if (feature === undefined) this.report(path, 'popTo needs "feature" or "id"');
    else this.report(path, 'popTo takes either "feature" or "id", not both');
    return null;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {FlowEffect | null}
   */
  readPresent(value, path) {
    if (typeof value === 'string') {
      if (!isValidFlowName(value)) {
        this.report(path, `present takes a flow name or {"flow": name, "params"?, "style"?}; found ${abbreviatedJSON(value)}`);
        return null;
      }
      return { name: 'present', flow: value, params: new Map(), style: { fixed: 'automatic' } };
    }
    const object = objectValue(value);
    if (!object) {
      this.report(path, `present takes a flow name or {"flow": name, "params"?, "style"?}; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    this.checkKeys(object, ['flow', 'params', 'style'], path, 'present');
    /** @type {string | null} */
    let flow = null;
    const rawFlow = object.get('flow');
    if (rawFlow !== undefined) {
      const name = stringValue(rawFlow);
      if (name !== undefined && isValidFlowName(name)) flow = name;
      else this.report([...path, 'flow'], `flow must be a flow name; found ${abbreviatedJSON(rawFlow)}`);
    } else {
      this.report(path, 'present needs "flow": the name of the flow to present');
    }
    /** @type {JSONObject} */
    let params = new Map();
    const rawParams = object.get('params');
    if (rawParams !== undefined) params = this.readParamsObject(rawParams, [...path, 'params'], true) ?? new Map();
    /** @type {PresentationStyle} */
    let style = { fixed: 'automatic' };
    const rawStyle = object.get('style');
    if (rawStyle !== undefined) style = this.readStyle(rawStyle, [...path, 'style']) ?? style;
    if (flow === null || this.problems.length !== before) return null;
    return { name: 'present', flow, params, style };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {PresentationStyle | null}
   */
  readStyle(value, path) {
    /**
     * @param {JSONValue} candidate
     * @param {Path} at
     */
    const single = (candidate, at) => {
      const style = stringValue(candidate);
      if (style === undefined || !knownStyles.includes(style)) {
        this.report(at, `unknown presentation style ${abbreviatedJSON(candidate)}; expected one of ${knownStyles.join(', ')}`);
        return null;
      }
      return style;
    };
    if (typeof value === 'string') {
      const style = single(value, path);
      return style === null ? null : { fixed: style };
    }
    const object = objectValue(value);
    if (!object) {
      this.report(path, `style is a style name or {"compact": style, "regular": style}; found ${typeName(value)}`);
      return null;
    }
    this.checkKeys(object, ['compact', 'regular'], path, 'an adaptive style');
    const rawCompact = object.get('compact');
    const rawRegular = object.get('regular');
    if (rawCompact === undefined || rawRegular === undefined) {
      this.report(path, 'an adaptive style needs both "compact" and "regular"');
      return null;
    }
    const compact = single(rawCompact, [...path, 'compact']);
    const regular = single(rawRegular, [...path, 'regular']);
    if (compact === null || regular === null) return null;
    return { compact, regular };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {RuleParam[]} params
   * @returns {FlowEffect | null}
   */
  readSelectTab(value, path, params) {
    const index = integerValue(value);
    if (index !== undefined) {
      if (index < 0) {
        this.report(path, `selectTab takes a tab index from 0; found ${index}`);
        return null;
      }
      if (this.tabCount !== null && index >= this.tabCount) {
        this.report(path, `selectTab ${index} is out of range; ${this.flowName} has tabs 0...${Math.max(this.tabCount - 1, 0)}`);
        return null;
      }
      return { name: 'selectTab', index, param: null };
    }
    const reference = objectValue(value);
    const name = reference ? stringValue(reference.get('$param')) : undefined;
    if (!reference || reference.size !== 1 || name === undefined || name === '') {
      this.report(path, `selectTab takes a tab index or a reference {"$param": "index"}; found ${abbreviatedJSON(value)}`);
      return null;
    }
    const declared = params.find((param) => param.name === name);
    if (declared && declared.type !== 'integer' && declared.type !== 'any') {
      this.report([...path, '$param'], `selectTab needs an integer, but param ${writeJSON(name)} is declared ${declared.type}`);
      return null;
    }
    this.paramReferences.push({ name, path });
    return { name: 'selectTab', index: null, param: name };
  }

  // MARK: links

  /**
   * Reads `links`: only the root flow may have them, and no two patterns may match the same URIs.
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @param {string | null} flow
   * @returns {FlowLink[]}
   */
  readLinks(value, path, flow) {
    if (value === undefined) return [];
    if (flow !== null && flow !== rootFlowName) {
      this.report(path, `only the root flow ${writeJSON(rootFlowName)} declares links, since a link rebuilds the whole stack; move them to its definition`);
      return [];
    }
    const elements = arrayValue(value);
    if (!elements) {
      this.report(path, `links must be an array of links such as {"pattern": "/home"}; found ${typeName(value)}`);
      return [];
    }
    if (elements.length > maxLinks) {
      this.report(path, `there are ${elements.length} links; a flow may declare at most ${maxLinks}`);
      return [];
    }
    /** @type {FlowLink[]} */
    const links = [];
    /** @type {Map<string, { index: number, pattern: string }>} */
    const shapes = new Map();
    elements.forEach((element, index) => {
      const link = this.readLink(element, [...path, index]);
      if (!link) return;
      const shape = patternShape(link.pattern);
      const other = shapes.get(shape);
      if (other) {
        this.report([...path, index, 'pattern'], `pattern ${writeJSON(link.pattern.text)} matches the same URIs as ${jsonPointer([...path, other.index, 'pattern'])} (${writeJSON(other.pattern)}), so one of them would never be followed; remove one or make them differ by a literal`);
      } else {
        shapes.set(shape, { index, pattern: link.pattern.text });
      }
      links.push(link);
    });
    return links;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {FlowLink | null}
   */
  readLink(value, path) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `a link is an object {pattern, params?, when?, actions?, description?}; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    this.checkKeys(object, linkKeys, path, 'a link');
    /** @type {LinkPattern | null} */
    let pattern = null;
    const raw = object.get('pattern');
    if (raw !== undefined) {
      if (typeof raw === 'string') {
        try {
          pattern = parseLinkPattern(raw);
        } catch (error) {
          if (!(error instanceof LinkSyntaxError)) throw error;
          this.report([...path, 'pattern'], error.message);
        }
      } else {
        this.report([...path, 'pattern'], `pattern must be a string such as "/modal/{content}"; found ${typeName(raw)}`);
      }
    } else {
      this.report(path, 'a link needs a pattern, such as "/modal/{content}"');
    }
    const names = pattern ? patternPlaceholders(pattern) : null;
    /** @type {RuleParam[]} */
    let params = [];
    const rawParams = object.get('params');
    if (rawParams !== undefined) params = this.readLinkParams(rawParams, [...path, 'params'], names);
    /** @type {FlowCondition | null} */
    let when = null;
    const rawWhen = object.get('when');
    if (rawWhen !== undefined) {
      when = this.readCondition(rawWhen, [...path, 'when']);
      if (when && names) this.checkParamSources(when, [...path, 'when'], names);
    }
    /** @type {FlowAction[]} */
    let actions = [];
    const rawActions = object.get('actions');
    if (rawActions !== undefined) actions = this.readLinkActions(rawActions, [...path, 'actions'], names);
    /** @type {string | null} */
    let summary = null;
    const description = object.get('description');
    if (description !== undefined) {
      summary = stringValue(description) ?? null;
      if (summary === null) this.report([...path, 'description'], `description must be a string; found ${typeName(description)}`);
    }
    if (!pattern || this.problems.length !== before) return null;
    return { pattern, params, when, actions, summary };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {string[] | null} names
   * @returns {RuleParam[]}
   */
  readLinkParams(value, path, names) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `params must be an object mapping placeholders to types, such as {"tab": "integer"}; found ${typeName(value)}`);
      return [];
    }
    /** @type {RuleParam[]} */
    const params = [];
    for (const [name, member] of object) {
      if (names && !names.includes(name)) {
        const known = names.length === 0 ? 'it has none' : 'it has ' + names.map((placeholder) => `{${placeholder}}`).join(', ');
        this.report([...path, name], `${writeJSON(name)} is not a placeholder of the pattern; ${known}`);
        continue;
      }
      const type = stringValue(member);
      if (type === undefined || !linkParamTypes.includes(type)) {
        this.report([...path, name], `a placeholder's type is one of ${linkParamTypes.join(', ')}; found ${abbreviatedJSON(member)}`);
        continue;
      }
      params.push({ name, type: /** @type {RuleParam['type']} */ (type), required: true });
    }
    return params;
  }

  /**
   * @param {FlowCondition} condition
   * @param {Path} path
   * @param {string[]} names
   */
  checkParamSources(condition, path, names) {
    if (condition.op === 'test') {
      if (condition.source === 'param' && !names.includes(condition.key)) {
        this.report([...path, 'param'], `${writeJSON(condition.key)} is not a placeholder of the link's pattern; a link's param conditions read its captured values`);
      }
    } else if (condition.op === 'not') {
      this.checkParamSources(condition.condition, [...path, 'not'], names);
    } else {
      condition.conditions.forEach((inner, index) => this.checkParamSources(inner, [...path, condition.op, index], names));
    }
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {string[] | null} names
   * @returns {FlowAction[]}
   */
  readLinkActions(value, path, names) {
    const elements = arrayValue(value);
    if (!elements) {
      this.report(path, `actions must be an array of actions such as {"type": "home.selectTab", "params": {"index": 1}}; found ${typeName(value)}`);
      return [];
    }
    if (elements.length > maxLinkActions) {
      this.report(path, `a link has ${elements.length} actions; it may have at most ${maxLinkActions}`);
      return [];
    }
    /** @type {FlowAction[]} */
    const actions = [];
    elements.forEach((element, index) => {
      const action = this.readLinkAction(element, [...path, index], names);
      if (action) actions.push(action);
    });
    return actions;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @param {string[] | null} names
   * @returns {FlowAction | null}
   */
  readLinkAction(value, path, names) {
    const object = objectValue(value);
    if (!object) {
      this.report(path, `a link's action is an object {type, params?}; found ${typeName(value)}`);
      return null;
    }
    const before = this.problems.length;
    for (const key of object.keys()) {
      if (key === 'type' || key === 'params') continue;
      const why = key === 'from' || key === 'interactive'
        ? "a link's actions apply to the screen on top as the stack is rebuilt, never interactively"
        : 'expected type and params';
      this.report([...path, key], `unknown key ${abbreviatedJSON(key)} in a link's action; ${why}`);
    }
    /** @type {string | null} */
    let type = null;
    const raw = object.get('type');
    if (raw !== undefined) {
      const text = stringValue(raw);
      if (text !== undefined && text !== '' && scalarCount(text) <= 200) {
        if (reservedActions.includes(text)) {
          this.report([...path, 'type'], `${text} cannot be one of a link's actions; a link's actions move through the flows`);
        } else {
          type = text;
        }
      } else {
        this.report([...path, 'type'], `type must be a non-empty action type of at most 200 characters, such as "home.selectTab"; found ${abbreviatedJSON(raw)}`);
      }
    } else {
      this.report(path, 'a link\'s action needs a type, such as "home.selectTab"');
    }
    /** @type {JSONObject} */
    let params = new Map();
    const rawParams = object.get('params');
    if (rawParams !== undefined) {
      const paramsObject = objectValue(rawParams);
      if (paramsObject) {
        params = paramsObject;
        this.checkLinkReferences(rawParams, [...path, 'params'], names);
      } else {
        this.report([...path, 'params'], `params must be an object; found ${typeName(rawParams)}`);
      }
    }
    if (type === null || this.problems.length !== before) return null;
    return { type, from: null, params, interactive: false };
  }

  /**
   * `{"$link": name}` must name a placeholder; `{"$param": …}` belongs to rules.
   * @param {JSONValue} value
   * @param {Path} path
   * @param {string[] | null} names
   */
  checkLinkReferences(value, path, names) {
    if (value instanceof Map) {
      if (value.has('$link')) {
        const name = stringValue(value.get('$link'));
        if (value.size !== 1 || name === undefined || name === '') {
          this.report(path, 'a link reference is written {"$link": "name"} with nothing else in the object');
          return;
        }
        if (names && !names.includes(name)) {
          const known = names.length === 0 ? 'the pattern has none' : 'the pattern has ' + names.map((placeholder) => `{${placeholder}}`).join(', ');
          this.report([...path, '$link'], `${writeJSON(name)} is not captured by the pattern; ${known}`);
        }
        return;
      }
      if (value.has('$param')) {
        this.report(path, '{"$param": …} is for rules; in a link\'s actions use {"$link": "name"} to pass a placeholder\'s value');
        return;
      }
      for (const [key, member] of value) this.checkLinkReferences(member, [...path, key], names);
    } else if (Array.isArray(value)) {
      value.forEach((element, index) => this.checkLinkReferences(element, [...path, index], names));
    }
  }
}
