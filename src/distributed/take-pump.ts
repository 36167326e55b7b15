/**
 * The take pump: the one loop in a crawler process that serves the workers
 * waiting in a `RedisFrontier`'s `take()` (redis-frontier.ts), asking Redis
 * for URLs on their behalf.
 *
 * @module
 */
import type { QueueItem } from "../crawl/visit.js";
import { QueueShutDown } from "../asyncawait/joinable-queue.js";

/** What the pump asks of the frontier behind it: every Redis call and every lease stay there. */
export interface TakeSource {
  /**
   * Leases up to `count` URLs to this process in one step (the TAKE script),
   * which then holds them; resolves with those it got: none when none is queued.
   */
  lease(count: number): Promise<QueueItem[]>;
  /** URLs leased for workers that are no longer waiting (the pump was shut down meanwhile): not ours to fetch. */
  unwanted(items: readonly QueueItem[]): void;
  /** A lease failed: Redis stopped answering. The frontier stops the crawl, and shuts the pump down. */
  failed(error: unknown): void;
}

/**
 * Serves `take()`: hands a worker a URL put back here if there is one, else
 * parks it and asks Redis, through {@link TakeSource.lease}, for as many URLs
 * as there are workers parked, in one script call. When Redis has none, the
 * pump waits for a reason to look again, {@link TakePump.wake}: a message on
 * the crawl's channel, the frontier's slow timer, or a shutdown.
 *
 * The loop runs once per process at a time (`pumping`), so N parked workers
 * cost one TAKE, not N. A wake that comes while TAKE is in flight is counted
 * (`wakes`), and the loop then looks again at once instead of waiting: the
 * URL queued meanwhile may have come after TAKE looked.
 *
 * @remarks Like stage 3's `JoinableQueue.get()`, a `take()` parks on a promise
 * that is settled with its item; but no `put` here hands the item over (it sits
 * in Redis, queued by any process), so one loop goes and asks for every parked worker.
 */
export class TakePump {
  /** Items put back here (their host's turn came): still leased by this process, served first. */
  private readonly ready: QueueItem[] = [];
  /** Workers waiting in `take()`, oldest first. */
  private readonly getters: Array<{ resolve(item: QueueItem): void; reject(reason: unknown): void }> = [];
  private pumping = false;
  /** Bumped by every reason to look at Redis again; the pump waits only if none came while it looked. */
  private wakes = 0;
  private wakeUp: (() => void) | null = null;
  /** Set by `shutdown()` and `close()`. */
  private closed = false;

  constructor(private readonly source: TakeSource) {}

  /** Items put back and waiting here for a worker. */
  size(): number {
    return this.ready.length;
  }

  /** Whether `shutdown()` or `close()` was called. */
  isShutdown(): boolean {
    return this.closed;
  }

  /**
   * The next URL to fetch: one put back here, or the next one Redis leases
   * to this process, waiting while none is queued.
   *
   * @throws QueueShutDown (a rejection) once the pump is shut down: at once,
   * or when `shutdown()` finds this `take()` waiting.
   */
  take(): Promise<QueueItem> {
    const item = this.ready.shift();
    if (item !== undefined) return Promise.resolve(item);
    if (this.closed) return Promise.reject(new QueueShutDown());
    const { getters } = this;
    const waiting = new Promise<QueueItem>(function waitForItem(resolve, reject) {
      getters.push({ resolve, reject });
    });
    void this.pump();
    return waiting;
  }

  /** An item leased here goes to the oldest waiting worker, or waits here for the next `take()`. */
  putBack(item: QueueItem): void {
    const getter = this.getters.shift();
    if (getter === undefined) this.ready.push(item);
    else getter.resolve(item);
  }

  /** Gives the pump a reason to look at Redis again. */
  wake(): void {
    this.wakes += 1;
    const wakeUp = this.wakeUp;
    this.wakeUp = null;
    wakeUp?.();
  }

  /**
   * Every `take()` waiting, and every later one, rejects with
   * {@link QueueShutDown}; the pump stops asking Redis. With `immediate`,
   * the items put back here are dropped too.
   *
   * @returns the items dropped, still leased here, for the frontier to hand back.
   */
  shutdown(immediate = false): QueueItem[] {
    this.closed = true;
    for (const getter of this.getters.splice(0)) getter.reject(new QueueShutDown());
    this.wake();
    return immediate ? this.ready.splice(0) : [];
  }

  /**
   * The frontier is closing: a later `take()` rejects and the pump stops
   * asking Redis. Workers waiting are left as they are (the crawl is over by
   * now; `shutdown()` ended them).
   */
  close(): void {
    this.closed = true;
  }

  /**
   * Serves the workers waiting in `take()`: asks Redis for as many URLs as
   * there are waiting workers; when there are none, waits for a reason to
   * look again (see {@link TakePump.wake}). One at a time per process.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.getters.length > 0 && !this.closed) {
        const item = this.ready.shift();
        if (item !== undefined) {
          this.getters.shift()?.resolve(item);
          continue;
        }
        const wakes = this.wakes;
        const taken = await this.source.lease(this.getters.length);
        const left: QueueItem[] = [];
        for (const next of taken) {
          const getter = this.closed ? undefined : this.getters.shift();
          if (getter === undefined) left.push(next);
          else getter.resolve(next);
        }
        if (left.length > 0) this.source.unwanted(left); // Shut down meanwhile: not ours to fetch.
        if (taken.length === 0 && wakes === this.wakes) await new Promise<void>((resolve) => (this.wakeUp = resolve));
      }
    } catch (error) {
      this.source.failed(error);
    } finally {
      this.pumping = false;
    }
  }
}
