/**
 * `traceCrawl` on its own: synthetic messages published on the channels (and
 * on undici's), no stage, no network.
 */
import diagnostics_channel from "node:diagnostics_channel";
import { afterEach, describe, expect, it } from "vitest";
import { crawlChannel, loopChannel, nextCrawlId, nextLoopId } from "../../src/observe/channels.js";
import type { CrawlMessage, LoopMessage, StageName } from "../../src/observe/channels.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { traceCrawl } from "../../src/observe/trace.js";

const A = "http://127.0.0.1:1/a";
const B = "http://127.0.0.1:1/b?q=1";
const C = "http://127.0.0.1:1/c";
const COUNTERS = { queued: 0, unfinished: 1, inFlight: 1 };

/** The stops of every tracer a test started, called after it. */
const stops: Array<() => void> = [];

afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** A traced crawl of `stage`, started: its id, its loop id (stages 1, 2), and the events it got. */
function traced(stage: StageName): { crawl: number; loop: number | null; events: TraceEvent[] } {
  const crawl = nextCrawlId();
  const loop = stage === "asyncawait" ? null : nextLoopId();
  const events: TraceEvent[] = [];
  stops.push(
    traceCrawl(crawl, function collect(event) {
      events.push(event);
    }),
  );
  publish({ type: "crawl-start", crawl, stage, loop });
  return { crawl, loop, events };
}

function publish(message: CrawlMessage): void {
  crawlChannel.publish(message);
}

function publishLoop(message: LoopMessage): void {
  loopChannel.publish(message);
}

function start(crawl: number, url: string, attempt = 1): void {
  publish({ type: "fetch-start", crawl, url, attempt, ...COUNTERS });
}

function end(crawl: number, url: string, attempt = 1, error: string | null = null): void {
  publish({ type: "fetch-end", crawl, url, attempt, status: error === null ? 200 : null, error, ...COUNTERS });
}

/** `[type, url, slot]` of each event that has a slot. */
function slots(events: readonly TraceEvent[]): Array<[string, string, number]> {
  return events.flatMap((event) => ("slot" in event ? [[event.type, event.url, event.slot] satisfies [string, string, number]] : []));
}

/** `[type, url, worker]` of each event that has a worker. */
function workers(events: readonly TraceEvent[]): Array<[string, string, number]> {
  return events.flatMap((event) => ("worker" in event ? [[event.type, event.url, event.worker] satisfies [string, string, number]] : []));
}

