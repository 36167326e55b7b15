/**
 * The three stages and the fourth of examples/18, 500 seeded scenarios each
 * (redirects, missing pages, robots.txt Crawl-delay and Disallow,
 * Retry-After, hostile pages, network resets, stalls, drips and split
 * writes), in the bottle. See suite.ts; a stage joins by being in the list
 * given to conformanceSuite(). The fourth reads malformed bytes with
 * node:http's own parser, so its records are compared on the seeds with no
 * hostile page (`hostile: false`).
 */
import { describe, expect, it } from "vitest";
import { crawl } from "../../examples/18-your-own-stage.js";
import { checkSeed } from "../../src/bottle/conformance.js";
import { STAGES, type Stage } from "../../src/bottle/simulate.js";
import { conformanceSuite, failureReport } from "./suite.js";

conformanceSuite([...STAGES, { name: "examples/18-your-own-stage.ts", crawl, hostile: false }]);

describe("checkSeed", () => {
  it("catches a stage that loses a record, and names the seed and its replay line", async () => {
    const [callbacks] = STAGES;
    if (callbacks === undefined) throw new Error("no stage");
    const lossy: Stage = {
      name: "lossy",
      async crawl(roots, options) {
        const result = await callbacks.crawl(roots, options);
        result.records.pop();
        return result;
      },
    };
    const { disagreements } = await checkSeed(5, [callbacks, lossy]);
    expect(disagreements.map((each) => each.stage)).toEqual(["lossy", "lossy"]); // against the expected crawl, and against callbacks
    expect(failureReport(disagreements)).toContain("replay: npm run simulate -- --seed 5 --stage lossy");
  });
});
