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

/**
 * How much sooner than a server's `Keep-Alive: timeout=N` says a kept
 * connection stops waiting: 2 s, undici's `keepAliveTimeoutThreshold`. The
 * server's clock starts when it has sent the response, ours only once we have
 * read it, and the next request still has to reach the server before its
 * clock runs out.
 */
export const KEEP_ALIVE_MARGIN_MS = 2_000;

/** One connection waiting: its socket, and what to undo when it is taken. */
interface IdleConnection {
  readonly socket: Socket;
  /** The socket's own inactivity timeout (`idleTimeoutMs`), put back when it is taken. */
  readonly timeoutMs: number;
  /** How long it may wait: `keepIdleMs`, or less by the server's hint. */
  readonly waitMs: number;
  /** Its `close` listener, which takes it out of its origin's list. */
  readonly forget: () => void;
  /**
   * `kept`: in its origin's list, not watched yet (kept in this turn of the
   * loop); `watched`: its listeners and wait are on the socket; `gone`: taken,
   * closed or dropped.
   */
  state: "kept" | "watched" | "gone";
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
 * A waiting connection is registered with no selector: listeners of its own
 * watch it. Anything it becomes readable for (bytes nobody asked for, or the
 * server closing it) ends it, as does an error, or its wait running out
 * without a request (the socket's own inactivity timeout, set to the wait
 * while it waits); it is forgotten when it closes. The watch is set one
 * iteration of Node's loop after the connection was kept (two
 * `setImmediate`s, so after a stage's own turn scheduled meanwhile), and only
 * on a connection no request has taken by then: in a busy crawl the response
 * that keeps a connection starts the request that takes it again in the same
 * turn (stage 1) or the next (stage 2), so most kept connections are never
 * watched. Watching each one (four listeners on and off and a timer per page)
 * cost about 4 % of stage 1's CPU per page (docs/benchmarks.md, "Issue 39:
 * per page"). Until it is watched, an end or an error that reaches it is
 * found by {@link IdleConnections.take} (it passes over a connection
 * {@link isSpent}), or by the watch when it is set. The wait is `keepIdleMs`,
 * or less when the server's `Keep-Alive: timeout=N` says it closes sooner:
 * N s less {@link KEEP_ALIVE_MARGIN_MS}, as undici reckons it, and a
 * connection whose hint leaves no wait at all is closed rather than kept. (The selector's readiness listeners stay
 * on the socket meanwhile; the selector ignores a socket not registered.)
 *
 * @remarks The server may still close a connection just as a request is
 * written to it; then that attempt fails before its first byte
 * (`ConnectionReset`) and is tried again like any network error, as stage
 * 3's undici does. Undici lets a server's hint lengthen the wait too (up to
 * its `keepAliveMaxTimeout`, 10 min); here it only shortens it, so that no
 * connection waits longer than `keepIdleMs` for a request that may not come.
 * @see undici's `lib/dispatcher/client-h1.js` (`parseKeepAliveTimeout`, `kKeepAliveTimeoutThreshold`)
 */
export class IdleConnections {
  /**
   * Waiting connections by origin, the one that waited least last. An origin
   * whose list empties is deleted: a crawl across many hosts would otherwise
   * hold an empty list for every host it ever fetched from.
   */
  private readonly idle = new Map<string, IdleConnection[]>();
  private waiting = 0;
  private closed = false;
  /** Connections kept in this turn, to be watched at its end unless taken meanwhile. */
  private unwatched: IdleConnection[] = [];
  /** The connections {@link take} has handed out: what {@link spentSinceTaken} looks at. */
  private readonly taken = new WeakSet<Socket>();

  /** @param keepIdleMs - How long a connection may wait for its next request before it is closed. */
  constructor(private readonly keepIdleMs = KEEP_IDLE_MS) {}

  /** How many connections are waiting. */
  get size(): number {
    return this.waiting;
  }

  /** How many origins have a connection waiting: an origin whose last one is taken or closes is forgotten. */
  get origins(): number {
    return this.idle.size;
  }

  /**
   * Keeps `socket`, connected to `origin` and done with its last response, for
   * the next request there. Once {@link close}d, or when the server's hint
   * leaves no time to wait, closes it instead.
   *
   * @param keepAlive - That response's `Keep-Alive` header, if it sent one: its `timeout=N` can shorten the wait.
   */
  keep(origin: string, socket: Socket, keepAlive?: string): void {
    const hintMs = keepAliveTimeoutMs(keepAlive);
    const waitMs = hintMs === null ? this.keepIdleMs : Math.min(this.keepIdleMs, hintMs - KEEP_ALIVE_MARGIN_MS);
    if (this.closed || waitMs <= 0 || isSpent(socket)) {
      socket.destroy();
      return;
    }
    let list = this.idle.get(origin);
    if (list === undefined) {
      list = [];
      this.idle.set(origin, list);
    }
    const connections = this;
    const entry: IdleConnection = {
      socket,
      timeoutMs: socket.timeout ?? 0,
      waitMs,
      forget() { connections.remove(origin, entry); },
      state: "kept",
    };
    list.push(entry);
    this.waiting += 1;
    if (this.unwatched.push(entry) === 1) setImmediate(watchSoon, this);
  }

