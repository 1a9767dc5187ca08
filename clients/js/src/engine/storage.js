// storage: the lossless storage encoding of a tree (ids, counter, pending interaction, link and
// guarded actions), as bundles carry it, and its decoding, which checks every field (a port of
// FlowTree+storage and StorageReader).

import { FlowStorageError } from './errors.js';
import { JSONWriter, abbreviatedJSON, arrayValue, boolValue, doubleValue, integerValue, jsonPointer, objectValue, stringValue, typeName } from './json.js';
import { defaultFlowLimits, makeNode, makeScreenEntry, maxId, maxPendingActions, structuralProblems } from './tree.js';
import { ListProblem, readSections, writeSections } from './screenList.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowEntry} FlowEntry */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./tree.js').ScreenRef} ScreenRef */
/** @typedef {import('./tree.js').Transition} Transition */
/** @typedef {import('./tree.js').Interaction} Interaction */
/** @typedef {import('./tree.js').PendingAction} PendingAction */
/** @typedef {(string | number)[]} Path */

/** The version of the storage format. */
export const storageFormat = 1;

/**
 * Writes `tree` in its storage format: everything needed to get the same tree back. Optional
 * parts are written only when there are some, so trees stored before they existed read back
 * unchanged.
 * @param {FlowTree} tree
 * @param {JSONWriter} writer
 */
export function writeTreeStorage(tree, writer) {
  writer.beginObject();
  writer.key('format');
  writer.number(storageFormat);
  writer.key('nextId');
  writer.number(tree.nextId);
  writer.key('root');
  writeNodeStorage(tree.root, writer);
  const interaction = tree.interaction;
  if (interaction) {
    writer.key('interaction');
    writer.beginObject();
    writer.key('action');
    writeActionStorage(interaction.action, writer);
    writer.key('progress');
    writer.number(interaction.progress);
    writer.key('handledBy');
    writer.string(interaction.handledBy);
    if (interaction.preview) {
      writer.key('preview');
      writeTransitionStorage(interaction.preview, writer);
    }
    writer.endObject();
  }
  if (tree.pendingLink) {
    writer.key('pendingLink');
    writer.beginObject();
    writer.key('uri');
    writer.string(tree.pendingLink.uri);
    writer.key('pattern');
    writer.string(tree.pendingLink.pattern);
    writer.endObject();
  }
  if (tree.pendingActions.length > 0) {
    writer.key('pendingActions');
    writer.beginArray();
    for (const pending of tree.pendingActions) {
      writer.beginObject();
      writer.key('action');
      writeActionStorage(pending.action, writer);
      writer.key('source');
      writer.number(pending.source);
      writer.key('guardFlow');
      writer.string(pending.guardFlow);
      writer.key('guardFlowId');
      writer.number(pending.guardFlowId);
      writer.endObject();
    }
    writer.endArray();
  }
  writer.endObject();
}

/**
 * @param {FlowNode} node
 * @param {JSONWriter} writer
 */
function writeNodeStorage(node, writer) {
  writer.beginObject();
  writer.key('id');
  writer.number(node.id);
  writer.key('flow');
  writer.string(node.flow);
  writer.key('kind');
  writer.string(node.kind);
  if (node.kind === 'tabbed') {
    writer.key('selected');
    writer.number(node.selected);
  }
  if (node.presentationStyle !== null) {
    writer.key('style');
    writer.string(node.presentationStyle);
  }
  writer.key('entries');
  writer.beginArray();
  for (const entry of node.entries) {
    if (entry.type === 'flow') {
      writeNodeStorage(entry, writer);
      continue;
    }
    writer.beginObject();
    writer.key('id');
    writer.number(entry.id);
    writer.key('feature');
    writer.string(entry.feature);
    if (entry.params.size > 0) {
      writer.key('params');
      writer.object(entry.params);
    }
    if (entry.isHandoff) {
      writer.key('handoff');
      writer.bool(true);
    }
    if (entry.sections) {
      writer.key('sections');
      writeSections(entry.sections, writer);
    }
    writer.endObject();
  }
  writer.endArray();
  if (node.presented) {
    writer.key('presented');
    writeNodeStorage(node.presented, writer);
  }
  writer.endObject();
}

/**
 * @param {FlowAction} action
 * @param {JSONWriter} writer
 */
function writeActionStorage(action, writer) {
  writer.beginObject();
  writer.key('type');
  writer.string(action.type);
  if (action.from !== null) {
    writer.key('from');
    writer.string(action.from);
  }
  if (action.row !== null) {
    writer.key('row');
    writer.string(action.row);
  }
  if (action.params.size > 0) {
    writer.key('params');
    writer.object(action.params);
  }
  writer.key('interactive');
  writer.bool(action.interactive);
  writer.endObject();
}

