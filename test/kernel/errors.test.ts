import net from "node:net";
import tls from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { CancelledError, cutShort, errorDetail, errorHint, errorName, FetchFailure, InvalidStateError, isRetryable, type AttemptError } from "../../src/kernel/errors.js";
import { FETCH_ERRORS } from "../../src/crawl/records.js";

/** Servers opened by a test, closed after it. */
const servers: net.Server[] = [];
/** Sockets the servers accepted, destroyed after the test so close() need not wait for them. */
const accepted = new Set<net.Socket>();

afterEach(async () => {
  for (const socket of accepted) socket.destroy();
  accepted.clear();
  await Promise.all(servers.splice(0).map(closeServer));
});

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
  });
}

/** Starts a loopback TCP server that hands each connection to `onConnection`; resolves with its port. */
function listen(onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer(function accept(socket) {
    accepted.add(socket);
    onConnection(socket);
  });
  servers.push(server);
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });
}

/** A port on 127.0.0.1 that was just free: listened on, then closed. */
async function closedPort(): Promise<number> {
  const port = await listen(() => {});
  await Promise.all(servers.splice(0).map(closeServer));
  return port;
}

/** The error a real socket emits. */
function socketError(socket: net.Socket): Promise<Error> {
  return new Promise((resolve) => {
    socket.once("error", resolve);
  });
}

/** An Error with a Node-style `code`, like the ones the dns and tls modules throw. */
function systemError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe("errorName", () => {
  it("names a real refused connection ConnectionRefused", async () => {
    const port = await closedPort();
    const error = await socketError(net.connect(port, "127.0.0.1"));
    expect(error).toMatchObject({ code: "ECONNREFUSED" });
    expect(errorName(error)).toBe("ConnectionRefused");
  });

  it("names a real reset connection ConnectionReset", async () => {
    const port = await listen(function resetAtOnce(socket) {
      socket.resetAndDestroy();
    });
    const socket = net.connect(port, "127.0.0.1");
    const error = await socketError(socket);
    expect(error).toMatchObject({ code: "ECONNRESET" });
    expect(errorName(error)).toBe("ConnectionReset");
  });

  it("names a real failed TLS handshake TlsError", async () => {
    const port = await listen(function answerInPlainText(socket) {
      socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    const socket = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: true });
    const error = await socketError(socket);
    socket.destroy();
    expect(errorName(error)).toBe("TlsError");
  });

  it.each([
    ["EPIPE", "ConnectionReset"],
    ["ECONNABORTED", "ConnectionReset"],
    ["ENOTFOUND", "HostNotFound"],
    ["EAI_AGAIN", "HostNotFound"],
    ["EAI_NODATA", "HostNotFound"],
    ["EAI_NONAME", "HostNotFound"],
    ["ETIMEDOUT", "Timeout"],
  ])("maps the system error code %s to %s", (code, name) => {
    expect(errorName(systemError(code, `${code} somewhere`))).toBe(name);
  });

  it.each([
    ["ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames"],
    ["DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"],
    ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate"],
    ["CERT_HAS_EXPIRED", "certificate has expired"],
    ["ERR_SSL_WRONG_VERSION_NUMBER", "wrong version number"],
  ])("maps the certificate or handshake code %s to TlsError", (code, message) => {
    expect(errorName(systemError(code, message))).toBe("TlsError");
  });

  it("maps an error without code but with a TLS message to TlsError", () => {
    expect(errorName(new Error("Client network socket disconnected before secure TLS connection was established"))).toBe(
      "TlsError",
    );
  });

  it.each(FETCH_ERRORS.filter((kind): kind is AttemptError => !kind.startsWith("Robots")))("keeps the kind %s of a FetchFailure", (kind) => {
    expect(errorName(new FetchFailure(kind, "it failed"))).toBe(kind);
  });

  it("names node:http's parser errors (HPE_…) BadResponse, with the parser's words as detail", () => {
    const parseError = systemError("HPE_INVALID_CONSTANT", "Parse Error: Expected HTTP/");
    expect(errorName(parseError)).toBe("BadResponse");
    expect(errorDetail(parseError)).toBe("Parse Error: Expected HTTP/");
  });

  it("names anything else NetworkError", () => {
    const others: unknown[] = [
      new Error("boom"),
      new TypeError("x is not a function"),
      systemError("EHOSTUNREACH", "no route to host"),
      new CancelledError(),
      "a thrown string",
      undefined,
      null,
      { code: "ECONNREFUSED" },
    ];
    for (const other of others) expect(errorName(other), String(other)).toBe("NetworkError");
  });
});

