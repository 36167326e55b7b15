/**
 * Forward proxies, decided once and without I/O: which proxy a URL goes
 * through (its scheme's, unless `noProxy` names its host), the request line
 * a plain `http:` request takes through one, and the `CONNECT` request that
 * opens a tunnel for an `https:` one, with the reading of the proxy's reply.
 * The sockets are opened in proxy-network.ts; stage 3 goes through the same.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { isIP } from "node:net";
import { FetchFailure } from "../kernel/errors.js";

/** The longest `CONNECT` reply head read before the reply is called malformed: as the shared parser's head limit for a response. */
const MAX_CONNECT_REPLY_BYTES = 64 * 1024;

/** Each proxy's `Proxy-Authorization` value, kept out of its enumerable fields so that no log, `inspect` or JSON shows it. */
const authorizations = new WeakMap<ProxyServer, string>();

/**
 * One forward proxy: where it listens, and the credentials its URL carried.
 * `href` is the URL without its password (see {@link withoutPassword}): the
 * only form that is ever printed; the `Proxy-Authorization` value is
 * {@link ProxyServer.authorization}, which no enumeration shows.
 */
export class ProxyServer {
  /** The URL as messages show it: the password, if any, as `***`. */
  readonly href: string;
  /** The host to connect to: a name or an IP address, without an IPv6 literal's brackets. */
  readonly host: string;
  readonly port: number;

  /**
   * @param value - An `http://[user:password@]host[:port]` URL (port 80 if none).
   * @param option - The option it came from, named in the error.
   * @throws TypeError naming `option` when `value` is not such a URL: not a
   * URL, another scheme (an `https://` proxy, TLS to the proxy itself, is not
   * supported: a tunnel would be TLS inside TLS), a path, a query or a fragment.
   */
  constructor(value: string, option = "proxy") {
    const shown = JSON.stringify(withoutPassword(value));
    if (!URL.canParse(value)) throw new TypeError(`Expected \`${option}\` to be an http:// proxy URL such as http://127.0.0.1:3128, got ${shown}`);
    const url = new URL(value);
    if (url.protocol === "https:") throw new TypeError(`Expected \`${option}\` to be an http:// proxy URL, got ${shown}: a proxy reached over TLS (https://) is not supported; give its http:// address`);
    if (url.protocol !== "http:" || url.hostname === "") throw new TypeError(`Expected \`${option}\` to be an http:// proxy URL such as http://127.0.0.1:3128, got ${shown}`);
    if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") {
      throw new TypeError(`Expected \`${option}\` to be a proxy's address, with no path, query or fragment, got ${shown}`);
    }
    this.host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    this.port = url.port === "" ? 80 : Number(url.port);
    this.href = withoutPassword(url.href).replace(/\/$/, ""); // as proxy URLs are written: http://host:port
    if (url.username !== "" || url.password !== "") {
      const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
      authorizations.set(this, `Basic ${Buffer.from(credentials).toString("base64")}`);
    }
  }

  /** The `Proxy-Authorization` header's value (`Basic …`, RFC 9110 §11.7.1) for the URL's credentials, or null without any. */
  get authorization(): string | null {
    return authorizations.get(this) ?? null;
  }

  /** `host:port`, as messages name the proxy (an IPv6 address in brackets). */
  get address(): string {
    return `${isIP(this.host) === 6 ? `[${this.host}]` : this.host}:${this.port}`;
  }

  /** The masked URL: what `JSON.stringify` and the `--json` options show. */
  toJSON(): string {
    return this.href;
  }
}

/** One `noProxy` rule: a host (exact, or any name under it) and, if given, a port. */
interface NoProxyRule {
  readonly host: string;
  /** 0: any port. */
  readonly port: number;
}

/** Where a connection goes: a host, a port, and whether the target speaks TLS (`https:`). */
export interface ProxyTarget {
  /** The host name or IP address, without an IPv6 literal's brackets. */
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
}

