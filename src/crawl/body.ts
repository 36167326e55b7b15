/**
 * From body bytes to text: undo the `Content-Encoding`, find the media type
 * and the charset (the header's label, else encoding-sniffer's prescan),
 * decode (the platform's `TextDecoder` for UTF-8, else iconv-lite).
 *
 * encoding-sniffer and iconv-lite (about 30 and 16 ms of CPU to import) are loaded
 * the first time a page needs them: a crawl whose pages name a known charset
 * in `Content-Type` and are UTF-8 never loads either (docs/benchmarks.md, charset).
 *
 * @module
 */
import { constants as bufferConstants } from "node:buffer";
import { createRequire } from "node:module";
import type zlibModule from "node:zlib";
import type { getEncoding } from "encoding-sniffer/sniffer";
import type iconvLite from "iconv-lite";
import { FetchFailure } from "../kernel/errors.js";

/** Loads a package synchronously when first needed (encoding-sniffer is ESM: Node ≥ 20.19 requires it). */
const requireWhenNeeded = createRequire(import.meta.url);
let sniffer: typeof getEncoding | null = null;
let iconv: typeof iconvLite | null = null;

/**
 * Undoes the response's `Content-Encoding`: gzip (also `x-gzip`), deflate,
 * brotli (`br`) or identity; a list such as `gzip, identity` is undone last
 * coding first.
 *
 * Uses node:zlib's synchronous calls with `maxOutputLength`, so a small body
 * that inflates to gigabytes (a "gzip bomb", or its brotli twin) stops at
 * `maxBodyBytes` instead of filling memory. `deflate` is meant to be zlib-wrapped (RFC 9110), but
 * some servers send raw deflate; like browsers, a body without a zlib header
 * is inflated raw. An empty body stays empty whatever the header says.
 *
 * @remarks The chapter's crawler gets this from aiohttp, which decodes gzip
 * and deflate the same way (and brotli when the Brotli package is installed).
 * @throws FetchFailure `BodyTooLarge` when the decoded body is longer than `maxBodyBytes`;
 * `BadResponse` for corrupt or truncated data, or an encoding not listed above (such as `compress` or `zstd`).
 */
export function decodeContent(headers: Readonly<Record<string, string>>, body: Uint8Array, maxBodyBytes: number): Uint8Array {
  const header = headers["content-encoding"];
  const codings = (header === undefined ? [] : header.split(","))
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
    const zlib: typeof zlibModule = process.getBuiltinModule("node:zlib"); // loaded by the first encoded body
    if (coding === "gzip" || coding === "x-gzip") return zlib.gunzipSync(data, options);
    if (coding === "deflate") return hasZlibHeader(data) ? zlib.inflateSync(data, options) : zlib.inflateRawSync(data, options);
    if (coding === "br") return zlib.brotliDecompressSync(data, options);
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
  return contentType === undefined ? null : contentTypeOf(contentType).type;
}

/** What a `Content-Type` value says: its media type, and its `charset` label (see {@link headerCharset}). */
interface ContentType {
  readonly type: string | null;
  readonly charset: string | undefined;
}

/** `Content-Type` values already read (up to 200 characters each): a crawl meets the same few on every page. */
const contentTypes = new Map<string, ContentType>();

/** The media type and charset a `Content-Type` value names, read once per distinct value. */
function contentTypeOf(value: string): ContentType {
  const known = contentTypes.get(value);
  if (known !== undefined) return known;
  const type = (value.split(";")[0] ?? "").trim().toLowerCase();
  const read: ContentType = { type: type === "" ? null : interned(type), charset: headerCharset(value) };
  if (contentTypes.size < MAX_INTERNED && value.length <= 200) contentTypes.set(value, read);
  return read;
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
 * found by the HTML standard's encoding sniffing algorithm:
 * a byte order mark wins; then the `charset` parameter of `Content-Type`
 * when it is a label the Encoding Standard knows; then (encoding-sniffer's
 * prescan, run only when neither decided) a `<meta charset>`,
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
  const contentType = headers["content-type"];
  const named = contentType === undefined ? undefined : contentTypeOf(contentType).charset;
  const known = named === undefined ? null : encodingNamed(named);
  const encoding = known === null ? prescan(bytes, named) : (byteOrderMark(bytes) ?? known);
  return { label: interned(named ?? encoding.toLowerCase()), encoding };
}

