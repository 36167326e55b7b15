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
import tls from "node:tls";

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
 * @remarks Python's non-blocking `sock.connect()` raises `BlockingIOError`,
 * which the chapter catches and ignores; Node's connect simply returns.
 * @see Chapter, "The Traditional Approach: Callbacks"
 */
export function connect(url: URL): Socket {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === "https:";
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port);
  const socket = secure
    ? tls.connect({ host, port, ...(net.isIP(host) === 0 ? { servername: host } : {}) })
    : net.connect({ host, port, allowHalfOpen: true });
  socket.on("error", keepErrorOnSocket);
  socket.setNoDelay(true);
  if (secure) {
    handshaking.add(socket);
    socket.once("secureConnect", handshakeDone);
  }
  return socket;
}

/** The error stays on the socket (`socket.errored`), for {@link recv} and {@link send} to throw. */
function keepErrorOnSocket(): void {}

function handshakeDone(this: Socket): void {
  handshaking.delete(this);
}

/**
 * Takes at most `bufsize` bytes the socket has received, like Python's
 * `sock.recv(4096)`: an empty buffer means the peer ended the stream.
 *
 * @throws the socket's error (a Node system error with its `code`, e.g.
 * `ECONNREFUSED`) if it failed; an `EAGAIN` error if nothing is ready yet
 * (Python's `BlockingIOError`); an `EBADF` error if it was closed.
 */
export function recv(socket: Socket, bufsize = 4096): Buffer {
  if (socket.errored !== null) throw socket.errored;
  if (socket.readableLength > 0) {
    // read(n) returns null when n is larger than what is buffered: ask for what is there.
    const chunk: unknown = socket.read(Math.min(bufsize, socket.readableLength));
    if (Buffer.isBuffer(chunk)) return chunk;
  }
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
