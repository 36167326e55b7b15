/**
 * Netscape cookie files, as curl (`-c`/`-b`), wget (`--load-cookies`) and
 * browser extensions write them: the cookies a crawl starts from (option
 * `cookieFile`, the CLI's `--cookie-file`).
 *
 * @module
 */
import { readFileSync } from "node:fs";

/** A cookie file's line that is not a cookie, or a cookie the jar refuses: names the line. */
export class CookieFileError extends Error {
  override readonly name = "CookieFileError";
}

/** One cookie of a Netscape cookie file, as its line gives it. */
export interface FileCookie {
  /** The host or domain, without a leading dot: `example.com`. */
  domain: string;
  /** The file's second field, `TRUE`: the cookie goes to the domain's subdomains too (a `Domain` cookie); `FALSE`: to that host only. */
  includeSubdomains: boolean;
  /** The path it goes to, and under: `/`. */
  path: string;
  /** `TRUE`: sent only over `https:`. */
  secure: boolean;
  /** When it expires, in seconds since the epoch; 0: at the end of the session (a crawl). */
  expires: number;
  name: string;
  value: string;
  /** Written with the `#HttpOnly_` prefix (curl's mark for an `HttpOnly` cookie). */
  httpOnly: boolean;
}

/** curl's mark, in front of the domain, for an `HttpOnly` cookie; the line is a cookie, not a comment. */
const HTTP_ONLY_PREFIX = "#HttpOnly_";

/**
 * Reads the cookies of a Netscape cookie file's text. A line is a cookie of
 * seven fields separated by tabs: domain, include-subdomains flag (`TRUE` or
 * `FALSE`), path, secure flag, expiry (seconds since the epoch, 0 for a
 * session cookie), name and value (a line of six fields has an empty
 * value). A domain may start with `.` (older writers mark a `Domain` cookie
 * so) and with `#HttpOnly_`; other lines starting with `#` are comments,
 * blank lines are skipped, and CRLF line ends are taken.
 *
 * @remarks Parsed here rather than with a package: the format is these
 * seven fields, and the npm parsers of it found were unmaintained or
 * carried a cookie jar of their own; tough-cookie, which this crawl's jar
 * is, reads no Netscape files.
 * @see curl's `lib/cookie.c` (`Curl_cookie_add`, the Netscape branch); https://curl.se/docs/http-cookies.html
 * @throws CookieFileError naming the line (1-based) that is not a cookie.
 */
export function parseCookieFile(text: string): FileCookie[] {
  const cookies: FileCookie[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const httpOnly = line.startsWith(HTTP_ONLY_PREFIX);
    if (line.trim() === "" || (line.startsWith("#") && !httpOnly)) continue;
    cookies.push(cookieOfLine(httpOnly ? line.slice(HTTP_ONLY_PREFIX.length) : line, httpOnly, index + 1));
  }
  return cookies;
}

/** The cookie of one line (its `#HttpOnly_` taken off). */
function cookieOfLine(line: string, httpOnly: boolean, number: number): FileCookie {
  const fields = line.split("\t");
  if (fields.length === 6) fields.push(""); // An empty value, its tab left out.
  if (fields.length !== 7) throw new CookieFileError(`line ${number} has ${fields.length} tab-separated fields, not 7 (domain, subdomains, path, secure, expiry, name, value)`);
  const [domainField, subdomains, path, secure, expiry, name, value] = fields;
  const domain = domainField.startsWith(".") ? domainField.slice(1) : domainField;
  if (domain === "" || /[\s/:@]/.test(domain)) throw new CookieFileError(`line ${number}: ${JSON.stringify(domainField)} is not a domain`);
  if (!path.startsWith("/")) throw new CookieFileError(`line ${number}: the path ${JSON.stringify(path)} does not start with /`);
  if (!/^\d+$/.test(expiry)) throw new CookieFileError(`line ${number}: the expiry ${JSON.stringify(expiry)} is not a whole number of seconds`);
  if (name === "" || /[=;\s]/.test(name)) throw new CookieFileError(`line ${number}: ${JSON.stringify(name)} is not a cookie name`);
  if (value.includes(";")) throw new CookieFileError(`line ${number}: the value of ${name} holds a ";"`);
  return { domain, includeSubdomains: flag(subdomains, "subdomains", number), path, secure: flag(secure, "secure", number), expires: Number(expiry), name, value, httpOnly };
}

function flag(field: string, what: string, number: number): boolean {
  const upper = field.toUpperCase();
  if (upper === "TRUE") return true;
  if (upper === "FALSE") return false;
  throw new CookieFileError(`line ${number}: the ${what} flag ${JSON.stringify(field)} is neither TRUE nor FALSE`);
}

/**
 * The cookie as a `Set-Cookie` value and the URL that could have set it, so
 * the jar applies its own rules to it: a `Domain` attribute only when it
 * goes to subdomains (else it is a host-only cookie), `Secure` from an
 * `https:` URL, an `Expires` unless it is a session cookie.
 */
export function setCookieOf(cookie: FileCookie): { setCookie: string; url: string } {
  let setCookie = `${cookie.name}=${cookie.value}; Path=${cookie.path}`;
  if (cookie.includeSubdomains) setCookie += `; Domain=${cookie.domain}`;
  if (cookie.secure) setCookie += "; Secure";
  if (cookie.httpOnly) setCookie += "; HttpOnly";
  if (cookie.expires > 0) setCookie += `; Expires=${new Date(cookie.expires * 1000).toUTCString()}`;
  return { setCookie, url: `${cookie.secure ? "https" : "http"}://${cookie.domain}${cookie.path}` };
}

/** What a cookie file is loaded into: the one method of a jar (`CookieJarLike` in cookies.ts) it calls. */
export interface CookieStoring {
  /** Stores a `Set-Cookie` value as if received from `url`; with `ignoreError`, one the rules refuse is dropped instead of thrown. */
  setCookieSync(cookie: string, url: string, options?: { ignoreError?: boolean; now?: Date }): unknown;
}

/**
 * Puts the cookies of the Netscape cookie file `file` into `jar` (expired
 * ones too, which the jar then never sends).
 *
 * @throws TypeError naming `cookieFile` and the file: when it cannot be read
 * (the errno), when a line is not a cookie, or when the jar refuses one (a
 * public suffix as its domain), naming the line.
 */
export function loadCookieFile(jar: CookieStoring, file: string): void {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error); // Node's words, with the errno: "ENOENT: no such file or directory, open 'x'"
    throw new TypeError(`Expected \`cookieFile\` to be a readable file, got ${JSON.stringify(file)} (${reason})`, { cause: error });
  }
  try {
    for (const cookie of parseCookieFile(text)) {
      const { setCookie, url } = setCookieOf(cookie);
      try {
        jar.setCookieSync(setCookie, url);
      } catch (error) {
        throw new CookieFileError(`the cookie ${cookie.name} for ${cookie.domain} is refused: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  } catch (error) {
    if (!(error instanceof CookieFileError)) throw error;
    throw new TypeError(`Expected \`cookieFile\` to be a Netscape cookie file, got ${JSON.stringify(file)}: ${error.message}`, { cause: error });
  }
}
