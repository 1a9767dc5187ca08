// screenList: a screen's list as data — sections of rows, each row a stable id, a cell kind and its
// values — read and written in the one shape definitions, params, the state document and storage
// share (a port of ScreenList, ListSection, ListRow and ListProblem).

import { JSONWriter, abbreviatedJSON, arrayValue, idKey, jsonEquals, utf8Length, jsonPointer, objectValue, sameText, stringValue, typeName } from './json.js';

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
export const maxListRows = 10_000;
/** Ids, kinds and titles are strings of 1 to 200 characters (titles may be empty). */
const maxText = 200;
/** At most this many bytes in one row as written (64 KiB, the longest string a request may hold). */
export const maxRowBytes = 64 << 10;
/** A row's values nest at most this many levels (the values object itself is the first). */
export const maxValuesDepth = 16;
/** At most this many bytes in a screen's whole list, its rows as written (1 MiB, the server's body limit). */
export const maxListBytes = 1 << 20;

// Row and section ids are looked up by their canonical key, as object keys are.
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
  constructor(pointer, message, tooLarge = false) {
    super(`${jsonPointer(pointer) || '/'}: ${message}`);
    this.name = 'ListProblem';
    this.pointer = pointer;
    this.detail = message;
    /** Well formed but over a size cap: an action making it so is refused as `list-too-large`. */
    this.tooLarge = tooLarge;
  }
}

/**
 * Reads `[{"id", "title"?, "indexTitle"?, "rows": [{"id", "kind", "values"?}]}]`: unknown keys are
 * refused, section ids are unique, row ids unique across the whole list.
 * @param {JSONValue} value
 * @returns {ListSection[]}
 * @throws {ListProblem}
 */
export function readSections(value) {
  const elements = arrayValue(value);
  if (!elements) {
    throw new ListProblem([], `sections must be an array of {"id", "title"?, "indexTitle"?, "rows"}; found ${typeName(value)}`);
  }
  if (elements.length > maxListRows) {
    throw new ListProblem([], `a list has at most ${maxListRows} sections; found ${elements.length}`);
  }
  /** @type {ListSection[]} */
  const sections = [];
  const sectionIds = new Set();
  const rowIds = new Set();
  elements.forEach((element, index) => {
    const section = readSection(element, [index]);
    const key = idKey(section.id);
    if (sectionIds.has(key)) {
      throw new ListProblem([index, 'id'], `section id ${abbreviatedJSON(section.id)} is used twice; section ids are unique within a list`);
    }
    sectionIds.add(key);
    section.rows.forEach((row, rowIndex) => {
      const rowKey = idKey(row.id);
      if (rowIds.has(rowKey)) {
        throw new ListProblem([index, 'rows', rowIndex, 'id'],
          `row id ${abbreviatedJSON(row.id)} is used twice; row ids are unique within a screen's list, across its sections`);
      }
      rowIds.add(rowKey);
    });
    if (rowIds.size > maxListRows) throw new ListProblem([index, 'rows'], `a list has at most ${maxListRows} rows`);
    sections.push(section);
  });
  const problem = sizeProblem(sections);
  if (problem) throw problem;
  return sections;
}

/**
 * The first size cap `sections` is over, in order (as Swift's `ScreenList.sizeProblem`): a row
 * whose values nest more than `maxValuesDepth` levels or that takes more than `maxRowBytes`, then
 * the list once its rows so far take more than `maxListBytes`.
 * @param {ListSection[]} sections
 * @returns {ListProblem | null}
 */
export function sizeProblem(sections) {
  let total = 0;
  for (let sectionIndex = 0; sectionIndex < sections.length; sectionIndex += 1) {
    const rows = sections[sectionIndex].rows;
    for (let rowIndex = 0; rowIndex < rows.length; rowIndex += 1) {
      const row = rows[rowIndex];
      const path = [sectionIndex, 'rows', rowIndex];
      const name = abbreviatedJSON(row.id, 40);
      if (nestsDeeper(row.values, maxValuesDepth)) {
        return new ListProblem([...path, 'values'],
          `the values of row ${name} nest more than ${maxValuesDepth} levels deep; a row's values nest at most ${maxValuesDepth}`, true);
      }
      const writer = new JSONWriter();
      writeRow(row, writer);
      const bytes = utf8Length(writer.text());
      if (bytes > maxRowBytes) return new ListProblem(path, `row ${name} takes ${bytes} bytes as JSON; a row takes at most ${maxRowBytes}`, true);
      total += bytes;
      if (total > maxListBytes) {
        return new ListProblem([], `the list's rows take more than ${maxListBytes} bytes as JSON; a list takes at most ${maxListBytes}`, true);
      }
    }
  }
  return null;
}

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep (a scalar is none).
 * @param {JSONValue} value
 * @param {number} limit
 * @returns {boolean}
 */
