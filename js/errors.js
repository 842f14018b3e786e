// Errors of the tlsproof package: one subclass per stable `code`, so callers can branch with
// `instanceof` or on `err.code` alike.

export class TlsproofError extends Error {
  /** @param {string} code @param {string} message @param {ErrorOptions} [options] */
  constructor(code, message, options) {
    super(message, options);
    this.name = "TlsproofError";
    this.code = code;
  }
}

const make = (code, name) => class extends TlsproofError {
  constructor(message, options) {
    super(code, message, options);
    this.name = name;
  }
};

export const BadOptionsError = make("BAD_OPTIONS", "BadOptionsError");
export const VerifierUnreachableError = make("VERIFIER_UNREACHABLE", "VerifierUnreachableError");
export const VerifierRejectedError = make("VERIFIER_REJECTED", "VerifierRejectedError");
export const ServerNotAllowedError = make("SERVER_NOT_ALLOWED", "ServerNotAllowedError");
export const ServerNameMismatchError = make("SERVER_NAME_MISMATCH", "ServerNameMismatchError");
export const ServerUnreachableError = make("SERVER_UNREACHABLE", "ServerUnreachableError");
export const ProxyUnreachableError = make("PROXY_UNREACHABLE", "ProxyUnreachableError");
/** The verifier is serving as many sessions as it can; `retryAfter` is its hint, in seconds. */
export class BusyError extends TlsproofError {
  /** @param {string} message @param {ErrorOptions & {retryAfter?: number}} [options] */
  constructor(message, options) {
    super("BUSY", message, options);
    this.name = "BusyError";
    this.retryAfter = options?.retryAfter;
  }
}
export const LimitExceededError = make("LIMIT_EXCEEDED", "LimitExceededError");
export const TimeoutError = make("TIMEOUT", "TimeoutError");
// Named like the DOM's abort errors, so `err.name === "AbortError"` checks keep working.
export const AbortError = make("ABORTED", "AbortError");
export const TlsError = make("TLS_ERROR", "TlsError");
export const ConnectionLostError = make("CONNECTION_LOST", "ConnectionLostError");
export const ProtocolError = make("PROTOCOL_ERROR", "ProtocolError");
export const NotIsolatedError = make("NOT_ISOLATED", "NotIsolatedError");
/** A worker of the prover (its main worker or a thread) failed to load or start. */
export const WorkerStartError = make("WORKER_START_FAILED", "WorkerStartError");
export const InternalError = make("INTERNAL", "InternalError");
/** The verifier's attestation does not verify, or does not state the verdict it sent. */
export const BadAttestationError = make("BAD_ATTESTATION", "BadAttestationError");
/** A statement of `reveal.prove` or `reveal.proveRequest` is false for its value (checked before the proof). */
export const StatementFalseError = make("STATEMENT_FALSE", "StatementFalseError");
/** A prepared session notarizes once: this one was used, closed or failed. */
export const SessionClosedError = make("SESSION_CLOSED", "SessionClosedError");

/**
 * A presentation or attestation refused, or a presentation that cannot be built (attestation.js).
 * `reason` names the check that failed, as the Rust error variants do (`"NotAttested"`, …).
 */
export class PresentationError extends TlsproofError {
  /** @param {string} message @param {ErrorOptions & {reason?: string}} [options] */
  constructor(message, options) {
    super("BAD_PRESENTATION", message, options);
    this.name = "PresentationError";
    this.reason = options?.reason;
  }
}

const byCode = Object.fromEntries([
  BadOptionsError, VerifierUnreachableError, VerifierRejectedError, ServerNotAllowedError,
  ServerNameMismatchError, ServerUnreachableError, ProxyUnreachableError, BusyError, LimitExceededError, TimeoutError, AbortError, TlsError,
  ConnectionLostError, ProtocolError, NotIsolatedError, WorkerStartError, InternalError, BadAttestationError, SessionClosedError,
  StatementFalseError, PresentationError,
].map((C) => [new C("").code, C]));

/** The error class for `code` (`TlsproofError` itself for codes this version does not know). */
export function errorFromCode(code, message, options) {
  const C = byCode[code];
  return C ? new C(message, options) : new TlsproofError(String(code), message, options);
}

/** Turns whatever was thrown (the wasm module's `{code, message}` errors included) into a TlsproofError. */
export function toTlsproofError(e) {
  if (e instanceof TlsproofError) return e;
  if (e && typeof e.code === "string" && typeof e.message === "string") {
    return errorFromCode(e.code, e.message, typeof e.retryAfter === "number" ? { retryAfter: e.retryAfter } : undefined);
  }
  if (e && e.name === "AbortError") return new AbortError(e.message || "aborted by the caller");
  return new InternalError(String(e && e.message || e), { cause: e });
}
