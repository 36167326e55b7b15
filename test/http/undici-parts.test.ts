/**
 * Stage 3 requires undici's connection classes from the files that define
 * them (src/http/undici.ts), not from the package's index: they must be the
 * very ones the index exports, or an undici release that moved them would
 * hand the crawl something else. Its pools build on undici's internal
 * `PoolBase` as undici's own `Pool` does: that must still hold too.
 */
import * as undici from "undici";
import { describe, expect, it } from "vitest";
import { Agent, buildConnector, Client, poolBase } from "../../src/http/undici.js";

describe("undici's parts as stage 3 requires them", () => {
  it("are the classes and the function undici's index exports", () => {
    expect(Agent).toBe(undici.Agent);
    expect(Client).toBe(undici.Client);
    expect(buildConnector).toBe(undici.buildConnector);
  });
});

describe("undici's PoolBase, which stage 3's ConnectionPool extends", () => {
  it("is what undici's Pool extends, and Pool chooses its client through kGetDispatcher and kNeedDrain", () => {
    expect(Object.getPrototypeOf(undici.Pool)).toBe(poolBase.PoolBase);
    for (const key of ["kClients", "kNeedDrain", "kAddClient", "kGetDispatcher"] as const) expect(typeof poolBase[key]).toBe("symbol");
    expect(typeof Reflect.get(undici.Pool.prototype, poolBase.kGetDispatcher)).toBe("function");
    expect(typeof Reflect.get(poolBase.PoolBase.prototype, poolBase.kAddClient)).toBe("function");
    expect(String(Reflect.get(undici.Pool.prototype, poolBase.kGetDispatcher))).toContain("kNeedDrain");
  });
});
