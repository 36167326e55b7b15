/**
 * Error classes every stage shares, and the one function that names what went
 * wrong with a fetch.
 *
 * @module
 */

/**
 * Why the last attempt at a URL failed. The same fault gets the same name in
 * every stage.
 *
 * - `ConnectionRefused`: nothing listens on the port.
 * - `ConnectionReset`: the peer closed or reset the connection before sending any response byte.
 * - `HostNotFound`: the host name does not resolve, or the resolver did not answer (the record's `detail` says which).
 * - `Timeout`: the attempt (connect and whole response) took longer than `timeoutMs`, or no byte came for `idleTimeoutMs`.
 * - `BadResponse`: the bytes are not valid HTTP/1.x, the response was cut short (closed or reset after its first byte), or the body cannot be decoded (the record's `detail` says which).
 * - `BodyTooLarge`: the body is longer than `maxBodyBytes` (on the wire or once decoded).
 * - `TlsError`: the TLS handshake or certificate check failed (the record's `detail` says why: {@link errorDetail}).
 * - `NetworkError`: any other failure.
 * - `RobotsDisallowed`: the origin's `robots.txt` forbids the URL to our user agent; it was never requested (option `robots`).
 * - `RobotsUnreachable`: the origin's `robots.txt` answered a 5xx or a 429 on every attempt, so nothing there is fetched (RFC 9309 §2.3.1.4). When a failure of its own kept it from being read, the pages get that failure's name instead, and a `detail` starting `robots.txt`.
 * - `ExtractError`: the page came, and the crawl's `onPage` hook threw, rejected, or returned what is not items (the record's `detail` is its message); no link of the page is followed, and the hook is not called again.
 */
export type FetchError =
  | "ConnectionRefused"
  | "ConnectionReset"
  | "HostNotFound"
  | "Timeout"
  | "BadResponse"
  | "BodyTooLarge"
  | "TlsError"
  | "NetworkError"
  | "RobotsDisallowed"
  | "RobotsUnreachable"
  | "ExtractError";

/**
 * The names an attempt can fail with, which a stage hands to the crawl core's
 * `settle()`: every {@link FetchError} but the two `robots.txt` verdicts, which
 * only the core gives (a URL refused is never requested), and `ExtractError`,
 * which the core gives when the page hook fails. They are the
 * taxonomy that steers retries ({@link isRetryable}):
 * - {@link RetriedError}: a fault that may not happen again, tried again within `maxTries`;
 * - {@link FinalError}: the same again on every attempt, recorded at once;
 * - `HostNotFound`: retried only when the resolver did not answer (`detail` starts `EAI_AGAIN`), else final.
 *
 * A stage names a failure with {@link errorName}, which draws one line the
 * stages must agree on: a connection that breaks after the response's first
 * byte has cut the response short, a `BadResponse` (final), not a
 * `ConnectionReset` or `NetworkError` (retried) ({@link cutShort}).
 */
export type AttemptError = Exclude<FetchError, "RobotsDisallowed" | "RobotsUnreachable" | "ExtractError">;

/** The attempt errors another attempt may cure: retried within `maxTries`, after the `retryDelayMs` backoff. */
export type RetriedError = "ConnectionRefused" | "ConnectionReset" | "Timeout" | "NetworkError";

/** The attempt errors that would come again: a malformed or cut-short response, a body too large, a TLS failure. Recorded at once. */
export type FinalError = "BadResponse" | "BodyTooLarge" | "TlsError";

/** Every {@link FetchError} name, in a fixed order (used by reports). */
export const FETCH_ERRORS: readonly FetchError[] = [
  "ConnectionRefused",
  "ConnectionReset",
  "HostNotFound",
  "Timeout",
  "BadResponse",
  "BodyTooLarge",
  "TlsError",
  "NetworkError",
  "RobotsDisallowed",
  "RobotsUnreachable",
  "ExtractError",
];

/** The Future, Task or crawl was cancelled (asyncio.CancelledError). */
export class CancelledError extends Error {
  override readonly name = "CancelledError";
  constructor(message = "cancelled") {
    super(message);
  }
}

/** An operation is not allowed in the object's current state (asyncio.InvalidStateError). */
export class InvalidStateError extends Error {
  override readonly name = "InvalidStateError";
}

/**
 * A fetch failed for a reason the crawl records by name: the typed form of a
 * {@link FetchError}. The HTTP parser throws it for malformed or oversized
 * responses; the stages throw it for timeouts.
 */
