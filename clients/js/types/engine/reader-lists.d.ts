/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./definition.js').Path} Path */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./listEffect.js').ListOperation} ListOperation */
/**
 * A screen target's `sections`: static (checked whole, as the engine will read it), or, in
 * effects, with `{"$param": name}` for the whole list, a section's `rows`, a row, or any id, title
 * or values (checked once params are filled in).
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} allowParamReferences
 * @param {boolean} [referencesChecked] the caller recorded the param references already (a list
 *   effect checks its whole argument), so an undeclared one is reported once
 * @returns {JSONValue | undefined} the sections as written; undefined when they are wrong
 */
export function readSectionsTemplate(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, allowParamReferences: boolean, referencesChecked?: boolean | undefined): JSONValue | undefined;
/**
 * An array of rows, or a reference; literal ids go into `ids`, which reports one used twice.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {Set<string>} ids
 */
export function readRowsTemplate(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path, ids: Set<string>): void;
/**
 * A row `{"id", "kind", "values"?}`, or a reference; returns its literal id.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string | null}
 */
export function readRowTemplate(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): string | null;
/**
 * A section or row id: a string of 1 to 200 characters, or a reference (then null).
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @param {string} what
 * @returns {string | null}
 */
export function readListId(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path, what: string): string | null;
/**
 * A position: an integer from 0, or a reference.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 */
export function readListIndex(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): void;
/**
 * Whether `value` is `{"$param": name}` with a non-empty name.
 * @param {JSONValue} value
 */
export function isReference(value: JSONValue): boolean;
/**
 * `setSections`, `setRows`, `insertRow`, `removeRow`, `moveRow`, `updateRow`.
 * @param {DefinitionReader} reader
 * @param {'setSections' | 'setRows' | 'insertRow' | 'removeRow' | 'moveRow' | 'updateRow'} name
 * @param {JSONValue} argument
 * @param {Path} path
 * @returns {FlowEffect | null}
 */
export function readListEffect(reader: DefinitionReader, name: 'setSections' | 'setRows' | 'insertRow' | 'removeRow' | 'moveRow' | 'updateRow', argument: JSONValue, path: import("./definition.js").Path): FlowEffect | null;
/**
 * A rule's `row`: the kind, or kinds, of the tapped row the rule matches.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string[] | null}
 */
export function readRowKinds(reader: DefinitionReader, value: JSONValue, path: import("./definition.js").Path): string[] | null;
export type DefinitionReader = import('./definition.js').DefinitionReader;
export type JSONValue = import('./json.js').JSONValue;
export type Path = import('./definition.js').Path;
export type FlowEffect = import('./definition.js').FlowEffect;
export type ListOperation = import('./listEffect.js').ListOperation;
