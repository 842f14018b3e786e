// One thread of the prover's pool (started by threads.js): instantiates the pool's wasm module
// on the shared memory and runs rayon's worker loop, which does not return. A failure to
// instantiate is reported to the pool with its own message.
import init, { wbg_rayon_start_worker } from "./wasm/tlsproof.js";

self.addEventListener("message", async function onInit({ data }) {
  if (data?.type !== "tlsproof-thread-init") return;
  self.removeEventListener("message", onInit);
  try {
    await init({ module_or_path: data.module, memory: data.memory });
  } catch (e) {
    self.postMessage({ type: "tlsproof-thread-failed", message: `${e?.name ?? "Error"}: ${e?.message ?? e}` });
    return;
  }
  self.postMessage({ type: "tlsproof-thread-ready" });
  wbg_rayon_start_worker(data.receiver);
});
