// action: reads an action as clients post it, `{type, from?, row?, params?, interactive?}`, as the
// server reads a request body (a port of FlowAction(json:)).

import { FlowError } from './errors.js';
import { abbreviatedJSON, boolValue, jsonPointer, objectValue, parseJSON, stringValue, typeName } from './json.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./tree.js').FlowAction} FlowAction */

const allowedKeys = ['type', 'from', 'row', 'params', 'interactive'];

/** The param holding the tapped row's id (a string). */
export const rowIdParam = 'row.id';
/** The param holding the tapped row's kind (a string). */
export const rowKindParam = 'row.kind';
/** The param holding the tapped row's values (an object). */
export const rowValuesParam = 'row.values';
/** The params the engine supplies from the tapped row; a client cannot send them. */
export const rowParams = [rowIdParam, rowKindParam, rowValuesParam];

/**
 * Reads an action from a parsed body (or its JSON text). Unknown keys are refused so a typo such
 * as `parmas` does not silently drop the params; `null` counts as absent for the optional keys.
 *
 * ```js
 * readAction({ type: 'home.selectTab', params: { index: 1 } });   // plain objects are accepted too
 * ```
 * @param {JSONValue | string | Record<string, unknown>} json the action: this engine's JSON value,
 *   JSON text, or a plain object (converted member by member)
 * @returns {FlowAction}
 * @throws {FlowError} invalid-params naming the offending key
 */
export function readAction(json) {
  /** @type {JSONValue} */
  let value;
  if (typeof json === 'string') {
    try {
      value = parseJSON(json);
    } catch (error) {
      throw FlowError.invalidParams('', `an action is JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  } else {
    value = fromPlain(json);
  }
  const object = objectValue(value);
  if (!object) {
    throw FlowError.invalidParams('', `an action is an object {type, from?, row?, params?, interactive?}; found ${typeName(value)}`);
  }
  for (const key of object.keys()) {
    if (!allowedKeys.includes(key)) {
      throw FlowError.invalidParams(jsonPointer([key]),
        `unknown key ${abbreviatedJSON(key)} in an action; expected type, from, row, params, interactive`);
    }
  }
  const rawType = object.get('type');
  if (rawType === undefined) {
    throw FlowError.invalidParams('/type', 'type is required: the action type, such as "onboarding.showSecond"');
  }
  const type = stringValue(rawType);
  if (type === undefined || type === '' || Array.from(type).length > 200) {
    throw FlowError.invalidParams('/type', `type must be a non-empty string of at most 200 characters; found ${abbreviatedJSON(rawType)}`);
  }
  /** @type {string | null} */
  let from = null;
  const rawFrom = object.get('from');
  if (rawFrom !== undefined && rawFrom !== null) {
    const text = stringValue(rawFrom);
    if (text === undefined) throw FlowError.invalidParams('/from', `from must be a screen id such as "e7"; found ${typeName(rawFrom)}`);
    from = text;
  }
  /** @type {string | null} */
  let row = null;
  const rawRow = object.get('row');
  if (rawRow !== undefined && rawRow !== null) {
    const text = stringValue(rawRow);
    if (text === undefined || text === '' || Array.from(text).length > 200) {
      throw FlowError.invalidParams('/row', `row must be the id of the tapped row, a string of 1 to 200 characters; found ${abbreviatedJSON(rawRow, 40)}`);
    }
    row = text;
  }
  /** @type {Map<string, JSONValue>} */
  let params = new Map();
  const rawParams = object.get('params');
  if (rawParams !== undefined && rawParams !== null) {
    const paramsObject = objectValue(rawParams);
    if (!paramsObject) throw FlowError.invalidParams('/params', `params must be an object; found ${typeName(rawParams)}`);
    params = paramsObject;
  }
  for (const name of rowParams) {
    if (params.has(name)) {
      throw FlowError.invalidParams(jsonPointer(['params', name]),
        `${name} is set by the engine from the tapped row ("row": id); it cannot be sent as a param`);
    }
  }
  let interactive = false;
  const rawInteractive = object.get('interactive');
  if (rawInteractive !== undefined && rawInteractive !== null) {
    const flag = boolValue(rawInteractive);
    if (flag === undefined) {
      throw FlowError.invalidParams('/interactive', `interactive must be true or false; found ${typeName(rawInteractive)}`);
    }
    interactive = flag;
  }
  return { type, from, row, params, interactive };
}

/**
 * A value of this engine's JSON model from a plain JavaScript value (objects become Maps in
 * their key order); values of the model pass through. Anything JSON cannot hold (undefined
 * members are left out, functions and symbols refused) throws invalid-params.
 * @param {unknown} value
 * @param {(string | number)[]} [path]
 * @returns {JSONValue}
 */
export function fromPlain(value, path = []) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw FlowError.invalidParams(jsonPointer(path), 'numbers must be finite');
    return value;
  }
  if (Array.isArray(value)) return value.map((element, index) => fromPlain(element, [...path, index]));
  if (value instanceof Map) {
    /** @type {Map<string, JSONValue>} */
    const object = new Map();
    for (const [key, member] of value) object.set(String(key), fromPlain(member, [...path, String(key)]));
    return object;
  }
  if (typeof value === 'object') {
    /** @type {Map<string, JSONValue>} */
    const object = new Map();
    for (const [key, member] of Object.entries(/** @type {Record<string, unknown>} */ (value))) {
      if (member !== undefined) object.set(key, fromPlain(member, [...path, key]));
    }
    return object;
  }
  throw FlowError.invalidParams(jsonPointer(path), `a ${typeof value} is not JSON`);
}
