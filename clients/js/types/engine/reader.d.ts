/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} json
 * @returns {FlowDefinition | null}
 */
export function readDocument(reader: DefinitionReader, json: JSONValue): FlowDefinition | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 */
export function readName(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path): string | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @returns {'stacked' | 'tabbed' | null}
 */
export function readKind(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path): 'stacked' | 'tabbed' | null;
/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 */
export function readSelected(reader: DefinitionReader, value: JSONValue | undefined, path: import("./definition.js").Path): number;
/**
 * Reads a definition from a parsed JSON value, reporting every problem found. When
 * `expectedName` is given, a different `name` is a problem at `/name`.
 *
 * ```js
 * const onboarding = readDefinition(parseJSON(text), 'onboarding');
 * ```
 * @param {JSONValue} json
 * @param {string} [expectedName]
 * @returns {FlowDefinition}
 * @throws {DefinitionProblems}
 */
export function readDefinition(json: JSONValue, expectedName?: string | undefined): FlowDefinition;
export type JSONValue = import('./json.js').JSONValue;
export type FlowRule = import('./definition.js').FlowRule;
export type FlowDefinition = import('./definition.js').FlowDefinition;
export type Path = import('./definition.js').Path;
import { DefinitionReader } from "./definition.js";
