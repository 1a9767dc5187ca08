/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./definition.js').EntryTarget} EntryTarget */
/** @typedef {import('./definition.js').Path} Path */
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 */
export function readInitial(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path): {
    target: EntryTarget;
    when: FlowCondition | null;
}[] | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {{ target: EntryTarget, when: FlowCondition | null } | null}
 */
export function readInitialEntry(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): {
    target: EntryTarget;
    when: FlowCondition | null;
} | null;
/**
 * Reads a screen or flow target: a string (a feature, or a flow name when `stringIsFlow`),
 * `{"screen": feature, "params"?, "sections"?}`, `{"flow": name, "params"?}` or `{"handoff": kind,
 * "params"?}`.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} stringIsFlow
 * @param {boolean} allowParamReferences
 * @param {string[]} [extraKeys]
 * @returns {EntryTarget | null}
 */
export function readTarget(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, stringIsFlow: boolean, allowParamReferences: boolean, extraKeys?: string[] | undefined): EntryTarget | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 */
export function readFeature(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): string | null;
/**
 * A params object; `{"$param": name}` references are allowed only in effects.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} allowParamReferences
 */
export function readParamsObject(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, allowParamReferences: boolean): import("./json.js").JSONObject | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} allowed
 */
export function checkParamReferences(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, allowed: boolean): void;
export type DefinitionReader = import('./definition.js').DefinitionReader;
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowCondition = import('./condition.js').FlowCondition;
export type EntryTarget = import('./definition.js').EntryTarget;
export type Path = import('./definition.js').Path;
