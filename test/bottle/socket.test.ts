/**
 * The bottle's SimulatedSocket beside a real one: each case runs once on a
 * loopback connection (`net`, `node:http`) and once on a SimulatedNetwork,
 * on the real clock, and the two must tell the same story: the same events
 * in the same order, the same state after. A socket that behaves unlike
 * Node's would make a client over it crawl unlike it does on a real network.
 */
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { SimulatedNetwork } from "../../src/bottle/network.js";

/** Opens a connection to a server that runs `serve` on its end of each connection accepted. */
type Opener = (serve: (socket: net.Socket) => void, allowHalfOpen: boolean) => Promise<{ client: net.Socket; close: () => void }>;

const loopback: Opener = async (serve, allowHalfOpen) => {
  const server = net.createServer(serve);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return { client: net.connect({ host: "127.0.0.1", port, allowHalfOpen }), close: () => server.close() };
};

/** Waits for `name`, or fails after 2 s of real time: a socket that never says it would otherwise hang the test. */
async function event(emitter: NodeJS.EventEmitter, name: string): Promise<unknown[]> {
  try {
    return await once(emitter, name, { signal: AbortSignal.timeout(2_000) });
  } catch (error) {
    throw new Error(`No ${name} event within 2 s`, { cause: error });
  }
}

const bottle: Opener = async (serve, allowHalfOpen) => {
  const network = new SimulatedNetwork({ seed: 1 }).listen("s.test", 80, serve);
  return { client: network.connect({ host: "s.test", port: 80, secure: false, servername: null, allowHalfOpen }), close: () => {} };
};

/** The client's events, until the server has ended the connection with no byte and the client has answered a write or closed. */
async function afterServerEnds(open: Opener, allowHalfOpen: boolean): Promise<{ events: string[]; destroyed: boolean; writable: boolean }> {
  const events: string[] = [];
  let heard: () => void = () => {};
  const heardBack = new Promise<void>((resolve) => { heard = resolve; });
  const { client, close } = await open(function serve(socket) {
    socket.on("error", () => {});
    socket.on("data", heard); // A half-open client can still write: the server reads it.
    socket.end();
  }, allowHalfOpen);
  for (const name of ["connect", "end", "finish", "close"]) client.on(name, () => events.push(name));
  // Nobody reads the client: no `data` listener, no `read()`. A real socket reads its end of stream anyway.
  if (allowHalfOpen) {
    await event(client, "end");
    client.write("still here");
    await heardBack;
  } else {
    await event(client, "close"); // Its ticks run before the line after an `await` of `end` would.
  }
  const state = { events: [...events], destroyed: client.destroyed, writable: client.writable };
  client.destroy();
  close();
  return state;
}

describe("SimulatedSocket, beside a loopback net.Socket", () => {
  it("says end, then ends its side and closes, when the server ends a connection nobody reads (allowHalfOpen false, net.connect's default)", async () => {
    const real = await afterServerEnds(loopback, false);
    expect(real).toEqual({ events: ["connect", "end", "finish", "close"], destroyed: true, writable: false });
    expect(await afterServerEnds(bottle, false)).toEqual(real);
  });

  it("says end and stays writable when it was opened half-open (allowHalfOpen true, as stages 1 and 2 ask)", async () => {
    const real = await afterServerEnds(loopback, true);
    expect(real).toEqual({ events: ["connect", "end"], destroyed: false, writable: true });
    expect(await afterServerEnds(bottle, true)).toEqual(real);
  });
});

/**
 * Two GETs through one keep-alive Agent, with the server closing the kept
 * connection between them: what the Agent does with it, and how many
 * connections the server saw.
 */
async function twoGetsAcrossAnIdleClose(network: SimulatedNetwork | null): Promise<{ keptAfterClose: number; statuses: number[]; connections: number }> {
  const accepted: net.Socket[] = [];
  const server = http.createServer(function page(_request, response) {
    response.end("hello");
  });
  server.on("connection", (socket: net.Socket) => accepted.push(socket));
  const agent = new http.Agent({ keepAlive: true });
  let origin = "http://s.test";
  if (network === null) {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  } else {
    network.listen("s.test", 80, function accept(socket) { server.emit("connection", socket); });
    agent.createConnection = function connect(options: { host?: string | null; port?: number | string | null }) {
      return network.connect({ host: options.host ?? "s.test", port: Number(options.port), secure: false, servername: null }); // as examples/18 does
    };
  }
  async function get(): Promise<number> {
    const request = http.get(`${origin}/`, { agent });
    const [response] = (await event(request, "response")) as http.IncomingMessage[];
    response.resume();
    await event(response, "end");
    return response.statusCode ?? 0;
  }
  try {
    const freed = event(agent, "free"); // The Agent frees the socket a tick after the response ends.
    const first = await get();
    const [kept] = (await freed) as net.Socket[];
    if (kept === undefined) throw new Error("the Agent freed no socket");
    const closed = event(kept, "close");
    for (const socket of accepted) socket.destroy(); // The server closes its idle connection, as its keepAliveTimeout would.
    await closed;
    const keptAfterClose = Object.values(agent.freeSockets).flat().length;
    const second = await get();
    return { keptAfterClose, statuses: [first, second], connections: accepted.length };
  } finally {
    agent.destroy();
    server.close();
  }
}

describe("node:http's keep-alive Agent over the bottle", () => {
  it("drops a kept connection the server closes and opens a new one for the next request, as on a loopback connection", async () => {
    const real = await twoGetsAcrossAnIdleClose(null);
    expect(real).toEqual({ keptAfterClose: 0, statuses: [200, 200], connections: 2 });
    expect(await twoGetsAcrossAnIdleClose(new SimulatedNetwork({ seed: 1 }))).toEqual(real);
  });
});
