import { once } from "node:events";
import http from "node:http";
import type net from "node:net";

/** A node:http server on 127.0.0.1 for the kept-connection tests of stages 1 and 2. */
export interface KeepAliveServer {
  /** Its root URL. */
  url: string;
  /** The connections it has accepted so far. */
  accepted(): number;
  /** Closes it and every connection it holds. */
  close(): void;
}

/** Answers "ok". */
function answerOk(_request: http.IncomingMessage, response: http.ServerResponse): void {
  response.end("ok");
}

/**
 * Starts a server that answers "ok" (or as `answer` does) and says
 * `Keep-Alive: timeout=N` for its `keepAliveTimeout` of N seconds (in ms
 * here), counting the connections it accepts.
 */
export async function startKeepAliveServer(keepAliveTimeout: number, answer: http.RequestListener = answerOk): Promise<KeepAliveServer> {
  let connections = 0;
  const server = http.createServer({ keepAliveTimeout }, answer);
  server.on("connection", function counted() {
    connections += 1;
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    accepted: () => connections,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
