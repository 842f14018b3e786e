// tlsproof for Node.js: the native prover (a napi-rs addon, native/) runs each session on a
// thread of its own, so the event loop stays free; the API is the browser package's
// (index.js, index.d.ts). `import { notarize } from "tlsproof"` resolves here under Node
// (the package's "node" export condition) and to index.js in browsers and bundlers.
import { createRequire } from "node:module";
import { BadOptionsError, SessionClosedError, toTlsproofError } from "./errors.js";
import { splitCallOptions, throwIfAborted, withHiddenSecrets } from "./internal.js";

export * from "./errors.js";

const native = loadNative();

/**
 * The addon for this platform: `native/tlsproof.<platform>-<arch>[-<abi>].node` in this
 * package (how `npm test` builds it), else the napi-rs convention's per-platform package
 * `tlsproof-<platform>-<arch>[-<abi>]` (scripts/build-node.sh --target, docs/node.md).
 */
function loadNative() {
  const require = createRequire(import.meta.url);
  const triple = platformTriple();
  const tried = [];
  for (const id of [`./native/tlsproof.${triple}.node`, `tlsproof-${triple}`]) {
    try {
      return require(id);
    } catch (e) {
      if (e?.code !== "MODULE_NOT_FOUND" && !String(e?.message).includes("Cannot find module")) throw e;
      tried.push(id);
    }
  }
  throw new Error(`tlsproof has no native prover for ${triple} (looked for ${tried.join(", ")}); ` +
    "build it with scripts/build-node.sh, or use the browser build");
}

/** napi-rs's name for this platform: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, … */
function platformTriple() {
  const { platform, arch } = process;
  if (platform === "linux") {
    const musl = !process.report?.getReport?.()?.header?.glibcVersionRuntime;
    return `linux-${arch}-${musl ? "musl" : "gnu"}`;
  }
  if (platform === "win32") return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** Runs one native call with the caller's progress callback and AbortSignal. */
async function call(start, { onProgress, signal }) {
  throwIfAborted(signal);
  const cancel = new native.Cancel();
  const onAbort = () => cancel.cancel();
  signal?.addEventListener("abort", onAbort, { once: true });
  const progress = onProgress && ((p) => {
    try {
      onProgress(p.position == null ? { phase: p.phase, fraction: p.fraction } : p);
    } catch { /* a throwing callback must not break the session */ }
  });
  try {
    const outcome = await start(progress ?? null, cancel);
    if (outcome?.error) throw toTlsproofError(outcome.error);
    return outcome;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * The options as the addon takes them: JSON of plain values. What JSON would silently drop or
 * empty (a function, a `Headers` or `Map`, a class instance) is refused, as the browser
 * build's structured clone refuses it, rather than sent as nothing.
 */
function encode(options) {
  return JSON.stringify(options, function (key, value) {
    const where = key === "" ? "the options" : `option ${key}`;
    if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
      throw new BadOptionsError(`${where} cannot be sent to the prover (a ${typeof value})`);
    }
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new BadOptionsError(`${where} must be a plain object or array, not a ${value.constructor?.name ?? "class instance"}`);
      }
    }
    return value;
  });
}

/** A prover: in Node.js it holds no worker, only defaults (the addon runs every session). */
export class Prover {
  #running = new Set();

  /** `threads`, `workerUrl` and `startTimeoutMs` are the browser's; the addon needs none. */
  constructor(_config = {}) {
    this.ready = Promise.resolve();
  }

  /** A started prover. */
  static async create(config) {
    return new Prover(config);
  }

  /** Notarizes one HTTPS request; see index.d.ts. */
  async notarize(options) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    return this.#track(signal, async (merged) => {
      const { result } = await call((p, cancel) => native.notarize(encode(rest), p, cancel), { onProgress, signal: merged });
      return withHiddenSecrets(result);
    });
  }

  /** Opens a session and prepares what does not depend on the request; see index.d.ts. */
  async prepare(options) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    return this.#track(signal, async (merged) => {
      const session = await call((p, cancel) => native.prepare(encode(rest), p, cancel), { onProgress, signal: merged });
      return new PreparedSession(session, rest);
    });
  }

  /** Aborts the calls still running (they reject with ABORTED). */
  terminate() {
    for (const controller of this.#running) controller.abort();
  }

  /** Runs `work` under a signal that the caller's and `terminate` both abort. */
  async #track(signal, work) {
    const controller = new AbortController();
    const forward = () => controller.abort();
    signal?.addEventListener("abort", forward, { once: true });
    this.#running.add(controller);
    try {
      return await work(controller.signal);
    } finally {
      this.#running.delete(controller);
      signal?.removeEventListener("abort", forward);
    }
  }
}

/** A prepared session (held by a thread of the addon): it notarizes once. */
export class PreparedSession {
  #native;
  #defaults;

  constructor(nativeSession, defaults) {
    this.#native = nativeSession;
    this.#defaults = defaults;
    /** The longest request the session takes, in bytes. */
    this.maxSentBytes = nativeSession.maxSentBytes;
  }

  /** Sends the request and proves what to reveal; options over those given to prepare. */
  async notarize(options = {}) {
    const { onProgress, signal, rest } = splitCallOptions(options);
    const session = this.#native;
    if (session === null) throw new SessionClosedError("this prepared session was already used, closed or failed: prepare another");
    this.#native = null;
    const merged = encode({ ...this.#defaults, ...rest });
    const { result } = await call((p, cancel) => session.notarize(merged, p, cancel), { onProgress, signal });
    return withHiddenSecrets(result);
  }

  /** Ends the session without notarizing (the verifier frees what it holds for it). */
  close() {
    this.#native?.close();
    this.#native = null;
  }
}

let shared = null;

/** One-call use: notarizes with a shared Prover. */
export async function notarize(options) {
  shared ??= new Prover();
  return shared.notarize(options);
}

/** One-call use: prepares a session on the shared Prover. */
export async function prepare(options) {
  shared ??= new Prover();
  return shared.prepare(options);
}
