// The module worker index.js starts: runs the wasm prover off the main thread and answers a
// small RPC — {type: "init" | "notarize" | "abort", id, ...} in; {type: "ready" | "progress" |
// "result" | "error", id, ...} out.
import { initProver, notarize } from "./direct.js";

const running = new Map();
const fail = (id, e) => self.postMessage({ type: "error", id, error: { code: e.code || "INTERNAL", message: String(e.message || e) } });

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
    const controller = new AbortController();
    running.set(id, controller);
    const onProgress = data.wantsProgress ? (progress) => self.postMessage({ type: "progress", id, progress }) : undefined;
    try {
      const result = await notarize({ ...data.options, onProgress, signal: controller.signal });
      // the secrets are not enumerable, so a structured clone leaves them out: sent alongside
      self.postMessage({ type: "result", id, result, secrets: result.attestation?.secrets });
    } catch (e) {
      fail(id, e);
    } finally {
      running.delete(id);
    }
  } else if (type === "abort") {
    running.get(id)?.abort();
  }
};
