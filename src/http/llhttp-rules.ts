/**
 * The rules the response parser follows only so that stages 1 and 2 refuse
 * exactly the responses stage 3 refuses. Stage 3's parser is llhttp, inside
 * undici; where the RFC leaves a choice, llhttp takes the strict one, and the
 * three stages must give the same record for the same bytes. So each function
 * here reproduces one llhttp (or undici) verdict, and `ResponseParser`
 * (parser.ts) calls it at the one place in its state machine where that
 * verdict falls. A learner can read the parser without this file: every
 * function either returns what the parser would have computed anyway or
 * throws a `BadResponse` `FetchFailure`.
 *
 * @remarks Where we still differ from llhttp, on purpose (docs/differences.md,
 * "HTTP parser"): `statusOf` takes only HTTP/1.0 and HTTP/1.1 (llhttp
 * also takes 0.9 and 2.0) and a status of 100–999 (llhttp also takes one
 * under 100); the parser unfolds folded header lines (obs-fold) and skips an
 * unsolicited `100 Continue`, both of which llhttp refuses.
 * @see llhttp (github.com/nodejs/llhttp), src/llhttp/http.ts; undici lib/dispatcher/client-h1.js
 * @module
 */
import { Buffer } from "node:buffer";
import { FetchFailure } from "../kernel/errors.js";

/**
 * The longest head (status line and header lines, with their CRLFs) the
 * parser accepts: 64 KiB. A chunk-size line (with its extension), and a
 * chunked body's last-chunk line with the trailers, have the same limit.
 *
 * @remarks undici's default `maxHeaderSize` (node:http's) is 16 KiB; stage 3
 * passes this value to its undici `Agent`. undici counts less, though (see
 * `headBytesAfter`), so stage 3 also applies this count itself, to the
 * raw bytes (`ResponseLimits`, response-limits.ts).
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The `BadResponse` for a head, a chunk-size line or a trailer section over
 * {@link MAX_HEADER_BYTES}: a limit of ours, as `BodyTooLarge` is, rather than
 * a verdict on the bytes' form.
 */
export class HeadTooLarge extends FetchFailure {
  constructor() {
    super("BadResponse", `A response head, chunk-size line or trailer section is longer than ${MAX_HEADER_BYTES} bytes`);
  }
}

/** A header line: a token (RFC 9110 §5.6.2), then the colon; the first colon ends the name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/;
/** Control characters a header value may not hold (HT is allowed). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job.
const BAD_VALUE_CHAR = /[\x00-\x08\x0a-\x1f\x7f]/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([0-9]{3})(?: (.*))?$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]+)(?:;.*)?$/;
const DIGITS = /^[0-9]+$/;
const UINT64_MAX = 0xffff_ffff_ffff_ffffn;
const CR = 0x0d;

/**
 * Counts a piece of a line outside the body against `MAX_HEADER_BYTES` and
 * refuses the response as soon as the section passes it; the line's LF counts
 * once the line ends. Returns the section's new byte count.
 *
 * @remarks Every byte counts, so the parser, which holds a line until its LF,
 * never holds more than 64 KiB of one. undici's `maxHeaderSize` counts only
 * the bytes of header names and values as llhttp hands them over (not the
 * status line, colons, spaces around values, line ends or chunk extensions,
 * which llhttp skips without a limit) and refuses at the limit itself: 12,000
 * lines of `a: b` are 72 KB on the wire and 24,000 bytes to undici. Our count
 * is never below undici's, so stage 3, which applies it to the raw bytes
 * too, refuses what both refuse, first.
 */
export function headBytesAfter(sectionBytes: number, partLength: number, lineEnded: boolean): number {
  const bytes = sectionBytes + partLength;
  if (bytes > MAX_HEADER_BYTES) throw new HeadTooLarge();
  return lineEnded ? bytes + 1 : bytes;
}

/**
 * The text of a line cut at its LF, without its CR, read as Latin-1; null for
 * an empty line before a status line, which llhttp skips (CRLF or bare LF).
 * Anywhere else llhttp wants CRLF and no other CR, also on an empty line.
 */
