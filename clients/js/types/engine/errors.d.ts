/**
 * Why an action was not applied (the tree is then unchanged), or why a tree could not be built.
 * `code` is stable (`stale-source`, `stale-row`, `unhandled`, `refused`, `list-too-large`, `interaction-pending`,
 * `no-interaction`, `invalid-params`, `broken-definition`, `corrupt-tree`, `unknown-link`,
 * `link-refused`), `status` the HTTP status the server answers, `pointer` where in the posted
 * action the problem is; `chain`, `flow`, `link` and `step` are the problem's extension members.
 *
 * ```js
 * try { state.applying(readAction({ type: 'nope' })); }
 * catch (error) { error.code; error.chain; }   // 'unhandled', ['onboarding', 'app']
 * ```
 */
export class FlowError extends Error {
    /**
     * `from` is not the screen on top (409).
     * @param {string} from
     * @param {string} top
     */
    static staleSource(from: string, top: string): FlowError;
    /**
     * `row` is not in the list of the screen the action came from (409): the row was removed (or
     * never there) and the client tapped what it still showed.
     * @param {string} row
     * @param {string} screen
     */
    static staleRow(row: string, screen: string): FlowError;
    /**
     * No flow on the chain handles the action (422).
     * @param {string} action
     * @param {string[]} chain
     */
    static unhandled(action: string, chain: string[]): FlowError;
    /**
     * A flow owns the action but refused it (422).
     * @param {string} flow
     * @param {string} action
     * @param {string} reason
     */
    static refused(flow: string, action: string, reason: string): FlowError;
    /**
     * A flow owns the action, but its effects would make a screen's list larger than the engine
     * keeps (422): values nested too deep, a row or the whole list too many bytes.
     * @param {string} flow
     * @param {string} action
     * @param {string} reason
     */
    static listTooLarge(flow: string, action: string, reason: string): FlowError;
    /**
     * An interaction is pending, so other actions wait (409).
     * @param {string} action
     * @param {string} pending
     */
    static interactionPending(action: string, pending: string): FlowError;
    /**
     * An interaction action arrived with no interaction pending (409).
     * @param {string} action
     */
    static noInteraction(action: string): FlowError;
    /**
     * The action's fields or params are malformed or missing (400).
     * @param {string} path
     * @param {string} message
     */
    static invalidParams(path: string, message: string): FlowError;
    /**
     * The definitions cannot build what they name (422).
     * @param {string} flow
     * @param {string} message
     */
    static brokenDefinition(flow: string, message: string): FlowError;
    /**
     * The tree breaks its own invariants (500).
     * @param {string} message
     */
    static corruptTree(message: string): FlowError;
    /**
     * No pattern of the root flow's links matches the URI (422).
     * @param {string} uri
     */
    static unknownLink(uri: string): FlowError;
    /**
     * A link matched but one of its actions was refused (422).
     * @param {string} link
     * @param {number} step
     * @param {string} action
     * @param {FlowError} underlying
     */
    static linkRefused(link: string, step: number, action: string, underlying: FlowError): FlowError;
    /**
     * @param {string} code
     * @param {FlowErrorDetails} details
     */
    constructor(code: string, details: FlowErrorDetails);
    /** @type {string} */
    code: string;
    /** @type {number} */
    status: number;
    /** @type {FlowErrorDetails} */
    details: FlowErrorDetails;
    /** @type {string[] | undefined} */
    chain: string[] | undefined;
    /** @type {string | undefined} */
    flow: string | undefined;
    /** @type {string | undefined} */
    link: string | undefined;
    /** @type {number | undefined} */
    step: number | undefined;
    /** @type {string} */
    pointer: string;
}
/**
 * Stored data (a bundle, a tree) that cannot be read back: where (a JSON Pointer into the stored
 * document) and what is wrong. Reading never trusts storage, so bad data fails here.
 */
export class FlowStorageError extends Error {
    /**
     * @param {string} path
     * @param {string} message
     */
    constructor(path: string, message: string);
    path: string;
    detail: string;
}
/**
 * The details a FlowError carries besides its code, as the Swift enum's associated values.
 */
export type FlowErrorDetails = {
    /**
     * the action type
     */
    action?: string | undefined;
    /**
     * a stale `from`
     */
    from?: string | undefined;
    /**
     * the screen on top, for a stale `from`
     */
    top?: string | undefined;
    /**
     * a stale row's id
     */
    row?: string | undefined;
    /**
     * the screen whose list lacks a stale row
     */
    screen?: string | undefined;
    /**
     * the flows an unhandled action passed through
     */
    chain?: string[] | undefined;
    /**
     * the flow that refused, or whose definition is broken
     */
    flow?: string | undefined;
    /**
     * why a flow refused
     */
    reason?: string | undefined;
    /**
     * the pending interaction's action type
     */
    pending?: string | undefined;
    /**
     * the JSON Pointer into the action of an invalid param
     */
    path?: string | undefined;
    /**
     * the sentence of an invalid param, broken definition or corrupt tree
     */
    message?: string | undefined;
    /**
     * an unknown link's URI
     */
    uri?: string | undefined;
    /**
     * a refused link's pattern
     */
    link?: string | undefined;
    /**
     * the index of a refused link's failing action
     */
    step?: number | undefined;
    /**
     * why that action failed
     */
    underlying?: FlowError | undefined;
};
