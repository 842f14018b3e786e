// Types of direct.js: the prover in the calling thread (a Web Worker).
export * from "./index.js";
import type { NotarizeOptions, NotarizeResult } from "./index.js";

export function defaultThreads(): number;
/** Loads the wasm and starts its thread pool (once); needs crossOriginIsolated. */
export function initProver(config?: { threads?: number; wasmUrl?: string | URL }): Promise<void>;
export function notarize(options: NotarizeOptions): Promise<NotarizeResult>;
