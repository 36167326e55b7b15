/**
 * From body bytes to text: undo the `Content-Encoding`, find the media type
 * and the charset (encoding-sniffer), decode (iconv-lite).
 *
 * @module
 */
import { constants as bufferConstants } from "node:buffer";
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { getEncoding } from "encoding-sniffer";
import iconv from "iconv-lite";
import { FetchFailure } from "../kernel/errors.js";

/**
 * Undoes the response's `Content-Encoding`: gzip (also `x-gzip`), deflate or
 * identity; a list such as `gzip, identity` is undone last coding first.
 *
 * Uses node:zlib's synchronous calls with `maxOutputLength`, so a small body
 * that inflates to gigabytes (a "gzip bomb") stops at `maxBodyBytes` instead
 * of filling memory. `deflate` is meant to be zlib-wrapped (RFC 9110), but
 * some servers send raw deflate; like browsers, a body without a zlib header
 * is inflated raw. An empty body stays empty whatever the header says.
 *
 * @remarks The chapter's crawler gets this from aiohttp, which decodes gzip
 * and deflate the same way.
 * @throws FetchFailure `BodyTooLarge` when the decoded body is longer than `maxBodyBytes`;
 * `BadResponse` for corrupt or truncated data, or an encoding not listed above (such as `br`).
 */
export function decodeContent(headers: Readonly<Record<string, string>>, body: Uint8Array, maxBodyBytes: number): Uint8Array {
  const codings = (headers["content-encoding"] ?? "")
    .split(",")
    .map(function normalise(coding) {
      return coding.trim().toLowerCase();
    })
    .filter(function named(coding) {
      return coding !== "" && coding !== "identity";
    });
  let data = body;
  for (const coding of codings.reverse()) {
    if (data.length === 0) break;
    data = inflate(coding, data, maxBodyBytes);
  }
  if (data.length > maxBodyBytes) {
    throw new FetchFailure("BodyTooLarge", `The body is longer than maxBodyBytes (${maxBodyBytes})`);
  }
  return data;
}

function inflate(coding: string, data: Uint8Array, maxBodyBytes: number): Uint8Array {
  // zlib refuses a maxOutputLength above the largest Buffer (4 GiB on Node 20).
  const options = { maxOutputLength: Math.min(maxBodyBytes, bufferConstants.MAX_LENGTH) };
  try {
    if (coding === "gzip" || coding === "x-gzip") return gunzipSync(data, options);
    if (coding === "deflate") return hasZlibHeader(data) ? inflateSync(data, options) : inflateRawSync(data, options);
  } catch (error) {
    if (error instanceof RangeError) {
      throw new FetchFailure("BodyTooLarge", `The decoded body is longer than maxBodyBytes (${maxBodyBytes})`, {
        cause: error,
      });
    }
    throw new FetchFailure("BadResponse", `The body is not valid ${coding} data`, { cause: error });
  }
  throw new FetchFailure("BadResponse", `Unknown Content-Encoding ${JSON.stringify(coding)}`);
}

/** A zlib stream starts with CMF/FLG: method 8 (deflate), and CMF·256 + FLG divisible by 31 (RFC 1950). */
function hasZlibHeader(data: Uint8Array): boolean {
  const cmf = data[0] ?? 0;
  const flg = data[1] ?? 0;
  return data.length >= 2 && (cmf & 0x0f) === 8 && (cmf * 256 + flg) % 31 === 0;
}

/** The media type of `Content-Type`, lowercased, without parameters: `text/html`. Null when absent or empty. */
export function mediaType(headers: Readonly<Record<string, string>>): string | null {
  const contentType = headers["content-type"];
  if (contentType === undefined) return null;
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  return type === "" ? null : interned(type);
}

/** One string per distinct media type or charset label, at most this many. */
const MAX_INTERNED = 1024;
const internedStrings = new Map<string, string>();

/**
 * The one copy of `text` that every record shares. A crawl of 300,000 pages
 * keeps a `contentType` and an `encoding` in each record: the same few
 * values, each a fresh string from its response's headers, about 6 MB
 * altogether until they share one copy (docs/benchmarks.md, S4).
 */
function interned(text: string): string {
  const known = internedStrings.get(text);
  if (known !== undefined) return known;
  if (internedStrings.size < MAX_INTERNED) internedStrings.set(text, text);
  return text;
}

/** `; name=value` or `; name="quoted \" value"` in a Content-Type. */
const PARAMETER = /;\s*([^\s;=]+)\s*=\s*("(?:[^"\\]|\\.)*"?|[^;]*)/g;

