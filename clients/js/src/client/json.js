// json: the few JSON helpers the client needs over plain parsed values (no engine model).

/**
 * A parsed JSON value. Members are typed loosely (`any`): tsc 4.8 cannot declare the recursive
 * alias in JSDoc; readers check each value's type where they use it.
 * @typedef {null | boolean | number | string | any[] | JSONObject} JSONValue
 */
/** @typedef {{[key: string]: any}} JSONObject */

/**
 * Whether two parsed JSON values are the same document. Member order does not matter (the
 * server and the engine write the same order, but a store may not keep it); numbers compare by
 * value, as the server's `1` and the engine's `1` are one number.
 *
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function sameJSON(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJSON(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = /** @type {Record<string, unknown>} */ (a);
  const right = /** @type {Record<string, unknown>} */ (b);
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(right, key) || !sameJSON(left[key], right[key])) return false;
  }
  return true;
}

/**
 * Parses text as JSON, or answers undefined when it is not JSON (a proxy's page, a cut body).
 *
 * @param {string} text
 * @returns {JSONValue | undefined}
 */
export function tryParse(text) {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The value when it is a JSON object (not an array, not null).
 *
 * @param {unknown} value
 * @returns {JSONObject | undefined}
 */
export function asObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? /** @type {JSONObject} */ (value) : undefined;
}
