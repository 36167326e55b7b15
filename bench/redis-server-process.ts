/**
 * A redis-server of its own for R1: Debian's `redis-server` (or
 * `$REDIS_SERVER`) on a free loopback port, in a fresh temporary directory,
 * with nothing written to disk (`--save '' --appendonly no`). Killed, and
 * its directory removed, when the scenario is over.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** What redis-server logs once it listens (Redis 7: "Ready to accept connections tcp"). */
const READY_LINE = "Ready to accept connections";

/** The redis-server to run: `$REDIS_SERVER`, else the first on PATH, else Debian's; null when there is none. */
export function redisServerPath(): string | null {
  const fromEnvironment = process.env["REDIS_SERVER"];
  if (fromEnvironment !== undefined && fromEnvironment !== "") return fromEnvironment;
  const candidates = [...(process.env["PATH"] ?? "").split(delimiter).filter(Boolean).map(inDirectory("redis-server")), "/usr/bin/redis-server"];
  return candidates.find(existsSync) ?? null;
}

function inDirectory(name: string): (directory: string) => string {
  return function pathIn(directory: string): string {
    return join(directory, name);
  };
}

/** A running redis-server: its `redis://` URL, its port and directory. */
export class RedisServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** `redis://127.0.0.1:PORT/0`. */
    readonly url: string,
    /** Its temporary directory (empty: nothing is saved), removed by {@link RedisServerProcess.remove}. */
    readonly dir: string,
  ) {}

  /**
   * Starts redis-server at `path` on a free port of 127.0.0.1 and resolves
   * once it accepts connections. Another process may take the probed port
   * before redis binds it: then it tries another, five times in all.
   *
   * @throws Error with redis's output if it does not get ready within 10 s.
   */
  static async start(path: string): Promise<RedisServerProcess> {
    const dir = mkdtempSync(join(tmpdir(), "bench-redis-"));
    for (let attempt = 1; ; attempt++) {
      const port = await freeLoopbackPort();
      try {
        const child = await spawnRedis(path, port, dir);
        return new RedisServerProcess(child, `redis://127.0.0.1:${port}/0`, dir);
      } catch (error) {
        const taken = error instanceof Error && error.message.includes("Address already in use");
        if (!taken || attempt === 5) {
          rmSync(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  /** Kills the server (nothing in it is worth keeping), waits for it to exit, and removes its directory. */
  async remove(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
      this.child.kill("SIGKILL");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Binds port 0 on 127.0.0.1, reads the port the system chose, and frees it for redis. */
function freeLoopbackPort(): Promise<number> {
  return new Promise<number>(function probe(resolve, reject) {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", function listening() {
      const { port } = server.address() as AddressInfo; // listening on TCP: an AddressInfo
      server.close(() => resolve(port));
    });
  });
}

/** Spawns redis-server and resolves with it once it logs that it is ready. */
function spawnRedis(path: string, port: number, dir: string): Promise<ChildProcess> {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
  args.push("--daemonize", "no", "--protected-mode", "yes", "--logfile", "");
  // stdin is a pipe nobody writes to; if the benchmark dies, redis is killed by setpriv's
  // parent-death signal where util-linux has it (Debian: always).
  const setpriv = existsSync("/usr/bin/setpriv") ? "/usr/bin/setpriv" : null;
  const child =
    setpriv === null
      ? spawn(path, args, { stdio: ["pipe", "pipe", "pipe"] })
      : spawn(setpriv, ["--pdeathsig", "KILL", path, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  return new Promise<ChildProcess>(function waitUntilReady(resolve, reject) {
    let output = "";
    const timer = setTimeout(function giveUp() {
      child.kill("SIGKILL");
      settle(new Error(`redis-server on port ${port} was not ready within 10 s:\n${output}`));
    }, 10_000);
    function settle(error?: Error): void {
      clearTimeout(timer);
      child.stdout?.off("data", readLog);
      child.stderr?.off("data", readLog);
      child.off("exit", exitedEarly);
      child.off("error", failedToSpawn);
      child.stdout?.resume(); // Keep draining its log: a full pipe would block redis.
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
      settle(new Error(`could not run ${path}`, { cause }));
    }
    child.stdout?.on("data", readLog);
    child.stderr?.on("data", readLog);
    child.once("exit", exitedEarly);
    child.once("error", failedToSpawn);
  });
}
