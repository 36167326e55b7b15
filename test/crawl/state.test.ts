/**
 * StateStore: the crawl's state in a local directory, replayed from its log.
 * Real files in a temporary directory; the crawls run against a real
 * synthetic site on 127.0.0.1.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Crawler as AsyncAwaitCrawler, crawl as crawlWithAsyncAwait } from "../../src/asyncawait/index.js";
import { MemoryStore } from "../../src/crawl/store.js";
import { crawl as crawlWithCallbacks } from "../../src/callbacks/index.js";
import { crawl as crawlWithGenerators } from "../../src/generators/index.js";
import { pageRecord } from "../../src/crawl/records.js";
import { resolveOptions, type CrawlOptions } from "../../src/crawl/options.js";
import { StateError, StateStore, checkState, frameEntry, readState } from "../../src/crawl/state.js";
import { LOCK_STALE_MS, lockHolder, StateLock } from "../../src/crawl/state-lock.js";
import type { QueueItem } from "../../src/crawl/visit.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";

const ROOT = "http://a.test/";
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "crawl-state-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function item(path: string): QueueItem {
  return { url: `http://a.test${path}`, maxRedirect: 10 };
}

function opened(dir: string, options: CrawlOptions = {}, roots: string[] = [ROOT], compactBytes?: number): StateStore {
  const store = new StateStore(dir, compactBytes === undefined ? {} : { compactBytes });
  store.open(resolveOptions(options), () => {}, roots);
  return store;
}

/** Takes the next URL and finishes it with a 200 record that found `found`. */
function finishNext(store: StateStore, found: string[]): string {
  const taken = store.take();
  if (taken === undefined) throw new Error("nothing queued");
  const next = found.map(item);
  const record = pageRecord(taken.url, { status: 200, size: 10, contentType: "text/html", encoding: "utf-8" }, next.length, next.length);
  store.finish(taken, { record, next }, () => {});
  return taken.url;
}

/** The log's bytes. */
function log(dir: string): Buffer {
  return readFileSync(join(dir, "crawl.log"));
}

/** A store that added the root, recorded it (finding /a, /b), then recorded /a (finding /c): four entries. */
function written(dir: string): void {
  const store = opened(dir);
  store.add([item("/")]);
  finishNext(store, ["/a", "/b"]);
  finishNext(store, ["/c"]);
  store.summary(0);
}

