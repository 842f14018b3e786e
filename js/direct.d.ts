// Types of direct.js: the prover in the calling thread (a Web Worker).
import type { NotarizeOptions, NotarizeResult, PreparedSession } from "./index.js";
export type {
  ByteRange, RevealChoice, RevealOptions, Phase, Progress, NotarizeOptions, DirectionResult, NotarizeResult, ErrorCode,
  PresentationErrorReason, SignedAttestation, AttestationSecrets, AttestedSession, PreparedSession,
} from "./index.js";
export {
  TlsproofError, BadOptionsError, VerifierUnreachableError, VerifierRejectedError, ServerNotAllowedError,
  ServerNameMismatchError, ServerUnreachableError, ProxyUnreachableError, BusyError, LimitExceededError, TimeoutError, AbortError, TlsError,
  ConnectionLostError, ProtocolError,
  NotIsolatedError, WorkerStartError, InternalError, BadAttestationError, SessionClosedError, StatementFalseError, PresentationError, errorFromCode,
  toTlsproofError,
} from "./index.js";

export function defaultThreads(): number;
/** How long the thread pool may take to start by default (ms). */
export const DEFAULT_START_TIMEOUT_MS: number;
/**
 * Loads the wasm and starts its thread pool (once); needs crossOriginIsolated. Rejects with
 * WorkerStartError if a thread worker fails to load or start, and with TimeoutError if the
 * workers are not up within `startTimeoutMs` (default 30 s); a later call after a timeout waits
 * for the same start again.
 */
export function initProver(config?: { threads?: number; wasmUrl?: string | URL; startTimeoutMs?: number }): Promise<void>;
export function notarize(options: NotarizeOptions): Promise<NotarizeResult>;
/** Prepares a session in this thread (see index.d.ts's `Prover.prepare`). */
export function prepare(options: NotarizeOptions): Promise<PreparedSession>;