/**
 * A crawl's proxies: one for `http:` targets and one for `https:` targets
 * (either may be null: direct), and the hosts that are never proxied
 * (`noProxy`). {@link Proxies.serverFor} is the one decision; every stage
 * asks it, stages 1 and 2 through proxy-network.ts and formatGetRequest,
 * stage 3 through its connector and request options.
 *
 * `noProxy` follows the `NO_PROXY` conventions of curl and of undici's
 * `EnvHttpProxyAgent` (lib/dispatcher/env-http-proxy-agent.js,
 * `#parseNoProxy`, `#shouldProxy`): entries are split at commas and spaces;
 * `*` alone means no proxy for any host; an entry `host:port` matches that
 * port only; a leading `.` or `*.` is dropped; an entry matches the host
 * itself and every name under it (`example.com` matches `example.com` and
 * `a.example.com`, not `notexample.com`); IP addresses match exactly, an IPv6
 * one with or without its brackets. Comparison ignores case.
 *
 * @remarks Loopback targets (`localhost`, `127.0.0.1`) are proxied like any
 * other unless `noProxy` names them: curl and undici do the same (Python's
 * `requests` and browsers bypass them by default). CIDR ranges
 * (`10.0.0.0/8`, which curl takes since 7.86) are not understood: such an
 * entry matches nothing.
 */
export class Proxies {
  private readonly rules: readonly NoProxyRule[];
  private readonly bypassAll: boolean;

  constructor(
    /** The proxy for `http:` URLs; null: they go direct. */
    readonly http: ProxyServer | null,
    /** The proxy for `https:` URLs (a `CONNECT` tunnel through it); null: they go direct. */
    readonly https: ProxyServer | null,
    /** The `noProxy` entries, as given. */
    readonly noProxy: readonly string[] = [],
  ) {
    const entries = noProxy.flatMap((entry) => entry.split(/[,\s]+/)).filter((entry) => entry !== "");
    this.bypassAll = entries.includes("*");
    this.rules = entries.map(noProxyRule);
  }

  /**
   * The proxy that a connection to `target` goes through, or null: direct
   * (no proxy for its scheme, or `noProxy` names it).
   */
  serverFor(target: ProxyTarget): ProxyServer | null {
    const server = target.secure ? this.https : this.http;
    if (server === null || this.bypassAll) return this.bypassAll ? null : server;
    const host = unbracketed(target.host).toLowerCase();
    for (const rule of this.rules) {
      if (rule.port !== 0 && rule.port !== target.port) continue;
      if (host === rule.host || host.endsWith(`.${rule.host}`)) return null;
    }
    return server;
  }

  /** {@link serverFor} a URL: its host, its port (80 or 443 when none), its scheme. */
  serverForUrl(url: URL): ProxyServer | null {
    const secure = url.protocol === "https:";
    return this.serverFor({ host: url.hostname, port: url.port === "" ? (secure ? 443 : 80) : Number(url.port), secure });
  }

  /** As JSON (the `--json` options): each proxy's URL without its password, and the `noProxy` entries. */
  toJSON(): { http: string | null; https: string | null; noProxy: readonly string[] } {
    return { http: this.http?.href ?? null, https: this.https?.href ?? null, noProxy: this.noProxy };
  }
}

/** A `noProxy` entry as a rule: `host:port` split, a leading `.` or `*.` dropped, brackets off an IPv6 address, lowercased. */
function noProxyRule(entry: string): NoProxyRule {
  const withPort = /^(.+):(\d+)$/.exec(entry);
  const host = withPort !== null && isIP(entry) !== 6 ? withPort[1] : entry;
  const port = withPort !== null && isIP(entry) !== 6 ? Number(withPort[2]) : 0;
  return { host: unbracketed(host.replace(/^\*?\./, "")).toLowerCase(), port };
}

