// listChanges: how a screen's list changed between two versions — sections and rows deleted,
// inserted, moved, reloaded — the diff that computes it, the replay that checks it, and its JSON
// (a port of ListChanges and ScreenListChange).

import { jsonEquals, sameText } from './json.js';
import { idKey, sameOptionalText, sameRows } from './screenList.js';

/** @typedef {import('./json.js').JSONWriter} JSONWriter */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/** @typedef {import('./screenList.js').ListRow} ListRow */
/** @typedef {import('./screenList.js').RowPath} RowPath */

/**
 * The changes of one level (sections by index, or rows by `RowPath`): deleted at old indexes,
 * inserted at new indexes, moved from old to new (ascending by new index), all ascending; then
 * the reloads, at new indexes, applied once the batch of the other three is done.
 * @template P
 * @typedef {object} ListStage
 * @property {{ id: string, at: P }[]} deleted
 * @property {{ id: string, at: P }[]} inserted
 * @property {{ id: string, from: P, to: P }[]} moved
 * @property {{ id: string, at: P }[]} reloaded
 */

/**
 * How one screen's list changed, in UIKit's batch-update terms: what a `UITableView` applies in
 * one `performBatchUpdates`, then the reloads. Rows inside an inserted or deleted section are
 * not listed (the section's change carries them); a row that leaves a deleted section for a kept
 * one is inserted, one that leaves a kept section for an inserted one is deleted.
 * @typedef {object} ListChanges
 * @property {ListStage<number>} sections
 * @property {ListStage<RowPath>} rows
 */

/**
 * The list changes of one screen, as a transition carries them: the screen's id number (`"e5"`
 * outside) and its changes.
 * @typedef {{ id: number, changes: ListChanges }} ScreenListChange
 */

/**
 * @template P
 * @returns {ListStage<P>}
 */
function emptyStage() {
  return { deleted: [], inserted: [], moved: [], reloaded: [] };
}

/**
 * @param {ListStage<unknown>} stage
 */
function stageIsEmpty(stage) {
  return stage.deleted.length === 0 && stage.inserted.length === 0 && stage.moved.length === 0 && stage.reloaded.length === 0;
}

/**
 * Whether nothing changed.
 * @param {ListChanges} changes
 */
