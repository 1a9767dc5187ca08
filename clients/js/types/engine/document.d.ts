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
export function stateDocument(parts: DocumentParts): string;
/**
 * Writes a flow as `{"id","flow","kind","style"?,"selected"?,"entries","presented"}`: `style` on
 * presented flows, `selected` on tabbed ones; screens as `{"id","feature","params","sections"?,"handoff"?}`.
 * @param {FlowNode} node
 * @param {boolean} isPresented
 * @param {JSONWriter} writer
 */
export function writeNode(node: FlowNode, isPresented: boolean, writer: JSONWriter): void;
/**
 * `top`: the screen on top, or null.
 * @param {FlowTree} tree
 * @param {JSONWriter} writer
 */
export function writeTop(tree: FlowTree, writer: JSONWriter): void;
/**
 * `{"id","feature","params","flow","flowId"}`, and `"handoff": kind` for a hand-off.
 * @param {ScreenRef} screen
 * @param {JSONWriter} writer
 */
export function writeScreenRef(screen: ScreenRef, writer: JSONWriter): void;
/**
 * `{"type","from","to","animated","style","interactive","result"?,"lists"?}`: `lists` when lists
 * changed, `[{"id", "sections", "rows"}]` by screen id ascending.
 * @param {Transition} transition
 * @param {JSONWriter} writer
 */
export function writeTransition(transition: Transition, writer: JSONWriter): void;
/**
 * A transition as the document and the action log show it.
 * @param {Transition} transition
 */
export function encodeTransition(transition: Transition): string;
/**
 * An action as a client posts it: `{type, from?, row?, params?, interactive?}`, leaving out what is
 * absent.
 * @param {FlowAction} action
 * @param {JSONWriter} writer
 */
export function writeAction(action: FlowAction, writer: JSONWriter): void;
export type JSONObject = import('./json.js').JSONObject;
export type FlowTree = import('./tree.js').FlowTree;
export type FlowNode = import('./tree.js').FlowNode;
export type FlowAction = import('./tree.js').FlowAction;
export type ScreenRef = import('./tree.js').ScreenRef;
export type Transition = import('./tree.js').Transition;
/**
 * The parts of a state document besides the tree.
 */
export type DocumentParts = {
    sessionId: string;
    userId: string;
    version: number;
    tree: FlowTree;
    /**
     * the transition that produced `version`, encoded
     */
    transitionJSON: string | null;
    handledBy: string | null;
    flagsJSON: string;
    experimentsJSON: string;
};
import { JSONWriter } from "./json.js";