export class FetchFailure extends Error {
  override readonly name = "FetchFailure";
  /** The record's `detail` when the name alone does not say enough (a proxy's refusal: {@link errorDetail}); else undefined. */
  readonly detail: string | undefined;
  constructor(
    readonly kind: AttemptError,
    message: string,
    options?: { cause?: unknown; detail?: string },
  ) {
    super(message, options);
    this.detail = options?.detail;
  }
}

const codeToError: Record<string, AttemptError> = {
  ECONNREFUSED: "ConnectionRefused",
  ECONNRESET: "ConnectionReset",
  EPIPE: "ConnectionReset",
  ECONNABORTED: "ConnectionReset",
  ENOTFOUND: "HostNotFound",
  EAI_AGAIN: "HostNotFound",
  EAI_NODATA: "HostNotFound",
  EAI_NONAME: "HostNotFound",
  ETIMEDOUT: "Timeout",
};

/**
 * The {@link FetchError} name for anything a fetch can throw: a
 * {@link FetchFailure} keeps its kind, Node system errors map by `code`
 * (`ECONNREFUSED` → `ConnectionRefused`, `ENOTFOUND` → `HostNotFound`, …),
 * TLS certificate and handshake errors become `TlsError`, the rest `NetworkError`.
 *
 * All three stages call this, so the same fault gets the same name everywhere.
 */
export function errorName(error: unknown): AttemptError {
  if (error instanceof FetchFailure) return error.kind;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") {
      const mapped = codeToError[code];
      if (mapped !== undefined) return mapped;
      if (code.startsWith("HPE_")) return "BadResponse"; // node:http's parser (llhttp): the bytes are not valid HTTP/1.x
      if (code.startsWith("ERR_TLS") || code.startsWith("ERR_SSL") || isCertificateCode(code)) {
        return "TlsError";
      }
    }
    if (/SSL|TLS|certificate/i.test(error.message)) return "TlsError";
  }
  return "NetworkError";
}

function isCertificateCode(code: string): boolean {
  return /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code);
}

/**
 * Why the last attempt failed, when its name alone does not say, as the
 * record's `detail` carries it:
 * - `TlsError`: Node's words, the code and message of the error underneath
 *   (a {@link FetchFailure}'s `cause`, if it wraps one), such as
 *   `CERT_HAS_EXPIRED: certificate has expired`,
 *   `DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate` or
 *   `ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: …`;
 * - `HostNotFound`: the resolver's code and what it means:
 *   `ENOTFOUND: the name does not resolve`, or
 *   `EAI_AGAIN: the DNS server did not answer in time (a temporary failure)`,
 *   which {@link isRetryable} tells apart;
 * - `BadResponse`: what was bad, in the words of the parser that found it
 *   (`The response was cut short in its body`, `Bad Content-Length: "x"`, …):
 *   stages 1 and 2 parse with this package's parser, stage 3 with undici's,
 *   so the words may differ between stages where the name does not.
 *
 * - a failure met at a forward proxy, of any name: the detail it carries,
 *   naming the proxy (`proxy 127.0.0.1:8888 answered 407 (Proxy
 *   Authentication Required) to CONNECT example.com:443`, `proxy
 *   127.0.0.1:8888: connect ECONNREFUSED 127.0.0.1:8888`; src/http/proxy.ts).
 * Null for every other error: their names say enough.
 */
export function errorDetail(error: unknown): string | null {
  const given = givenDetail(error);
  if (given !== null) return given; // A failure met at a proxy names it (http/proxy.ts).
  const name = errorName(error);
  if (name === "BadResponse") return badResponseDetail(error);
  if (name !== "TlsError" && name !== "HostNotFound") return null;
  let inner = error;
  while (inner instanceof FetchFailure && inner.cause instanceof Error) inner = inner.cause;
  if (!(inner instanceof Error)) return null;
  const code = (inner as { code?: unknown }).code;
  if (name === "HostNotFound") return typeof code === "string" ? dnsDetail(code) : null;
  return typeof code === "string" && !inner.message.startsWith(code) ? `${code}: ${inner.message}` : inner.message;
}

/** The `detail` an error carries itself, or one it wraps (a {@link FetchFailure}'s `cause`): set by a failure met at a proxy. */
function givenDetail(error: unknown): string | null {
  for (let inner = error, depth = 0; inner instanceof Error && depth < 4; inner = inner.cause, depth += 1) {
    if ("detail" in inner && typeof inner.detail === "string") return inner.detail;
  }
  return null;
}

/** The `detail` of a `BadResponse`: the message of the outermost error that says what was bad. */
function badResponseDetail(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  return error.message === "" ? null : error.message;
}

/** What each resolver code of a `HostNotFound` means. */
const DNS_CODES: Readonly<Record<string, string>> = {
  ENOTFOUND: "the name does not resolve",
  EAI_NONAME: "the name does not resolve",
  EAI_NODATA: "the name has no address",
  EAI_AGAIN: "the DNS server did not answer in time (a temporary failure)",
};

