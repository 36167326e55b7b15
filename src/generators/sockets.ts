/**
 * Socket coroutines: `connect`, `sendAll`, `read` and `readAll`, each waiting
 * on a Future that a selector callback resolves.
 *
 * @module
 */
import type { Socket } from "node:net";
import { EVENT_READ, EVENT_WRITE } from "../kernel/selector.js";
import { connect as startConnect, recv, send } from "../kernel/socket.js";
import { Future, type Coroutine } from "./future.js";
import { getRunningLoop } from "./running-loop.js";

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
 * Opens a connection to the URL's host and port (TLS for `https:`), and
 * returns the socket once it is connected.
 *
 * @throws the connection's error (a Node system error: `ECONNREFUSED`,
 * `ENOTFOUND`, …; the crawler names it with `errorName`). On any error or
 * cancellation the socket is destroyed here, since the caller never got it.
 * @see Chapter, "Building Coroutines With Generators" (`fetch` waiting for `on_connected`)
 */
export function* connect(url: URL): Coroutine<Socket> {
  const socket = startConnect(url);
  let handedOver = false;
  try {
    yield* writable(socket);
    if (socket.errored !== null) throw socket.errored; // Readiness said "failed", not "connected".
    handedOver = true;
    return socket;
  } finally {
    if (!handedOver) socket.destroy();
  }
}

/**
 * Sends every byte of `bytes`, waiting until the socket is writable first
 * (Python's `sock.sendall`, in coroutine form).
 *
 * @throws the socket's error if it failed.
 */
export function* sendAll(socket: Socket, bytes: Uint8Array): Coroutine<void> {
  let sent = 0;
  while (sent < bytes.length) {
    yield* writable(socket);
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
