/**
 * HTTP/1.x as bytes: an incremental parser for the response the raw-socket
 * stages read back.
 *
 * @module
 */
import { Buffer, constants as bufferConstants } from "node:buffer";
import { FetchFailure, InvalidStateError } from "../kernel/errors.js";
import {
  checkHeaderLine,
  checkHeaderValue,
  checkTrailerLine,
  chunkSizeOf,
  contentLengthOf,
  headBytesAfter,
  lineText,
  statusOf,
} from "./llhttp-rules.js";

export { MAX_HEADER_BYTES } from "./llhttp-rules.js";

/**
 * A response as the crawler needs it: status, headers and the whole body.
 *
 * Header names are lowercased. A header sent more than once is joined with
 * `", "` (`cookie` with `"; "`, `set-cookie` with `"\n"`: see
 * {@link headerSeparator}), except the fields node:http keeps only the
 * first of ({@link FIRST_ONLY_HEADERS}), as stage 3 joins the headers undici
 * hands it, so every stage sees the same object. `body` holds the bytes after
 * de-chunking, still content-encoded: gzip is undone later, by `decodeContent`.
 */
export interface HttpResponse {
  /** The status code of the final (non-1xx) response. */
  status: number;
  /** Lowercased names; repeated fields joined as node:http joins them, but `set-cookie`, one cookie a line ({@link headerSeparator}). */
  headers: Record<string, string>;
  /** The body bytes, de-chunked but still content-encoded. */
  body: Uint8Array;
  /**
   * True when the body was left unread: the response was given up after its
   * head, as the reader asked (the crawl's `skipNonHtml`), and `body` is
   * empty. Absent when the body was read.
   */
  bodySkipped?: boolean;
}

/**
 * Whether to leave a response's body unread, asked once its final head has
 * come: the status and the headers (as {@link HttpResponse} has them).
 */
export type SkipBody = (status: number, headers: Readonly<Record<string, string>>) => boolean;

/** What a {@link ResponseParser} is told. */
export interface ResponseParserOptions {
  /** The longest body accepted, before content decoding. */
  maxBodyBytes: number;
  /** False: only count the body (the response's `body` is then empty), for a reader that follows the framing alone. Default true. */
  keepBody?: boolean;
  /**
   * Asked after the final head of a response that may have a body (not a
   * 204 or 304): when it says yes, the response is complete there, with an
   * empty body and `bodySkipped: true`, and the bytes after the head are
   * ignored (the reader closes the connection); `maxBodyBytes` does not apply
   * to a body never read, even one its `Content-Length` announces longer.
   * Default: every body is read.
   */
  skipBody?: SkipBody | null;
}

/**
 * Fields node:http keeps only the first of when a response repeats them
 * (`IncomingMessage._addHeaderLine`, Node 20). Every other repeated field is
 * joined.
 */
export const FIRST_ONLY_HEADERS: ReadonlySet<string> = new Set([
  "age",
  "authorization",
  "content-length",
  "content-type",
  "etag",
  "expires",
  "from",
  "host",
  "if-modified-since",
  "if-unmodified-since",
  "last-modified",
  "location",
  "max-forwards",
  "proxy-authorization",
  "referer",
  "retry-after",
  "server",
  "user-agent",
]);

/**
 * What joins the values of a field a response sends more than once: `"; "`
 * for `cookie`, a line break for `set-cookie`, else `", "`. A `Set-Cookie`
 * value holds commas of its own (`Expires=Wed, 21 Oct 2026 07:28:00 GMT`),
 * so joined with commas its cookies could not be told apart again; a field
 * value never holds a line break, so `headers["set-cookie"].split("\n")`
 * gives back each one (node:http keeps them in an array instead).
 */
export function headerSeparator(name: string): string {
  return name === "set-cookie" ? "\n" : name === "cookie" ? "; " : ", ";
}

/** What the parser expects next. */
type ParserState =
  | "status-line" // the first line of a response (or of the next one, after a 1xx)
  | "headers" // header lines, until an empty line
  | "body" // the rest of a Content-Length body
  | "chunk-size" // the size line of the next chunk
  | "chunk-data" // the rest of the current chunk
  | "chunk-end" // the CRLF after a chunk's data
  | "trailers" // trailer lines after the last chunk, until an empty line
  | "until-close" // a close-delimited body: everything until end()
  | "done"
  | "failed";

const LF = 0x0a;

