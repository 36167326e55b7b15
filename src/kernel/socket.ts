/**
 * The stand-in for the part of Python's `socket` module the raw-socket stages
 * use: a non-blocking {@link connect}, {@link send} and {@link recv}, with
 * Python's meanings (an empty `recv` is the end of the stream; a call that
 * would block throws `EAGAIN`). The {@link shared!Selector} says when to make them.
 *
 * @module
 */
import net from "node:net";
import type { Socket } from "node:net";
import type tlsModule from "node:tls";

/** node:tls, loaded by the first `https:` connection: a crawl of `http:` sites never pays for it at start-up. */
function tls(): typeof tlsModule {
  return process.getBuiltinModule("node:tls");
}

/** Where {@link Network.connect} is asked to connect: the URL's host and port, and whether TLS is wanted. */
export interface NetworkAddress {
  /** The host name or IP address, without an IPv6 literal's brackets. */
  host: string;
  /** The port: the URL's, else 80 (`http:`) or 443 (`https:`). */
  port: number;
  /** Whether the connection is TLS (`https:`): the socket then says `secureConnect` once its handshake is over. */
  secure: boolean;
  /** The name sent for SNI (a TLS connection to a host name), else null. */
  servername: string | null;
  /**
   * Whether a plain connection stays open for writing after the peer's end
   * of stream, until its owner destroys it (`net.connect`'s `allowHalfOpen`).
   * Absent or false, as `net.connect`'s default, which node:http's Agent and
   * undici use: the socket ends its side and closes once the peer's end is
   * read, so a pool sees a kept connection the server closed go away. A TLS
   * connection ignores it, as `tls.connect` has no such option.
   */
  allowHalfOpen?: boolean;
}

/**
 * A network to connect through in place of the machine's own: the crawl
 * option `network` (an advanced option; null, the default, is the real
 * network). Its `connect` returns a socket at once, still connecting, that
 * behaves as the `net.Socket` (or `tls.TLSSocket`) Node would return: it says
 * `connect` (and `secureConnect` for TLS) when it is up, or fails with a Node
 * system error (`ENOTFOUND` when the name does not resolve, `ECONNREFUSED`,
 * …), and its bytes, end of stream, errors and idle `setTimeout` behave as a
 * TCP connection's. Stages 1 and 2 open their sockets through it
 * ({@link connect}), stage 3's undici client through its connector
 * (http/undici.ts `networkConnector`): the stages do not know which network
 * they are on.
 *
 * @see src/bottle/network.ts, the simulated network the bottle runs crawls on; docs/the-bottle.md
 */
export interface Network {
  /** Opens a connection to `address`: a socket returned at once, still connecting, as `net.connect` returns one. */
  connect(address: NetworkAddress): Socket;
}

/** How {@link connect} sets up a connection. */
export interface ConnectOptions {
  /** The network to connect through; null or absent: the machine's own (`net.connect`, `tls.connect`). */
  network?: Network | null;
  /**
   * Milliseconds a connection may go without a byte moving, while connecting
   * or between two chunks, before it fails with `ETIMEDOUT`; 0 or absent: no limit.
   */
  idleTimeoutMs?: number;
  /** PEM certificates `https:` trusts instead of Node's default CAs (`tls.connect`'s `ca`); null or absent: the defaults. */
  ca?: string | Buffer | null;
  /** False: a TLS connection takes any certificate, unchecked. Default true. */
  rejectUnauthorized?: boolean;
}

/** TLS sockets whose handshake has not finished: not writable yet. */
const handshaking = new WeakSet<Socket>();

/** File numbers handed out so far (see {@link fileno}). */
const fileNumbers = new WeakMap<Socket, number>();
let filesNumbered = 0;

/**
 * A small number for `socket`, the same each time it is asked: Python's
 * `sock.fileno()`. Node exposes no public file descriptors, so we number the
 * sockets in the order they are first asked about; traces name sockets by it.
 */
export function fileno(socket: Socket): number {
  let fd = fileNumbers.get(socket);
  if (fd === undefined) {
    filesNumbered += 1;
    fd = filesNumbered;
    fileNumbers.set(socket, fd);
  }
  return fd;
}

/** Whether `socket` is a TLS socket still in its handshake (not writable yet). */
export function isHandshaking(socket: Socket): boolean {
  return handshaking.has(socket);
}

/**
 * Whether {@link send} would have to wait now: the socket is still
 * connecting (or in its TLS handshake), or its send buffer is full until
 * `drain`. What a selector's `EVENT_WRITE` waits out.
 */
export function sendWouldBlock(socket: Socket): boolean {
  return socket.connecting || handshaking.has(socket) || socket.writableNeedDrain;
}

