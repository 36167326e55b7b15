/**
 * The simulated network of the bottle: named hosts and ports whose servers
 * are the project's own `node:http` sites, reached without a socket, with
 * latency, bandwidth and faults drawn from a seed.
 *
 * @module
 */
import type { Network, NetworkAddress } from "../kernel/socket.js";
import { SeededRandom, seedFor } from "./random.js";
import { SimulatedSocket, systemError, type Link } from "./socket.js";

/** What accepts a connection on a host and port: a site's `accept` (FixtureSite), handing the socket to its `http.Server`. */
export type Acceptor = (socket: SimulatedSocket) => void;

/**
 * How likely each fault is, per response: each is drawn for every request
 * the network sees, from the seed, the host and the request line, and how
 * many times that request was sent before (a retry draws again).
 */
export interface FaultRates {
  /** The response is cut by a reset after some bytes (1 to 1,500): `BadResponse`, or `ConnectionReset` when no byte came. */
  reset?: number;
  /** The response stops after some bytes and the connection goes silent: the client's idle clock ends it (`Timeout`). */
  stall?: number;
  /** The response comes slowly: 64 bytes every `dripIntervalMs`. */
  drip?: number;
  /** The response's writes are split at random bytes: nothing changes but where each read ends. */
  split?: number;
}

/** The shape of a {@link SimulatedNetwork}. */
export interface NetworkOptions {
  /** Seeds every draw of the network. */
  seed: number;
  /** One-way latency in virtual milliseconds: a connection takes two to open, a byte one to cross. Default 1. */
  latencyMs?: number;
  /** Bytes a connection carries per virtual millisecond, each way. Default 12,500 (100 Mbit/s); `Infinity`: no limit. */
  bytesPerMs?: number;
  /** The faults, each a probability per response. Default: none. */
  faults?: FaultRates;
  /** Milliseconds between two 64-byte pieces of a dripped response. Default 100. */
  dripIntervalMs?: number;
  /** Exact faults for the requests of a path (the request line's target, `/a?b=1`), whatever the rates draw: for tests. */
  scripted?: ReadonlyArray<{ readonly path: string; readonly fault: Fault }>;
}

/** The fault a response gets. */
export type Fault =
  | { readonly kind: "none" }
  | { readonly kind: "reset"; readonly afterBytes: number }
  | { readonly kind: "stall"; readonly afterBytes: number }
  | { readonly kind: "drip" }
  | { readonly kind: "split" };

const NO_FAULT: Fault = { kind: "none" };
const DRIP_BYTES = 64;

/**
 * A network of simulated hosts, passed to a crawl as its `network` option.
 *
 * `listen(host, port, acceptor)` puts a server at `host:port`. `connect()`
 * (what the stages call, below their own code) returns a
 * {@link SimulatedSocket} still connecting: a name nobody listens on fails
 * with `ENOTFOUND` (the DNS of this network knows only its hosts), a known
 * host on a port nobody listens on refuses with `ECONNREFUSED` after a
 * round trip; otherwise, one latency later, the server's end of the
 * connection is handed to the acceptor (an `http.Server` takes it as if it
 * had accepted it), and after a round trip the client's end says `connect`.
 * The client's end is half-open only when the address asks (`allowHalfOpen`,
 * as stages 1 and 2 ask `net.connect`); otherwise, as `net.connect`'s socket
 * by default, it ends its side and closes once the server's end arrives, so
 * node:http's Agent and undici see a kept connection the server closed go.
 *
 * Every byte crosses a {@link Link}: it leaves when the sender's side of the
 * wire is free (bandwidth) and arrives one latency later, in order, on the
 * virtual clock (`setTimeout`, faked by the bottle's clock). The client's
 * bytes are read for request heads (`GET /p/1 HTTP/1.1` … blank line): for
 * each, the network draws the fault of its response from
 * `seedFor(seed, host + request line + count)`, so the same request gets
 * the same fault in every stage, however the stages order or pool their
 * connections.
 *
 * @remarks tokio's turmoil and FoundationDB's simulator do the same for
 * real programs: the program's sockets are the only thing replaced.
 */
export class SimulatedNetwork implements Network {
  private readonly hosts = new Map<string, Map<number, Acceptor>>();
  /** How many times each request line was seen on each host: a retry draws its own fault. */
  private readonly requestCounts = new Map<string, number>();
  private readonly sockets = new Set<SimulatedSocket>();
  private readonly latencyMs: number;
  private readonly bytesPerMs: number;
  private readonly rates: Required<FaultRates>;
  private readonly dripIntervalMs: number;
  /** Connections made so far. */
  connections = 0;
  /** Faults drawn so far, by kind. */
  readonly faultCounts = { reset: 0, stall: 0, drip: 0, split: 0 };

  constructor(private readonly options: NetworkOptions) {
    this.latencyMs = options.latencyMs ?? 1;
    this.bytesPerMs = options.bytesPerMs ?? 12_500;
    this.rates = { reset: 0, stall: 0, drip: 0, split: 0, ...options.faults };
    this.dripIntervalMs = options.dripIntervalMs ?? 100;
  }

