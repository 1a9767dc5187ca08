/**
 * Reads `[{"id", "title"?, "indexTitle"?, "rows": [{"id", "kind", "values"?}]}]`: unknown keys are
 * refused, section ids are unique, row ids unique across the whole list.
 * @param {JSONValue} value
 * @returns {ListSection[]}
 * @throws {ListProblem}
 */
export function readSections(value: JSONValue): ListSection[];
/**
 * The first size cap `sections` is over, in order (as Swift's `ScreenList.sizeProblem`): a row
 * whose values nest more than `maxValuesDepth` levels or that takes more than `maxRowBytes`, then
 * the list once its rows so far take more than `maxListBytes`.
 * @param {ListSection[]} sections
 * @returns {ListProblem | null}
 */
export function sizeProblem(sections: ListSection[]): ListProblem | null;
/**
 * Reads an array of rows (ids unique among them).
 * @param {JSONValue} value
 * @param {(string | number)[]} [path]
 * @returns {ListRow[]}
 * @throws {ListProblem}
 */
export function readRows(value: JSONValue, path?: (string | number)[] | undefined): ListRow[];
/**
 * Reads one row `{"id", "kind", "values"?}` (`values` defaults to `{}`).
 * @param {JSONValue} value
 * @param {(string | number)[]} [path]
 * @returns {ListRow}
 * @throws {ListProblem}
 */
export function readRow(value: JSONValue, path?: (string | number)[] | undefined): ListRow;
/**
 * A row or section id (or a kind): a string of 1 to 200 characters.
 * @param {JSONValue | undefined} value
 * @param {(string | number)[]} path
 * @param {string} what
 * @returns {string}
 * @throws {ListProblem}
 */
export function readListId(value: JSONValue | undefined, path: (string | number)[], what: string): string;
/**
 * Writes `[{"id","title"?,"indexTitle"?,"rows":[{"id","kind","values"}]}]`, members in this order,
 * `title` and `indexTitle` only when set: the state document and storage alike.
 * @param {ListSection[]} sections
 * @param {JSONWriter} writer
 */
export function writeSections(sections: ListSection[], writer: JSONWriter): void;
/**
 * Where the row `id` is: its section's index and its index in that section.
 * @param {string} id
 * @param {ListSection[]} sections
 * @returns {RowPath | null}
 */
export function placeOfRow(id: string, sections: ListSection[]): RowPath | null;
/**
 * Whether two lists are equal as Swift's `[ListSection] ==` says: the same sections and rows in
 * the same order, ids, titles and kinds by canonical equivalence, values as JSON.
 * @param {ListSection[]} lhs
 * @param {ListSection[]} rhs
 */
export function sameSections(lhs: ListSection[], rhs: ListSection[]): boolean;
/**
 * Whether two sections' rows are equal as Swift's `[ListRow] ==` says; an array shared by both
 * sides (a section no effect touched) compares at once.
 * @param {ListRow[]} lhs
 * @param {ListRow[]} rhs
 */
export function sameRows(lhs: ListRow[], rhs: ListRow[]): boolean;
/**
 * @param {string | null} lhs
 * @param {string | null} rhs
 */
export function sameOptionalText(lhs: string | null, rhs: string | null): boolean;
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/**
 * One row of a screen's list: `{"id": "home", "kind": "address.row", "values": {"city": "Lyon"}}`.
 * `id` is stable across versions and unique within the screen's whole list (every section), so a
 * change of the list is reported by id and a tap names the row it hit; `kind` is the cell the app
 * registers for it, and a feature for capabilities, as a screen's feature is.
 * @typedef {object} ListRow
 * @property {string} id
 * @property {string} kind
 * @property {JSONObject} values what the cell shows; a row whose kind or values change is reloaded
 */
/**
 * One section of a screen's list: `{"id": "FR", "title"?: "France", "indexTitle"?: "F", "rows": […]}`.
 * @typedef {object} ListSection
 * @property {string} id unique among the list's sections
 * @property {string | null} title the header; a section whose title or index title changes is reloaded
 * @property {string | null} indexTitle the entry in a table's index (`sectionIndexTitles`)
 * @property {ListRow[]} rows
 */
/**
 * A row's place: its section's index and its index within that section.
 * @typedef {{ section: number, row: number }} RowPath
 */
/** At most this many rows in one screen's list (and this many sections). */
export const maxListRows: 10000;
/** At most this many bytes in one row as written (64 KiB, the longest string a request may hold). */
export const maxRowBytes: number;
/** A row's values nest at most this many levels (the values object itself is the first). */
export const maxValuesDepth: 16;
/** At most this many bytes in a screen's whole list, its rows as written (1 MiB, the server's body limit). */
export const maxListBytes: number;
export { idKey };
/**
 * Why a list could not be read: the pointer's tokens, relative to the list, and what was expected.
 */
export class ListProblem extends Error {
    /**
     * @param {(string | number)[]} pointer
     * @param {string} message
     * @param {boolean} [tooLarge]
     */
    constructor(pointer: (string | number)[], message: string, tooLarge?: boolean | undefined);
    pointer: (string | number)[];
    detail: string;
    /** Well formed but over a size cap: an action making it so is refused as `list-too-large`. */
    tooLarge: boolean;
}
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
/**
 * One row of a screen's list: `{"id": "home", "kind": "address.row", "values": {"city": "Lyon"}}`.
 * `id` is stable across versions and unique within the screen's whole list (every section), so a
 * change of the list is reported by id and a tap names the row it hit; `kind` is the cell the app
 * registers for it, and a feature for capabilities, as a screen's feature is.
 */
export type ListRow = {
    id: string;
    kind: string;
    /**
     * what the cell shows; a row whose kind or values change is reloaded
     */
    values: import("./json.js").JSONObject;
};
/**
 * One section of a screen's list: `{"id": "FR", "title"?: "France", "indexTitle"?: "F", "rows": […]}`.
 */
export type ListSection = {
    /**
     * unique among the list's sections
     */
    id: string;
    /**
     * the header; a section whose title or index title changes is reloaded
     */
    title: string | null;
    /**
     * the entry in a table's index (`sectionIndexTitles`)
     */
    indexTitle: string | null;
    rows: ListRow[];
};
/**
 * A row's place: its section's index and its index within that section.
 */
export type RowPath = {
    section: number;
    row: number;
};
import { JSONWriter } from "./json.js";
import { idKey } from "./json.js";
