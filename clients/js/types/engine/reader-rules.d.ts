/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @returns {{ action: string, rules: FlowRule[] }[] | null}
 */
export function readHandlers(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path): {
    action: string;
    rules: FlowRule[];
}[] | null;
/**
 * A rule after one with no `when` whose `from`, `via` and `row` cover it can never match.
 * @param {DefinitionReader} reader
 * @param {FlowRule[]} rules
 * @param {Path} path
 */
export function checkShadowing(reader: DefinitionReader, rules: FlowRule[], path: import("./definition.js").Path): void;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowRule | null}
 */
export function readRule(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): FlowRule | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string[] | null}
 */
export function readVia(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): string[] | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string[] | null}
 */
export function readFrom(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): string[] | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {RuleParam[]}
 */
export function readParamDeclarations(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): RuleParam[];
export type DefinitionReader = import('./definition.js').DefinitionReader;
export type JSONValue = import('./json.js').JSONValue;
export type FlowCondition = import('./condition.js').FlowCondition;
export type RuleParam = import('./definition.js').RuleParam;
export type FlowEffect = import('./definition.js').FlowEffect;
export type FlowGuard = import('./definition.js').FlowGuard;
export type FlowRule = import('./definition.js').FlowRule;
export type Path = import('./definition.js').Path;
