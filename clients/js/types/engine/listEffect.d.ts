/**
 * The row kinds written literally in the effect (rows given whole by a param are the client's,
 * and cannot be known in advance).
 * @param {ListOperation} effect
 * @returns {string[]}
 */
export function literalKinds(effect: ListOperation): string[];
/**
 * Whether an effect is a list effect.
 * @param {{ name: string }} effect
 * @returns {boolean}
 */
export function isListEffect(effect: {
    name: string;
}): boolean;
/**
 * Applies a resolved operation to `sections`, which is left as it was: the list after it, or the
 * reason it cannot apply, for a refusal.
 * @param {ResolvedListOperation} operation
 * @param {ListSection[]} sections
 * @returns {{ sections: ListSection[] } | { reason: string }}
 */
export function applyListOperation(operation: ResolvedListOperation, sections: ListSection[]): {
    sections: ListSection[];
} | {
    reason: string;
};
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/** @typedef {import('./screenList.js').ListRow} ListRow */
/**
 * What a list effect changes. Values are JSON as written (they may hold `{"$param": name}`),
 * checked when the definition is read and again once params are filled in:
 *
 * ```json
 * {"setSections": {"sections": {"$param": "sections"}}}
 * {"setRows": {"section": "FR", "rows": [{"id": "a1", "kind": "address.row", "values": {…}}]}}
 * {"insertRow": {"screen": "address.list", "section": {"$param": "country"}, "at": 0,
 *                "row": {"id": {"$param": "id"}, "kind": "address.row", "values": {"$param": "address"}}}}
 * {"removeRow": {"row": {"$param": "row.id"}}}
 * {"moveRow": {"row": "a1", "section": "DE", "at": 0}}
 * {"updateRow": {"row": "a1", "values": {"default": true}}}
 * ```
 *
 * `insertRow` without `at` appends; `moveRow` without `section` stays in the row's section and
 * without `at` goes last, counted once the row has been taken out; `updateRow` overlays `values`
 * on the row's, member by member.
 * @typedef {{ name: 'setSections', sections: JSONValue }
 *   | { name: 'setRows', section: JSONValue, rows: JSONValue }
 *   | { name: 'insertRow', section: JSONValue, row: JSONValue, at: JSONValue | undefined }
 *   | { name: 'removeRow', row: JSONValue }
 *   | { name: 'moveRow', row: JSONValue, section: JSONValue | undefined, at: JSONValue | undefined }
 *   | { name: 'updateRow', row: JSONValue, values: JSONValue }} ListOperation
 */
/**
 * An effect on the list of a screen still in the tree: by default the screen the action came
 * from, or with `screen` the topmost screen in `screens` showing that feature (a list under the
 * form that adds to it).
 * @typedef {ListOperation & { screen: string | null }} ListEffect
 */
/**
 * A list operation with its params filled in and checked, ready to apply.
 * @typedef {{ name: 'setSections', sections: ListSection[] }
 *   | { name: 'setRows', section: string, rows: ListRow[] }
 *   | { name: 'insertRow', section: string, row: ListRow, at: number | null }
 *   | { name: 'removeRow', row: string }
 *   | { name: 'moveRow', row: string, section: string | null, at: number | null }
 *   | { name: 'updateRow', row: string, values: JSONObject }} ResolvedListOperation
 */
/** Every list effect's name. */
export const listEffectNames: string[];
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type ListSection = import('./screenList.js').ListSection;
export type ListRow = import('./screenList.js').ListRow;
/**
 * What a list effect changes. Values are JSON as written (they may hold `{"$param": name}`),
 * checked when the definition is read and again once params are filled in:
 *
 * ```json
 * {"setSections": {"sections": {"$param": "sections"}}}
 * {"setRows": {"section": "FR", "rows": [{"id": "a1", "kind": "address.row", "values": {…}}]}}
 * {"insertRow": {"screen": "address.list", "section": {"$param": "country"}, "at": 0,
 *                "row": {"id": {"$param": "id"}, "kind": "address.row", "values": {"$param": "address"}}}}
 * {"removeRow": {"row": {"$param": "row.id"}}}
 * {"moveRow": {"row": "a1", "section": "DE", "at": 0}}
 * {"updateRow": {"row": "a1", "values": {"default": true}}}
 * ```
 *
 * `insertRow` without `at` appends; `moveRow` without `section` stays in the row's section and
 * without `at` goes last, counted once the row has been taken out; `updateRow` overlays `values`
 * on the row's, member by member.
 */
export type ListOperation = {
    name: 'setSections';
    sections: JSONValue;
} | {
    name: 'setRows';
    section: JSONValue;
    rows: JSONValue;
} | {
    name: 'insertRow';
    section: JSONValue;
    row: JSONValue;
    at: JSONValue | undefined;
} | {
    name: 'removeRow';
    row: JSONValue;
} | {
    name: 'moveRow';
    row: JSONValue;
    section: JSONValue | undefined;
    at: JSONValue | undefined;
} | {
    name: 'updateRow';
    row: JSONValue;
    values: JSONValue;
};
/**
 * An effect on the list of a screen still in the tree: by default the screen the action came
 * from, or with `screen` the topmost screen in `screens` showing that feature (a list under the
 * form that adds to it).
 */
export type ListEffect = ListOperation & {
    screen: string | null;
};
/**
 * A list operation with its params filled in and checked, ready to apply.
 */
export type ResolvedListOperation = {
    name: 'setSections';
    sections: ListSection[];
} | {
    name: 'setRows';
    section: string;
    rows: ListRow[];
} | {
    name: 'insertRow';
    section: string;
    row: ListRow;
    at: number | null;
} | {
    name: 'removeRow';
    row: string;
} | {
    name: 'moveRow';
    row: string;
    section: string | null;
    at: number | null;
} | {
    name: 'updateRow';
    row: string;
    values: Map<string, import("./json.js").JSONValue>;
};
