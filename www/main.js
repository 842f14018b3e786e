// The demo page: asks the worker to fetch from the local fixture through the proxy and shows
// the answer. With ?auto=1 (used by `npm start`) it runs once and reports to the demo server.
const $ = (id) => document.getElementById(id);
const config = await (await fetch("/demo-config.json")).json();
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
let nextId = 0;
const call = (op, args) => new Promise((resolve) => {
  const id = nextId++;
  const onMsg = ({ data }) => { if (data.id === id) { worker.removeEventListener("message", onMsg); resolve(data); } };
  worker.addEventListener("message", onMsg);
  worker.postMessage({ id, op, args });
});

$("env").textContent = `crossOriginIsolated=${self.crossOriginIsolated} · threads=${navigator.hardwareConcurrency} · proxy ${config.proxyUrl} · fixture https://${config.httpsTarget}`;

async function run() {
  const path = $("path").value || "/json";
  $("status").textContent = "fetching…";
  $("status").className = "";
  const res = await call("fetch", {
    threads: Math.max(2, Math.min(navigator.hardwareConcurrency || 2, 4)),
    proxyUrl: config.proxyUrl, target: config.httpsTarget, serverName: config.serverName, caPem: config.caPem, host: config.serverName, path,
  });
  if (res.ok) {
    $("status").textContent = `done in ${res.ms.toFixed(0)} ms`;
    $("status").className = "ok";
    $("out").textContent = res.text;
  } else {
    $("status").textContent = `failed: ${res.error}`;
    $("status").className = "err";
  }
  return { ok: res.ok, what: `GET https://${config.serverName}${path} with tlsproof's TLS 1.2 client in wasm, through the proxy (crossOriginIsolated=${self.crossOriginIsolated})`,
           text: res.text || "", error: res.error || "", timings: res.ok ? { total_ms: Math.round(res.ms) } : null };
}

$("form").addEventListener("submit", (e) => { e.preventDefault(); run(); });
if (new URLSearchParams(location.search).has("auto")) {
  let report;
  try { report = await run(); } catch (e) { report = { ok: false, error: String(e) }; }
  await fetch("/demo-result", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(report) });
}
