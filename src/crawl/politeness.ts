/**
 * Politeness: each host's `robots.txt`, its share of the requests in flight
 * (`maxPerHost`), the pause between two requests to it (`delayMs`,
 * `Crawl-delay`) and the hold a `Retry-After` puts on it. This module only
 * decides; the stages wait, each in its own style.
 *
 * @module
 */
import type { HttpResponse } from "../http/parser.js";
import type { FetchError } from "../kernel/errors.js";
import type { ResolvedCrawlOptions } from "./options.js";
import type { RandomSource } from "./random.js";
import type { RobotsFetch, RobotsReading, RobotsRules } from "./robots.js";
import { originOf } from "./urls.js";
import type { QueueItem } from "./visit.js";

/**
 * What a URL taken from the queue may do now (from {@link HostLines.turn}):
 * - `go`: fetch it; its host counts the request until {@link HostLines.finished};
 * - `wait`: it has joined its host's line and comes back through the stage's `requeue` when its turn comes;
 * - `robots`: it waits too, and the caller reads the origin's `robots.txt` (with a {@link RobotsReading}) first;
 * - `refused`: give it a record with this error (and `detail`) and do not fetch it: `RobotsDisallowed`, or the
 *   failure that kept its origin's `robots.txt` from being read ({@link RobotsRules.refusal}).
 */
export type Turn =
  | { readonly kind: "go" }
  | { readonly kind: "wait" }
  | { readonly kind: "robots"; readonly origin: string }
  | { readonly kind: "refused"; readonly error: FetchError; readonly detail: string | null };

/** A pending call of the stage's own, that can be called off. */
export interface Cancellable {
  /** Calls it off: what was to be called later is not called. */
  cancel(): void;
}

/**
 * How a stage waits for its hosts: the two things {@link HostLines} cannot
 * do itself, since they are ways of waiting.
 */
export interface HostWaiting {
  /** Puts a URL whose turn has come back where URLs are taken from (the crawl core puts it back in its store). */
  requeue(item: QueueItem): void;
  /** Calls `wake` after `ms` milliseconds (the crawl core keeps the wake-up and hands out a wait job for it). */
  later(ms: number, wake: () => void): Cancellable;
  /** The origin's `robots.txt` rules if another process read them (a store shared by processes), else null: then this one reads it. */
  robotsKnown?(origin: string): RobotsRules | null;
}

/** One origin's state. */
interface Host {
  readonly origin: string;
  /** Its `robots.txt`: not asked for yet, being read, or read. */
  robots: "unread" | "reading" | RobotsRules;
  /** The pause between two starts here: `delayMs`, or a longer `Crawl-delay` (capped). */
  delayMs: number;
  /** Requests going on here, `robots.txt` included, and URLs handed their turn that have not started yet. */
  active: number;
  /** URLs handed their turn, back in the stage's queue, not started yet. */
  handed: number;
  /** The clock time (ms) before which no request starts here: the last start plus the delay, or a `Retry-After` hold. */
  nextStart: number;
  /** When the last request here started (ms), for the delay once `Crawl-delay` is known. */
  lastStart: number;
  /** URLs waiting for their turn, oldest first from `head`. */
  line: Array<QueueItem | undefined>;
  head: number;
  /** URLs at the front of the line that were handed their turn and put back by a `Retry-After` hold, in the order they came back. */
  returned: number;
  /** The stage's pending wake-up for this host, and when it is due. */
  timer: Cancellable | null;
  timerAt: number;
}

const GO: Turn = { kind: "go" };
const WAIT: Turn = { kind: "wait" };
const DISALLOWED = { error: "RobotsDisallowed", detail: null } as const;

/** One host's line as {@link HostLines.view} shows it. */
export interface HostView {
  readonly origin: string;
  /** URLs waiting in its line. */
  readonly waiting: number;
  /** Requests going on there, `robots.txt` included. */
  readonly inFlight: number;
  /** The clock time (ms) before which no request starts there. */
  readonly nextStart: number;
}

