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
export function readAction(json: JSONValue | string | Record<string, unknown>): FlowAction;
/**
 * A value of this engine's JSON model from a plain JavaScript value (objects become Maps in
 * their key order); values of the model pass through. Anything JSON cannot hold (undefined
 * members are left out, functions and symbols refused) throws invalid-params.
 * @param {unknown} value
 * @param {(string | number)[]} [path]
 * @returns {JSONValue}
 */
export function fromPlain(value: unknown, path?: (string | number)[] | undefined): JSONValue;
/** The param holding the tapped row's id (a string). */
export const rowIdParam: "row.id";
/** The param holding the tapped row's kind (a string). */
export const rowKindParam: "row.kind";
/** The param holding the tapped row's values (an object). */
export const rowValuesParam: "row.values";
/** The params the engine supplies from the tapped row; a client cannot send them. */
export const rowParams: string[];
export type JSONValue = import('./json.js').JSONValue;
export type FlowAction = import('./tree.js').FlowAction;
