// reader-conditions: reading `when` — one source's key tested, and `all`, `any` and `not` around such
// tests (a port of DefinitionReader+conditions).

import { abbreviatedJSON, arrayValue, boolValue, objectValue, stringValue, typeName } from './json.js';
import { conditionSources } from './condition.js';

/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./condition.js').ConditionTest} ConditionTest */
/** @typedef {import('./definition.js').Path} Path */

const operatorKeys = ['is', 'isNot', 'in', 'notIn', 'exists'];

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowCondition | null}
 */
export function readCondition(reader, value, path) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `a condition is an object such as {"flag": "key", "is": true}; found ${typeName(value)}`);
    return null;
  }
  for (const combinator of /** @type {const} */ (['all', 'any', 'not'])) {
    if (!object.has(combinator)) continue;
    const argument = object.get(combinator);
    if (object.size !== 1 || argument === undefined) {
      reader.report(path, `${combinator} must be the only key of its condition`);
      return null;
    }
    const argumentPath = [...path, combinator];
    if (combinator === 'not') {
      const inner = readCondition(reader, argument, argumentPath);
      return inner ? { op: 'not', condition: inner } : null;
    }
    const elements = arrayValue(argument);
    if (!elements || elements.length === 0) {
      reader.report(argumentPath, `${combinator} takes a non-empty array of conditions; found ${abbreviatedJSON(argument)}`);
      return null;
    }
    /** @type {FlowCondition[]} */
    const conditions = [];
    elements.forEach((element, index) => {
      const condition = readCondition(reader, element, [...argumentPath, index]);
      if (condition) conditions.push(condition);
    });
    if (conditions.length !== elements.length) return null;
    return { op: combinator, conditions };
  }
  reader.checkKeys(object, [...conditionSources, ...operatorKeys], path, 'a condition');
  const sources = [...object].filter(([key]) => conditionSources.includes(key));
  const operators = [...object].filter(([key]) => operatorKeys.includes(key));
  if (sources.length !== 1) {
    reader.report(path, `a condition names exactly one of ${conditionSources.join(', ')}, or is all, any or not; found ${sources.length}`);
    return null;
  }
  const [sourceName, sourceValue] = sources[0];
  const key = stringValue(sourceValue);
  if (key === undefined || key === '') {
    reader.report([...path, sourceName], `${sourceName} must be a non-empty key name; found ${abbreviatedJSON(sourceValue)}`);
    return null;
  }
  if (operators.length !== 1) {
    reader.report(path, `a condition has exactly one of ${operatorKeys.join(', ')}; found ${operators.length}`);
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
      reader.report([...path, operator], `${operator} takes an array of values; found ${typeName(operand)}`);
      return null;
    }
    test = { keyword: operator, values: candidates };
  } else {
    const flag = boolValue(operand);
    if (flag === undefined) {
      reader.report([...path, operator], `exists takes true or false; found ${typeName(operand)}`);
      return null;
    }
    test = { keyword: 'exists', exists: flag };
  }
  return { op: 'test', source: /** @type {'flag' | 'user' | 'attribute' | 'trait' | 'param'} */ (sourceName), key, test };
}
