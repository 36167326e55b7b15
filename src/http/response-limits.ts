/**
 * The limits every stage applies to a response, read off raw bytes that
 * another parser reads: how stage 3 applies them beside llhttp.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { FetchFailure } from "../kernel/errors.js";
import { HeadTooLarge, MAX_HEADER_BYTES } from "./llhttp-rules.js";
import { ResponseParser, type SkipBody } from "./parser.js";

/**
 * Follows the responses on one connection, from its raw bytes, for the two
 * limits of the shared parser: `maxBodyBytes` (`BodyTooLarge`) and
 * `MAX_HEADER_BYTES` (`BadResponse`).
 *
 * undici hands its handler a response's head and body bytes, but nothing of
 * what lies between: not a chunk's announced size, nor the length of a chunk
 * extension, a status line or the spaces around a header value, which llhttp
 * skips without a limit. With those alone, stage 3 would learn that a body is
 * too large only once its bytes came (a chunk announced as 1 GB and never
 * sent would end in `Timeout`), and it would take lines that stages 1 and 2
 * refuse. `read(chunk)` runs a {@link ResponseParser} that keeps no body over
 * the same bytes and returns its failure when it is one of those limits; the
 * next response on the connection gets a new parser. On any other failure it
 * stops reading: the form of the bytes is llhttp's to judge (where the two
 * parsers differ on it is listed in docs/differences.md, "HTTP parser").
 *
 * Most responses need no parser: when a response's first chunk holds its
 * whole head, in the plain form every line of which the parser would take
 * as it is (see {@link plainBodyLeft}), with one `Content-Length` within
 * `maxBodyBytes` and no `Transfer-Encoding`, no limit can break before its
 * end, and `read` only counts the body's bytes down to it.
 *
 * @remarks Bytes after the end of a response, in the chunk that ends it, are
 * not read: the next response can only start after the next request, which
 * undici sends once this response is complete; undici refuses a response
 * that comes unasked.
 */
export class ResponseLimits {
  /** The parser of the response being read, when its head was not plain; null between responses. */
  private parser: ResponseParser | null = null;
  /** Body bytes still to come of a response whose plain head was read without a parser. */
  private remaining = 0;
  private reading = true;

  /**
   * @param maxBodyBytes - the longest body accepted, before content decoding.
   * @param answering - which bodies the request being answered leaves unread
   * (its `skipBody`), read at the start of each response: no body limit
   * applies past such a head, as the request's handler closes the connection there.
   */
  constructor(
    private readonly maxBodyBytes: number,
    private readonly answering: { readonly skipBody: SkipBody | null } = NO_SKIPPING,
  ) {}

  /** Reads the next bytes of the connection (a Buffer, as a socket gives them); returns the limit they break, or null. */
  read(chunk: Buffer): FetchFailure | null {
    if (!this.reading) return null;
    if (this.remaining > 0) {
      this.remaining = Math.max(0, this.remaining - chunk.length); // the bytes past the body's end are not read
      return null;
    }
    if (this.parser === null) {
      const left = plainBodyLeft(chunk, this.maxBodyBytes);
      if (left !== null) {
        this.remaining = left;
        return null;
      }
      this.parser = new ResponseParser({ maxBodyBytes: this.maxBodyBytes, keepBody: false, skipBody: this.answering.skipBody });
    }
    try {
      this.parser.feed(chunk);
      if (this.parser.done) this.parser = null; // Not kept until the next response: it would outlive a scavenge.
      return null;
    } catch (error) {
      this.reading = false;
      this.parser = null;
      return isLimit(error) ? error : null;
    }
  }
}

/** The end of a head: the empty line after the last header line. */
const HEAD_END = Buffer.from("\r\n\r\n", "latin1");
/** How a plain head starts: the version up to its minor digit. */
const HTTP_1 = Buffer.from("HTTP/1.", "latin1");
const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;
/** The bytes of a token (RFC 9110 §5.6.2), the only ones a plain head's field names hold: 1 for each. */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN[c.charCodeAt(0)] = 1;
const CONTENT_LENGTH = Buffer.from("content-length", "latin1");
const TRANSFER_ENCODING = Buffer.from("transfer-encoding", "latin1");

