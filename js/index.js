// tlsproof for pages, extensions' offscreen documents and workers: the prover runs as
// multithreaded wasm in a module Web Worker this module starts; calls are promises.
import { AbortError, BadOptionsError, errorFromCode } from "./errors.js";
import { splitCallOptions, throwIfAborted, withHiddenSecrets, workerStartError } from "./internal.js";

export * from "./errors.js";

/** A prover running in its own Web Worker. Reuse one for many sessions. */
export class Prover {
  #worker;
  #calls = new Map();
  #nextId = 1;
  #broken = null;

  /** Starts the worker; `await prover.ready` (or use Prover.create) to know it is up. */
  constructor({ threads, workerUrl, startTimeoutMs } = {}) {
    // The static `new Worker(new URL(…, import.meta.url))` form: bundlers follow it and emit
    // the worker, with the wasm it loads, as chunks of their own.
    this.#worker = workerUrl
      ? new Worker(workerUrl, { type: "module", name: "tlsproof" })
      : new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "tlsproof" });
    this.#worker.onmessage = ({ data }) => this.#receive(data);
    this.#worker.onerror = (e) => {
      e.preventDefault?.();
      this.#failAll(workerStartError("the tlsproof worker (worker.js)", e));
    };
    this.ready = this.#call("init", { config: { threads, startTimeoutMs } });
    this.ready.catch(() => {});
  }

  /** A started prover (the worker loaded the wasm and its threads). */
  static async create(config) {
    const prover = new Prover(config);
    await prover.ready;
    return prover;
  }

  /** Notarizes one HTTPS request; see index.d.ts. */
  async notarize(options) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    await this.ready;
    throwIfAborted(signal);
    return this.#call("notarize", { options: rest, wantsProgress: !!onProgress }, { onProgress, signal });
  }

  /** Stops the worker; calls still running reject with ABORTED. */
  terminate() {
    this.#worker.terminate();
    this.#failAll(new AbortError("the prover was terminated"));
  }

  #call(type, message, { onProgress, signal } = {}) {
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      const onAbort = () => this.#worker.postMessage({ type: "abort", id });
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#calls.set(id, { resolve, reject, onProgress, done });
      try {
        this.#worker.postMessage({ type, id, ...message });
      } catch (e) {
        // DataCloneError: something in the options cannot leave this thread (a function, a DOM node).
        this.#calls.delete(id);
        done();
        reject(new BadOptionsError(`options cannot be sent to the prover worker: ${e.message}`));
      }
    });
  }

  #receive(data) {
    const call = this.#calls.get(data?.id);
    if (!call) return;
    if (data.type === "progress") {
      try { call.onProgress?.(data.progress); } catch { /* a throwing callback must not break the session */ }
      return;
    }
    this.#calls.delete(data.id);
    call.done();
    if (data.type === "error") call.reject(errorFromCode(data.error.code, data.error.message));
    else call.resolve(data.type === "result" ? withHiddenSecrets(data.result, data.secrets) : undefined);
  }

  #failAll(error) {
    this.#broken = error;
    for (const call of this.#calls.values()) {
      call.done();
      call.reject(error);
    }
    this.#calls.clear();
  }
}

let shared = null;

/** One-call use: notarizes with a shared Prover started on first use. */
export async function notarize(options) {
  shared ??= new Prover();
  const prover = shared;
  try {
    await prover.ready;
  } catch (e) {
    if (shared === prover) shared = null; // let a later call start afresh
    throw e;
  }
  return prover.notarize(options);
}
