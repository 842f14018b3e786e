// Types of direct.js: the prover in the calling thread (a Web Worker).
import type { NotarizeOptions, NotarizeResult } from "./index.js";
export type {
  ByteRange, RevealChoice, RevealOptions, Phase, Progress, NotarizeOptions, DirectionResult, NotarizeResult, ErrorCode,
} from "./index.js";
export {
  TlsproofError, BadOptionsError, VerifierUnreachableError, VerifierRejectedError, ServerNotAllowedError,
  ServerUnreachableError, LimitExceededError, TimeoutError, AbortError, TlsError, ConnectionLostError, ProtocolError,
  NotIsolatedError, InternalError, errorFromCode, toTlsproofError,
} from "./index.js";

export function defaultThreads(): number;
/** Loads the wasm and starts its thread pool (once); needs crossOriginIsolated. */
export function initProver(config?: { threads?: number; wasmUrl?: string | URL }): Promise<void>;
export function notarize(options: NotarizeOptions): Promise<NotarizeResult>;
