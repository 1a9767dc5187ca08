/**
 * Whether `condition` holds in `context`, with `params` as the `param` source. A missing value is
 * absent, not `null`: `is` and `in` fail on it, `isNot` and `notIn` hold.
 * @param {FlowCondition} condition
 * @param {FlowContext} context
 * @param {JSONObject} params
 * @returns {boolean}
 */
export function evaluateCondition(condition: FlowCondition, context: FlowContext, params: import("./json.js").JSONObject): boolean;
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
export const conditionSources: string[];
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
/**
 * The evaluation context of a session: the fixed facts conditions read, and the user's state as
 * known now (which `setUser` moves).
 */
export type FlowContext = {
    userId: string;
    /**
     * read by `{"attribute": …}`
     */
    attributes: Map<string, JSONValue>;
    /**
     * read by `{"trait": …}` and adaptive styles
     */
    traits: Map<string, string>;
    /**
     * read by `{"flag": …}`
     */
    flags: Map<string, JSONValue>;
    /**
     * read by `{"user": …}`
     */
    user: Map<string, JSONValue>;
};
/**
 * What a test checks: `is`, `isNot`, `in`, `notIn` or `exists`.
 */
export type ConditionTest = {
    keyword: 'is' | 'isNot';
    value: JSONValue;
} | {
    keyword: 'in' | 'notIn';
    values: JSONValue[];
} | {
    keyword: 'exists';
    exists: boolean;
};
/**
 * A condition: one source's key tested, or `all`, `any` and `not` around conditions.
 */
export type FlowCondition = {
    op: 'test';
    source: 'flag' | 'user' | 'attribute' | 'trait' | 'param';
    key: string;
    test: ConditionTest;
} | {
    op: 'all' | 'any';
    conditions: FlowCondition[];
} | {
    op: 'not';
    condition: FlowCondition;
};
