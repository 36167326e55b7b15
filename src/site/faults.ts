/**
 * The ways the fixture site misbehaves on purpose, each a route handler.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** A route: called once per request for its path, like a `node:http` request listener. */
export type RouteHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A scripted fault, served by {@link faultHandler} (and `FixtureSite#addFault`).
 *
 * - `drop`: destroys the connection before a byte of the response is sent
 *   (the crawler sees `ConnectionReset`).
 * - `silent`: reads the request and never answers; the connection stays open
 *   until the client gives up or the site closes (`Timeout`).
 * - `drip`: a 200 whose body arrives `bytesPerTick` bytes every `intervalMs`
 *   (default 1 byte every 10 ms), Content-Length declared.
 * - `raw`: writes `bytes` straight onto the socket, bypassing Node's response
 *   writer, then closes it: for malformed responses. A string is sent as
 *   Latin-1, one byte per character, so any byte can be written.
 * - `reset`: writes `bytes` like `raw`, then, `afterMs` later (default 0),
 *   resets the connection (a TCP RST, `socket.resetAndDestroy()`) instead of
 *   closing it: a response cut short by a reset, not by an end of stream.
 * - `huge`: a 200 whose body is `bytes` long, streamed in 16 KiB writes as
 *   the client reads; with `declared` (the default) the length is announced
 *   in Content-Length, otherwise the body is chunked.
 *
 * Each works on a keep-alive connection too: `drop`, `raw` and `reset` close
 * the connection they arrived on, `silent` holds it.
 */
export type Fault =
  | { readonly kind: "drop" }
  | { readonly kind: "silent" }
  | {
      readonly kind: "drip";
      readonly body: string | Uint8Array;
      readonly bytesPerTick?: number;
      readonly intervalMs?: number;
      readonly contentType?: string;
    }
  | { readonly kind: "raw"; readonly bytes: string | Uint8Array }
  | { readonly kind: "reset"; readonly bytes: string | Uint8Array; readonly afterMs?: number }
  | { readonly kind: "huge"; readonly bytes: number; readonly declared?: boolean; readonly contentType?: string };

const HUGE_CHUNK = Buffer.alloc(16 * 1024, "x");

/** The route handler that serves `fault`. */
export function faultHandler(fault: Fault): RouteHandler {
  switch (fault.kind) {
    case "drop":
      return function dropConnection(request) {
        request.socket.destroy();
      };
    case "silent":
      return function neverAnswer() {
        // Nothing: the site's close() destroys the connection if the client does not.
      };
    case "drip":
      return dripHandler(fault);
    case "raw": {
      const bytes = typeof fault.bytes === "string" ? Buffer.from(fault.bytes, "latin1") : fault.bytes;
      return function writeRawBytes(request) {
        // Written, then closed both ways: no later request is read on this connection.
        request.socket.end(bytes, () => request.socket.destroy());
      };
    }
    case "reset":
      return resetHandler(typeof fault.bytes === "string" ? Buffer.from(fault.bytes, "latin1") : fault.bytes, fault.afterMs ?? 0);
    case "huge":
      return hugeHandler(fault.bytes, fault.declared ?? true, fault.contentType ?? "text/html; charset=utf-8");
  }
}

function dripHandler(fault: Extract<Fault, { kind: "drip" }>): RouteHandler {
  const body = typeof fault.body === "string" ? Buffer.from(fault.body) : Buffer.from(fault.body);
  const step = fault.bytesPerTick ?? 1;
  const intervalMs = fault.intervalMs ?? 10;
  return function dripBody(_request, response) {
    response.writeHead(200, {
      "Content-Type": fault.contentType ?? "text/html; charset=utf-8",
      "Content-Length": String(body.length),
    });
    let sent = 0;
    const timer = setInterval(function sendNextBytes() {
      response.write(body.subarray(sent, sent + step));
      sent += step;
      if (sent >= body.length) {
        clearInterval(timer);
        response.end();
      }
    }, intervalMs);
    response.once("close", function stopDripping() {
      clearInterval(timer);
    });
  };
}

function resetHandler(bytes: Uint8Array, afterMs: number): RouteHandler {
  return function writeThenReset(request) {
    const socket = request.socket;
    socket.write(bytes);
    const timer = setTimeout(function resetConnection() {
      if (!socket.destroyed) socket.resetAndDestroy();
    }, afterMs);
    socket.once("close", function stopWaiting() {
      clearTimeout(timer);
    });
  };
}

function hugeHandler(total: number, declared: boolean, contentType: string): RouteHandler {
  return function streamHugeBody(_request, response) {
    const headers: Record<string, string> = { "Content-Type": contentType };
    if (declared) headers["Content-Length"] = String(total);
    response.writeHead(200, headers);
    let sent = 0;
    function writeUntilFull(): void {
      while (sent < total && !response.destroyed) {
        const chunk = HUGE_CHUNK.subarray(0, Math.min(HUGE_CHUNK.length, total - sent));
        sent += chunk.length;
        if (!response.write(chunk)) {
          response.once("drain", writeUntilFull); // the client reads slower than we write
          return;
        }
      }
      if (sent >= total && !response.destroyed) response.end();
    }
    writeUntilFull();
  };
}
