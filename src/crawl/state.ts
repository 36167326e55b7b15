/**
 * A crawl's state in a local directory (`--state DIR`, the `state` option):
 * the {@link StateStore}, a {@link CrawlStore} that keeps the queue, the seen
 * set and the records in an append-only log, so that a crawl stopped in any
 * way (Ctrl-C, SIGTERM, `kill -9`) goes on where it was when run again.
 *
 * ## The format
 *
 * `DIR/crawl.log` is a sequence of entries. Each is an 8-byte header, the
 * payload's length and its CRC-32 (both unsigned 32-bit little-endian), then
 * the payload: one JSON object, UTF-8.
 *
 * - `{"t":"crawl","v":1,"crawl":{…}}`, first: what shapes the crawl (the
 *   roots and the options that decide which URLs are found and what a record
 *   holds, {@link crawlShape}). A state is refused for another crawl.
 * - `{"t":"add","items":[…]}`: URLs seen and queued (each a `QueueItem`).
 * - `{"t":"done","urls":[…],"records":[…],"items":[…]}`: these URLs' records,
 *   and the URLs their visits found new, seen and queued in the same step;
 *   with `"found":[…]` when the page hook gave items (each `{url, item}`),
 *   kept in the same step as the record, so that an item is on disk exactly
 *   when its page's record is.
 * - `{"t":"seen","urls":[…]}`: URLs seen and done with (compaction only).
 *
 * Replay reads the entries in order; the queue is then every URL added and
 * not done, in the order first added. A URL taken and not done when the
 * process died (being fetched, or waiting for its host) is queued again: at
 * most `maxTasks` pages are fetched again, and no page with a record.
 *
 * ## Why it is crash-safe
 *
 * - One entry is one `write(2)` of the whole entry (`fs.writeSync` of one
 *   buffer, to a file opened for appending), made before the core is told
 *   the record is stored. A step (a record and the URLs it found) is one
 *   entry, so no state between "recorded" and "its links queued" is ever
 *   on disk.
 * - Once `write(2)` returns, the bytes are the kernel's: a process killed
 *   (`kill -9`, a crash, the OOM killer) loses nothing written. The log is
 *   fsynced (`fdatasync`) at most once a second after a write, at compaction
 *   and at the end: a power cut or a kernel crash loses at most about the
 *   last second's entries, whose pages are fetched again (as Redis's
 *   `appendfsync everysec`).
 * - What a crash can leave is a log whose last entry is cut short, or (after
 *   a power cut) whose tail holds bytes never written in full. On open, the
 *   entries are read while each is whole and its checksum matches; the first
 *   that is not, and everything after it, is cut off (`ftruncate`) before
 *   anything is appended. Every prefix of the log is a state the crawl went
 *   through, since each entry only adds to the ones before it.
 * - Compaction writes the state anew to `crawl.log.tmp`, fsyncs it, renames
 *   it over `crawl.log` (atomic in POSIX) and fsyncs the directory: a crash
 *   at any point leaves either the old log or the new one whole.
 * - `DIR/lock` holds the pid and host of the process using the state, which
 *   touches it every 2 s; another live process is refused, and a lock left
 *   by a dead one (its pid gone, or untouched for 10 s: after a reboot or a
 *   container restart, when its pid may be another process's) is taken over
 *   (state-lock.ts).
 *
 * @remarks Why not an embedded database: SQLite through better-sqlite3 needs
 * a native build at install; the pure-JS key-value stores would keep the
 * same three things with more code than replaying a log. The crawl's state
 * only grows (URLs seen, records made), which is what a log is good at.
 *
 * @module
 */
