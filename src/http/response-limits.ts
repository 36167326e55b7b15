/**
 * The limits every stage applies to a response, read off raw bytes that
 * another parser reads: how stage 3 applies them beside llhttp.
 *
 * @module
 */
import { FetchFailure } from "../kernel/errors.js";
import { HeadTooLarge } from "./llhttp-rules.js";
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
 * @remarks Bytes after the end of a response, in the chunk that ends it, are
 * not read: the next response can only start after the next request, which
 * undici sends once this response is complete; undici refuses a response
 * that comes unasked.
 */
export class ResponseLimits {
  private parser: ResponseParser | null = null;
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

  /** Reads the next bytes of the connection; returns the limit they break, or null. */
  read(chunk: Uint8Array): FetchFailure | null {
    if (!this.reading) return null;
    if (this.parser === null || this.parser.done) {
      this.parser = new ResponseParser({ maxBodyBytes: this.maxBodyBytes, keepBody: false, skipBody: this.skipBodyOf() });
    }
    try {
      this.parser.feed(chunk);
      return null;
    } catch (error) {
      this.reading = false;
      return isLimit(error) ? error : null;
    }
  }
}

function noSkipping(): null {
  return null;
}

function isLimit(error: unknown): error is FetchFailure {
  return error instanceof HeadTooLarge || (error instanceof FetchFailure && error.kind === "BodyTooLarge");
}