  /** Serves `host:port` with `acceptor`; the host's name now resolves. */
  listen(host: string, port: number, acceptor: Acceptor): this {
    const ports = this.hosts.get(host) ?? new Map<number, Acceptor>();
    this.hosts.set(host, ports);
    ports.set(port, acceptor);
    return this;
  }

  /** Makes `host` known to this network's DNS with no port open: connections are refused. */
  addHost(host: string): this {
    if (!this.hosts.has(host)) this.hosts.set(host, new Map());
    return this;
  }

  /** Sockets not destroyed yet, both ends counted: 0 once every connection is closed. */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Opens a simulated connection: see the class comment. */
  connect(address: NetworkAddress): SimulatedSocket {
    const client = new SimulatedSocket({ allowHalfOpen: !address.secure && address.allowHalfOpen === true, connecting: true, secure: address.secure });
    this.track(client);
    const ports = this.hosts.get(address.host);
    const acceptor = ports?.get(address.port);
    const network = this;
    if (ports === undefined) {
      later(0, function notFound() {
        client.fail(systemError("ENOTFOUND", "getaddrinfo", address.host));
      });
    } else if (acceptor === undefined) {
      later(2 * this.latencyMs, function refused() {
        client.fail(systemError("ECONNREFUSED", "connect", `${address.host}:${address.port}`));
      });
    } else {
      later(this.latencyMs, function accepted() {
        if (client.destroyed) return; // given up while connecting
        const server = new SimulatedSocket({ allowHalfOpen: false, connecting: false });
        network.track(server);
        network.connections += 1;
        const wire = new Wire(network, `${address.host}:${address.port}`, client, server);
        client.link = wire;
        server.link = wire;
        // Set before the acceptor runs: a byte its server sends at once arrives in the same millisecond, after `connect`, as over TCP.
        later(network.latencyMs, function established() {
          client.connected();
        });
        acceptor(server);
      });
    }
    return client;
  }

  /** The fault for a request `line` sent to `origin`: scripted, else drawn. */
  faultFor(origin: string, line: string): Fault {
    const target = line.split(" ")[1];
    for (const each of this.options.scripted ?? []) if (each.path === target) return each.fault;
    const key = `${origin} ${line}`;
    const count = (this.requestCounts.get(key) ?? 0) + 1;
    this.requestCounts.set(key, count);
    const random = new SeededRandom(seedFor(this.options.seed, `${key} #${count}`));
    const { reset, stall, drip, split } = this.rates;
    const u = random.float();
    let fault: Fault = NO_FAULT;
    if (u < reset) fault = { kind: "reset", afterBytes: random.int(1, 1_500) };
    else if (u < reset + stall) fault = { kind: "stall", afterBytes: random.int(0, 1_500) };
    else if (u < reset + stall + drip) fault = { kind: "drip" };
    else if (u < reset + stall + drip + split) fault = { kind: "split" };
    if (fault.kind !== "none") this.faultCounts[fault.kind] += 1;
    return fault;
  }

  /** The link's timing: latency, bandwidth, the drip's pace. */
  get timing(): { latencyMs: number; bytesPerMs: number; dripIntervalMs: number } {
    return { latencyMs: this.latencyMs, bytesPerMs: this.bytesPerMs, dripIntervalMs: this.dripIntervalMs };
  }

  /** A random source for one response's split points. */
  splitter(origin: string, line: string): SeededRandom {
    return new SeededRandom(seedFor(this.options.seed ^ 0x5eed, `${origin} ${line}`));
  }

  private track(socket: SimulatedSocket): void {
    const sockets = this.sockets;
    sockets.add(socket);
    socket.once("close", function forget() {
      sockets.delete(socket);
    });
  }
}

/**
 * Runs `fn` after `ms` virtual milliseconds; at 0, after what can run now
 * (a real `setImmediate`: the bottle's clock leaves immediates real, and
 * fake-timers would put a 0 ms timer set inside a timer 1 ms later).
 */
function later(ms: number, fn: () => void): void {
  if (ms <= 0) setImmediate(fn);
  else setTimeout(fn, ms);
}

/**
 * Both directions of one connection: when each sender's side of the wire is
 * free, and the fault of the response in flight. Bytes arrive in the order
 * they were sent, one latency after they left.
 */
class Wire implements Link {
  /** Virtual time (ms, fractional) each side's wire is free again: client→server, server→client. */
  private clientFreeAt = 0;
  private serverFreeAt = 0;
  /** The client's bytes not yet a whole request head. */
  private head = "";
  private fault: Fault = NO_FAULT;
  /** Bytes of the current response carried so far. */
  private carried = 0;
  private split: SeededRandom | null = null;
  private cut = false;

  constructor(
    private readonly network: SimulatedNetwork,
    private readonly origin: string,
    private readonly client: SimulatedSocket,
    private readonly server: SimulatedSocket,
  ) {}