function dnsDetail(code: string): string {
  return `${code}: ${DNS_CODES[code] ?? "the name could not be resolved"}`;
}

/** The hint for a host that does not resolve or a port that refuses, met reading robots.txt: `--ignore-robots` would not help. */
const UNREACHABLE_ORIGIN = "the origin cannot be reached, so its pages would fail the same way: robots.txt is only where that was met first";

/**
 * The hint a person reading a failure needs, or null when there is none to
 * give: for a `TlsError` by its `detail` (`--ca FILE` for a certificate whose
 * issuer is unknown or that signed itself; for an expired one, that only
 * its owner can renew it; `--insecure` only as a last resort); for a failure
 * that kept robots.txt from being read (a `detail` starting `robots.txt`),
 * `--ignore-robots`, except for a host that does not resolve or a port that
 * refuses, which no flag gets past: that the origin cannot be reached.
 * The names are the `crawl` command's flags.
 */
export function errorHint(error: FetchError, detail: string | null): string | null {
  if (detail === null) return null;
  if (detail.startsWith("robots.txt")) {
    if (error === "HostNotFound" || error === "ConnectionRefused") return UNREACHABLE_ORIGIN;
    const tls = error === "TlsError" ? errorHint(error, detail.slice(detail.indexOf(": ") + 2)) : null;
    const ignore = "--ignore-robots crawls the origin without its robots.txt";
    return tls === null ? ignore : `${tls}; or ${ignore}`;
  }
  if (error !== "TlsError") return null;
  if (/CERT_HAS_EXPIRED|CERT_NOT_YET_VALID/.test(detail)) return "the server's certificate is out of its validity dates, which only its owner can fix; --insecure skips the check, as a last resort";
  if (/SELF_SIGNED|UNABLE_TO_VERIFY_LEAF|UNABLE_TO_GET_ISSUER|unable to get (?:local )?issuer/i.test(detail)) return "to trust a private CA or a self-signed certificate use --ca FILE, or --insecure";
  if (/ALTNAME/.test(detail)) return "the certificate names another host; --insecure skips the check, as a last resort";
  return "--insecure skips the certificate check, as a last resort";
}

/**
 * The failure to record for `error`, thrown while reading a response of which
 * `received` bytes had come: once a response has begun, a connection that
 * breaks (reset, closed by TLS, …) has cut it short, which is `BadResponse`,
 * as when the server closes too soon; before its first byte, `error` stays
 * what it is (`ConnectionReset`, …). A {@link FetchFailure} (a bad or too
 * large response), a `Timeout` and a {@link CancelledError} stay what they are.
 * Stages 1 and 2 call it where their reads fail; stage 3's client draws the
 * same line with undici's `onResponseStarted`.
 */
export function cutShort(error: unknown, received: number): unknown {
  if (received === 0 || error instanceof FetchFailure || error instanceof CancelledError || errorName(error) === "Timeout") return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FetchFailure("BadResponse", `The connection failed after ${received} response bytes: ${message}`, { cause: error });
}

/**
 * Whether another attempt may help. Network faults are retried up to
 * `maxTries`; a response that was malformed or too large would be the same
 * again, so it is recorded at once, as is a certificate or handshake failure,
 * and a name that does not resolve: only a resolver that did not answer
 * (`EAI_AGAIN`, in `detail`: {@link errorDetail}) may answer next time.
 */
export function isRetryable(error: FetchError, detail: string | null = null): boolean {
  if (error === "HostNotFound") return detail?.startsWith("EAI_AGAIN") === true;
  return error !== "BadResponse" && error !== "BodyTooLarge" && error !== "TlsError";
}

/**
 * What an event loop does with an exception a callback threw: hands it to
 * `handler` with the callback, or, with no handler (or one that throws
 * itself), logs it with the callback's name and goes on, as asyncio's
 * `call_exception_handler` and `default_exception_handler` do. Stage 2's
 * EventLoop calls it.
 */
export function reportCallbackError(handler: ((error: unknown, callback: () => void) => void) | null, error: unknown, callback: () => void): void {
  if (handler === null) return logCallbackError(error, callback);
  try {
    handler(error, callback);
  } catch (handlerError) {
    logCallbackError(handlerError, handler);
  }
}

/** Logs an exception `callback` threw (or an exception handler, given as `callback`), with its name. */
function logCallbackError(error: unknown, callback: object): void {
  const name = typeof callback === "function" && callback.name !== "" ? callback.name : "anonymous";
  console.error(`Exception in callback ${name}:`, error);
}