/**
 * Parses one HTTP/1.x response from bytes fed in as they arrive, as stages 1
 * and 2 read them from a socket: `feed(chunk)` after each read, `end()` when
 * the server closes, `done` once the response is complete.
 *
 * The parser is a small state machine over lines and body bytes. Lines (the
 * status line, headers, chunk sizes, trailers) are cut at each LF without
 * re-scanning earlier bytes; body bytes are kept as the chunks they came in
 * and joined once, when the response is complete. The body ends by
 * `Transfer-Encoding: chunked`, else by `Content-Length`, else when the server
 * closes the connection. 1xx interim responses are skipped (but a `101
 * Switching Protocols`, which no request of ours asks for, is refused); 204,
 * 304 and 1xx have no body. A reader that does not want some bodies (the
 * crawl's `skipNonHtml`) says which with `skipBody`: such a response is
 * complete at the end of its head.
 *
 * The rules that exist only so that stages 1 and 2 refuse exactly the
 * responses stage 3 refuses live apart, in `llhttp-rules.ts`: the three stages
 * must give the same verdict on the same bytes, and stage 3's parser, llhttp
 * (inside undici), is strict wherever the RFC leaves a choice (CRLF line ends
 * only, header names that are tokens, one `Content-Length` of digits and never
 * beside `Transfer-Encoding`, and so on). Each rule is one call where the state
 * machine meets a line, and either returns what the parser needs anyway or
 * throws `BadResponse`, so this class reads as the state machine alone.
 *
 * Every failure is a {@link FetchFailure}: `ConnectionReset` when the peer
 * closed before sending a byte, `BodyTooLarge` as soon as the body is known
 * to exceed `maxBodyBytes` (or the longest Buffer, `buffer.constants.MAX_LENGTH`,
 * whichever is less), `BadResponse` for everything malformed or cut short. After
 * a failure, `feed()` and `end()` throw the same failure again.
 *
 * @remarks The chapter's fetcher just reads until the server closes and splits
 * on `\r\n\r\n`. Where we still differ from llhttp, on purpose, is listed in
 * `llhttp-rules.ts`: folded header lines (obs-fold, a line starting with a
 * space or tab), for one, are unfolded into the previous value here.
 *
 * The parser keeps references to the fed chunks until the response is
 * complete, so a caller must not reuse a fed buffer before then (sockets hand
 * out a fresh buffer per read).
 * @see Chapter, "Programming With Callbacks" (`Fetcher.read_response`); RFC 9112 §4–§7
 * @example
 * ```ts
 * const parser = new ResponseParser({ maxBodyBytes: 1024 });
 * parser.feed(Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"));
 * parser.done;              // true
 * parser.response().status; // 200
 * ```
 */
export class ResponseParser {
  private readonly maxBodyBytes: number;
  private readonly keepBody: boolean;
  private readonly skipBody: SkipBody | null;
  private state: ParserState = "status-line";
  private started = false;
  private failure: FetchFailure | null = null;
  private result: HttpResponse | null = null;

  /** The bytes of the line being read, as they arrived. */
  private lineParts: Uint8Array[] = [];
  /** Bytes of the current head or trailer section so far, for {@link MAX_HEADER_BYTES}. */
  private sectionBytes = 0;

  private status = 0;
  /** Whether the status line said HTTP/1.1 (else 1.0). */
  private http11 = false;
  /** Whether the body ended by its length or its last chunk: not by the close, not left unread. */
  private framed = false;
  /** Whether bytes came after the complete response. */
  private trailing = false;
  /** Header lines of the current head as [lowercased name, value], before joining. */
  private headerLines: Array<[string, string]> = [];
  private headers: Record<string, string> = {};

  /** Bytes left in the Content-Length body or in the current chunk. */
  private remaining = 0;
  private bodyParts: Uint8Array[] = [];
  private bodyLength = 0;

  /**
   * @param options - `maxBodyBytes`: the longest body accepted, before content
   * decoding; `keepBody: false` only counts the body (the response's `body` is
   * then empty), for a reader that follows the framing alone; `skipBody`:
   * which bodies not to read at all.
   */
  constructor(options: ResponseParserOptions) {
    // A longer body could not be joined into one Buffer.
    this.maxBodyBytes = Math.min(options.maxBodyBytes, bufferConstants.MAX_LENGTH);
    this.keepBody = options.keepBody ?? true;
    this.skipBody = options.skipBody ?? null;
  }

  /** Whether a complete response has been parsed. */
  get done(): boolean {
    return this.state === "done";
  }

  /**
   * Whether the connection may carry another request now that the response
   * is complete (RFC 9112 §9.3): its body ended by its length or its last
   * chunk (not by the close, and was not left unread), no byte came after
   * it, and the server did not ask to close: HTTP/1.1 without `Connection:
   * close`, or HTTP/1.0 with `Connection: keep-alive`.
   */
  get reusable(): boolean {
    if (this.state !== "done" || !this.framed || this.trailing) return false;
    const options = (this.headers.connection ?? "").toLowerCase().split(",").map((option) => option.trim());
    return this.http11 ? !options.includes("close") : options.includes("keep-alive");
  }