import { closeSync, constants, fdatasyncSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { BlockFifo } from "./block-fifo.js";
import { refuseIfHeld, StateLock, stateUnwritable } from "./state-lock.js";
import { resolveOptions, type CrawlOptions, type ResolvedCrawlOptions } from "./options.js";
import type { CrawlItem } from "./page-hook.js";
import { isFetchedPage, type FetchStatistic } from "./records.js";
import type { CrawlStore, StoreSummary } from "./store.js";
import { UrlPolicy } from "./urls.js";
import type { QueueItem, Visit } from "./visit.js";

/** The format's version, in the first entry. */
const VERSION = 1;
/** The log's file name in the state directory. */
const LOG = "crawl.log";
/** The lock's file name in the state directory. */
const LOCK = "lock";
/** Bytes before each payload: its length and its CRC-32. */
const HEADER_BYTES = 8;
/** No entry is larger: a length beyond it is corruption. */
const MAX_ENTRY_BYTES = 256 * 1024 * 1024;
/** At most this long between a write and its `fdatasync`. */
const SYNC_EVERY_MS = 1000;
/** Items, URLs or records per entry in a compacted log. */
const CHUNK = 1000;

/**
 * What shapes a crawl, and so must be the same when a state is used again:
 * the roots and the options that decide which URLs are found and what a
 * record holds. The others (`maxTasks`, delays, timeouts, `maxPages`, …) may
 * change between runs: `maxPages` counts the whole crawl, so a crawl stopped
 * by it goes on when run again with a larger one.
 */
export function crawlShape(roots: readonly string[], options: ResolvedCrawlOptions): Record<string, unknown> {
  return {
    roots: [...roots],
    strict: options.strict,
    include: options.include === null ? null : String(options.include),
    exclude: options.exclude === null ? null : String(options.exclude),
    noParent: options.noParent,
    maxDepth: Number.isFinite(options.maxDepth) ? options.maxDepth : "Infinity",
    maxRedirect: options.maxRedirect,
    robots: options.robots,
    skipNonHtml: options.skipNonHtml,
    maxBodyBytes: options.maxBodyBytes,
    userAgent: options.userAgent,
    // Only when given: the state of a crawl without it, written before it existed, is the same crawl.
    ...(options.allowedDomains === null ? {} : { allowedDomains: options.allowedDomains }),
    // Only when given, so that a state written before the option existed is the same crawl.
    ...(options.linkAttributes.length > 0 ? { linkAttributes: [...options.linkAttributes] } : {}),
  };
}

/** What a state directory holds, as {@link readState} finds it. */
export interface StateContents {
  /** The crawl's shape, as {@link crawlShape} made it. */
  shape: Record<string, unknown>;
  /** URLs seen. */
  seen: number;
  /** Records kept. */
  recorded: number;
  /** Of those, the pages fetched (a URL `robots.txt` refused is a record, not a page): what `maxPages` counts. */
  pages: number;
  /** URLs seen that have no record yet: 0 when the crawl is finished. */
  todo: number;
}

/**
 * Reads the state in `dir` without changing it: null when there is none
 * (no log, or not even its first entry whole).
 *
 * @throws TypeError naming the `state` option when the log is not one this version reads.
 */
export function readState(dir: string): StateContents | null {
  const replayed = replay(dir);
  if (replayed === null) return null;
  const { shape, seen, records } = replayed;
  return { shape, seen: seen.size, recorded: records.length, pages: records.filter(isFetchedPage).length, todo: seen.size - records.length };
}

/**
 * The first difference between the crawl a state was written by and this
 * one, in words (`maxDepth: 2 in the state, 3 now`); null when they are the
 * same crawl.
 */
export function shapeDifference(kept: Record<string, unknown>, now: Record<string, unknown>): string | null {
  for (const key of new Set([...Object.keys(kept), ...Object.keys(now)])) {
    const [a, b] = [JSON.stringify(kept[key]), JSON.stringify(now[key])];
    if (a !== b) return `${key}: ${a ?? "absent"} in the state, ${b ?? "absent"} now`;
  }
  return null;
}

/**
 * Checks that the state in `dir`, if any, was written by the crawl of
 * `roots` with `options`, as a crawler made with them would, and says what
 * it holds: the CLI's check before anything is fetched.
 *
 * @throws TypeError naming the `state` option and the difference when it was written by another crawl, when another process is using it, when it cannot be written (the errno named), or for a bad root or option.
 */
export function checkState(dir: string, roots: readonly string[], options: CrawlOptions): StateContents | null {
  refuseIfLocked(dir);
  refuseIfUnwritable(dir);
  const contents = readState(dir);
  if (contents === null) return null;
  const resolved = resolveOptions(options);
  const difference = shapeDifference(contents.shape, crawlShape(new UrlPolicy(roots, resolved).roots, resolved));
  if (difference !== null) {
    throw new TypeError(`state: ${dir} holds another crawl (${difference}); give another state directory, or delete ${dir} to crawl afresh`);
  }
  return contents;
}

/** What replaying a log gives. */
interface Replayed {
  shape: Record<string, unknown>;
  /** Every URL seen, in the order first seen. */
  seen: Set<string>;
  /** URLs seen and not done, with their items, in the order first added. */
  open: Map<string, QueueItem>;
  records: FetchStatistic[];
  /** The page hook's items, in the order stored. */
  found: CrawlItem[];
  /** Bytes of whole, checked entries: where the log is cut. */
  validBytes: number;
  /** Bytes of the file. */
  fileBytes: number;
  entries: number;
}

/** One entry, as written. */
type Entry =
  | { t: "crawl"; v: number; crawl: Record<string, unknown> }
  | { t: "add"; items: QueueItem[] }
  | { t: "done"; urls: string[]; records: FetchStatistic[]; items: QueueItem[]; found?: readonly CrawlItem[] }
  | { t: "seen"; urls: string[] };

/** Frames one entry: length, CRC-32, payload. */
export function frameEntry(entry: object): Buffer {
  const payload = Buffer.from(JSON.stringify(entry), "utf8");
  const framed = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  framed.writeUInt32LE(payload.length, 0);
  framed.writeUInt32LE(crc32(payload), 4);
  payload.copy(framed, HEADER_BYTES);
  return framed;
}

/** Reads the log in `dir` up to its first entry that is cut short or corrupt; null when it has no whole first entry. */
function replay(dir: string): Replayed | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, LOG));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new TypeError(`state: cannot read ${join(dir, LOG)}: ${(error as Error).message}`);
  }
  const state: Replayed = { shape: {}, seen: new Set(), open: new Map(), records: [], found: [], validBytes: 0, fileBytes: bytes.length, entries: 0 };
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    if (length > MAX_ENTRY_BYTES || at + HEADER_BYTES + length > bytes.length) break;
    const payload = bytes.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
    if (crc32(payload) !== bytes.readUInt32LE(at + 4)) break;
    let entry: Entry;
    try {
      entry = JSON.parse(payload.toString("utf8")) as Entry;
    } catch {
      break; // A checksum that matches bytes that are not JSON: not ours to read on.
    }
    if (state.entries === 0) {
      if (entry.t !== "crawl" || entry.v !== VERSION) throw new TypeError(`state: ${join(dir, LOG)} is not a crawl state this version reads (format ${VERSION})`);
      state.shape = entry.crawl;
    } else {
      apply(state, entry);
    }
    state.entries += 1;
    at += HEADER_BYTES + length;
    state.validBytes = at;
  }
  return state.entries === 0 ? null : state;
}

