/**
 * The median, min and max of a few runs.
 *
 * @module
 */

/** Summary of several runs' values. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** The median (mean of the middle two for an even count), min and max of `values`; null when empty. */
export function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort(function ascending(a, b) {
    return a - b;
  });
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { median, min: sorted[0] ?? 0, max: sorted[sorted.length - 1] ?? 0 };
}
