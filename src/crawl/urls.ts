/**
 * Which URLs a crawl may visit: root normalisation and the chapter's
 * `url_allowed`/`host_okay` policy, on top of the WHATWG `URL` parser.
 *
 * @module
 */

import { createRequire } from "node:module";
import type { getDomain as GetDomain } from "tldts";

/**
 * tldts's `getDomain`, required the first time a lenient policy needs it: a
 * strict crawl (the default) never loads the Public Suffix List. Required
 * rather than imported, as tldts is CommonJS: an `import` has Node's ES loader
 * scan its 200 KB for export names, about 90 ms of CPU at start-up
 * (docs/benchmarks.md, start-up).
 */
let getDomain: typeof GetDomain | null = null;
const requireWhenNeeded = createRequire(import.meta.url);

/** Matches a scheme followed by `://`, as in `https://` or `HTTP://`. */
const SCHEME_WITH_AUTHORITY = /^[a-z][a-z\d+.-]*:\/\//i;

/** Matches a scheme without `//` (`mailto:`, `javascript:`), but not `host:port`. */
const OPAQUE_SCHEME = /^[a-z][a-z\d+.-]*:(?!\d*(?:[/?#]|$))/i;

/** A dotted-decimal IPv4 address, the only form WHATWG `URL` serialises one to. */
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/**
 * Turns a root as a user types it into the absolute URL the crawl starts from:
 * `xkcd.com` → `http://xkcd.com/`, `//x.com/a` → `http://x.com/a`.
 *
 * A root without `://` gets `http://` in front, unless it names another
 * scheme (`mailto:a@b`), which is then refused. `host:port` counts as a host,
 * so `localhost:8080` becomes `http://localhost:8080/`. The result is
 * serialised by WHATWG `URL` (host lowercased, IDNA host in punycode, path at
 * least `/`) and loses its fragment and any `user:pass@` (see
 * {@link dropCredentials}: the crawler never sends them).
 *
 * @remarks The chapter's `crawl.py` adds `http://` whenever `://` is missing,
 * which would turn `mailto:a@b` into a URL with user `mailto` on host `b`.
 * @see Chapter, "Coordinating Coroutines" (the `Crawler` takes its roots from `crawl.py`)
 * @throws TypeError when the root is not a string, does not parse, or is not
 * http(s), saying why ({@link rootProblem}): ``Expected `roots` to hold http(s)
 * URLs, got "http://x:99999/": its port 99999 is out of range (0 to 65535)``.
 */
export function normalizeRoot(root: string): string {
  if (typeof root !== "string") throw badRoot(root, "not a string");
  const absolute = absoluteRoot(root);
  const parsed = parseHttpUrl(absolute);
  if (parsed === null) throw badRoot(root, whyNotHttpUrl(absolute));
  parsed.hash = "";
  return dropCredentials(parsed).href;
}

/** A root as typed, with `http://` in front when it names no scheme (see {@link normalizeRoot}). */
function absoluteRoot(root: string): string {
  const trimmed = root.trim();
  if (SCHEME_WITH_AUTHORITY.test(trimmed) || OPAQUE_SCHEME.test(trimmed)) return trimmed;
  if (trimmed.startsWith("//")) return `http:${trimmed}`;
  return `http://${trimmed}`;
}

function badRoot(root: unknown, why: string): TypeError {
  const shown = typeof root === "string" ? JSON.stringify(root) : String(root);
  return new TypeError(`Expected \`roots\` to hold http(s) URLs, got ${shown}: ${why}`);
}

/** The port of `scheme://[user@]host:port`, as written (digits or not); undefined without one. */
const WRITTEN_PORT = /^[a-z][a-z\d+.-]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):([^/?#]*)/i;

/**
 * Why a root is refused, in words a user can act on: `its port 99999 is out
 * of range (0 to 65535)`, `its scheme is ftp: (only http and https are
 * crawled)`, `it has no host`, or `it does not parse as a URL`. Null for a
 * root {@link normalizeRoot} takes.
 *
 * @remarks WHATWG `URL` refuses a port over 65535 the way it refuses any
 * unparsable string, with one `Invalid URL`: the port is read here to say so.
 */
export function rootProblem(root: string): string | null {
  const absolute = absoluteRoot(root);
  return parseHttpUrl(absolute) === null ? whyNotHttpUrl(absolute) : null;
}

function whyNotHttpUrl(absolute: string): string {
  const parsed = parseUrl(absolute);
  if (parsed !== null && parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `its scheme is ${parsed.protocol} (only http and https are crawled)`;
  }
  if (parsed !== null) return "it has no host";
  const port = WRITTEN_PORT.exec(absolute)?.[1];
  if (port !== undefined && /^\d+$/.test(port) && Number(port) > 65535) return `its port ${port} is out of range (0 to 65535)`;
  if (port !== undefined && port !== "" && !/^\d+$/.test(port)) return `its port '${port}' is not a number`;
  return "it does not parse as a URL";
}

/**
 * Whether a string is an absolute `http:` or `https:` URL with a host.
 * Never throws: a string that does not parse is simply not one.
 */
export function isHttpUrl(url: string): boolean {
  return parseHttpUrl(url) !== null;
}

/**
 * `new URL(input, base)`, or null where that throws. Never throws.
 *
 * @remarks One parse per URL, where `URL.canParse` followed by `new URL`
 * parses twice: the crawl checks every link of every page, so this is on its
 * hottest path. Node 22 has the same thing built in as `URL.parse`; Node 20,
 * which this package supports, does not.
 */
export function parseUrl(input: string, base?: string): URL | null {
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}

/** The last origin {@link originOf} found by parsing: the one a crawl of one site asks for again and again. */
let lastOrigin = "";

/**
 * `new URL(url).origin`, without the parse when `url` begins with the origin
 * found last and a `/` (every URL of a one-site crawl): `http://x.com/a` →
 * `http://x.com`.
 *
 * @remarks The origin a WHATWG `URL` serialises is `scheme://host[:port]`,
 * lower case, default port left out, and its `href` has the origin followed by
 * the path's `/`: a string with that prefix (no user info, for an `@` would
 * come before that `/`) has that origin, however the rest is spelled. Any
 * other string is parsed, as before. The per-page path asks for a URL's
 * origin several times (the host's line when the URL goes and when it ends,
 * the kept connection it takes and gives back); at ~1 µs a parse, that was a
 * few per cent of a page's CPU (docs/benchmarks.md, "Issue 39: per page").
 * @throws TypeError (from `URL`) when `url` is not an absolute URL.
 */
export function originOf(url: string): string {
  const last = lastOrigin;
  if (last.length > 0 && url.charCodeAt(last.length) === 0x2f && url.startsWith(last)) return last;
  const origin = new URL(url).origin;
  if (origin !== "null") lastOrigin = origin;
  return origin;
}

/** The parsed URL if `url` is absolute http(s), else null. */
function parseHttpUrl(url: string): URL | null {
  const parsed = typeof url === "string" ? parseUrl(url) : null;
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return null;
  return parsed;
}

/**
 * The URL without its fragment, serialised by WHATWG `URL`:
 * `http://X.com/a#top` → `http://x.com/a`. A string that is not an absolute URL
 * only loses everything from its first `#`.
 *
 * @remarks Python's `urllib.parse.urldefrag` only splits the string; here the
 * result is also normalised, so two spellings of one URL compare equal in `seen`.
 */
export function defragment(url: string): string {
  if (!URL.canParse(url)) {
    const hash = url.indexOf("#");
    return hash === -1 ? url : url.slice(0, hash);
  }
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}

/**
 * Removes a URL's `user:pass@`, in place, and returns it:
 * `http://u:p@x.com/a` → `http://x.com/a`.
 *
 * The crawler has no HTTP authentication and never sends credentials, so a
 * link written with them names the page the crawler fetches without them.
 * Dropping them from roots, links and redirect targets before anything is
 * queued keeps one spelling per page in `seen` (it is fetched once) and keeps
 * passwords out of records, reports and traces.
 */
export function dropCredentials(url: URL): URL {
  // Checked first: setting a component re-serialises the URL, and most links have none.
  if (url.username !== "" || url.password !== "") {
    url.username = "";
    url.password = "";
  }
  return url;
}

/** Whether a WHATWG hostname is an IP literal: dotted IPv4, or IPv6 in brackets. */
function isIpLiteral(host: string): boolean {
  return host.startsWith("[") || IPV4.test(host);
}

/**
 * What two host names must share to match: the name without one leading
 * `www.` (strict), or its registrable domain (lenient): the public suffix
 * and one label more, by the Public Suffix List (tldts), private domains
 * included, so `a.example.co.uk` → `example.co.uk` and `me.github.io` →
 * `me.github.io`. A name with no registrable domain (`localhost`, a bare
 * suffix such as `co.uk`) is its own key. One trailing dot (the DNS root,
 * `example.com.`) is dropped first.
 */
function hostKey(host: string, strict: boolean): string {
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  if (strict) return name.startsWith("www.") ? name.slice(4) : name;
  let key = registrableDomains.get(name);
  if (key === undefined) {
    getDomain ??= (requireWhenNeeded("tldts") as typeof import("tldts")).getDomain;
    key = getDomain(name, { allowPrivateDomains: true, extractHostname: false }) ?? name;
    if (registrableDomains.size >= MAX_KNOWN_DOMAINS) registrableDomains.clear();
    registrableDomains.set(name, key);
  }
  return key;
}

/**
 * Host names already looked up in the Public Suffix List, and their keys: a
 * crawl asks about the same few hosts for every link, and a lookup costs
 * some microseconds where a `Map` read costs a few dozen nanoseconds.
 * Emptied when full, so it stays small whatever a crawl meets.
 */
const registrableDomains = new Map<string, string>();
const MAX_KNOWN_DOMAINS = 10_000;

/**
 * Whether a link's host may be crawled, given the hosts of the roots.
 *
 * An exact match is always good. IP literals (`127.0.0.1`, `[::1]`) match
 * only exactly. Otherwise, strict: equal once a leading `www.` is removed from
 * both (`www.example.com` ~ `example.com`); lenient: the registrable domains
 * (by the Public Suffix List) are equal (`a.example.com` ~ `b.example.com`,
 * `a.example.co.uk` ~ `example.co.uk`, but not `other.co.uk`, nor
 * `you.github.io` for a root on `me.github.io`). Ports are not compared.
 *
 * `host` and `rootDomains` are WHATWG hostnames (`URL#hostname`): lowercase,
 * punycode, IPv6 in brackets.
 *
 * @remarks The chapter's `lenient_host` joins the last two labels without a
 * dot (`example.com` → `examplecom`), so `examplec.om` matched too; here the
 * labels are compared as labels; and it knows nothing of public suffixes, so
 * a root on `example.co.uk` allowed every `*.co.uk`. Here the Public Suffix
 * List decides (the tldts package, which ships the list and reads it with no
 * I/O).
 * @see The chapter's `crawling.py`: `host_okay`, `_host_okay_strictish`, `_host_okay_lenient`
 */
export function hostIsAllowed(host: string, rootDomains: ReadonlySet<string>, strict: boolean): boolean {
  if (rootDomains.has(host)) return true;
  if (isIpLiteral(host)) return false;
  const key = hostKey(host, strict);
  for (const root of rootDomains) {
    if (!isIpLiteral(root) && hostKey(root, strict) === key) return true;
  }
  return false;
}

/** The options a {@link UrlPolicy} reads, as `resolveOptions` fills them in; the newer ones may be left out. */
export interface UrlPolicyOptions {
  strict: boolean;
  exclude: RegExp | null;
  /** Default null: no URL must match. */
  include?: RegExp | null;
  /** Default false. */
  noParent?: boolean;
  /** Default `Infinity`. */
  maxDepth?: number;
  /** Default null: no domain allowed besides the roots' hosts. */
  allowedDomains?: readonly string[] | null;
}

/**
 * Whether `host` is one of `domains` or a subdomain of one (Scrapy's
 * `allowed_domains`): `www.example.com` and `a.b.example.com` are under
 * `example.com`, `badexample.com` is not. An IP literal only matches itself.
 * Both are WHATWG hostnames (lowercase, punycode).
 */
export function inDomains(host: string, domains: readonly string[]): boolean {
  for (const domain of domains) {
    if (host === domain) return true;
    if (host.length > domain.length && host.endsWith(domain) && host[host.length - domain.length - 1] === "." && !isIpLiteral(domain)) return true;
  }
  return false;
}

/** One root's part of `noParent`: its hostname (as a set, for {@link hostIsAllowed}) and its directory (`/a/` for `/a/b.html`). */
interface RootDirectory {
  readonly host: ReadonlySet<string>;
  readonly path: string;
}

/**
 * The crawl's URL policy: the normalised roots, the hosts they allow, and the
 * chapter's `url_allowed` for any link, narrowed by `include` and `noParent`;
 * and how deep links are followed (`maxDepth`, which `visit()` applies).
 *
 * Built once per crawl from the roots and the options; every stage asks it
 * the same question about every link and redirect target.
 *
 * @remarks Roots are always crawled, even when `exclude` matches them or
 * `include` does not: the policy filters links, the crawler queues the roots.
 * @see The chapter's `crawling.py`: `Crawler.__init__` (root_domains) and `url_allowed`
 */
export class UrlPolicy {
  /** The roots, normalised by {@link normalizeRoot}, duplicates removed, in the order given. */
  readonly roots: readonly string[];
  /** The hostnames of the roots (the chapter's `root_domains`). */
  readonly rootDomains: ReadonlySet<string>;
  /** True: hosts must match modulo a leading `www.`; false: by their registrable domain (Public Suffix List). */
  readonly strict: boolean;
  /** URLs this matches (anywhere in the string) are not allowed. */
  readonly exclude: RegExp | null;
  /** When not null, only URLs this matches (anywhere in the string) are allowed. */
  readonly include: RegExp | null;
  /** True: only URLs under a root's directory, on a host that root allows, are allowed. */
  readonly noParent: boolean;
  /** The deepest link `visit()` queues: a root is at depth 0, a page's links one deeper. */
  readonly maxDepth: number;
  /** Domains whose hosts, and their subdomains', are allowed besides the roots' ({@link inDomains}); empty: none. */
  readonly allowedDomains: readonly string[];
  /** Each root's host and directory, for `noParent`. */
  private readonly directories: readonly RootDirectory[];

  /**
   * @param roots - Where the crawl starts; each is normalised by {@link normalizeRoot}.
   * @param options - `strict`, `exclude`, `include`, `noParent` and `maxDepth` as resolved by `resolveOptions`.
   * @throws TypeError when `roots` is empty or holds a root that is not an http(s) URL.
   */
  constructor(roots: readonly string[], options: UrlPolicyOptions) {
    if (!Array.isArray(roots) || roots.length === 0) {
      const shown = Array.isArray(roots) ? "an empty list" : String(roots);
      throw new TypeError(`Expected \`roots\` to hold at least one http(s) URL, got ${shown}`);
    }
    this.roots = [...new Set(roots.map(normalizeRoot))];
    this.rootDomains = new Set(this.roots.map(hostnameOf));
    this.strict = options.strict;
    this.exclude = withoutState(options.exclude);
    this.include = withoutState(options.include ?? null);
    this.noParent = options.noParent ?? false;
    this.maxDepth = options.maxDepth ?? Infinity;
    this.allowedDomains = options.allowedDomains ?? [];
    this.directories = this.roots.map(directoryOf);
  }

  /**
   * Whether a URL may be crawled: its scheme is http(s), its host is allowed
   * by {@link hostIsAllowed} (a root's host, by `strict`) or is in
   * `allowedDomains` ({@link inDomains}), `exclude` does not match the
   * string, `include` (if given) does, and with `noParent` it is under a
   * root's directory ({@link UrlPolicy.underRoot}) when its host is a root's
   * (a host only `allowedDomains` allows has no root directory: `noParent`
   * leaves it alone, as wget's `--no-parent` leaves other hosts). Never
   * throws: a string that is not an absolute URL is not allowed.
   */
  urlAllowed(url: string): boolean {
    const parsed = parseHttpUrl(url);
    if (parsed === null) return false;
    return this.allows(url, parsed.hostname, parsed.pathname);
  }

  /**
   * {@link UrlPolicy.urlAllowed} for a URL that WHATWG `URL` serialised
   * itself (its `href`), without credentials: a page's link or a redirect's
   * target, as `visit()` gets them. The host name and the path are read from
   * the string instead of parsing it a second time: that second parse was,
   * after resolving the links themselves, the largest allocation per page
   * (2.8 KB of 28 in stage 1, docs/benchmarks.md, S4). Any other string is
   * parsed, as `urlAllowed` does.
   */
  hrefAllowed(href: string): boolean {
    const hostStart = href.startsWith("https://") ? 8 : href.startsWith("http://") ? 7 : -1;
    // A serialised http(s) URL's path starts with the "/" right after its host: `http://a.com?q` is `http://a.com/?q`.
    const pathStart = hostStart === -1 ? -1 : href.indexOf("/", hostStart);
    const host = pathStart === -1 ? "" : href.slice(hostStart, pathStart);
    if (host === "" || host.includes("@")) return this.urlAllowed(href);
    const portColon = host.startsWith("[") ? host.indexOf(":", host.indexOf("]")) : host.indexOf(":");
    const hostname = portColon === -1 ? host : host.slice(0, portColon);
    return this.allows(href, hostname, this.noParent ? pathOf(href, pathStart) : "");
  }

  /** The policy's checks, on a URL's string, host name and path. */
  private allows(url: string, hostname: string, pathname: string): boolean {
    const rootHost = hostIsAllowed(hostname, this.rootDomains, this.strict);
    if (!rootHost && (this.allowedDomains.length === 0 || !inDomains(hostname, this.allowedDomains))) return false;
    if (this.exclude?.test(url) === true) return false;
    if (this.include !== null && !this.include.test(url)) return false;
    return !this.noParent || !rootHost || this.isUnderRoot(hostname, pathname);
  }

  /**
   * Whether a URL is under a root's directory (wget's `--no-parent`): its
   * path starts with the directory of some root (`/a/` for `http://h/a/b.html`
   * and for `http://h/a/`, `/` for `http://h/a`) and its host is one that
   * root's host allows ({@link hostIsAllowed}, by `strict`). Scheme, port and
   * query are not compared; paths are compared as WHATWG `URL` serialises
   * them (percent-encoded, case kept).
   */
  underRoot(url: URL): boolean {
    return this.isUnderRoot(url.hostname, url.pathname);
  }

  private isUnderRoot(hostname: string, pathname: string): boolean {
    for (const root of this.directories) {
      if (pathname.startsWith(root.path) && hostIsAllowed(hostname, root.host, this.strict)) return true;
    }
    return false;
  }
}

/** The path of a serialised URL whose path starts at `pathStart`: up to its query or fragment. */
function pathOf(href: string, pathStart: number): string {
  const query = href.indexOf("?", pathStart);
  const fragment = href.indexOf("#", pathStart);
  const end = Math.min(query === -1 ? href.length : query, fragment === -1 ? href.length : fragment);
  return href.slice(pathStart, end);
}

/** A root's host and the directory of its path: everything up to its last `/`. */
function directoryOf(root: string): RootDirectory {
  const { hostname, pathname } = new URL(root);
  return { host: new Set([hostname]), path: pathname.slice(0, pathname.lastIndexOf("/") + 1) };
}

/** The pattern without the g and y flags, so `test()` keeps no `lastIndex` between URLs. */
function withoutState(pattern: RegExp | null): RegExp | null {
  if (pattern === null || !(pattern.global || pattern.sticky)) return pattern;
  return new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ""));
}

function hostnameOf(url: string): string {
  return new URL(url).hostname;
}