/** Replays one entry after the first. */
function apply(state: Replayed, entry: Entry): void {
  if (entry.t === "seen") {
    for (const url of entry.urls) state.seen.add(url);
    return;
  }
  if (entry.t === "done") {
    for (const url of entry.urls) state.open.delete(url);
    for (const record of entry.records) state.records.push(record);
    if (entry.found !== undefined) for (const item of entry.found) state.found.push(item);
  }
  if (entry.t === "add" || entry.t === "done") {
    for (const item of entry.items) {
      state.seen.add(item.url);
      state.open.set(item.url, item);
    }
  }
}

/**
 * The state could not be written during the crawl (a full disk, a file too
 * large): the crawl stopped, and what was written is kept, so the same crawl
 * run again resumes from it.
 */
export class StateError extends Error {
  override readonly name = "StateError";
}

/** node:zlib's CRC-32 of `data`; zlib is loaded by the first `--state` crawl that needs it, not by every crawl. */
function crc32(data: Uint8Array): number {
  return process.getBuiltinModule("node:zlib").crc32(data);
}

/** Throws when another live process (or another crawl in this one) holds the state in `dir`. */
function refuseIfLocked(dir: string): void {
  refuseIfHeld(join(dir, LOCK));
}

/** Throws when the state in `dir` cannot be written (a read-only disk, no permission), naming the errno: checked before the first request. */
function refuseIfUnwritable(dir: string): void {
  const why = stateUnwritable(dir);
  if (why !== null) throw new TypeError(`state: ${dir} cannot be written: ${why}`);
}

