/**
 * Counting a loop's iterations, for the checks that a loop sleeps: each
 * iteration of either stage's loop selects once.
 */
import type { Selector } from "../../src/kernel/selector.js";

/**
 * Counts `selector.select()` calls from now on. A wrapper around the loop's
 * real selector, not a mock: counting needs nothing from the loop under test
 * (the workshop's learner writes the iteration that would publish them), and
 * a loop that spins or polls selects thousands of times where one that
 * sleeps selects a few.
 */
export function countSelects<T>(selector: Selector<T>): () => number {
  let selects = 0;
  const select = selector.select.bind(selector);
  selector.select = function countedSelect(callback) {
    selects += 1;
    return select(callback);
  };
  return () => selects;
}

/** Lets Node's loop go round `turns` times: timers, poll, check. */
export async function nodeTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
  }
}
