// SessionFlags: a session's flag values and experiment variants, typed.

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
  constructor(state) {
    /** Evaluations by flag key: value, variant, reason. */
    this.details = state.flags;
    /** Variant keys by experiment key; an experiment the session is not in is absent. */
    this.experiments = state.experiments;
  }

  /**
   * The flag's value when it is true or false; the fallback (undefined unless given) when the
   * flag is unknown or of another type.
   * @template {boolean | undefined} [F=undefined]
   * @param {string} key
   * @param {F} [fallback]
   * @returns {boolean | F}
   */
  bool(key, fallback) {
    const value = this.details[key]?.value;
    return typeof value === 'boolean' ? value : /** @type {F} */ (fallback);
  }

  /**
   * @template {string | undefined} [F=undefined]
   * @param {string} key
   * @param {F} [fallback]
   * @returns {string | F}
   */
  string(key, fallback) {
    const value = this.details[key]?.value;
    return typeof value === 'string' ? value : /** @type {F} */ (fallback);
  }

  /**
   * @template {number | undefined} [F=undefined]
   * @param {string} key
   * @param {F} [fallback]
   * @returns {number | F}
   */
  number(key, fallback) {
    const value = this.details[key]?.value;
    return typeof value === 'number' ? value : /** @type {F} */ (fallback);
  }

  /**
   * The value as JSON, whatever its type.
   * @param {string} key
   */
  json(key) {
    return this.details[key]?.value;
  }

  /**
   * The variant the flag evaluated to (`on`, `off`, …).
   * @param {string} key
   */
  flagVariant(key) {
    return this.details[key]?.variant;
  }

  /**
   * The experiment's variant for this session, undefined when the session is not in it.
   * @param {string} experiment
   * @returns {string | undefined}
   */
  variant(experiment) {
    return this.experiments[experiment];
  }
}
