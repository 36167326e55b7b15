/**
 * A real redis-server for the Redis frontier tests: Debian's `redis-server`
 * (or `$REDIS_SERVER`), started by each test file on a free loopback port with
 * a fresh temp directory, so no test leans on a system Redis or on another
 * file's data.
 *
 * Lifecycle of a {@link RedisServer}: {@link startRedis} → (`pause()` →
 * `resume()`)* and (`stop()` or `kill()` → `restart()`)* → `remove()`. `stop()` and `kill()` end the process
 * and keep the directory, so `restart()` reloads the append-only file from it;
 * `remove()` ends the process and deletes the directory. A test file calls
 * `remove()` in its `afterAll`/`afterEach`; a server it forgets is killed when
 * the test process (or worker thread) ends, but its directory stays in the
 * temp dir.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe } from "vitest";

/** What redis-server logs once it listens (Redis 7: "Ready to accept connections tcp"). */
const READY_LINE = "Ready to accept connections";
/** How long a start may take before it counts as hung: generous, CI machines are shared. */
const START_TIMEOUT_MS = 10_000;
/** New free ports tried when another process takes the port between our probe and redis's bind. */
const START_ATTEMPTS = 5;

/**
 * Every redis-server child still running, across the test file: the `exit`
 * listener below SIGKILLs them, so a server a test forgot to remove does not
 * outlive a test process that exits normally. (An `exit` listener may only do
 * synchronous work; `kill()` is.) Workers that vitest ends by signal are
 * covered by setpriv in {@link spawnRedis}; Ctrl-C in a terminal reaches the
 * children directly, as they are in the foreground process group.
 */
const runningChildren = new Set<ChildProcess>();
process.on("exit", function killLeftoverRedisServers() {
  for (const child of runningChildren) child.kill("SIGKILL");
});

/** Options for {@link startRedis}. */
export interface StartRedisOptions {
  /**
   * Log every write to an append-only file in the server's directory
   * (`--appendonly yes --appendfsync always`), so data survives `kill()` and
   * `restart()`. Default false: nothing is ever written to disk.
   */
  appendOnly?: boolean;
  /** More arguments for redis-server, kept across `restart()` (TLS: `--tls-port`, `--tls-cert-file`, …). Default none. */
  args?: readonly string[];
}

/**
 * The redis-server binary the tests run: `$REDIS_SERVER` if set, else the
 * first `redis-server` on PATH, else null (the tests skip, see
 * {@link describeWithRedis}).
 */
export function redisServerPath(): string | null {
  const fromEnvironment = process.env["REDIS_SERVER"];
  if (fromEnvironment) return fromEnvironment;
  return findOnPath("redis-server");
}

/**
 * One redis-server child process on `127.0.0.1:port`, with its data directory.
 * Made by {@link startRedis}; the directory outlives the process until
 * `remove()`.
 */
export class RedisServer {
  /** `redis://127.0.0.1:PORT/0`, for `createClient({ url })` or `crawl --frontier`. */
  readonly url: string;
  /** The child running now, or undefined after `stop()`, `kill()` or `remove()`. */
  private child: ChildProcess | undefined;
  /** Settles when `child` has exited (already settled when there is none). */
  private exited: Promise<void> = Promise.resolve();
  /** Set by `remove()`: the directory is gone, so `restart()` refuses. */
  private removed = false;

  /** Use {@link startRedis}: this wraps a child that `startRedis` has seen get ready. */
  constructor(
    /** The loopback port, kept across `restart()`. */
    readonly port: number,
    /** The server's `--dir`: the append-only files live here, kept across `restart()`. */
    readonly dir: string,
    /** Whether the server logs writes to an append-only file (see {@link StartRedisOptions}). */
    readonly appendOnly: boolean,
    child: ChildProcess,
    /** The more arguments it was started with (see {@link StartRedisOptions}). */
    readonly args: readonly string[] = [],
  ) {
    this.url = `redis://127.0.0.1:${port}/0`;
    this.attach(child);
  }

