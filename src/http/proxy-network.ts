/**
 * Connections through a forward proxy, as a {@link Network}: the sockets of
 * a crawl with a `proxy` open here, for every stage (stages 1 and 2 through
 * kernel/socket.ts `connect`, stage 3 through its connector). What to do is
 * decided in proxy.ts; this file does the I/O.
 *
 * @module
 */
import net from "node:net";
import type { Socket } from "node:net";
import { Duplex } from "node:stream";
import type tlsModule from "node:tls";
import type { Network, NetworkAddress } from "../kernel/socket.js";
import { ConnectReply, formatConnectRequest, proxyDetail, type Proxies, type ProxyServer } from "./proxy.js";

/** node:tls, loaded by the first `https:` connection, as kernel/socket.ts loads it. */
function tls(): typeof tlsModule {
  return process.getBuiltinModule("node:tls");
}

/** How a {@link ProxyNetwork} checks the certificates of `https:` targets: the crawl's `ca` and `rejectUnauthorized`. */
export interface ProxyTlsOptions {
  readonly ca: string | Buffer | null;
  readonly rejectUnauthorized: boolean;
}

/**
 * A {@link Network} that goes through a crawl's forward proxies: each
 * connection goes where {@link Proxies.serverFor} says.
 *
 * - Direct (no proxy for the scheme, or `noProxy` names the host): a plain
 *   connection, as without a proxy (through `inner`, the crawl's `network`,
 *   if it has one).
 * - An `http:` target: a plain connection to the proxy. The request on it
 *   names its target in absolute-form with the proxy's credentials
 *   (`formatGetRequest`, stage 3's request options): the proxy forwards it.
 * - An `https:` target: a connection to the proxy, a `CONNECT host:port`
 *   request on it, and, after a 2xx reply, TLS with the target over that same
 *   connection (the tunnel). The socket returned is the TLS socket, at once,
 *   still connecting: it says `secureConnect` once the tunnel is open and the
 *   handshake done, or fails with the proxy's refusal
 *   ({@link ConnectReply}: `ConnectionRefused`, with a `detail` naming the
 *   proxy and its status).
 *
 * A failure on the way to a proxy (refused, not resolved, timed out) gets a
 * `detail` naming the proxy, set on the error by the socket's first `error`
 * listener, before any reader sees it: `errorDetail` reads it.
 *
 * @remarks Kept connections need no key of their own: a crawl has one set of
 * proxies, and every connection to an origin takes the same way, so the
 * stages' kept connections (keyed by origin) are never handed a connection
 * that took another way. Like curl, a kept connection to a proxy serves one
 * origin only. undici's `ProxyAgent` does the same two things (absolute-form,
 * `CONNECT` tunnels; lib/dispatcher/proxy-agent.js), but with a second
 * client for the tunnel: it does not fit stages 1 and 2, which wait on sockets.
 */
export class ProxyNetwork implements Network {
  constructor(
    private readonly proxies: Proxies,
    /** The crawl's own `network` (the bottle's), or null: the machine's. */
    private readonly inner: Network | null,
    private readonly tlsOptions: ProxyTlsOptions,
  ) {}

  connect(address: NetworkAddress): Socket {
    const server = this.proxies.serverFor(address);
    if (server === null) return this.open(address);
    const toProxy = this.open({ host: server.host, port: server.port, secure: false, servername: null, allowHalfOpen: address.allowHalfOpen === true && !address.secure });
    nameProxyInFailures(toProxy, server);
    return address.secure ? this.tunnel(toProxy, server, address) : toProxy;
  }

  /** A connection to `address`, on the crawl's network or the machine's, checked with the crawl's TLS options. */
  private open(address: NetworkAddress): Socket {
    if (this.inner !== null) return this.inner.connect(address);
    const { host, port, allowHalfOpen = false } = address;
    if (!address.secure) return net.connect({ host, port, allowHalfOpen });
    const { ca, rejectUnauthorized } = this.tlsOptions;
    const servername = serverNameOf(address);
    return tls().connect({ host, port, ...(servername === null ? {} : { servername }), ...(ca === null ? {} : { ca }), rejectUnauthorized });
  }

