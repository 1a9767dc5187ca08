/**
 * @param {JSONValue} value
 * @returns {boolean}
 */
export function containsReference(value: JSONValue): boolean;
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./json.js').JSONObject} JSONObject */
/** @typedef {import('./condition.js').FlowContext} FlowContext */
/** @typedef {import('./builder.js').FlowCatalog} FlowCatalog */
/** @typedef {import('./definition.js').FlowEffect} FlowEffect */
/** @typedef {import('./definition.js').EntryTarget} EntryTarget */
/** @typedef {import('./definition.js').PopTarget} PopTarget */
/** @typedef {import('./tree.js').FlowTree} FlowTree */
/** @typedef {import('./tree.js').FlowNode} FlowNode */
/** @typedef {import('./tree.js').FlowEntry} FlowEntry */
/** @typedef {import('./tree.js').FlowAction} FlowAction */
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/** @typedef {import('./tree.js').ScreenRef} ScreenRef */
/** @typedef {import('./tree.js').Transition} Transition */
/** @typedef {import('./tree.js').TreeStep} TreeStep */
/** @typedef {import('./tree.js').ResultReceipt} ResultReceipt */
/** @typedef {import('./screenList.js').ListSection} ListSection */
/** @typedef {import('./screenList.js').ListRow} ListRow */
/** @typedef {import('./listEffect.js').ListEffect} ListEffect */
/** @typedef {import('./listEffect.js').ResolvedListOperation} ResolvedListOperation */
/**
 * One user-state value set by an action, for the server (and a client) to keep.
 * @typedef {{ key: string, value: JSONValue }} UserChange
 */