function unbracketed(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * The URL with its password, if any, as `***`: what every message, the
 * `--json` options and the trace show of a proxy (or a Redis) URL. A user
 * name without a password is masked too (`http://***@host`): it is most
 * often a password given without its colon. In what is not a URL, whatever
 * stands before an `@`.
 */
export function withoutPassword(url: string): string {
  if (!URL.canParse(url)) return url.replace(/^([^@]*?\/\/)?[^@/]*@/, (_match, scheme: string | undefined) => `${scheme ?? ""}***@`);
  const parsed = new URL(url);
  if (parsed.password !== "") parsed.password = "***";
  else if (parsed.username !== "") parsed.username = "***";
  else return url;
  return parsed.href;
}

/**
 * The request target of a `GET` for `url`: origin-form (`/path?query`), or,
 * through a proxy, absolute-form (`http://host:port/path?query`, RFC 9112
 * §3.2.2), which tells the proxy where to forward it. Never the fragment.
 */
export function requestTarget(url: URL, proxied: boolean): string {
  return proxied ? `${url.protocol}//${url.host}${url.pathname}${url.search}` : `${url.pathname}${url.search}`;
}

/** `host:port` of a target, as a `CONNECT` request names it (RFC 9110 §9.3.6): an IPv6 address in brackets. */
export function authorityOf(target: ProxyTarget): string {
  const host = unbracketed(target.host);
  return `${isIP(host) === 6 ? `[${host}]` : host}:${target.port}`;
}

/**
 * The bytes of the `CONNECT` request that asks `server` for a tunnel to
 * `target`: `CONNECT host:port HTTP/1.1`, `Host`, and the proxy's
 * `Proxy-Authorization` when its URL had credentials.
 */
export function formatConnectRequest(target: ProxyTarget, server: ProxyServer): Buffer {
  const authority = authorityOf(target);
  let head = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n`;
  if (server.authorization !== null) head += `Proxy-Authorization: ${server.authorization}\r\n`;
  return Buffer.from(`${head}\r\n`, "latin1");
}

/**
 * Reads a proxy's reply to `CONNECT` as its bytes come: {@link ConnectReply.feed}
 * returns null until the head is whole, then the bytes after it (the first
 * bytes of the tunnel, normally none).
 *
 * A 2xx reply opens the tunnel (RFC 9110 §9.3.6: "any 2xx (Successful)
 * response indicates that the sender … will switch to tunnel mode"); any
 * other status is a refusal, thrown as a {@link FetchFailure}
 * `ConnectionRefused` whose `detail` names the proxy and its status, as is a
 * reply that is not HTTP (`BadResponse`), or a close before it
 * (`ConnectionReset`, from {@link ConnectReply.end}).
 */
export class ConnectReply {
  private head = Buffer.alloc(0);

  constructor(
    private readonly server: ProxyServer,
    private readonly target: ProxyTarget,
  ) {}

  /**
   * Takes the next bytes of the reply.
   *
   * @returns null while the head is incomplete; then what came after it.
   * @throws FetchFailure for a refusal or a malformed reply (see the class comment).
   */
  feed(chunk: Uint8Array): Buffer | null {
    this.head = Buffer.concat([this.head, chunk]);
    const end = this.head.indexOf("\r\n\r\n");
    if (end === -1) {
      if (this.head.length > MAX_CONNECT_REPLY_BYTES) throw this.failure("BadResponse", `answered CONNECT ${authorityOf(this.target)} with a head longer than ${MAX_CONNECT_REPLY_BYTES} bytes`);
      return null;
    }
    const statusLine = this.head.subarray(0, this.head.indexOf("\r\n")).toString("latin1");
    const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
    if (status === null) throw this.failure("BadResponse", `answered CONNECT ${authorityOf(this.target)} with ${JSON.stringify(statusLine.slice(0, 80))}, not an HTTP/1.x status line`);
    const code = Number(status[1]);
    if (code < 200 || code > 299) {
      const reason = status[2] === undefined || status[2] === "" ? "" : ` (${status[2]})`;
      throw this.failure("ConnectionRefused", `answered ${code}${reason} to CONNECT ${authorityOf(this.target)}`);
    }
    return this.head.subarray(end + 4);
  }

  /** The proxy closed before its reply's head was whole. */
  end(): FetchFailure {
    return this.failure("ConnectionReset", `closed the connection before answering CONNECT ${authorityOf(this.target)}`);
  }

  private failure(kind: "ConnectionRefused" | "ConnectionReset" | "BadResponse", what: string): FetchFailure {
    const detail = `proxy ${this.server.address} ${what}`;
    return new FetchFailure(kind, detail, { detail });
  }
}

/**
 * The words a failure met on the way to a proxy gets as its `detail`: the
 * proxy named, then what happened (`proxy 127.0.0.1:8888: connect
 * ECONNREFUSED 127.0.0.1:8888`). Set on the error itself by the socket's
 * first `error` listener (proxy-network.ts), before any reader sees it.
 */
export function proxyDetail(server: ProxyServer, error: Error): string {
  return `proxy ${server.address}: ${error.message}`;
}

/**
 * The crawl's {@link Proxies} from its `proxy` and `noProxy` options, or null
 * when no proxy is given.
 *
 * @param proxy - One proxy URL for both schemes, or one per scheme.
 * @throws TypeError naming the option for a bad value.
 */
export function proxiesFrom(proxy: unknown, noProxy: unknown): Proxies | null {
  const rules = noProxyList(noProxy);
  if (proxy === undefined || proxy === null) return null;
  if (proxy instanceof Proxies) return proxy; // already decided (a resolved crawl's options passed on)
  if (typeof proxy === "string") {
    const server = new ProxyServer(proxy, "proxy");
    return new Proxies(server, server, rules);
  }
  if (typeof proxy === "object" && !Array.isArray(proxy) && Object.keys(proxy).every((key) => key === "http" || key === "https")) {
    const { http = null, https = null } = proxy as { http?: unknown; https?: unknown };
    const server = (value: unknown, option: string): ProxyServer | null => {
      if (value === null) return null;
      if (typeof value !== "string") throw new TypeError(`Expected \`${option}\` to be an http:// proxy URL or null, got ${typeof value}`);
      return new ProxyServer(value, option);
    };
    const servers = [server(http, "proxy.http"), server(https, "proxy.https")] as const;
    return servers[0] === null && servers[1] === null ? null : new Proxies(servers[0], servers[1], rules);
  }
  throw new TypeError("Expected `proxy` to be an http:// proxy URL, an object { http, https } of them, or null");
}

