// reader-lists: reading lists as definitions write them — a screen's `sections`, the list effects,
// a rule's `row` — where values may be `{"$param": name}` (a port of DefinitionReader+lists).

import { abbreviatedJSON, arrayValue, integerValue, objectValue, stringValue, typeName } from './json.js';
import { readNameOrNames, scalarCount } from './definition.js';
import { ListProblem, maxListRows, idKey, readSections } from './screenList.js';
import { containsReference } from './effects.js';
import { checkParamReferences, readFeature } from './reader-initial.js';

/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./definition.js').Path} Path */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./listEffect.js').ListOperation} ListOperation */

/**
 * A screen target's `sections`: static (checked whole, as the engine will read it), or, in
 * effects, with `{"$param": name}` for the whole list, a section's `rows`, a row, or any id, title
 * or values (checked once params are filled in).
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {boolean} allowParamReferences
 * @param {boolean} [referencesChecked] the caller recorded the param references already (a list
 *   effect checks its whole argument), so an undeclared one is reported once
 * @returns {JSONValue | undefined} the sections as written; undefined when they are wrong
 */
export function readSectionsTemplate(reader, value, path, allowParamReferences, referencesChecked = false) {
  const before = reader.problems.length;
  if (!referencesChecked) checkParamReferences(reader, value, path, allowParamReferences);
  if (reader.problems.length !== before) return undefined;
  if (isReference(value)) return value;
  const elements = arrayValue(value);
  if (!elements) {
    reader.report(path, `sections must be an array of {"id", "title"?, "indexTitle"?, "rows"}, or {"$param": name}; found ${typeName(value)}`);
    return undefined;
  }
  const sectionIds = new Set();
  /** @type {Set<string>} */
  const rowIds = new Set();
  elements.forEach((element, index) => {
    const sectionPath = [...path, index];
    const section = objectValue(element);
    if (!section) {
      reader.report(sectionPath, `a section is {"id", "title"?, "indexTitle"?, "rows"}; found ${typeName(element)}`);
      return;
    }
    reader.checkKeys(section, ['id', 'title', 'indexTitle', 'rows'], sectionPath, 'a section');
    const id = readListId(reader, section.get('id'), [...sectionPath, 'id'], 'a section');
    if (id !== null) {
      if (sectionIds.has(idKey(id))) {
        reader.report([...sectionPath, 'id'], `section id ${abbreviatedJSON(id)} is used twice; section ids are unique within a list`);
      }
      sectionIds.add(idKey(id));
    }
    for (const key of ['title', 'indexTitle']) {
      const title = section.get(key);
      if (title !== undefined && stringValue(title) === undefined && !isReference(title) && title !== null) {
        reader.report([...sectionPath, key], `${key} must be a string; found ${typeName(title)}`);
      }
    }
    const rows = section.get('rows');
    if (rows === undefined) {
      reader.report(sectionPath, 'a section needs "rows": an array of rows, possibly empty');
      return;
    }
    readRowsTemplate(reader, rows, [...sectionPath, 'rows'], rowIds);
  });
  let literalRows = 0;
  for (const element of elements) literalRows += arrayValue(objectValue(element)?.get('rows'))?.length ?? 0;
  if (literalRows > maxListRows) reader.report(path, `a list has at most ${maxListRows} rows, across its sections; found ${literalRows}`);
  // A list written out whole is held to the size caps now, as the engine would hold it.
  if (reader.problems.length === before && !containsReference(value)) {
    try {
      readSections(value);
    } catch (problem) {
      // The checks above report a malformed list themselves.
      if (problem instanceof ListProblem && problem.tooLarge) reader.report([...path, ...problem.pointer], problem.detail);
    }
  }
  return reader.problems.length === before ? value : undefined;
}

/**
 * An array of rows, or a reference; literal ids go into `ids`, which reports one used twice.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {Set<string>} ids
 */