function nestsDeeper(value, limit) {
  if (value instanceof Map) value = [...value.values()];
  else if (!Array.isArray(value)) return false;
  return limit === 0 || value.some((member) => nestsDeeper(member, limit - 1));
}

/**
 * @param {JSONValue} value
 * @param {(string | number)[]} path
 * @returns {ListSection}
 */
function readSection(value, path) {
  const object = objectValue(value);
  if (!object) {
    throw new ListProblem(path, `a section is {"id", "title"?, "indexTitle"?, "rows"}; found ${typeName(value)}`);
  }
  checkKeys(object, ['id', 'title', 'indexTitle', 'rows'], path, 'a section');
  const id = readListId(object.get('id'), [...path, 'id'], 'a section');
  /** @type {string | null} */
  let title = null;
  const rawTitle = object.get('title');
  if (rawTitle !== undefined && rawTitle !== null) title = readTitle(rawTitle, [...path, 'title']);
  /** @type {string | null} */
  let indexTitle = null;
  const rawIndexTitle = object.get('indexTitle');
  if (rawIndexTitle !== undefined && rawIndexTitle !== null) indexTitle = readTitle(rawIndexTitle, [...path, 'indexTitle']);
  const rawRows = object.get('rows');
  if (rawRows === undefined) throw new ListProblem(path, 'a section needs "rows": an array of rows, possibly empty');
  return { id, title, indexTitle, rows: readRows(rawRows, [...path, 'rows']) };
}

/**
 * Reads an array of rows (ids unique among them).
 * @param {JSONValue} value
 * @param {(string | number)[]} [path]
 * @returns {ListRow[]}
 * @throws {ListProblem}
 */
export function readRows(value, path = []) {
  const elements = arrayValue(value);
  if (!elements) throw new ListProblem(path, `rows must be an array of {"id", "kind", "values"?}; found ${typeName(value)}`);
  if (elements.length > maxListRows) throw new ListProblem(path, `a list has at most ${maxListRows} rows; found ${elements.length}`);
  /** @type {ListRow[]} */
  const rows = [];
  const ids = new Set();
  elements.forEach((element, index) => {
    const row = readRow(element, [...path, index]);
    const key = idKey(row.id);
    if (ids.has(key)) {
      throw new ListProblem([...path, index, 'id'], `row id ${abbreviatedJSON(row.id)} is used twice; row ids are unique within a screen's list`);
    }
    ids.add(key);
    rows.push(row);
  });
  return rows;
}

/**
 * Reads one row `{"id", "kind", "values"?}` (`values` defaults to `{}`).
 * @param {JSONValue} value
 * @param {(string | number)[]} [path]
 * @returns {ListRow}
 * @throws {ListProblem}
 */
export function readRow(value, path = []) {
  const object = objectValue(value);
  if (!object) throw new ListProblem(path, `a row is {"id", "kind", "values"?}; found ${typeName(value)}`);
  checkKeys(object, ['id', 'kind', 'values'], path, 'a row');
  const id = readListId(object.get('id'), [...path, 'id'], 'a row');
  const kind = readListId(object.get('kind'), [...path, 'kind'], 'a row\'s kind (the cell the app registers, such as "address.row")');
  /** @type {JSONObject} */
  let values = new Map();
  const rawValues = object.get('values');
  if (rawValues !== undefined && rawValues !== null) {
    const fields = objectValue(rawValues);
    if (!fields) throw new ListProblem([...path, 'values'], `values must be an object; found ${typeName(rawValues)}`);
    values = fields;
  }
  return { id, kind, values };
}

/**
 * A row or section id (or a kind): a string of 1 to 200 characters.
 * @param {JSONValue | undefined} value
 * @param {(string | number)[]} path
 * @param {string} what
 * @returns {string}
 * @throws {ListProblem}
 */
