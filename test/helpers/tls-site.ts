/**
 * An https site on 127.0.0.1 with one of the certificates in
 * test/fixtures/tls/ (see its README): for the tests of `ca`,
 * `rejectUnauthorized` and the `detail` of a `TlsError`.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { linksHtml } from "../../src/site/html.js";

/** The fixtures folder. */
const TLS_FIXTURES = new URL("../fixtures/tls/", import.meta.url);

/** The private CA that signed `localhost.pem`, `expired.pem` and `other-host.pem`, as PEM text. */
export const TEST_CA = readFileSync(new URL("ca.pem", TLS_FIXTURES), "utf8");

/** The certificates a {@link TlsSite} can serve, by file name without `.pem`. */
export type TestCertificate = "localhost" | "expired" | "other-host" | "self-signed";

/** A running https site: `/` links to `/a`, which links nowhere; every other path is a 404. */
export interface TlsSite {
  /** `https://127.0.0.1:PORT/`. */
  url: string;
  /** TCP connections accepted so far (a handshake that fails still counts one). */
  readonly connections: number;
  /** The name each finished handshake asked for by SNI, in order ("" for none). */
  readonly servernames: readonly string[];
  /** Stops the site, closing every connection still open. */
  close(): Promise<void>;
}

/** Starts an https server on 127.0.0.1 with `certificate` and the fixtures' key. */
export async function startTlsSite(certificate: TestCertificate): Promise<TlsSite> {
  const server: Server = createServer(
    { key: readFileSync(new URL("server.key.pem", TLS_FIXTURES)), cert: readFileSync(new URL(`${certificate}.pem`, TLS_FIXTURES)) },
    function answer(request, response) {
      const links = request.url === "/" ? ["/a"] : request.url === "/a" ? [] : null;
      if (links === null) {
        response.writeHead(404, { "Content-Type": "text/plain" }).end("Not found\n");
        return;
      }
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(linksHtml(links));
    },
  );
  let connections = 0;
  server.on("connection", function countConnection(socket: Socket) {
    connections += 1;
    socket.on("error", function ignoreReset() {});
  });
  const servernames: string[] = [];
  server.on("secureConnection", function noteServername(socket: TLSSocket) {
    servernames.push(typeof socket.servername === "string" ? socket.servername : "");
  });
  server.on("tlsClientError", function ignoreRefusedHandshake() {}); // The crawler refused our certificate: the point of the test.
  await new Promise<void>(function listen(resolve) {
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo; // listening on TCP, so an AddressInfo
  return {
    url: `https://127.0.0.1:${port}/`,
    get connections() {
      return connections;
    },
    servernames,
    close() {
      server.closeAllConnections();
      return new Promise<void>(function close(resolve) {
        server.close(function closed() {
          resolve();
        });
      });
    },
  };
}
