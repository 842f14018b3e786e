// The demo page: notarizes one HTTPS request with the tlsproof package and shows what the
// verifier verified, revealed bytes highlighted and hidden ones blacked out. With ?auto=1
// (`tlsproof demo`, `npm start`) it runs once and reports the outcome to the server.
import { Prover } from "tlsproof";
import { decodeAttestation, present, verifyPresentation } from "tlsproof/attestation";

const $ = (id) => document.getElementById(id);
const config = await (await fetch("/demo-config.json")).json();
const query = new URLSearchParams(location.search);

$("url").value = query.has("path") ? new URL(query.get("path"), config.url).href : config.url;
$("server-name").value = config.serverName || "";
$("verifier-url").value = config.verifierUrl || `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
$("proxy-url").value = config.proxyUrl || "";
if (query.has("mode")) document.querySelector(`input[name=mode][value=${CSS.escape(query.get("mode"))}]`).checked = true;
if (query.has("reveal")) document.querySelector(`input[name=reveal][value=${CSS.escape(query.get("reveal"))}]`).checked = true;
$("env").textContent = `crossOriginIsolated=${self.crossOriginIsolated} · cores=${navigator.hardwareConcurrency}`;

const prover = new Prover({ threads: Math.max(2, Math.min(navigator.hardwareConcurrency || 2, 4)) });

/** The form as notarize() options. */
function options() {
  const headers = [];
  const hidden = [];
  for (const row of $("headers").tBodies[0].rows) {
    const name = row.querySelector(".h-name").value.trim();
    if (!name) continue;
    headers.push([name, row.querySelector(".h-value").value]);
    if (row.querySelector(".h-hide").checked) hidden.push(name);
  }
  const choice = document.querySelector("input[name=reveal]:checked").value;
  const recv = choice === "json" ? { jsonFields: $("json-fields").value.split(",").map((s) => s.trim()).filter(Boolean) } : choice;
  const mode = document.querySelector("input[name=mode]:checked").value;
  return {
    verifierUrl: $("verifier-url").value,
    mode,
    proxyUrl: mode === "mpc" ? $("proxy-url").value : undefined,
    tls: { versions: $("tls-versions").value.split(",") },
    url: $("url").value,
    serverName: $("server-name").value.trim() || undefined,
    caPem: config.caPem || undefined,
    headers,
    // Revealing all of a direction takes the fast path; hiding anything takes the ZK path.
    reveal: { sent: hidden.length ? { redactHeaders: hidden } : "all", recv },
  };
}

/** A verified direction: revealed ranges as highlighted text, hidden ranges as black boxes. */
function render(el, dir) {
  el.textContent = "";
  const decode = (r) => new TextDecoder().decode(dir.bytes.subarray(r.start, r.end));
  const spans = [...dir.revealed.map((r) => ({ ...r, shown: true })), ...dir.hidden.map((r) => ({ ...r, shown: false }))]
    .sort((a, b) => a.start - b.start);
  for (const r of spans) {
    const s = document.createElement("span");
    s.className = r.shown ? "revealed" : "hidden";
    s.textContent = r.shown ? decode(r) : "█".repeat(r.end - r.start);
    if (!r.shown) s.title = `${r.end - r.start} hidden bytes`;
    el.append(s);
  }
}

/**
 * What a third party would do with the verifier's signed attestation: a presentation of the
 * response's revealed ranges, checked here against the key the verifier publishes.
 */
async function presentResponse(result) {
  if (!result.attestation) return "attestation: none (the verifier runs without --signing-key)";
  const { attestation, secrets } = result.attestation;
  const { verifierKey } = await (await fetch("/.well-known/tlsproof-verifier-key")).json();
  const revealed = decodeAttestation(attestation.data).received.revealed;
  const p = present(attestation, secrets, revealed.map(({ start, end }) => ({ direction: "received", start, end })));
  const v = verifyPresentation(JSON.stringify(p), { verifierKey });
  const bytes = v.disclosed.reduce((n, d) => n + d.data.length, 0);
  return `attestation signed by ${verifierKey}: a presentation of ${v.disclosed.length} response range(s), ${bytes} bytes, verified in this page`;
}

const pathText = (d) => d.path === "fast" ? "fast path: key opened, the verifier decrypted it" : "ZK path: revealed blocks proven in zero knowledge";
let controller = null;

async function run() {
  controller = new AbortController();
  $("notarize").disabled = true;
  $("cancel").disabled = false;
  $("status").textContent = "notarizing…";
  $("status").className = "";
  $("verdict").hidden = true;
  const opts = options();
  try {
    const result = await prover.notarize({
      ...opts,
      signal: controller.signal,
      onProgress: ({ phase, fraction }) => { $("progress").value = fraction; $("phase").textContent = phase; },
    });
    $("status").textContent = `verified (${result.mode} mode, TLS ${result.tls.version}, ${result.tls.cipherSuite}): ${result.serverName} (${result.server}), ${result.recv.length} response bytes`;
    $("status").className = "ok";
    render($("sent"), result.sent);
    render($("recv"), result.recv);
    $("sent-path").textContent = pathText(result.sent);
    $("recv-path").textContent = pathText(result.recv);
    const t = result.timings;
    $("timings").textContent = `total ${t.totalMs.toFixed(0)} ms · preprocess ${t.preprocessMs.toFixed(0)} ms · online ${t.onlineMs.toFixed(0)} ms · ` +
      `prove ${t.proveMs.toFixed(0)} ms · prover→verifier ${result.bytes.proverToVerifier} B, verifier→prover ${result.bytes.verifierToProver} B`;
    const attestation = await presentResponse(result);
    $("attestation").textContent = attestation;
    $("verdict").hidden = false;
    return {
      ok: true,
      what: `notarized ${opts.url} from wasm in ${result.mode} mode (crossOriginIsolated=${self.crossOriginIsolated})`,
      text: `request (${result.sent.path} path):  ${result.sent.printable}\nresponse (${result.recv.path} path): ${result.recv.printable}\n${attestation}`,
      timings: { total_ms: Math.round(t.totalMs), online_ms: Math.round(t.onlineMs), prove_ms: Math.round(t.proveMs) },
    };
  } catch (e) {
    $("status").textContent = `failed (${e.code || e.name}): ${e.message}`;
    $("status").className = "err";
    return { ok: false, error: `${e.code || e.name}: ${e.message}` };
  } finally {
    $("notarize").disabled = false;
    $("cancel").disabled = true;
  }
}

$("form").addEventListener("submit", (e) => { e.preventDefault(); run(); });
$("cancel").addEventListener("click", () => controller?.abort());
if (query.has("auto")) {
  const report = await run();
  await fetch("/demo-result", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(report) });
}