  /** The running child's process id, or undefined when none runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Ends the process with SIGTERM (Redis flushes its append-only file) and waits for it to exit. Keeps the directory; does nothing if no process runs. A paused server is resumed to hear it. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child !== undefined && !child.killed) {
      child.kill("SIGTERM");
      this.resume(); // A server paused by `pause()` acts on the SIGTERM only once it runs again.
    }
    await this.exited;
  }

  /**
   * Pauses the process with SIGSTOP: its connections stay open and what
   * clients send waits in the kernel, unanswered, as with a Redis stuck (a
   * long fork, a swapped-out host) or a network that drops nothing but
   * delivers nothing. `resume()` (or `stop()`, `kill()`, `remove()`) ends it.
   * Does nothing if no process runs.
   */
  pause(): void {
    this.signal("SIGSTOP");
  }

  /** Resumes a process paused by `pause()` (SIGCONT): it answers what waited, in order. Does nothing if no process runs. */
  resume(): void {
    this.signal("SIGCONT");
  }

  /**
   * Sends a signal that does not end the process, by its pid: `child.kill()`
   * would set `child.killed`, and `stop()` would then take the server for
   * ended and wait for an exit that never comes.
   */
  private signal(signal: "SIGSTOP" | "SIGCONT"): void {
    const pid = this.child?.pid;
    if (pid !== undefined && this.child?.exitCode === null && this.child.signalCode === null) process.kill(pid, signal);
  }

  /** Ends the process with SIGKILL, a crash without a chance to clean up, and waits for it to exit. Keeps the directory for `restart()`; does nothing if no process runs. */
  async kill(): Promise<void> {
    this.child?.kill("SIGKILL");
    await this.exited;
  }

  /**
   * Starts redis-server again on the same port and directory, after stopping
   * the running one if any. With `appendOnly`, it reloads what was written.
   *
   * @throws Error if the server was removed, or with redis's output if it does not start (e.g. the port was taken meanwhile).
   */
  async restart(): Promise<void> {
    if (this.removed) throw new Error(`RedisServer on port ${this.port} was removed; start a new one with startRedis()`);
    await this.stop();
    this.attach(await spawnRedis(this.port, this.dir, this.appendOnly, this.args));
  }