  send(from: SimulatedSocket, chunk: Buffer, sent: () => void): void {
    if (from === this.client) {
      this.readRequests(chunk);
      this.carry(from, this.server, [chunk], sent);
      return;
    }
    const wasCut = this.cut;
    const pieces = this.shape(chunk);
    const lastArrival = this.carry(from, this.client, pieces, sent);
    if (wasCut || !this.cut || this.fault.kind !== "reset") return;
    const { client, server } = this;
    // The reset comes right behind the last byte let through.
    later(Math.max(lastArrival, this.arrival(server, 0)) - performance.now(), function resetAfterBytes() {
      client.fail(systemError("ECONNRESET", "read", "connection reset by peer"));
      server.fail(systemError("ECONNRESET", "write", "connection reset by peer"));
    });
  }

  end(from: SimulatedSocket): void {
    const to = from === this.client ? this.server : this.client;
    if (to === this.client && this.cut) return; // a stalled response never ends
    later(this.arrival(from, 0) - performance.now(), function finArrives() {
      to.deliverEnd();
    });
  }

  close(from: SimulatedSocket, reset: boolean): void {
    const to = from === this.client ? this.server : this.client;
    if (to.destroyed) return;
    if (to === this.client && this.cut && !reset) return; // silent: only the client's idle clock ends it
    const delay = this.arrival(from, 0) - performance.now();
    later(delay, reset ? function resetArrives() {
      to.fail(systemError("ECONNRESET", "read", "connection reset by peer"));
    } : function finArrives() {
      to.deliverEnd();
    });
  }

  /** Reads request heads out of the client's bytes, and draws the fault of each one's response. */
  private readRequests(chunk: Buffer): void {
    this.head += chunk.toString("latin1");
    for (let end = this.head.indexOf("\r\n\r\n"); end !== -1; end = this.head.indexOf("\r\n\r\n")) {
      const line = this.head.slice(0, this.head.indexOf("\r\n"));
      this.head = this.head.slice(end + 4);
      this.fault = this.network.faultFor(this.origin, line);
      this.carried = 0;
      this.cut = false;
      this.split = this.fault.kind === "split" ? this.network.splitter(this.origin, line) : null;
    }
  }

  /** The server's chunk as the current response's fault lets it through: cut, split or dripped. */
  private shape(chunk: Buffer): Buffer[] {
    const fault = this.fault;
    if (this.cut) return [];
    if (fault.kind === "reset" || fault.kind === "stall") {
      const room = fault.afterBytes - this.carried;
      if (room > chunk.length) {
        this.carried += chunk.length;
        return [chunk];
      }
      this.cut = true;
      this.carried += room;
      return room > 0 ? [chunk.subarray(0, room)] : [];
    }
    if (fault.kind === "split" && this.split !== null) {
      const pieces: Buffer[] = [];
      let at = 0;
      while (at < chunk.length) {
        const size = this.split.int(1, Math.max(1, Math.min(chunk.length - at, 1_024)));
        pieces.push(chunk.subarray(at, at + size));
        at += size;
      }
      return pieces;
    }
    if (fault.kind === "drip") {
      const pieces: Buffer[] = [];
      for (let at = 0; at < chunk.length; at += DRIP_BYTES) pieces.push(chunk.subarray(at, at + DRIP_BYTES));
      return pieces;
    }
    return [chunk];
  }

  /**
   * Sends `pieces` from `from` to `to`, each leaving when the wire is free
   * and arriving a latency later; calls `sent` once the last has left, and
   * returns when it arrives (now, for no piece).
   */
  private carry(from: SimulatedSocket, to: SimulatedSocket, pieces: Buffer[], sent: () => void): number {
    const now = performance.now();
    let arrives = now;
    for (const piece of pieces) {
      arrives = this.arrival(from, piece.length);
      later(arrives - now, function bytesArrive() {
        to.deliver(piece);
      });
    }
    const wait = arrives - this.network.timing.latencyMs - now;
    if (wait <= 0) sent();
    else setTimeout(sent, Math.ceil(wait));
    return arrives;
  }

  /** Takes `bytes` onto `from`'s side of the wire and returns when they arrive at the other end (virtual ms, rounded up). */
  private arrival(from: SimulatedSocket, bytes: number): number {
    const now = performance.now();
    const { latencyMs, bytesPerMs, dripIntervalMs } = this.network.timing;
    const dripping = from === this.server && this.fault.kind === "drip";
    const transmit = dripping ? dripIntervalMs : bytesPerMs === Infinity ? 0 : bytes / bytesPerMs;
    if (from === this.client) {
      this.clientFreeAt = Math.max(now, this.clientFreeAt) + transmit;
      return Math.ceil(this.clientFreeAt + latencyMs);
    }
    this.serverFreeAt = Math.max(now, this.serverFreeAt) + (bytes === 0 ? 0 : transmit);
    return Math.ceil(this.serverFreeAt + latencyMs);
  }
}
