// Runs the prover in the calling thread. Use it inside a Web Worker (a dedicated worker of
// your own, or one in an extension): rayon blocks while it waits for its threads, which a
// page's main thread may not do. From a page or an offscreen document use index.js instead,
// which starts a worker running this module.
import init, { initThreadPool, notarize as wasmNotarize } from "./wasm/tlsproof.js";
import { NotIsolatedError, toTlsproofError } from "./errors.js";
import { splitCallOptions, throwIfAborted } from "./call-options.js";

export * from "./errors.js";

let ready = null;

/** Threads for the proof: the cores the browser reports, capped (more brings little). */
export function defaultThreads() {
  const n = (globalThis.navigator && navigator.hardwareConcurrency) || 2;
  return Math.max(1, Math.min(n, 8));
}

/**
 * Loads the wasm module and starts its thread pool, once per thread; later calls return the
 * same promise. Threads need SharedArrayBuffer, hence a cross-origin isolated context.
 */
export function initProver({ threads, wasmUrl } = {}) {
  if (!ready) {
    ready = (async () => {
      if (!globalThis.crossOriginIsolated) {
        throw new NotIsolatedError("tlsproof needs a cross-origin isolated context for its threads: serve the page with " +
          "Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp");
      }
      await init(wasmUrl ? { module_or_path: wasmUrl } : undefined);
      await initThreadPool(threads ?? defaultThreads());
    })();
    // A failed start may be retried (e.g. after fixing the headers); a started pool stays.
    ready.catch(() => { ready = null; });
  }
  return ready;
}

/** Notarizes one HTTPS request; see index.d.ts for the options and the result. */
export async function notarize(options) {
  const { onProgress, signal, rest } = splitCallOptions(options);
  try {
    await initProver();
    throwIfAborted(signal);
    return await wasmNotarize(rest, onProgress, signal);
  } catch (e) {
    throw toTlsproofError(e);
  }
}
