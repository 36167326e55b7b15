/**
 * A TCP proxy in front of one redis-server that can lose a reply: it
 * forwards every connection's commands and replies as they are, reading
 * the Redis protocol (RESP2 and RESP3) only to tell one command and one
 * reply from the next, until a command `cut` picks arrives. That command
 * goes to Redis, the connection's later commands are held back, and once
 * Redis has answered it (so it ran), the proxy closes both sides without
 * passing the reply on: the client sees its connection break with the
 * command's effects in Redis and no answer, the fault a retry must survive.
 * It does so once; every other connection, and the ones made after, are
 * forwarded whole.
 *
 * A command `cut` picks whose reply is an error (a `NOSCRIPT`: nothing ran)
 * is passed on, and the next one picked is cut instead. With
 * `everyConnection`, the cut ends every connection through the proxy at
 * once (a client's others too: its Pub/Sub connection), as a Redis that
 * restarts would, and the proxy forwards the new ones whole.
 *
 * A replica replicating from the node through the proxy (its `PSYNC` went
 * through it) gets the replication stream as it is, unread, until
 * `starveReplicas()`: from then on the proxy drops that stream, as a network
 * losing a primary's writes on their way to its replica, so the replica
 * falls behind, and a `WAIT` for it times out, until the primary dies.
 *
 * Lifecycle: {@link startRedisProxy} → `close()`.
 */
import { createServer, type Server, type Socket, connect } from "node:net";

/** A command the proxy cut, and the reply it kept from its client. */
export interface CutCommand {
  /** The command's arguments, its name first, as sent. */
  readonly args: readonly string[];
  /** Redis's reply, as Redis sent it (RESP). */
  readonly reply: Buffer;
}

/** A proxy made by {@link startRedisProxy}. */
export class RedisProxy {
  /** The commands cut (at most one). */
  readonly cut: CutCommand[] = [];
  /** Connections the proxy made to Redis so far. */
  connections = 0;
  /** Connections of replicas replicating through the proxy (a `PSYNC` or `SYNC` went through). */
  replications = 0;
  /** Whether the replication stream is dropped (`starveReplicas`). */
  starving = false;
  /** Whether a cut ends every connection through the proxy, not only its own (see the module). */
  everyConnection = false;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly server: Server,
    /** The loopback port the proxy listens on. */
    readonly port: number,
  ) {}

  /** From now on, drops what the node sends its replicas through the proxy (see the module). */
  starveReplicas(): void {
    this.starving = true;
  }

  /** Closes the proxy and every connection through it. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Ends every connection through the proxy now; the proxy goes on accepting new ones. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /** Tracks a socket so that `close()` ends it. */
  track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }
}

/**
 * Starts a proxy on a free loopback port to Redis at `targetPort`, which
 * cuts the first command for which `cut` returns true (see the module),
 * and with `everyConnection` every connection then.
 */
