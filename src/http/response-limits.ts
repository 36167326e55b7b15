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
   * @param skipBodyOf - which bodies the request being answered leaves unread
   * (its `skipBody`), asked at the start of each response: no body limit
   * applies past such a head, as the request's handler closes the connection there.
   */
  constructor(
    private readonly maxBodyBytes: number,
    private readonly skipBodyOf: () => SkipBody | null = noSkipping,
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
      this.parser = new ResponseParser({ maxBodyBytes: this.maxBodyBytes, keepBody: false, skipBody: this.skipBodyOf() });
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

/**
 * A plain head, as Latin-1 text without its last CRLF CRLF: an HTTP/1.x status
 * line of status 200 to 999 with no CR or LF in its reason, then header
 * lines, each a token, a colon and a value with no control character but HT:
 * lines llhttp-rules.ts lets through as they are (no folded line, no bare CR or LF).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job.
const PLAIN_HEAD = /^HTTP\/1\.[01] [2-9][0-9]{2}(?: [^\r\n]*)?(?:\r\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*)*$/;
/** A header line of a plain head that frames the body: its name, lowercased or not, and its value. */
const FRAMING = /\r\n(content-length|transfer-encoding):([^\r]*)/gi;
/** A Content-Length value the parser takes, with the spaces and tabs it trims (15 digits: exact as a number). */
const LENGTH_VALUE = /^[ \t]*([0-9]{1,15})[ \t]*$/;

/**
 * The body bytes still to come after `chunk`, a response's first, when it
 * holds the whole head in plain form ({@link PLAIN_HEAD}, at most a quarter
 * of {@link MAX_HEADER_BYTES}) with a status other than 204 and 304, no
 * `Transfer-Encoding` and one `Content-Length` of at most `maxBodyBytes`;
 * null otherwise, for the parser to read.
 *
 * On such a head the parser finds no fault and no broken limit, and then
 * counts the body by its length (or, with `skipBody`, stops at the head, and
 * the request's handler closes the connection): counting the bytes down
 * gives the same verdict without the parser's work per line and its objects.
 */
function plainBodyLeft(chunk: Buffer, maxBodyBytes: number): number | null {
  const end = chunk.indexOf(HEAD_END);
  if (end === -1 || end > MAX_HEADER_BYTES / 4) return null;
  const head = chunk.toString("latin1", 0, end);
  if (!PLAIN_HEAD.test(head) || head.startsWith("204", 9) || head.startsWith("304", 9)) return null;
  let length: number | null = null;
  for (const [, name, value] of head.matchAll(FRAMING)) {
    const digits = LENGTH_VALUE.exec(value)?.[1];
    if (name.length !== "content-length".length || length !== null || digits === undefined) return null;
    length = Number(digits);
  }
  if (length === null || length > maxBodyBytes) return null;
  return Math.max(0, length - (chunk.length - end - HEAD_END.length));
}

function noSkipping(): null {
  return null;
}

function isLimit(error: unknown): error is FetchFailure {
  return error instanceof HeadTooLarge || (error instanceof FetchFailure && error.kind === "BodyTooLarge");
}