  /** Stops the process if it runs and deletes the directory. Idempotent; the server cannot restart afterwards. */
  async remove(): Promise<void> {
    this.removed = true;
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  private attach(child: ChildProcess): void {
    this.child = child;
    this.exited = whenExited(child).then(() => {
      if (this.child === child) this.child = undefined;
    });
  }
}

/**
 * Starts a redis-server on a free loopback port with a fresh directory under
 * the OS temp dir (`cc-redis-*`), and resolves once it accepts connections.
 * The caller owns it: `await server.remove()` when done.
 *
 * It runs in the foreground with `--save ""` (no snapshots), protected mode on,
 * bound to 127.0.0.1 only, logging to stdout (read here to see it get ready).
 *
 * @throws Error if no redis-server is found, or with redis's own output if it exits before it is ready or does not get ready within 10 s.
 * @example
 * const server = await startRedis({ appendOnly: true });
 * try { … createClient({ url: server.url }) … } finally { await server.remove(); }
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const appendOnly = options.appendOnly ?? false;
  const dir = mkdtempSync(join(tmpdir(), "cc-redis-"));
  try {
    for (let attempt = 1; ; attempt += 1) {
      const port = await freeLoopbackPort();
      try {
        return new RedisServer(port, dir, appendOnly, await spawnRedis(port, dir, appendOnly, options.args ?? []), options.args ?? []);
      } catch (error) {
        // The probe freed the port and someone else bound it before redis did: try another.
        const portTaken = error instanceof Error && error.message.includes("Address already in use");
        if (!portTaken || attempt === START_ATTEMPTS) throw error;
      }
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * `describe(name, body)` when a redis-server is available, else
 * `describe.skip(name, body)` after one console warning per test process
 * (naming the Debian package), so the skip shows in the output and in the
 * skipped count. It skips only the suites declared with it: every other test
 * runs as usual on a machine without Redis.
 */
export function describeWithRedis(name: string, body: () => void): void {
  if (redisServerPath() !== null) {
    describe(name, body);
    return;
  }
  if (!warnedMissingRedis) {
    warnedMissingRedis = true;
    console.warn("redis-server not found: skipping the Redis frontier tests (Debian: apt-get install redis-server)");
  }
  describe.skip(name, body);
}
let warnedMissingRedis = false;

/** The first file called `name` in a PATH directory, or null. */
export function findOnPath(name: string): string | null {
  for (const directory of (process.env["PATH"] ?? "").split(delimiter)) {
    if (directory === "") continue;
    const candidate = join(directory, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** Binds port 0 on 127.0.0.1, reads the port the OS chose, and frees it for redis to bind. */
export async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>(function listen(resolve, reject) {
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", resolve);
  });
  const { port } = probe.address() as AddressInfo; // listening on TCP, so an AddressInfo
  await new Promise<void>(function close(resolve) {
    probe.close(() => resolve());
  });
  return port;
}

/** Spawns redis-server on `port` with `dir` and resolves with the child once it logs {@link READY_LINE}. */
function spawnRedis(port: number, dir: string, appendOnly: boolean, extra: readonly string[]): Promise<ChildProcess> {
  const path = redisServerPath();
  if (path === null) {
    return Promise.reject(new Error("redis-server not found: set REDIS_SERVER or put it on PATH (Debian: apt-get install redis-server)"));
  }
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  // appendfsync always: each write is on disk before redis replies, so a SIGKILL right after loses nothing
  // (the default, everysec, may hold a write back while an fsync is still running).
  args.push("--appendonly", appendOnly ? "yes" : "no", ...(appendOnly ? ["--appendfsync", "always"] : []));
  args.push("--daemonize", "no", "--protected-mode", "yes", "--logfile", "", ...extra);
  // util-linux's setpriv (Essential on Debian) asks Linux to SIGKILL redis when the thread that spawned it ends,
  // then execs redis, so `child.pid` is redis's own. That covers what the 'exit' listener cannot: vitest ends
  // a forks-pool worker with SIGTERM and a threads-pool worker with terminate(), and neither emits 'exit'.
  const setpriv = findOnPath("setpriv");
  const child = setpriv === null
    ? spawn(path, args, { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(setpriv, ["--pdeathsig", "KILL", path, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  runningChildren.add(child);
  child.once("exit", function forgetExitedChild() {
    runningChildren.delete(child);
  });

  return new Promise<ChildProcess>(function waitUntilReady(resolve, reject) {
    let output = "";
    function settle(error?: Error): void {
      clearTimeout(timer);
      child.stdout?.off("data", readLog);
      child.stderr?.off("data", readLog);
      child.off("exit", exitedEarly);
      child.off("error", failedToSpawn);
      // Keep draining its log: a full pipe would block redis on its next log line.
      child.stdout?.resume();
      child.stderr?.resume();
      if (error === undefined) resolve(child);
      else reject(error);
    }
    function readLog(chunk: Buffer): void {
      output += chunk.toString("utf8");
      if (output.includes(READY_LINE)) settle();
    }
    function exitedEarly(code: number | null, signal: NodeJS.Signals | null): void {
      settle(new Error(`redis-server on port ${port} exited (${signal ?? `code ${code}`}) before it was ready:\n${output}`));
    }
    function failedToSpawn(cause: Error): void {
      runningChildren.delete(child);
      settle(new Error(`Could not run ${path}`, { cause }));
    }
    const timer = setTimeout(function giveUp() {
      child.kill("SIGKILL");
      settle(new Error(`redis-server on port ${port} was not ready within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    child.stdout?.on("data", readLog);
    child.stderr?.on("data", readLog);
    child.once("exit", exitedEarly);
    child.once("error", failedToSpawn);
  });
}

/** Resolves when `child` has exited, at once if it already has. */
function whenExited(child: ChildProcess): Promise<void> {
  // exitCode/signalCode are set just before the 'exit' event: if either is set, the event has fired.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>(function waitForExit(resolve) {
    child.once("exit", () => resolve());
  });
}