/** The `noProxy` entries given, checked: an array of strings (each may hold several, split at commas). */
export function noProxyList(value: unknown): readonly string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string")) {
    throw new TypeError("Expected `noProxy` to be an array of host names (NO_PROXY entries), such as [\"localhost\", \".example.com\"]");
  }
  return Object.freeze([...value]);
}

/**
 * The `proxy` and `noProxy` options that the environment's `HTTP_PROXY`
 * (for `http:` URLs), `HTTPS_PROXY` (for `https:` URLs), `ALL_PROXY` (for a
 * scheme with none of its own) and `NO_PROXY` ask for, their lowercase names
 * winning, as in curl: what the `crawl` command passes when no `--proxy` is
 * given. As curl and Go's `net/http`, and unlike undici's
 * `EnvHttpProxyAgent`, an `https:` URL does not fall back to `HTTP_PROXY`.
 * The library itself never reads the environment: a program that wants it
 * to spreads this into its options, `crawl(url, { ...proxyFromEnv(process.env) })`.
 * Empty variables count as unset.
 *
 * @remarks curl reads only the lowercase `http_proxy` (an uppercase
 * `HTTP_PROXY` could be set by a CGI request's `Proxy:` header, "httpoxy");
 * undici takes either. Both are taken here, as undici does; a command run
 * as a CGI script should not be.
 */
export function proxyFromEnv(env: Readonly<Record<string, string | undefined>>): { proxy: { http: string | null; https: string | null } | null; noProxy: string[] } {
  const read = (name: string): string | null => {
    const value = env[name.toLowerCase()] ?? env[name.toUpperCase()];
    return value === undefined || value.trim() === "" ? null : value.trim();
  };
  const all = read("all_proxy");
  const http = read("http_proxy") ?? all;
  const https = read("https_proxy") ?? all;
  const noProxy = read("no_proxy");
  return { proxy: http === null && https === null ? null : { http, https }, noProxy: noProxy === null ? [] : [noProxy] };
}
