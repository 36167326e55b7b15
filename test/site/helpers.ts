import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";

/** A response as a plain client saw it. */
export interface ClientResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** GET `url` with node:http (a fresh connection, closed after). */
export function get(url: string): Promise<ClientResponse> {
  return new Promise(function send(resolve, reject) {
    const request = httpRequest(url, { agent: false }, function onResponse(response) {
      const chunks: Buffer[] = [];
      response.on("data", function onData(chunk: Buffer) {
        chunks.push(chunk);
      });
      response.on("end", function onEnd() {
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end();
  });
}

/** What a raw socket received for a request, and how the connection ended. */
export interface RawExchange {
  bytes: Buffer;
  /** "end" when the server closed cleanly, "error" when the socket errored (reset). */
  ending: "end" | "error";
}

/** Sends `request` bytes on a raw TCP connection and collects every byte until the server closes. */
export function rawExchange(port: number, request: string): Promise<RawExchange> {
  return new Promise(function exchange(resolve) {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let ending: "end" | "error" = "end";
    socket.on("data", function onData(chunk: Buffer) {
      chunks.push(chunk);
    });
    socket.on("error", function onError() {
      ending = "error";
    });
    socket.on("close", function onClose() {
      resolve({ bytes: Buffer.concat(chunks), ending });
    });
    socket.write(request);
  });
}

/** The request bytes for GET `path`, keep-alive unless `close`. */
export function getRequest(path: string, close = false): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: ${close ? "close" : "keep-alive"}\r\n\r\n`;
}
