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
export function sameJSON(a: unknown, b: unknown): boolean;
/**
 * Parses text as JSON, or answers undefined when it is not JSON (a proxy's page, a cut body).
 *
 * @param {string} text
 * @returns {JSONValue | undefined}
 */
export function tryParse(text: string): JSONValue | undefined;
/**
 * The value when it is a JSON object (not an array, not null).
 *
 * @param {unknown} value
 * @returns {JSONObject | undefined}
 */
export function asObject(value: unknown): JSONObject | undefined;
/**
 * A parsed JSON value. Members are typed loosely (`any`): tsc 4.8 cannot declare the recursive
 * alias in JSDoc; readers check each value's type where they use it.
 */
export type JSONValue = null | boolean | number | string | any[] | JSONObject;
export type JSONObject = {
    [key: string]: any;
};
