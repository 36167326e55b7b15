import { describe, expectTypeOf, it } from "vitest";
import type { Coroutine, Future } from "../../src/generators/futures.js";
import type { Task } from "../../src/generators/tasks.js";

describe("Future", () => {
  it("types `yield* future` as the Future's result type", () => {
    function* reader(future: Future<Uint8Array>): Coroutine<number> {
      const chunk = yield* future;
      expectTypeOf(chunk).toEqualTypeOf<Uint8Array>();
      return chunk.length;
    }
    expectTypeOf(reader).returns.toEqualTypeOf<Coroutine<number>>();
  });

  it("types `yield*` of a coroutine as its return type", () => {
    // biome-ignore lint/correctness/useYield: a coroutine that returns at once; `yield*` of it is what is typed here.
    function* inner(): Coroutine<string> {
      return "done";
    }
    function* outer(): Coroutine<number> {
      const text = yield* inner();
      expectTypeOf(text).toEqualTypeOf<string>();
      return text.length;
    }
    expectTypeOf(outer()).toEqualTypeOf<Generator<Future<unknown>, number, undefined>>();
  });

  it("counts a Future<number> as a Future<unknown>", () => {
    expectTypeOf<Future<number>>().toExtend<Future<unknown>>();
    expectTypeOf<Task<number>>().toExtend<Future<number>>();
  });

  it("types a bare yield without an annotation as undefined, not the result", () => {
    function* bare(future: Future<number>): Coroutine<void> {
      const sent = yield future;
      expectTypeOf(sent).toEqualTypeOf<undefined>();
    }
    expectTypeOf(bare).parameter(0).toEqualTypeOf<Future<number>>();
  });

  it("types `await future` as the result type", () => {
    async function bridge(future: Future<Uint8Array>): Promise<number> {
      const bytes = await future;
      expectTypeOf(bytes).toEqualTypeOf<Uint8Array>();
      return bytes.length;
    }
    expectTypeOf(bridge).returns.resolves.toEqualTypeOf<number>();
  });
});
