/**
 * What a Redis crawl stored, in the order Redis stored it: a `MONITOR`
 * connection to the test's redis-server, read as the frontier's script calls
 * and what each of them wrote. The politeness tests read the crawl's own
 * decisions from it (when each URL was leased, when a host may next start a
 * request) instead of timing the requests a site received: those are the
 * values every process obeys, written by Redis's clock inside one atomic
 * script, so they hold exactly, however loaded the machine is.
 *
 * @remarks Redis runs one command at a time and a script alone, so the lines
 * `MONITOR` sends are a total order: a script's `EVALSHA`, then each command
 * it ran (`[0 lua]`), then the next client's command. Every script call goes
 * to every monitor, so watch small crawls only.
 * @see https://redis.io/docs/latest/commands/monitor/
 */
import { createHash } from "node:crypto";
import { createClient } from "@redis/client";
import * as scripts from "../../src/distributed/scripts.js";

type Client = ReturnType<typeof createClient>;

/** A command as `MONITOR` showed it: its name in capitals and its arguments. */
export interface LoggedCommand {
  readonly name: string;
  readonly args: readonly string[];
}

/** One call of a frontier script (`TAKE`, `HOLD`, …) on the watched crawl, with the commands it ran. */
export interface ScriptCall {
  /** The script's name, as exported by src/distributed/scripts.ts. */
  readonly name: string;
  /** Its ARGV: the queues' prefix, the channel, then the script's own arguments. */
  readonly argv: readonly string[];
  /**
   * When Redis logged it, by its clock, in ms: before it ran, so no later
   * than the time the script reads (`now()`), which is in the same ms or after.
   */
  readonly at: number;
  /** The commands it ran, in order. */
  readonly ran: LoggedCommand[];
}

/** A URL leased by `TAKE`: when (Redis's clock, ms), and to which process. */
export interface Lease {
  readonly url: string;
  /** The time TAKE read inside the script: the lease's deadline less the lease's length. */
  readonly at: number;
  readonly owner: string;
}

/** The frontier's scripts by their SHA1, which is how `EVALSHA` names them. */
const SCRIPT_BY_SHA = new Map(
  Object.entries(scripts).map(function bySha([name, text]) {
    return [createHash("sha1").update(text).digest("hex"), name] as const;
  }),
);

/**
 * The first `most` quoted arguments of a `MONITOR` line, unescaped (`\"`,
 * `\\`, `\xNN`, `\n`…): the rest of a long line (a FINISH's record) is never read.
 */
function argumentsOf(line: string, most = Infinity): string[] {
  const quoted = /"((?:[^"\\]|\\.)*)"/g;
  const found: string[] = [];
  for (let match = quoted.exec(line); match !== null && found.length < most; match = quoted.exec(line)) {
    found.push(
      (match[1] ?? "").replace(/\\(x[0-9a-f]{2}|.)/g, function unescaped(_all, code: string) {
        if (code.length === 3) return String.fromCharCode(Number.parseInt(code.slice(1), 16));
        return ({ n: "\n", r: "\r", t: "\t" } as Record<string, string>)[code] ?? code;
      }),
    );
  }
  return found;
}

/** The keys whose writes the log keeps: leases and politeness (the records, the queues, the rest are skipped unread). */
const KEPT_KEYS = /^"(?:ZADD|HSET)" "[^"]*:(?:leases|politeness)"/i;

/**
 * The script calls of one crawl (by its name), as a `MONITOR` connection
 * sees them: {@link RedisLog.watch} before the crawl starts, read after.
 */
export class RedisLog {
  /** Every call on the watched crawl, in Redis's order. */
  readonly calls: ScriptCall[] = [];
  private readonly waiters: Array<{ test: (call: ScriptCall) => boolean; resolve: (call: ScriptCall) => void }> = [];
  /** The call whose commands the lines now arriving belong to; null after another client's command. */
  private current: ScriptCall | null = null;

  /** The marks {@link caughtUp} sent and waits for. */
  private readonly marks = new Map<string, () => void>();
  private marksSent = 0;

  private constructor(
    private readonly monitor: Client,
    private readonly probe: Client,
    private readonly crawl: string,
  ) {}

  /** Starts watching the crawl named `crawl` on the Redis at `url`. */
  static async watch(url: string, crawl: string): Promise<RedisLog> {
    const monitor: Client = createClient({ url, socket: { reconnectStrategy: false } });
    const probe: Client = monitor.duplicate();
    for (const client of [monitor, probe]) {
      client.on("error", function ignoreServerGone() {}); // A test that kills Redis ends these too.
      await client.connect();
    }
    const log = new RedisLog(monitor, probe, crawl);
    await monitor.monitor(function onLine(line: string) {
      log.heard(line);
    });
    return log;
  }

  /**
   * Resolves once every command Redis ran before this call is in the log: the
   * monitor's lines come on their own connection, after the replies the crawl
   * read on its own. It sends a mark (`ECHO`) and waits for its line.
   */
  caughtUp(): Promise<void> {
    const mark = `redis-log-mark-${++this.marksSent}`;
    const seen = new Promise<void>((resolve) => this.marks.set(mark, resolve));
    return this.probe.echo(mark).then(() => seen);
  }