export function lineText(bytes: Uint8Array, beforeStatusLine: boolean): string | null {
  if (beforeStatusLine && (bytes.length === 0 || (bytes.length === 1 && bytes[0] === CR))) return null;
  if (bytes.length === 0 || bytes.indexOf(CR) !== bytes.length - 1) {
    throw new FetchFailure("BadResponse", "A line does not end with CRLF");
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length - 1).toString("latin1");
}

/**
 * The status code of a status line, as llhttp reads `HTTP/1.x NNN reason`:
 * one space on each side of the three digits, the reason optional.
 */
export function statusOf(line: string): number {
  const match = STATUS_LINE.exec(line);
  if (match === null || Number(match[2]) < 100) {
    throw new FetchFailure("BadResponse", `Not an HTTP/1.x status line: ${JSON.stringify(line.slice(0, 80))}`);
  }
  return Number(match[2]);
}

/** llhttp refuses a header line whose name is not a token before the colon, or whose value holds a control character. */
export function checkHeaderLine(line: string): void {
  if (!HEADER_NAME.test(line)) {
    throw new FetchFailure("BadResponse", `Bad header line: ${JSON.stringify(line.slice(0, 80))}`);
  }
  // The whole line: the name, a token, and the colon hold no control character either.
  checkHeaderValue(line);
}

/** llhttp refuses a header value with a control character other than HT (NUL, CR, LF, DEL, ...). */
export function checkHeaderValue(value: string): void {
  if (BAD_VALUE_CHAR.test(value)) throw new FetchFailure("BadResponse", "A header value holds a control character");
}

/**
 * llhttp checks trailer fields as it checks header fields, though nobody reads
 * them; a folded line passes, as the parser would unfold it in a head.
 */
export function checkTrailerLine(line: string): void {
  if (line.startsWith(" ") || line.startsWith("\t")) return;
  checkHeaderLine(line);
}

/**
 * The body length the head's `Content-Length` gives, or null without one. llhttp
 * refuses a second `Content-Length` (even an equal one), a value other than
 * digits (no sign, no list), one over 2^64 − 1, and `Content-Length` beside
 * `Transfer-Encoding`.
 *
 * @param lines - the head's [lowercased name, trimmed value] pairs, before repeated fields are joined
 */
export function contentLengthOf(lines: ReadonlyArray<[string, string]>, transferEncoding: string | undefined): number | null {
  const values = lines.filter(isContentLength);
  if (values.length > 1) throw new FetchFailure("BadResponse", "The response has more than one Content-Length");
  if (values.length === 0) return null;
  const value = values[0][1];
  if (!DIGITS.test(value)) throw new FetchFailure("BadResponse", `Bad Content-Length: ${JSON.stringify(value)}`);
  const length = BigInt(value);
  if (length > UINT64_MAX) throw new FetchFailure("BadResponse", "Content-Length overflows 64 bits");
  if (transferEncoding !== undefined) {
    throw new FetchFailure("BadResponse", "The response has both Content-Length and Transfer-Encoding");
  }
  // Beyond 2^53 the number is inexact, but it is then far over any maxBodyBytes anyway.
  return Number(length);
}

/**
 * The size a chunk-size line gives, as llhttp reads it: hex digits, then
 * nothing or `;` and an extension (no spaces), at most 2^64 − 1.
 */
export function chunkSizeOf(line: string): number {
  const hex = CHUNK_SIZE.exec(line)?.[1];
  if (hex === undefined) throw new FetchFailure("BadResponse", `Bad chunk size line: ${JSON.stringify(line.slice(0, 80))}`);
  const size = BigInt(`0x${hex}`);
  if (size > UINT64_MAX) throw new FetchFailure("BadResponse", "A chunk size overflows 64 bits");
  // Beyond 2^53 the number is inexact, but it is then far over any maxBodyBytes anyway.
  return Number(size);
}

function isContentLength(line: [string, string]): boolean {
  return line[0] === "content-length";
}