/** The whole sniffing algorithm, by encoding-sniffer: for a response whose header names no label it knows. */
function prescan(bytes: Uint8Array, named: string | undefined): string {
  sniffer ??= (requireWhenNeeded("encoding-sniffer/sniffer") as typeof import("encoding-sniffer/sniffer")).getEncoding;
  return sniffer(bytes, { transportLayerEncodingLabel: named, defaultEncoding: "utf-8" });
}

/** The encoding a byte order mark at the start of `bytes` names, or null: the one thing that overrides the header. */
function byteOrderMark(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "UTF-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "UTF-16BE";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "UTF-16LE";
  return null;
}

/** Header labels already resolved: the WHATWG name, or null for a label left to encoding-sniffer. */
const namedEncodings = new Map<string, string | null>();

/**
 * The WHATWG name of the encoding `label` (trimmed, lowercased) stands for,
 * as the platform's `TextDecoder` resolves it, in the Encoding Standard's
 * case (`UTF-8`, `Shift_JIS`, `windows-1252`), as encoding-sniffer names it;
 * null when `TextDecoder` does not take it. Node knows 220 of the standard's
 * 228 labels: the other eight (`iso-8859-16`, `x-user-defined` and the six
 * `replacement` ones) and unknown labels go to encoding-sniffer.
 */
function encodingNamed(label: string): string | null {
  const known = namedEncodings.get(label);
  if (known !== undefined) return known;
  let name: string | null;
  try {
    name = whatwgCase(new TextDecoder(label).encoding);
  } catch {
    name = null; // RangeError: a label it does not know; or an encoding this build of Node cannot decode
  }
  if (namedEncodings.size < MAX_INTERNED) namedEncodings.set(label, name);
  return name;
}

/** `utf-8` → `UTF-8`, `shift_jis` → `Shift_JIS`, `big5` → `Big5`: the case the Encoding Standard's names table uses. */
function whatwgCase(name: string): string {
  if (/^(?:utf|iso|koi|euc|ibm|gbk)/.test(name)) return name.toUpperCase();
  if (name === "big5") return "Big5";
  if (name === "shift_jis") return "Shift_JIS";
  return name;
}

/** The `charset` parameter of a Content-Type, unquoted, trimmed and lowercased; undefined when absent or empty. */
function headerCharset(contentType: string): string | undefined {
  for (const [, name = "", rawValue = ""] of contentType.matchAll(PARAMETER)) {
    if (name.toLowerCase() !== "charset") continue;
    const value = rawValue.startsWith('"') ? rawValue.replace(/^"|"$/g, "").replace(/\\(.)/g, "$1") : rawValue;
    const label = value.trim().toLowerCase();
    return label === "" ? undefined : label;
  }
  return undefined;
}

/** UTF-8 with the platform's decoder: replaces malformed bytes with U+FFFD and removes a leading byte order mark. */
const utf8 = new TextDecoder();

/**
 * Decodes text in `encoding`, a name {@link sniffCharset} resolved: UTF-8
 * with the platform's `TextDecoder`, any other with iconv-lite. Malformed
 * bytes become U+FFFD. A leading byte order mark is removed (the sniffer has
 * already chosen its encoding).
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
    if (encoding === "UTF-8" || encoding === "utf-8") return utf8.decode(bytes);
    iconv ??= requireWhenNeeded("iconv-lite") as typeof iconvLite;
    return iconv.encodingExists(encoding) ? iconv.decode(bytes, encoding) : utf8.decode(bytes);
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
 * `ERR_STRING_TOO_LONG` (from `TextDecoder`, `Buffer#toString` and
 * `StringDecoder`, which iconv-lite calls), or V8's `RangeError: Invalid string length` (from
 * joining strings, as iconv-lite does with its decoder's last characters).
 * No other RangeError: any other fault stays what it is.
 */
function isStringTooLong(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if ("code" in error && error.code === "ERR_STRING_TOO_LONG") return true;
  return error instanceof RangeError && error.message === "Invalid string length";
}