/** Options of a {@link StateStore}. */
export interface StateStoreOptions {
  /**
   * The log is compacted (rewritten whole, then renamed over the old one)
   * when it has grown by this many bytes since it was last written whole,
   * and by as many as it then had. Default 4 MiB.
   */
  compactBytes?: number;
  /**
   * The clock that paces `fdatasync` (at most once a second), in
   * milliseconds: the crawl's wall clock, given by `storeFor` (src/crawl/world.ts).
   * Default `Date.now`.
   */
  clock?: () => number;
}

/**
 * A {@link CrawlStore} kept in a local directory, which a crawl run again
 * with the same directory resumes: its queue, seen set and records replayed
 * from an append-only log (the format and why it is crash-safe: this
 * module's comment, and docs/crawl-core.md). Synchronous, as the core is:
 * every step is written before the call returns, so a stage awaits nothing
 * (it has no `whenDone()`). Made by `storeFor` (src/crawl/world.ts) for the `state` option.
 *
 * @remarks It keeps every record in memory, as the default store's crawl
 * result does, and writes each once; `summary()` reports the whole crawl,
 * records of earlier runs first.
 */
export class StateStore implements CrawlStore {
  readonly seenUrls = new Set<string>();
  /** Pages fetched by earlier runs of this crawl (their records, but for URLs `robots.txt` refused): `maxPages` counts them. */
  resumed = 0;
  private readonly queue = new BlockFifo<QueueItem>();
  /** URLs seen and not done, with their items: queued, taken, or waiting for their host. */
  private readonly undone = new Map<string, QueueItem>();
  private readonly records: FetchStatistic[] = [];
  /** The page hook's items, earlier runs' first. */
  private readonly items: CrawlItem[] = [];
  private shape: Record<string, unknown> = {};
  private keepRecords = true;
  private stopped = false;
  private fd: number | null = null;
  private closed = false;
  /** From replay: the bytes to keep of the log, and its size; null for a new state. */
  private kept: { validBytes: number; fileBytes: number; entries: number } | null = null;
  private logBytes = 0;
  /** The log's size when last written whole. */
  private compactedBytes = 0;
  private lastSync = 0;
  private failure: unknown = null;
  /** The state's lock, from the first write to `close()`. */
  private held: StateLock | null = null;
  private stopCrawl: () => void = () => {};
  private readonly compactBytes: number;
  private readonly clock: () => number;

