// reader: a definition document's top level — name, kind, selected — and the entry point that reads a
// definition, reporting every problem (a port of DefinitionReader and FlowDefinition+parse).

import { abbreviatedJSON, boolValue, integerValue, objectValue, stringValue, typeName, writeJSON } from './json.js';
import { DefinitionReader, DefinitionProblems, isValidFlowName } from './definition.js';
import { readInitial } from './reader-initial.js';
import { readLinks } from './reader-links.js';
import { readHandlers } from './reader-rules.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./definition.js').FlowRule} FlowRule */
/** @typedef {import('./definition.js').FlowDefinition} FlowDefinition */
/** @typedef {import('./definition.js').Path} Path */

const definitionKeys = ['name', 'kind', 'initial', 'selected', 'on', 'links', 'description', 'version', 'live'];

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} json
 * @returns {FlowDefinition | null}
 */
export function readDocument(reader, json) {
  const object = objectValue(json);
  if (!object) {
    reader.report([], `a flow definition is an object with name, kind, initial and on; found ${typeName(json)}`);
    return null;
  }
  reader.checkKeys(object, definitionKeys, [], 'a flow definition');
  const name = readName(reader, object.get('name'), ['name']);
  if (name !== null) reader.flowName = `'${name}'`;
  reader.flowNameValue = name;
  reader.kind = readKind(reader, object.get('kind'), ['kind']);
  const initial = readInitial(reader, object.get('initial'), ['initial']);
  if (reader.kind === 'tabbed' && initial) reader.tabCount = initial.length;
  const selected = readSelected(reader, object.get('selected'), ['selected']);
  const handlers = readHandlers(reader, object.get('on'), ['on']);
  const links = readLinks(reader, object.get('links'), ['links'], name);
  /** @type {string | null} */
  let summary = null;
  const description = object.get('description');
  if (description !== undefined) {
    summary = stringValue(description) ?? null;
    if (summary === null) reader.report(['description'], `description must be a string; found ${typeName(description)}`);
  }
  const version = object.get('version');
  if (version !== undefined && integerValue(version) === undefined) {
    reader.report(['version'], `version must be an integer (it is set by the server and ignored here); found ${typeName(version)}`);
  }
  const live = object.get('live');
  if (live !== undefined && boolValue(live) === undefined) {
    reader.report(['live'], `live must be a boolean (it is set by the server and ignored here); found ${typeName(live)}`);
  }
  if (name === null || reader.kind === null || !initial || !handlers || reader.problems.length > 0) return null;
  /** @type {Map<string, FlowRule[]>} */
  const rulesByAction = new Map();
  for (const handler of handlers) rulesByAction.set(handler.action, handler.rules);
  return { name, kind: reader.kind, initial, selected, handlers, rulesByAction, summary, links };
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 */
export function readName(reader, value, path) {
  if (value === undefined) {
    reader.report(path, 'name is required: the flow\'s name, such as "onboarding"');
    return null;
  }
  const name = stringValue(value);
  if (name === undefined) {
    reader.report(path, `name must be a string; found ${typeName(value)}`);
    return null;
  }
  if (!isValidFlowName(name)) {
    reader.report(path, `name ${abbreviatedJSON(value)} is not a valid flow name; use 1 to 100 letters, digits, '.', '_' or '-'`);
    return null;
  }
  return name;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @returns {'stacked' | 'tabbed' | null}
 */
export function readKind(reader, value, path) {
  if (value === undefined) {
    reader.report(path, 'kind is required: "stacked" or "tabbed"');
    return null;
  }
  if (value !== 'stacked' && value !== 'tabbed') {
    reader.report(path, `kind must be "stacked" or "tabbed"; found ${abbreviatedJSON(value)}`);
    return null;
  }
  return value;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 */
export function readSelected(reader, value, path) {
  if (value === undefined) return 0;
  if (reader.kind === 'stacked') {
    reader.report(path, `selected is only for tabbed flows; ${reader.flowName} is stacked`);
    return 0;
  }
  const index = integerValue(value);
  if (index === undefined) {
    reader.report(path, `selected must be an integer tab index; found ${typeName(value)}`);
    return 0;
  }
  if (reader.tabCount !== null && (index < 0 || index >= reader.tabCount)) {
    reader.report(path, `selected ${index} is out of range; ${reader.flowName} has tabs 0...${Math.max(reader.tabCount - 1, 0)}`);
    return 0;
  }
  return index;
}

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
export function readDefinition(json, expectedName) {
  const reader = new DefinitionReader();
  const definition = readDocument(reader, json);
  if (expectedName !== undefined && definition && definition.name !== expectedName) {
    reader.report(['name'], `name is ${writeJSON(definition.name)} but the flow is stored as ${writeJSON(expectedName)}; they must match`);
  }
  if (!definition || reader.problems.length > 0) throw new DefinitionProblems(reader.problems);
  return definition;
}