  /**
   * Watches the connections kept since the last call and still waiting:
   * their listeners, and their wait as the socket's timeout. One found
   * {@link isSpent} meanwhile (its end or an error came while nothing
   * watched it) is forgotten and closed.
   */
  watch(): void {
    const kept = this.unwatched;
    this.unwatched = [];
    for (const entry of kept) {
      if (entry.state !== "kept") continue;
      const { socket } = entry;
      if (isSpent(socket)) {
        entry.forget();
        socket.destroy();
        continue;
      }
      entry.state = "watched";
      socket.on("readable", endWaiting);
      socket.on("end", endWaiting);
      socket.on("timeout", endWaiting);
      socket.on("close", entry.forget);
      socket.setTimeout(entry.waitMs);
    }
  }

  /**
   * A connection to `origin` to send the next request on, or null if none is
   * waiting: the one that waited least. A waiting one found {@link isSpent}
   * (closed, failed, or holding its end of stream) is closed and passed over.
   *
   * @remarks Its watch ends a waiting connection when Node reads the
   * server's FIN, but the socket is only destroyed then: it leaves its
   * origin's list at its `close` event, a phase of Node's loop later, and a
   * request in between would still be handed it. Undici checks likewise
   * (`socket.destroyed`, `socket[kReset]`) before it writes on a kept socket.
   */
  take(origin: string): Socket | null {
    for (let entry = this.idle.get(origin)?.at(-1); entry !== undefined; entry = this.idle.get(origin)?.at(-1)) {
      const watched = entry.state === "watched";
      this.remove(origin, entry);
      const { socket } = entry;
      if (watched) {
        socket.off("readable", endWaiting);
        socket.off("end", endWaiting);
        socket.off("timeout", endWaiting);
        socket.off("close", entry.forget);
      }
      if (isSpent(socket)) {
        socket.destroy();
        continue;
      }
      if (watched) socket.setTimeout(entry.timeoutMs);
      this.taken.add(socket);
      return socket;
    }
    return null;
  }

  /**
   * Whether `socket`, a connection {@link take} handed out, has turned out
   * {@link isSpent} since; if so, destroys it, and the caller sends its
   * request on another. False for a socket not taken here (a new connection:
   * its failure is its attempt's to report).
   *
   * @remarks For a stage that takes a connection in one turn and writes on it
   * in a later one (stage 1: `fetch()`, then `connected`): a FIN that came with
   * the response that kept the connection is read by Node only in between
   * (see {@link isSpent}), so `take()` could not see it.
   */
  spentSinceTaken(socket: Socket): boolean {
    if (!this.taken.has(socket) || !isSpent(socket)) return false;
    socket.destroy();
    return true;
  }

  /** Closes every waiting connection; later {@link keep}s close theirs at once. */
  close(): void {
    this.closed = true;
    for (const list of this.idle.values()) {
      for (const entry of list) {
        if (entry.state === "watched") entry.socket.off("close", entry.forget);
        entry.state = "gone";
        entry.socket.destroy();
      }
    }
    this.idle.clear();
    this.waiting = 0;
  }

  /** Takes `entry` out of its origin's list, and forgets the origin if that was its last. */
  private remove(origin: string, entry: IdleConnection): void {
    const list = this.idle.get(origin);
    const index = list?.lastIndexOf(entry) ?? -1;
    if (list === undefined || index === -1) return;
    entry.state = "gone";
    list.splice(index, 1);
    this.waiting -= 1;
    if (list.length === 0) this.idle.delete(origin);
  }
}

/**
 * Whether `socket` can carry no further request: it is closed or failed, or
 * has bytes nobody asked for, or the server's end of stream (its FIN) has
 * arrived, read or not. What {@link IdleConnections.keep} refuses and
 * {@link IdleConnections.take} passes over, and what a stage checks once
 * more on a kept connection just before it writes its request there
 * ({@link IdleConnections.spentSinceTaken}).
 *
 * @remarks Node knows of a FIN only once it has read it from the kernel, in
 * the poll phase of its loop: a connection kept and taken again within one
 * turn (the next request started by the response that kept it) may hold a
 * FIN that arrived with that response but is still unread. The check just
 * before the write, a turn later, sees it.
 */
export function isSpent(socket: Socket): boolean {
  return socket.destroyed || socket.errored !== null || socket.readableLength > 0 || endReceived(socket);
}

/**
 * The time a server's `Keep-Alive` header gives a connection, in ms: its
 * `timeout=N` (seconds), found as undici finds it, or null without one.
 */
function keepAliveTimeoutMs(keepAlive: string | undefined): number | null {
  const seconds = keepAlive === undefined ? undefined : /timeout=(\d+)/.exec(keepAlive)?.[1];
  return seconds === undefined ? null : Number.parseInt(seconds, 10) * 1000;
}

/** The check phase after connections were kept: watch them in the next one, after the stage's own turn. */
function watchSoon(connections: IdleConnections): void {
  setImmediate(watchKept, connections);
}

/** A loop iteration after connections were kept: {@link IdleConnections.watch} those still waiting. */
function watchKept(connections: IdleConnections): void {
  connections.watch();
}

/** A waiting connection has something to read (bytes nobody asked for, or its end), or waited too long: it is done. */
function endWaiting(this: Socket): void {
  this.destroy();
}
