/**
 * `[{"action": {type, from?, interactive?}, "state": {…}}]`, as `?predict=true` adds it: `state`'s
 * predictions written.
 * @param {SessionState} state
 * @param {FlowLimits} [limits]
 * @returns {string}
 */
export function predictionsJSON(state: SessionState, limits?: import("./tree.js").FlowLimits | undefined): string;
/**
 * A state document with `predictions` as its last member.
 * @param {string} document
 * @param {string} predictions
 * @returns {string}
 */
export function withPredictions(document: string, predictions: string): string;
/**
 * `state`'s document with `predictions` as its last member, as `?predict=true` answers.
 * @param {SessionState} state
 * @returns {string}
 */
export function documentWithPredictions(state: SessionState): string;
/**
 * `GET /v1/sessions/{id}/actions/available`'s answer for `state`: `{sessionId, version, from,
 * actions: [{type, handledBy, from, rowKinds?, params, interactive, next, nextInteractive?}]}`.
 * `rowKinds`, only for a row tap, lists the kinds of the rows it takes. `next` is the state
 * posting the action with no params would answer (null when it needs params or a row);
 * `nextInteractive` the state posting it with `"interactive": true` would answer.
 * @param {SessionState} state
 * @returns {string}
 */
export function availableActionsDocument(state: SessionState): string;
/**
 * A fresh runner, as the browser page makes it: `createConformanceRunner().answer(line)`.
 * @returns {EngineRunner}
 */
export function createConformanceRunner(): EngineRunner;
/**
 * A refused action as the suite writes it: `{"refused": {chain?, code, flow?, link?, pointer,
 * status, step?}}`, keys sorted. The message is for people and not part of the suite.
 * @param {FlowError} refusal
 */
export function refusalLine(refusal: FlowError): string;
/** @typedef {import('./tree.js').FlowLimits} FlowLimits */
/**
 * The engine behind the runner protocol: `{"bundle": B}` starts a case and answers its state
 * document; `{"action": A}` (with `predict` or `dryRun`) applies an action; `{"available": true}`
 * answers the available actions; anything else `{"error": {message, pointer}}`.
 *
 * ```js
 * const runner = new EngineRunner();
 * runner.answer('{"bundle":{…}}');           // the state document
 * runner.answer('{"action":{"type":"back"}}');
 * ```
 */
export class EngineRunner {
    /**
     * The session the last bundle started, carried forward by the actions since.
     * @type {SessionState | null}
     */
    state: SessionState | null;
    /**
     * The answer to one input line (without its newline).
     * @param {string} line
     * @returns {string}
     */
    answer(line: string): string;
}
export type FlowLimits = import('./tree.js').FlowLimits;
import { SessionState } from "./session.js";
import { FlowError } from "./errors.js";