/**
 * The body bytes still to come after `chunk`, a response's first, when it
 * holds the whole head (at most a quarter of {@link MAX_HEADER_BYTES}) in
 * plain form, with a status other than 204 and 304, no `Transfer-Encoding`
 * and one `Content-Length` of at most `maxBodyBytes`; null otherwise, for
 * the parser to read.
 *
 * A plain head is an HTTP/1.0 or 1.1 status line of status 200 to 999 with
 * no CR or LF in its reason, then header lines, each a token, a colon and a
 * value with no control character but HT: lines llhttp-rules.ts lets
 * through as they are (no folded line, no bare CR or LF). On such a head the
 * parser finds no fault and no broken limit, and then counts the body by its
 * length (or, with `skipBody`, stops at the head, and the request's handler
 * closes the connection): counting the bytes down gives the same verdict
 * without the parser's work per line and its objects.
 *
 * @remarks One pass over the head's bytes, rather than regular expressions
 * over the head as a string: no string, no match arrays, no iterator
 * (docs/benchmarks.md, "Issue 29, third round").
 */
function plainBodyLeft(chunk: Buffer, maxBodyBytes: number): number | null {
  const last = Math.min(chunk.length, MAX_HEADER_BYTES / 4 + HEAD_END.length); // a head must end before this
  if (last < 12 + HEAD_END.length || !startsWith(chunk, HTTP_1)) return null;
  const d0 = chunk[9];
  const d1 = chunk[10];
  const d2 = chunk[11];
  if ((chunk[7] !== 0x30 && chunk[7] !== 0x31) || chunk[8] !== SP || d0 < 0x32 || d0 > 0x39 || !isDigit(d1) || !isDigit(d2)) return null;
  if (d1 === 0x30 && d2 === 0x34 && (d0 === 0x32 || d0 === 0x33)) return null; // 204, 304: no body, whatever the length says
  let at = 12;
  if (chunk[at] === SP) while (at < last && chunk[at] !== CR && chunk[at] !== LF) at++; // the reason
  let length = -1;
  for (;;) {
    // Each line ends with CR LF; the head, with a second CR LF.
    if (at + 3 >= last || chunk[at] !== CR || chunk[at + 1] !== LF) return null;
    if (chunk[at + 2] === CR && chunk[at + 3] === LF) break;
    const name = at + 2;
    at = name;
    while (at < last && TOKEN[chunk[at]] === 1) at++;
    if (at === name || chunk[at] !== 0x3a) return null; // a name, then its colon
    const nameLength = at - name;
    const value = ++at;
    for (let byte = chunk[at]; at < last && (byte === HT || (byte >= SP && byte !== 0x7f)); byte = chunk[++at]); // no control byte but HT
    if (nameLength === TRANSFER_ENCODING.length && isNamed(chunk, name, TRANSFER_ENCODING)) return null;
    if (nameLength === CONTENT_LENGTH.length && isNamed(chunk, name, CONTENT_LENGTH)) {
      if (length !== -1) return null; // a second Content-Length
      length = lengthValue(chunk, value, at);
      if (length === -1) return null;
    }
  }
  if (length === -1 || length > maxBodyBytes) return null;
  return Math.max(0, length - (chunk.length - at - HEAD_END.length));
}

/** Whether `chunk` starts with the bytes of `start`. */
function startsWith(chunk: Buffer, start: Buffer): boolean {
  for (let i = 0; i < start.length; i++) if (chunk[i] !== start[i]) return false;
  return true;
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

/** Whether the token at `at` in `chunk` is `name` (lowercase), in any case: a token's bytes are ASCII letters or punctuation. */
function isNamed(chunk: Buffer, at: number, name: Buffer): boolean {
  for (let i = 0; i < name.length; i++) if ((chunk[at + i] | 0x20) !== name[i]) return false;
  return true;
}

/** The number a Content-Length value from `start` to `end` holds, with the spaces and tabs the parser trims (up to 15 digits: exact as a number); -1 for any other value. */
function lengthValue(chunk: Buffer, start: number, end: number): number {
  let at = start;
  while (at < end && (chunk[at] === SP || chunk[at] === HT)) at++;
  const digits = at;
  let length = 0;
  for (; at < end && isDigit(chunk[at]); at++) length = length * 10 + chunk[at] - 0x30;
  if (at === digits || at - digits > 15) return -1;
  while (at < end && (chunk[at] === SP || chunk[at] === HT)) at++;
  return at === end ? length : -1;
}

/** A connection whose requests read every body. */
const NO_SKIPPING = { skipBody: null };

function isLimit(error: unknown): error is FetchFailure {
  return error instanceof HeadTooLarge || (error instanceof FetchFailure && error.kind === "BodyTooLarge");
}
