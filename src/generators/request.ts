/**
 * `request`: one HTTP GET over a fresh connection, as a coroutine.
 *
 * @module
 */
import { ResponseParser } from "../http/parser.js";
import { formatGetRequest } from "../http/request.js";
import type { HttpResponse } from "../http/parser.js";
import type { Coroutine } from "./future.js";
import { connect, read, sendAll } from "./sockets.js";

/** A step of a request, reported to `onStep` for the crawl's trace. */
export type RequestStep = { type: "connect" } | { type: "send" } | { type: "first-byte" } | { type: "read"; bytes: number };

/**
 * Fetches `url` once: connects, sends the GET request every stage sends,
 * and feeds each chunk `read` returns to the shared HTTP parser until the
 * response is complete (reporting each step to `onStep`, when given, for
 * the crawl's trace). The socket is closed in `finally`, whether the
 * response came, an error was thrown, or the Task was cancelled (a timeout).
 *
 * Read it next to stage 1's Fetcher: the same steps (connect, send, read
 * until done), but as one function, top to bottom, with its state in locals.
 *
 * @throws the connection's error (`ECONNREFUSED`, `ECONNRESET`, …), or a
 * FetchFailure (`BadResponse`, `BodyTooLarge`, `ConnectionReset`) from the parser.
 * @remarks The chapter's final crawler calls aiohttp's `session.get` here;
 * its generator version reads with `read_all` until the server closes. We
 * stop as soon as the parser has the whole response, and keep the body
 * within `maxBodyBytes` while it arrives.
 * @see Chapter, "Factoring Coroutines With yield from" (`Fetcher.fetch` with `read_all`)
 */
export function* request(
  url: URL,
  options: { userAgent: string; maxBodyBytes: number },
  onStep: ((step: RequestStep) => void) | null = null,
): Coroutine<HttpResponse> {
  const socket = yield* connect(url);
  try {
    onStep?.({ type: "connect" });
    yield* sendAll(socket, formatGetRequest(url, options.userAgent));
    onStep?.({ type: "send" });
    const parser = new ResponseParser({ maxBodyBytes: options.maxBodyBytes });
    let received = 0;
    while (!parser.done) {
      const chunk = yield* read(socket);
      if (onStep !== null) {
        if (received === 0 && chunk.length > 0) onStep({ type: "first-byte" });
        onStep({ type: "read", bytes: chunk.length });
      }
      received += chunk.length;
      if (chunk.length > 0) parser.feed(chunk);
      else parser.end(); // The server closed: a close-delimited body ends, anything else was cut short.
    }
    return parser.response();
  } finally {
    socket.destroy(); // `Connection: close`: one request per connection, as in stage 1.
  }
}