  /**
   * Resolves with the first call (past or future) that `test` accepts: the
   * order of events, not a time, decides. A call is tested as each of its
   * commands comes in, so `test` may look for one command among them.
   */
  when(test: (call: ScriptCall) => boolean): Promise<ScriptCall> {
    const found = this.calls.find(test);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /**
   * The URLs of `origin` that TAKE leased, in the order it leased them, with
   * the time read in the script: the lease's deadline less `leaseMs` (a
   * renewal moves the deadline with `ZADD XX`, which is not a take). With
   * `after`, only the leases taken after that call.
   */
  leases(origin: string, leaseMs: number, after?: ScriptCall): Lease[] {
    const leased: Lease[] = [];
    const from = after === undefined ? 0 : this.calls.indexOf(after) + 1;
    for (const call of this.calls.slice(from)) {
      if (call.name !== "TAKE") continue;
      const owner = call.argv[2] ?? "";
      for (const { name, args } of call.ran) {
        if (name !== "ZADD" || !args[0]?.endsWith(":leases") || args.length !== 3) continue;
        const url = args[2] ?? "";
        if (new URL(url).origin === origin) leased.push({ url, at: Number(args[1]) - leaseMs, owner });
      }
    }
    return leased;
  }

  /**
   * Every lease deadline written, in Redis's order: TAKE's for a URL it
   * leased, RENEW's (`ZADD XX`) for a lease its owner still held, with the
   * process that wrote it.
   */
  deadlines(): Array<{ script: "TAKE" | "RENEW"; owner: string; url: string; deadline: number }> {
    const written: Array<{ script: "TAKE" | "RENEW"; owner: string; url: string; deadline: number }> = [];
    for (const call of this.calls) {
      if (call.name !== "TAKE" && call.name !== "RENEW") continue;
      for (const { name, args } of call.ran) {
        if (name !== "ZADD" || !args[0]?.endsWith(":leases")) continue;
        written.push({ script: call.name, owner: call.argv[2] ?? "", url: args.at(-1) ?? "", deadline: Number(args.at(-2)) });
      }
    }
    return written;
  }

  /** The URLs FINISH calls were for (several pages a call), with the process that made each and the links sent with it, in Redis's order. */
  finishes(): Array<{ owner: string; url: string; links: string[] }> {
    const finished: Array<{ owner: string; url: string; links: string[] }> = [];
    for (const call of this.calls) {
      if (call.name !== "FINISH") continue;
      // After the prefix, the channel, the owner, the call's id and how long its reply is kept: url, kind, record, queued already, k, then k (url, origin, item) triples, for each page.
      for (let i = 5; i < call.argv.length; i += 5 + 3 * Number(call.argv[i + 4])) {
        const links = Array.from({ length: Number(call.argv[i + 4]) }, (_none, j) => call.argv[i + 5 + 3 * j] ?? "");
        finished.push({ owner: call.argv[2] ?? "", url: call.argv[i] ?? "", links });
      }
    }
    return finished;
  }

  /** The times `call` set as `origin`'s next start (`n:ORIGIN`, ms by Redis's clock), in order. */
  nextStarts(call: ScriptCall, origin: string): number[] {
    const set: number[] = [];
    for (const { name, args } of call.ran) {
      if (name !== "HSET" || !args[0]?.endsWith(":politeness")) continue;
      for (let i = 1; i + 1 < args.length; i += 2) if (args[i] === `n:${origin}`) set.push(Number(args[i + 1]));
    }
    return set;
  }

  /** Stops watching. */
  close(): void {
    for (const client of [this.monitor, this.probe]) if (client.isOpen) client.destroy();
  }

  private heard(line: string): void {
    const command = line.indexOf('] "') + 2; // "<time> [<db> <client>] "NAME" …
    if (line.startsWith("lua]", command - 5)) {
      if (this.current === null || !KEPT_KEYS.test(line.slice(command, command + 200))) return;
      const [name = "", ...args] = argumentsOf(line);
      this.current.ran.push({ name: name.toUpperCase(), args });
      this.notify(this.current);
      return;
    }
    this.current = null;
    // EVALSHA sha numkeys, the nine keys, the prefix and the channel: an ADD's links are not read.
    let [name = "", ...args] = argumentsOf(line, 14);
    if (name.toUpperCase() === "ECHO") {
      this.marks.get(args[0] ?? "")?.();
      this.marks.delete(args[0] ?? "");
      return;
    }
    if (name.toUpperCase() !== "EVALSHA" || !(args[2] ?? "").includes(`{${this.crawl}}`)) return;
    const script = SCRIPT_BY_SHA.get(args[0] ?? "") ?? "?";
    if (script !== "ADD") args = argumentsOf(line).slice(1);
    const keyCount = Number(args[1]);
    const at = Math.floor(Number(line.slice(0, line.indexOf(" "))) * 1000);
    const call: ScriptCall = { name: script, argv: args.slice(2 + keyCount), at, ran: [] };
    this.calls.push(call);
    this.current = call;
    this.notify(call);
  }

  private notify(call: ScriptCall): void {
    for (const waiter of [...this.waiters]) {
      if (!waiter.test(call)) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(call);
    }
  }
}