export async function startRedisProxy(targetPort: number, cut: (args: readonly string[]) => boolean, options: { everyConnection?: boolean } = {}): Promise<RedisProxy> {
  let proxy: RedisProxy | null = null;
  const server = createServer(function accepted(client) {
    if (proxy === null) return void client.destroy();
    const upstream = connect(targetPort, "127.0.0.1");
    proxy.connections += 1;
    proxy.track(client);
    proxy.track(upstream);
    pipeThrough(proxy, client, upstream, cut);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("redis proxy: no port");
  proxy = new RedisProxy(server, address.port);
  proxy.everyConnection = options.everyConnection ?? false;
  return proxy;
}

/** One connection's two directions, each read command by command and reply by reply. */
function pipeThrough(proxy: RedisProxy, client: Socket, upstream: Socket, cut: (args: readonly string[]) => boolean): void {
  let requests = Buffer.alloc(0);
  let replies = Buffer.alloc(0);
  /** Commands forwarded to Redis, and replies passed back, on this connection. */
  let sent = 0;
  let answered = 0;
  /** The index of the command whose reply is awaited before cutting, or -1. */
  let awaited = -1;
  let awaitedArgs: string[] = [];
  /** A replica's connection: past its `PSYNC`, the node's bytes are the replication stream, passed on unread. */
  let replication = false;
  function end(): void {
    client.destroy();
    upstream.destroy();
  }
  client.on("error", end);
  upstream.on("error", end);
  client.on("close", end);
  upstream.on("close", end);
  function forwardRequests(): void {
    while (awaited < 0) {
      const parsed = readRequest(requests);
      if (parsed === null) return;
      const bytes = requests.subarray(0, parsed.end);
      requests = requests.subarray(parsed.end);
      upstream.write(bytes);
      const name = parsed.args[0]?.toUpperCase();
      if ((name === "PSYNC" || name === "SYNC") && !replication) {
        replication = true;
        proxy.replications += 1;
      }
      if (!replication && proxy.cut.length === 0 && cut(parsed.args)) {
        awaited = sent;
        awaitedArgs = parsed.args;
      }
      sent += 1;
    }
  }
  client.on("data", function fromClient(chunk: Buffer) {
    requests = Buffer.concat([requests, chunk]);
    forwardRequests();
  });
  upstream.on("data", function fromRedis(chunk: Buffer) {
    if (replication) {
      if (!proxy.starving) client.write(chunk); // Dropped while starving: the replica never gets it.
      return;
    }
    replies = Buffer.concat([replies, chunk]);
    for (;;) {
      const end_ = skipReply(replies, 0);
      if (end_ < 0) return;
      const reply = replies.subarray(0, end_);
      replies = replies.subarray(end_);
      if (answered === awaited) {
        answered += 1;
        if (reply[0] === 0x2d /* - */ && proxy.cut.length === 0) {
          // An error (NOSCRIPT): nothing ran; passed on, and the next command picked is cut instead.
          awaited = -1;
          client.write(reply);
          forwardRequests();
          continue;
        }
        proxy.cut.push({ args: awaitedArgs, reply: Buffer.from(reply) });
        end();
        if (proxy.everyConnection) proxy.dropConnections();
        return;
      }
      answered += 1;
      client.write(reply);
    }
  });
}

/** A whole command at the start of `buffer` (an array of bulk strings): its arguments and where it ends, or null when not all here yet. */
function readRequest(buffer: Buffer): { args: string[]; end: number } | null {
  if (buffer.length === 0) return null;
  if (buffer[0] !== 0x2a /* * */) {
    // An inline command (a line of words): the client does not send them, but Redis takes them.
    const line = buffer.indexOf("\r\n");
    return line < 0 ? null : { args: buffer.subarray(0, line).toString().split(" "), end: line + 2 };
  }
  let line = buffer.indexOf("\r\n");
  if (line < 0) return null;
  const count = Number(buffer.subarray(1, line).toString());
  let at = line + 2;
  const args: string[] = [];
  for (let i = 0; i < count; i += 1) {
    line = buffer.indexOf("\r\n", at);
    if (line < 0) return null;
    const length = Number(buffer.subarray(at + 1, line).toString());
    const start = line + 2;
    if (buffer.length < start + length + 2) return null;
    args.push(buffer.subarray(start, start + length).toString());
    at = start + length + 2;
  }
  return { args, end: at };
}

/** Where the reply starting at `at` ends (RESP2 or RESP3), or -1 when not all of it is here yet. */
function skipReply(buffer: Buffer, at: number): number {
  if (at >= buffer.length) return -1;
  const line = buffer.indexOf("\r\n", at);
  if (line < 0) return -1;
  const type = String.fromCharCode(buffer[at] ?? 0);
  const head = buffer.subarray(at + 1, line).toString();
  const next = line + 2;
  switch (type) {
    case "$":
    case "!":
    case "=": {
      const length = Number(head);
      if (length < 0) return next; // A null bulk string.
      return buffer.length < next + length + 2 ? -1 : next + length + 2;
    }
    case "*":
    case "~":
    case ">":
    case "%":
    case "|": {
      const count = Number(head);
      if (count < 0) return next; // A null array.
      const items = type === "%" || type === "|" ? 2 * count : count;
      let end = next;
      for (let i = 0; i < items; i += 1) {
        end = skipReply(buffer, end);
        if (end < 0) return -1;
      }
      // An attribute comes before the reply it is about.
      return type === "|" ? skipReply(buffer, end) : end;
    }
    default:
      return next; // + - : _ , # ( : one line.
  }
}
