/**
 * Stage 3 uses undici's public API only (issue 39): what its index exports
 * (`Client`, `buildConnector`, `util.headerNameToString`), the `connect`
 * option, `dispatch` and its `'drain'`, and the handler methods undici 7
 * documents. No file of the project requires a file inside undici's
 * package, and nothing reads an undici symbol. Its handler is written to the
 * methods undici's HTTP/1 client calls, and names header fields with
 * undici's own `headerNameToString`: both are checked here.
 */
import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as undici from "undici";
import { describe, expect, it } from "vitest";
import { buildConnector, Client, headerNameToString, responseHeaders } from "../../src/http/undici.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every TypeScript and JavaScript file under `folder`, by path. */
async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, folder), { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && /\.(?:ts|mts|js|mjs)$/.test(entry.name)).map((entry) => join(entry.parentPath, entry.name));
}

describe("undici as the project uses it", () => {
  it("is the package's index: no file of src/, bench/ or learn/ names a file inside undici's package", async () => {
    const files = [...(await sourceFiles("src")), ...(await sourceFiles("bench")), ...(await sourceFiles("learn"))];
    expect(files.length).toBeGreaterThan(50); // the walk found the sources
    const deep: string[] = [];
    for (const file of files) {
      const text = await readFile(file, "utf8");
      for (const [specifier] of text.matchAll(/["'`]undici\/[^"'`]*["'`]/g)) deep.push(`${relative(ROOT, file)}: ${specifier}`);
    }
    expect(deep).toEqual([]);
  });

  it("reads none of undici's symbols and extends no class of it but Client", async () => {
    for (const file of ["src/http/undici.ts", "src/http/http-client.ts", "src/http/crawl-client.ts"]) {
      const text = await readFile(join(ROOT, file), "utf8");
      expect(text).not.toMatch(/\[k[A-Z]\w*\]|Reflect\.|Symbol\(|getOwnPropertySymbols/); // undici's fields are symbols named kSomething
      expect(text).not.toMatch(/class \w+ extends (?!Client\b)/);
    }
  });

  it("gives stage 3 the classes and the function undici's index exports", () => {
    expect(Client).toBe(undici.Client);
    expect(buildConnector).toBe(undici.buildConnector);
    expect(headerNameToString).toBe(undici.util.headerNameToString);
  });

  it("is taken as any undici 7 release: package.json's range is a caret range", async () => {
    const manifest: unknown = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    const range = typeof manifest === "object" && manifest !== null && "dependencies" in manifest ? Reflect.get(Object(manifest.dependencies), "undici") : null;
    expect(range).toMatch(/^\^7\.\d+\.\d+$/);
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

  it("names fields with its public headerNameToString, which its parseHeaders uses", () => {
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
