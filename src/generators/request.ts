/**
 * `request`: one HTTP GET over a fresh connection, as a coroutine.
 *
 * @module
 */
import { formatGetRequest, ResponseParser } from "../shared/http.js";
import type { HttpResponse } from "../shared/http.js";
import type { Coroutine } from "./future.js";
import { connect, read, sendAll } from "./sockets.js";

/**
 * Fetches `url` once: connects, sends the GET request every stage sends,
 * and feeds each chunk `read` returns to the shared HTTP parser until the
 * response is complete. The socket is closed in `finally`, whether the
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
export function* request(url: URL, options: { userAgent: string; maxBodyBytes: number }): Coroutine<HttpResponse> {
  const socket = yield* connect(url);
  try {
    yield* sendAll(socket, formatGetRequest(url, options.userAgent));
    const parser = new ResponseParser({ maxBodyBytes: options.maxBodyBytes });
    while (!parser.done) {
      const chunk = yield* read(socket);
      if (chunk.length > 0) parser.feed(chunk);
      else parser.end(); // The server closed: a close-delimited body ends, anything else was cut short.
    }
    return parser.response();
  } finally {
    socket.destroy(); // `Connection: close`: one request per connection, as in stage 1.
  }
}