/**
 * @param {Transition} transition
 * @param {JSONWriter} writer
 */
function writeTransitionStorage(transition, writer) {
  writer.beginObject();
  writer.key('type');
  writer.string(transition.type);
  if (transition.from) {
    writer.key('from');
    writeScreenRefStorage(transition.from, writer);
  }
  if (transition.to) {
    writer.key('to');
    writeScreenRefStorage(transition.to, writer);
  }
  writer.key('animated');
  writer.bool(transition.animated);
  if (transition.style !== null) {
    writer.key('style');
    writer.string(transition.style);
  }
  writer.key('interactive');
  writer.bool(transition.interactive);
  if (transition.result) {
    writer.key('result');
    writer.beginObject();
    writer.key('id');
    writer.number(transition.result.id);
    writer.key('feature');
    writer.string(transition.result.feature);
    writer.key('into');
    writer.string(transition.result.into);
    writer.endObject();
  }
  writer.endObject();
}

/**
 * @param {ScreenRef} screen
 * @param {JSONWriter} writer
 */
function writeScreenRefStorage(screen, writer) {
  writer.beginObject();
  writer.key('id');
  writer.number(screen.id);
  writer.key('feature');
  writer.string(screen.feature);
  if (screen.params.size > 0) {
    writer.key('params');
    writer.object(screen.params);
  }
  writer.key('flow');
  writer.string(screen.flow);
  writer.key('flowId');
  writer.number(screen.flowId);
  if (screen.isHandoff) {
    writer.key('handoff');
    writer.bool(true);
  }
  writer.endObject();
}

/**
 * Reads a tree from a parsed storage document, checking every field and the tree's invariants.
 * Storage may be corrupt or hand-edited: a bad document fails with where and what, never later.
 * @param {JSONValue} value
 * @param {FlowLimits} [limits]
 * @returns {FlowTree}
 * @throws {FlowStorageError}
 */
export function readTreeStorage(value, limits = defaultFlowLimits) {
  const reader = new StorageReader(limits);
  const tree = reader.readTree(value);
  const problems = structuralProblems(tree, limits);
  if (problems.length > 0) throw new FlowStorageError('', problems[0]);
  return tree;
}

/** Decodes a stored tree field by field. */
class StorageReader {
  /** @param {FlowLimits} limits */
  constructor(limits) {
    this.limits = limits;
  }

  /**
   * @param {Path} path
   * @param {string} message
   */
  fail(path, message) {
    return new FlowStorageError(jsonPointer(path), message);
  }

