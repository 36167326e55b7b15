/**
 * The take pump: the one loop in a crawler process that keeps a
 * `RedisFrontier` (redis-frontier.ts) supplied with URLs leased from Redis,
 * so that the crawl core's `take()`, which cannot wait, finds them here.
 *
 * @module
 */
import { BlockFifo } from "../crawl/block-fifo.js";
import type { QueueItem } from "../crawl/visit.js";

/** What the pump asks of the frontier behind it: every Redis call and every lease stay there. */
export interface TakeSource {
  /**
   * How many URLs this process could use now, those ready here included:
   * `maxTasks` less the URLs handed out and not yet done with.
   */
  wanted(): number;
  /**
   * Leases up to `count` URLs to this process in one step (the TAKE script),
   * which then holds them; resolves with those it got: none when none is queued.
   */
  lease(count: number): Promise<QueueItem[]>;
  /** URLs leased are ready here: `take()` finds them now (the frontier tells the crawl core, which may be waiting). */
  arrived(): void;
  /** URLs leased after the pump was shut down: not ours to fetch. */
  unwanted(items: readonly QueueItem[]): void;
  /** A lease failed: Redis stopped answering. The frontier stops the crawl, and shuts the pump down. */
  failed(error: unknown): void;
}

/**
 * Keeps URLs ready for `take()`: while the frontier wants more than are
 * ready here ({@link TakeSource.wanted}), it asks Redis, through
 * {@link TakeSource.lease}, for the difference, in one script call. When
 * Redis has none, the pump waits for a reason to look again,
 * {@link TakePump.wake}: a message on the crawl's channel, the frontier's
 * slow timer, or a shutdown.
 *
 * The loop runs once per process at a time (`pumping`), so the core's many
 * `take()` calls cost one TAKE at a time, not one each. A wake that comes
 * while TAKE is in flight is counted (`wakes`), and the loop then looks
 * again at once instead of waiting: the URL queued meanwhile may have come
 * after TAKE looked.
 *
 * @remarks `take()` answers at once, from what is here, as the crawl core
 * asks every store to: the waiting for Redis is this loop's, and the core
 * hands out short waits while nothing is here and the frontier says more
 * may come.
 */
export class TakePump {
  /** URLs leased to this process and not handed out yet, and URLs put back here (their host's turn came): oldest first. */
  private readonly ready = new BlockFifo<QueueItem>();
  private pumping = false;
  /** Bumped by every reason to look at Redis again; the pump waits only if none came while it looked. */
  private wakes = 0;
  private wakeUp: (() => void) | null = null;
  /** Set by `shutdown()` and `close()`. */
  private closed = false;

  constructor(private readonly source: TakeSource) {}

  /** URLs ready here. */
  size(): number {
    return this.ready.length;
  }

  /** Whether `shutdown()` or `close()` was called. */
  isShutdown(): boolean {
    return this.closed;
  }

  /** The next URL ready here, or undefined when none is (yet). */
  take(): QueueItem | undefined {
    return this.closed || this.ready.length === 0 ? undefined : this.ready.shift();
  }

  /** Asks Redis for as many URLs as the frontier wants beyond those ready here, unless the pump is at it already. */
  fill(): void {
    void this.pump();
  }

  /** A URL leased here goes back to wait for the next `take()`. */
  putBack(item: QueueItem): void {
    this.ready.push(item);
  }

  /** Gives the pump a reason to look at Redis again. */
  wake(): void {
    this.wakes += 1;
    const wakeUp = this.wakeUp;
    this.wakeUp = null;
    wakeUp?.();
  }

  /**
   * The pump stops asking Redis, and `take()` hands out nothing more.
   *
   * @returns the URLs that were ready here, still leased, for the frontier to hand back.
   */
  shutdown(): QueueItem[] {
    this.closed = true;
    this.wake();
    const dropped: QueueItem[] = [];
    while (this.ready.length > 0) dropped.push(this.ready.shift());
    return dropped;
  }

  /** The frontier is closing: the pump stops asking Redis (the crawl is over by now). */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /**
   * Asks Redis for URLs while the frontier wants more than are ready here;
   * when Redis has none, waits for a reason to look again (see
   * {@link TakePump.wake}). One at a time per process.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        const count = this.source.wanted() - this.ready.length;
        if (this.closed || count <= 0) break;
        const wakes = this.wakes;
        const taken = await this.source.lease(count);
        if (this.closed) this.source.unwanted(taken); // Shut down meanwhile: not ours to fetch.
        else if (taken.length > 0) {
          for (const next of taken) this.ready.push(next);
          this.source.arrived();
        }
        if (taken.length === 0 && wakes === this.wakes) await new Promise<void>((resolve) => (this.wakeUp = resolve));
      }
    } catch (error) {
      this.source.failed(error);
    } finally {
      this.pumping = false;
    }
  }
}
