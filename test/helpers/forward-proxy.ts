/**
 * A small forward proxy on 127.0.0.1 for the proxy tests: a real node:http
 * server that forwards absolute-form requests (`GET http://host/path`) and
 * opens `CONNECT` tunnels, counting both and recording the
 * `Proxy-Authorization` it saw. With `auth`, it asks for Basic credentials
 * (407) as a real proxy does; with `refuseConnect`, it answers every
 * `CONNECT` with that status.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import net, { type AddressInfo, type Socket } from "node:net";

export interface ForwardProxyOptions {
  /** `user:password` the proxy requires (Basic); absent: none. */
  auth?: string;
  /** Answer every `CONNECT` with this status instead of opening a tunnel. */
  refuseConnect?: number;
}

/** A running forward proxy. */
export interface ForwardProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** Absolute-form requests forwarded (or refused for their credentials). */
  readonly requests: string[];
  /** `host:port` of each `CONNECT` asked for (refused ones too). */
  readonly connects: string[];
  /** Each `Proxy-Authorization` header seen, in order (absent: ""). */
  readonly authorizations: string[];
  /** Waits until every connection a client opened to the proxy has closed; rejects after `timeoutMs` naming how many are open. */
  connectionsClosed(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a forward proxy on 127.0.0.1, on an ephemeral port. */
export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const expected = options.auth === undefined ? null : `Basic ${Buffer.from(options.auth).toString("base64")}`;
  const requests: string[] = [];
  const connects: string[] = [];
  const authorizations: string[] = [];
  const open = new Set<Socket>();
  const tunnels = new Set<Socket>();

  function authorized(message: IncomingMessage): boolean {
    const given = message.headers["proxy-authorization"] ?? "";
    authorizations.push(given);
    return expected === null || given === expected;
  }

  const server = createServer(function forward(message: IncomingMessage, response: ServerResponse) {
    requests.push(message.url ?? "");
    if (!authorized(message)) {
      response.writeHead(407, { "Proxy-Authenticate": 'Basic realm="test"', "Content-Type": "text/plain" }).end("Proxy Authentication Required\n");
      return;
    }
    const target = new URL(message.url ?? "/");
    const headers = { ...message.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    headers.connection = "close"; // One connection per forwarded request: nothing stays open to the site.
    const upstream = httpRequest(target, { method: message.method, headers, agent: false }, function answered(reply) {
      const kept: string[] = [];
      for (let i = 0; i + 1 < reply.rawHeaders.length; i += 2) {
        if (!/^(connection|keep-alive|transfer-encoding)$/i.test(reply.rawHeaders[i])) kept.push(reply.rawHeaders[i], reply.rawHeaders[i + 1]);
      }
      response.writeHead(reply.statusCode ?? 502, kept);
      reply.pipe(response);
    });
    upstream.on("error", function unreachable() {
      if (!response.headersSent) response.writeHead(502, { "Content-Type": "text/plain" }).end("Bad Gateway\n");
      else response.destroy();
    });
    upstream.end();
  });

  server.on("connect", function tunnel(message: IncomingMessage, client: Socket, head: Buffer) {
    connects.push(message.url ?? "");
    client.on("error", function ignore() {});
    if (!authorized(message)) {
      client.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    if (options.refuseConnect !== undefined) {
      client.end(`HTTP/1.1 ${options.refuseConnect} Refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const [host, port] = splitAuthority(message.url ?? "");
    const upstream = net.connect({ host, port });
    tunnels.add(upstream);
    upstream.on("close", function forget() { tunnels.delete(upstream); });
    upstream.on("error", function unreachable() {
      if (upstream.connecting) client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
      else client.destroy();
    });
    upstream.on("connect", function opened() {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    client.on("close", function clientGone() { upstream.destroy(); });
  });

  server.on("connection", function track(socket: Socket) {
    open.add(socket);
    socket.on("close", function forget() { open.delete(socket); });
  });

  await new Promise<void>(function listen(resolve) {
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo; // listening on TCP: an AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    connects,
    authorizations,
    async connectionsClosed(timeoutMs = 2_000) {
      for (let waited = 0; open.size > 0; waited += 10) {
        if (waited >= timeoutMs) throw new Error(`${open.size} connection(s) to the proxy still open`);
        await new Promise(function later(resolve) { setTimeout(resolve, 10); });
      }
    },
    close() {
      for (const socket of [...open, ...tunnels]) socket.destroy();
      return new Promise<void>(function closed(resolve) {
        server.close(function done() { resolve(); });
      });
    },
  };
}

/** `host:port` split, an IPv6 host without its brackets. */
function splitAuthority(authority: string): [string, number] {
  const at = authority.lastIndexOf(":");
  const host = authority.slice(0, at);
  return [host.startsWith("[") ? host.slice(1, -1) : host, Number(authority.slice(at + 1))];
}
