/**
 * Writes `tree` in its storage format: everything needed to get the same tree back. Optional
 * parts are written only when there are some, so trees stored before they existed read back
 * unchanged.
 * @param {FlowTree} tree
 * @param {JSONWriter} writer
 */
export function writeTreeStorage(tree: FlowTree, writer: JSONWriter): void;
/**
 * Reads a tree from a parsed storage document, checking every field and the tree's invariants.
 * Storage may be corrupt or hand-edited: a bad document fails with where and what, never later.
 * @param {JSONValue} value
 * @param {FlowLimits} [limits]
 * @returns {FlowTree}
 * @throws {FlowStorageError}
 */
export function readTreeStorage(value: JSONValue, limits?: import("./tree.js").FlowLimits | undefined): FlowTree;
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
export const storageFormat: 1;
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowTree = import('./tree.js').FlowTree;
export type FlowNode = import('./tree.js').FlowNode;
export type FlowEntry = import('./tree.js').FlowEntry;
export type FlowAction = import('./tree.js').FlowAction;
export type FlowLimits = import('./tree.js').FlowLimits;
export type ScreenRef = import('./tree.js').ScreenRef;
export type Transition = import('./tree.js').Transition;
export type Interaction = import('./tree.js').Interaction;
export type PendingAction = import('./tree.js').PendingAction;
export type Path = (string | number)[];
import { JSONWriter } from "./json.js";
