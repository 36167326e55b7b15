/**
 * A simulated TCP connection: two {@link SimulatedSocket}s, one for each
 * end, joined by a {@link Link} that carries bytes with latency and
 * bandwidth on the virtual clock, without a file descriptor.
 *
 * @module
 */
import { Socket } from "node:net";

/**
 * What one end of a connection asks of the link between them: carry bytes
 * to the other end, end the stream, or reset the connection.
 * {@link SimulatedNetwork} makes the links (src/bottle/network.ts).
 */
export interface Link {
  /** Carries `chunk` from `from` to the other end; calls `sent` once the sender's side has taken it (its write completes). */
  send(from: SimulatedSocket, chunk: Buffer, sent: () => void): void;
  /** Carries `from`'s end of stream (a FIN) behind the bytes already sent. */
  end(from: SimulatedSocket): void;
  /** `from` was destroyed: the other end sees the close (a FIN), or a reset if `reset`. */
  close(from: SimulatedSocket, reset: boolean): void;
}

/**
 * A Node system error, as libuv gives them: `code`, `errno` name, `syscall`.
 */
export function systemError(code: string, syscall: string, message: string): Error & { code: string; syscall: string } {
  return Object.assign(new Error(`${syscall} ${code} ${message}`), { code, syscall });
}

/**
 * One end of a simulated connection: a real `net.Socket` (a Duplex stream,
 * and `instanceof Socket` for whoever checks) with no handle underneath.
 * What it writes goes to its {@link Link}; what the link delivers is pushed
 * into its readable side, where Node's stream machinery does the rest
 * (`readable`, `data`, `end`, `readableLength`, back-pressure on the
 * writable side through `writableNeedDrain` and `drain`).
 *
 * It overrides what `net.Socket` would hand to libuv:
 * - `connecting` is true until the network says {@link SimulatedSocket.connected}
 *   (then `connect`, and `secureConnect` for a TLS connection, are emitted),
 *   and a write made before that waits for it, as Node's does;
 * - the idle `setTimeout(ms, callback)` runs on the global `setTimeout`, so
 *   on the bottle's virtual clock (Node's own uses an internal timer list the
 *   clock cannot reach): `timeout` is emitted when no byte was sent or
 *   received for `ms`;
 * - the other end's FIN is read as Node reads one: pushed, then `read(0)`,
 *   so `end` comes at once when nothing waits unread, with no reader too;
 *   and, unless it was made half-open (`allowHalfOpen`), the socket then
 *   ends its own side and closes, so that a pool (node:http's Agent,
 *   undici) sees a kept connection the server closed go away;
 * - `destroy()` tells the link (the other end sees a close), emits `close`
 *   a tick later as a `net.Socket` does; `resetAndDestroy()` makes the other
 *   end see `ECONNRESET` instead;
 * - `ref()`/`unref()`, `setNoDelay()` and `setKeepAlive()` change nothing:
 *   there is no handle, and nothing to keep the process alive.
 *
 * @remarks The readable side takes whatever the link delivers: no receive
 * window, so the sender is paced by the link's bandwidth alone; and a socket
 * paused before it connects takes them too (Node's would not start reading).
 * test/bottle/socket.test.ts checks it against a loopback `net.Socket`.
 */
export class SimulatedSocket extends Socket {
  /** The link to the other end; null until the network joins the two. */
  link: Link | null = null;
  /** Whether this end is a TLS client: `secureConnect` follows `connect`. */
  readonly secure: boolean;
  private idleMs = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private resetting = false;

  constructor(options: { allowHalfOpen: boolean; connecting: boolean; secure?: boolean }) {
    super({ allowHalfOpen: options.allowHalfOpen });
    this.setConnecting(options.connecting);
    this.secure = options.secure ?? false;
  }

  /** The network finished the handshake: the socket says `connect` (and `secureConnect` for TLS). */
  connected(): void {
    if (this.destroyed) return;
    this.setConnecting(false);
    this.touch();
    this.emit("connect");
    this.emit("ready");
    if (this.secure) this.emit("secureConnect");
  }

