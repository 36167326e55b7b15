/** sockets.ts ↔ Lib/asyncio/selector_events.py (`sock_connect`, `sock_sendall`, `sock_recv`): the socket
 * coroutines, each waiting on a Future that a selector callback resolves, and `request`, one HTTP GET built from them.
 *
 * @module
 */
import type { Socket } from "node:net";
import { parserOptions } from "../crawl/page.js";
import type { RequestOptions } from "../http/crawl-requests.js";
import type { HttpResponse } from "../http/parser.js";
import { ResponseReading } from "../http/response-reading.js";
import { formatGetRequest } from "../http/request.js";
import { EVENT_READ, EVENT_WRITE } from "../kernel/selector.js";
import { CancelledError, cutShort, errorDetail, errorName, type AttemptError } from "../kernel/errors.js";
import { connect as startConnect, recv, send, sendWouldBlock, type ConnectOptions } from "../kernel/socket.js";
import { getRunningLoop } from "./events.js";
import { Future, type Coroutine } from "./futures.js";
import { waitFor } from "./tasks.js";

/**
 * Waits until `socket` can take bytes: connected, with room in its send
 * buffer (or failed, which `send` will then report).
 *
 * The chapter's pattern: make a Future, register a callback that resolves
 * it, `yield*` it. The `unregister` is in `finally`, so a Task cancelled
 * here leaves no registration behind; after a plain `yield` it would be
 * skipped.
 */
function* writable(socket: Socket): Coroutine<void> {
  const loop = getRunningLoop();
  const ready = new Future<void>(loop, "writable");
  function onWritable(): void {
    // Level-triggered: the selector can report the socket again before our Task resumes.
    if (!ready.done()) ready.setResult(undefined);
  }
  loop.selector.register(socket, EVENT_WRITE, onWritable);
  try {
    yield* ready;
  } finally {
    loop.selector.unregister(socket);
  }
}

/**
 * Opens a connection to the URL's host and port (TLS for `https:`, checked
 * with `options.ca` and `options.rejectUnauthorized`), and returns the socket
 * once it is connected. With `options.idleTimeoutMs`, the socket fails with
 * `ETIMEDOUT` whenever no byte moves for that long (kernel/socket.ts).
 *
 * @throws the connection's error (a Node system error: `ECONNREFUSED`,
 * `ENOTFOUND`, …; the crawler names it with `errorName`). On any error or
 * cancellation the socket is destroyed here, since the caller never got it.
 * @see Chapter, "Building Coroutines With Generators" (`fetch` waiting for `on_connected`)
 */
export function* connect(url: URL, options: ConnectOptions = {}): Coroutine<Socket> {
  const socket = startConnect(url, options);
  try {
    yield* writable(socket);
    if (socket.errored !== null) throw socket.errored; // Readiness said "failed", not "connected".
    return socket;
  } catch (error) {
    socket.destroy(); // Failed or cancelled: the caller never gets the socket, so close it here.
    throw error;
  }
}

/**
 * Sends every byte of `bytes`, waiting until the socket is writable first
 * when a send would block (Python's `sock.sendall`, in coroutine form).
 *
 * @remarks As asyncio's `sock_sendall`, it waits only when it must: on a
 * connected socket (a kept one, or one `connect` returned) it sends at once,
 * without a Future or a loop iteration.
 * @throws the socket's error if it failed.
 */
export function* sendAll(socket: Socket, bytes: Uint8Array): Coroutine<void> {
  let sent = 0;
  while (sent < bytes.length) {
    if (sendWouldBlock(socket)) yield* writable(socket);
    sent += send(socket, bytes.subarray(sent));
  }
}

/**
 * Reads one chunk of at most 4096 bytes, waiting until there is one; an empty
 * chunk means the peer closed the connection.
 *
 * @throws the socket's error if it failed (`ECONNRESET`, …).
 * @see Chapter, "Factoring Coroutines With yield from" (`read`)
 */
