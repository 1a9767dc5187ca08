// reader-links: reading the root flow's `links` — patterns, placeholder types, conditions and actions
// (a port of DefinitionReader+links).

import { abbreviatedJSON, arrayValue, jsonPointer, objectValue, stringValue, typeName, writeJSON } from './json.js';
import { rootFlowName, reservedActions, scalarCount } from './definition.js';
import { LinkSyntaxError, parseLinkPattern, patternShape, placeholders as patternPlaceholders } from './linkPattern.js';
import { readCondition } from './reader-conditions.js';

/** @typedef {import('./definition.js').DefinitionReader} DefinitionReader */
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowCondition} FlowCondition */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./linkPattern.js').LinkPattern} LinkPattern */
/** @typedef {import('./definition.js').RuleParam} RuleParam */
/** @typedef {import('./definition.js').FlowLink} FlowLink */
/** @typedef {import('./definition.js').Path} Path */

const maxLinks = 256;
const maxLinkActions = 32;
const linkKeys = ['pattern', 'params', 'when', 'actions', 'description'];
const linkParamTypes = ['string', 'integer', 'number', 'boolean'];

/**
 * Reads `links`: only the root flow may have them, and no two patterns may match the same URIs.
 * @param {DefinitionReader} reader
 * @param {JSONValue | undefined} value
 * @param {Path} path
 * @param {string | null} flow
 * @returns {FlowLink[]}
 */
export function readLinks(reader, value, path, flow) {
  if (value === undefined) return [];
  if (flow !== null && flow !== rootFlowName) {
    reader.report(path, `only the root flow ${writeJSON(rootFlowName)} declares links, since a link rebuilds the whole stack; move them to its definition`);
    return [];
  }
  const elements = arrayValue(value);
  if (!elements) {
    reader.report(path, `links must be an array of links such as {"pattern": "/home"}; found ${typeName(value)}`);
    return [];
  }
  if (elements.length > maxLinks) {
    reader.report(path, `there are ${elements.length} links; a flow may declare at most ${maxLinks}`);
    return [];
  }
  /** @type {FlowLink[]} */
  const links = [];
  /** @type {Map<string, { index: number, pattern: string }>} */
  const shapes = new Map();
  elements.forEach((element, index) => {
    const link = readLink(reader, element, [...path, index]);
    if (!link) return;
    const shape = patternShape(link.pattern);
    const other = shapes.get(shape);
    if (other) {
      reader.report([...path, index, 'pattern'], `pattern ${writeJSON(link.pattern.text)} matches the same URIs as ${jsonPointer([...path, other.index, 'pattern'])} (${writeJSON(other.pattern)}), so one of them would never be followed; remove one or make them differ by a literal`);
    } else {
      shapes.set(shape, { index, pattern: link.pattern.text });
    }
    links.push(link);
  });
  return links;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @returns {FlowLink | null}
 */
export function readLink(reader, value, path) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `a link is an object {pattern, params?, when?, actions?, description?}; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  reader.checkKeys(object, linkKeys, path, 'a link');
  /** @type {LinkPattern | null} */
  let pattern = null;
  const raw = object.get('pattern');
  if (raw !== undefined) {
    if (typeof raw === 'string') {
      try {
        pattern = parseLinkPattern(raw);
      } catch (error) {
        if (!(error instanceof LinkSyntaxError)) throw error;
        reader.report([...path, 'pattern'], error.message);
      }
    } else {
      reader.report([...path, 'pattern'], `pattern must be a string such as "/modal/{content}"; found ${typeName(raw)}`);
    }
  } else {
    reader.report(path, 'a link needs a pattern, such as "/modal/{content}"');
  }
  const names = pattern ? patternPlaceholders(pattern) : null;
  /** @type {RuleParam[]} */
  let params = [];
  const rawParams = object.get('params');
  if (rawParams !== undefined) params = readLinkParams(reader, rawParams, [...path, 'params'], names);
  /** @type {FlowCondition | null} */
  let when = null;
  const rawWhen = object.get('when');
  if (rawWhen !== undefined) {
    when = readCondition(reader, rawWhen, [...path, 'when']);
    if (when && names) checkParamSources(reader, when, [...path, 'when'], names);
  }
  /** @type {FlowAction[]} */
  let actions = [];
  const rawActions = object.get('actions');
  if (rawActions !== undefined) actions = readLinkActions(reader, rawActions, [...path, 'actions'], names);
  /** @type {string | null} */
  let summary = null;
  const description = object.get('description');
  if (description !== undefined) {
    summary = stringValue(description) ?? null;
    if (summary === null) reader.report([...path, 'description'], `description must be a string; found ${typeName(description)}`);
  }
  if (!pattern || reader.problems.length !== before) return null;
  return { pattern, params, when, actions, summary };
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 * @returns {RuleParam[]}
 */
export function readLinkParams(reader, value, path, names) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `params must be an object mapping placeholders to types, such as {"tab": "integer"}; found ${typeName(value)}`);
    return [];
  }
  /** @type {RuleParam[]} */
  const params = [];
  for (const [name, member] of object) {
    if (names && !names.includes(name)) {
      const known = names.length === 0 ? 'it has none' : 'it has ' + names.map((placeholder) => `{${placeholder}}`).join(', ');
      reader.report([...path, name], `${writeJSON(name)} is not a placeholder of the pattern; ${known}`);
      continue;
    }
    const type = stringValue(member);
    if (type === undefined || !linkParamTypes.includes(type)) {
      reader.report([...path, name], `a placeholder's type is one of ${linkParamTypes.join(', ')}; found ${abbreviatedJSON(member)}`);
      continue;
    }
    params.push({ name, type: /** @type {RuleParam['type']} */ (type), required: true });
  }
  return params;
}