/**
 * Opens a TCP connection to the URL's host and port (TLS with SNI for
 * `https:`) and returns the socket at once, still connecting: wait for
 * `EVENT_WRITE` before sending.
 *
 * The socket stays in paused mode, so bytes wait in its buffer until
 * {@link recv} takes them, as they wait in the kernel for Python's `recv`.
 * An `error` listener is attached at creation, so a failure never escapes as
 * an unhandled `'error'` event: it is kept on the socket (`socket.errored`),
 * makes the socket ready, and is thrown by the next `recv` or `send`.
 * Nagle's algorithm is off (`setNoDelay`). A plain TCP socket is half-open
 * like a Python socket: the peer's end of stream does not close our side; the
 * owner closes it with `destroy()`. (`tls.connect` has no `allowHalfOpen`, so a
 * TLS socket closes itself once its end of stream has been read.)
 *
 * With `idleTimeoutMs`, a socket on which no byte moves for that long (while
 * connecting, or between two chunks received) fails with `ETIMEDOUT`, as a
 * kernel fails a connection whose `TCP_USER_TIMEOUT` ran out: the error is
 * kept like any other. `ca` and `rejectUnauthorized` are handed to
 * `tls.connect`, which checks the server's certificate with them. With
 * `network`, the socket comes from that {@link Network} instead of Node's
 * `net.connect`/`tls.connect`, and the rest is the same.
 *
 * @remarks Python's non-blocking `sock.connect()` raises `BlockingIOError`,
 * which the chapter catches and ignores; Node's connect simply returns.
 * Python's `sock.settimeout()` bounds each blocking call instead; a
 * non-blocking socket never blocks, so here the socket itself keeps the clock.
 * @see Chapter, "The Traditional Approach: Callbacks"
 */
export function connect(url: URL, options: ConnectOptions = {}): Socket {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === "https:";
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port);
  const { ca = null, rejectUnauthorized = true, idleTimeoutMs = 0, network = null } = options;
  const servername = secure && net.isIP(host) === 0 ? host : null;
  const socket = network !== null
    ? network.connect({ host, port, secure, servername, allowHalfOpen: true })
    : secure
    ? tls().connect({ host, port, ...(servername === null ? {} : { servername }), ...(ca === null ? {} : { ca }), rejectUnauthorized })
    : net.connect({ host, port, allowHalfOpen: true });
  socket.on("error", keepErrorOnSocket);
  socket.setNoDelay(true);
  if (idleTimeoutMs > 0) socket.setTimeout(idleTimeoutMs, idledOut);
  if (secure) {
    handshaking.add(socket);
    socket.once("secureConnect", handshakeDone);
  }
  return socket;
}

/** The error stays on the socket (`socket.errored`), for {@link recv} and {@link send} to throw. */
function keepErrorOnSocket(): void {}

/** No byte moved for `idleTimeoutMs`: the connection fails with `ETIMEDOUT`, kept on the socket like any error. */
function idledOut(this: Socket): void {
  this.destroy(systemError("ETIMEDOUT", `no byte sent or received for ${this.timeout ?? 0} ms`));
}

function handshakeDone(this: Socket): void {
  handshaking.delete(this);
}

/**
 * Whether the peer's end of stream has arrived on `socket`, whether or not
 * the bytes before it have all been read: a connection kept for another
 * request is no use once it has.
 *
 * @remarks Node says so publicly only once a reader has read past the end
 * (`readableEnded`, after the `'end'` event, a tick later); the stream's own
 * state knows as soon as the end arrives, so this reads it there: Node's
 * internal `_readableState.ended`, the one place this code leans on Node's
 * internals. test/http/idle-connections.test.ts ("does not keep a connection
 * whose end has already arrived") fails if a Node version moves it.
 */
export function endReceived(socket: Socket): boolean {
  const state = (socket as unknown as { _readableState?: { ended?: boolean } })._readableState;
  return socket.readableEnded || state?.ended === true;
}

/**
 * Takes at most `bufsize` bytes the socket has received, like Python's
 * `sock.recv(4096)`: an empty buffer means the peer ended the stream.
 *
 * Bytes that arrived before the connection failed come first, as a kernel
 * hands them out before it reports a reset: the error is thrown only once
 * nothing is left to take.
 *
 * @throws the socket's error (a Node system error with its `code`, e.g.
 * `ECONNREFUSED`) if it failed and no byte is left; an `EAGAIN` error if
 * nothing is ready yet (Python's `BlockingIOError`); an `EBADF` error if it
 * was closed.
 */
export function recv(socket: Socket, bufsize = 4096): Buffer {
  if (socket.readableLength > 0) {
    // read(n) returns null when n is larger than what is buffered: ask for what is there.
    const chunk: unknown = socket.read(Math.min(bufsize, socket.readableLength));
    if (Buffer.isBuffer(chunk)) return chunk;
  }
  if (socket.errored !== null) throw socket.errored;
  if (socket.readableEnded) return Buffer.alloc(0);
  if (socket.destroyed) throw systemError("EBADF", "recv on a closed socket");
  throw systemError("EAGAIN", "recv would block: no bytes received yet");
}

/**
 * Sends `bytes` and returns how many were taken: all of them, since Node
 * buffers what the kernel cannot take yet (then the socket is not
 * write-ready until `drain`).
 *
 * @throws the socket's error if it failed (as Python's `send` does after a
 * refused connect); an `EAGAIN` error while it is still connecting; an
 * `EBADF` error if it was closed.
 */
export function send(socket: Socket, bytes: Uint8Array): number {
  if (socket.errored !== null) throw socket.errored;
  if (socket.destroyed) throw systemError("EBADF", "send on a closed socket");
  if (socket.connecting || handshaking.has(socket)) throw systemError("EAGAIN", "send would block: still connecting");
  socket.write(bytes);
  return bytes.length;
}

function systemError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}