describe("StateStore", () => {
  it("replays the seen set, the queue of URLs not done (in the order first queued) and the records", () => {
    const dir = tempDir();
    written(dir);
    const again = opened(dir);
    expect([...again.seenUrls]).toEqual(["/", "/a", "/b", "/c"].map((p) => `http://a.test${p}`));
    expect(again.resumed).toBe(2);
    expect(again.take()?.url).toBe("http://a.test/b");
    expect(again.take()?.url).toBe("http://a.test/c");
    expect(again.take()).toBeUndefined();
    const summary = again.summary(0);
    expect(summary.records?.map((r) => r.url)).toEqual(["http://a.test/", "http://a.test/a"]);
    expect(summary).toMatchObject({ recorded: 2, todo: 2 });
  });

  it("queues again a URL taken and never finished (the process died while fetching it), and no URL finished", () => {
    const dir = tempDir();
    const store = opened(dir);
    store.add([item("/")]);
    finishNext(store, ["/a", "/b", "/c"]);
    store.take(); // /a: being fetched when the process dies (no summary(), no close).
    finishNext(store, []); // /b
    writeFileSync(join(dir, "lock"), "2147483646\n"); // As a process killed here leaves it: its pid, now gone.
    const again = opened(dir);
    expect([again.take()?.url, again.take()?.url, again.take()]).toEqual(["http://a.test/a", "http://a.test/c", undefined]);
    again.summary(0);
    store.close();
  });

  it("cuts a torn last entry at every byte offset, keeps the entries before it, and appends after them", () => {
    const dir = tempDir();
    written(dir);
    const whole = log(dir);
    const lastLength = whole.readUInt32LE(lastEntryStart(whole)) + 8;
    const lastStart = whole.length - lastLength;
    for (let cut = lastStart; cut < whole.length; cut++) {
      const torn = tempDir();
      writeFileSync(join(torn, "crawl.log"), whole.subarray(0, cut));
      const store = opened(torn);
      expect(store.resumed).toBe(1); // The last entry (the record of /a) is gone; the root's is kept.
      expect([...store.seenUrls]).toHaveLength(3);
      expect(finishNext(store, [])).toBe("http://a.test/a"); // Taken again: it has no record now.
      store.summary(0);
      expect(log(torn).subarray(0, lastStart)).toEqual(whole.subarray(0, lastStart));
      expect(readState(torn)).toMatchObject({ recorded: 2, seen: 3, todo: 1 });
    }
  });

  it("stops reading at an entry whose checksum does not match, and drops it and every entry after it", () => {
    const dir = tempDir();
    written(dir);
    const bytes = log(dir);
    const second = entryStarts(bytes)[1] as number; // The add of the root.
    bytes[second + 12] ^= 0x20; // A payload byte of that entry.
    writeFileSync(join(dir, "crawl.log"), bytes);
    expect(readState(dir)).toMatchObject({ seen: 0, recorded: 0 });
    const store = opened(dir);
    store.add([item("/")]);
    store.summary(0);
    expect(entryStarts(log(dir))).toHaveLength(2); // The first entry, and the root added anew.
  });

  it("treats a log without a whole first entry as no state", () => {
    const dir = tempDir();
    written(dir);
    writeFileSync(join(dir, "crawl.log"), log(dir).subarray(0, 5));
    expect(readState(dir)).toBeNull();
    const store = opened(dir);
    expect(store.resumed).toBe(0);
    store.add([item("/")]);
    store.summary(0);
    expect(readState(dir)).toMatchObject({ seen: 1, recorded: 0 });
  });

  it("compacts a log that has grown, to a smaller one that replays to the same state, renamed over the old one", () => {
    const dir = tempDir();
    const store = opened(dir, {}, [ROOT], 2_000);
    store.add([item("/")]);
    const found = Array.from({ length: 300 }, (_, i) => `/p/${i}`);
    let appended = 0;
    let sizes = 0;
    for (let i = 0; i < 120; i++) {
      finishNext(store, i === 0 ? found : []);
      const size = statSync(join(dir, "crawl.log")).size;
      if (size < sizes) appended += 1; // The log got smaller: it was rewritten.
      sizes = size;
    }
    store.summary(0);
    expect(appended).toBeGreaterThan(0);
    expect(readdirSync(dir).sort()).toEqual(["crawl.log"]); // No temporary file, and the lock is gone.
    const state = readState(dir);
    expect(state).toMatchObject({ seen: 301, recorded: 120, todo: 181 });
    const again = opened(dir);
    expect(again.take()?.url).toBe("http://a.test/p/119");
    expect(again.summary(0).records?.map((r) => r.url).slice(0, 2)).toEqual(["http://a.test/", "http://a.test/p/0"]);
  });

  it("keeps the page hook's items with their records: replayed after a crash, in order, once, and through compaction", () => {
    const dir = tempDir();
    const store = opened(dir);
    store.add([item("/")]);
    const root = store.take() as QueueItem;
    const record = pageRecord(root.url, { status: 200, size: 10, contentType: "text/html", encoding: "utf-8" }, 2, 2);
    const found = [{ url: root.url, item: { title: "Home" } }, { url: root.url, item: { title: "again" } }];
    store.finish(root, { record, next: [item("/a"), item("/b")], items: found }, () => {});
    finishNext(store, []); // A page with no items: its entry has no "found".
    const taken = store.take() as QueueItem; // Fetched when the process died: no record, so no item either.
    expect(taken.url).toBe("http://a.test/b");
    store.close(); // As if the process died here (close writes nothing more; it lets the lock go, as a dead holder's is taken over).
    const again = opened(dir, {}, [ROOT], 1);
    expect(again.take()?.url).toBe("http://a.test/b");
    const bRecord = pageRecord("http://a.test/b", { status: 200, size: 1, contentType: "text/html", encoding: "utf-8" }, 0, 0);
    again.finish(item("/b"), { record: bRecord, next: [], items: [{ url: "http://a.test/b", item: { title: "B" } }] }, () => {}); // compactBytes 1: compacts here
    expect(again.summary(0).items).toEqual([...found, { url: "http://a.test/b", item: { title: "B" } }]);
    expect(opened(dir).summary(0).items?.map((kept) => kept.item.title)).toEqual(["Home", "again", "B"]);
    expect(opened(dir, { keepRecords: false }).summary(0).items).toBeNull();
  });

  it("refuses the state of another crawl, naming the difference, and takes one whose other options changed", () => {
    const dir = tempDir();
    written(dir);
    expect(() => opened(dir, {}, ["http://b.test/"])).toThrow(
      new TypeError(`state: ${dir} holds another crawl (roots: ["http://a.test/"] in the state, ["http://b.test/"] now); give another state directory, or delete ${dir} to crawl afresh`),
    );
    expect(() => opened(dir, { maxDepth: 2 })).toThrow(/\(maxDepth: "Infinity" in the state, 2 now\)/);
    expect(() => checkState(dir, ["a.test"], { exclude: "/x" })).toThrow(/\(exclude: null in the state, ".+" now\)/);
    expect(() => opened(dir, { allowedDomains: ["b.test"] })).toThrow(/\(allowedDomains: absent in the state, \["b.test"\] now\)/);
    const store = opened(dir, { maxTasks: 50, delayMs: 10, maxPages: 3, cookies: true });
    expect(store.resumed).toBe(2);
    store.summary(0);
  });

  it("keeps allowedDomains in the crawl's shape when given, so a resumed crawl gives the same", () => {
    const dir = tempDir();
    const store = opened(dir, { allowedDomains: ["b.test", "c.test"] });
    store.add([item("/")]);
    finishNext(store, []);
    store.summary(0);
    expect(() => opened(dir)).toThrow(/\(allowedDomains: \["b.test","c.test"\] in the state, absent now\)/);
    expect(() => opened(dir, { allowedDomains: ["c.test"] })).toThrow(/allowedDomains/);
    opened(dir, { allowedDomains: ["B.test", "c.test"] }).summary(0);
  });

  it("refuses a state another live process holds, and takes over a lock whose process is gone", () => {
    const dir = tempDir();
    written(dir);
    writeFileSync(join(dir, "lock"), `${process.ppid}\n`);
    expect(() => opened(dir)).toThrow(new TypeError(`state: ${dir} is in use by process ${process.ppid} (if that is no crawl, delete ${dir}/lock)`));
    expect(() => checkState(dir, [ROOT], {})).toThrow(/is in use by process/);
    writeFileSync(join(dir, "lock"), "2147483646\n"); // No such process.
    const store = opened(dir);
    finishNext(store, []);
    expect(readFileSync(join(dir, "lock"), "utf8")).toBe(`${process.pid}\n${hostname()}\n`);
    expect(() => opened(dir)).toThrow(/is in use by process/); // This process holds it now.
    store.summary(0);
    expect(existsSync(join(dir, "lock"))).toBe(false);
  });

  it("takes over a lock whose pid is alive but which nobody touched for LOCK_STALE_MS (a reboot, a container restart)", () => {
    const dir = tempDir();
    written(dir);
    writeFileSync(join(dir, "lock"), `${process.ppid}\n${hostname()}\n`); // A live pid: another process's since the restart.
    const before = new Date(Date.now() - LOCK_STALE_MS - 60_000);
    utimesSync(join(dir, "lock"), before, before);
    const store = opened(dir);
    finishNext(store, []);
    expect(readFileSync(join(dir, "lock"), "utf8")).toBe(`${process.pid}\n${hostname()}\n`);
    store.summary(0);
  });

  it("refuses a lock touched lately by a process on another host, naming the host", () => {
    const dir = tempDir();
    written(dir);
    writeFileSync(join(dir, "lock"), "2147483646\nother-host.test\n"); // No such pid here: the pid is the other host's.
    expect(() => opened(dir)).toThrow(new TypeError(`state: ${dir} is in use by process 2147483646 on other-host.test (if that is no crawl, delete ${dir}/lock)`));
  });

  it("refuses a state that cannot be written before anything is read or fetched, naming the errno", () => {
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "");
    expect(() => checkState(join(file, "state"), [ROOT], {})).toThrow(new TypeError(`state: ${join(file, "state")} cannot be written: ENOTDIR: not a directory (${file})`));
    expect(() => opened(file)).toThrow(new TypeError(`state: ${file} cannot be written: ENOTDIR: not a directory`));
  });

  it.runIf(process.platform === "linux")("says EACCES for a folder no process may write in, root's too (/proc/sys)", () => {
    expect(() => checkState("/proc/sys/crawl-state", [ROOT], {})).toThrow(
      new TypeError("state: /proc/sys/crawl-state cannot be written: EACCES: permission denied (/proc/sys)"),
    );
  });

  it("says nothing was written when the state's first write fails", () => {
    const dir = join(tempDir(), "state");
    const store = opened(dir);
    writeFileSync(dir, ""); // A file where the directory was to be made, after the check.
    store.add([item("/")]);
    expect(() => store.summary(0)).toThrow(/^state: cannot write .+: EEXIST: .+; nothing was written$/);
  });

  it("stops the second of two crawls that opened one state before either wrote, and keeps the first's", () => {
    const dir = tempDir();
    const first = opened(dir);
    const second = new StateStore(dir);
    let stops = 0;
    second.open(resolveOptions({}), () => { stops += 1; }, [ROOT]);
    first.add([item("/")]); // Takes the lock.
    second.add([item("/")]);
    expect(stops).toBe(1);
    expect(second.take()).toBeUndefined();
    expect(() => second.summary(0)).toThrow(new StateError(`state: ${dir} is in use by process ${process.pid} (if that is no crawl, delete ${dir}/lock)`));
    finishNext(first, ["/a"]);
    first.summary(0);
    expect(readState(dir)).toMatchObject({ seen: 2, recorded: 1 });
  });

  it("is refused alongside a store of the crawl's own (a frontier)", () => {
    expect(() => new AsyncAwaitCrawler(ROOT, { state: tempDir() }, new MemoryStore())).toThrow(
      new TypeError("Expected `state` to be left out with a store of its own (a frontier): that store keeps the crawl"),
    );
  });

  it("refuses a log that is not a crawl state", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "crawl.log"), frameEntry({ t: "crawl", v: 99, crawl: {} }));
    expect(() => readState(dir)).toThrow(/state: .* is not a crawl state this version reads/);
  });
});