export function listChangesAreEmpty(changes) {
  return stageIsEmpty(changes.sections) && stageIsEmpty(changes.rows);
}

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
export function diffLists(old, next) {
  /** @type {ListChanges} */
  const changes = { sections: emptyStage(), rows: emptyStage() };
  /** @type {Map<string, number>} */
  const oldSectionIndex = new Map();
  old.forEach((section, index) => oldSectionIndex.set(idKey(section.id), index));
  /** @type {Map<string, number>} */
  const newSectionIndex = new Map();
  next.forEach((section, index) => newSectionIndex.set(idKey(section.id), index));

  // Sections.
  old.forEach((section, index) => {
    if (!newSectionIndex.has(idKey(section.id))) changes.sections.deleted.push({ id: section.id, at: index });
  });
  /** @type {{ next: number, old: number }[]} */
  const keptSections = [];
  next.forEach((section, index) => {
    const oldIndex = oldSectionIndex.get(idKey(section.id));
    if (oldIndex !== undefined) keptSections.push({ next: index, old: oldIndex });
    else changes.sections.inserted.push({ id: section.id, at: index });
  });
  const stayingSections = longestIncreasingRun(keptSections.map((kept) => kept.old));
  keptSections.forEach((kept, position) => {
    if (!stayingSections[position]) changes.sections.moved.push({ id: next[kept.next].id, from: kept.old, to: kept.next });
    const before = old[kept.old];
    const after = next[kept.next];
    if (!sameOptionalText(before.title, after.title) || !sameOptionalText(before.indexTitle, after.indexTitle)) {
      changes.sections.reloaded.push({ id: after.id, at: kept.next });
    }
  });

  // Rows. Only sections kept on both sides whose rows differ can hold row changes: a row of a
  // kept section whose rows are all the same stayed there (ids are unique), so those sections
  // are skipped whole (an array shared by both lists compares in constant time).
  const changedOld = old.map(() => false);
  const changedNew = next.map(() => false);
  for (const kept of keptSections) {
    if (sameRows(old[kept.old].rows, next[kept.next].rows)) continue;
    changedOld[kept.old] = true;
    changedNew[kept.next] = true;
  }
  /** @type {Map<string, RowPath>} */
  const oldRows = new Map();
  old.forEach((section, sectionIndex) => {
    if (!changedOld[sectionIndex]) return;
    section.rows.forEach((row, rowIndex) => oldRows.set(idKey(row.id), { section: sectionIndex, row: rowIndex }));
  });
  /** @type {Set<string>} */
  const newRows = new Set();
  next.forEach((section, sectionIndex) => {
    if (!changedNew[sectionIndex]) return;
    for (const row of section.rows) newRows.add(idKey(row.id));
  });
  // A row of a changed kept section that is in no changed kept section now is gone, or in an
  // inserted section: deleted.
  old.forEach((section, sectionIndex) => {
    if (!changedOld[sectionIndex]) return;
    section.rows.forEach((row, rowIndex) => {
      if (!newRows.has(idKey(row.id))) changes.rows.deleted.push({ id: row.id, at: { section: sectionIndex, row: rowIndex } });
    });
  });
  next.forEach((section, sectionIndex) => {
    if (!changedNew[sectionIndex]) return;
    const sameSection = oldSectionIndex.get(idKey(section.id)) ?? -1;
    // Rows that were in this same section, in new order, with their old index.
    /** @type {{ next: number, old: number }[]} */
    const stayed = [];
    section.rows.forEach((row, rowIndex) => {
      const was = oldRows.get(idKey(row.id));
      // Not in a changed kept section before: new, or from a deleted section.
      if (was === undefined) {
        changes.rows.inserted.push({ id: row.id, at: { section: sectionIndex, row: rowIndex } });
        return;
      }
      if (was.section === sameSection) stayed.push({ next: rowIndex, old: was.row });
    });
    const staying = longestIncreasingRun(stayed.map((entry) => entry.old));
    /** @type {Set<number>} */
    const stayingRows = new Set();
    stayed.forEach((entry, position) => {
      if (staying[position]) stayingRows.add(entry.next);
    });
    section.rows.forEach((row, rowIndex) => {
      const was = oldRows.get(idKey(row.id));
      if (was === undefined) return;
      const path = { section: sectionIndex, row: rowIndex };
      if (!stayingRows.has(rowIndex)) changes.rows.moved.push({ id: row.id, from: { section: was.section, row: was.row }, to: path });
      const before = old[was.section].rows[was.row];
      if (!sameText(before.kind, row.kind) || !jsonEquals(before.values, row.values)) {
        changes.rows.reloaded.push({ id: row.id, at: path });
      }
    });
  });
  return changes;
}

/**
 * Marks the elements of the longest strictly increasing subsequence of `values` (distinct
 * numbers): patience sorting, scanning left to right, each value replacing the first pile top
 * greater than it, then following the back links from the last pile. Ties cannot occur, so the
 * result is the same in every port.
 * @param {number[]} values
 * @returns {boolean[]}
 */