  /** @param dir - The state directory: made if missing; its `crawl.log` replayed if there. */
  constructor(
    readonly dir: string,
    options: StateStoreOptions = {},
  ) {
    this.compactBytes = options.compactBytes ?? 4 * 1024 * 1024;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Replays the log, if any, and checks it was written by this crawl.
   *
   * @throws TypeError naming the `state` option: another crawl's state (the difference named), one another process is using, one that cannot be written (the errno named), or not a state.
   */
  open(options: ResolvedCrawlOptions, stopCrawl: () => void, roots: readonly string[] = []): void {
    this.stopCrawl = stopCrawl;
    this.keepRecords = options.keepRecords;
    this.shape = crawlShape(roots, options);
    refuseIfLocked(this.dir);
    refuseIfUnwritable(this.dir);
    const replayed = replay(this.dir);
    if (replayed === null) return;
    const difference = shapeDifference(replayed.shape, this.shape);
    if (difference !== null) {
      throw new TypeError(`state: ${this.dir} holds another crawl (${difference}); give another state directory, or delete ${this.dir} to crawl afresh`);
    }
    for (const url of replayed.seen) this.seenUrls.add(url);
    for (const [url, item] of replayed.open) {
      this.undone.set(url, item);
      this.queue.push(item);
    }
    this.records.push(...replayed.records);
    this.items.push(...replayed.found);
    this.resumed = replayed.records.filter(isFetchedPage).length;
    this.kept = replayed;
  }

  get size(): number {
    return this.queue.length;
  }

  add(items: readonly QueueItem[]): void {
    const fresh = items.filter((item) => !this.seenUrls.has(item.url));
    if (fresh.length === 0 || !this.write({ t: "add", items: fresh })) return;
    this.queueNew(fresh);
  }

  take(): QueueItem | undefined {
    return this.stopped || this.queue.length === 0 ? undefined : this.queue.shift();
  }

  putBack(item: QueueItem): void {
    this.queue.push(item); // Not written: replay queues every URL not done.
  }

  finish(item: QueueItem, visit: Visit, stored: (record: FetchStatistic | null) => void): void {
    const fresh = visit.next.filter((next) => !this.seenUrls.has(next.url));
    const found = visit.items ?? [];
    const entry: Entry = { t: "done", urls: [item.url], records: [visit.record], items: fresh };
    if (found.length > 0) entry.found = found; // Only then: a log without items reads as before.
    if (!this.write(entry)) {
      stored(null);
      return;
    }
    this.undone.delete(item.url);
    this.records.push(visit.record);
    this.items.push(...found);
    this.queueNew(fresh);
    stored(visit.record);
    this.compactIfGrown();
  }

  release(_item: QueueItem): void {
    // It stays in the log as added and not done: the next run queues it.
  }

  pending(): boolean {
    return false;
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * The whole crawl, earlier runs' records too; closes the log (fsynced) and
   * the lock.
   *
   * @throws StateError when the log could not be written (or another process took the state first), which stopped the crawl.
   */
  summary(_recorded: number): StoreSummary {
    try {
      this.close();
    } catch (error) {
      this.fail(error, false); // The crawl is over: nothing to stop.
    }
    if (this.failure !== null) throw this.failure;
    const recorded = this.records.length;
    const items = this.keepRecords ? [...this.items] : null;
    return { seen: [...this.seenUrls], todo: this.seenUrls.size - recorded, records: this.keepRecords ? [...this.records] : null, recorded, items };
  }

  /** Closes the log, fsynced, and removes the lock; the store writes nothing more. Called by `summary()`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopped = true;
    if (this.fd === null) return;
    try {
      fdatasyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = null;
      this.unlock();
    }
  }

  /**
   * Rewrites the log whole: the first entry, the URLs done (`seen`), the URLs
   * still to do (`add`), the records (`done`), in chunks; to a new file,
   * fsynced, renamed over the log, and the directory fsynced.
   */
  compact(): void {
    if (this.fd === null || this.closed) return;
    const entries: Buffer[] = [frameEntry({ t: "crawl", v: VERSION, crawl: this.shape })];
    const doneUrls = [...this.seenUrls].filter((url) => !this.undone.has(url));
    for (let i = 0; i < doneUrls.length; i += CHUNK) entries.push(frameEntry({ t: "seen", urls: doneUrls.slice(i, i + CHUNK) }));
    const open = [...this.undone.values()];
    for (let i = 0; i < open.length; i += CHUNK) entries.push(frameEntry({ t: "add", items: open.slice(i, i + CHUNK) }));
    for (let i = 0; i < this.records.length; i += CHUNK) entries.push(frameEntry({ t: "done", urls: [], records: this.records.slice(i, i + CHUNK), items: [] }));
    for (let i = 0; i < this.items.length; i += CHUNK) entries.push(frameEntry({ t: "done", urls: [], records: [], items: [], found: this.items.slice(i, i + CHUNK) }));
    const whole = Buffer.concat(entries);
    const tmp = join(this.dir, `${LOG}.tmp`);
    const fd = openSync(tmp, "w");
    try {
      writeWhole(fd, whole);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(this.dir, LOG));
    syncDirectory(this.dir);
    closeSync(this.fd);
    this.fd = openSync(join(this.dir, LOG), constants.O_WRONLY | constants.O_APPEND);
    this.logBytes = whole.length;
    this.compactedBytes = whole.length;
  }

  /** Marks new items seen and queues them. */
  private queueNew(items: readonly QueueItem[]): void {
    for (const item of items) {
      this.seenUrls.add(item.url);
      this.undone.set(item.url, item);
      this.queue.push(item);
    }
  }

  /** Appends one entry in one write; false (and the crawl stopped) when it could not be written. */
  private write(entry: Entry): boolean {
    if (this.closed || this.failure !== null) return false;
    try {
      if (this.fd === null) this.openLog();
      const framed = frameEntry(entry);
      writeWhole(this.fd as number, framed);
      this.logBytes += framed.length;
      const now = this.clock();
      if (now - this.lastSync >= SYNC_EVERY_MS) {
        fdatasyncSync(this.fd as number);
        this.lastSync = now;
      }
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  /** On the first write: takes the lock, makes the directory, cuts a torn tail off the log or starts one, compacts a long one. */
  private openLog(): void {
    mkdirSync(this.dir, { recursive: true });
    this.lock();
    const path = join(this.dir, LOG);
    if (this.kept === null) {
      this.fd = openSync(path, "w");
      const first = frameEntry({ t: "crawl", v: VERSION, crawl: this.shape });
      writeWhole(this.fd, first);
      fdatasyncSync(this.fd);
      syncDirectory(this.dir);
      closeSync(this.fd);
      this.logBytes = first.length;
    } else {
      if (this.kept.validBytes < this.kept.fileBytes) {
        const fd = openSync(path, "r+");
        try {
          ftruncateSync(fd, this.kept.validBytes);
          fdatasyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
      this.logBytes = this.kept.validBytes;
    }
    this.fd = openSync(path, constants.O_WRONLY | constants.O_APPEND);
    this.lastSync = this.clock();
    if (this.kept !== null && this.kept.validBytes > this.compactBytes && this.kept.entries > 4 * Math.ceil(this.seenUrls.size / CHUNK) + 1) this.compact();
    this.compactedBytes = this.logBytes;
  }

  /** Compacts when the log has grown by `compactBytes`, and at least doubled, since last written whole. */
  private compactIfGrown(): void {
    const grown = this.logBytes - this.compactedBytes;
    if (grown < this.compactBytes || grown < this.compactedBytes) return;
    try {
      this.compact();
    } catch (error) {
      this.fail(error);
    }
  }

  /** The log could not be written: the crawl stops (its requests in flight abandoned), and `summary()` throws a {@link StateError}. */
  private fail(error: unknown, stopCrawl = true): void {
    if (this.failure !== null) return;
    const reason = error instanceof Error ? error.message : String(error);
    // Nothing written: no earlier run's log, and this one's never begun (its directory or lock could not be made).
    const nothingWritten = this.kept === null && this.logBytes === 0;
    const after = nothingWritten ? "nothing was written" : "what was written is kept, and the same crawl run again resumes from it";
    this.failure = error instanceof TypeError ? new StateError(error.message) : new StateError(`state: cannot write ${join(this.dir, LOG)}: ${reason}; ${after}`);
    this.stopped = true;
    if (stopCrawl) this.stopCrawl();
  }

  private lock(): void {
    const store = this;
    this.held = new StateLock(join(this.dir, LOCK), function lost(why) {
      store.fail(new Error(`the lock ${join(store.dir, LOCK)} was lost (${why})`));
    });
  }

  private unlock(): void {
    this.held?.release();
    this.held = null;
  }
}

/**
 * Writes all of `bytes`: one `write(2)`, and more only after a short one (a
 * file at its size limit, a disk filling up), whose next call then fails.
 */
function writeWhole(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Fsyncs a directory, so a file made or renamed in it is kept. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
