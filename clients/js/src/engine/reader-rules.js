// reader-rules: reading `on` — the rules of each action type, their `from`, `via` and params, and
// rules that shadow one another (a port of DefinitionReader+rules).

import { abbreviatedJSON, arrayValue, boolValue, jsonPointer, objectValue, stringValue, typeName, writeJSON } from './json.js';
import { reservedActions, isValidFlowName, readNameOrNames, scalarCount, onlyBubbles } from './definition.js';
import { readCondition } from './reader-conditions.js';
import { checkResults, readEffects, readGuard } from './reader-effects.js';
import { readFeature } from './reader-initial.js';
import { readRowKinds } from './reader-lists.js';
import { rowParams } from './action.js';

/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./definition.js').RuleParam} RuleParam */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./definition.js').FlowGuard} FlowGuard */
/** @typedef {import('./definition.js').FlowRule} FlowRule */
/** @typedef {import('./definition.js').Path} Path */

const ruleKeys = ['from', 'row', 'via', 'when', 'interactive', 'params', 'do', 'guard', 'description'];
const maxRules = 64;
const paramTypes = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'any'];

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @returns {{ action: string, rules: FlowRule[] }[] | null}
 */
export function readHandlers(reader, value, path) {
  if (value === undefined) return [];
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `on must be an object mapping action types to lists of rules; found ${typeName(value)}`);
    return null;
  }
  /** @type {{ action: string, rules: FlowRule[] }[]} */
  const handlers = [];
  let valid = true;
  for (const [action, rawRules] of object) {
    const handlerPath = [...path, action];
    if (action === '' || scalarCount(action) > 200) {
      reader.report(handlerPath, 'an action type must be a non-empty string of at most 200 characters');
      valid = false;
      continue;
    }
    if (reservedActions.includes(action)) {
      reader.report(handlerPath, `${action} is handled by the engine itself and cannot be redefined`);
      valid = false;
      continue;
    }
    const elements = arrayValue(rawRules);
    if (!elements || elements.length === 0) {
      reader.report(handlerPath, `the rules for ${action} must be a non-empty array of rules; found ${abbreviatedJSON(rawRules)}`);
      valid = false;
      continue;
    }
    if (elements.length > maxRules) {
      reader.report(handlerPath, `${action} has ${elements.length} rules; an action type may have at most ${maxRules}`);
      valid = false;
      continue;
    }
    /** @type {FlowRule[]} */
    const rules = [];
    elements.forEach((element, index) => {
      const rule = readRule(reader, element, [...handlerPath, index]);
      if (rule) rules.push(rule);
      else valid = false;
    });
    if (rules.length === elements.length) {
      checkShadowing(reader, rules, handlerPath);
      handlers.push({ action, rules });
    }
  }
  return valid ? handlers : null;
}

/**
 * A rule after one with no `when` whose `from`, `via` and `row` cover it can never match.
 * @param {DefinitionReader} reader
 * @param {FlowRule[]} rules
 * @param {Path} path
 */
export function checkShadowing(reader, rules, path) {
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
      if (covers(first.from, rule.from) && covers(first.via, rule.via) && covers(first.row, rule.row)) {
        /** @type {string[]} */
        const scopes = [];
        if (first.from) scopes.push(`from ${abbreviated(first.from)}`);
        if (first.via) scopes.push(`via ${abbreviated(first.via)}`);
        if (first.row) scopes.push(`row ${abbreviated(first.row)}`);
        const scope = scopes.length === 0 ? 'any source' : scopes.join(' ');
        reader.report([...path, later], `this rule never matches: rule ${jsonPointer([...path, earlier])} matches ${scope} with no when, and it comes first`);
        break;
      }
    }
  });
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowRule | null}
 */
