/**
 * Example 02's two polling functions, against a real server on 127.0.0.1.
 * They are the workshop's first exercise (`npm run learn -- 1`): these
 * checks run against the learner's copy too.
 */
import { once } from "node:events";
import { createServer, type Server, type Socket as ServerSocket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, it } from "vitest";
import { receiveByPolling, sendByPolling } from "../../examples/02-nonblocking-busy-loop.js";
import { ResponseParser } from "../../src/http/parser.js";
import { connect } from "../../src/kernel/socket.js";

const REQUEST = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.close();
    await once(server, "close");
  }
});

/** A server that answers every request with `reply` once it has read the request's head, then closes. */
async function serverReplying(reply: string): Promise<{ url: URL; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer(function answer(socket: ServerSocket) {
    let received = "";
    socket.setEncoding("latin1").on("data", function read(chunk: string) {
      received += chunk;
      if (!received.includes("\r\n\r\n")) return;
      requests.push(received);
      socket.end(reply);
    });
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/`), requests };
}

describe("polling a non-blocking socket (example 02)", () => {
  it("sends the request once the connection is up, after polls that found it still connecting", async ({ expect }) => {
    const { url, requests } = await serverReplying("HTTP/1.1 204 No Content\r\n\r\n");
    const socket = connect(url);
    try {
      const polls = await sendByPolling(socket, REQUEST);
      expect(polls).toBeGreaterThan(0); // connect() only starts the connection: the first try would block
      await receiveByPolling(socket, new ResponseParser({ maxBodyBytes: 1024 }));
      expect(requests).toEqual([new TextDecoder().decode(REQUEST)]);
    } finally {
      socket.destroy();
    }
  });

  it("reads a whole response by polling, counting the tries that found nothing", async ({ expect }) => {
    const { url } = await serverReplying("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    const socket = connect(url);
    try {
      await sendByPolling(socket, REQUEST);
      const parser = new ResponseParser({ maxBodyBytes: 1024 });
      const polls = await receiveByPolling(socket, parser);
      expect(polls).toBeGreaterThan(0); // the reply cannot be there on the first try, in the turn the request was sent
      expect(parser.done).toBe(true);
      const response = parser.response();
      expect([response.status, Buffer.from(response.body).toString()]).toEqual([200, "hello"]);
    } finally {
      socket.destroy();
    }
  });

  it("reads a body that ends when the server closes, feeding the parser the end of the stream", async ({ expect }) => {
    const { url } = await serverReplying("HTTP/1.0 200 OK\r\n\r\nuntil the end");
    const socket = connect(url);
    try {
      await sendByPolling(socket, REQUEST);
      const parser = new ResponseParser({ maxBodyBytes: 1024 });
      await receiveByPolling(socket, parser);
      expect(Buffer.from(parser.response().body).toString()).toBe("until the end");
    } finally {
      socket.destroy();
    }
  });

  it("polls as long as the reply takes, with no cap on the tries: 3,000 of Node's turns", async ({ expect }) => {
    // A loop capped at 1,000 polls passed the other checks (the demo page takes about 650): this server answers
    // only after 3,000 turns of Node's loop, counted with setImmediate as the polling is.
    const server = createServer(function answerLate(socket: ServerSocket) {
      socket.once("data", function requested() {
        let turns = 0;
        setImmediate(function turn() {
          if (++turns < 3_000) setImmediate(turn);
          else socket.end("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate");
        });
      });
    });
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const socket = connect(new URL(`http://127.0.0.1:${port}/`));
    try {
      await sendByPolling(socket, REQUEST);
      const parser = new ResponseParser({ maxBodyBytes: 1024 });
      const polls = await receiveByPolling(socket, parser);
      expect(parser.done, "receiveByPolling gave up before the reply came").toBe(true);
      expect(Buffer.from(parser.response().body).toString()).toBe("late");
      expect(polls).toBeGreaterThan(1_000);
    } finally {
      socket.destroy();
    }
  });

  it("throws the connection's own error when nothing listens, instead of polling for ever", async ({ expect }) => {
    const { url } = await serverReplying("");
    servers[0]?.close(); // the port is free again: the connection will be refused
    await once(servers[0] as Server, "close");
    servers.length = 0;
    const socket = connect(url);
    try {
      await expect(sendByPolling(socket, REQUEST)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    } finally {
      socket.destroy();
    }
  });
});