describe("traceCrawl", () => {
  it("hands on only its own crawl's messages and its own loop's", () => {
    const one = traced("callbacks");
    const two = traced("generators");
    start(one.crawl, A);
    start(two.crawl, B);
    publishLoop({ type: "select", loop: one.loop ?? -1, ready: 0 });
    publishLoop({ type: "step", loop: two.loop ?? -1, task: 1, coroutine: "work", yielded: "read" });
    end(two.crawl, B);
    end(one.crawl, A);
    expect(one.events.map((event) => event.type)).toEqual(["fetch-start", "select", "fetch-end"]);
    expect(two.events.map((event) => event.type)).toEqual(["fetch-start", "step", "fetch-end"]);
    expect(one.events.every((event) => event.stage === "callbacks" && (!("url" in event) || event.url === A))).toBe(true);
    expect(two.events.every((event) => event.stage === "generators" && (!("url" in event) || event.url === B))).toBe(true);
  });

  it("builds each event from its message: the message's fields, t since the crawl-start and the stage, no crawl or loop id", () => {
    const { crawl, loop, events } = traced("generators");
    start(crawl, A);
    publish({ type: "read", crawl, url: A, bytes: 12 });
    publishLoop({ type: "resolve", loop: loop ?? -1, future: 7, label: "read" });
    publish({ type: "fetch-end", crawl, url: A, attempt: 1, status: null, error: "Timeout", queued: 2, unfinished: 3, inFlight: 1 });
    const [, read, resolve, fetchEnd] = events;
    expect(read).toEqual({ t: read.t, stage: "generators", type: "read", url: A, slot: 0, bytes: 12 });
    expect(resolve).toEqual({ t: resolve.t, stage: "generators", type: "resolve", future: 7, label: "read" });
    expect(fetchEnd).toEqual({
      ...{ t: fetchEnd.t, stage: "generators", type: "fetch-end", url: A, slot: 0, attempt: 1 },
      ...{ status: null, error: "Timeout", detail: null, queued: 2, unfinished: 3, inFlight: 1 },
    });
    let previous = 0;
    for (const event of events) {
      expect(event.t).toBeGreaterThanOrEqual(previous);
      previous = event.t;
    }
  });

  it("gives a new URL the slot given back last, and a retry the slot its URL left", () => {
    const { crawl, events } = traced("callbacks");
    start(crawl, A); // slot 0
    start(crawl, B); // slot 1
    end(crawl, A, 1, "ConnectionReset");
    start(crawl, A, 2); // its own slot again
    end(crawl, B); // gives back 1
    start(crawl, C); // the slot given back last
    end(crawl, A, 2);
    end(crawl, C);
    expect(slots(events)).toEqual([
      ["fetch-start", A, 0],
      ["fetch-start", B, 1],
      ["fetch-end", A, 0],
      ["fetch-start", A, 0],
      ["fetch-end", B, 1],
      ["fetch-start", C, 1],
      ["fetch-end", A, 0],
      ["fetch-end", C, 1],
    ]);
  });

  it("gives a retry back its slot even when another URL started in between, if the slot is still free", () => {
    const { crawl, events } = traced("generators");
    start(crawl, A); // 0
    start(crawl, B); // 1
    end(crawl, A, 1, "ConnectionReset"); // free: [0]
    end(crawl, B); // free: [0, 1]
    start(crawl, C); // takes 1, given back last
    start(crawl, A, 2); // 0, the slot A left
    expect(slots(events).filter(([type]) => type === "fetch-start")).toEqual([
      ["fetch-start", A, 0],
      ["fetch-start", B, 1],
      ["fetch-start", C, 1],
      ["fetch-start", A, 0],
    ]);
  });

  it("uses no more slots than attempts are open at once", () => {
    const { crawl, events } = traced("callbacks");
    const urls = Array.from({ length: 30 }, (_, i) => `http://127.0.0.1:1/${i}`);
    for (let i = 0; i < urls.length; i++) {
      start(crawl, urls[i]);
      if (i >= 2) end(crawl, urls[i - 2]); // three open at most
    }
    expect(new Set(slots(events).map(([, , slot]) => slot))).toEqual(new Set([0, 1, 2]));
  });

  it("gives a stage-3 URL a worker from its take to its done, and its fetch events that worker as slot", () => {
    const { crawl, events } = traced("asyncawait");
    publish({ type: "take", crawl, url: A });
    publish({ type: "take", crawl, url: B });
    start(crawl, A);
    end(crawl, A, 1, "ConnectionReset");
    publish({ type: "await", crawl, url: A, what: "sleep" });
    publish({ type: "resume", crawl, url: A });
    start(crawl, A, 2);
    end(crawl, A, 2);
    publish({ type: "done", crawl, url: A });
    publish({ type: "take", crawl, url: C });
    publish({ type: "done", crawl, url: B });
    publish({ type: "done", crawl, url: C });
    expect(workers(events)).toEqual([
      ["take", A, 0],
      ["take", B, 1],
      ["await", A, 0], // client.get: each attempt's, after its fetch-start
      ["resume", A, 0], // before its fetch-end
      ["await", A, 0], // the pause, as the crawler published it
      ["resume", A, 0],
      ["await", A, 0],
      ["resume", A, 0],
      ["done", A, 0],
      ["take", C, 0],
      ["done", B, 1],
      ["done", C, 0],
    ]);
    expect(slots(events)).toEqual([
      ["fetch-start", A, 0],
      ["fetch-end", A, 0],
      ["fetch-start", A, 0],
      ["fetch-end", A, 0],
    ]);
    expect(events.flatMap((event) => (event.type === "await" ? [event.what] : []))).toEqual(["client.get", "sleep", "client.get"]);
    expect(events.map((event) => event.type).slice(2, 6)).toEqual(["fetch-start", "await", "resume", "fetch-end"]);
  });

  it("names a dispatch's URL and socket from the socket's connect", () => {
    const { crawl, loop, events } = traced("callbacks");
    const id = loop ?? -1;
    start(crawl, A);
    // The socket's first dispatch comes before its connect: it waits for it.
    publishLoop({ type: "dispatch", loop: id, callback: "connected", fd: 5 });
    publish({ type: "connect", crawl, url: A, fd: 5 });
    publish({ type: "send", crawl, url: A });
    publishLoop({ type: "select", loop: id, ready: 1 });
    publishLoop({ type: "dispatch", loop: id, callback: "readResponse", fd: 5 });
    publish({ type: "first-byte", crawl, url: A });
    publish({ type: "read", crawl, url: A, bytes: 100 });
    end(crawl, A);
    publishLoop({ type: "select", loop: id, ready: 1 });
    expect(events.map((event) => (event.type === "dispatch" ? `dispatch ${event.callback} ${event.url} #${event.socket}` : event.type))).toEqual([
      "fetch-start",
      `dispatch connected ${A} #5`,
      "connect",
      "send",
      "select",
      `dispatch readResponse ${A} #5`,
      "first-byte",
      "read",
      "fetch-end",
      "select",
    ]);
  });

  it("names the dispatch of a socket that failed to connect from the attempt's fetch-end, and one nothing names with null", () => {
    const { crawl, loop, events } = traced("callbacks");
    const id = loop ?? -1;
    start(crawl, A);
    publishLoop({ type: "dispatch", loop: id, callback: "connected", fd: 8 });
    end(crawl, A, 1, "ConnectionRefused");
    publishLoop({ type: "dispatch", loop: id, callback: "connected", fd: 9 });
    publishLoop({ type: "select", loop: id, ready: 2 });
    const dispatches = events.filter((event) => event.type === "dispatch");
    expect(dispatches.map((event) => [event.url, event.socket])).toEqual([
      [A, 8],
      [null, 9],
    ]);
    expect(events.map((event) => event.type)).toEqual(["fetch-start", "dispatch", "fetch-end", "dispatch", "select"]);
  });

  it("forgets a socket's URL when its attempt ends", () => {
    const { crawl, loop, events } = traced("callbacks");
    start(crawl, A);
    publish({ type: "connect", crawl, url: A, fd: 3 });
    end(crawl, A);
    publishLoop({ type: "dispatch", loop: loop ?? -1, callback: "readResponse", fd: 3 });
    publishLoop({ type: "select", loop: loop ?? -1, ready: 1 });
    expect(events.find((event) => event.type === "dispatch")).toMatchObject({ url: null, socket: 3 });
  });

  it("drops an attempt's step when no attempt of its URL is open", () => {
    const { crawl, events } = traced("generators");
    publish({ type: "read", crawl, url: A, bytes: 1 });
    start(crawl, A);
    end(crawl, A);
    publish({ type: "read", crawl, url: A, bytes: 1 });
    expect(events.map((event) => event.type)).toEqual(["fetch-start", "fetch-end"]);
  });

  it("ignores a trace function that throws, and hands it the next events all the same", async () => {
    const crawl = nextCrawlId();
    let calls = 0;
    stops.push(
      traceCrawl(crawl, function broken() {
        calls += 1;
        throw new Error("a broken watcher");
      }),
    );
    // diagnostics_channel never throws at publish: it rethrows a subscriber's
    // error on the next tick, as an uncaught exception. Listen for that.
    const uncaught: unknown[] = [];
    const listeners = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    function collect(error: unknown): void {
      uncaught.push(error);
    }
    process.on("uncaughtException", collect);
    try {
      publish({ type: "crawl-start", crawl, stage: "callbacks", loop: null });
      start(crawl, A);
      end(crawl, A);
      await new Promise(process.nextTick);
      await new Promise(setImmediate);
    } finally {
      process.off("uncaughtException", collect);
      for (const listener of listeners) process.on("uncaughtException", listener);
    }
    expect(uncaught).toEqual([]);
    expect(calls).toBe(2);
  });

  it("unsubscribes when stopped: no subscriber is left on the channels, and later messages go nowhere", () => {
    expect(crawlChannel.hasSubscribers).toBe(false);
    const crawl = nextCrawlId();
    const events: TraceEvent[] = [];
    const stop = traceCrawl(crawl, function collect(event) {
      events.push(event);
    });
    expect(crawlChannel.hasSubscribers).toBe(true);
    expect(loopChannel.hasSubscribers).toBe(true);
    publish({ type: "crawl-start", crawl, stage: "callbacks", loop: null });
    stop();
    expect(crawlChannel.hasSubscribers).toBe(false);
    expect(loopChannel.hasSubscribers).toBe(false);
    start(crawl, A);
    expect(events).toEqual([]);
  });
});

