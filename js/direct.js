// Runs the prover in the calling thread. Use it inside a Web Worker (a dedicated worker of
// your own, or one in an extension): rayon blocks while it waits for its threads, which a
// page's main thread may not do. From a page or an offscreen document use index.js instead,
// which starts a worker running this module.
import init, { initThreadPool, notarize as wasmNotarize, prepare as wasmPrepare } from "./wasm/tlsproof.js";
import { BadOptionsError, NotIsolatedError, SessionClosedError, TimeoutError, toTlsproofError } from "./errors.js";
import { splitCallOptions, throwIfAborted, withHiddenSecrets } from "./internal.js";

export * from "./errors.js";

let ready = null;
// wasm-bindgen-rayon's initThreadPool may run once per module instance: a retry after a start
// that timed out waits for this same start instead of calling it again.
let poolStart = null;

/** How long the thread pool may take to start (ms) before initProver gives up. */
export const DEFAULT_START_TIMEOUT_MS = 30000;

/** Threads for the proof: the cores the browser reports, capped (more brings little). */
export function defaultThreads() {
  const n = (globalThis.navigator && navigator.hardwareConcurrency) || 2;
  return Math.max(1, Math.min(n, 8));
}

/**
 * Loads the wasm module and starts its thread pool, once per thread; later calls return the
 * same promise. Threads need SharedArrayBuffer, hence a cross-origin isolated context. A thread
 * worker that fails to load or start rejects with WORKER_START_FAILED (threads.js), and a pool
 * not up within `startTimeoutMs` with TIMEOUT instead of waiting forever.
 */
export function initProver({ threads, wasmUrl, startTimeoutMs = DEFAULT_START_TIMEOUT_MS } = {}) {
  if (!(typeof startTimeoutMs === "number" && startTimeoutMs > 0)) {
    return Promise.reject(new BadOptionsError("startTimeoutMs must be a positive number of milliseconds"));
  }
  if (!ready) {
    ready = (async () => {
      if (!globalThis.crossOriginIsolated) {
        throw new NotIsolatedError("tlsproof needs a cross-origin isolated context for its threads: serve the page with " +
          "Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp");
      }
      await init(wasmUrl ? { module_or_path: wasmUrl } : undefined);
      const n = threads ?? defaultThreads();
      if (!poolStart) {
        poolStart = initThreadPool(n);
        poolStart.catch(() => { poolStart = null; });
      }
      await withTimeout(poolStart, startTimeoutMs, () => new TimeoutError(
        `the prover's thread pool did not start within ${startTimeoutMs} ms: its thread workers are still loading ` +
        "(a slow network or a busy machine; startTimeoutMs sets the limit)"));
    })();
    // A failed start may be retried (e.g. after fixing the headers); a started pool stays.
    ready.catch(() => { ready = null; });
  }
  return ready;
}

/** `promise`, or a rejection with `makeError()` once `ms` have passed. */
function withTimeout(promise, ms, makeError) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(makeError()), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Notarizes one HTTPS request; see index.d.ts for the options and the result. */
export async function notarize(options) {
  const { onProgress, signal, rest } = splitCallOptions(options);
  try {
    await initProver();
    throwIfAborted(signal);
    return withHiddenSecrets(await wasmNotarize(rest, onProgress, signal));
  } catch (e) {
    throw toTlsproofError(e);
  }
}

/**
 * Opens a session and prepares what does not depend on the request (see index.d.ts): in MPC
 * mode the OT and a request of up to `maxSentBytes` garbled ahead. Resolves to a
 * PreparedSession whose `notarize` sends the request.
 */
export async function prepare(options) {
  const { onProgress, signal, rest } = splitCallOptions(options);
  try {
    await initProver();
    throwIfAborted(signal);
    return new PreparedSession(await wasmPrepare(rest, onProgress, signal));
  } catch (e) {
    throw toTlsproofError(e);
  }
}

/** A session `prepare` opened: it notarizes once. */
export class PreparedSession {
  #inner;

  constructor(inner) {
    this.#inner = inner;
  }

  /** The longest request the session takes, in bytes. */
  get maxSentBytes() {
    return this.#inner ? this.#inner.maxSentBytes : 0;
  }

  /** Sends the request and proves what to reveal; options over those given to prepare. */
  async notarize(options = {}) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    if (!this.#inner) throw new SessionClosedError("this prepared session was already used, closed or failed: prepare another");
    const inner = this.#inner;
    this.#inner = null;
    try {
      return withHiddenSecrets(await inner.notarize(rest, onProgress, signal));
    } catch (e) {
      throw toTlsproofError(e);
    } finally {
      inner.free();
    }
  }

  /** Ends the session without notarizing (the verifier frees what it holds for it). */
  close() {
    if (!this.#inner) return;
    this.#inner.close();
    this.#inner.free();
    this.#inner = null;
  }
}
