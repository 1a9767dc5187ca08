// reader-initial: reading `initial` — its entries and their targets — and the features and params
// objects that effects read too (a port of DefinitionReader+initial).

import { abbreviatedJSON, arrayValue, objectValue, stringValue, typeName } from './json.js';
import { isValidFlowName, scalarCount } from './definition.js';
import { readCondition } from './reader-conditions.js';
import { readSectionsTemplate } from './reader-lists.js';

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
export function readInitial(reader, value, path) {
  if (value === undefined) {
    reader.report(path, 'initial is required: the entries the flow starts with, such as ["onboarding.first"]');
    return null;
  }
  const elements = arrayValue(value);
  if (!elements) {
    reader.report(path, `initial must be an array of entries; found ${typeName(value)}`);
    return null;
  }
  if (elements.length === 0) {
    const what = reader.kind === 'tabbed' ? 'a tabbed flow needs at least one tab' : 'a stacked flow needs at least one entry';
    reader.report(path, `initial is empty; ${what}`);
    return null;
  }
  /** @type {{ target: EntryTarget, when: FlowCondition | null }[]} */
  const entries = [];
  let valid = true;
  elements.forEach((element, index) => {
    const entry = readInitialEntry(reader, element, [...path, index]);
    if (entry) entries.push(entry);
    else valid = false;
  });
  return valid ? entries : null;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {{ target: EntryTarget, when: FlowCondition | null } | null}
 */
export function readInitialEntry(reader, value, path) {
  if (typeof value === 'string') {
    const target = readTarget(reader, value, path, false, false);
    return target ? { target, when: null } : null;
  }
  const original = objectValue(value);
  if (!original) {
    reader.report(path, `an initial entry is a feature name, {"screen": feature}, or {"flow": name}; found ${typeName(value)}`);
    return null;
  }
  const object = new Map(original);
  /** @type {FlowCondition | null} */
  let when = null;
  let valid = true;
  const condition = object.get('when');
  if (condition !== undefined) {
    when = readCondition(reader, condition, [...path, 'when']);
    valid = when !== null;
    object.delete('when');
  }
  // `when` was read above; the rest of the object is an ordinary target.
  const target = readTarget(reader, object, path, false, false, ['when']);
  if (!target || !valid) return null;
  return { target, when };
}

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
export function readTarget(reader, value, path, stringIsFlow, allowParamReferences, extraKeys = []) {
  if (typeof value === 'string') {
    if (stringIsFlow) {
      if (!isValidFlowName(value)) {
        reader.report(path, `${abbreviatedJSON(value)} is not a valid flow name; use 1 to 100 letters, digits, '.', '_' or '-'`);
        return null;
      }
      return { target: 'flow', name: value, params: new Map() };
    }
    const feature = readFeature(reader, value, path);
    return feature === null ? null : { target: 'screen', name: feature, params: new Map() };
  }
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `expected a feature name, {"screen": feature}, {"flow": name} or {"handoff": kind}; found ${typeName(value)}`);
    return null;
  }
  reader.checkKeys(object, ['screen', 'flow', 'handoff', 'params', 'sections', ...extraKeys], path, 'an entry');
  /** @type {JSONValue | undefined} */
  let sections;
  const rawSections = object.get('sections');
  if (rawSections !== undefined) {
    if (!object.has('screen')) {
      reader.report([...path, 'sections'], 'sections belong to a screen entry {"screen": feature, "sections": […]}');
      return null;
    }
    sections = readSectionsTemplate(reader, rawSections, [...path, 'sections'], allowParamReferences);
    if (sections === undefined) return null;
  }
  /** @type {JSONObject} */
  let params = new Map();
  let valid = true;
  const rawParams = object.get('params');
  if (rawParams !== undefined) {
    const parsed = readParamsObject(reader, rawParams, [...path, 'params'], allowParamReferences);
    if (parsed) params = parsed;
    else valid = false;
  }
  const handoff = object.get('handoff');
  if (handoff !== undefined) {
    if (object.has('screen') || object.has('flow')) {
      reader.report(path, 'an entry has one of "screen", "flow" or "handoff", not several');
      return null;
    }
    const kind = readFeature(reader, handoff, [...path, 'handoff']);
    if (kind === null || !valid) return null;
    return { target: 'handoff', name: kind, params };
  }
  const screen = object.get('screen');
  const flow = object.get('flow');
  if (screen !== undefined && flow === undefined) {
    const feature = readFeature(reader, screen, [...path, 'screen']);
    if (feature === null || !valid) return null;
    return sections === undefined ? { target: 'screen', name: feature, params } : { target: 'screen', name: feature, params, sections };
  }
  if (screen === undefined && flow !== undefined) {
    const name = stringValue(flow);
    if (name === undefined || !isValidFlowName(name)) {
      reader.report([...path, 'flow'], `flow must be a flow name (1 to 100 letters, digits, '.', '_' or '-'); found ${abbreviatedJSON(flow)}`);
      return null;
    }
    if (!valid) return null;
    return { target: 'flow', name, params };
  }
  if (screen === undefined) {
    reader.report(path, 'an entry needs "screen" (a feature), "flow" (a flow name) or "handoff" (a native step\'s kind)');
  } else {
    reader.report(path, 'an entry has either "screen" or "flow", not both');
  }
  return null;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 */
export function readFeature(reader, value, path) {
  const feature = stringValue(value);
  if (feature === undefined || feature === '' || scalarCount(feature) > 200) {
    reader.report(path, `a feature must be a non-empty string of at most 200 characters, such as "onboarding.first"; found ${abbreviatedJSON(value)}`);
    return null;
  }
  return feature;
}

/**
 * A params object; `{"$param": name}` references are allowed only in effects.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} allowParamReferences
 */
export function readParamsObject(reader, value, path, allowParamReferences) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `params must be an object; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  checkParamReferences(reader, value, path, allowParamReferences);
  return reader.problems.length === before ? object : null;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} allowed
 */
export function checkParamReferences(reader, value, path, allowed) {
  if (value instanceof Map) {
    if (value.has('$param')) {
      if (!allowed) {
        reader.report(path, '{"$param": …} references an action\'s param and is only allowed in effects');
        return;
      }
      const name = stringValue(value.get('$param'));
      if (value.size !== 1 || name === undefined || name === '') {
        reader.report(path, 'a param reference is written {"$param": "name"} with nothing else in the object');
        return;
      }
      reader.paramReferences.push({ name, path });
      return;
    }
    for (const [key, member] of value) checkParamReferences(reader, member, [...path, key], allowed);
  } else if (Array.isArray(value)) {
    value.forEach((element, index) => checkParamReferences(reader, element, [...path, index], allowed));
  }
}
