/**
 * ScriptBatch, alone: what it sends, counted, with a `send` of the test's
 * own standing in for Redis (the calls it makes are what is checked; the
 * frontier's tests run it against a real redis-server).
 */
import { describe, expect, it } from "vitest";
import { ScriptBatch } from "../../src/distributed/script-batch.js";

/** A `send` that records each call's arguments and answers when the test says, each part's values its first argument twice. */
function fakeRedis(): { calls: string[][]; answer(): void; send(args: readonly string[]): Promise<unknown> } {
  const calls: string[][] = [];
  const pending: Array<() => void> = [];
  return {
    calls,
    answer() { pending.shift()?.(); },
    send(args) {
      calls.push([...args]);
      return new Promise((resolve) => pending.push(() => resolve(args.slice(1).filter((_, i) => i % 2 === 0).flatMap((first) => [first, first]))));
    },
  };
}

/** Lets the event loop turn once (the batch flushes at the end of a turn). */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe("ScriptBatch", () => {
  it("sends the parts of one turn in one call, and those that come while it is in flight in the next", async () => {
    const redis = fakeRedis();
    const batch = new ScriptBatch((args) => redis.send(args), ["owner"], 2);
    const first = [batch.call(["a", "x"]), batch.call(["b", "x"])];
    await turn();
    expect(redis.calls).toEqual([["owner", "a", "x", "b", "x"]]);
    const later = [batch.call(["c", "x"]), batch.call(["d", "x"]), batch.call(["e", "x"])];
    await turn();
    expect(redis.calls.length).toBe(1); // One call in flight at a time.
    redis.answer();
    expect(await Promise.all(first)).toEqual([["a", "a"], ["b", "b"]]);
    await turn();
    expect(redis.calls[1]).toEqual(["owner", "c", "x", "d", "x", "e", "x"]);
    redis.answer();
    expect(await Promise.all(later)).toEqual([["c", "c"], ["d", "d"], ["e", "e"]]);
  });

  it("holds at most maxParts parts and about maxArgs arguments in a call, and sends the rest next", async () => {
    const redis = fakeRedis();
    const batch = new ScriptBatch((args) => redis.send(args), ["owner"], 2, 3, 6);
    const parts = ["a", "b", "c", "d"].map((name) => batch.call([name, "x"]));
    await turn();
    expect(redis.calls).toEqual([["owner", "a", "x", "b", "x"]]); // A third part would make 7 arguments.
    redis.answer();
    await turn();
    expect(redis.calls[1]).toEqual(["owner", "c", "x", "d", "x"]);
    redis.answer();
    expect((await Promise.all(parts)).map((reply) => reply[0])).toEqual(["a", "b", "c", "d"]);
  });

  it("rejects every part of a call that failed, and goes on with the next", async () => {
    let fail = true;
    const calls: string[][] = [];
    const batch = new ScriptBatch(function send(args) {
      calls.push([...args]);
      return fail ? Promise.reject(new Error("gone")) : Promise.resolve(["1", "2"]);
    }, [], 2);
    const failed = [batch.call(["a"]), batch.call(["b"])];
    for (const part of failed) await expect(part).rejects.toThrow("gone");
    fail = false;
    expect(await batch.call(["c"])).toEqual(["1", "2"]);
    expect(calls).toEqual([["a", "b"], ["c"]]);
  });
});
