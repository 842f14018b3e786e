// The module worker index.js starts: runs the wasm prover off the main thread and answers a
// small RPC — {type: "init" | "notarize" | "prepare" | "notarizePrepared" | "closePrepared" |
// "abort", id, ...} in; {type: "ready" | "progress" | "prepared" | "result" | "closed" |
// "error", id, ...} out. A prepared session stays here, under the id of the call that prepared it.
import { initProver, notarize, prepare } from "./direct.js";
import { SessionClosedError } from "./errors.js";

const running = new Map();
const prepared = new Map();
const fail = (id, e) => self.postMessage({ type: "error", id, error: { code: e.code || "INTERNAL", message: String(e.message || e), retryAfter: e.retryAfter } });

/** Runs one abortable call: `work(signal, onProgress)` resolves to what `done` posts. */
async function call(data, work, done) {
  const { id } = data;
  const controller = new AbortController();
  running.set(id, controller);
  const onProgress = data.wantsProgress ? (progress) => self.postMessage({ type: "progress", id, progress }) : undefined;
  try {
    done(await work(controller.signal, onProgress));
  } catch (e) {
    fail(id, e);
  } finally {
    running.delete(id);
  }
}

// the secrets are not enumerable, so a structured clone leaves them out: sent alongside
const postResult = (id) => (result) => self.postMessage({ type: "result", id, result, secrets: result.attestation?.secrets });

self.onmessage = async ({ data }) => {
  const { type, id } = data || {};
  if (type === "init") {
    try {
      await initProver(data.config || {});
      self.postMessage({ type: "ready", id });
    } catch (e) {
      fail(id, e);
    }
  } else if (type === "notarize") {
    await call(data, (signal, onProgress) => notarize({ ...data.options, onProgress, signal }), postResult(id));
  } else if (type === "prepare") {
    await call(data, (signal, onProgress) => prepare({ ...data.options, onProgress, signal }), (session) => {
      prepared.set(id, session);
      self.postMessage({ type: "prepared", id, maxSentBytes: session.maxSentBytes });
    });
  } else if (type === "notarizePrepared") {
    const session = prepared.get(data.session);
    prepared.delete(data.session);
    await call(data, (signal, onProgress) => {
      if (!session) throw new SessionClosedError("this prepared session was already used, closed or failed: prepare another");
      return session.notarize({ ...data.options, onProgress, signal });
    }, postResult(id));
  } else if (type === "closePrepared") {
    prepared.get(data.session)?.close();
    prepared.delete(data.session);
    self.postMessage({ type: "closed", id });
  } else if (type === "abort") {
    running.get(id)?.abort();
  }
};
