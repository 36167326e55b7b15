/**
 * From body bytes to text: undo the `Content-Encoding`, find the media type
 * and the charset, decode.
 *
 * @module
 */
import { Buffer, constants as bufferConstants } from "node:buffer";
import { TextDecoder } from "node:util";
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
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
  return type === "" ? null : type;
}

/** `; name=value` or `; name="quoted \" value"` in a Content-Type. */
const PARAMETER = /;\s*([^\s;=]+)\s*=\s*("(?:[^"\\]|\\.)*"?|[^;]*)/g;
const META_TAG = /<meta[\s/][^>]*>/gi;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
const CHARSET_IN_CONTENT = /charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))/i;

/**
 * The charset label a response names, lowercased: the `charset` parameter of
 * `Content-Type`, else the first `<meta charset>` or
 * `<meta http-equiv="Content-Type" content="…; charset=…">` in the first 1024
 * bytes of the body. Null when neither names one.
 *
 * The body is sniffed with two small regular expressions over its first
 * 1024 bytes read as Latin-1 (every byte one character), comments removed:
 * a cut-down form of the HTML standard's prescan, enough for the `<meta>`
 * forms pages use, without running an HTML parser over the page twice.
 *
 * @remarks The label is returned as named (`latin1` stays `latin1`), even when
 * `TextDecoder` does not know it; {@link decodeText} then falls back to UTF-8.
 */
export function charsetLabel(headers: Readonly<Record<string, string>>, bytes: Uint8Array): string | null {
  return headerCharset(headers["content-type"]) ?? metaCharset(bytes);
}

function headerCharset(contentType: string | undefined): string | null {
  if (contentType === undefined) return null;
  for (const [, name = "", rawValue = ""] of contentType.matchAll(PARAMETER)) {
    if (name.toLowerCase() !== "charset") continue;
    const value = rawValue.startsWith('"') ? rawValue.replace(/^"|"$/g, "").replace(/\\(.)/g, "$1") : rawValue;
    return label(value);
  }
  return null;
}

function metaCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024))
    .toString("latin1")
    .replace(/<!--[\s\S]*?-->/g, "");
  for (const [tag] of head.matchAll(META_TAG)) {
    const attributes = new Map<string, string>();
    for (const [, name = "", double, single, bare] of tag.slice(5).matchAll(ATTRIBUTE)) {
      const key = name.toLowerCase();
      if (!attributes.has(key)) attributes.set(key, double ?? single ?? bare ?? "");
    }
    const charset = attributes.get("charset");
    if (charset !== undefined) return label(charset);
    const content = attributes.get("content");
    if (attributes.get("http-equiv")?.trim().toLowerCase() === "content-type" && content !== undefined) {
      const match = CHARSET_IN_CONTENT.exec(content);
      if (match !== null) return label(match[1] ?? match[2] ?? match[3] ?? "");
    }
  }
  return null;
}

/** A charset label as we report it: trimmed, lowercased; null when empty. */
function label(value: string): string | null {
  const trimmed = value.trim().toLowerCase();
  return trimmed === "" ? null : trimmed;
}

/** Byte order marks and the encodings they announce, as the Encoding Standard's decode() sniffs them. */
const BYTE_ORDER_MARKS: ReadonlyArray<[readonly number[], string]> = [
  [[0xef, 0xbb, 0xbf], "utf-8"],
  [[0xfe, 0xff], "utf-16be"],
  [[0xff, 0xfe], "utf-16le"],
];

/**
 * Decodes text with the charset `label` names (UTF-8 when null or unknown to
 * `TextDecoder`). Never throws: malformed bytes become U+FFFD.
 *
 * A byte order mark wins over the label and is removed, as in the Encoding
 * Standard's decode(): a page labelled `windows-1252` that starts with a UTF-8
 * BOM is UTF-8.
 *
 * @remarks Node 20.18.3 and later decode `windows-1252` (and the labels that
 * mean it: `latin1`, `ascii`, `iso-8859-1`…) as ISO-8859-1 and lose bytes
 * 0x80–0x9F (nodejs/node#60888). When the running Node has that bug, those
 * labels are decoded here with the Windows-1252 table instead.
 */
export function decodeText(bytes: Uint8Array, label: string | null): string {
  for (const [mark, encoding] of BYTE_ORDER_MARKS) {
    if (startsWith(bytes, mark)) {
      return new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes.subarray(mark.length));
    }
  }
  const decoder = textDecoderFor(label);
  if (decoder.encoding === "windows-1252" && !NATIVE_WINDOWS_1252_WORKS) return decodeWindows1252(bytes);
  return decoder.decode(bytes);
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.length <= bytes.length && prefix.every(function sameByte(byte, index) {
    return bytes[index] === byte;
  });
}

function textDecoderFor(label: string | null): TextDecoder {
  try {
    return new TextDecoder(label ?? "utf-8", { ignoreBOM: true });
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return new TextDecoder("utf-8", { ignoreBOM: true }); // a label TextDecoder does not know
  }
}

/** Windows-1252 bytes 0x80–0x9F (WHATWG index-windows-1252), where it differs from ISO-8859-1. */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

/** False on the Node versions whose TextDecoder gets byte 0x80 of windows-1252 wrong. */
const NATIVE_WINDOWS_1252_WORKS = new TextDecoder("windows-1252").decode(Uint8Array.of(0x80)) === "\u20ac";

function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
    .toString("latin1")
    .replace(/[\x80-\x9f]/g, function windows1252(character) {
      return WINDOWS_1252_HIGH.charAt(character.charCodeAt(0) - 0x80);
    });
}
