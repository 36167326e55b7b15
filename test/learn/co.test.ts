/**
 * The driver (learn/lessons/co.ts, exercise 9 of the workshop): `co` runs a
 * generator as an async function runs, checked against native `await` on
 * the same coroutines: the same results, the same errors, a rejection caught
 * inside the generator, and the same turns taken with other microtasks. The
 * workshop runs this file with the learner's file swapped in.
 */
import { describe, expect, it } from "vitest";
import { type Awaiting, co } from "../../learn/lessons/co.js";
import { sideBySide } from "../helpers/side-by-side.js";

type Log = (line: string) => void;

/** One coroutine, written twice: with `await`, and as a generator with `yield` where the other awaits. */
interface Twins {
  readonly name: string;
  readonly native: (log: Log) => Promise<unknown>;
  readonly driven: (log: Log) => Awaiting<unknown>;
}

const twins: Twins[] = [
  {
    name: "awaits a resolved Promise, a plain value and a Promise resolved by a later microtask, and returns their sum",
    async native(log) {
      log("starts");
      const x = await Promise.resolve(1);
      log(`x ${x}`);
      const y = await 2;
      log(`y ${y}`);
      const z = await new Promise<number>((resolve) => queueMicrotask(() => resolve(3)));
      log(`z ${z}`);
      return x + y + z;
    },
    *driven(log) {
      log("starts");
      const x = (yield Promise.resolve(1)) as number;
      log(`x ${x}`);
      const y = (yield 2) as number;
      log(`y ${y}`);
      const z = (yield new Promise<number>((resolve) => queueMicrotask(() => resolve(3)))) as number;
      log(`z ${z}`);
      return x + y + z;
    },
  },
  {
    name: "catches a rejection at its await and goes on",
    async native(log) {
      try {
        await Promise.reject(new Error("refused"));
        log("not here");
      } catch (error) {
        log(`caught ${(error as Error).message}`);
      }
      const after = await "after";
      return after;
    },
    *driven(log) {
      try {
        yield Promise.reject(new Error("refused"));
        log("not here");
      } catch (error) {
        log(`caught ${(error as Error).message}`);
      }
      const after = (yield "after") as string;
      return after;
    },
  },
  {
    name: "throws after an await",
    async native(log) {
      await null;
      log("throws");
      throw new Error("boom");
    },
    *driven(log) {
      yield null;
      log("throws");
      throw new Error("boom");
    },
  },
  {
    name: "throws before its first await",
    async native(log) {
      log("throws at once");
      throw new Error("at once");
    },
    // biome-ignore lint/correctness/useYield: the point is a throw before any yield.
    *driven(log) {
      log("throws at once");
      throw new Error("at once");
    },
  },
  {
    name: "does not catch a rejection, which rejects it",
    async native(log) {
      log("awaits");
      await Promise.reject(new Error("unhandled"));
      log("not here");
    },
    *driven(log) {
      log("awaits");
      yield Promise.reject(new Error("unhandled"));
      log("not here");
    },
  },
  {
    name: "returns a Promise, which it resolves with",
    async native(log) {
      await null;
      log("returns");
      return Promise.resolve("later");
    },
    *driven(log) {
      yield null;
      log("returns");
      return Promise.resolve("later");
    },
  },
];

/**
 * What happens, in order, when `start` runs beside a ticker that logs once
 * per microtask: the coroutine's own lines, the ticks between them, and how
 * its Promise settled. `co` and `await` must give the same list.
 */
async function trace(start: (log: Log) => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const log: Log = (line) => lines.push(line);
  const ticker = (async function tick() {
    for (let i = 0; i < 12; i++) {
      log(`tick ${i}`);
      await null;
    }
  })();
  log("calls");
  const settled = start(log).then(
    (value) => log(`resolves ${String(value)}`),
    (error: unknown) => log(`rejects ${(error as Error).message}`),
  );
  log("called");
  await Promise.all([ticker, settled]);
  return lines;
}

describe("co", () => {
  for (const { name, native, driven } of twins) {
    it(`co runs a coroutine that ${name} as await does: the same lines, result and microtask turns`, async () => {
      const expected = await trace(native);
      const got = await trace((log) => co(driven(log)));
      expect(got, `co(generator) did not run as the async function does:\n${sideBySide("co(generator)", got, "async function", expected)}\n`).toEqual(expected);
    });
  }

  it("co returns a Promise and never throws, even when the generator throws at once", async () => {
    const running = co(
      // biome-ignore lint/correctness/useYield: the point is a throw before any yield.
      (function* throwsAtOnce(): Awaiting<never> {
        throw new TypeError("at once");
      })(),
    );
    expect(running).toBeInstanceOf(Promise);
    await expect(running).rejects.toThrow(TypeError);
  });

  it("co rejects with the very error the generator throws, and resolves with the very value it returns", async () => {
    const error = new RangeError("mine");
    const value = { mine: true };
    await expect(co((function* fails(): Awaiting<never> { yield null; throw error; })())).rejects.toBe(error);
    await expect(co((function* returns(): Awaiting<object> { yield null; return value; })())).resolves.toBe(value);
  });

  it("co throws the rejection's own error in at the yield", async () => {
    const error = new SyntaxError("bad page");
    let caught: unknown = null;
    await co(
      (function* catches(): Awaiting<void> {
        try {
          yield Promise.reject(error);
        } catch (thrown) {
          caught = thrown;
        }
      })(),
    );
    expect(caught).toBe(error);
  });

  it("co waits for a slow Promise before resuming the generator", async () => {
    let resumed = 0;
    let release: (value: string) => void = () => {};
    const running = co(
      (function* waits(): Awaiting<string> {
        const value = (yield new Promise<string>((resolve) => { release = resolve; })) as string;
        resumed += 1;
        return value;
      })(),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).toBe(0);
    release("now");
    await expect(running).resolves.toBe("now");
    expect(resumed).toBe(1);
  });
});
