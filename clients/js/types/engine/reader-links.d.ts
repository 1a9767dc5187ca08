/**
 * Reads `links`: only the root flow may have them, and no two patterns may match the same URIs.
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @param {string | null} flow
 * @returns {FlowLink[]}
 */
export function readLinks(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path, flow: string | null): FlowLink[];
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowLink | null}
 */
export function readLink(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): FlowLink | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 * @returns {RuleParam[]}
 */
export function readLinkParams(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, names: string[] | null): RuleParam[];
/**
 * @param {DefinitionReader} reader
 * @param {FlowCondition} condition
 * @param {Path} path
 * @param {string[]} names
 */
export function checkParamSources(reader: DefinitionReader, condition: FlowCondition, path: import("./definition.js").Path, names: string[]): void;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 * @returns {FlowAction[]}
 */
export function readLinkActions(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, names: string[] | null): FlowAction[];
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 * @returns {FlowAction | null}
 */
export function readLinkAction(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, names: string[] | null): FlowAction | null;
/**
 * `{"$link": name}` must name a placeholder; `{"$param": …}` belongs to rules.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 */
export function checkLinkReferences(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, names: string[] | null): void;
export type DefinitionReader = import('./definition.js').DefinitionReader;
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowCondition = import('./condition.js').FlowCondition;
export type FlowAction = import('./tree.js').FlowAction;
export type LinkPattern = import('./linkPattern.js').LinkPattern;
export type RuleParam = import('./definition.js').RuleParam;
export type FlowLink = import('./definition.js').FlowLink;
export type Path = import('./definition.js').Path;
