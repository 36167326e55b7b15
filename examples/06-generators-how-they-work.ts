/**
 * Example 06: how JavaScript generators work, the machinery stage 2 is built
 * on. No sockets and no event loop: just a paused function and the three
 * ways to resume it.
 *
 * | Python generator     | JavaScript generator            |
 * |----------------------|---------------------------------|
 * | `gen.send(value)`    | `gen.next(value)`               |
 * | `gen.throw(exc)`     | `gen.throw(error)`              |
 * | `gen.close()`        | `gen.return(value)`             |
 * | `StopIteration.value`| `{ done: true, value }`         |
 * | `yield from inner`   | `yield* inner`                  |
 *
 * A generator's frame (its locals and where it stopped) lives on the heap,
 * not on the stack, so it survives between calls: that is what lets a
 * coroutine keep its state in local variables where a callback had to keep
 * it on `this`.
 *
 * Run it: `npx tsx examples/06-generators-how-they-work.ts` (it needs no web
 * site, so a URL argument is ignored).
 *
 * @see Chapter, "How Python Generators Work" and "Factoring Coroutines With yield from"
 * @module
 */
import { fileURLToPath } from "node:url";

/**
 * A generator that receives values: each `yield` hands a value out and
 * evaluates to what the next `next(value)` sends in.
 */
function* accumulate(): Generator<number, string, number> {
  let total = 0;
  try {
    for (;;) {
      const received = yield total; // Paused here between calls.
      console.log(`  accumulate received ${received}`);
      total += received;
    }
  } catch (error) {
    console.log(`  accumulate caught ${String(error)} at its yield`);
    return `stopped by an error at total ${total}`;
  } finally {
    console.log("  accumulate runs its finally block");
  }
}

/** An inner generator that yields twice and returns a value. */
function* inner(): Generator<string, number, undefined> {
  console.log("  inner starts");
  yield "first";
  yield "second";
  console.log("  inner returns 42");
  return 42;
}

/** Delegates to `inner` with `yield*`: its yields pass straight through, its return value comes back. */
function* outer(): Generator<string, number, undefined> {
  const result = yield* inner(); // Python: result = yield from inner()
  console.log(`  outer got ${result} from yield*`);
  return result + 1;
}

/** An iterator result as `{ value, done }`, showing `undefined` too (JSON would drop it). */
function show(result: IteratorResult<unknown, unknown>): string {
  return `{ value: ${JSON.stringify(result.value) ?? "undefined"}, done: ${String(result.done)} }`;
}

/** Drives the generators by hand and prints what happens at each call. */
export async function main(_rootUrl?: string): Promise<void> {
  console.log("Stage 2, generators: a generator pauses at each yield until next() resumes it");
  console.log("next(value) is Python's send(value):");
  const gen = accumulate();
  console.log(`  next()   → ${show(gen.next())}   (runs to the first yield; nothing is received)`);
  console.log(`  next(10) → ${show(gen.next(10))}`);
  console.log(`  next(5)  → ${show(gen.next(5))}`);

  console.log("throw(error) raises the error at the paused yield:");
  console.log(`  throw()  → ${show(gen.throw(new Error("enough")))}`);
  console.log(`  next(1)  → ${show(gen.next(1))}   (a finished generator stays finished)`);

  console.log("return(value) is Python's close(): the generator ends, finally blocks run:");
  const closing = accumulate();
  closing.next();
  console.log(`  return() → ${show(closing.return("closed"))}`);

  console.log("yield* delegates, and evaluates to the inner generator's return value:");
  const delegating = outer();
  let step = delegating.next();
  while (step.done !== true) {
    console.log(`  outer yielded ${JSON.stringify(step.value)} (it came from inner)`);
    step = delegating.next();
  }
  console.log(`  done: ${show(step)}   (Python: StopIteration(43).value)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
