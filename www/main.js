// The demo page: notarizes a request to the local fixture and shows what the verifier saw,
// hidden bytes blacked out. With ?auto=1 (used by `npm start`) it runs once and reports back.
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

$("env").textContent = `crossOriginIsolated=${self.crossOriginIsolated} · threads=${navigator.hardwareConcurrency} · verifier ${config.verifierUrl} · server https://${config.serverName} (${config.httpsTarget})`;

/** Renders a verified direction: revealed bytes as text, hidden ones as black boxes. */
function render(el, dir) {
  el.textContent = "";
  let at = 0;
  const text = (a, b) => new TextDecoder().decode(new Uint8Array(dir.bytes.slice(a, b)));
  const hidden = (n) => { const s = document.createElement("span"); s.className = "hidden"; s.textContent = "█".repeat(n); el.append(s); };
  for (const r of dir.revealed) {
    if (r.start > at) hidden(r.start - at);
    el.append(text(r.start, r.end));
    at = r.end;
  }
  if (dir.len > at) hidden(dir.len - at);
}

async function run() {
  const path = $("path").value || "/json";
  $("status").textContent = "notarizing…";
  $("status").className = "";
  const res = await call("notarize", {
    threads: Math.max(2, Math.min(navigator.hardwareConcurrency || 2, 4)),
    verifierUrl: config.verifierUrl, server: config.httpsTarget, serverName: config.serverName,
    caPem: config.caPem, path, secret: $("secret").value.trim(), reveal: $("reveal").value,
  });
  if (!res.ok) {
    $("status").textContent = `failed: ${res.error}`;
    $("status").className = "err";
    return { ok: false, error: res.error };
  }
  const v = res.result.verified;
  $("status").textContent = `verified in ${res.ms.toFixed(0)} ms`;
  $("status").className = "ok";
  render($("sent"), v.sent);
  render($("recv"), v.received);
  const path_ = (d) => d.fast_path ? "fast path: key opened, verifier decrypted" : "ZK path: keystream proven for revealed blocks";
  $("sent-path").textContent = path_(v.sent);
  $("recv-path").textContent = path_(v.received);
  const s = v.stats;
  $("timings").textContent = `online ${s.online.millis.toFixed(0)} ms · prove ${s.prove.millis.toFixed(0)} ms · prover→verifier ${(s.online.bytes_up + s.prove.bytes_up)} B`;
  return {
    ok: true,
    what: `notarized GET https://${config.serverName}${path} from wasm (crossOriginIsolated=${self.crossOriginIsolated})`,
    text: `request:  ${res.result.sentPrintable}\nresponse: ${res.result.receivedPrintable}`,
    timings: { total_ms: Math.round(res.ms), online_ms: Math.round(s.online.millis), prove_ms: Math.round(s.prove.millis) },
  };
}

$("form").addEventListener("submit", (e) => { e.preventDefault(); run(); });
const query = new URLSearchParams(location.search);
if (query.has("path")) $("path").value = query.get("path");
if (query.has("reveal")) $("reveal").value = query.get("reveal");
if (query.has("auto")) {
  let report;
  try { report = await run(); } catch (e) { report = { ok: false, error: String(e) }; }
  await fetch("/demo-result", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(report) });
}