export function readRule(reader, value, path) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `a rule is an object with optional from, via, when, interactive, params and a do list; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  reader.checkKeys(object, ruleKeys, path, 'a rule');
  reader.paramReferences = [];
  /** @type {string[] | null} */
  let from = null;
  const rawFrom = object.get('from');
  if (rawFrom !== undefined) from = readFrom(reader, rawFrom, [...path, 'from']);
  /** @type {string[] | null} */
  let row = null;
  const rawRow = object.get('row');
  if (rawRow !== undefined) row = readRowKinds(reader, rawRow, [...path, 'row']);
  reader.ruleMatchesRows = rawRow !== undefined;
  /** @type {string[] | null} */
  let via = null;
  const rawVia = object.get('via');
  if (rawVia !== undefined) via = readVia(reader, rawVia, [...path, 'via']);
  /** @type {FlowCondition | null} */
  let when = null;
  const rawWhen = object.get('when');
  if (rawWhen !== undefined) when = readCondition(reader, rawWhen, [...path, 'when']);
  let interactive = false;
  const rawInteractive = object.get('interactive');
  if (rawInteractive !== undefined) {
    const flag = boolValue(rawInteractive);
    if (flag !== undefined) interactive = flag;
    else reader.report([...path, 'interactive'], `interactive must be true or false; found ${typeName(rawInteractive)}`);
  }
  /** @type {RuleParam[]} */
  let params = [];
  const rawParams = object.get('params');
  const declaresParams = rawParams !== undefined;
  if (rawParams !== undefined) params = readParamDeclarations(reader, rawParams, [...path, 'params']);
  /** @type {string | null} */
  let summary = null;
  const description = object.get('description');
  if (description !== undefined) {
    summary = stringValue(description) ?? null;
    if (summary === null) reader.report([...path, 'description'], `description must be a string; found ${typeName(description)}`);
  }
  /** @type {FlowEffect[]} */
  let effects = [];
  const rawEffects = object.get('do');
  if (rawEffects !== undefined) {
    effects = readEffects(reader, rawEffects, [...path, 'do'], params);
    checkResults(reader, effects, rawEffects, [...path, 'do'], declaresParams);
  } else {
    reader.report(path, 'a rule needs a do list of effects, such as "do": [{"push": "feature"}]');
  }
  /** @type {FlowGuard | null} */
  let guarded = null;
  const rawGuard = object.get('guard');
  if (rawGuard !== undefined) {
    if (onlyBubbles(effects)) {
      reader.report([...path, 'guard'], 'a guard is checked by the rule that handles the action, and this rule only bubbles it; put the guard on the parent flow\'s rule');
    } else {
      guarded = readGuard(reader, rawGuard, [...path, 'guard'], params);
    }
  }
  // A bubble rule passes the action on before params or interactivity are looked at: here
  // they would look like a check that never runs.
  if (onlyBubbles(effects)) {
    if (declaresParams) {
      reader.report([...path, 'params'], 'params are checked only by the rule that handles the action, and this rule only bubbles it, so they would never be enforced; declare them on the parent flow\'s rule that handles it');
    }
    if (interactive) {
      reader.report([...path, 'interactive'], 'interactive is decided by the rule that handles the action, and this rule only bubbles it; set it on the parent flow\'s rule that handles it');
    }
  }
  if (declaresParams) {
    for (const reference of reader.paramReferences) {
      if (reader.ruleMatchesRows && rowParams.includes(reference.name)) continue;
      const name = writeJSON(reference.name);
      const declared = params.find((param) => param.name === reference.name);
      if (!declared) {
        reader.report([...reference.path, '$param'], `param ${name} is not declared in this rule's params; declare it or fix the name`);
        continue;
      }
      if (!declared.required) {
        reader.report([...reference.path, '$param'], `param ${name} is declared optional but an effect uses it, which makes it required; drop the ? from its type`);
      }
    }
  }
  if (reader.problems.length !== before) return null;
  return { from, row, via, when, interactive, params, effects, summary, guarded };
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string[] | null}
 */
export function readVia(reader, value, path) {
  const elements = readNameOrNames(reader, value, path, `via must be a child flow's name or a non-empty array of them, such as "onboarding"`);
  if (!elements) return null;
  /** @type {string[]} */
  const flows = [];
  for (const [element, elementPath] of elements) {
    const name = stringValue(element);
    if (name === undefined || !isValidFlowName(name)) {
      reader.report(elementPath, `via names a flow (1 to 100 letters, digits, '.', '_' or '-'); found ${abbreviatedJSON(element)}`);
      continue;
    }
    if (name === reader.flowNameValue) {
      reader.report(elementPath, 'via names the child flow an action comes up through; an action from this flow\'s own screens is matched with from');
      continue;
    }
    flows.push(name);
  }
  return flows.length === elements.length ? flows : null;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string[] | null}
 */
export function readFrom(reader, value, path) {
  if (typeof value === 'string') {
    const feature = readFeature(reader, value, path);
    return feature === null ? null : [feature];
  }
  const elements = arrayValue(value);
  if (!elements || elements.length === 0) {
    reader.report(path, `from must be a feature name or a non-empty array of feature names; found ${abbreviatedJSON(value)}`);
    return null;
  }
  /** @type {string[]} */
  const features = [];
  elements.forEach((element, index) => {
    const feature = readFeature(reader, element, [...path, index]);
    if (feature !== null) features.push(feature);
  });
  return features.length === elements.length ? features : null;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {RuleParam[]}
 */
export function readParamDeclarations(reader, value, path) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `params must be an object mapping param names to types, such as {"index": "integer"}; found ${typeName(value)}`);
    return [];
  }
  /** @type {RuleParam[]} */
  const params = [];
  const names = paramTypes.join(', ');
  for (const [name, member] of object) {
    let text = stringValue(member);
    if (text === undefined) {
      reader.report([...path, name], `a param type is a string (${names}, with a trailing ? when optional); found ${typeName(member)}`);
      continue;
    }
    let required = true;
    if (text.endsWith('?')) {
      required = false;
      text = text.slice(0, -1);
    }
    if (!paramTypes.includes(text)) {
      reader.report([...path, name], `unknown param type ${abbreviatedJSON(member)}; expected one of ${names}, with a trailing ? when optional`);
      continue;
    }
    params.push({ name, type: /** @type {RuleParam['type']} */ (text), required });
  }
  return params;
}
