/**
 * Example 02: a non-blocking socket, waited on "the stupid way": try, fail
 * with "would block", try again.
 *
 * The chapter's next step after the blocking fetch is a non-blocking socket:
 * `connect` returns at once, and every later call either works or fails with
 * `BlockingIOError`. To know when the connection is up, the naive program
 * simply retries `send` in a loop. It works, but it burns the CPU and it can
 * only wait for one socket at a time.
 *
 * In JavaScript the naive loop is even worse, and that is instructive:
 *
 * 1. Spinning without ever returning to Node never succeeds. The kernel does
 *    finish the connection, but Node learns about it from libuv in its own
 *    event loop, and that loop cannot run while our `for` loop holds the
 *    thread. So the socket still says "connecting" after any number of tries.
 * 2. A busy loop that gives Node one turn (`setImmediate`) between tries
 *    works: it polls. Count the polls to see how much work is wasted on
 *    asking "ready yet?".
 *
 * The socket calls are the shared ones (`src/kernel/socket.ts`): `send`
 * and `recv` throw an error with code `EAGAIN` where Python raises
 * `BlockingIOError`.
 *
 * Run it: `npx tsx examples/02-nonblocking-busy-loop.ts [URL]`
 *
 * @see Chapter, "Async" (the busy `while True: try: sock.send(...)` loop, then `selectors`)
 * @module
 */
import type { Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { ResponseParser } from "../src/http/parser.js";
import { formatGetRequest } from "../src/http/request.js";
import { DEFAULT_OPTIONS } from "../src/crawl/options.js";
import { connect, recv, send } from "../src/kernel/socket.js";
import { openRoot } from "./open-root.js";

/** True for the "would block, try again" error of a non-blocking socket call. */
function wouldBlock(error: unknown): boolean {
  return error instanceof Error && "code" in error && error.code === "EAGAIN";
}

/**
 * Sends `request` on a socket that is still connecting, the busy way: try
 * `send`; while it fails with "would block", give Node's loop one turn and
 * try again. Any other error (the connection was refused, say) is thrown.
 *
 * @returns how many tries failed with "would block" before the send went through.
 */
export async function sendByPolling(socket: Socket, request: Uint8Array): Promise<number> {
  let polls = 0;
  for (;;) {
    try {
      send(socket, request);
      return polls;
    } catch (error) {
      if (!wouldBlock(error)) throw error;
      polls += 1;
      await nextTurn(); // Let Node run its loop once, then ask again.
    }
  }
}

/**
 * Reads a whole response the busy way: try `recv`; while it fails with "would
 * block", give Node's loop one turn and try again, for as long as it takes.
 * Feeds each chunk of bytes to `parser.feed`; an empty chunk is the end of
 * the stream (the server closed) and goes to `parser.end()`, not to `feed`,
 * which ignores an empty chunk. Goes on until the parser has the whole
 * response.
 *
 * @returns how many tries found nothing to read.
 */
export async function receiveByPolling(socket: Socket, parser: ResponseParser): Promise<number> {
  let polls = 0;
  while (!parser.done) {
    let chunk: Buffer;
    try {
      chunk = recv(socket, 4096);
    } catch (error) {
      if (!wouldBlock(error)) throw error;
      polls += 1;
      await nextTurn();
      continue;
    }
    if (chunk.length > 0) parser.feed(chunk);
    else parser.end(); // The server closed: a close-delimited body ends here.
  }
  return polls;
}

/** Connects, sends and reads one response by retrying until each call stops failing. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Before the stages: a non-blocking socket, polled in a busy loop");
  const root = await openRoot(rootUrl);
  const url = new URL(root.url);
  const socket = connect(url); // Returns at once: the connection is under way.
  try {
    const request = formatGetRequest(url, DEFAULT_OPTIONS.userAgent);

    // 1. Spin without returning to Node: the connect event can never be handled.
    const spunTries = 10_000;
    for (let i = 0; i < spunTries; i++) {
      try {
        send(socket, request);
        break;
      } catch (error) {
        if (!wouldBlock(error)) throw error;
      }
    }
    console.log(
      `Tried send() ${spunTries} times without giving Node a turn: still connecting? ${socket.connecting ? "yes" : "no"}`,
    );

    // 2. Poll: one try per turn of Node's event loop.
    const pollsToConnect = await sendByPolling(socket, request);
    console.log(`Polling, one try per turn of Node's loop: connected and sent the request after ${polls(pollsToConnect)}.`);

    const parser = new ResponseParser({ maxBodyBytes: DEFAULT_OPTIONS.maxBodyBytes });
    const pollsToRead = await receiveByPolling(socket, parser);
    const response = parser.response();
    console.log(`Then ${polls(pollsToRead)} to read the response: status ${response.status}, ${response.body.length} body bytes.`);
    console.log("Every poll that found nothing was wasted work; a selector would have told us when to look.");
  } finally {
    socket.destroy();
    await root.close();
  }
}

/** `1 poll`, `372 polls`. */
function polls(count: number): string {
  return `${count} ${count === 1 ? "poll" : "polls"}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
