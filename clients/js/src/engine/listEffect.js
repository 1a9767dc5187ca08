// listEffect: an effect on a screen's list (set sections or rows, insert, remove, move, update a
// row), as definitions write it, and how it changes the list once its params are filled in (a
// port of ListEffect and ResolvedListOperation).

import { abbreviatedJSON, getMember, sameText, setMembers } from './json.js';
import { idKey, maxListRows, placeOfRow } from './screenList.js';

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
export const listEffectNames = ['setSections', 'setRows', 'insertRow', 'removeRow', 'moveRow', 'updateRow'];

/**
 * The row kinds written literally in the effect (rows given whole by a param are the client's,
 * and cannot be known in advance).
 * @param {ListOperation} effect
 * @returns {string[]}
 */
export function literalKinds(effect) {
  /** @param {JSONValue | undefined} value */
  const kindsOfRows = (value) => (Array.isArray(value) ? value.flatMap((row) => kindOf(row)) : []);
  /** @param {JSONValue | undefined} row */
  const kindOf = (row) => {
    const kind = row instanceof Map ? getMember(row, 'kind') : undefined;
    return typeof kind === 'string' ? [kind] : [];
  };
  switch (effect.name) {
    case 'setSections':
      return Array.isArray(effect.sections)
        ? effect.sections.flatMap((section) => kindsOfRows(section instanceof Map ? getMember(section, 'rows') : undefined))
        : [];
    case 'setRows':
      return kindsOfRows(effect.rows);
    case 'insertRow':
      return kindOf(effect.row);
    default:
      return [];
  }
}

/**
 * Whether an effect is a list effect.
 * @param {{ name: string }} effect
 * @returns {boolean}
 */
export function isListEffect(effect) {
  return listEffectNames.includes(effect.name);
}

/**
 * Applies a resolved operation to `sections`, which is left as it was: the list after it, or the
 * reason it cannot apply, for a refusal.
 * @param {ResolvedListOperation} operation
 * @param {ListSection[]} sections
 * @returns {{ sections: ListSection[] } | { reason: string }}
 */
export function applyListOperation(operation, sections) {
  /** @param {string} id */
  const sectionIndex = (id) => sections.findIndex((section) => sameText(section.id, id));
  /** @param {string} id */
  const noSection = (id) => ({
    reason: `the list has no section ${abbreviatedJSON(id, 40)}; its sections are ${sections.slice(0, 8).map((section) => section.id).join(', ')}`,
  });
  /** @param {string} id */
  const noRow = (id) => ({ reason: `the list has no row ${abbreviatedJSON(id, 40)}` });
  const rowCount = sections.reduce((sum, section) => sum + section.rows.length, 0);
  /**
   * The list with section `index`'s rows replaced.
   * @param {ListSection[]} list
   * @param {number} index
   * @param {ListRow[]} rows
   */
  const withRows = (list, index, rows) => list.map((section, at) => (at === index ? { ...section, rows } : section));
  switch (operation.name) {
    case 'setSections':
      return { sections: operation.sections };
    case 'setRows': {
      const index = sectionIndex(operation.section);
      if (index < 0) return noSection(operation.section);
      const others = new Set(sections.flatMap((section, at) => (at === index ? [] : section.rows.map((row) => idKey(row.id)))));
      const clash = operation.rows.find((row) => others.has(idKey(row.id)));
      if (clash) {
        return { reason: `row ${abbreviatedJSON(clash.id, 40)} is already in another section; row ids are unique within a list` };
      }
      if (rowCount - sections[index].rows.length + operation.rows.length > maxListRows) {
        return { reason: `the list would hold more than ${maxListRows} rows` };
      }
      return { sections: withRows(sections, index, operation.rows) };
    }
    case 'insertRow': {
      const index = sectionIndex(operation.section);
      if (index < 0) return noSection(operation.section);
      if (placeOfRow(operation.row.id, sections) !== null) {
        return {
          reason: `row ${abbreviatedJSON(operation.row.id, 40)} is already in the list; row ids are unique within a list (updateRow changes one)`,
        };
      }
      if (rowCount >= maxListRows) return { reason: `the list already holds ${maxListRows} rows` };
      const rows = sections[index].rows;
      const position = operation.at ?? rows.length;
      if (!(position >= 0 && position <= rows.length)) {
        return {
          reason: `at ${position} is out of range: section ${abbreviatedJSON(operation.section, 40)} has ${rows.length} rows (0...${rows.length})`,
        };
      }
      return { sections: withRows(sections, index, [...rows.slice(0, position), operation.row, ...rows.slice(position)]) };
    }
    case 'removeRow': {
      const place = placeOfRow(operation.row, sections);
      if (!place) return noRow(operation.row);
      return { sections: withRows(sections, place.section, sections[place.section].rows.filter((_, at) => at !== place.row)) };
    }
    case 'moveRow': {
      const place = placeOfRow(operation.row, sections);
      if (!place) return noRow(operation.row);
      let destination = place.section;
      if (operation.section !== null) {
        destination = sectionIndex(operation.section);
        if (destination < 0) return noSection(operation.section);
      }
      const row = sections[place.section].rows[place.row];
      const taken = withRows(sections, place.section, sections[place.section].rows.filter((_, at) => at !== place.row));
      const rows = taken[destination].rows;
      const position = operation.at ?? rows.length;
      if (!(position >= 0 && position <= rows.length)) {
        return {
          reason: `at ${position} is out of range: once the row is taken out, section ${abbreviatedJSON(taken[destination].id, 40)} has ${rows.length} rows`,
        };
      }
      return { sections: withRows(taken, destination, [...rows.slice(0, position), row, ...rows.slice(position)]) };
    }
    case 'updateRow': {
      const place = placeOfRow(operation.row, sections);
      if (!place) return noRow(operation.row);
      const row = sections[place.section].rows[place.row];
      const values = new Map(row.values);
      setMembers(values, operation.values);
      const rows = sections[place.section].rows.slice();
      rows[place.row] = { ...row, values };
      return { sections: withRows(sections, place.section, rows) };
    }
    default:
      return { reason: 'unknown list operation' };
  }
}
