/**
 * The horizontal axis every panel of a timeline shares: milliseconds since
 * the crawl started, mapped to SVG x coordinates.
 *
 * @module
 */

/**
 * Maps trace times to x coordinates between `left` and `right`, and picks
 * round tick marks (1, 2 or 5 times a power of ten) for the axis.
 */
export class TimeScale {
  /** The time at `right`: at least 1 ms, so an empty trace still draws. */
  readonly endMs: number;

  constructor(
    endMs: number,
    readonly left: number,
    readonly right: number,
  ) {
    this.endMs = Math.max(1, endMs);
  }

  /** The x coordinate of time `t`. */
  x(t: number): number {
    return this.left + (Math.min(Math.max(t, 0), this.endMs) / this.endMs) * (this.right - this.left);
  }

  /** Tick times from 0 to the end, about `count` of them, at round values. */
  ticks(count = 10): number[] {
    const rough = this.endMs / count;
    const power = 10 ** Math.floor(Math.log10(rough));
    const step = [1, 2, 5, 10].map(function times(factor) {
      return factor * power;
    }).find(function atLeastRough(candidate) {
      return candidate >= rough;
    }) ?? 10 * power;
    const ticks: number[] = [];
    for (let t = 0; t <= this.endMs + step / 1000; t += step) ticks.push(Number(t.toPrecision(12)));
    return ticks;
  }
}
