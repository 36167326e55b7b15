import { Buffer } from "node:buffer";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HttpResponse } from "../../src/http/parser.js";
import { resolveOptions, type CrawlOptions } from "../../src/crawl/options.js";
import { HostLines, retryAfterMs, type Cancellable, type HostWaiting } from "../../src/crawl/politeness.js";
import { mulberry32 } from "../../src/crawl/random.js";
import { RobotsReading } from "../../src/crawl/robots.js";
import { UrlPolicy } from "../../src/crawl/urls.js";
import type { QueueItem } from "../../src/crawl/visit.js";

const A = "http://127.0.0.1:8001";
const B = "http://127.0.0.1:8002";

/** A wake-up a {@link Bench} was asked for: due at `at` on its clock, unless cancelled. */
class WakeUp implements Cancellable {
  cancelled = false;
  ran = false;
  constructor(
    readonly ms: number,
    readonly at: number,
    readonly wake: () => void,
  ) {}

  cancel(): void {
    this.cancelled = true;
  }
}

/**
 * A stage stand-in with a clock of its own: it keeps the URLs handed back
 * and the wake-ups asked for, and runs those only when the test moves the
 * clock on. No real time passes.
 */
class Bench implements HostWaiting {
  time = 0;
  requeued: QueueItem[] = [];
  readonly wakeUps: WakeUp[] = [];
  readonly lines: HostLines;

  /** @param random - The random source the host lines draw jitter from: seeded, unless a test gives its own. */
  constructor(options: CrawlOptions = {}, random: () => number = mulberry32(1)) {
    const bench = this;
    function now(): number {
      return bench.time;
    }
    function wallClock(): number {
      return Date.now(); // Faked by the Retry-After date tests.
    }
    this.lines = new HostLines(resolveOptions(options), this, now, random, wallClock);
  }

  requeue(item: QueueItem): void {
    this.requeued.push(item);
  }

  later(ms: number, wake: () => void): Cancellable {
    const wakeUp = new WakeUp(ms, this.time + ms, wake);
    this.wakeUps.push(wakeUp);
    return wakeUp;
  }

  /** The wake-ups asked for and neither run nor cancelled. */
  pending(): WakeUp[] {
    return this.wakeUps.filter(function isPending(wakeUp) {
      return !wakeUp.ran && !wakeUp.cancelled;
    });
  }

  /** The delays asked for by the pending wake-ups. */
  pendingMs(): number[] {
    return this.pending().map(function delay(wakeUp) {
      return wakeUp.ms;
    });
  }

  /** The clock times the pending wake-ups are due at. */
  pendingAt(): number[] {
    return this.pending().map(function dueAt(wakeUp) {
      return wakeUp.at;
    });
  }

  /** Moves the clock on by `ms`, running each pending wake-up that falls due, earliest first. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.pending()
        .filter(function isDue(wakeUp) {
          return wakeUp.at <= until;
        })
        .sort(function byTime(x, y) {
          return x.at - y.at;
        })[0];
      if (due === undefined) break;
      this.time = due.at;
      due.ran = true;
      due.wake();
    }
    this.time = until;
  }

  /** The URLs handed back since the last call, as the stage's queue would hold them. */
  takeRequeued(): QueueItem[] {
    const items = this.requeued;
    this.requeued = [];
    return items;
  }
}

function item(url: string): QueueItem {
  return { url, maxRedirect: 10 };
}

function response(status: number, body = "", headers: Record<string, string> = {}): HttpResponse {
  return { status, headers, body: Buffer.from(body) };
}

/** An origin's robots.txt read to its end, one response per attempt (the last one repeated). */
function robotsOf(origin: string, options: CrawlOptions, ...responses: HttpResponse[]): RobotsReading {
  const resolved = resolveOptions({ robots: true, ...options });
  const reading = new RobotsReading(origin, resolved, new UrlPolicy([origin], resolved));
  for (let i = 0; ; i++) {
    const step = reading.next(responses[Math.min(i, responses.length - 1)]);
    if (step === "done") return reading;
  }
}

