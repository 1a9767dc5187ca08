// RetryPolicy: how often and how long to retry a request the server did not answer.

/**
 * How often and how long to retry a request the server did not answer: `attempts` tries per
 * request (the first and the retries after an unknown outcome) before the client goes offline and
 * waits for the server; the waits double from `initialDelay` up to `maximumDelay` (milliseconds).
 *
 * ```js
 * new RetryPolicy({ attempts: 4, initialDelay: 100, maximumDelay: 2000 })
 * ```
 */
export class RetryPolicy {
  /** @param {{attempts?: number, initialDelay?: number, maximumDelay?: number}} [options] */
  constructor(options = {}) {
    const { attempts = 3, initialDelay = 100, maximumDelay = 2000 } = options;
    this.attempts = Math.max(1, Math.floor(attempts));
    this.initialDelay = initialDelay;
    this.maximumDelay = maximumDelay;
  }

  /**
   * The wait before try `attempt` (1 for the first retry), in milliseconds: doubling, capped.
   * @param {number} attempt
   */
  delay(attempt) {
    let delay = this.initialDelay;
    for (let i = 1; i < Math.max(1, attempt) && delay < this.maximumDelay; i++) delay *= 2;
    return Math.min(delay, this.maximumDelay);
  }
}
