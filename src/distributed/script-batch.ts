/**
 * Several pages' calls of one frontier script sent as one: the pages that
 * finish while the previous call is on its way to Redis (or within one turn
 * of the event loop) go together, so a busy process pays one round trip,
 * one script start and one copy of the crawl's keys for several pages
 * instead of one each.
 *
 * @module
 */

/** One page's part of a batched call, and what to do with its share of the reply. */
interface Part {
  readonly args: readonly string[];
  resolve(reply: readonly unknown[]): void;
  reject(error: unknown): void;
}

/**
 * Gathers calls of one script (FINISH, PREPARE, STARTED) and sends them
 * together: at most one call in flight; the parts that come meanwhile wait
 * for it and go in the next call, flushed as soon as it is answered. A part
 * that comes while nothing is in flight goes at the end of the current turn
 * of the event loop (`setImmediate`), with every part that came in that
 * turn. A call holds at most `maxParts` parts and about `maxArgs`
 * arguments; the rest go in the next.
 *
 * Each part's arguments are sent as they are, one after the other, after
 * the `head` (the owner, for the scripts that take one; made again for each
 * call when it is a function, as a call's own id is); the script answers
 * `width` values per part, in the parts' order.
 *
 * @remarks A part's promise settles when Redis has run the call: what the
 * caller did after it (a journal line written, a lease dropped) happened
 * before, in the order the caller chose. A failed call rejects every part in it.
 */
export class ScriptBatch {
  private waiting: Part[] = [];
  private inFlight = false;
  private scheduled = false;

  constructor(
    /** Sends one call with these arguments (after the script's keys) and resolves with its reply. */
    private readonly send: (args: readonly string[]) => Promise<unknown>,
    /** The arguments every call starts with, or what makes them for each call. */
    private readonly head: readonly string[] | (() => readonly string[]),
    /** Values of the reply per part. */
    private readonly width: number,
    private readonly maxParts = 64,
    private readonly maxArgs = 1200,
  ) {}

  /** Sends `args` as one part of the next call; resolves with this part's values of the reply. */
  call(args: readonly string[]): Promise<readonly unknown[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ args, resolve, reject });
      this.schedule();
    });
  }

  /** Parts waiting, not yet sent. */
  get size(): number {
    return this.waiting.length;
  }

  /** Flushes at the end of this turn, unless a call is in flight (its answer flushes) or a flush is due already. */
  private schedule(): void {
    if (this.inFlight || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Sends the parts waiting (as many as one call holds) in one call. */
  private flush(): void {
    if (this.inFlight || this.waiting.length === 0) return;
    const head = typeof this.head === "function" ? this.head() : this.head;
    let count = 0;
    let argCount = head.length;
    while (count < this.waiting.length && count < this.maxParts) {
      const size = this.waiting[count]?.args.length ?? 0;
      if (count > 0 && argCount + size > this.maxArgs) break;
      argCount += size;
      count += 1;
    }
    const parts = this.waiting.splice(0, count);
    const args: string[] = [...head];
    for (const part of parts) for (const arg of part.args) args.push(arg);
    this.inFlight = true;
    const batch = this;
    void this.send(args).then(
      function answered(reply) {
        const values = reply as unknown[];
        for (const [i, part] of parts.entries()) part.resolve(values.slice(i * batch.width, (i + 1) * batch.width));
      },
      function failed(error: unknown) {
        for (const part of parts) part.reject(error);
      },
    ).finally(function next() {
      batch.inFlight = false;
      batch.flush();
    });
  }
}