/**
 * The hosts of one crawl and the URLs waiting for each: the decisions of
 * politeness, shared by the three stages.
 *
 * The crawl core (src/crawl/core.ts) asks {@link HostLines.turn} for each
 * URL it takes from its store. If its host cannot take one more request now
 * (its `robots.txt` is being read, `maxPerHost` requests are in flight
 * there, its delay or a `Retry-After` has not run out), the URL joins the
 * host's line and the core goes on with other URLs: a busy host never holds
 * a worker. When a request to the host ends, its `robots.txt` is read, or a
 * wake-up for it comes due, the URLs whose turn has come are handed back
 * through {@link HostWaiting.requeue}, each with its slot kept for it. A URL
 * waiting in a line is still work left: the core counts it, so the crawl
 * cannot end while it waits.
 *
 * With `robots` off, no `maxPerHost`, no `delayMs`, and before any
 * `Retry-After`, `turn()` answers `go` without looking at the URL: politeness
 * off costs one comparison.
 *
 * @remarks A host here is an origin (scheme, name, port), as `robots.txt` is
 * per origin (RFC 9309 §2.3): `http://a.example` and `https://a.example` are
 * two hosts.
 */
export class HostLines {
  /** Every `robots.txt` read, in the order they were read. */
  readonly robotsFetches: RobotsFetch[] = [];
  private readonly hosts = new Map<string, Host>();
  /**
   * URLs handed their turn and not started: they go when taken again. Known
   * by their URL, not by the item: a store may hand back a copy (one that
   * serialises items always does).
   */
  private readonly handed = new Set<string>();
  /** True while there is nothing to decide: no politeness option is on and no host is held. */
  private idle: boolean;
  private closed = false;
  private waitingCount = 0;
  /** URLs resting after a failed attempt until their pause before a retry is over, each with its wake-up. */
  private readonly resting = new Map<QueueItem, Cancellable>();

  constructor(
    private readonly options: Pick<ResolvedCrawlOptions, "robots" | "maxPerHost" | "delayMs" | "delayJitter" | "maxCrawlDelayMs" | "maxRetryAfterMs">,
    private readonly waiting: HostWaiting,
    /** The stage's clock, in milliseconds (the crawl core's, which the stage hands it). */
    private readonly now: () => number,
    /** Uniform floats in [0, 1), seeded (src/crawl/random.ts): each delay's `delayJitter`. */
    private readonly random: RandomSource,
    /** The wall clock, ms since the epoch: a `Retry-After` given as an HTTP date is counted from it. */
    private readonly wallClock: () => number,
  ) {
    this.idle = !options.robots && options.maxPerHost === Infinity && options.delayMs === 0;
  }

  /** URLs waiting in a line, or resting before a retry, now: work left that is neither queued nor in flight. */
  get waitingUrls(): number {
    return this.waitingCount + this.resting.size;
  }

  /**
   * Each host's line as it is now, for a debugger's view (the stepper,
   * stepper/record.ts): URLs waiting in it, requests going on, and the clock
   * time (ms) before which none starts. Read-only; empty while the lines are
   * idle (no `robots`, `maxPerHost` or `delayMs`: every URL goes at once).
   */
  view(): HostView[] {
    const views: HostView[] = [];
    for (const host of this.hosts.values()) {
      let waiting = 0;
      for (let i = host.head; i < host.line.length; i++) if (host.line[i] !== undefined) waiting += 1;
      views.push({ origin: host.origin, waiting, inFlight: host.active, nextStart: host.nextStart });
    }
    return views;
  }

  /**
   * What the URL may do now (see {@link Turn}). A `go` counts a request to
   * its host until {@link HostLines.finished}; `robots` counts the
   * `robots.txt` request until {@link HostLines.robotsRead}.
   */
  turn(item: QueueItem): Turn {
    if (this.idle) return GO;
    const host = this.host(item.url);
    const handed = this.handed.delete(item.url);
    if (this.options.robots) {
      if (host.robots === "unread") this.learn(host, this.waiting.robotsKnown?.(host.origin) ?? null);
      if (host.robots === "unread") {
        host.robots = "reading";
        host.active += 1; // The robots.txt request is a request to the host too.
        this.start(host);
        this.join(host, item);
        return { kind: "robots", origin: host.origin };
      }
      if (host.robots === "reading") return this.join(host, item);
      const refused = host.robots.refusal ?? (host.robots.allows(item.url) ? null : DISALLOWED);
      if (refused !== null) {
        if (handed) this.giveBack(host); // It waited for robots.txt, which refuses it: its kept slot goes to the next URL.
        return { kind: "refused", ...refused };
      }
    }
    if (handed) {
      host.handed -= 1;
      if (this.now() < host.nextStart) return this.putBack(host, item); // A Retry-After hold came after its turn.
      this.start(host);
      return GO;
    }
    if (host.head < host.line.length || !this.free(host)) return this.join(host, item);
    host.active += 1;
    this.start(host);
    return GO;
  }