  /**
   * Takes the next bytes from the connection. Bytes after a complete response
   * are ignored.
   *
   * @throws FetchFailure `BadResponse` or `BodyTooLarge`, as soon as the bytes show it.
   */
  feed(chunk: Uint8Array): void {
    if (this.failure !== null) throw this.failure;
    if (chunk.length === 0) return;
    if (this.state === "done") {
      this.trailing = true;
      return;
    }
    this.started = true;
    try {
      this.consume(chunk);
    } catch (error) {
      throw this.fail(error);
    }
  }

  /**
   * The peer closed the connection: a close-delimited body ends here, and any
   * other unfinished response was cut short.
   *
   * @throws FetchFailure `ConnectionReset` if no byte ever arrived, `BadResponse`
   * if the response is incomplete, `BodyTooLarge` if an earlier feed found it too large.
   */
  end(): void {
    if (this.failure !== null) throw this.failure;
    if (this.state === "done") return;
    if (!this.started) {
      throw this.fail(new FetchFailure("ConnectionReset", "The connection closed before any response byte"));
    }
    if (this.state === "until-close") {
      this.finish();
      return;
    }
    const where = this.state === "status-line" || this.state === "headers" ? "head" : "body";
    throw this.fail(new FetchFailure("BadResponse", `The response was cut short in its ${where}`));
  }

  /**
   * The parsed response.
   *
   * @throws InvalidStateError while the response is not complete (`done` is false).
   */
  response(): HttpResponse {
    if (this.result === null) throw new InvalidStateError("The response is not complete yet");
    return this.result;
  }

