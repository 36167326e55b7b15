/**
 * The connections stages 1 and 2 keep open between two requests to the same
 * origin: HTTP keep-alive for the raw-socket stages.
 *
 * @module
 */
import type { Socket } from "node:net";
import { endReceived } from "../kernel/socket.js";

/**
 * How long a connection may wait here for its next request: after that it is
 * closed rather than reused, since the server may be closing it at that very
 * moment (Node's servers wait 5 s, Apache 5 s, nginx 75 s). 4 s, as undici's
 * default `keepAliveTimeout`, which stage 3 uses.
 */
export const KEEP_IDLE_MS = 4_000;

/** One connection waiting, and since when (`performance.now()`). */
interface IdleConnection {
  readonly socket: Socket;
  readonly since: number;
}

/**
 * The connections of one crawl that are open and waiting for their next
 * request, by origin: a response that leaves its connection reusable
 * (`ResponseParser.reusable`) gives the socket back with {@link keep}, and the
 * next fetch from the same origin {@link take}s it instead of connecting.
 *
 * The chapter's fetchers open a connection per URL and send `Connection:
 * close`. On a real crawl that costs a TCP handshake per page, to the server
 * as much as to us, and memory: Node keeps the JavaScript side of a closed
 * socket until a full garbage collection, so a crawl of 300,000 pages that
 * closes 300,000 sockets peaks far higher than one that reuses a hundred
 * (docs/benchmarks.md, "Memory per page"). Stage 3's undici keeps its
 * connections the same way.
 *
 * A waiting connection is not registered with any selector. Anything it
 * becomes readable for (bytes nobody asked for, or the server closing it) ends
 * it, as does an error; it is forgotten when it closes. A connection that
 * waited longer than {@link KEEP_IDLE_MS} is closed instead of reused.
 *
 * @remarks The server may still close a connection just as a request is
 * written to it; then that attempt fails before its first byte
 * (`ConnectionReset`) and is tried again like any network error, as stage
 * 3's undici does.
 */
export class IdleConnections {
  /** Waiting connections by origin, the one that waited least last. */
  private readonly idle = new Map<string, IdleConnection[]>();
  private closed = false;

  /** How many connections are waiting. */
  get size(): number {
    let size = 0;
    for (const waiting of this.idle.values()) size += waiting.length;
    return size;
  }

  /**
   * Keeps `socket`, connected to `origin` and done with its last response, for
   * the next request there. Once {@link close}d, closes it instead.
   */
  keep(origin: string, socket: Socket): void {
    if (this.closed || socket.destroyed || socket.errored !== null || socket.readableLength > 0 || endReceived(socket)) {
      socket.destroy();
      return;
    }
    let waiting = this.idle.get(origin);
    if (waiting === undefined) {
      waiting = [];
      this.idle.set(origin, waiting);
    }
    waiting.push({ socket, since: performance.now() });
    socket.on("readable", endWaiting);
    socket.on("end", endWaiting);
    socket.on("close", this.forget);
  }

  /**
   * A connection to `origin` to send the next request on, or null if none is
   * waiting: the one that waited least. Those that waited too long are closed.
   */
  take(origin: string): Socket | null {
    const waiting = this.idle.get(origin);
    if (waiting === undefined) return null;
    const now = performance.now();
    for (let entry = waiting.pop(); entry !== undefined; entry = waiting.pop()) {
      entry.socket.off("readable", endWaiting);
      entry.socket.off("end", endWaiting);
      entry.socket.off("close", this.forget);
      if (now - entry.since <= KEEP_IDLE_MS && !endReceived(entry.socket) && !entry.socket.destroyed) return entry.socket;
      entry.socket.destroy();
    }
    return null;
  }

  /** Closes every waiting connection; later {@link keep}s close theirs at once. */
  close(): void {
    this.closed = true;
    for (const waiting of this.idle.values()) {
      for (const { socket } of waiting) {
        socket.off("close", this.forget);
        socket.destroy();
      }
    }
    this.idle.clear();
  }

  /** A waiting connection closed: it is no longer there to take. */
  private readonly forget = (): void => {
    for (const waiting of this.idle.values()) {
      for (let i = waiting.length - 1; i >= 0; i -= 1) {
        if (waiting[i].socket.destroyed) waiting.splice(i, 1);
      }
    }
  };
}

/** A waiting connection has something to read: bytes nobody asked for, or its end. Either way it is done. */
function endWaiting(this: Socket): void {
  this.destroy();
}