/** What {@link sniffCharset} finds: the charset a response names, and the encoding its text is decoded with. */
export interface Charset {
  /** The label the response names, lowercased: what a record reports as its `encoding`. */
  label: string;
  /** The WHATWG name of the encoding to decode the text with (`windows-1252`, `Shift_JIS`, `UTF-8`…). */
  encoding: string;
}

/**
 * The charset a response names and the encoding to decode its text with,
 * found by the HTML standard's encoding sniffing algorithm (encoding-sniffer):
 * a byte order mark wins; then the `charset` parameter of `Content-Type`
 * when it is a label the Encoding Standard knows; then a `<meta charset>`,
 * `<meta http-equiv="Content-Type" content="…; charset=…">` or XML
 * declaration in the first 1024 bytes; else UTF-8.
 *
 * `label` is the `Content-Type` charset as named, lowercased (`latin1` stays
 * `latin1`, even a label no decoder knows); without one, the encoding the
 * sniffer found in the body, lowercased (`<meta charset=latin1>` is
 * `windows-1252`, its WHATWG name); else `utf-8`.
 *
 * @remarks The chapter's crawler reads only the header, with Python's
 * `cgi.parse_header`, and lets aiohttp's `response.text()` guess the rest.
 * The prescan skips a `<meta>` whose label is unknown, and reads
 * `x-user-defined` as `windows-1252` and UTF-16 as UTF-8, as browsers do.
 * @see The HTML standard, "Determining the character encoding" (the encoding sniffing algorithm)
 */
export function sniffCharset(headers: Readonly<Record<string, string>>, bytes: Uint8Array): Charset {
  const named = headerCharset(headers["content-type"]);
  const encoding = getEncoding(bytes, { transportLayerEncodingLabel: named, defaultEncoding: "utf-8" });
  return { label: interned(named ?? encoding.toLowerCase()), encoding };
}

/** The `charset` parameter of a Content-Type, unquoted, trimmed and lowercased; undefined when absent or empty. */
function headerCharset(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const [, name = "", rawValue = ""] of contentType.matchAll(PARAMETER)) {
    if (name.toLowerCase() !== "charset") continue;
    const value = rawValue.startsWith('"') ? rawValue.replace(/^"|"$/g, "").replace(/\\(.)/g, "$1") : rawValue;
    const label = value.trim().toLowerCase();
    return label === "" ? undefined : label;
  }
  return undefined;
}

/**
 * Decodes text with iconv-lite in `encoding`, a name {@link sniffCharset}
 * resolved. Malformed bytes become U+FFFD. A leading byte order mark is
 * removed (the sniffer has already chosen its encoding).
 *
 * @remarks Four WHATWG encodings are not in iconv-lite and decode as UTF-8:
 * ISO-2022-JP, x-mac-cyrillic, x-user-defined and `replacement`. iconv-lite's
 * windows-1252 reads the five bytes the standard maps to C1 controls (0x81,
 * 0x8D, 0x8F, 0x90, 0x9D) as U+FFFD.
 * @throws FetchFailure `BodyTooLarge` when the text would be longer than the
 * longest JavaScript string (`buffer.constants.MAX_STRING_LENGTH`, 2^29 - 24
 * UTF-16 units on Node 20): a body over about 512 MiB, possible only with a
 * `maxBodyBytes` raised that far.
 */
export function decodeText(bytes: Uint8Array, encoding: string): string {
  try {
    return iconv.decode(bytes, iconv.encodingExists(encoding) ? encoding : "utf-8");
  } catch (error) {
    if (!isStringTooLong(error)) throw error;
    const limit = bufferConstants.MAX_STRING_LENGTH;
    throw new FetchFailure("BodyTooLarge", `The body is too long to decode as text (a string holds at most ${limit} characters)`, {
      cause: error,
    });
  }
}

/**
 * Whether an error says a string would be too long: Node's
 * `ERR_STRING_TOO_LONG` (from `Buffer#toString` and `StringDecoder`, which
 * iconv-lite calls), or V8's `RangeError: Invalid string length` (from
 * joining strings, as iconv-lite does with its decoder's last characters).
 * No other RangeError: any other fault stays what it is.
 */
function isStringTooLong(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if ("code" in error && error.code === "ERR_STRING_TOO_LONG") return true;
  return error instanceof RangeError && error.message === "Invalid string length";
}
