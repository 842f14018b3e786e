// Helpers shared by the package's modules (not part of the public API).
import { AbortError, BadOptionsError, WorkerStartError } from "./errors.js";

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

/**
 * The error for a worker's `error` event while it starts. When a module worker's script, or a
 * module it imports, fails to load, the browser gives only a bare event (its console names the
 * file); errors the worker's own code throws arrive with their message.
 */
export function workerStartError(which, event) {
  return new WorkerStartError(`${which} failed: ${event?.message || "its script or a module it imports did not load " +
    "(not served next to the package's other files, or blocked by a content security policy; the browser's console names the file)"}`);
}

/**
 * A result's attestation secrets hold the hidden request bytes (a cookie, a token) in full.
 * They are not an enumerable property, so `JSON.stringify(result)`, an object spread or a
 * structured clone does not carry them along by accident: a page that sends its result
 * somewhere does not send the user's token with it. Read them as `result.attestation.secrets`.
 */
export function withHiddenSecrets(result, secrets = result?.attestation?.secrets) {
  if (result?.attestation && secrets) {
    Object.defineProperty(result.attestation, "secrets", { value: secrets, enumerable: false, configurable: true });
  }
  return result;
}
