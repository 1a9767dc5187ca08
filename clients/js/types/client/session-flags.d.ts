/** @typedef {import('./navigation-state.js').NavigationState} NavigationState */
/**
 * The flag evaluations and experiment variants fixed when the session was created.
 *
 * ```js
 * const flags = session.flags;
 * if (flags.bool('eu-face-scan') === true) { … }
 * flags.variant('onboarding-length');               // "short", or undefined when not enrolled
 * flags.string('paywall-copy', 'Try it free');
 * ```
 */
export class SessionFlags {
    /** @param {NavigationState} state */
    constructor(state: NavigationState);
    /** Evaluations by flag key: value, variant, reason. */
    details: Record<string, import("./navigation-state.js").FlagEvaluation>;
    /** Variant keys by experiment key; an experiment the session is not in is absent. */
    experiments: Record<string, string>;
    /**
     * The flag's value when it is true or false; the fallback (undefined unless given) when the
     * flag is unknown or of another type.
     * @template {boolean | undefined} [F=undefined]
     * @param {string} key
     * @param {F} [fallback]
     * @returns {boolean | F}
     */
    bool<F extends boolean | undefined = undefined>(key: string, fallback?: F | undefined): boolean | F;
    /**
     * @template {string | undefined} [F=undefined]
     * @param {string} key
     * @param {F} [fallback]
     * @returns {string | F}
     */
    string<F_1 extends string | undefined = undefined>(key: string, fallback?: F_1 | undefined): string | F_1;
    /**
     * @template {number | undefined} [F=undefined]
     * @param {string} key
     * @param {F} [fallback]
     * @returns {number | F}
     */
    number<F_2 extends number | undefined = undefined>(key: string, fallback?: F_2 | undefined): number | F_2;
    /**
     * The value as JSON, whatever its type.
     * @param {string} key
     */
    json(key: string): import("./json.js").JSONValue;
    /**
     * The variant the flag evaluated to (`on`, `off`, …).
     * @param {string} key
     */
    flagVariant(key: string): string | undefined;
    /**
     * The experiment's variant for this session, undefined when the session is not in it.
     * @param {string} experiment
     * @returns {string | undefined}
     */
    variant(experiment: string): string | undefined;
}
export type NavigationState = import('./navigation-state.js').NavigationState;
