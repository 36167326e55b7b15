/**
 * The stand-in for Python's `selectors` module: a {@link Selector} that says
 * which sockets are ready. The calls the stages make on those sockets
 * (`connect`, `send`, `recv`) are in `socket.ts`, as Python keeps them in its
 * `socket` module.
 *
 * @module
 */
import type { Socket } from "node:net";
import { InvalidStateError } from "./errors.js";
import { isHandshaking } from "./socket.js";

/** Interest in reading: the socket has bytes, an end of stream, or an error to report. */
export const EVENT_READ = 1;
/** Interest in writing: the socket is connected and its send buffer has room, or it failed. */
export const EVENT_WRITE = 2;

/**
 * What a {@link Selector} knows about one registered socket: the events it
 * waits for and the data the registrant attached (a callback in stage 1, a
 * Future in stage 2), like Python's `SelectorKey`.
 *
 * @remarks Python's key also has `fileobj` and `fd`; Node exposes no public
 * file descriptors, so the socket itself is the key.
 */
export interface SelectorKey<T = unknown> {
  /** The registered socket (a `tls.TLSSocket` is a `net.Socket` too). */
  readonly socket: Socket;
  /** The events waited for: a mask of {@link EVENT_READ} and {@link EVENT_WRITE}. */
  events: number;
  /** Whatever the registrant attached; `select` hands it back. */
  data: T;
}

/**
 * Reports which registered sockets are ready to read or write, without ever
 * blocking: the selector of the chapter's event loops.
 *
 * JavaScript cannot block its thread, so there is no `select(2)` to call.
 * libuv's epoll (kqueue, IOCP) is the real selector underneath Node, and it
 * reports readiness as socket events. This class turns those events back into
 * readiness: `connect`/`secureConnect` and `drain` make a socket writable;
 * `readable` and `end` make it readable; `error` makes it both, as a failed
 * connect does in Python. An event only marks the socket as a candidate; at
 * `select()` the socket's state is read again (`readableLength`,
 * `readableEnded`, `errored`, `connecting`, `writableNeedDrain`), so the
 * answer is about now, not about the event.
 *
 * Level-triggered, like `selectors.DefaultSelector`: a socket stays ready,
 * and is reported at every `select()`, while it has unread bytes, has reached
 * its end of stream, or has failed (READ), or is connected with room in its
 * send buffer, or has failed (WRITE). Only sockets that had an event (or were
 * just registered) are looked at, so a `select()` costs the number of active
 * sockets, not of registered ones.
 *
 * Because nothing can block, a loop that found nothing ready must sleep in
 * Node's own event loop: {@link Selector.setWakeup} gives the selector a
 * function to call when a registered socket may have become ready.
 *
 * @remarks Python's `select(timeout)` blocks up to `timeout` and returns a
 * list; ours returns at once and hands each `(key, events)` pair to a
 * callback. Python raises `KeyError` for a socket registered twice or not
 * registered; JavaScript has no `KeyError`, so these throw
 * {@link InvalidStateError}; bad event masks throw `TypeError`/`RangeError`
 * where Python raises `ValueError`. Python's `get_map()` lists the keys;
 * this selector keeps them where a socket's key can be found but not listed
 * (see `registered`), so it has `getKey` and `size` only.
 * @see Chapter, "The Traditional Approach: Callbacks"; Python `selectors.DefaultSelector` (Lib/selectors.py)
 */
export class Selector<T = unknown> {
  /*
   * Neither table below is a long-lived Map or Set of sockets. A crawl
   * registers and unregisters a socket thousands of times a second; a Map
   * that lives as long as the selector ends up in V8's old generation, and
   * each time it replaces its full table, the dead old table still points at
   * every socket it held, which then survive until a full collection. In a
   * crawl of 300,000 pages that was 1.5 KB a page of garbage promoted
   * (docs/benchmarks.md, "Where the bytes went"). A WeakMap does not keep a
   * socket alive, and the candidates are a new Set each `select()`.
   */
  /** The key of each registered socket. */
  private registered = new WeakMap<Socket, SelectorKey<T>>();
  /** How many sockets are registered (a WeakMap cannot say). */
  private registeredCount = 0;
  /** Sockets that had an event since the last `select()`, or were still ready at it. */
  private candidates = new Set<Socket>();
  /** Sockets this selector listens to; the listeners stay for the socket's life. */
  private readonly hooked = new WeakSet<Socket>();
  private readonly socketMayBeReady: (this: Socket) => void;
  private wakeup: (() => void) | null = null;
  /** True once the wakeup function was called since the last `select()`: calls are coalesced. */
  private wakeupCalled = false;
  private closed = false;

  constructor() {
    // One listener for every readiness event of every socket; `this` is the socket.
    const selector = this;
    this.socketMayBeReady = function socketMayBeReady(this: Socket): void {
      selector.markCandidate(this);
    };
  }

  /** How many sockets are registered. */
  get size(): number {
    return this.registeredCount;
  }

