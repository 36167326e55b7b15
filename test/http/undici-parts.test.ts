/**
 * Stage 3 requires undici's connection classes from the files that define
 * them (src/http/undici.ts), not from the package's index: they must be the
 * very ones the index exports, or an undici release that moved them would
 * hand the crawl something else.
 */
import * as undici from "undici";
import { describe, expect, it } from "vitest";
import { Agent, buildConnector, Client, Pool } from "../../src/http/undici.js";

describe("undici's parts as stage 3 requires them", () => {
  it("are the classes and the function undici's index exports", () => {
    expect(Agent).toBe(undici.Agent);
    expect(Pool).toBe(undici.Pool);
    expect(Client).toBe(undici.Client);
    expect(buildConnector).toBe(undici.buildConnector);
  });
});