export function readListId(value, path, what) {
  const last = String(path[path.length - 1] ?? 'id');
  if (value === undefined) throw new ListProblem(path, `${what} needs ${last}`);
  const text = stringValue(value);
  if (text === undefined || text === '' || Array.from(text).length > maxText) {
    throw new ListProblem(path, `${last} must be a string of 1 to ${maxText} characters; found ${abbreviatedJSON(value, 40)}`);
  }
  return text;
}

/**
 * @param {JSONValue} value
 * @param {(string | number)[]} path
 */
function readTitle(value, path) {
  const text = stringValue(value);
  if (text === undefined || Array.from(text).length > maxText) {
    const last = String(path[path.length - 1] ?? 'title');
    throw new ListProblem(path, `${last} must be a string of at most ${maxText} characters; found ${abbreviatedJSON(value, 40)}`);
  }
  return text;
}

/**
 * The first unknown key fails the read, as the Swift reader's does.
 * @param {JSONObject} object
 * @param {string[]} allowed
 * @param {(string | number)[]} path
 * @param {string} what
 */
function checkKeys(object, allowed, path, what) {
  for (const key of object.keys()) {
    if (!allowed.includes(key)) {
      throw new ListProblem([...path, key], `unknown key ${abbreviatedJSON(key)} in ${what}; expected ${allowed.join(', ')}`);
    }
  }
}

/**
 * Writes `[{"id","title"?,"indexTitle"?,"rows":[{"id","kind","values"}]}]`, members in this order,
 * `title` and `indexTitle` only when set: the state document and storage alike.
 * @param {ListSection[]} sections
 * @param {JSONWriter} writer
 */
export function writeSections(sections, writer) {
  writer.beginArray();
  for (const section of sections) {
    writer.beginObject();
    writer.key('id');
    writer.string(section.id);
    if (section.title !== null) {
      writer.key('title');
      writer.string(section.title);
    }
    if (section.indexTitle !== null) {
      writer.key('indexTitle');
      writer.string(section.indexTitle);
    }
    writer.key('rows');
    writer.beginArray();
    for (const row of section.rows) writeRow(row, writer);
    writer.endArray();
    writer.endObject();
  }
  writer.endArray();
}

/**
 * Writes `{"id","kind","values"}`.
 * @param {ListRow} row
 * @param {JSONWriter} writer
 */
function writeRow(row, writer) {
  writer.beginObject();
  writer.key('id');
  writer.string(row.id);
  writer.key('kind');
  writer.string(row.kind);
  writer.key('values');
  writer.object(row.values);
  writer.endObject();
}

/**
 * Where the row `id` is: its section's index and its index in that section.
 * @param {string} id
 * @param {ListSection[]} sections
 * @returns {RowPath | null}
 */
export function placeOfRow(id, sections) {
  for (let section = 0; section < sections.length; section += 1) {
    const row = sections[section].rows.findIndex((candidate) => sameText(candidate.id, id));
    if (row >= 0) return { section, row };
  }
  return null;
}

/**
 * Whether two lists are equal as Swift's `[ListSection] ==` says: the same sections and rows in
 * the same order, ids, titles and kinds by canonical equivalence, values as JSON.
 * @param {ListSection[]} lhs
 * @param {ListSection[]} rhs
 */
export function sameSections(lhs, rhs) {
  if (lhs.length !== rhs.length) return false;
  for (let index = 0; index < lhs.length; index += 1) {
    const left = lhs[index];
    const right = rhs[index];
    if (!sameText(left.id, right.id) || !sameOptionalText(left.title, right.title)
      || !sameOptionalText(left.indexTitle, right.indexTitle) || !sameRows(left.rows, right.rows)) return false;
  }
  return true;
}

/**
 * Whether two sections' rows are equal as Swift's `[ListRow] ==` says; an array shared by both
 * sides (a section no effect touched) compares at once.
 * @param {ListRow[]} lhs
 * @param {ListRow[]} rhs
 */
export function sameRows(lhs, rhs) {
  if (lhs === rhs) return true;
  if (lhs.length !== rhs.length) return false;
  for (let index = 0; index < lhs.length; index += 1) {
    const a = lhs[index];
    const b = rhs[index];
    if (a !== b && (!sameText(a.id, b.id) || !sameText(a.kind, b.kind) || !jsonEquals(a.values, b.values))) return false;
  }
  return true;
}

/**
 * @param {string | null} lhs
 * @param {string | null} rhs
 */
export function sameOptionalText(lhs, rhs) {
  if (lhs === null || rhs === null) return lhs === rhs;
  return sameText(lhs, rhs);
}