  /**
   * Starts watching `socket` for `events`; `select` will hand back `data`.
   *
   * @throws InvalidStateError if the socket is already registered or the selector is closed.
   * @throws TypeError / RangeError if `events` is not a non-empty mask of EVENT_READ | EVENT_WRITE.
   */
  register(socket: Socket, events: number, data: T): SelectorKey<T> {
    this.checkOpen();
    checkEvents(events);
    if (this.registered.has(socket)) {
      throw new InvalidStateError(`${describe(socket)} is already registered; use modify() to change its events`);
    }
    if (!this.hooked.has(socket)) {
      for (const event of READINESS_EVENTS) socket.on(event, this.socketMayBeReady);
      this.hooked.add(socket);
    }
    const key: SelectorKey<T> = { socket, events, data };
    this.registered.set(socket, key);
    this.registeredCount += 1;
    this.markCandidate(socket); // It may be ready already: level-triggered.
    return key;
  }

  /**
   * Stops watching `socket` and returns its key. Unregister a socket before
   * closing it, as Python requires.
   *
   * @throws InvalidStateError if the socket is not registered.
   */
  unregister(socket: Socket): SelectorKey<T> {
    const key = this.registered.get(socket);
    if (key === undefined) throw new InvalidStateError(`${describe(socket)} is not registered`);
    this.registered.delete(socket);
    this.registeredCount -= 1;
    this.candidates.delete(socket);
    return key;
  }

  /**
   * Changes the events and data of a registered socket (Python's `modify`).
   *
   * @throws InvalidStateError if the socket is not registered.
   * @throws TypeError / RangeError for a bad event mask.
   */
  modify(socket: Socket, events: number, data: T): SelectorKey<T> {
    checkEvents(events);
    const key = this.registered.get(socket);
    if (key === undefined) throw new InvalidStateError(`${describe(socket)} is not registered`);
    key.events = events;
    key.data = data;
    this.markCandidate(socket);
    return key;
  }

  /** The key of a registered socket, or undefined (Python's `get_key` raises `KeyError` instead). */
  getKey(socket: Socket): SelectorKey<T> | undefined {
    return this.registered.get(socket);
  }

  /**
   * Sets the function called when a registered socket may have become ready.
   * It is called at most once between two `select()` calls, from inside a
   * socket event or a `register`/`modify`, so it must only schedule the
   * loop's next iteration, never run it.
   */
  setWakeup(wakeup: (() => void) | null): void {
    this.wakeup = wakeup;
  }

  /**
   * Hands every ready `(key, events)` pair to `onReady` and returns how many
   * there were; `events` is the ready subset of the key's events. Never
   * blocks: with nothing ready it returns 0 at once.
   *
   * The pairs are collected first, then handed over. A key unregistered by an
   * earlier callback of the same call is skipped; a key modified by one is
   * handed only the ready events it still waits for.
   */
  select(onReady: (key: SelectorKey<T>, events: number) => void): number {
    this.checkOpen();
    this.wakeupCalled = false;
    const ready: Array<[SelectorKey<T>, number]> = [];
    const candidates = this.candidates;
    this.candidates = new Set(); // A socket ready now stays a candidate; an event adds others.
    for (const socket of candidates) {
      const key = this.registered.get(socket);
      const events = key === undefined ? 0 : readiness(socket) & key.events;
      if (events !== 0) {
        ready.push([key as SelectorKey<T>, events]);
        this.candidates.add(socket);
      } else if (key !== undefined && key.events & EVENT_READ) {
        socket.read(0); // Node emits 'end' only once a reader asks for more: ask, so a pending end becomes an event.
      }
    }
    for (const [key, events] of ready) {
      const stillWanted = key.events & events;
      if (this.registered.get(key.socket) === key && stillWanted !== 0) onReady(key, stillWanted);
    }
    return ready.length;
  }

  /** Unregisters every socket; the selector cannot be used again. Closing the sockets is their owner's job. */
  close(): void {
    this.registered = new WeakMap();
    this.registeredCount = 0;
    this.candidates.clear();
    this.wakeup = null;
    this.closed = true;
  }

  private markCandidate(socket: Socket): void {
    if (!this.registered.has(socket)) return;
    this.candidates.add(socket);
    if (!this.wakeupCalled && this.wakeup !== null) {
      this.wakeupCalled = true;
      this.wakeup();
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new InvalidStateError("Selector is closed");
  }
}

/** The socket events after which readiness may have changed. */
const READINESS_EVENTS = ["connect", "secureConnect", "drain", "readable", "end", "error", "close"] as const;

/** The events `socket` is ready for right now. */
function readiness(socket: Socket): number {
  if (socket.errored !== null || (socket.destroyed && !socket.readableEnded)) return EVENT_READ | EVENT_WRITE;
  let events = 0;
  if (socket.readableLength > 0 || socket.readableEnded) events |= EVENT_READ;
  if (!socket.connecting && !isHandshaking(socket) && !socket.writableNeedDrain) events |= EVENT_WRITE;
  return events;
}

function checkEvents(events: number): void {
  if (typeof events !== "number" || !Number.isInteger(events)) {
    throw new TypeError(`Expected events to be an integer mask of EVENT_READ | EVENT_WRITE, got ${String(events)}`);
  }
  if (events <= 0 || (events & ~(EVENT_READ | EVENT_WRITE)) !== 0) {
    throw new RangeError(`Invalid events: ${events}; expected EVENT_READ, EVENT_WRITE or both`);
  }
}

function describe(socket: Socket): string {
  const peer = socket.remoteAddress === undefined ? "unconnected" : `${socket.remoteAddress}:${socket.remotePort}`;
  return `Socket (${peer})`;
}