  /** A request that `turn()` let go has ended, however: its host may hand the next URL its turn. */
  finished(item: QueueItem): void {
    if (this.idle) return;
    const host = this.host(item.url);
    // A request that went while nothing was counted (before the first Retry-After of a crawl without politeness).
    host.active = Math.max(0, host.active - 1);
    this.wake(host);
  }

  /** The origin's `robots.txt` has been read: its URLs waiting for it go on (or are refused when taken). */
  robotsRead(reading: RobotsReading): void {
    const host = this.hosts.get(reading.origin);
    if (host === undefined || host.robots !== "reading") return;
    const rules = reading.rules;
    host.robots = rules;
    host.active -= 1;
    if (rules.crawlDelayMs !== null) host.delayMs = Math.max(host.delayMs, Math.min(rules.crawlDelayMs, this.options.maxCrawlDelayMs));
    host.nextStart = Math.max(host.nextStart, host.lastStart + host.delayMs);
    this.robotsFetches.push(reading.report);
    this.wake(host);
  }

  /**
   * How long a `429` or `503` asks the crawl to leave its host alone
   * before the URL is tried again: its `Retry-After` in milliseconds (in
   * seconds or as an HTTP date; 0 for a date past), or `backoffMs` when
   * that is longer or there is none; `"too-long"` when it asks for more
   * than `maxRetryAfterMs` (the response is then recorded as it is); null
   * for any other status.
   */
  retryAfter(response: HttpResponse, backoffMs: number): number | "too-long" | null {
    if (response.status !== 429 && response.status !== 503) return null;
    const ms = retryAfterMs(response.headers["retry-after"], this.wallClock());
    if (ms !== null && ms > this.options.maxRetryAfterMs) return "too-long";
    return Math.max(ms ?? 0, backoffMs);
  }

  /**
   * Holds the host of `url` back for `ms` milliseconds (a `Retry-After`, on
   * a page or on a `robots.txt`): no request starts there before then, a
   * retry's included, since every retry of a page comes back through its
   * host's line ({@link HostLines.rest}). For a page, the caller queues the
   * URL again, with its attempts so far, and it waits in the host's line.
   */
  holdBack(url: string, ms: number): void {
    this.idle = false;
    const host = this.host(url);
    host.nextStart = Math.max(host.nextStart, this.now() + ms);
  }

  /**
   * How long before a request may start at the host of `url` (its delay, or
   * a `Retry-After` hold, not run out), in milliseconds; 0 when it may now.
   * A `robots.txt` retry waits this too, since it does not go through the line.
   */
  holdLeft(url: string): number {
    if (this.idle) return 0;
    return Math.max(0, this.host(url).nextStart - this.now());
  }

  /**
   * A page's attempt failed and is to be tried again after `ms` (the pause
   * before a retry): the URL rests until then, then goes back into the queue
   * through the stage's `requeue`, and takes its turn at its host like any
   * URL. So a retry obeys the host's `Retry-After` hold, `maxPerHost` and
   * delay, and holds no slot there while it rests. It counts in
   * {@link HostLines.waitingUrls} meanwhile.
   */
  rest(item: QueueItem, ms: number): void {
    if (this.closed) return;
    const { resting, waiting } = this;
    let over = false;
    const wakeup = waiting.later(ms, function restOver() {
      over = true;
      resting.delete(item);
      waiting.requeue(item);
    });
    if (!over) resting.set(item, wakeup); // A `later` that calls back at once has requeued it already.
  }

  /**
   * The crawl is stopping: every URL waiting in a line is taken out and
   * returned (each is `todo`, and the stage marks it done), every pending
   * wake-up is called off, and no URL is handed back from now on.
   */
  close(): QueueItem[] {
    this.closed = true;
    const dropped: QueueItem[] = [];
    for (const host of this.hosts.values()) {
      for (const item of host.line.slice(host.head)) if (item !== undefined) dropped.push(item);
      host.line = [];
      host.head = 0;
      host.returned = 0;
      host.timer?.cancel();
      host.timer = null;
    }
    for (const [item, wakeup] of this.resting) {
      wakeup.cancel();
      dropped.push(item);
    }
    this.resting.clear();
    this.waitingCount = 0;
    return dropped;
  }

  /** Rules another process read: the host goes by them, with no `robots.txt` request (nor delay) of its own here. */
  private learn(host: Host, rules: RobotsRules | null): void {
    if (rules === null) return;
    host.robots = rules;
    if (rules.crawlDelayMs !== null) host.delayMs = Math.max(host.delayMs, Math.min(rules.crawlDelayMs, this.options.maxCrawlDelayMs));
  }