export function* read(socket: Socket): Coroutine<Uint8Array> {
  const loop = getRunningLoop();
  const chunk = new Future<Uint8Array>(loop, "read");
  function onReadable(): void {
    // Level-triggered: ready again before our Task resumed. asyncio's `_sock_recv` checks too.
    if (chunk.done()) return;
    try {
      chunk.setResult(recv(socket, 4096));
    } catch (error) {
      chunk.setException(error);
    }
  }
  loop.selector.register(socket, EVENT_READ, onReadable);
  try {
    return yield* chunk; // Read one chunk.
  } finally {
    loop.selector.unregister(socket);
  }
}

/**
 * Reads until the peer closes the connection and returns all the bytes:
 * `read` in a loop, delegated to with `yield*`.
 *
 * @see Chapter, "Factoring Coroutines With yield from" (`read_all`)
 */
export function* readAll(socket: Socket): Coroutine<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let chunk = yield* read(socket);
  while (chunk.length > 0) {
    chunks.push(chunk);
    chunk = yield* read(socket);
  }
  return Buffer.concat(chunks);
}

/**
 * Fetches `url` once: connects (or, with `options.connections`, takes a
 * connection kept open to the origin), sends the GET request every stage
 * sends (`options.headers` after the default ones), and hands each chunk
 * `read` returns to a `ResponseReading` (src/http/response-reading.ts:
 * the shared HTTP parser, the bytes counted, the crawl channel's messages)
 * until the response is complete
 * (with `options.skipNonHtml`, a body no link is read from is complete at the
 * end of its head). In `finally`, whether the response came, an error was
 * thrown, or the Task was cancelled (a timeout), the socket is closed, or
 * kept for the next request if the response left it reusable (with the
 * response's `Keep-Alive` header, which may shorten its wait).
 *
 * Read it next to stage 1's Fetcher: the same steps (connect, send, read
 * until done), but as one function, top to bottom, with its state in locals.
 *
 * @param crawl - The id of the crawl it fetches for, which its messages on the crawl channel carry (0: none).
 * @throws the connection's error (`ECONNREFUSED`, `ETIMEDOUT` when idle, …),
 * or a FetchFailure (`BadResponse`, `BodyTooLarge`, `ConnectionReset`) from
 * the parser; a connection that breaks after the first response byte has cut
 * the response short: `BadResponse` (`cutShort`).
 * @remarks The chapter's final crawler calls aiohttp's `session.get` here;
 * its generator version reads with `read_all` until the server closes. We
 * stop as soon as the parser has the whole response, and keep the body
 * within `maxBodyBytes` while it arrives.
 * @see Chapter, "Factoring Coroutines With yield from" (`Fetcher.fetch` with `read_all`)
 */
export function* request(url: URL, options: RequestOptions, crawl = 0): Coroutine<HttpResponse> {
  // A connection kept from an earlier response to this origin, if one waits; else a new one.
  const socket = options.connections?.take(url.origin) ?? (yield* connect(url, options));
  const response = new ResponseReading(url, parserOptions(options), crawl); // The parser, the bytes counted, the messages.
  try {
    response.connected(socket);
    yield* sendAll(socket, formatGetRequest(url, options));
    response.sent();
    while (!response.done) response.feed(yield* read(socket)); // An empty chunk: the server closed.
    return response.response();
  } catch (error) {
    throw cutShort(error, response.received);
  } finally {
    response.release(socket, options.connections); // Kept for the next request to the origin if the response allows, else closed, as in stage 1.
  }
}

/**
 * One attempt of a crawl at `url`: `request()` within `timeoutMs`
 * (`waitFor`), and what came of it as the crawl core takes it, the response
 * or the name of the error (with `errorDetail`'s words for it).
 *
 * @param crawl - The id of the crawl it fetches for, in its messages (0: none).
 * @throws CancelledError when the Task running it is cancelled: that is not the attempt's failure.
 */
export function* attempt(url: string, options: RequestOptions, timeoutMs: number, crawl = 0): Coroutine<[HttpResponse | AttemptError, string | null]> {
  try {
    return [yield* waitFor(request(new URL(url), options, crawl), timeoutMs), null];
  } catch (error) {
    if (error instanceof CancelledError) throw error; // We are cancelled, not the attempt.
    return [errorName(error), errorDetail(error)];
  }
}