describe("errorDetail", () => {
  it("gives a TLS certificate error's code and message", () => {
    expect(errorDetail(systemError("CERT_HAS_EXPIRED", "certificate has expired"))).toBe("CERT_HAS_EXPIRED: certificate has expired");
    expect(errorDetail(systemError("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"))).toBe(
      "DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate",
    );
  });

  it("looks through the FetchFailures that wrap it, as stage 3's client wraps undici's errors", () => {
    const cause = systemError("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate");
    const wrapped = new FetchFailure("TlsError", "unable to verify the first certificate", { cause });
    expect(errorDetail(wrapped)).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate");
  });

  it("does not repeat a code the message already starts with, and gives a codeless TLS error's message", () => {
    expect(errorDetail(systemError("ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_WRONG_VERSION_NUMBER: wrong version number"))).toBe(
      "ERR_SSL_WRONG_VERSION_NUMBER: wrong version number",
    );
    const codeless = new Error("Client network socket disconnected before secure TLS connection was established");
    expect(errorDetail(codeless)).toBe(codeless.message);
  });

  it("is null for every error whose name says enough", () => {
    const others: unknown[] = [
      systemError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"),
      systemError("ETIMEDOUT", "no byte for 100 ms"),
      new FetchFailure("BodyTooLarge", "too large"),
      new FetchFailure("TlsError", "a TlsError with nothing underneath"),
      new Error("boom"),
      "a thrown string",
    ];
    expect(others.map(errorDetail)).toEqual([null, null, null, "a TlsError with nothing underneath", null, null]);
  });

  it("says what was bad in a BadResponse", () => {
    expect(errorDetail(new FetchFailure("BadResponse", "Bad Content-Length: \"x\""))).toBe("Bad Content-Length: \"x\"");
  });

  it("tells a name that does not resolve from a resolver that did not answer", () => {
    expect(errorDetail(systemError("ENOTFOUND", "getaddrinfo ENOTFOUND a.invalid"))).toBe("ENOTFOUND: the name does not resolve");
    const wrapped = new FetchFailure("HostNotFound", "getaddrinfo EAI_AGAIN a.test", { cause: systemError("EAI_AGAIN", "getaddrinfo EAI_AGAIN a.test") });
    expect(errorDetail(wrapped)).toBe("EAI_AGAIN: the DNS server did not answer in time (a temporary failure)");
  });
});

describe("errorHint", () => {
  it("suggests --ca for an unknown issuer or a self-signed certificate", () => {
    for (const detail of ["DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate", "UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY: unable to get local issuer certificate"]) {
      expect(errorHint("TlsError", detail), detail).toContain("--ca FILE");
    }
  });

  it("says an expired certificate is the server's to fix, with --insecure as a last resort, and no --ca", () => {
    const hint = errorHint("TlsError", "CERT_HAS_EXPIRED: certificate has expired");
    expect(hint).toContain("--insecure skips the check, as a last resort");
    expect(hint).not.toContain("--ca");
  });

  it("gives a robots.txt failure the hint of its own, and --ignore-robots", () => {
    const expired = errorHint("TlsError", "robots.txt https://x.test/robots.txt could not be read (1 attempt): CERT_HAS_EXPIRED: certificate has expired");
    expect(expired).toMatch(/^the server's certificate is out of its validity dates.*; or --ignore-robots crawls the origin without its robots.txt$/);
    expect(errorHint("ConnectionRefused", "robots.txt http://x.test/robots.txt could not be read (4 attempts): ConnectionRefused")).toBe("the origin cannot be reached, so its pages would fail the same way: robots.txt is only where that was met first");
  });

  it("gives no hint without a detail, nor for a BadResponse", () => {
    expect(errorHint("TlsError", null)).toBeNull();
    expect(errorHint("BadResponse", "Bad Content-Length: \"x\"")).toBeNull();
  });
});

describe("cutShort", () => {
  it("makes a broken connection after the first response byte a BadResponse, keeping the error as its cause", () => {
    const reset = systemError("ECONNRESET", "read ECONNRESET");
    const failure = cutShort(reset, 25);
    expect(failure).toBeInstanceOf(FetchFailure);
    expect(errorName(failure)).toBe("BadResponse");
    expect(failure).toMatchObject({ cause: reset });
    expect(errorName(cutShort(systemError("EPROTO", "bad record mac"), 1))).toBe("BadResponse");
  });

  it("leaves an error before any response byte as it is", () => {
    const reset = systemError("ECONNRESET", "read ECONNRESET");
    expect(cutShort(reset, 0)).toBe(reset);
  });

  it("leaves a timeout, a FetchFailure and a cancellation as they are, whatever came before", () => {
    const kept = [systemError("ETIMEDOUT", "idle"), new FetchFailure("BodyTooLarge", "big"), new CancelledError()];
    for (const error of kept) expect(cutShort(error, 100)).toBe(error);
  });
});

describe("isRetryable", () => {
  it("retries the network faults", () => {
    for (const kind of ["ConnectionRefused", "ConnectionReset", "Timeout", "NetworkError"] as const) {
      expect(isRetryable(kind), kind).toBe(true);
    }
  });

  it("retries a HostNotFound only when the resolver did not answer (EAI_AGAIN)", () => {
    expect(isRetryable("HostNotFound", "EAI_AGAIN: the DNS server did not answer in time (a temporary failure)")).toBe(true);
    expect(isRetryable("HostNotFound", "ENOTFOUND: the name does not resolve")).toBe(false);
    expect(isRetryable("HostNotFound")).toBe(false);
  });

  it("does not retry what would fail the same way again", () => {
    for (const kind of ["BadResponse", "BodyTooLarge", "TlsError"] as const) {
      expect(isRetryable(kind), kind).toBe(false);
    }
  });
});

describe("FetchFailure", () => {
  it("carries its kind, message and cause", () => {
    const cause = new Error("inner");
    const failure = new FetchFailure("BadResponse", "bad status line", { cause });
    expect(failure).toBeInstanceOf(Error);
    expect(failure).toMatchObject({ name: "FetchFailure", kind: "BadResponse", message: "bad status line", cause });
  });
});

describe("CancelledError", () => {
  it("is an Error named CancelledError with a default message", () => {
    const error = new CancelledError();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("CancelledError");
    expect(error.message).toBe("cancelled");
    expect(String(new CancelledError("worker stopped"))).toBe("CancelledError: worker stopped");
  });
});

describe("InvalidStateError", () => {
  it("is an Error named InvalidStateError", () => {
    const error = new InvalidStateError("result() called while pending");
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toBe("InvalidStateError: result() called while pending");
  });
});
