/**
 * The "predict the order" drill (learn/lessons/predict-order.ts, exercise 4
 * of the workshop): each snippet, run, logs in the order its answer says.
 * The workshop runs this file with the learner's file swapped in.
 */
import { describe, expect, it } from "vitest";
import { drills, type Log } from "../../learn/lessons/predict-order.js";
import { sideBySide } from "../helpers/side-by-side.js";

/**
 * Runs `snippet` from a macrotask of its own (`setImmediate`), as a script's
 * top level runs before Node's loop starts: called from the test itself, it
 * would run inside a Promise callback, where a `process.nextTick` waits for
 * the Promise callbacks. Resolves with what it logged once everything it
 * queued has run: ten rounds of Node's loop, each a 1 ms timer (after the snippet's
 * own `setTimeout(…, 0)`, which Node makes 1 ms, in the same list) and a
 * check phase (its `setImmediate`s). No snippet nests deeper than two.
 */
async function logOf(snippet: (log: Log) => void): Promise<string[]> {
  const logged: string[] = [];
  await new Promise<void>(function runAlone(resolve) {
    setImmediate(function fromNodesLoop() {
      snippet(function log(word) {
        logged.push(word);
      });
      resolve();
    });
  });
  for (let round = 0; round < 10; round++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return logged;
}

describe("predict the order", () => {
  for (const { letter, snippet, predict } of drills) {
    it(`predict${letter} gives the order in which snippet${letter} logs`, async () => {
      const logged = await logOf(snippet);
      const predicted = predict();
      expect(predicted, `predict${letter}() is not the order snippet${letter} logs in:\n${sideBySide(`predict${letter}()`, predicted, `snippet${letter} logs`, logged)}\n`).toEqual(logged);
    });
  }

  it("runs every snippet the same way twice", async () => {
    for (const { snippet } of drills) expect(await logOf(snippet)).toEqual(await logOf(snippet));
  });
});
