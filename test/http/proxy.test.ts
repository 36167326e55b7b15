/**
 * The proxy decisions of src/http/proxy.ts, without I/O: which proxy a URL
 * takes (NO_PROXY rules as curl and undici's EnvHttpProxyAgent read them),
 * the request line and CONNECT request written, the proxy's reply read, the
 * option checks, the environment read, and the password never shown.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/crawl/options.js";
import { errorDetail, errorName } from "../../src/kernel/errors.js";
import { ConnectReply, formatConnectRequest, Proxies, proxiesFrom, proxyFromEnv, ProxyServer, withoutPassword } from "../../src/http/proxy.js";
import { formatGetRequest } from "../../src/http/request.js";

const PROXY = new ProxyServer("http://127.0.0.1:3128");

function routeOf(proxies: Proxies, url: string): string | null {
  return proxies.serverForUrl(new URL(url))?.address ?? null;
}

describe("Proxies", () => {
  it("sends each scheme through its own proxy, and a scheme with none direct", () => {
    const proxies = new Proxies(new ProxyServer("http://10.0.0.1:8080"), null);
    expect(routeOf(proxies, "http://example.com/")).toBe("10.0.0.1:8080");
    expect(routeOf(proxies, "https://example.com/")).toBeNull();
  });

  it("proxies loopback targets unless noProxy names them, as curl does", () => {
    expect(routeOf(new Proxies(PROXY, PROXY), "http://127.0.0.1:8080/")).toBe("127.0.0.1:3128");
    expect(routeOf(new Proxies(PROXY, PROXY), "http://localhost/")).toBe("127.0.0.1:3128");
    expect(routeOf(new Proxies(PROXY, PROXY, ["localhost,127.0.0.1"]), "http://localhost/")).toBeNull();
  });

  it.each([
    ["example.com", "http://example.com/", true],
    ["example.com", "http://www.example.com/", true],
    ["example.com", "http://notexample.com/", false],
    [".example.com", "http://example.com/", true],
    [".example.com", "http://a.b.example.com/", true],
    ["*.example.com", "http://a.example.com/", true],
    ["EXAMPLE.com", "http://Example.COM/", true],
    ["example.com:8080", "http://example.com:8080/", true],
    ["example.com:8080", "http://example.com/", false],
    ["example.com:443", "https://example.com/", true],
    ["10.1.2.3", "http://10.1.2.3:81/", true],
    ["10.1.2.3", "http://10.1.2.30/", false],
    ["::1", "http://[::1]:8080/", true],
    ["[::1]", "http://[::1]/", true],
    ["[::1]:8080", "http://[::1]:8080/", true],
    ["[::1]:8080", "http://[::1]:8081/", false],
    ["*", "https://anything.test/", true],
    ["a.test b.test", "http://b.test/", true],
    ["10.0.0.0/8", "http://10.1.2.3/", false],
  ])("reads the noProxy entry %j for %s: bypassed %s", (entry, url, bypassed) => {
    expect(routeOf(new Proxies(PROXY, PROXY, [entry]), url)).toBe(bypassed ? null : "127.0.0.1:3128");
  });
});

describe("formatGetRequest through a proxy", () => {
  const proxies = proxiesFrom("http://bot:pa%3Ass@127.0.0.1:3128", ["direct.test"]);

  it("writes an http URL in absolute-form, with the proxy's Basic credentials", () => {
    const head = formatGetRequest(new URL("http://example.com:81/a?b=1#frag"), { userAgent: "bot/1", proxy: proxies }).toString("latin1");
    expect(head.split("\r\n")[0]).toBe("GET http://example.com:81/a?b=1 HTTP/1.1");
    expect(head).toContain("\r\nHost: example.com:81\r\n");
    expect(head).toContain(`\r\nProxy-Authorization: Basic ${Buffer.from("bot:pa:ss").toString("base64")}\r\n`);
  });

  it("writes an https URL (inside a tunnel) and a bypassed one as without a proxy", () => {
    for (const url of ["https://example.com/a", "http://direct.test/a"]) {
      const head = formatGetRequest(new URL(url), { userAgent: "bot/1", proxy: proxies }).toString("latin1");
      expect(head.split("\r\n")[0]).toBe("GET /a HTTP/1.1");
      expect(head).not.toContain("Proxy-Authorization");
    }
  });
});

describe("formatConnectRequest", () => {
  it("asks for a tunnel to host:port, an IPv6 host in brackets, with the credentials", () => {
    const server = new ProxyServer("http://u:p@proxy.test:8080");
    expect(formatConnectRequest({ host: "::1", port: 8443, secure: true }, server).toString("latin1")).toBe(
      `CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\nProxy-Authorization: Basic ${Buffer.from("u:p").toString("base64")}\r\n\r\n`,
    );
  });
});

describe("ConnectReply", () => {
  const target = { host: "example.com", port: 443, secure: true };

  it("opens the tunnel on any 2xx, handing back the bytes after the head, split or not", () => {
    const reply = new ConnectReply(PROXY, target);
    expect(reply.feed(Buffer.from("HTTP/1.1 200 Connection Established\r\n"))).toBeNull();
    expect(reply.feed(Buffer.from("Via: x\r\n\r\n\x16\x03"))).toEqual(Buffer.from("\x16\x03", "latin1"));
  });

  it("refuses any other status as ConnectionRefused, naming the proxy and the status", () => {
    const failure = (() => {
      try {
        new ConnectReply(PROXY, target).feed(Buffer.from("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"));
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(errorName(failure)).toBe("ConnectionRefused");
    expect(errorDetail(failure)).toBe("proxy 127.0.0.1:3128 answered 407 (Proxy Authentication Required) to CONNECT example.com:443");
  });

  it("calls a reply that is not HTTP a BadResponse, and a close before it a ConnectionReset", () => {
    expect(() => new ConnectReply(PROXY, target).feed(Buffer.from("SSH-2.0-OpenSSH\r\n\r\n"))).toThrow(/not an HTTP\/1.x status line/);
    expect(errorName(new ConnectReply(PROXY, target).end())).toBe("ConnectionReset");
  });
});

describe("the proxy options", () => {
  it("refuses what is not an http:// proxy URL with a TypeError naming the option, the password masked", () => {
    expect(() => resolveOptions({ proxy: "127.0.0.1:3128" })).toThrow(/`proxy`/);
    expect(() => resolveOptions({ proxy: "socks5://127.0.0.1:1080" })).toThrow(/Expected `proxy` to be an http:\/\/ proxy URL/);
    expect(() => resolveOptions({ proxy: "https://u:secret@proxy.test" })).toThrow(/not supported/);
    expect(() => resolveOptions({ proxy: "https://u:secret@proxy.test" })).not.toThrow(/secret/);
    expect(() => resolveOptions({ proxy: "http://proxy.test/path" })).toThrow(/no path/);
    expect(() => resolveOptions({ proxy: { http: 3 } as never })).toThrow(/`proxy.http`/);
    expect(() => resolveOptions({ noProxy: "localhost" as never })).toThrow(/`noProxy`/);
  });

  it("never shows the password: JSON, inspect and the resolved options hold it masked", () => {
    const options = resolveOptions({ proxy: "http://bot:hunter2@proxy.test:3128", noProxy: ["localhost"] });
    expect(JSON.stringify(options.proxy)).toBe('{"http":"http://bot:***@proxy.test:3128","https":"http://bot:***@proxy.test:3128","noProxy":["localhost"]}');
    expect(inspect(options, { depth: 5 })).not.toContain("hunter2");
    expect(inspect(options, { depth: 5 })).not.toContain(Buffer.from("bot:hunter2").toString("base64"));
    expect(options.proxy?.http?.authorization).toBe(`Basic ${Buffer.from("bot:hunter2").toString("base64")}`);
  });

  it("masks a password, or a lone user name, in what it shows", () => {
    expect(withoutPassword("http://u:p@h:1")).toBe("http://u:***@h:1/");
    expect(withoutPassword("http://token@h")).toBe("http://***@h/");
    expect(withoutPassword("not a url u:p@h")).toBe("***@h");
  });
});

describe("proxyFromEnv", () => {
  it("reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY, the lowercase names first, empty ones unset", () => {
    expect(proxyFromEnv({ HTTP_PROXY: "http://a:1", https_proxy: "http://b:2", HTTPS_PROXY: "http://c:3", NO_PROXY: "x.test, y.test" })).toEqual({
      proxy: { http: "http://a:1", https: "http://b:2" },
      noProxy: ["x.test, y.test"],
    });
    expect(proxyFromEnv({ HTTP_PROXY: "", PATH: "/bin" })).toEqual({ proxy: null, noProxy: [] });
  });

  it("gives options a crawl takes as they are", () => {
    const options = resolveOptions({ ...proxyFromEnv({ https_proxy: "http://p.test:3128", no_proxy: "internal.test" }) });
    expect(options.proxy?.http).toBeNull();
    expect(options.proxy?.serverForUrl(new URL("https://a.internal.test/"))).toBeNull();
    expect(options.proxy?.serverForUrl(new URL("https://example.com/"))?.address).toBe("p.test:3128");
  });
});