/** Where each entry of a log starts. */
function entryStarts(bytes: Buffer): number[] {
  const starts: number[] = [];
  for (let at = 0; at + 8 <= bytes.length; at += 8 + bytes.readUInt32LE(at)) starts.push(at);
  return starts;
}

function lastEntryStart(bytes: Buffer): number {
  return entryStarts(bytes).at(-1) as number;
}

const STAGES = { callbacks: crawlWithCallbacks, generators: crawlWithGenerators, asyncawait: crawlWithAsyncAwait };

describe.each(Object.entries(STAGES))("the state option, stage %s", (_name, crawl) => {
  let site: SyntheticSite;
  beforeAll(async () => {
    site = await SyntheticSite.start({ pages: 60, linksPerPage: 4, seed: 5, redirects: 3, notFound: 2 });
  });
  afterAll(() => site.close());

  it("resumes a crawl stopped by maxPages, counting its records against a larger maxPages: no page fetched twice, the result covers the whole crawl", async () => {
    site.site.resetCounters();
    const state = tempDir();
    const first = await crawl(site.url, { maxTasks: 4, maxPages: 20, state });
    expect(first.records).toHaveLength(20);
    const more = await crawl(site.url, { maxTasks: 4, maxPages: 30, state }); // maxPages counts the whole crawl.
    expect([more.records.length, more.recorded]).toEqual([30, 30]);
    expect(site.site.requests().filter((r) => r.path !== "/robots.txt")).toHaveLength(30);
    const rest = await crawl(site.url, { maxTasks: 4, state });
    expect(rest.records).toHaveLength(site.expected.records.length);
    expect(rest.todo).toBe(0);
    expect(new Set(rest.records.map((r) => r.url))).toEqual(new Set(site.expected.records.map((r) => r.url)));
    const twice = site.site.requests().map((r) => r.path).filter((path, i, all) => all.indexOf(path) !== i);
    expect(twice).toEqual([]);
    const finished = await crawl(site.url, { maxTasks: 4, state });
    expect(finished.records).toHaveLength(site.expected.records.length);
    expect(site.site.totalRequests).toBe(site.expected.records.length); // Run again finished: nothing fetched.
  });
});

describe("StateLock", () => {
  it("keeps its lock live by touching it, and lets go when another process has taken it over", () => {
    const path = join(tempDir(), "lock");
    const lost: string[] = [];
    const lock = new StateLock(path, function onLost(why) {
      lost.push(why);
    });
    const before = new Date(Date.now() - LOCK_STALE_MS - 60_000);
    utimesSync(path, before, before);
    expect(lockHolder(path)).toBeNull(); // Untouched that long: as a dead holder's.
    expect(lock.beat()).toBe(true);
    expect(lockHolder(path)).toEqual({ pid: process.pid, host: null });
    writeFileSync(path, "2147483646\nother-host.test\n"); // Taken over while this one was stopped.
    expect([lock.beat(), lock.beat()]).toEqual([false, false]);
    expect(lost).toEqual(["another process holds it now"]);
    lock.release();
    expect(readFileSync(path, "utf8")).toBe("2147483646\nother-host.test\n"); // Not its own: left as it is.
  });
});
