// document: writes the state document — the body of every session answer — member for member
// as the server does (a port of FlowTree+stateJSON, PendingAction.write and
// SessionState.document). Member order is the server's, not sorted; a client compares these
// bytes with the server's answers.

import { JSONWriter } from './json.js';
import { screenRef, treeTop } from './tree.js';
import { writeSections } from './screenList.js';
import { writeRowStage, writeSectionStage } from './listChanges.js';

/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').ScreenRef} ScreenRef */
/** @typedef {import('./tree.js').Transition} Transition */

/**
 * The parts of a state document besides the tree.
 * @typedef {object} DocumentParts
 * @property {string} sessionId
 * @property {string} userId
 * @property {number} version
 * @property {FlowTree} tree
 * @property {string | null} transitionJSON the transition that produced `version`, encoded
 * @property {string | null} handledBy
 * @property {string} flagsJSON
 * @property {string} experimentsJSON
 */

/**
 * The state document: `{sessionId, userId, version, root, screens, top, transition,
 * interaction, pendingLink, pendingActions, handledBy, flags, experiments}`.
 * @param {DocumentParts} parts
 * @returns {string}
 */
export function stateDocument(parts) {
  const writer = new JSONWriter();
  writer.beginObject();
  writer.key('sessionId');
  writer.string(parts.sessionId);
  writer.key('userId');
  writer.string(parts.userId);
  writer.key('version');
  writer.number(parts.version);
  writer.key('root');
  writeNode(parts.tree.root, false, writer);
  writer.key('screens');
  writer.beginArray();
  writeScreens(parts.tree.root, writer);
  writer.endArray();
  writer.key('top');
  writeTop(parts.tree, writer);
  writer.key('transition');
  if (parts.transitionJSON !== null) writer.raw(parts.transitionJSON);
  else writer.null();
  writer.key('interaction');
  writeInteraction(parts.tree, writer);
  writer.key('pendingLink');
  const link = parts.tree.pendingLink;
  if (link) {
    writer.beginObject();
    writer.key('uri');
    writer.string(link.uri);
    writer.key('pattern');
    writer.string(link.pattern);
    writer.endObject();
  } else {
    writer.null();
  }
  writer.key('pendingActions');
  writer.beginArray();
  for (const pending of parts.tree.pendingActions) {
    writer.beginObject();
    writer.key('action');
    writer.beginObject();
    writer.key('type');
    writer.string(pending.action.type);
    writer.key('from');
    writer.optionalString(pending.action.from);
    if (pending.action.row !== null) {
      writer.key('row');
      writer.string(pending.action.row);
    }
    writer.key('params');
    writer.object(pending.action.params);
    writer.endObject();
    writer.key('source');
    writer.entryId('e', pending.source);
    writer.key('guard');
    writer.beginObject();
    writer.key('flow');
    writer.string(pending.guardFlow);
    writer.key('flowId');
    writer.entryId('f', pending.guardFlowId);
    writer.endObject();
    writer.endObject();
  }
  writer.endArray();
  writer.key('handledBy');
  writer.optionalString(parts.handledBy);
  writer.key('flags');
  writer.raw(parts.flagsJSON);
  writer.key('experiments');
  writer.raw(parts.experimentsJSON);
  writer.endObject();
  return writer.text();
}

/**
 * Writes a flow as `{"id","flow","kind","style"?,"selected"?,"entries","presented"}`: `style` on
 * presented flows, `selected` on tabbed ones; screens as `{"id","feature","params","sections"?,"handoff"?}`.
 * @param {FlowNode} node
 * @param {boolean} isPresented
 * @param {JSONWriter} writer
 */
export function writeNode(node, isPresented, writer) {
  writer.beginObject();
  writer.key('id');
  writer.entryId('f', node.id);
  writer.key('flow');
  writer.string(node.flow);
  writer.key('kind');
  writer.string(node.kind);
  if (isPresented) {
    writer.key('style');
    writer.optionalString(node.presentationStyle);
  }
  if (node.kind === 'tabbed') {
    writer.key('selected');
    writer.number(node.selected);
  }
  writer.key('entries');
  writer.beginArray();
  for (const entry of node.entries) {
    if (entry.type === 'flow') {
      writeNode(entry, false, writer);
      continue;
    }
    writer.beginObject();
    writer.key('id');
    writer.entryId('e', entry.id);
    writer.key('feature');
    writer.string(entry.feature);
    writer.key('params');
    writer.object(entry.params);
    if (entry.sections) {
      writer.key('sections');
      writeSections(entry.sections, writer);
    }
    if (entry.isHandoff) {
      writer.key('handoff');
      writer.string(entry.feature);
    }
    writer.endObject();
  }
  writer.endArray();
  writer.key('presented');
  if (node.presented) writeNode(node.presented, true, writer);
  else writer.null();
  writer.endObject();
}

