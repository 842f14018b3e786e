// The browser side of `tlsproof bench`: asks the bench for jobs, runs each sample in a module
// worker (the package's direct mode, so the worker can report its wasm memory), and posts
// every sample back. Sessions run one after another, never overlapping.
const log = (line) => { document.getElementById("log").textContent += line + "\n"; };
const worker = new Worker(new URL("./bench-worker.js", import.meta.url), { type: "module" });
let pending = null;
worker.onmessage = ({ data }) => { const p = pending; pending = null; p?.(data); };
worker.onerror = (e) => { const p = pending; pending = null; p?.({ ok: false, error: { code: "WORKER", message: e.message || "worker failed to load" } }); };
const ask = (message) => new Promise((resolve) => { pending = resolve; worker.postMessage(message); });
const post = (path, body) => fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function main() {
  const ready = await ask({ type: "init" });
  if (!ready.ok) {
    await post("/bench-result", { id: -1, sample: 0, ok: false, error: ready.error });
    return;
  }
  log(`worker ready (${ready.threads} threads)`);
  for (;;) {
    const job = await (await fetch("/bench-job", { cache: "no-store" })).json();
    if (job.done) break;
    if (job.wait) { await new Promise((r) => setTimeout(r, 100)); continue; }
    for (let sample = 0; sample < job.samples; sample++) {
      const r = await ask({ type: job.kind, options: job.options, prepared: job.prepared, quick: job.quick, only: job.only });
      log(`${job.label} #${sample}: ${r.ok ? `${(r.totalMs / 1000).toFixed(3)} s` : `${r.error.code}: ${r.error.message}`}`);
      await post("/bench-result", { id: job.id, sample, ...r });
      if (!r.ok) return;
    }
  }
  log("done");
}
main().catch((e) => post("/bench-result", { id: -1, sample: 0, ok: false, error: { code: "PAGE", message: String(e) } }));
