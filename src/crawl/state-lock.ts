/**
 * The lock of a `--state` directory, and the check that the directory can
 * be written at all: the two things `state.ts` asks of the file system
 * before its log.
 *
 * ## The lock
 *
 * `DIR/lock` holds the holder's pid and host name, one a line, and its
 * holder touches it (its mtime) every {@link LOCK_BEAT_MS}: a heartbeat. A
 * lock is live while its holder is: its mtime is at most {@link LOCK_STALE_MS}
 * old and, when it was written on this host, its pid is a running process.
 * Anything else is a dead holder's lock, taken over: a process killed by
 * `kill -9` (its pid gone), and a lock left before a reboot or a container
 * restart, whose pid may since belong to another process but whose mtime
 * stopped moving when its holder did.
 *
 * @remarks A pid alone cannot tell a dead holder from a live one: after a
 * reboot, or in a container where every run is pid 1 or 7, the pid in the
 * lock is soon some other live process, and the state was refused for good.
 * proper-lockfile (4.1.2) keeps the same heartbeat, with a `mkdir` lock; it
 * was not taken because loading it installs signal-exit 3's listeners on
 * every signal and patches `process.emit` in every program that imports the
 * crawler, whose stop on Ctrl-C the `crawl` command handles itself.
 * The clock and the timer are the ones there when this module was loaded, so
 * a test that fakes timers (a simulated network's virtual clock) leaves the
 * heartbeat, which other processes read, on the real time.
 *
 * @module
 */
import { accessSync, constants, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";

/** How often the holder touches its lock. */
export const LOCK_BEAT_MS = 2_000;

/** How long a lock untouched stays live: five beats missed (a holder stopped, or an event loop blocked that long). */
export const LOCK_STALE_MS = 10_000;

/** The wall clock and the timers as they were when this module was loaded (see the module's remarks). */
const wallClock = Date.now;
const everyMs = setInterval;
const stopEvery = clearInterval;

/** Lock files this process holds, by path: a second crawl here on the same state is refused too. */
const heldLocks = new Set<string>();

/** Who holds a live lock: the pid, and the host when it is another. */
export interface LockHolder {
  readonly pid: number;
  /** The host the holder runs on, when it is not this one. */
  readonly host: string | null;
}

/**
 * The live holder of the lock at `path`, or null when there is none: no lock,
 * one that does not name a pid, one untouched for {@link LOCK_STALE_MS}, one
 * whose pid is not running on this host, or this process's own lock once
 * released (a pid reused by this very process after a restart).
 */
export function lockHolder(path: string): LockHolder | null {
  let text: string;
  let touchedMs: number;
  try {
    text = readFileSync(path, "utf8");
    touchedMs = statSync(path).mtimeMs;
  } catch {
    return null;
  }
  const [pidLine = "", hostLine = ""] = text.split("\n");
  const pid = Number.parseInt(pidLine, 10);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (wallClock() - touchedMs > LOCK_STALE_MS) return null;
  const host = hostLine.trim();
  if (host !== "" && host !== hostname()) return { pid, host };
  if (pid === process.pid) return heldLocks.has(path) ? { pid, host: null } : null;
  try {
    process.kill(pid, 0);
    return { pid, host: null };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? { pid, host: null } : null;
  }
}

/**
 * A lock this process holds: made with `O_EXCL` (here or not at all: two
 * processes cannot both), touched every {@link LOCK_BEAT_MS} by a timer that
 * keeps no process alive, and removed by `release()`.
 */
export class StateLock {
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly content: string;
  private released = false;

  /**
   * Takes the lock at `path`, taking over a dead holder's.
   *
   * @param onLost - Called (once) when a beat finds the lock gone or another's: the state is no longer this process's.
   * @throws TypeError naming the `state` option when a live holder has it; the file system's error when the lock cannot be written.
   */
  constructor(
    readonly path: string,
    private readonly onLost: (why: string) => void = () => {},
  ) {
    this.content = `${process.pid}\n${hostname()}\n`;
    for (let tries = 0; ; tries++) {
      try {
        writeFileSync(path, this.content, { flag: "wx" });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries > 0) throw error;
      }
      refuseIfHeld(path);
      rmSync(path, { force: true }); // Left by a holder that is gone.
    }
    heldLocks.add(path);
    const lock = this;
    this.timer = everyMs(function beatNow() {
      lock.beat();
    }, LOCK_BEAT_MS);
    this.timer.unref();
  }

  /**
   * Touches the lock, so other processes see its holder alive; the timer's
   * tick. False, and `onLost` called, when the lock is no longer this
   * process's (removed, or taken over by a process that found it stale).
   */
  beat(): boolean {
    if (this.released) return false;
    try {
      if (readFileSync(this.path, "utf8") !== this.content) throw new Error("another process holds it now");
      const now = new Date(wallClock());
      utimesSync(this.path, now, now);
      return true;
    } catch (error) {
      this.stop();
      this.onLost(error instanceof Error ? error.message : String(error));
      return false;
    }
  }

  /** Stops the heartbeat and removes the lock (when it is still this process's). Safe to call twice. */
  release(): void {
    if (this.released) return;
    this.stop();
    try {
      if (readFileSync(this.path, "utf8") === this.content) rmSync(this.path, { force: true });
    } catch {
      // Already gone.
    }
  }

  private stop(): void {
    this.released = true;
    stopEvery(this.timer);
    heldLocks.delete(this.path);
  }
}

/** Throws when a live holder has the lock at `path` (see {@link lockHolder}). */
export function refuseIfHeld(path: string): void {
  const holder = lockHolder(path);
  if (holder === null) return;
  const who = holder.host === null ? `process ${holder.pid}` : `process ${holder.pid} on ${holder.host}`;
  const dir = dirname(path);
  throw new TypeError(`state: ${dir} is in use by ${who} (if that is no crawl, delete ${path})`);
}

/**
 * Why the state in `dir` could not be written, as the file system says it
 * (`EROFS: read-only file system`, `EACCES: permission denied (/srv)`,
 * `ENOTDIR: not a directory`), or null when it can as far as can be told
 * without writing: `dir` is a directory this process may write in (its log
 * and lock too, when there), or does not exist yet and the nearest folder
 * above it that does may be written in.
 *
 * @remarks Checked before the first request, as the `crawl` command checks
 * its output files, so that a read-only disk is a usage error naming its
 * errno rather than a crawl that stops at its first record. `access(2)`
 * reports `EROFS` for a read-only file system even to root.
 */
export function stateUnwritable(dir: string): string | null {
  const target = resolve(dir);
  let existing = target;
  for (;;) {
    try {
      if (!statSync(existing).isDirectory()) return `ENOTDIR: not a directory${shownPath(existing, target)}`;
      break;
    } catch (error) {
      const parent = dirname(existing);
      const code = errnoOf(error); // ENOTDIR: a file on the way, found as such further up.
      if ((code !== "ENOENT" && code !== "ENOTDIR") || parent === existing) return systemReason(error, existing, target);
      existing = parent;
    }
  }
  const paths = existing === target ? [target, join(target, "crawl.log"), join(target, "lock")] : [existing];
  for (const path of paths) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      if (path !== existing && errnoOf(error) === "ENOENT") continue;
      return systemReason(error, path, target);
    }
  }
  return null;
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** `EACCES: permission denied (/srv)`: Node's message without the call and path it names, then the path when not `target`. */
function systemReason(error: unknown, path: string, target: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${message.replace(/, \w+ '.*'$/, "")}${shownPath(path, target)}`;
}

function shownPath(path: string, target: string): string {
  return path === target ? "" : ` (${path})`;
}
