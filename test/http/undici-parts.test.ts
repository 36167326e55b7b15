/**
 * Stage 3 requires undici's connection classes from the files that define
 * them (src/http/undici.ts), not from the package's index: they must be the
 * very ones the index exports, or an undici release that moved them would
 * hand the crawl something else. Its pools build on undici's internal
 * `PoolBase` as undici's own `Pool` does: that must still hold too. Its
 * handler is written to the methods undici's HTTP/1 client calls, and names
 * header fields with undici's own `headerNameToString`: both are checked here.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as undici from "undici";
import { describe, expect, it } from "vitest";
import { Agent, buildConnector, Client, headerNameToString, poolBase, responseHeaders } from "../../src/http/undici.js";

describe("undici's parts as stage 3 requires them", () => {
  it("are the classes and the function undici's index exports", () => {
    expect(Agent).toBe(undici.Agent);
    expect(Client).toBe(undici.Client);
    expect(buildConnector).toBe(undici.buildConnector);
  });
});

describe("undici's PoolBase, which stage 3's ConnectionPool extends", () => {
  it("is what undici's Pool extends, and Pool chooses its client through kGetDispatcher and kNeedDrain", () => {
    expect(Object.getPrototypeOf(undici.Pool)).toBe(poolBase.PoolBase);
    for (const key of ["kClients", "kNeedDrain", "kAddClient", "kGetDispatcher"] as const) expect(typeof poolBase[key]).toBe("symbol");
    expect(typeof Reflect.get(undici.Pool.prototype, poolBase.kGetDispatcher)).toBe("function");
    expect(typeof Reflect.get(poolBase.PoolBase.prototype, poolBase.kAddClient)).toBe("function");
    expect(String(Reflect.get(undici.Pool.prototype, poolBase.kGetDispatcher))).toContain("kNeedDrain");
  });
});

describe("undici's HTTP/1 client and a handler of its core methods", () => {
  it("calls the handler's own methods, unwrapped, with the head's fields as Buffers", async () => {
    const server = createServer(function answer(_request, response) {
      response.setHeader("X-Many", ["a", "b"]);
      response.setHeader("Content-Type", "text/plain");
      response.end("hello");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const calls: string[] = [];
    let raw: unknown = null;
    const body: Buffer[] = [];
    const done = new Promise<void>(function dispatch(resolve, reject) {
      const handler = {
        onConnect(abort: unknown): void {
          calls.push(this === handler && typeof abort === "function" ? "onConnect" : "onConnect: wrapped");
        },
        onResponseStarted(): void {
          calls.push(this === handler ? "onResponseStarted" : "onResponseStarted: wrapped");
        },
        onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
          calls.push(this === handler ? `onHeaders ${statusCode}` : "onHeaders: wrapped");
          raw = rawHeaders;
          return true;
        },
        onData(chunk: Buffer): boolean {
          body.push(chunk);
          return true;
        },
        onComplete(): void {
          calls.push(this === handler ? "onComplete" : "onComplete: wrapped");
          resolve();
        },
        onError: reject,
      };
      client.dispatch({ method: "GET", path: "/" }, handler);
    });
    try {
      await done;
    } finally {
      await client.close();
      server.close();
    }
    expect(calls).toEqual(["onConnect", "onResponseStarted", "onHeaders 200", "onComplete"]);
    expect(Buffer.concat(body).toString()).toBe("hello");
    expect(Array.isArray(raw) && raw.every((field) => Buffer.isBuffer(field))).toBe(true);
    if (!Array.isArray(raw)) return;
    expect(responseHeaders(raw)).toMatchObject({ "x-many": "a, b", "content-type": "text/plain", "content-length": "5" });
  });

  it("names fields with the headerNameToString its parseHeaders uses", () => {
    expect(typeof headerNameToString).toBe("function");
    expect(headerNameToString(Buffer.from("Content-Type"))).toBe("content-type");
    expect(headerNameToString(Buffer.from("X-Odd-NAME"))).toBe("x-odd-name");
  });
});

describe("responseHeaders", () => {
  const raw = (...fields: string[]): Buffer[] => fields.map((field) => Buffer.from(field, "latin1"));

  it("gives what undici's parseHeaders gave, joined as stage 3 joined it before", () => {
    const fields = raw("Set-Cookie", "a=1", "Cookie", "x=1", "cookie", "y=2", "Content-Type", "text/html", "content-type", "text/plain", "X-A", "1", "x-a", "2", "X-Latin", "caf\xe9");
    expect(responseHeaders(fields)).toEqual({ "set-cookie": "a=1", cookie: "x=1; y=2", "content-type": "text/html", "x-a": "1, 2", "x-latin": "caf\xe9" });
  });

  it("joins repeated Set-Cookie fields with a line break, as the shared parser does", () => {
    const fields = raw("Set-Cookie", "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "set-cookie", "b=2");
    expect(responseHeaders(fields)["set-cookie"]).toBe("a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT\nb=2");
  });

  it("treats names like constructor and __proto__ as plain names, as the shared parser does", () => {
    const headers = responseHeaders(raw("Constructor", "a", "constructor", "b", "__proto__", "c", "__proto__", "d", "toString", "e"));
    expect(Object.keys(headers)).toEqual(["constructor", "__proto__", "tostring"]);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
    // biome-ignore lint/suspicious/noProto: reads the header named "__proto__", kept as an own property, not the prototype accessor.
    expect([headers.constructor, headers["__proto__"], headers.tostring]).toEqual(["a, b", "c, d", "e"]);
  });
});
