/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowEffect[]}
 */
export function readEffects(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, params: RuleParam[]): FlowEffect[];
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowEffect | null}
 */
export function readEffect(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, params: RuleParam[]): FlowEffect | null;
/**
 * `{"into": param, "value": …, "to"?: feature}`.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowEffect | null}
 */
export function readResult(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): FlowEffect | null;
/**
 * A rule returns at most one result, after an effect that brings a screen back on top, and the
 * value's params have declared types.
 * @param {DefinitionReader} reader
 * @param {FlowEffect[]} effects
 * @param {JSONValue} raw
 * @param {Path} path
 * @param {boolean} declaresParams
 */
export function checkResults(reader: DefinitionReader, effects: FlowEffect[], raw: JSONValue, path: import("./definition.js").Path, declaresParams: boolean): void;
/**
 * `{"when": condition, "else": effect or [effects]}`: the else effects show exactly one flow.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowGuard | null}
 */
export function readGuard(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, params: RuleParam[]): FlowGuard | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {PopTarget | null}
 */
export function readPopTo(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): PopTarget | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowEffect | null}
 */
export function readPresent(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): FlowEffect | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {PresentationStyle | null}
 */
export function readStyle(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): PresentationStyle | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {RuleParam[]} params
 * @returns {FlowEffect | null}
 */
export function readSelectTab(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, params: RuleParam[]): FlowEffect | null;
export type DefinitionReader = import('./definition.js').DefinitionReader;
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowCondition = import('./condition.js').FlowCondition;
export type RuleParam = import('./definition.js').RuleParam;
export type PresentationStyle = import('./definition.js').PresentationStyle;
export type PopTarget = import('./definition.js').PopTarget;
export type FlowEffect = import('./definition.js').FlowEffect;
export type FlowGuard = import('./definition.js').FlowGuard;
export type Path = import('./definition.js').Path;
