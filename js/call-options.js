// Checks shared by index.js and direct.js (not part of the public API).
import { AbortError, BadOptionsError } from "./errors.js";

/** Splits notarize() options into the callbacks and the options for the prover, or throws. */
export function splitCallOptions(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new BadOptionsError("notarize options must be an object");
  }
  const { onProgress, signal, ...rest } = options;
  if (onProgress !== undefined && typeof onProgress !== "function") throw new BadOptionsError("onProgress must be a function");
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new BadOptionsError("signal must be an AbortSignal");
  throwIfAborted(signal);
  return { onProgress, signal, rest };
}

/** Rejects with ABORTED once the caller's signal has fired. */
export function throwIfAborted(signal) {
  if (signal?.aborted) throw new AbortError("aborted by the caller");
}