/**
 * @param {DefinitionReader} reader
 * @param {FlowCondition} condition
 * @param {Path} path
 * @param {string[]} names
 */
export function checkParamSources(reader, condition, path, names) {
  if (condition.op === 'test') {
    if (condition.source === 'param' && !names.includes(condition.key)) {
      reader.report([...path, 'param'], `${writeJSON(condition.key)} is not a placeholder of the link's pattern; a link's param conditions read its captured values`);
    }
  } else if (condition.op === 'not') {
    checkParamSources(reader, condition.condition, [...path, 'not'], names);
  } else {
    condition.conditions.forEach((inner, index) => checkParamSources(reader, inner, [...path, condition.op, index], names));
  }
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 * @returns {FlowAction[]}
 */
export function readLinkActions(reader, value, path, names) {
  const elements = arrayValue(value);
  if (!elements) {
    reader.report(path, `actions must be an array of actions such as {"type": "home.selectTab", "params": {"index": 1}}; found ${typeName(value)}`);
    return [];
  }
  if (elements.length > maxLinkActions) {
    reader.report(path, `a link has ${elements.length} actions; it may have at most ${maxLinkActions}`);
    return [];
  }
  /** @type {FlowAction[]} */
  const actions = [];
  elements.forEach((element, index) => {
    const action = readLinkAction(reader, element, [...path, index], names);
    if (action) actions.push(action);
  });
  return actions;
}

/**
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 * @returns {FlowAction | null}
 */
export function readLinkAction(reader, value, path, names) {
  const object = objectValue(value);
  if (!object) {
    reader.report(path, `a link's action is an object {type, params?}; found ${typeName(value)}`);
    return null;
  }
  const before = reader.problems.length;
  for (const key of object.keys()) {
    if (key === 'type' || key === 'params') continue;
    const why = key === 'from' || key === 'interactive'
      ? "a link's actions apply to the screen on top as the stack is rebuilt, never interactively"
      : 'expected type and params';
    reader.report([...path, key], `unknown key ${abbreviatedJSON(key)} in a link's action; ${why}`);
  }
  /** @type {string | null} */
  let type = null;
  const raw = object.get('type');
  if (raw !== undefined) {
    const text = stringValue(raw);
    if (text !== undefined && text !== '' && scalarCount(text) <= 200) {
      if (reservedActions.includes(text)) {
        reader.report([...path, 'type'], `${text} cannot be one of a link's actions; a link's actions move through the flows`);
      } else {
        type = text;
      }
    } else {
      reader.report([...path, 'type'], `type must be a non-empty action type of at most 200 characters, such as "home.selectTab"; found ${abbreviatedJSON(raw)}`);
    }
  } else {
    reader.report(path, 'a link\'s action needs a type, such as "home.selectTab"');
  }
  /** @type {JSONObject} */
  let params = new Map();
  const rawParams = object.get('params');
  if (rawParams !== undefined) {
    const paramsObject = objectValue(rawParams);
    if (paramsObject) {
      params = paramsObject;
      checkLinkReferences(reader, rawParams, [...path, 'params'], names);
    } else {
      reader.report([...path, 'params'], `params must be an object; found ${typeName(rawParams)}`);
    }
  }
  if (type === null || reader.problems.length !== before) return null;
  return { type, from: null, row: null, params, interactive: false };
}

/**
 * `{"$link": name}` must name a placeholder; `{"$param": …}` belongs to rules.
 * @param {DefinitionReader} reader
 * @param {JSONValue} value
 * @param {Path} path
 * @param {string[] | null} names
 */
export function checkLinkReferences(reader, value, path, names) {
  if (value instanceof Map) {
    if (value.has('$link')) {
      const name = stringValue(value.get('$link'));
      if (value.size !== 1 || name === undefined || name === '') {
        reader.report(path, 'a link reference is written {"$link": "name"} with nothing else in the object');
        return;
      }
      if (names && !names.includes(name)) {
        const known = names.length === 0 ? 'the pattern has none' : 'the pattern has ' + names.map((placeholder) => `{${placeholder}}`).join(', ');
        reader.report([...path, '$link'], `${writeJSON(name)} is not captured by the pattern; ${known}`);
      }
      return;
    }
    if (value.has('$param')) {
      reader.report(path, '{"$param": …} is for rules; in a link\'s actions use {"$link": "name"} to pass a placeholder\'s value');
      return;
    }
    for (const [key, member] of value) checkLinkReferences(reader, member, [...path, key], names);
  } else if (Array.isArray(value)) {
    value.forEach((element, index) => checkLinkReferences(reader, element, [...path, index], names));
  }
}
