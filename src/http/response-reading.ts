/**
 * One attempt's response as a raw-socket stage reads it (stage 2's
 * `request()`): the parser it feeds, the bytes counted, the crawl channel's
 * `connect`, `send`, `first-byte` and `read` messages, and what becomes of
 * the connection afterwards.
 *
 * @module
 */
import type { Socket } from "node:net";
import { fileno } from "../kernel/socket.js";
import { crawlChannel } from "../observe/channels.js";
import type { IdleConnections } from "./idle-connections.js";
import { ResponseParser, type HttpResponse, type ResponseParserOptions } from "./parser.js";

/**
 * The bookkeeping of one request on a socket the stage reads itself: the
 * stage waits for the socket and hands each chunk to {@link ResponseReading.feed};
 * this counts the bytes, publishes them, and feeds the shared HTTP parser
 * until {@link ResponseReading.done}.
 *
 * @remarks Kept out of the stage folder so that `request()` shows only how
 * stage 2 waits: connect, send, read until done. Stage 1's Fetcher does the
 * same steps in its callbacks.
 * @see src/generators/sockets.ts (`request`)
 */
export class ResponseReading {
  /** Bytes received so far: after the first one, a broken connection has cut the response short (`cutShort`). */
  received = 0;
  private readonly parser: ResponseParser;

  /**
   * @param url - The URL requested.
   * @param options - What the parser is told: the body limit, and which bodies to leave unread (stage 2 passes `parserOptions(options)`, src/crawl/page.ts).
   * @param crawl - The id of the crawl it fetches for, which its messages carry (0: none).
   */
  constructor(private readonly url: URL, options: ResponseParserOptions, private readonly crawl = 0) {
    this.parser = new ResponseParser(options);
  }

  /** Whether the response is complete. */
  get done(): boolean { return this.parser.done; }

  /** The socket is connected (or kept from an earlier response): publishes `connect`. */
  connected(socket: Socket): void {
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "connect", crawl: this.crawl, url: this.url.href, fd: fileno(socket) });
  }

  /** The request is sent: publishes `send`. */
  sent(): void {
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "send", crawl: this.crawl, url: this.url.href });
  }

  /**
   * Takes one chunk read from the socket: counts and publishes it (`read`,
   * and `first-byte` for the first bytes) and feeds it to the parser. An
   * empty chunk means the server closed: a close-delimited body ends, any
   * other response was cut short.
   *
   * @throws FetchFailure `BadResponse`, `BodyTooLarge` or `ConnectionReset` from the parser.
   */
  feed(chunk: Uint8Array): void {
    if (crawlChannel.hasSubscribers && this.received === 0 && chunk.length > 0) crawlChannel.publish({ type: "first-byte", crawl: this.crawl, url: this.url.href });
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "read", crawl: this.crawl, url: this.url.href, bytes: chunk.length });
    this.received += chunk.length;
    if (chunk.length > 0) this.parser.feed(chunk);
    else this.parser.end();
  }

  /**
   * The parsed response.
   *
   * @throws InvalidStateError while it is not complete.
   */
  response(): HttpResponse { return this.parser.response(); }

  /**
   * Ends the request's use of `socket`: kept in `connections` for the next
   * request to the origin if the whole response left it reusable (with the
   * response's `Keep-Alive` header, which may shorten its wait), else closed.
   * Whether the response came, an error was thrown, or the attempt was
   * cancelled, nothing else is left to do with the socket.
   */
  release(socket: Socket, connections: IdleConnections | null | undefined): void {
    if (this.parser.reusable && connections != null) connections.keep(this.url.origin, socket, this.parser.response().headers["keep-alive"]);
    else socket.destroy();
  }
}
