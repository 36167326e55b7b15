/**
 * A clear failure for a hang: a test that waits on a crawl, a `join()` or a
 * Task that never ends fails after `ms` with a message naming what hung,
 * instead of at the test timeout with no hint.
 */

/**
 * Resolves or rejects as `promise` does, or rejects with
 * `Error("Hung: <what> did not finish within <ms> ms")` if it is still pending
 * after `ms`. The timer is cleared either way, so it keeps nothing alive.
 *
 * Limits are generous (seconds): the machines running the tests are shared,
 * and this is about the message, not about speed.
 *
 * @example
 * const result = await within(10_000, crawl(site.url), "crawl of the fixture site");
 */
export function within<T>(ms: number, promise: PromiseLike<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(function reportHang() {
      reject(new Error(`Hung: ${what} did not finish within ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, hung]).finally(function clearHangTimer() {
    clearTimeout(timer);
  });
}