export function readRowsTemplate(reader, value, path, ids) {
  if (isReference(value)) return;
  const elements = arrayValue(value);
  if (!elements) {
    reader.report(path, `rows must be an array of {"id", "kind", "values"?}, or {"$param": name}; found ${typeName(value)}`);
    return;
  }
  if (elements.length > maxListRows) {
    reader.report(path, `a list has at most ${maxListRows} rows; found ${elements.length}`);
    return;
  }
  elements.forEach((element, index) => {
    const id = readRowTemplate(reader, element, [...path, index]);
    if (id === null) return;
    if (ids.has(idKey(id))) {
      reader.report([...path, index, 'id'], `row id ${abbreviatedJSON(id)} is used twice; row ids are unique within a screen's list, across its sections`);
    }
    ids.add(idKey(id));
  });
}

/**
 * A row `{"id", "kind", "values"?}`, or a reference; returns its literal id.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string | null}
 */
export function readRowTemplate(reader, value, path) {
  if (isReference(value)) return null;
  const row = objectValue(value);
  if (!row) {
    reader.report(path, `a row is {"id", "kind", "values"?}; found ${typeName(value)}`);
    return null;
  }
  reader.checkKeys(row, ['id', 'kind', 'values'], path, 'a row');
  const id = readListId(reader, row.get('id'), [...path, 'id'], 'a row');
  const kind = row.get('kind');
  if (kind !== undefined) {
    // Kinds are written out, so the catalog knows which cells an app must have.
    const text = stringValue(kind);
    if (text === undefined || text === '' || scalarCount(text) > 200) {
      reader.report([...path, 'kind'], `kind must be the cell's name, a string of 1 to 200 characters such as "address.row" (written out, not a param, so capabilities can check it); found ${abbreviatedJSON(kind, 40)}`);
    }
  } else {
    reader.report(path, 'a row needs "kind": the cell the app registers for it, such as "address.row"');
  }
  const values = row.get('values');
  if (values !== undefined && objectValue(values) === undefined && !isReference(values) && values !== null) {
    reader.report([...path, 'values'], `values must be an object; found ${typeName(values)}`);
  }
  return id;
}

/**
 * A section or row id: a string of 1 to 200 characters, or a reference (then null).
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @param {string} what
 * @returns {string | null}
 */
export function readListId(reader, value, path, what) {
  const last = String(path[path.length - 1] ?? 'id');
  if (value === undefined) {
    reader.report(path.slice(0, -1), `${what} needs "${last}"`);
    return null;
  }
  if (isReference(value)) return null;
  const text = stringValue(value);
  if (text === undefined || text === '' || scalarCount(text) > 200) {
    reader.report(path, `${last} must be a string of 1 to 200 characters or {"$param": name}; found ${abbreviatedJSON(value, 40)}`);
    return null;
  }
  return text;
}

/**
 * A position: an integer from 0, or a reference.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 */
export function readListIndex(reader, value, path) {
  if (isReference(value)) return;
  const index = integerValue(value);
  if (index === undefined || index < 0) {
    reader.report(path, `at must be an index from 0 (0 is first) or {"$param": name}; found ${abbreviatedJSON(value, 40)}`);
  }
}

/**
 * Whether `value` is `{"$param": name}` with a non-empty name.
 * @param {JSONValue} value
 */
export function isReference(value) {
  const object = objectValue(value);
  if (!object || object.size !== 1) return false;
  const name = stringValue(object.get('$param'));
  return name !== undefined && name !== '';
}

/** What each list effect looks like, for messages. */
const listEffectExamples = /** @type {Record<string, string>} */ ({
  setSections: '{"sections": [{"id": "FR", "rows": []}]}',
  setRows: '{"section": "FR", "rows": {"$param": "rows"}}',
  insertRow: '{"section": "FR", "row": {"id": {"$param": "id"}, "kind": "address.row", "values": {"$param": "address"}}}',
  removeRow: '{"row": {"$param": "row.id"}}',
  moveRow: '{"row": "a1", "section": "DE", "at": 0}',
  updateRow: '{"row": "a1", "values": {"default": true}}',
});

/** The members each list effect takes. */
const listEffectKeys = /** @type {Record<string, string[]>} */ ({
  setSections: ['screen', 'sections'],
  setRows: ['screen', 'section', 'rows'],
  insertRow: ['screen', 'section', 'row', 'at'],
  removeRow: ['screen', 'row'],
  moveRow: ['screen', 'row', 'section', 'at'],
  updateRow: ['screen', 'row', 'values'],
});

