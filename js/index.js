// tlsproof for pages, extensions' offscreen documents and workers: the prover runs as
// multithreaded wasm in a module Web Worker this module starts; calls are promises.
import { AbortError, BadOptionsError, SessionClosedError, toTlsproofError } from "./errors.js";
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

  /**
   * Opens a session and prepares what does not depend on the request; see index.d.ts.
   * Resolves to a PreparedSession whose `notarize` sends the request.
   */
  async prepare(options) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    await this.ready;
    throwIfAborted(signal);
    const { session, maxSentBytes } = await this.#call("prepare", { options: rest, wantsProgress: !!onProgress }, { onProgress, signal });
    return new PreparedSession(session, maxSentBytes, (type, message, callOptions) => this.#call(type, message, callOptions));
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
    if (data.type === "error") call.reject(toTlsproofError(data.error));
    else if (data.type === "result") call.resolve(withHiddenSecrets(data.result, data.secrets));
    else if (data.type === "prepared") call.resolve({ session: data.id, maxSentBytes: data.maxSentBytes });
    else call.resolve(undefined);
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

/** A session a Prover prepared (it stays in the prover's worker): it notarizes once. */
export class PreparedSession {
  #id;
  #call;

  constructor(id, maxSentBytes, call) {
    this.#id = id;
    this.#call = call;
    /** The longest request the session takes, in bytes. */
    this.maxSentBytes = maxSentBytes;
  }

  /** Sends the request and proves what to reveal; options over those given to prepare. */
  async notarize(options = {}) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    if (this.#id === null) throw new SessionClosedError("this prepared session was already used, closed or failed: prepare another");
    const session = this.#id;
    this.#id = null;
    return this.#call("notarizePrepared", { session, options: rest, wantsProgress: !!onProgress }, { onProgress, signal });
  }

  /** Ends the session without notarizing (the verifier frees what it holds for it). */
  close() {
    if (this.#id === null) return;
    this.#call("closePrepared", { session: this.#id }).catch(() => {});
    this.#id = null;
  }
}

let shared = null;

/** The shared Prover of the one-call functions, started on first use. */
async function sharedProver() {
  shared ??= new Prover();
  const prover = shared;
  try {
    await prover.ready;
  } catch (e) {
    if (shared === prover) shared = null; // let a later call start afresh
    throw e;
  }
  return prover;
}

/** One-call use: notarizes with a shared Prover started on first use. */
export async function notarize(options) {
  return (await sharedProver()).notarize(options);
}

/** One-call use: prepares a session on the shared Prover. */
export async function prepare(options) {
  return (await sharedProver()).prepare(options);
}