  /**
   * @param {JSONValue} value
   * @returns {FlowTree}
   */
  readTree(value) {
    /** @type {Path} */
    const path = [];
    const object = this.object(value, path, ['format', 'nextId', 'root', 'interaction', 'pendingLink', 'pendingActions']);
    const format = this.integer(object.get('format'), ['format']);
    if (format !== storageFormat) throw this.fail(['format'], `format ${format} is not supported; expected ${storageFormat}`);
    const nextId = this.integer(object.get('nextId'), ['nextId']);
    if (!(nextId >= 1 && nextId <= maxId)) throw this.fail(['nextId'], `nextId must be from 1 to ${maxId}; found ${nextId}`);
    const root = this.node(object.get('root'), ['root'], 1);
    /** @type {Interaction | null} */
    let interaction = null;
    const rawInteraction = object.get('interaction');
    if (rawInteraction !== undefined) interaction = this.interaction(rawInteraction, ['interaction']);
    /** @type {import('./tree.js').PendingLink | null} */
    let pendingLink = null;
    const rawLink = object.get('pendingLink');
    if (rawLink !== undefined) {
      const link = this.object(rawLink, ['pendingLink'], ['uri', 'pattern']);
      pendingLink = { uri: this.string(link.get('uri'), ['pendingLink', 'uri']), pattern: this.string(link.get('pattern'), ['pendingLink', 'pattern']) };
    }
    /** @type {PendingAction[]} */
    const pendingActions = [];
    const rawPending = object.get('pendingActions');
    if (rawPending !== undefined) {
      const elements = arrayValue(rawPending);
      if (!elements) throw this.fail(['pendingActions'], `expected an array; found ${typeName(rawPending)}`);
      if (elements.length > maxPendingActions) throw this.fail(['pendingActions'], `more than ${maxPendingActions} pending actions`);
      elements.forEach((element, index) => pendingActions.push(this.pendingAction(element, ['pendingActions', index])));
    }
    return { root, nextId, interaction, pendingLink, pendingActions };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {PendingAction}
   */
  pendingAction(value, path) {
    const object = this.object(value, path, ['action', 'source', 'guardFlow', 'guardFlowId']);
    return {
      action: this.action(object.get('action'), [...path, 'action']),
      source: this.id(object.get('source'), [...path, 'source']),
      guardFlow: this.string(object.get('guardFlow'), [...path, 'guardFlow']),
      guardFlowId: this.id(object.get('guardFlowId'), [...path, 'guardFlowId']),
    };
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @param {number} depth
   * @returns {FlowNode}
   */
  node(value, path, depth) {
    if (depth > this.limits.maxDepth) throw this.fail(path, `flows nest deeper than ${this.limits.maxDepth} levels`);
    const object = this.object(value, path, ['id', 'flow', 'kind', 'selected', 'style', 'entries', 'presented']);
    const id = this.id(object.get('id'), [...path, 'id']);
    const flow = this.string(object.get('flow'), [...path, 'flow']);
    const kind = this.string(object.get('kind'), [...path, 'kind']);
    if (kind !== 'stacked' && kind !== 'tabbed') {
      throw this.fail([...path, 'kind'], `kind must be "stacked" or "tabbed"; found ${abbreviatedJSON(kind)}`);
    }
    let selected = 0;
    const rawSelected = object.get('selected');
    if (rawSelected !== undefined) {
      if (kind !== 'tabbed') throw this.fail([...path, 'selected'], 'selected is only stored for tabbed flows');
      selected = this.integer(rawSelected, [...path, 'selected']);
    }
    /** @type {string | null} */
    let style = null;
    const rawStyle = object.get('style');
    if (rawStyle !== undefined) style = this.string(rawStyle, [...path, 'style']);
    const rawEntries = object.get('entries');
    if (rawEntries === undefined) throw this.fail([...path, 'entries'], 'entries is required');
    const elements = arrayValue(rawEntries);
    if (!elements) throw this.fail([...path, 'entries'], `entries must be an array; found ${typeName(rawEntries)}`);
    if (elements.length > this.limits.maxEntries) throw this.fail([...path, 'entries'], `more than ${this.limits.maxEntries} entries`);
    /** @type {FlowEntry[]} */
    const entries = elements.map((element, index) => {
      const entryPath = [...path, 'entries', index];
      if (element instanceof Map && element.has('flow')) return this.node(element, entryPath, depth + 1);
      return this.screen(element, entryPath);
    });
    /** @type {FlowNode | null} */
    let presented = null;
    const rawPresented = object.get('presented');
    if (rawPresented !== undefined) presented = this.node(rawPresented, [...path, 'presented'], depth + 1);
    return makeNode(id, flow, kind, entries, selected, style, presented);
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   */
  screen(value, path) {
    const object = this.object(value, path, ['id', 'feature', 'params', 'handoff', 'sections']);
    const id = this.id(object.get('id'), [...path, 'id']);
    const feature = this.string(object.get('feature'), [...path, 'feature']);
    const params = this.params(object.get('params'), [...path, 'params']);
    /** @type {import('./screenList.js').ListSection[] | null} */
    let sections = null;
    const rawSections = object.get('sections');
    if (rawSections !== undefined) {
      try {
        sections = readSections(rawSections);
      } catch (problem) {
        if (!(problem instanceof ListProblem)) throw problem;
        throw this.fail([...path, 'sections', ...problem.pointer], problem.detail);
      }
    }
    return makeScreenEntry(id, feature, params, this.handoff(object.get('handoff'), [...path, 'handoff']), sections);
  }

  /**
   * A screen's `handoff` mark: absent or `true`.
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  handoff(value, path) {
    if (value === undefined) return false;
    if (value !== true) throw this.fail(path, `handoff is stored as true or not at all; found ${abbreviatedJSON(value)}`);
    return true;
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {Interaction}
   */
  interaction(value, path) {
    const object = this.object(value, path, ['action', 'progress', 'handledBy', 'preview']);
    const action = this.action(object.get('action'), [...path, 'action']);
    const progress = doubleValue(object.get('progress'));
    if (progress === undefined) throw this.fail([...path, 'progress'], 'progress must be a number');
    const handledBy = this.string(object.get('handledBy'), [...path, 'handledBy']);
    const rawPreview = object.get('preview');
    const preview = rawPreview === undefined ? null : this.transition(rawPreview, [...path, 'preview']);
    return { action, progress, handledBy, preview };
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @returns {FlowAction}
   */
  action(value, path) {
    const object = this.object(value, path, ['type', 'from', 'row', 'params', 'interactive']);
    const type = this.string(object.get('type'), [...path, 'type']);
    const rawFrom = object.get('from');
    const from = rawFrom === undefined ? null : this.string(rawFrom, [...path, 'from']);
    const rawRow = object.get('row');
    const row = rawRow === undefined ? null : this.string(rawRow, [...path, 'row']);
    const params = this.params(object.get('params'), [...path, 'params']);
    const interactive = boolValue(object.get('interactive'));
    if (interactive === undefined) throw this.fail([...path, 'interactive'], 'interactive must be a boolean');
    return { type, from, row, params, interactive };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {Transition}
   */
  transition(value, path) {
    const object = this.object(value, path, ['type', 'from', 'to', 'animated', 'style', 'interactive', 'result']);
    const type = this.string(object.get('type'), [...path, 'type']);
    if (!['push', 'pop', 'popTo', 'setRoot', 'replaceRoot', 'present', 'dismiss', 'selectTab', 'list'].includes(type)) {
      throw this.fail([...path, 'type'], `unknown transition type ${abbreviatedJSON(type)}`);
    }
    const rawFrom = object.get('from');
    const rawTo = object.get('to');
    const from = rawFrom === undefined ? null : this.screenRef(rawFrom, [...path, 'from']);
    const to = rawTo === undefined ? null : this.screenRef(rawTo, [...path, 'to']);
    const animated = boolValue(object.get('animated'));
    if (animated === undefined) throw this.fail([...path, 'animated'], 'animated must be a boolean');
    const rawStyle = object.get('style');
    const style = rawStyle === undefined ? null : this.string(rawStyle, [...path, 'style']);
    const interactive = boolValue(object.get('interactive'));
    if (interactive === undefined) throw this.fail([...path, 'interactive'], 'interactive must be a boolean');
    /** @type {import('./tree.js').ResultReceipt | null} */
    let result = null;
    const rawResult = object.get('result');
    if (rawResult !== undefined) {
      const fields = this.object(rawResult, [...path, 'result'], ['id', 'feature', 'into']);
      result = {
        id: this.id(fields.get('id'), [...path, 'result', 'id']),
        feature: this.string(fields.get('feature'), [...path, 'result', 'feature']),
        into: this.string(fields.get('into'), [...path, 'result', 'into']),
      };
    }
    return { type: /** @type {Transition['type']} */ (type), from, to, animated, style, interactive, result, lists: [] };
  }

  /**
   * @param {JSONValue} value
   * @param {Path} path
   * @returns {ScreenRef}
   */
  screenRef(value, path) {
    const object = this.object(value, path, ['id', 'feature', 'params', 'flow', 'flowId', 'handoff']);
    return {
      id: this.id(object.get('id'), [...path, 'id']),
      feature: this.string(object.get('feature'), [...path, 'feature']),
      params: this.params(object.get('params'), [...path, 'params']),
      flow: this.string(object.get('flow'), [...path, 'flow']),
      flowId: this.id(object.get('flowId'), [...path, 'flowId']),
      isHandoff: this.handoff(object.get('handoff'), [...path, 'handoff']),
    };
  }

  // MARK: fields

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @param {string[]} allowed
   * @returns {JSONObject}
   */
  object(value, path, allowed) {
    if (value === undefined) throw this.fail(path, 'a required object is missing');
    const object = objectValue(value);
    if (!object) throw this.fail(path, `expected an object; found ${typeName(value)}`);
    for (const key of object.keys()) {
      if (!allowed.includes(key)) throw this.fail([...path, key], `unknown key; expected one of ${allowed.join(', ')}`);
    }
    return object;
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  integer(value, path) {
    if (value === undefined) throw this.fail(path, 'a required integer is missing');
    const number = integerValue(value);
    if (number === undefined) throw this.fail(path, `expected an integer; found ${typeName(value)}`);
    return number;
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  id(value, path) {
    const number = this.integer(value, path);
    if (!(number >= 1 && number < maxId)) throw this.fail(path, `ids are from 1 to ${maxId - 1}; found ${number}`);
    return number;
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   */
  string(value, path) {
    if (value === undefined) throw this.fail(path, 'a required string is missing');
    const text = stringValue(value);
    if (text === undefined) throw this.fail(path, `expected a string; found ${typeName(value)}`);
    return text;
  }

  /**
   * @param {JSONValue | undefined} value
   * @param {Path} path
   * @returns {JSONObject}
   */
  params(value, path) {
    if (value === undefined) return new Map();
    const object = objectValue(value);
    if (!object) throw this.fail(path, `params must be an object; found ${typeName(value)}`);
    return object;
  }
}
