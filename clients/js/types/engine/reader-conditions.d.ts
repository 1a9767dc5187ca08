/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowCondition | null}
 */
export function readCondition(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): FlowCondition | null;
export type DefinitionReader = import('./definition.js').DefinitionReader;
export type JSONValue = import('./json.js').JSONValue;
export type FlowCondition = import('./condition.js').FlowCondition;
export type ConditionTest = import('./condition.js').ConditionTest;
export type Path = import('./definition.js').Path;
