// condition: a `when` of an initial entry, a rule, a guard or a link, and its evaluation
// (a port of FlowCondition).

import { getMember, jsonEquals } from './json.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */

/**
 * The evaluation context of a session: the fixed facts conditions read, and the user's state as
 * known now (which `setUser` moves).
 * @typedef {object} FlowContext
 * @property {string} userId
 * @property {Map<string, JSONValue>} attributes read by `{"attribute": …}`
 * @property {Map<string, string>} traits read by `{"trait": …}` and adaptive styles
 * @property {Map<string, JSONValue>} flags read by `{"flag": …}`
 * @property {Map<string, JSONValue>} user read by `{"user": …}`
 */

/**
 * What a test checks: `is`, `isNot`, `in`, `notIn` or `exists`.
 * @typedef {{ keyword: 'is' | 'isNot', value: JSONValue }
 *   | { keyword: 'in' | 'notIn', values: JSONValue[] }
 *   | { keyword: 'exists', exists: boolean }} ConditionTest
 */

/**
 * A condition: one source's key tested, or `all`, `any` and `not` around conditions.
 * @typedef {{ op: 'test', source: 'flag' | 'user' | 'attribute' | 'trait' | 'param', key: string, test: ConditionTest }
 *   | { op: 'all' | 'any', conditions: FlowCondition[] }
 *   | { op: 'not', condition: FlowCondition }} FlowCondition
 */

/** The sources a test reads, in the order messages list them. */
export const conditionSources = ['flag', 'user', 'attribute', 'trait', 'param'];

/**
 * Whether `condition` holds in `context`, with `params` as the `param` source. A missing value is
 * absent, not `null`: `is` and `in` fail on it, `isNot` and `notIn` hold.
 * @param {FlowCondition} condition
 * @param {FlowContext} context
 * @param {JSONObject} params
 * @returns {boolean}
 */
export function evaluateCondition(condition, context, params) {
  switch (condition.op) {
    case 'test': {
      /** @type {JSONValue | undefined} */
      let value;
      switch (condition.source) {
        case 'flag': value = getMember(context.flags, condition.key); break;
        case 'user': value = getMember(context.user, condition.key); break;
        case 'attribute': value = getMember(context.attributes, condition.key); break;
        case 'trait': value = getMember(context.traits, condition.key); break;
        default: value = getMember(params, condition.key); break;
      }
      return testHolds(condition.test, value);
    }
    case 'all':
      return condition.conditions.every((inner) => evaluateCondition(inner, context, params));
    case 'any':
      return condition.conditions.some((inner) => evaluateCondition(inner, context, params));
    default:
      return !evaluateCondition(condition.condition, context, params);
  }
}

/**
 * @param {ConditionTest} test
 * @param {JSONValue | undefined} value `undefined` when the source has no such key
 */
function testHolds(test, value) {
  switch (test.keyword) {
    case 'is': return value !== undefined && jsonEquals(value, test.value);
    case 'isNot': return value === undefined || !jsonEquals(value, test.value);
    case 'in': return value !== undefined && test.values.some((candidate) => jsonEquals(value, candidate));
    case 'notIn': return value === undefined || !test.values.some((candidate) => jsonEquals(value, candidate));
    default: return (value !== undefined) === test.exists;
  }
}
