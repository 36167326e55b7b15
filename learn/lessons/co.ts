/**
 * The driver (exercise 9 of the workshop): `co`, the few lines that run a
 * generator as an async function. It is what `await` compiles to: a
 * generator that yields a Promise where an async function awaits it, and a
 * driver that resumes it with the Promise's value, or throws the Promise's
 * error in at the `yield`, and settles its own Promise with what the
 * generator returns or throws. Before JavaScript had `async`/`await`,
 * libraries did exactly this (the `co` package, TypeScript's `__awaiter`
 * when it compiled to ES2015), as stage 2's `Task.step` does with Futures.
 * The primer's section on what `await` compiles to (docs/start-here.md)
 * comes before this exercise.
 *
 * @example
 * ```ts
 * // The same coroutine, twice:
 * async function native(url: string) { const page = await fetchPage(url); return page.length; }
 * function* driven(url: string) { const page = yield fetchPage(url); return page.length; }
 * await native(u) === await co(driven(u)); // the same value, thrown errors, and microtask order
 * ```
 *
 * @module
 */

/** A generator that yields what an async function would await, and is resumed with its value. */
export type Awaiting<T> = Generator<unknown, T, unknown>;

/**
 * Runs `coroutine` as an async function runs: returns a Promise at once, and
 * drives the generator to its end.
 *
 * - The generator runs synchronously up to its first `yield`, as an async
 *   function runs up to its first `await`, inside this call.
 * - What it yields is awaited as `await` would: `Promise.resolve(yielded)`
 *   (a plain value too). Its value is sent back in with `coroutine.next(value)`;
 *   its error is thrown in at the `yield` with `coroutine.throw(error)`,
 *   where a `try`/`catch` around the `yield` catches it.
 * - When the generator returns, the Promise resolves with the value it
 *   returned; when it throws (at any step, the first included), the Promise
 *   rejects with what it threw: `co` itself never throws.
 * - Each resumption runs as one Promise callback (a microtask), as the code
 *   after an `await` does, so `co` and `await` take turns with other
 *   microtasks in the same order. No `setTimeout`, no `setImmediate`.
 */
export function co<T>(coroutine: Awaiting<T>): Promise<T> {
  return new Promise<T>(function drive(resolve, reject) {
    function step(resume: () => IteratorResult<unknown, T>): void {
      let next: IteratorResult<unknown, T>;
      try {
        next = resume();
      } catch (error) {
        reject(error);
        return;
      }
      if (next.done) {
        resolve(next.value);
        return;
      }
      Promise.resolve(next.value).then(
        function fulfilled(value) { step(() => coroutine.next(value)); },
        function rejected(error: unknown) { step(() => coroutine.throw(error)); },
      );
    }
    step(() => coroutine.next());
  });
}
