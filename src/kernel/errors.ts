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
 * - `HostNotFound`: the host name does not resolve.
 * - `Timeout`: the attempt (connect and whole response) took longer than `timeoutMs`.
 * - `BadResponse`: the bytes are not valid HTTP/1.x, the response was cut short, or the body cannot be decoded.
 * - `BodyTooLarge`: the body is longer than `maxBodyBytes` (on the wire or once decoded).
 * - `TlsError`: the TLS handshake or certificate check failed.
 * - `NetworkError`: any other failure.
 */
export type FetchError =
  | "ConnectionRefused"
  | "ConnectionReset"
  | "HostNotFound"
  | "Timeout"
  | "BadResponse"
  | "BodyTooLarge"
  | "TlsError"
  | "NetworkError";

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
  constructor(
    readonly kind: FetchError,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const codeToError: Record<string, FetchError> = {
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
export function errorName(error: unknown): FetchError {
  if (error instanceof FetchFailure) return error.kind;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") {
      const mapped = codeToError[code];
      if (mapped !== undefined) return mapped;
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
 * Whether another attempt may help. Network faults are retried up to
 * `maxTries`; a response that was malformed or too large would be the same
 * again, so it is recorded at once.
 */
export function isRetryable(error: FetchError): boolean {
  return error !== "BadResponse" && error !== "BodyTooLarge" && error !== "TlsError";
}
