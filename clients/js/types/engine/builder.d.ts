/**
 * `base` overlaid by `own` (own values win, in base's order then own's new keys).
 * @param {JSONObject} base
 * @param {JSONObject} own
 * @returns {JSONObject}
 */
export function mergeParams(base: import("./json.js").JSONObject, own: import("./json.js").JSONObject): import("./json.js").JSONObject;
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./definition.js').FlowDefinition} FlowDefinition */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowEntry} FlowEntry */
/** @typedef {import('./tree.js').ScreenEntry} ScreenEntry */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/**
 * The flows a session can use: definitions by name. The root flow is `app`.
 * @typedef {Map<string, FlowDefinition>} FlowCatalog
 */
/**
 * Builds flow controllers: initial entries filtered by their `when`, child flows built
 * recursively, ids from the session's counter. A flow built with params hands them to its
 * initial entries (a screen's own params win), which is how
 * `present {"flow": "modal", "params": {"content": …}}` puts `content` on the `modal` screen.
 */
export class FlowBuilder {
    /**
     * @param {FlowCatalog} catalog
     * @param {FlowContext} context
     * @param {FlowLimits} limits
     * @param {number} nextId
     */
    constructor(catalog: FlowCatalog, context: FlowContext, limits: FlowLimits, nextId: number);
    catalog: FlowCatalog;
    context: import("./condition.js").FlowContext;
    limits: import("./tree.js").FlowLimits;
    nextId: number;
    /** Entries made so far, checked as they are made so a fanning-out definition fails early. */
    created: number;
    allocateId(): number;
    /**
     * @param {string} feature
     * @param {JSONObject} params
     * @param {boolean} [isHandoff]
     * @param {ListSection[] | null} [sections]
     * @returns {ScreenEntry}
     */
    makeScreen(feature: string, params: import("./json.js").JSONObject, isHandoff?: boolean | undefined, sections?: import("./screenList.js").ListSection[] | null | undefined): ScreenEntry;
    /**
     * Builds the flow `name`; `ancestors` are the flows being built around it, to catch a flow
     * that contains itself.
     * @param {string} name
     * @param {JSONObject} params
     * @param {string[]} [ancestors]
     * @returns {FlowNode}
     * @throws {FlowError} broken-definition
     */
    makeNode(name: string, params: import("./json.js").JSONObject, ancestors?: string[] | undefined): FlowNode;
}
export type JSONObject = import('./json.js').JSONObject;
export type FlowContext = import('./condition.js').FlowContext;
export type FlowDefinition = import('./definition.js').FlowDefinition;
export type FlowNode = import('./tree.js').FlowNode;
export type FlowEntry = import('./tree.js').FlowEntry;
export type ScreenEntry = import('./tree.js').ScreenEntry;
export type FlowLimits = import('./tree.js').FlowLimits;
export type ListSection = import('./screenList.js').ListSection;
/**
 * The flows a session can use: definitions by name. The root flow is `app`.
 */
export type FlowCatalog = Map<string, FlowDefinition>;