/** The run of one handled action's effects on a working copy of the tree. */
export class EffectRun {
    /**
     * @param {FlowTree} tree the tree before; never changed
     * @param {TreeStep[]} handlerPath
     * @param {string} handlerFlow
     * @param {FlowAction} action
     * @param {FlowCatalog} catalog
     * @param {FlowContext} context
     * @param {FlowLimits} limits
     * @param {number | null} [source] the id of the screen the action came from: the list effects'
     *   default screen
     */
    constructor(tree: FlowTree, handlerPath: TreeStep[], handlerFlow: string, action: FlowAction, catalog: import("./builder.js").FlowCatalog, context: FlowContext, limits: FlowLimits, source?: number | null | undefined);
    /** @type {FlowTree} */
    tree: FlowTree;
    source: number | null;
    handlerPath: import("./tree.js").TreeStep[];
    handlerFlow: string;
    action: import("./tree.js").FlowAction;
    builder: FlowBuilder;
    /** @type {UserChange[]} */
    userChanges: UserChange[];
    /** Set once the handling flow itself was dismissed; later effects have nothing to act on. */
    handlerGone: boolean;
    /** @type {{ kind: Transition['type'], animated: boolean, style: string | null } | null} */
    lastNavigation: {
        kind: Transition['type'];
        animated: boolean;
        style: string | null;
    } | null;
    /**
     * The `result` effect, delivered once every other effect has applied.
     * @type {Extract<FlowEffect, { name: 'result' }> | null}
     */
    result: Extract<FlowEffect, {
        name: 'result';
    }> | null;
    /** @type {ResultReceipt | null} */
    receipt: ResultReceipt | null;
    /**
     * The flows that push, setRoot or present put into the tree, in order (a guard shows its flow so).
     * @type {{ id: number, name: string }[]}
     */
    shownFlows: {
        id: number;
        name: string;
    }[];
    /**
     * The transition of the run: the last navigation effect, from the top before to the top now.
     * @param {ScreenRef} before
     * @param {boolean} interactive
     * @returns {Transition | null}
     */
    transition(before: ScreenRef, interactive: boolean): Transition | null;
    /**
     * @param {FlowEffect[]} effects
     * @throws {FlowError}
     */
    apply(effects: FlowEffect[]): void;
    /** @param {string} reason */
    refusal(reason: string): FlowError;
    /**
     * @param {Transition['type']} kind
     * @param {boolean} [animated]
     * @param {string | null} [style]
     */
    record(kind: Transition['type'], animated?: boolean | undefined, style?: string | null | undefined): void;
    /** @param {FlowEffect} effect */
    applyEffect(effect: FlowEffect): void;
    /**
     * Effects that change only the handling flow (in place: the tree is this run's copy). Each
     * checks before it changes anything, so a refusal leaves the handler as it was.
     * @param {FlowEffect} effect
     * @param {FlowNode} handler
     */
    applyToHandler(effect: FlowEffect, handler: FlowNode): void;
    /**
     * @param {FlowNode} handler
     * @param {string} name
     */
    requireStack(handler: FlowNode, name: string): void;
    /** UIKit's `dismiss`: what the handler presents, else the presented flow containing it. */
    dismiss(): void;
    /**
     * @param {EntryTarget} target
     * @param {string} effect
     * @returns {FlowEntry}
     */
    makeEntry(target: EntryTarget, effect: string): FlowEntry;
    /**
     * Writes a `result` into the receiving screen's params: the topmost screen showing `to`, or
     * the screen on top once the other effects have applied.
     * @param {Extract<FlowEffect, { name: 'result' }>} result
     */
    deliver(result: Extract<FlowEffect, {
        name: 'result';
    }>): void;
    /**
     * @param {PopTarget} target
     * @param {FlowNode} handler
     */
    popToIndex(target: PopTarget, handler: FlowNode): number;
    /**
     * @param {string} text
     * @param {FlowNode} handler
     */
    indexOfEntry(text: string, handler: FlowNode): number;
    /**
     * @param {Extract<FlowEffect, { name: 'selectTab' }>} choice
     * @param {FlowNode} handler
     */
    tabIndex(choice: {
        name: "selectTab";
        index: number | null;
        param: string | null;
    }, handler: FlowNode): number;
    /**
     * Applies a list effect to the screen it names (the source screen by default), once its values
     * are filled in from the params. The screen is replaced, never changed: trees share screens.
     * @param {ListEffect} effect
     */
    applyList(effect: ListEffect): void;
    /**
     * @param {ListEffect} effect
     * @returns {ResolvedListOperation}
     */
    resolveList(effect: ListEffect): ResolvedListOperation;
    /**
     * A list written in an entry or a `setSections`, read once its params are filled in.
     * @param {JSONValue} raw
     * @param {string} effect
     * @returns {ListSection[]}
     */
    resolveSections(raw: JSONValue, effect: string): ListSection[];
    /**
     * Rows a param supplies may carry only the row kinds the catalog declares: the capability check
     * knows a definition's kinds from what it writes, so a row of any other kind would reach a
     * client that never said it can draw it. Such a row is the action's fault.
     * @param {ListRow[]} rows
     * @param {JSONValue} raw
     * @param {(string | number)[]} pointer where the rows are in `raw` filled in
     * @param {string} effect
     */
    requireDeclaredKinds(rows: ListRow[], raw: JSONValue, pointer: (string | number)[], effect: string): void;
    /**
     * Refuses `kind`, found at `pointer` of `raw` filled in, when the catalog does not declare it
     * and a param supplied it; a kind written out is the definition's own (declared by
     * construction) and is kept.
     * @param {string} kind
     * @param {JSONValue} raw
     * @param {(string | number)[]} pointer
     * @param {string} effect
     */
    requireDeclaredKind(kind: string, raw: JSONValue, pointer: (string | number)[], effect: string): void;
    /**
     * Fills in `raw`'s params and reads it; a value a param made malformed is the action's fault
     * (invalid params, at the param holding the problem, else the first param it uses), a literal
     * one the definition's.
     * @template T
     * @param {JSONValue} raw
     * @param {string} effect
     * @param {(value: JSONValue) => T} read
     * @returns {T}
     */
    readResolved<T>(raw: JSONValue, effect: string, read: (value: JSONValue) => T): T;
    /**
     * The refusal of an effect that would leave a list over a size cap (the run is dropped).
     * @param {ListProblem} problem
     * @param {string} effect
     */
    listTooLarge(problem: ListProblem, effect: string): FlowError;
    /**
     * @param {JSONValue} raw
     * @param {string} effect
     * @param {string} what
     */
    resolveId(raw: JSONValue, effect: string, what: string): string;
    /**
     * @param {JSONValue} raw
     * @param {string} effect
     */
    resolveIndex(raw: JSONValue, effect: string): number;
    /**
     * `invalid-params` at `param`, else the first param `raw` uses, or a refusal when it uses none.
     * @param {JSONValue} raw
     * @param {string} effect
     * @param {string} message
     * @param {string | null} [param]
     */
    invalid(raw: JSONValue, effect: string, message: string, param?: string | null | undefined): FlowError;
    /**
     * @param {JSONObject} params
     * @param {string} effect
     * @returns {JSONObject}
     */
    resolveObject(params: import("./json.js").JSONObject, effect: string): import("./json.js").JSONObject;
    /**
     * Replaces each `{"$param": name}` with the action's param `name`.
     * @param {JSONValue} value
     * @param {string} effect
     * @returns {JSONValue}
     */
    resolve(value: JSONValue, effect: string): JSONValue;
}
export type JSONValue = import('./json.js').JSONValue;
export type JSONObject = import('./json.js').JSONObject;
export type FlowContext = import('./condition.js').FlowContext;
export type FlowCatalog = import('./builder.js').FlowCatalog;
export type FlowEffect = import('./definition.js').FlowEffect;
export type EntryTarget = import('./definition.js').EntryTarget;
export type PopTarget = import('./definition.js').PopTarget;
export type FlowTree = import('./tree.js').FlowTree;
export type FlowNode = import('./tree.js').FlowNode;
export type FlowEntry = import('./tree.js').FlowEntry;
export type FlowAction = import('./tree.js').FlowAction;
export type FlowLimits = import('./tree.js').FlowLimits;
export type ScreenRef = import('./tree.js').ScreenRef;
export type Transition = import('./tree.js').Transition;
export type TreeStep = import('./tree.js').TreeStep;
export type ResultReceipt = import('./tree.js').ResultReceipt;
export type ListSection = import('./screenList.js').ListSection;
export type ListRow = import('./screenList.js').ListRow;
export type ListEffect = import('./listEffect.js').ListEffect;
export type ResolvedListOperation = import('./listEffect.js').ResolvedListOperation;
/**
 * One user-state value set by an action, for the server (and a client) to keep.
 */
export type UserChange = {
    key: string;
    value: JSONValue;
};
import { FlowBuilder } from "./builder.js";
import { FlowError } from "./errors.js";
import { ListProblem } from "./screenList.js";