describe("HostLines", () => {
  describe("with no politeness option", () => {
    it("lets every URL go, asks for no wake-up, and ignores finished()", () => {
      const bench = new Bench();
      const items = [`${A}/1`, `${A}/2`, `${A}/3`, `${B}/1`].map(item);
      for (const each of items) expect(bench.lines.turn(each)).toEqual({ kind: "go" });
      for (const each of items) bench.lines.finished(each);
      expect(bench.requeued).toEqual([]);
      expect(bench.wakeUps).toEqual([]);
      expect(bench.lines.waitingUrls).toBe(0);
      expect(bench.lines.close()).toEqual([]);
    });
  });

  describe("maxPerHost", () => {
    it("makes a third URL of a host wait while two of its requests are in flight, and lets other hosts go", () => {
      const bench = new Bench({ maxPerHost: 2 });
      expect(bench.lines.turn(item(`${A}/1`))).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/3`))).toEqual({ kind: "wait" });
      expect(bench.lines.turn(item(`${B}/1`))).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${B}/2`))).toEqual({ kind: "go" });
      expect(bench.lines.waitingUrls).toBe(1);
      expect(bench.wakeUps).toEqual([]); // Only a request's end frees a slot: no timer.
    });

    it("hands the head of the line its turn through requeue when a request ends", () => {
      const bench = new Bench({ maxPerHost: 2 });
      const first = item(`${A}/1`);
      const third = item(`${A}/3`);
      bench.lines.turn(first);
      bench.lines.turn(item(`${A}/2`));
      bench.lines.turn(third);
      expect(bench.requeued).toEqual([]);
      bench.lines.finished(first);
      expect(bench.takeRequeued()).toEqual([third]);
      expect(bench.takeRequeued()[0]).toBeUndefined();
      expect(bench.lines.waitingUrls).toBe(0);
    });

    it("lets a handed URL go when taken again, while a URL of that host that came in meanwhile waits", () => {
      const bench = new Bench({ maxPerHost: 2 });
      const first = item(`${A}/1`);
      const third = item(`${A}/3`);
      const fourth = item(`${A}/4`);
      bench.lines.turn(first);
      bench.lines.turn(item(`${A}/2`));
      bench.lines.turn(third);
      bench.lines.finished(first);
      expect(bench.takeRequeued()).toEqual([third]);
      expect(bench.lines.turn(fourth)).toEqual({ kind: "wait" }); // The freed slot is kept for the handed URL.
      expect(bench.lines.turn(third)).toEqual({ kind: "go" });
      expect(bench.requeued).toEqual([]);
      expect(bench.lines.waitingUrls).toBe(1);
    });

    it("hands each host's waiting URLs their turns in the order they came", () => {
      const bench = new Bench({ maxPerHost: 1 });
      const items = [1, 2, 3, 4].map(function page(n) {
        return item(`${A}/${n}`);
      });
      expect(bench.lines.turn(items[0])).toEqual({ kind: "go" });
      for (const waiting of items.slice(1)) expect(bench.lines.turn(waiting)).toEqual({ kind: "wait" });
      const order: QueueItem[] = [];
      let running = items[0];
      for (let i = 1; i < items.length; i++) {
        bench.lines.finished(running);
        const handed = bench.takeRequeued();
        expect(handed).toHaveLength(1);
        order.push(handed[0]);
        expect(bench.lines.turn(handed[0])).toEqual({ kind: "go" });
        running = handed[0];
      }
      expect(order).toEqual(items.slice(1));
    });
  });

  describe("delayMs", () => {
    it("makes the second URL wait, asks to be woken when the delay is over, and then hands it back", () => {
      const bench = new Bench({ delayMs: 1000 });
      const first = item(`${A}/1`);
      const second = item(`${A}/2`);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      bench.time = 300;
      expect(bench.lines.turn(second)).toEqual({ kind: "wait" });
      expect(bench.lines.turn(item(`${B}/1`))).toEqual({ kind: "go" }); // Another host has its own delay.
      expect(bench.pendingMs()).toEqual([700]);
      bench.lines.finished(first); // A request's end does not shorten the delay.
      bench.advance(699);
      expect(bench.requeued).toEqual([]);
      bench.advance(1);
      expect(bench.takeRequeued()).toEqual([second]);
      expect(bench.lines.turn(second)).toEqual({ kind: "go" });
    });

    it("counts the delay from the start of the handed URL, not from when it was handed", () => {
      const bench = new Bench({ delayMs: 1000 });
      const second = item(`${A}/2`);
      const third = item(`${A}/3`);
      bench.lines.turn(item(`${A}/1`));
      bench.lines.turn(second);
      bench.advance(1000);
      expect(bench.takeRequeued()).toEqual([second]);
      bench.time = 1100;
      expect(bench.lines.turn(third)).toEqual({ kind: "wait" }); // Behind the handed URL, which has not started.
      expect(bench.pending()).toEqual([]); // The handed URL's start wakes the line, not a timer.
      bench.time = 1200;
      expect(bench.lines.turn(second)).toEqual({ kind: "go" });
      expect(bench.pendingAt()).toEqual([2200]);
      bench.advance(999);
      expect(bench.requeued).toEqual([]);
      bench.advance(1);
      expect(bench.takeRequeued()).toEqual([third]);
    });

    it("adds delayJitter's fraction of the delay, drawn from the random source it is given", () => {
      const draws = [0.5, 0.25];
      const bench = new Bench({ delayMs: 1000, delayJitter: 0.4 }, function random() {
        return draws.shift() ?? 0;
      });
      bench.lines.turn(item(`${A}/1`)); // Its start draws 0.5: the next start waits 1000 + 1000 × 0.4 × 0.5.
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "wait" });
      expect(bench.pendingAt()).toEqual([1200]);
      expect(draws).toEqual([0.25]);
    });

    it("draws the same delays from the same seed", () => {
      function starts(seed: number): number[] {
        const bench = new Bench({ delayMs: 1000, delayJitter: 1 }, mulberry32(seed));
        const at: number[] = [];
        for (let n = 1; n <= 4; n++) {
          bench.lines.turn(item(`${A}/${n}`));
          at.push(...bench.pendingAt());
          bench.advance(Math.max(0, ...bench.pendingAt()) - bench.time);
          for (const each of bench.takeRequeued()) bench.lines.turn(each);
        }
        return at;
      }
      expect(starts(7)).toEqual(starts(7));
      expect(starts(7)).not.toEqual(starts(8));
    });

    it("asks for one wake-up per host however many URLs wait", () => {
      const bench = new Bench({ delayMs: 500 });
      bench.lines.turn(item(`${A}/1`));
      for (const n of [2, 3, 4]) bench.lines.turn(item(`${A}/${n}`));
      expect(bench.pending()).toHaveLength(1);
      expect(bench.lines.waitingUrls).toBe(3);
    });
  });

  describe("robots", () => {
    it("asks for robots.txt with an origin's first URL and lets its URLs go once it is read", () => {
      const bench = new Bench({ robots: true });
      const first = item(`${A}/1`);
      const second = item(`${A}/2`);
      expect(bench.lines.turn(first)).toEqual({ kind: "robots", origin: A });
      expect(bench.lines.turn(second)).toEqual({ kind: "wait" });
      expect(bench.lines.turn(item(`${B}/1`))).toEqual({ kind: "robots", origin: B });
      expect(bench.lines.waitingUrls).toBe(3);
      expect(bench.requeued).toEqual([]);
      const reading = robotsOf(A, {}, response(200, "User-agent: *\nDisallow: /private\n"));
      bench.lines.robotsRead(reading);
      expect(bench.takeRequeued()).toEqual([first, second]);
      expect(bench.lines.waitingUrls).toBe(1);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      expect(bench.lines.turn(second)).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/3`))).toEqual({ kind: "go" });
      expect(bench.lines.robotsFetches).toEqual([reading.report]);
    });

    it("refuses a disallowed URL when it is taken again, and gives its slot to the next one", () => {
      const bench = new Bench({ robots: true, maxPerHost: 1 });
      const secret = item(`${A}/private/x`);
      const open = item(`${A}/open`);
      expect(bench.lines.turn(secret)).toEqual({ kind: "robots", origin: A });
      bench.lines.turn(open);
      bench.lines.robotsRead(robotsOf(A, {}, response(200, "User-agent: *\nDisallow: /private\n")));
      expect(bench.takeRequeued()).toEqual([secret]); // One slot: one URL handed its turn.
      expect(bench.lines.turn(secret)).toEqual({ kind: "refused", error: "RobotsDisallowed", detail: null });
      expect(bench.takeRequeued()).toEqual([open]);
      expect(bench.lines.turn(open)).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/private/y`))).toEqual({ kind: "refused", error: "RobotsDisallowed", detail: null });
    });

    it("refuses every URL of an origin whose robots.txt answers 500 on every attempt", () => {
      const bench = new Bench({ robots: true });
      const first = item(`${A}/1`);
      const second = item(`${A}/2`);
      bench.lines.turn(first);
      bench.lines.turn(second);
      const reading = robotsOf(A, { maxTries: 3 }, response(500));
      expect(reading.report).toMatchObject({ verdict: "unreachable", attempts: 3 });
      bench.lines.robotsRead(reading);
      expect(bench.takeRequeued()).toEqual([first, second]);
      const refused = { kind: "refused", error: "RobotsUnreachable", detail: `robots.txt ${A}/robots.txt could not be read (3 attempts): status 500` };
      expect(bench.lines.turn(first)).toEqual(refused);
      expect(bench.lines.turn(second)).toEqual(refused);
      expect(bench.lines.turn(item(`${A}/3`))).toEqual(refused);
      expect(bench.lines.robotsFetches).toEqual([reading.report]);
    });

    it("counts the robots.txt request against maxPerHost until it is read", () => {
      const bench = new Bench({ robots: true, maxPerHost: 1 });
      const first = item(`${A}/1`);
      bench.lines.turn(first);
      bench.lines.robotsRead(robotsOf(A, {}, response(404)));
      expect(bench.takeRequeued()).toEqual([first]);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "wait" });
    });

    it("waits a Crawl-delay longer than delayMs, counted from the robots.txt request", () => {
      const bench = new Bench({ robots: true, delayMs: 1000 });
      const first = item(`${A}/1`);
      bench.lines.turn(first);
      bench.time = 10;
      bench.lines.robotsRead(robotsOf(A, {}, response(200, "User-agent: *\nCrawl-delay: 5\n")));
      expect(bench.requeued).toEqual([]);
      expect(bench.pendingAt()).toEqual([5000]);
      bench.advance(4990);
      expect(bench.takeRequeued()).toEqual([first]);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "wait" });
      expect(bench.pendingMs()).toEqual([5000]);
    });

    it("keeps delayMs when the Crawl-delay is shorter", () => {
      const bench = new Bench({ robots: true, delayMs: 3000 });
      bench.lines.turn(item(`${A}/1`));
      bench.lines.robotsRead(robotsOf(A, {}, response(200, "User-agent: *\nCrawl-delay: 1\n")));
      expect(bench.pendingAt()).toEqual([3000]);
    });

    it("caps the Crawl-delay at maxCrawlDelayMs", () => {
      const bench = new Bench({ robots: true, maxCrawlDelayMs: 2000 });
      const first = item(`${A}/1`);
      bench.lines.turn(first);
      bench.lines.robotsRead(robotsOf(A, {}, response(200, "User-agent: *\nCrawl-delay: 60\n")));
      expect(bench.pendingMs()).toEqual([2000]);
      bench.advance(2000);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "wait" });
      expect(bench.pendingMs()).toEqual([2000]);
    });
  });

  describe("retryAfter", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("gives the wait of a 429 or a 503 whose Retry-After is in seconds, or the backoff if longer", () => {
      const bench = new Bench();
      expect(bench.lines.retryAfter(response(429, "", { "retry-after": "3" }), 500)).toBe(3000);
      expect(bench.lines.retryAfter(response(503, "", { "retry-after": " 0 " }), 0)).toBe(0);
      expect(bench.lines.retryAfter(response(503, "", { "retry-after": " 0 " }), 500)).toBe(500);
      expect(bench.lines.retryAfter(response(429, "", { "retry-after": "1" }), 4000)).toBe(4000);
    });

    it("gives the wait of a Retry-After that is an HTTP date, and at least the backoff for a date past", () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.parse("2026-10-21T07:28:00Z"));
      const bench = new Bench();
      expect(bench.lines.retryAfter(response(503, "", { "retry-after": "Wed, 21 Oct 2026 07:28:30 GMT" }), 500)).toBe(30_000);
      expect(bench.lines.retryAfter(response(503, "", { "retry-after": "Wed, 21 Oct 2026 07:00:00 GMT" }), 500)).toBe(500);
    });

    it("gives the backoff without a readable Retry-After, null for other statuses, too-long for a wait over maxRetryAfterMs", () => {
      const bench = new Bench({ maxRetryAfterMs: 5000 });
      expect(bench.lines.retryAfter(response(500, "", { "retry-after": "1" }), 500)).toBeNull();
      expect(bench.lines.retryAfter(response(200, "", { "retry-after": "1" }), 500)).toBeNull();
      expect(bench.lines.retryAfter(response(429), 500)).toBe(500);
      expect(bench.lines.retryAfter(response(429, "", { "retry-after": "soon" }), 1000)).toBe(1000);
      expect(bench.lines.retryAfter(response(429, "", { "retry-after": "5" }), 500)).toBe(5000);
      expect(bench.lines.retryAfter(response(429, "", { "retry-after": "6" }), 500)).toBe("too-long");
    });
  });

  describe("retryAfterMs", () => {
    const now = Date.parse("1994-11-06T08:49:00Z");

    it("reads delay-seconds and each of the three HTTP date forms", () => {
      expect(retryAfterMs("120", now)).toBe(120_000);
      expect(retryAfterMs("Sun, 06 Nov 1994 08:49:37 GMT", now)).toBe(37_000);
      expect(retryAfterMs("Sunday, 06-Nov-94 08:49:37 GMT", now)).toBe(37_000);
      expect(retryAfterMs("Sun Nov  6 08:49:37 1994", now)).toBe(37_000);
    });

    it("reads a date without a zone as GMT whatever the local time zone", () => {
      vi.stubEnv("TZ", "America/New_York");
      try {
        expect(retryAfterMs("Sun Nov  6 08:49:37 1994", now)).toBe(37_000);
      } finally {
        vi.unstubAllEnvs();
      }
    });

    it("gives 0 for a date already past, and null for a value absent or unreadable", () => {
      expect(retryAfterMs("Sun, 06 Nov 1994 08:00:00 GMT", now)).toBe(0);
      expect(retryAfterMs(undefined, now)).toBeNull();
      expect(retryAfterMs("", now)).toBeNull();
      expect(retryAfterMs("later", now)).toBeNull();
      // Date.parse takes each of these for a date in 2001, which would mean "retry at once".
      expect(retryAfterMs("1.5", now)).toBeNull();
      expect(retryAfterMs("-5", now)).toBeNull();
    });
  });

  describe("holdBack", () => {
    it("makes a later turn of the held host wait until the hold ends, with politeness otherwise off", () => {
      const bench = new Bench();
      const first = item(`${A}/1`);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      bench.lines.holdBack(first.url, 2000);
      bench.lines.finished(first);
      const again: QueueItem = { ...first, tries: 1 };
      expect(bench.lines.turn(again)).toEqual({ kind: "wait" });
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "wait" });
      expect(bench.lines.turn(item(`${B}/1`))).toEqual({ kind: "go" }); // Only that host is held.
      expect(bench.pendingMs()).toEqual([2000]);
      bench.advance(1999);
      expect(bench.requeued).toEqual([]);
      bench.advance(1);
      expect(bench.takeRequeued()).toEqual([again, item(`${A}/2`)]);
      expect(bench.lines.turn(again)).toEqual({ kind: "go" });
    });

    it("holds back URLs handed their turn before the hold, keeping their order", () => {
      const bench = new Bench({ robots: true });
      const items = [1, 2, 3].map(function page(n) {
        return item(`${A}/${n}`);
      });
      for (const each of items) bench.lines.turn(each);
      bench.lines.robotsRead(robotsOf(A, {}, response(404)));
      expect(bench.takeRequeued()).toEqual(items); // No limit: all three are handed their turn at once.
      expect(bench.lines.turn(items[0])).toEqual({ kind: "go" });
      bench.lines.holdBack(items[0].url, 3000); // A 503 with Retry-After: 3.
      bench.lines.finished(items[0]);
      const late = item(`${A}/4`);
      expect(bench.lines.turn(late)).toEqual({ kind: "wait" });
      expect(bench.lines.turn(items[1])).toEqual({ kind: "wait" });
      expect(bench.lines.turn(items[2])).toEqual({ kind: "wait" });
      expect(bench.lines.waitingUrls).toBe(3);
      bench.advance(3000);
      expect(bench.takeRequeued()).toEqual([items[1], items[2], late]);
    });
  });

  describe("rest", () => {
    it("hands a URL back once its pause before a retry is over, counting it as waiting meanwhile, and frees its host's slot", () => {
      const bench = new Bench({ maxPerHost: 1 });
      const flaky = item(`${A}/1`);
      expect(bench.lines.turn(flaky)).toEqual({ kind: "go" });
      const again: QueueItem = { ...flaky, tries: 1 };
      bench.lines.rest(again, 500);
      bench.lines.finished(flaky);
      expect(bench.lines.waitingUrls).toBe(1);
      expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "go" }); // The slot is free while it rests.
      bench.advance(499);
      expect(bench.requeued).toEqual([]);
      bench.advance(1);
      expect(bench.takeRequeued()).toEqual([again]);
      expect(bench.lines.waitingUrls).toBe(0);
      expect(bench.lines.turn(again)).toEqual({ kind: "wait" }); // Back through the line: /2 holds the one slot.
    });

    it("makes a URL whose rest ends during its host's Retry-After hold wait for the hold", () => {
      const bench = new Bench();
      const [busy, flaky] = [item(`${A}/busy`), item(`${A}/flaky`)];
      bench.lines.turn(busy);
      bench.lines.turn(flaky);
      bench.lines.rest({ ...flaky, tries: 1 }, 100);
      bench.lines.finished(flaky);
      bench.lines.holdBack(busy.url, 2000);
      bench.lines.finished(busy);
      bench.advance(100);
      const [again] = bench.takeRequeued() as [QueueItem];
      expect(bench.lines.turn(again)).toEqual({ kind: "wait" });
      bench.advance(1899);
      expect(bench.requeued).toEqual([]);
      bench.advance(1);
      expect(bench.takeRequeued()).toEqual([again]);
    });

    it("returns the resting URLs at close, and hands none back afterwards", () => {
      const bench = new Bench();
      const resting = { ...item(`${A}/1`), tries: 1 };
      bench.lines.rest(resting, 100);
      expect(bench.lines.close()).toEqual([resting]);
      expect(bench.lines.waitingUrls).toBe(0);
      bench.advance(1000);
      expect(bench.requeued).toEqual([]);
    });
  });

  describe("close", () => {
    it("returns the waiting URLs, calls off pending wake-ups and hands nothing back afterwards", () => {
      const bench = new Bench({ delayMs: 1000, robots: true });
      const first = item(`${A}/1`);
      bench.lines.turn(first);
      bench.lines.robotsRead(robotsOf(A, {}, response(404)));
      bench.advance(1000);
      expect(bench.takeRequeued()).toEqual([first]);
      expect(bench.lines.turn(first)).toEqual({ kind: "go" });
      const waiting = [item(`${A}/2`), item(`${A}/3`), item(`${B}/1`)];
      for (const each of waiting) bench.lines.turn(each);
      expect(bench.pending()).toHaveLength(1);
      expect(bench.lines.waitingUrls).toBe(3);

      expect(bench.lines.close()).toEqual(waiting);
      expect(bench.pending()).toEqual([]);
      expect(bench.lines.waitingUrls).toBe(0);
      bench.lines.finished(first);
      bench.lines.robotsRead(robotsOf(B, {}, response(404)));
      bench.advance(10_000);
      expect(bench.requeued).toEqual([]);
      expect(bench.lines.close()).toEqual([]);
    });
  });

  describe("waitingUrls", () => {
    it("counts the URLs in the lines, not those handed their turn or in flight", () => {
      const bench = new Bench({ maxPerHost: 1 });
      const first = item(`${A}/1`);
      bench.lines.turn(first);
      bench.lines.turn(item(`${A}/2`));
      bench.lines.turn(item(`${A}/3`));
      bench.lines.turn(item(`${B}/1`));
      bench.lines.turn(item(`${B}/2`));
      expect(bench.lines.waitingUrls).toBe(3);
      bench.lines.finished(first);
      expect(bench.lines.waitingUrls).toBe(2);
    });
  });
});

describe("HostLines with a store that hands back copies", () => {
  it("knows a URL handed its turn by its URL, so a copy of the item goes", () => {
    const bench = new Bench({ maxPerHost: 1 });
    expect(bench.lines.turn(item(`${A}/1`))).toEqual({ kind: "go" });
    expect(bench.lines.turn(item(`${A}/2`))).toEqual({ kind: "wait" });
    bench.lines.finished(item(`${A}/1`));
    const [handed] = bench.takeRequeued();
    // A store that serialises its items (Redis) hands back an equal item, never the same object.
    expect(bench.lines.turn(structuredClone(handed as QueueItem))).toEqual({ kind: "go" });
    expect(bench.lines.waitingUrls).toBe(0);
  });
});
