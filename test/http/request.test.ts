/**
 * The crawl's `headers` in the request every stage sends: where they go
 * among the default headers, and what `formatGetRequest` refuses to write.
 */
import { describe, expect, it } from "vitest";
import { formatGetRequest, isHeaderName, isHeaderValue, requestHeaders, RESERVED_HEADERS } from "../../src/http/request.js";

const URL_ = new URL("http://example.com/a");

function headerLines(request: Buffer): string[] {
  return request.toString("latin1").split("\r\n").slice(1, -2);
}

describe("requestHeaders with the crawl's headers", () => {
  it("adds them after the defaults, in the order given", () => {
    expect(Object.entries(requestHeaders("bot/1", { "X-Api-Key": "k1", Cookie: "a=1" }))).toEqual([
      ["User-Agent", "bot/1"],
      ["Accept", requestHeaders("bot/1")["Accept"]],
      ["Accept-Encoding", "gzip, deflate, br, identity"],
      ["X-Api-Key", "k1"],
      ["Cookie", "a=1"],
    ]);
  });

  it("puts one named like a default, in any case, in the default's place", () => {
    expect(Object.entries(requestHeaders("bot/1", { "X-A": "1", accept: "text/html" }))).toEqual([
      ["User-Agent", "bot/1"],
      ["accept", "text/html"],
      ["Accept-Encoding", "gzip, deflate, br, identity"],
      ["X-A", "1"],
    ]);
  });
});

describe("formatGetRequest with the crawl's headers", () => {
  it("writes them between the defaults and Connection: close", () => {
    expect(headerLines(formatGetRequest(URL_, "bot/1", { "X-Api-Key": "k1", Accept: "text/html" }))).toEqual([
      "Host: example.com",
      "User-Agent: bot/1",
      "Accept: text/html",
      "Accept-Encoding: gzip, deflate, br, identity",
      "X-Api-Key: k1",
      "Connection: close",
    ]);
  });

  it("writes the same request as before when given none", () => {
    expect(formatGetRequest(URL_, "bot/1", {})).toEqual(formatGetRequest(URL_, "bot/1"));
  });

  it("throws TypeError for a name that is not a token or a value that could end the line", () => {
    expect(() => formatGetRequest(URL_, "bot", { "X A": "1" })).toThrow(TypeError);
    expect(() => formatGetRequest(URL_, "bot", { "X-A": "1\r\nX-Evil: 2" })).toThrow(/Invalid character in the X-A header/);
    expect(() => formatGetRequest(URL_, "bot", { "X-A": "a\nb" })).toThrow(TypeError);
  });
});

describe("the header checks resolveOptions uses", () => {
  it("takes RFC 9110 tokens as names", () => {
    for (const name of ["X-Api-Key", "accept", "x_y", "a!#$%&'*+.^`|~1"]) expect(isHeaderName(name), name).toBe(true);
    for (const name of ["", "X A", "X:", "X\u00e9", "(x)", "a/b", "x\r"]) expect(isHeaderName(name), name).toBe(false);
  });

  it("takes printable ASCII and tabs as values, the empty one too", () => {
    for (const value of ["", "a b", "a\tb", "~!"]) expect(isHeaderValue(value), value).toBe(true);
    for (const value of ["a\rb", "a\nb", "a\u0000b", "caf\u00e9", "\u007f"]) expect(isHeaderValue(value), value).toBe(false);
  });

  it("reserves the framing and hop-by-hop headers and Accept-Encoding, lowercased", () => {
    expect([...RESERVED_HEADERS].sort()).toEqual(
      ["accept-encoding", "connection", "content-length", "expect", "host", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"],
    );
  });
});

describe("formatGetRequest with keepAlive", () => {
  it("asks the server to keep the connection open, and otherwise to close it", () => {
    expect(headerLines(formatGetRequest(URL_, "bot/1", {}, true)).at(-1)).toBe("Connection: keep-alive");
    expect(headerLines(formatGetRequest(URL_, "bot/1")).at(-1)).toBe("Connection: close");
  });
});