describe("traceCrawl of a stage-3 crawl, from undici's channels", () => {
  const UNDICI = ["undici:request:create", "undici:client:sendHeaders", "undici:request:headers", "undici:request:bodyChunkReceived"];

  /** A stand-in for undici's Request: what our subscriber reads of it. */
  function request(url: string): { origin: string; path: string } {
    const target = new URL(url);
    return { origin: target.origin, path: target.pathname + target.search };
  }

  function undici(name: string, message: object): void {
    diagnostics_channel.channel(name).publish(message);
  }

  /** What undici publishes for one exchange, once the request exists. */
  function exchange(req: object, chunks: number[]): void {
    undici("undici:client:sendHeaders", { request: req, headers: "GET / HTTP/1.1\r\n", socket: {} });
    undici("undici:request:headers", { request: req, response: { statusCode: 200, headers: [], statusText: "OK" } });
    for (const size of chunks) undici("undici:request:bodyChunkReceived", { request: req, chunk: Buffer.alloc(size) });
  }

  it("subscribes to undici's channels only while a stage-3 crawl is traced", () => {
    const subscribed = () => UNDICI.map((name) => diagnostics_channel.hasSubscribers(name));
    expect(subscribed()).toEqual([false, false, false, false]);
    traced("callbacks");
    traced("generators");
    expect(subscribed()).toEqual([false, false, false, false]);
    traced("asyncawait");
    expect(subscribed()).toEqual([true, true, true, true]);
    for (const stop of stops.splice(0)) stop();
    expect(subscribed()).toEqual([false, false, false, false]);
  });

  it("reports connect and send when undici sends the headers, first-byte at the response's head, and a read per body chunk", () => {
    const { crawl, events } = traced("asyncawait");
    publish({ type: "take", crawl, url: B });
    start(crawl, B);
    const req = request(B);
    undici("undici:request:create", { request: req }); // inside the dispatch, right after the fetch-start
    exchange(req, [100, 20]);
    end(crawl, B);
    expect(slots(events)).toEqual([
      ["fetch-start", B, 0],
      ["connect", B, 0],
      ["send", B, 0],
      ["first-byte", B, 0],
      ["read", B, 0],
      ["read", B, 0],
      ["fetch-end", B, 0],
    ]);
    expect(events.filter((event) => event.type === "read").map((event) => event.bytes)).toEqual([100, 20]);
  });

  it("matches a request undici makes later (queued in its pool) by its URL", () => {
    const { crawl, events } = traced("asyncawait");
    publish({ type: "take", crawl, url: A });
    publish({ type: "take", crawl, url: C });
    start(crawl, A);
    start(crawl, C);
    const req = request(A);
    undici("undici:request:create", { request: req }); // not right after A's fetch-start
    exchange(req, [5]);
    end(crawl, A);
    expect(slots(events).map(([type, url]) => `${type} ${url}`)).toEqual([
      `fetch-start ${A}`,
      `fetch-start ${C}`,
      `connect ${A}`,
      `send ${A}`,
      `first-byte ${A}`,
      `read ${A}`,
      `fetch-end ${A}`,
    ]);
  });

  it("leaves alone a request made for another crawl's fetch-start of the same URL, and one of no crawl", () => {
    const { crawl, events } = traced("asyncawait");
    const other = nextCrawlId(); // untraced, but it publishes while anyone subscribes
    publish({ type: "take", crawl, url: A });
    start(crawl, A);
    start(other, A);
    const theirs = request(A);
    undici("undici:request:create", { request: theirs });
    exchange(theirs, [1]);
    const stranger = request("http://127.0.0.1:1/elsewhere");
    undici("undici:request:create", { request: stranger });
    exchange(stranger, [1]);
    const ours = request(A);
    undici("undici:request:create", { request: ours });
    exchange(ours, [2]);
    end(crawl, A);
    expect(events.filter((event) => event.type === "read").map((event) => event.bytes)).toEqual([2]);
  });

  it("drops what undici says about a request after its attempt ended", () => {
    const { crawl, events } = traced("asyncawait");
    publish({ type: "take", crawl, url: A });
    start(crawl, A);
    const req = request(A);
    undici("undici:request:create", { request: req });
    end(crawl, A, 1, "Timeout");
    exchange(req, [10]);
    expect(events.map((event) => event.type)).toEqual(["take", "fetch-start", "await", "resume", "fetch-end"]);
  });

  it("keeps two stage-3 crawls traced at once apart", () => {
    const one = traced("asyncawait");
    const two = traced("asyncawait");
    const pairs: Array<[number, string]> = [
      [one.crawl, A],
      [two.crawl, B],
    ];
    for (const [crawl, url] of pairs) {
      publish({ type: "take", crawl, url });
      start(crawl, url);
      const req = request(url);
      undici("undici:request:create", { request: req });
      exchange(req, [1]);
      end(crawl, url);
    }
    expect(new Set(one.events.map((event) => ("url" in event ? event.url : null)))).toEqual(new Set([A]));
    expect(new Set(two.events.map((event) => ("url" in event ? event.url : null)))).toEqual(new Set([B]));
    expect(one.events.map((event) => event.type)).toEqual(two.events.map((event) => event.type));
  });
});
