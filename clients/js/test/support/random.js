// SeededGenerator: the SplitMix64 the Swift tests use (Tests/TestSupport/SeededGenerator.swift), so a seed names the same draws.

export class SeededGenerator {
  /** @param {number | bigint} seed */
  constructor(seed) {
    this.state = BigInt.asUintN(64, BigInt(seed));
  }

  /** The next 64-bit draw, as a BigInt. */
  nextBig() {
    this.state = BigInt.asUintN(64, this.state + 0x9E3779B97F4A7C15n);
    let z = this.state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94D049BB133111EBn);
    return z ^ (z >> 31n);
  }

  /**
   * A draw below `bound` (the Swift tests' `random.next() % bound`).
   * @param {number} bound
   */
  below(bound) {
    return Number(this.nextBig() % BigInt(bound));
  }
}