  /** Runs the state machine over one chunk, until it is used up or the response is done. */
  private consume(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length && this.state !== "done") {
      switch (this.state) {
        case "body":
        case "chunk-data": {
          const end = Math.min(chunk.length, offset + this.remaining);
          if (this.keepBody) this.bodyParts.push(chunk.subarray(offset, end));
          this.remaining -= end - offset;
          offset = end;
          if (this.remaining === 0) {
            if (this.state === "body") this.finish();
            else this.state = "chunk-end";
          }
          break;
        }
        case "until-close":
          this.addCloseDelimited(chunk.subarray(offset));
          offset = chunk.length;
          break;
        default:
          offset = this.readLine(chunk, offset);
      }
    }
    if (offset < chunk.length) this.trailing = true;
  }

  /**
   * Adds bytes to the line being read; when an LF completes it, handles the
   * line. Returns the offset after the bytes used.
   */
  private readLine(chunk: Uint8Array, offset: number): number {
    const lf = chunk.indexOf(LF, offset);
    const part = chunk.subarray(offset, lf === -1 ? chunk.length : lf);
    this.sectionBytes = headBytesAfter(this.sectionBytes, part.length, lf !== -1);
    if (lf === -1) {
      this.lineParts.push(part);
      return chunk.length;
    }
    const bytes = this.lineParts.length === 0 ? part : Buffer.concat([...this.lineParts, part]);
    this.lineParts = [];
    const line = lineText(bytes, this.state === "status-line"); // null: an empty line before a response
    if (line !== null) this.handleLine(line);
    return lf + 1;
  }

  /** Acts on one complete line, without its CRLF, according to the state. */
  private handleLine(line: string): void {
    switch (this.state) {
      case "status-line":
        this.readStatusLine(line);
        break;
      case "headers":
        if (line === "") this.endHead();
        else this.readHeaderLine(line);
        break;
      case "chunk-size":
        this.readChunkSize(line);
        break;
      case "chunk-end":
        if (line !== "") throw new FetchFailure("BadResponse", "A chunk is not followed by CRLF");
        this.state = "chunk-size";
        this.sectionBytes = 0; // the next size line, or the trailers, start a new section
        break;
      case "trailers":
        // Trailer fields are dropped (after llhttp's checks).
        if (line === "") this.finish();
        else checkTrailerLine(line);
        break;
      default:
        throw new Error(`unreachable: a line in state ${this.state}`);
    }
  }

  private readStatusLine(line: string): void {
    this.status = statusOf(line);
    this.http11 = line.startsWith("HTTP/1.1");
    this.headerLines = [];
    this.state = "headers";
  }

  private readHeaderLine(line: string): void {
    if (isFoldedLine(line)) {
      // obs-fold: the line continues the previous header's value.
      const previous = this.headerLines.at(-1);
      if (previous === undefined) throw new FetchFailure("BadResponse", "A folded line has no header to continue");
      const more = trimSpaces(line);
      checkHeaderValue(more);
      if (more !== "") previous[1] = previous[1] === "" ? more : `${previous[1]} ${more}`;
      return;
    }
    checkHeaderLine(line);
    const colon = line.indexOf(":");
    this.headerLines.push([line.slice(0, colon).toLowerCase(), trimSpaces(line.slice(colon + 1))]);
  }

  /** The empty line after the headers: decide how the body is framed. */
  private endHead(): void {
    this.sectionBytes = 0;
    if (this.status === 101) {
      // RFC 9110 §15.2.2: a server switches only to a protocol the request's Upgrade named, and ours names none.
      throw new FetchFailure("BadResponse", "101 Switching Protocols, though the request asked for no upgrade");
    }
    if (this.status < 200) {
      // An interim response (100 Continue, 103 Early Hints): the real one follows.
      this.state = "status-line";
      return;
    }
    this.headers = joinHeaders(this.headerLines);
    const transferEncoding = this.headers["transfer-encoding"];
    const contentLength = contentLengthOf(this.headerLines, transferEncoding);
    if (this.status === 204 || this.status === 304) {
      this.finish();
      return;
    }
    if (this.skipBody?.(this.status, this.headers) === true) {
      this.finish(true); // Before the body limits: a body never read is never too large.
    } else if (transferEncoding !== undefined) {
      // Chunked only when it is the final coding; otherwise the body runs until close (RFC 9112 §6.3).
      const codings = transferEncoding.toLowerCase().split(",");
      this.state = codings.at(-1)?.trim() === "chunked" ? "chunk-size" : "until-close";
    } else if (contentLength !== null) {
      if (contentLength > this.maxBodyBytes) throw tooLarge(this.maxBodyBytes);
      this.remaining = contentLength;
      if (contentLength === 0) this.finish();
      else this.state = "body";
    } else {
      this.state = "until-close";
    }
  }

  private readChunkSize(line: string): void {
    const size = chunkSizeOf(line);
    if (size === 0) {
      this.state = "trailers"; // the last chunk
      return;
    }
    if (this.bodyLength + size > this.maxBodyBytes) throw tooLarge(this.maxBodyBytes);
    this.remaining = size;
    this.bodyLength += size;
    this.state = "chunk-data";
  }

  private addCloseDelimited(bytes: Uint8Array): void {
    this.bodyLength += bytes.length;
    if (this.bodyLength > this.maxBodyBytes) throw tooLarge(this.maxBodyBytes);
    if (this.keepBody) this.bodyParts.push(bytes);
  }

  /** The response is complete; `skipped`: its body was left unread. */
  private finish(skipped = false): void {
    this.framed = !skipped && this.state !== "until-close";
    const body = Buffer.concat(this.bodyParts);
    this.result = skipped ? { status: this.status, headers: this.headers, body, bodySkipped: true } : { status: this.status, headers: this.headers, body };
    this.bodyParts = [];
    this.state = "done";
  }

  /** Records a failure (any unexpected error becomes BadResponse) and returns it to throw. */
  private fail(error: unknown): FetchFailure {
    this.failure =
      error instanceof FetchFailure ? error : new FetchFailure("BadResponse", "The response could not be parsed", { cause: error });
    this.state = "failed";
    this.bodyParts = [];
    this.lineParts = [];
    return this.failure;
  }
}

/**
 * Parses a whole response held in memory: feed every byte, then end.
 *
 * @throws FetchFailure as {@link ResponseParser} does.
 */
export function parseResponse(bytes: Uint8Array, options: ResponseParserOptions): HttpResponse {
  const parser = new ResponseParser(options);
  parser.feed(bytes);
  parser.end();
  return parser.response();
}

function isFoldedLine(line: string): boolean {
  return line.startsWith(" ") || line.startsWith("\t");
}

/** Strips spaces and tabs (HTTP's OWS) from both ends; `String#trim` would also take NBSP and more. */
function trimSpaces(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === " " || text[start] === "\t")) start++;
  while (end > start && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
  return text.slice(start, end);
}

/** Builds the header object from the lines, with node:http's rules for repeated fields. */
function joinHeaders(lines: ReadonlyArray<[string, string]>): Record<string, string> {
  // A Map, so that names like `constructor` or `__proto__` are just names.
  const headers = new Map<string, string>();
  for (const [name, value] of lines) {
    const previous = headers.get(name);
    if (previous === undefined) headers.set(name, value);
    else if (!FIRST_ONLY_HEADERS.has(name)) headers.set(name, `${previous}${headerSeparator(name)}${value}`);
  }
  return Object.fromEntries(headers);
}

function tooLarge(maxBodyBytes: number): FetchFailure {
  return new FetchFailure("BodyTooLarge", `The body is longer than ${maxBodyBytes} bytes (maxBodyBytes, or the longest Buffer)`);
}