export function longestIncreasingRun(values) {
  /** @type {boolean[]} */
  const marks = values.map(() => false);
  if (values.length === 0) return marks;
  /** @type {number[]} indexes into values */
  const tops = [];
  /** @type {number[]} */
  const back = values.map(() => -1);
  values.forEach((value, index) => {
    let low = 0;
    let high = tops.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (values[tops[middle]] < value) low = middle + 1;
      else high = middle;
    }
    back[index] = low > 0 ? tops[low - 1] : -1;
    if (low === tops.length) tops.push(index);
    else tops[low] = index;
  });
  let cursor = tops[tops.length - 1];
  while (cursor >= 0) {
    marks[cursor] = true;
    cursor = back[cursor];
  }
  return marks;
}

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
export function applyListChanges(changes, old, next) {
  /** @type {Map<string, ListSection>} */
  const newSections = new Map();
  for (const section of next) newSections.set(idKey(section.id), section);
  /** @type {Map<string, ListRow>} */
  const newRows = new Map();
  for (const section of next) for (const row of section.rows) newRows.set(idKey(row.id), row);
  const { sections, rows } = changes;
  /** @param {number} index @param {unknown[]} array */
  const inRange = (index, array) => Number.isInteger(index) && index >= 0 && index < array.length;

  // Sections: inserted and moved at their new indexes, the rest in old order.
  const deletedSections = new Set(sections.deleted.map((change) => change.at));
  if (deletedSections.size !== sections.deleted.length
    || !sections.deleted.every((change) => inRange(change.at, old) && sameText(old[change.at].id, change.id))) return null;
  const count = old.length - sections.deleted.length + sections.inserted.length;
  if (count < 0) return null;
  /** @type {({ inserted: string } | { old: number } | null)[]} */
  const slots = new Array(count).fill(null);
  for (const change of sections.inserted) {
    if (!inRange(change.at, slots) || slots[change.at] !== null) return null;
    slots[change.at] = { inserted: change.id };
  }
  /** @type {Set<number>} */
  const movedFrom = new Set();
  for (const move of sections.moved) {
    if (!inRange(move.to, slots) || slots[move.to] !== null || !inRange(move.from, old) || !sameText(old[move.from].id, move.id)
      || deletedSections.has(move.from) || movedFrom.has(move.from)) return null;
    movedFrom.add(move.from);
    slots[move.to] = { old: move.from };
  }
  const rest = old.map((_, index) => index).filter((index) => !deletedSections.has(index) && !movedFrom.has(index));
  let restCursor = 0;
  for (let index = 0; index < slots.length; index += 1) {
    if (slots[index] !== null) continue;
    if (restCursor >= rest.length) return null;
    slots[index] = { old: rest[restCursor] };
    restCursor += 1;
  }
  if (restCursor !== rest.length) return null;

  // Rows leaving each old section, and arriving in each new one.
  /** @type {Map<number, Set<number>>} */
  const leaving = new Map();
  /** @param {number} section @param {number} row */
  const leave = (section, row) => {
    const set = leaving.get(section) ?? new Set();
    leaving.set(section, set);
    if (set.has(row)) return false;
    set.add(row);
    return true;
  };
  for (const change of rows.deleted) {
    const { section, row } = change.at;
    if (!inRange(section, old) || !inRange(row, old[section].rows) || !sameText(old[section].rows[row].id, change.id)
      || !leave(section, row)) return null;
  }
  /** @type {Map<number, Map<number, ListRow>>} */
  const arriving = new Map();
  /** @param {RowPath} at @param {ListRow} row */
  const arrive = (at, row) => {
    const slot = arriving.get(at.section) ?? new Map();
    arriving.set(at.section, slot);
    if (slot.has(at.row)) return false;
    slot.set(at.row, row);
    return true;
  };
  for (const change of rows.inserted) {
    const row = newRows.get(idKey(change.id));
    if (!row || !arrive(change.at, row)) return null;
  }
  for (const move of rows.moved) {
    const { section, row } = move.from;
    if (!inRange(section, old) || !inRange(row, old[section].rows) || !sameText(old[section].rows[row].id, move.id)
      || !leave(section, row) || arriving.get(move.to.section)?.has(move.to.row)) return null;
    arrive(move.to, old[section].rows[row]);
  }

  /** @type {ListSection[]} */
  const result = [];
  for (let index = 0; index < slots.length; index += 1) {
    const slot = slots[index];
    if (slot === null) return null;
    if ('inserted' in slot) {
      const section = newSections.get(idKey(slot.inserted));
      if (!section || arriving.has(index)) return null;
      result.push(section);
      continue;
    }
    const section = old[slot.old];
    const gone = leaving.get(slot.old) ?? new Set();
    const kept = section.rows.filter((_, rowIndex) => !gone.has(rowIndex));
    const incoming = arriving.get(index) ?? new Map();
    /** @type {(ListRow | null)[]} */
    const filled = new Array(kept.length + incoming.size).fill(null);
    for (const [at, row] of incoming) {
      if (!inRange(at, filled)) return null;
      filled[at] = row;
    }
    let keptCursor = 0;
    for (let at = 0; at < filled.length; at += 1) {
      if (filled[at] === null) {
        filled[at] = kept[keptCursor] ?? null;
        keptCursor += 1;
      }
    }
    /** @type {ListRow[]} */
    const placed = [];
    for (const row of filled) if (row !== null) placed.push(row);
    if (placed.length !== filled.length) return null;
    result.push({ ...section, rows: placed });
  }
  // A deleted old section's rows must not be moved anywhere (UIKit refuses it).
  for (const section of deletedSections) if ((leaving.get(section)?.size ?? 0) > 0) return null;

  for (const change of sections.reloaded) {
    const fresh = newSections.get(idKey(change.id));
    if (!inRange(change.at, result) || !sameText(result[change.at].id, change.id) || !fresh) return null;
    result[change.at] = { ...result[change.at], title: fresh.title, indexTitle: fresh.indexTitle };
  }
  for (const change of rows.reloaded) {
    const { section, row } = change.at;
    const fresh = newRows.get(idKey(change.id));
    if (!inRange(section, result) || !inRange(row, result[section].rows) || !sameText(result[section].rows[row].id, change.id)
      || !fresh) return null;
    const updated = result[section].rows.slice();
    updated[row] = fresh;
    result[section] = { ...result[section], rows: updated };
  }
  return result;
}