  /** Bytes arrived from the other end. */
  deliver(chunk: Buffer): void {
    if (this.destroyed) return;
    this.touch();
    this.push(chunk);
  }

  /**
   * The other end's end of stream arrived. As Node's own socket does when
   * libuv reads the end (`onStreamRead`): push it, then read nothing, so
   * that `end` is emitted now when no byte waits unread, even with no
   * reader; and a socket not half-open then ends its side and closes.
   */
  deliverEnd(): void {
    if (this.destroyed) return;
    this.push(null);
    this.read(0);
  }

  /** The connection failed under this end (refused, reset, not found): it is destroyed with `error`. */
  fail(error: Error): void {
    if (this.destroyed) return;
    this.destroy(error);
  }

  override _read(): void {
    // Bytes are pushed as the link delivers them (see deliver).
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.connecting) {
      this.once("connect", function writeOnceConnected(this: SimulatedSocket) {
        this._write(chunk, encoding, callback);
      });
      return;
    }
    const link = this.link;
    if (link === null) {
      callback(systemError("EPIPE", "write", "the socket has no connection"));
      return;
    }
    this.touch();
    link.send(this, typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk, callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer | string; encoding: BufferEncoding }>, callback: (error?: Error | null) => void): void {
    this._write(Buffer.concat(chunks.map(bytesOf)), "binary", callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.connecting) {
      this.once("connect", function endOnceConnected(this: SimulatedSocket) {
        this._final(callback);
      });
      return;
    }
    this.link?.end(this);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.setConnecting(false);
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const link = this.link;
    this.link = null;
    link?.close(this, this.resetting);
    callback(error);
    process.nextTick(emitClose, this, error !== null);
  }

  /** Destroys the socket with a reset: the other end sees `ECONNRESET`, as after a TCP RST. */
  override resetAndDestroy(): this {
    this.resetting = true;
    this.destroy();
    return this;
  }

  /**
   * Emits `timeout` once `ms` pass with no byte sent or received, on the
   * global (virtual) clock; 0 turns it off. `callback` is added as a one-time
   * `timeout` listener, as Node adds it.
   */
  override setTimeout(ms: number, callback?: () => void): this {
    this.idleMs = ms;
    Reflect.set(this, "timeout", ms); // net.Socket keeps it as a plain field; kernel/socket.ts reads it for messages
    if (callback !== undefined) {
      if (ms === 0) this.off("timeout", callback);
      else this.once("timeout", callback);
    }
    this.touch();
    return this;
  }

  override ref(): this {
    return this;
  }

  override unref(): this {
    return this;
  }

  override setNoDelay(): this {
    return this;
  }

  override setKeepAlive(): this {
    return this;
  }

  /** `connecting` is read-only in Node's types; net.Socket itself keeps it as a plain field it sets. */
  private setConnecting(connecting: boolean): void {
    Reflect.set(this, "connecting", connecting);
  }

  /** A byte moved: the idle clock starts again. */
  private touch(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = this.idleMs > 0 && !this.destroyed ? setTimeout(idledOut, this.idleMs, this) : null;
  }

  /** The idle clock ran out. */
  timedOut(): void {
    this.idleTimer = null;
    if (!this.destroyed) this.emit("timeout");
  }
}

function idledOut(socket: SimulatedSocket): void {
  socket.timedOut();
}

function emitClose(socket: SimulatedSocket, hadError: boolean): void {
  socket.emit("close", hadError);
}

/** A buffered write as bytes: net.Socket does not decode strings (`decodeStrings: false`), so the HTTP server writes its heads as strings. */
function bytesOf(entry: { chunk: Buffer | string; encoding: BufferEncoding }): Buffer {
  return typeof entry.chunk === "string" ? Buffer.from(entry.chunk, entry.encoding) : entry.chunk;
}