  /** TLS with `target` through a `CONNECT` tunnel on `toProxy`: the TLS socket, returned at once. */
  private tunnel(toProxy: Socket, server: ProxyServer, target: NetworkAddress): Socket {
    const pipe = new Tunnel(toProxy, server, target);
    const { ca, rejectUnauthorized } = this.tlsOptions;
    const servername = serverNameOf(target);
    const secure = tls().connect({
      socket: pipe,
      host: target.host, // the name the certificate is checked against (the socket is the proxy's)
      ...(servername === null ? {} : { servername }),
      ...(ca === null ? {} : { ca }),
      rejectUnauthorized,
    });
    pipe.secure = secure;
    return secure;
  }
}

/**
 * The name to send for SNI: the address's own, else its host when that is a
 * name (stage 3's connector passes none; kernel/socket.ts computes it the same way).
 */
function serverNameOf(address: NetworkAddress): string | null {
  return address.servername ?? (net.isIP(address.host) === 0 ? address.host : null);
}

/** Gives a failure of `socket` before it connects a `detail` naming the proxy it was connecting to. */
function nameProxyInFailures(socket: Socket, server: ProxyServer): void {
  function failedToReach(error: Error): void {
    if (!("detail" in error)) Object.assign(error, { detail: proxyDetail(server, error) });
  }
  socket.once("error", failedToReach);
  socket.once("connect", function reached() {
    socket.off("error", failedToReach);
  });
}

/**
 * The byte stream TLS runs over in a `CONNECT` tunnel: once connected to the
 * proxy it sends `CONNECT`, reads the reply ({@link ConnectReply}), and from
 * then on carries bytes both ways between the TLS socket and the proxy's.
 * What TLS writes before the tunnel is open (its ClientHello) waits here.
 * A refusal, or the proxy's connection failing, destroys the TLS socket with
 * the failure, where the stage's read finds it.
 */
class Tunnel extends Duplex {
  /** The TLS socket that runs over this tunnel; set right after it is made. */
  secure: Socket | null = null;
  private open = false;
  /** Writes made before the tunnel opened, sent once it has. */
  private waiting: Array<{ chunk: Buffer; done: (error?: Error | null) => void }> = [];

  private readonly reply: ConnectReply;

  constructor(
    private readonly toProxy: Socket,
    server: ProxyServer,
    target: NetworkAddress,
  ) {
    super();
    const tunnel = this;
    const reply = new ConnectReply(server, target);
    this.reply = reply;
    toProxy.setNoDelay(true);
    toProxy.once("connect", function askForTunnel() {
      toProxy.write(formatConnectRequest(target, server));
    });
    toProxy.on("data", function carry(chunk: Buffer) {
      tunnel.received(chunk);
    });
    toProxy.on("end", function proxyEnded() {
      if (tunnel.open) tunnel.push(null);
      else tunnel.fail(reply.end());
    });
    toProxy.on("error", function proxyFailed(error: Error) {
      tunnel.fail(error);
    });
    toProxy.on("close", function proxyClosed() {
      if (!tunnel.open) tunnel.fail(reply.end());
      else if (!tunnel.destroyed) tunnel.destroy();
    });
  }

  /** Bytes from the proxy: its reply to `CONNECT` until the tunnel is open, then the target's. */
  private received(chunk: Buffer): void {
    if (this.open) {
      if (!this.push(chunk)) this.toProxy.pause();
      return;
    }
    let rest: Buffer | null;
    try {
      rest = this.reply.feed(chunk);
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (rest === null) return;
    this.open = true;
    if (rest.length > 0) this.push(rest);
    for (const { chunk: bytes, done } of this.waiting) this.toProxy.write(bytes, done);
    this.waiting = [];
  }

  /** The tunnel could not open, or broke: the TLS socket and the proxy's both close with `error`. */
  private fail(error: Error): void {
    if (this.secure !== null && !this.secure.destroyed) this.secure.destroy(error);
    for (const { done } of this.waiting) done(error);
    this.waiting = [];
    this.toProxy.destroy();
    if (!this.destroyed) this.destroy();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.open) this.toProxy.write(chunk, done);
    else this.waiting.push({ chunk, done });
  }

  override _read(): void {
    if (this.toProxy.isPaused()) this.toProxy.resume();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.toProxy.end();
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.toProxy.destroy();
    done(error);
  }
}
