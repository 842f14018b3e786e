// Runs bench samples for bench.js with the package's direct API (the prover in this worker).
import { initProver, notarize, prepare, defaultThreads } from "/pkg/direct.js";
import init, * as wasm from "/pkg/wasm/tlsproof.js";

// The wasm memory only grows, so its size after a session is the session's high-water mark.
const wasmMemory = async () => (await init()).memory.buffer.byteLength;
const failure = (e) => ({ ok: false, error: { code: e?.code || "INTERNAL", message: String(e?.message || e) } });

self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") {
      const threads = defaultThreads();
      await initProver({ threads });
      self.postMessage({ ok: true, threads });
    } else if (data.type === "notarize") {
      // a prepared session's time is its notarize call's: what a user waits for once the
      // request is known
      const session = data.prepared ? await prepare(data.options) : null;
      const t0 = performance.now();
      await (session ? session.notarize() : notarize(data.options));
      const totalMs = performance.now() - t0;
      // (the bench reads the verdict from its verifier: the result's bytes, megabytes at the
      // largest sizes, stay here)
      self.postMessage({ ok: true, totalMs, peakMemory: await wasmMemory() });
    } else if ((data.type === "zk" || data.type === "mpc") && typeof wasm.benchZk !== "function") {
      self.postMessage(failure(new Error("this package has no engine benchmarks: build it with scripts/build-wasm.sh --bench " +
        "and pass --pkg dist/tlsproof-bench")));
    } else if (data.type === "zk") {
      const t0 = performance.now();
      const figures = JSON.parse(wasm.benchZk(!!data.quick, data.only ?? undefined));
      self.postMessage({ ok: true, totalMs: performance.now() - t0, peakMemory: await wasmMemory(), figures });
    } else if (data.type === "mpc") {
      const t0 = performance.now();
      const figures = JSON.parse(wasm.benchMpc(!!data.quick));
      self.postMessage({ ok: true, totalMs: performance.now() - t0, peakMemory: await wasmMemory(), figures });
    } else {
      self.postMessage(failure(new Error(`unknown job ${data.type}`)));
    }
  } catch (e) {
    self.postMessage(failure(e));
  }
};
