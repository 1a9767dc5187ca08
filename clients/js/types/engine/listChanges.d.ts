/**
 * Whether nothing changed.
 * @param {ListChanges} changes
 */
export function listChangesAreEmpty(changes: ListChanges): boolean;
/**
 * The changes that turn `old` into `new`, by the rules of docs/api.md ("List changes") that every
 * port follows: sections and rows are matched by id (Heckel's pass: ids are unique, so every id
 * present in both lists is a match); of the matched ones, those that keep their relative order
 * stay (the longest increasing run of old indexes, in new order) and every other one is moved. So
 * inserting, removing or moving one row reports exactly that row.
 * @param {ListSection[]} old
 * @param {ListSection[]} next
 * @returns {ListChanges}
 */
export function diffLists(old: ListSection[], next: ListSection[]): ListChanges;
/**
 * Marks the elements of the longest strictly increasing subsequence of `values` (distinct
 * numbers): patience sorting, scanning left to right, each value replacing the first pile top
 * greater than it, then following the back links from the last pile. Ties cannot occur, so the
 * result is the same in every port.
 * @param {number[]} values
 * @returns {boolean[]}
 */
export function longestIncreasingRun(values: number[]): boolean[];
/**
 * Applies `changes` to `old` as UIKit would (the batch, then the reloads), taking the content of
 * inserted and reloaded sections and rows from `next` by id, as a table's data source gives it;
 * every other row keeps what it had. Returns `null` when the changes do not fit `old` (an index
 * out of range, a slot filled twice, an id not where it is said to be). When the changes are
 * right the result equals `next`: the tests check the diff this way, and a client mirroring a
 * list can apply them with it.
 * @param {ListChanges} changes
 * @param {ListSection[]} old
 * @param {ListSection[]} next
 * @returns {ListSection[] | null}
 */
export function applyListChanges(changes: ListChanges, old: ListSection[], next: ListSection[]): ListSection[] | null;
/**
 * Writes `{"sections": {"deleted","inserted","moved","reloaded"}, "rows": {…}}`: every array
 * present, possibly empty; a section change is `{"id","at"}` (a move `{"id","from","to"}`) and a
 * row's index is `[section, row]`.
 * @param {ListChanges} changes
 * @param {JSONWriter} writer
 */
export function writeListChanges(changes: ListChanges, writer: JSONWriter): void;
/**
 * The sections' stage.
 * @param {ListChanges} changes
 * @param {JSONWriter} writer
 */
export function writeSectionStage(changes: ListChanges, writer: JSONWriter): void;
/**
 * The rows' stage, each index `[section, row]`.
 * @param {ListChanges} changes
 * @param {JSONWriter} writer
 */
export function writeRowStage(changes: ListChanges, writer: JSONWriter): void;
export type JSONWriter = import('./json.js').JSONWriter;
export type ListSection = import('./screenList.js').ListSection;
export type ListRow = import('./screenList.js').ListRow;
export type RowPath = import('./screenList.js').RowPath;
/**
 * The changes of one level (sections by index, or rows by `RowPath`): deleted at old indexes,
 * inserted at new indexes, moved from old to new (ascending by new index), all ascending; then
 * the reloads, at new indexes, applied once the batch of the other three is done.
 */
export type ListStage<P> = {
    deleted: {
        id: string;
        at: P;
    }[];
    inserted: {
        id: string;
        at: P;
    }[];
    moved: {
        id: string;
        from: P;
        to: P;
    }[];
    reloaded: {
        id: string;
        at: P;
    }[];
};
/**
 * How one screen's list changed, in UIKit's batch-update terms: what a `UITableView` applies in
 * one `performBatchUpdates`, then the reloads. Rows inside an inserted or deleted section are
 * not listed (the section's change carries them); a row that leaves a deleted section for a kept
 * one is inserted, one that leaves a kept section for an inserted one is deleted.
 */
export type ListChanges = {
    sections: ListStage<number>;
    rows: ListStage<RowPath>;
};
/**
 * The list changes of one screen, as a transition carries them: the screen's id number (`"e5"`
 * outside) and its changes.
 */
export type ScreenListChange = {
    id: number;
    changes: ListChanges;
};