/**
 * Writes `{"sections": {"deleted","inserted","moved","reloaded"}, "rows": {…}}`: every array
 * present, possibly empty; a section change is `{"id","at"}` (a move `{"id","from","to"}`) and a
 * row's index is `[section, row]`.
 * @param {ListChanges} changes
 * @param {JSONWriter} writer
 */
export function writeListChanges(changes, writer) {
  writer.beginObject();
  writer.key('sections');
  writeSectionStage(changes, writer);
  writer.key('rows');
  writeRowStage(changes, writer);
  writer.endObject();
}

/**
 * The sections' stage.
 * @param {ListChanges} changes
 * @param {JSONWriter} writer
 */
export function writeSectionStage(changes, writer) {
  writeStage(changes.sections, writer, (index) => writer.number(index));
}

/**
 * The rows' stage, each index `[section, row]`.
 * @param {ListChanges} changes
 * @param {JSONWriter} writer
 */
export function writeRowStage(changes, writer) {
  writeStage(changes.rows, writer, (path) => {
    writer.beginArray();
    writer.number(path.section);
    writer.number(path.row);
    writer.endArray();
  });
}

/**
 * @template P
 * @param {ListStage<P>} stage
 * @param {JSONWriter} writer
 * @param {(position: P) => void} position
 */
function writeStage(stage, writer, position) {
  /**
   * @param {string} key
   * @param {{ id: string, at: P }[]} list
   */
  const changeList = (key, list) => {
    writer.key(key);
    writer.beginArray();
    for (const change of list) {
      writer.beginObject();
      writer.key('id');
      writer.string(change.id);
      writer.key('at');
      position(change.at);
      writer.endObject();
    }
    writer.endArray();
  };
  writer.beginObject();
  changeList('deleted', stage.deleted);
  changeList('inserted', stage.inserted);
  writer.key('moved');
  writer.beginArray();
  for (const move of stage.moved) {
    writer.beginObject();
    writer.key('id');
    writer.string(move.id);
    writer.key('from');
    position(move.from);
    writer.key('to');
    position(move.to);
    writer.endObject();
  }
  writer.endArray();
  changeList('reloaded', stage.reloaded);
  writer.endObject();
}