/**
 * `setSections`, `setRows`, `insertRow`, `removeRow`, `moveRow`, `updateRow`.
 * @param {DefinitionReader} reader
 * @param {'setSections' | 'setRows' | 'insertRow' | 'removeRow' | 'moveRow' | 'updateRow'} name
 * @param {JSONValue} argument
 * @param {Path} path
 * @returns {FlowEffect | null}
 */
export function readListEffect(reader, name, argument, path) {
  const object = objectValue(argument);
  if (!object) {
    reader.report(path, `${name} takes an object, such as ${listEffectExamples[name] ?? '{}'}; found ${typeName(argument)}`);
    return null;
  }
  const before = reader.problems.length;
  const keys = listEffectKeys[name];
  reader.checkKeys(object, keys, path, name);
  for (const key of keys) {
    if (key === 'screen' || key === 'at' || (name === 'moveRow' && key === 'section') || object.has(key)) continue;
    reader.report(path, `${name} needs "${key}", as in ${listEffectExamples[name] ?? ''}`);
  }
  checkParamReferences(reader, argument, path, true);
  if (reader.problems.length !== before) return null;
  /** @type {string | null} */
  let screen = null;
  const rawScreen = object.get('screen');
  if (rawScreen !== undefined) screen = readFeature(reader, rawScreen, [...path, 'screen']);
  /** @type {ListOperation} */
  let operation;
  switch (name) {
    case 'setSections': {
      const sections = object.get('sections');
      if (sections === undefined || readSectionsTemplate(reader, sections, [...path, 'sections'], true, true) === undefined) return null;
      operation = { name, sections };
      break;
    }
    case 'setRows': {
      const section = object.get('section');
      const rows = object.get('rows');
      if (section === undefined || rows === undefined) return null;
      readListId(reader, section, [...path, 'section'], name);
      readRowsTemplate(reader, rows, [...path, 'rows'], new Set());
      operation = { name, section, rows };
      break;
    }
    case 'insertRow': {
      const section = object.get('section');
      const row = object.get('row');
      if (section === undefined || row === undefined) return null;
      readListId(reader, section, [...path, 'section'], name);
      readRowTemplate(reader, row, [...path, 'row']);
      const at = object.get('at');
      if (at !== undefined) readListIndex(reader, at, [...path, 'at']);
      operation = { name, section, row, at };
      break;
    }
    case 'removeRow': {
      const row = object.get('row');
      if (row === undefined) return null;
      readListId(reader, row, [...path, 'row'], name);
      operation = { name, row };
      break;
    }
    case 'moveRow': {
      const row = object.get('row');
      if (row === undefined) return null;
      readListId(reader, row, [...path, 'row'], name);
      const section = object.get('section');
      if (section !== undefined) readListId(reader, section, [...path, 'section'], name);
      const at = object.get('at');
      if (at !== undefined) readListIndex(reader, at, [...path, 'at']);
      operation = { name, row, section, at };
      break;
    }
    default: {
      const row = object.get('row');
      const values = object.get('values');
      if (row === undefined || values === undefined) return null;
      readListId(reader, row, [...path, 'row'], name);
      if (objectValue(values) === undefined) {
        reader.report([...path, 'values'], `values must be an object of the values to change, or {"$param": name}; found ${typeName(values)}`);
      }
      operation = { name: 'updateRow', row, values };
    }
  }
  if (reader.problems.length !== before) return null;
  return { ...operation, screen };
}

/**
 * A rule's `row`: the kind, or kinds, of the tapped row the rule matches.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {string[] | null}
 */
export function readRowKinds(reader, value, path) {
  const elements = readNameOrNames(reader, value, path, `row must be a row kind or a non-empty array of them, such as "address.row"`);
  if (!elements) return null;
  /** @type {string[]} */
  const kinds = [];
  for (const [element, elementPath] of elements) {
    const kind = stringValue(element);
    if (kind === undefined || kind === '' || scalarCount(kind) > 200) {
      reader.report(elementPath, `row names a row kind, a string of 1 to 200 characters such as "address.row"; found ${abbreviatedJSON(element)}`);
      continue;
    }
    kinds.push(kind);
  }
  return kinds.length === elements.length ? kinds : null;
}