/**
 * `screens`' elements for `node` and what it holds and presents, bottom to top.
 * @param {FlowNode} node
 * @param {JSONWriter} writer
 */
function writeScreens(node, writer) {
  /** @param {import('./tree.js').FlowEntry} entry */
  const write = (entry) => {
    if (entry.type === 'screen') writeScreenRef(screenRef(entry, node), writer);
    else writeScreens(entry, writer);
  };
  if (node.kind === 'stacked') {
    for (const entry of node.entries) write(entry);
  } else if (node.selected >= 0 && node.selected < node.entries.length) {
    write(node.entries[node.selected]);
  }
  if (node.presented) writeScreens(node.presented, writer);
}

/**
 * `top`: the screen on top, or null.
 * @param {FlowTree} tree
 * @param {JSONWriter} writer
 */
export function writeTop(tree, writer) {
  const top = treeTop(tree);
  if (top) writeScreenRef(top, writer);
  else writer.null();
}

/**
 * `{"id","feature","params","flow","flowId"}`, and `"handoff": kind` for a hand-off.
 * @param {ScreenRef} screen
 * @param {JSONWriter} writer
 */
export function writeScreenRef(screen, writer) {
  writer.beginObject();
  writer.key('id');
  writer.entryId('e', screen.id);
  writer.key('feature');
  writer.string(screen.feature);
  writer.key('params');
  writer.object(screen.params);
  writer.key('flow');
  writer.string(screen.flow);
  writer.key('flowId');
  writer.entryId('f', screen.flowId);
  if (screen.isHandoff) {
    writer.key('handoff');
    writer.string(screen.feature);
  }
  writer.endObject();
}

/**
 * `{"type","from","to","animated","style","interactive","result"?,"lists"?}`: `lists` when lists
 * changed, `[{"id", "sections", "rows"}]` by screen id ascending.
 * @param {Transition} transition
 * @param {JSONWriter} writer
 */
export function writeTransition(transition, writer) {
  writer.beginObject();
  writer.key('type');
  writer.string(transition.type);
  writer.key('from');
  if (transition.from) writeScreenRef(transition.from, writer);
  else writer.null();
  writer.key('to');
  if (transition.to) writeScreenRef(transition.to, writer);
  else writer.null();
  writer.key('animated');
  writer.bool(transition.animated);
  writer.key('style');
  writer.optionalString(transition.style);
  writer.key('interactive');
  writer.bool(transition.interactive);
  if (transition.result) {
    writer.key('result');
    writer.beginObject();
    writer.key('id');
    writer.entryId('e', transition.result.id);
    writer.key('feature');
    writer.string(transition.result.feature);
    writer.key('into');
    writer.string(transition.result.into);
    writer.endObject();
  }
  if (transition.lists.length > 0) {
    writer.key('lists');
    writer.beginArray();
    for (const list of transition.lists) {
      writer.beginObject();
      writer.key('id');
      writer.entryId('e', list.id);
      writer.key('sections');
      writeSectionStage(list.changes, writer);
      writer.key('rows');
      writeRowStage(list.changes, writer);
      writer.endObject();
    }
    writer.endArray();
  }
  writer.endObject();
}

/**
 * A transition as the document and the action log show it.
 * @param {Transition} transition
 */
export function encodeTransition(transition) {
  const writer = new JSONWriter();
  writeTransition(transition, writer);
  return writer.text();
}

/**
 * `interaction`: null, or `{action, from, progress, handledBy, transition}`.
 * @param {FlowTree} tree
 * @param {JSONWriter} writer
 */
function writeInteraction(tree, writer) {
  const interaction = tree.interaction;
  if (!interaction) {
    writer.null();
    return;
  }
  writer.beginObject();
  writer.key('action');
  writer.string(interaction.action.type);
  writer.key('from');
  writer.optionalString(interaction.action.from);
  writer.key('progress');
  writer.number(interaction.progress);
  writer.key('handledBy');
  writer.string(interaction.handledBy);
  writer.key('transition');
  if (interaction.preview) writeTransition(interaction.preview, writer);
  else writer.null();
  writer.endObject();
}

/**
 * An action as a client posts it: `{type, from?, row?, params?, interactive?}`, leaving out what is
 * absent.
 * @param {FlowAction} action
 * @param {JSONWriter} writer
 */
export function writeAction(action, writer) {
  writer.beginObject();
  writer.key('type');
  writer.string(action.type);
  if (action.from !== null) {
    writer.key('from');
    writer.string(action.from);
  }
  if (action.row !== null && action.row !== undefined) {
    writer.key('row');
    writer.string(action.row);
  }
  if (action.params.size > 0) {
    writer.key('params');
    writer.object(action.params);
  }
  if (action.interactive) {
    writer.key('interactive');
    writer.bool(true);
  }
  writer.endObject();
}
