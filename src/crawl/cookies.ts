/**
 * A crawl's cookies (options `cookies` and `cookieFile`): the jar each crawl
 * keeps, what goes into a request's `Cookie` header, and what a response's
 * `Set-Cookie` fields put into the jar. Decided here once, for every stage.
 *
 * @module
 */
import { createRequire } from "node:module";
import type * as ToughCookie from "tough-cookie";
import { loadCookieFile } from "./cookie-file.js";

/**
 * What a crawl asks of a cookie jar: tough-cookie's `CookieJar` with a
 * synchronous store (its default `MemoryCookieStore`), or anything with its
 * two synchronous calls. The jar applies RFC 6265's rules: a cookie goes
 * back only to the host that set it (to its subdomains too when it named a
 * `Domain`), under its `Path`, and a `Secure` one only over `https:`
 * (tough-cookie also counts `localhost` and loopback addresses as secure,
 * as browsers do).
 */
export interface CookieJarLike {
  /** Stores a `Set-Cookie` value received from `url`; with `ignoreError`, one the rules refuse is dropped instead of thrown. */
  setCookieSync(cookie: string, url: string, options?: { ignoreError?: boolean; now?: Date }): unknown;
  /** The `Cookie` header to send to `url`: `a=1; b=2`, or `""` when no cookie goes there. */
  getCookieStringSync(url: string): string;
}

/**
 * tough-cookie, required the first time a crawl asks for cookies: a crawl
 * without them never loads it (nor tldts, its Public Suffix List). Required
 * rather than imported, as the other CommonJS dependencies are (urls.ts
 * says why).
 */
let toughCookie: typeof ToughCookie | null = null;
const requireWhenNeeded = createRequire(import.meta.url);

/** A new, empty jar: tough-cookie's `CookieJar` on a `MemoryCookieStore`, with its default rules. */
export function newCookieJar(): ToughCookie.CookieJar {
  toughCookie ??= requireWhenNeeded("tough-cookie") as typeof ToughCookie;
  return new toughCookie.CookieJar(new toughCookie.MemoryCookieStore());
}

/**
 * The jar a crawl keeps, from its `cookies` and `cookieFile` options:
 * none (null) unless one of them is given; a new jar for `cookies: true`;
 * the caller's own jar, which the crawl fills and the caller can read after
 * it; with `cookieFile`, that jar (a new one if `cookies` is left out)
 * loaded first with the file's cookies.
 *
 * @throws TypeError naming `cookies` for a value that is neither a boolean
 * nor a jar (or a jar whose store is not synchronous), `cookies: false`
 * with a `cookieFile`, and naming `cookieFile` for a path that is not a
 * string, a file that cannot be read (with its errno) or is not a Netscape
 * cookie file (with the line).
 */
export function resolveCookies(cookies: unknown, cookieFile: unknown): CookieJarLike | null {
  let jar: CookieJarLike | null;
  if (cookies === undefined || cookies === false) jar = null;
  else if (cookies === true) jar = newCookieJar();
  else if (isCookieJar(cookies)) jar = cookies;
  else throw new TypeError(`Expected \`cookies\` to be a boolean or a tough-cookie CookieJar, got ${shown(cookies)}`);
  if (cookieFile === undefined) return jar;
  if (typeof cookieFile !== "string" || cookieFile === "") throw new TypeError(`Expected \`cookieFile\` to be a file path, got ${shown(cookieFile)}`);
  if (cookies === false) throw new TypeError("Expected `cookies` not to be false with a `cookieFile`: the file's cookies go into the crawl's jar");
  const filled = jar ?? newCookieJar();
  loadCookieFile(filled, cookieFile);
  return filled;
}

/** Whether `value` has a jar's two synchronous calls, and, if it says, a synchronous store. */
function isCookieJar(value: unknown): value is CookieJarLike {
  if (typeof value !== "object" || value === null) return false;
  if (typeof Reflect.get(value, "setCookieSync") !== "function" || typeof Reflect.get(value, "getCookieStringSync") !== "function") return false;
  const store: unknown = Reflect.get(value, "store");
  if (typeof store === "object" && store !== null && Reflect.get(store, "synchronous") === false) {
    throw new TypeError("Expected `cookies` to be a CookieJar with a synchronous store (such as tough-cookie's MemoryCookieStore): a crawl reads it between two requests without waiting");
  }
  return true;
}

function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "object" && value !== null) return `an object (${value.constructor?.name ?? "no class"})`;
  return String(value);
}

/**
 * The request headers for `url`: `headers` as they are when no cookie of
 * `jar` goes there; else with a `Cookie` header holding the jar's cookies
 * for it, after the value of a `Cookie` the crawl's own `headers` set.
 * The same object comes back when nothing is added, so a crawl without
 * cookies allocates nothing per request.
 *
 * @remarks Called where each stage's request is built (src/http/
 * crawl-requests.ts for stages 1 and 2, crawl-client.ts for stage 3,
 * `CrawlCore.request()` for a new stage), before each attempt: a `robots.txt`
 * redirect or a retry asks again, so it carries what the jar holds then.
 * Expiry is checked on tough-cookie's own clock, `Date.now()`, the wall
 * clock the core's world reads too (the bottle fakes both).
 */
export function withCookies(headers: Readonly<Record<string, string>>, jar: CookieJarLike | null, url: string): Readonly<Record<string, string>> {
  if (jar === null) return headers;
  const cookies = jar.getCookieStringSync(url);
  if (cookies === "") return headers;
  const given = Object.keys(headers).find(isCookieName);
  if (given === undefined) return { ...headers, Cookie: cookies };
  return { ...headers, [given]: `${headers[given]}; ${cookies}` };
}

function isCookieName(name: string): boolean {
  return name.toLowerCase() === "cookie";
}

/**
 * Puts the cookies of a response from `url` into `jar`: each of its
 * `Set-Cookie` fields (which the parsers join with a line break,
 * src/http/parser.ts `headerSeparator`). One the jar's rules refuse (another
 * host's `Domain`, a public suffix, a `Secure` one over `http:`) or cannot
 * parse is dropped, as a browser drops it.
 *
 * @param now - The crawl's wall clock, read by the core: a cookie's creation and its `Max-Age` count from it.
 */
export function storeCookies(jar: CookieJarLike, url: string, setCookie: string | undefined, now: Date): void {
  if (setCookie === undefined) return;
  for (const line of setCookie.split("\n")) jar.setCookieSync(line, url, { ignoreError: true, now });
}
