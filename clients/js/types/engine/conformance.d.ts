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
import { FlowError } from "./errors.js";
import { SessionState } from "./session.js";
