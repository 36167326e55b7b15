/**
 * The bottle's virtual clock: `@sinonjs/fake-timers` installed on the global
 * object, driven so that time moves only when nothing else can run.
 *
 * @module
 */
import { syncBuiltinESMExports } from "node:module";
import { withGlobal, type Clock as InstalledClock } from "@sinonjs/fake-timers";

/** Where virtual time starts: `Date.now()` in the bottle, 2026-01-01T00:00:00.000Z. */
export const EPOCH = Date.UTC(2026, 0, 1);

/** The real `setImmediate`, kept before any clock is installed: the driver yields to Node's loop with it. */
const realSetImmediate = globalThis.setImmediate;

/** What a simulated run could not finish: nothing could run, no timer was set, and the work was still pending. */
export class DeadlockError extends Error {
  override readonly name = "DeadlockError";
}

/** What a virtual clock was asked to fake: time, and the timers that wait for it. */
const FAKED = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] as const;

/**
 * Virtual time for everything in this process: while installed,
 * `setTimeout`/`setInterval` (global, and `node:timers` and
 * `node:timers/promises`, which stage 3 sleeps with), `clearTimeout`/
 * `clearInterval`, `Date` and `performance.now()` (global and
 * `node:perf_hooks`) read and wait on a clock that starts at {@link EPOCH}
 * and moves only when {@link VirtualClock.run} moves it.
 *
 * `run(work)` starts `work` and then repeats: let Node run everything that
 * can run now (microtasks, `process.nextTick`, immediates: one real
 * `setImmediate` turn, repeated while an immediate is still pending), then
 * fire the earliest virtual timer, jumping the clock to its time (never
 * while real I/O the work started, such as a file read, is under way: it
 * comes back in real time, and time waits for it). A crawl of
 * 10,000 pages whose responses take a second each therefore costs only its
 * CPU time. If nothing can run and no timer is set while `work` is still
 * pending, the run fails with {@link DeadlockError}.
 *
 * What stays real, and why:
 * - `setImmediate`, `process.nextTick`, `queueMicrotask`: they mean "after
 *   what runs now", not "later"; fake-timers would also put a 0 ms timer set
 *   inside a timer one virtual millisecond later, which would bill every
 *   turn of stages 1 and 2's loops (a `setImmediate` each) a millisecond.
 * - `node:timers/promises`: fake-timers replaces its functions on the CJS
 *   module object; ES modules import the builtin's named exports, which Node
 *   updates only on `syncBuiltinESMExports()`, so the clock calls it after
 *   installing and after uninstalling. That is how stage 3's
 *   `import { setTimeout as sleep } from "node:timers/promises"` sleeps in
 *   virtual time without a line of it changing.
 * - undici reads the global timers at each call, so its timers follow the
 *   clock. Its coarse one-second clock is a module-level timer that would
 *   outlive a run (a real tick ticking into virtual time, or a virtual one
 *   left behind), but stage 3 starts none of it: undici's connect, headers
 *   and body timeouts, the only users, are off (its own timer and each
 *   socket's idle clock bound an attempt, src/http/http-client.ts), and its
 *   keep-alive timer is one of the global ones.
 * - `Math.random()`: the bottle draws from its own seeded source; the
 *   crawl's jitter (off by default) is the crawl core's to seed.
 *
 * @remarks One clock at a time per process: it replaces globals. A real
 * crawl running at the same time in the same process would wait on the
 * virtual clock too.
 * @see asyncio's `test_utils.TestLoop` (Lib/test/test_asyncio/utils.py), which runs real loops on virtual time.
 */
export class VirtualClock {
  private clock: InstalledClock | null = null;

  /** The virtual time, ms since {@link EPOCH}. */
  get now(): number {
    return this.clock === null ? 0 : this.clock.now - EPOCH;
  }

  /** Virtual timers set and not yet fired or cleared. */
  get timers(): number {
    return this.clock?.countTimers() ?? 0;
  }

  /** Installs the clock. @throws Error if a clock is installed already. */
  install(): void {
    if (this.clock !== null) throw new Error("the virtual clock is installed already");
    this.clock = withGlobal(globalThis).install({ now: EPOCH, toFake: [...FAKED], shouldClearNativeTimers: true, loopLimit: 10_000_000 });
    syncBuiltinESMExports();
  }

  /** Puts the real timers, `Date` and `performance.now()` back; does nothing when not installed. */
  uninstall(): void {
    const clock = this.clock;
    if (clock === null) return;
    this.clock = null;
    clock.uninstall();
    syncBuiltinESMExports();
  }

  /**
   * Runs `work` on virtual time until it settles, and returns what it
   * resolved to.
   *
   * @throws what `work` rejected with; {@link DeadlockError} when it can no
   * longer settle; whatever a timer callback threw.
   */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const clock = this.installed();
    const outcome = new Outcome<T>();
    const before = realResources();
    work().then(outcome.resolved, outcome.rejected);
    let idle = 0;
    for (;;) {
      await turn(); // everything that can run now runs
      const settled = outcome.settled;
      if (settled !== null) {
        if ("error" in settled) throw settled.error;
        return settled.value;
      }
      if (immediatePending()) continue;
      if (realWorkPending(before)) continue; // real I/O (a file read, a state directory's writes) comes back in real time
      if (clock.countTimers() === 0) {
        idle += 1;
        if (idle > 3) throw new DeadlockError(`nothing can run and no timer is set at virtual ${this.now} ms, yet the work has not settled`);
        continue;
      }
      idle = 0;
      clock.next(); // time jumps to the earliest timer, which fires
    }
  }

  /** Fires the timers left, in virtual time order, until none is left or `limit` fired; returns how many are left. */
  async drain(limit = 10_000): Promise<number> {
    const clock = this.installed();
    for (let fired = 0; fired < limit; ) {
      await turn();
      if (immediatePending()) continue;
      if (clock.countTimers() === 0) return 0;
      clock.next();
      fired += 1;
    }
    return clock.countTimers();
  }

  private installed(): InstalledClock {
    if (this.clock === null) throw new Error("the virtual clock is not installed: call install() first");
    return this.clock;
  }
}

/** How a run's work settled: null while it is pending. */
class Outcome<T> {
  settled: { value: T } | { error: unknown } | null = null;
  readonly resolved = (value: T): void => {
    this.settled = { value };
  };
  readonly rejected = (error: unknown): void => {
    this.settled = { error };
  };
}

/** One turn of Node's real loop: microtasks and nextTicks drain, then the immediates queued before this one run. */
function turn(): Promise<void> {
  return new Promise(function waitForImmediate(resolve) {
    realSetImmediate(resolve);
  });
}

/** How many of each kind of real resource (a pending file request, a socket, …) the process holds, immediates and timers aside. */
function realResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) if (kind !== "Immediate" && kind !== "Timeout") counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Whether the process holds more of some real resource than `before`: real I/O the work started is still under way. */
function realWorkPending(before: ReadonlyMap<string, number>): boolean {
  for (const [kind, count] of realResources()) if (count > (before.get(kind) ?? 0)) return true;
  return false;
}

/** Whether an immediate is still queued (one queued by an immediate of the last turn). */
function immediatePending(): boolean {
  return process.getActiveResourcesInfo().includes("Immediate");
}