  private host(url: string): Host {
    const origin = originOf(url);
    let host = this.hosts.get(origin);
    if (host === undefined) {
      host = { origin, robots: "unread", delayMs: this.options.delayMs, active: 0, handed: 0, nextStart: 0, lastStart: -Infinity, line: [], head: 0, returned: 0, timer: null, timerAt: 0 };
      this.hosts.set(origin, host);
    }
    return host;
  }

  /** A request starts at the host now: the next one waits the delay (with its jitter, if any). */
  private start(host: Host): void {
    const now = this.now();
    host.lastStart = now;
    const jitter = this.options.delayJitter === 0 ? 0 : host.delayMs * this.options.delayJitter * this.random();
    host.nextStart = Math.max(host.nextStart, now + host.delayMs + jitter);
    if (host.head < host.line.length) this.wake(host); // Its line goes on once the delay is over.
  }

  /** A URL handed its turn does not go: the slot kept for it is free again. */
  private giveBack(host: Host): void {
    host.handed -= 1;
    host.active -= 1;
    this.wake(host);
  }

  /**
   * A URL handed its turn met a `Retry-After` hold when taken: its slot is
   * free again, and it waits ahead of the URLs that joined the line after it
   * was handed its turn (behind those put back before it).
   */
  private putBack(host: Host, item: QueueItem): Turn {
    host.active -= 1;
    host.line.splice(host.head + host.returned, 0, item);
    host.returned += 1;
    this.waitingCount += 1;
    this.wake(host);
    return WAIT;
  }

  /** Puts the URL at the end of its host's line. */
  private join(host: Host, item: QueueItem): Turn {
    host.line.push(item);
    this.waitingCount += 1;
    this.wake(host);
    return WAIT;
  }

  /**
   * Whether one more request may start at the host now. While a URL handed its
   * turn has not started, the next waits for it when there is a delay: the
   * delay counts from that start.
   */
  private free(host: Host): boolean {
    if (host.robots === "reading") return false;
    if (host.active >= this.options.maxPerHost) return false;
    if (host.handed > 0 && host.delayMs > 0) return false;
    return this.now() >= host.nextStart;
  }

  /**
   * Hands their turn to the URLs at the front of the host's line while it is
   * free; if only time stands in the way, asks the stage to wake it then.
   */
  private wake(host: Host): void {
    if (this.closed) return;
    while (host.head < host.line.length && this.free(host)) {
      const item = host.line[host.head] as QueueItem; // head < length: the slot holds a URL.
      host.line[host.head++] = undefined; // Taken: the line no longer keeps it alive.
      if (host.returned > 0) host.returned -= 1;
      this.waitingCount -= 1;
      host.active += 1;
      host.handed += 1;
      this.handed.add(item.url);
      this.waiting.requeue(item);
    }
    if (host.head === host.line.length) {
      host.line = [];
      host.head = 0;
      return;
    }
    if (host.head * 2 > host.line.length) {
      host.line = host.line.slice(host.head); // Not shift(): see the stage 1 Crawler's takeTodo.
      host.head = 0;
    }
    const timeOnly = host.robots !== "reading" && host.active < this.options.maxPerHost && !(host.handed > 0 && host.delayMs > 0);
    if (!timeOnly) return; // A request's end, a handed URL's start or the robots.txt wakes it.
    if (host.timer !== null && host.timerAt <= host.nextStart) return;
    host.timer?.cancel();
    host.timerAt = host.nextStart;
    host.timer = this.waiting.later(Math.max(0, host.nextStart - this.now()), () => {
      host.timer = null;
      this.wake(host);
    });
  }
}

/**
 * An HTTP date starts with the day's name in each of its three forms (RFC
 * 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37
 * GMT`, `Sun Nov  6 08:49:37 1994`.
 */
const HTTP_DATE_START = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i;

/**
 * The wait a `Retry-After` value asks for, in milliseconds: delay-seconds
 * (`120`) or an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`, 0 when past);
 * null when absent or unreadable.
 *
 * @remarks `Date.parse` alone reads too much: `1.5` or `-5` as dates of 2001
 * (long past, so "retry at once"), and the zoneless asctime form in local
 * time, where HTTP dates are all GMT.
 */
export function retryAfterMs(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE_START.test(text)) return null;
  const date = Date.parse(/ GMT$/i.test(text) ? text : `${text} GMT`);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
