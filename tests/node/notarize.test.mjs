// The Node.js prover (the napi-rs addon through js/node.js) as a user installs it: `npm test`
// packs dist/tlsproof, installs the tarball into a fresh project and runs this file there with
// `node --test`, against the fixture, the verifier and the proxy scripts/test.sh started.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";
import { AbortError, PreparedSession, TlsproofError, notarize, prepare } from "tlsproof";
import { present, verifyPresentation } from "tlsproof/attestation";

const env = (name) => process.env[name] ?? assert.fail(`${name} is not set (scripts/test.sh sets it)`);
const verifierUrl = env("TLSPROOF_TEST_VERIFIER");
const fixture = env("TLSPROOF_TEST_FIXTURE");
const caPem = env("TLSPROOF_TEST_CA");
const proxyUrl = env("TLSPROOF_TEST_PROXY");
const verifierKey = env("TLSPROOF_TEST_VERIFIER_KEY");

const base = (path, extra = {}) => ({
  verifierUrl,
  url: `https://${fixture}${path}`,
  caPem,
  headers: { Authorization: "Bearer node-secret" },
  reveal: { sent: { redactHeaders: ["authorization"] } },
  ...extra,
});
const text = (bytes) => Buffer.from(bytes).toString("latin1");

test("the package resolves to the native prover under Node", async () => {
  const { default: pkg } = await import("tlsproof/package.json", { with: { type: "json" } });
  assert.equal(pkg.exports["."].node, "./node.js");
  assert.equal(typeof PreparedSession, "function");
});

for (const mode of ["proxy", "mpc"]) {
  const modeOptions = mode === "mpc" ? { mode, proxyUrl } : {};

  test(`${mode} mode, the response revealed whole (fast path)`, async () => {
    const phases = [];
    const result = await notarize(base("/json", { ...modeOptions, onProgress: (p) => phases.push(p.phase) }));
    assert.equal(result.mode, mode);
    assert.equal(result.recv.path, "fast");
    assert.ok(result.recv.bytes instanceof Uint8Array);
    assert.match(text(result.recv.bytes), /Alice Example/);
    assert.ok(result.sent.printable.includes("Authorization: █"), result.sent.printable);
    assert.ok(!text(result.sent.bytes).includes("node-secret"), "the token reached the verifier's verdict");
    assert.equal(phases.at(-1), "done");
    assert.deepEqual(Object.keys(result.attestation).sort(), ["attestation", "verifierKey"], "secrets are not enumerable");
    assert.ok(result.attestation.secrets, "but readable by name");
  });

  test(`${mode} mode, the response partly hidden (ZK path)`, async () => {
    const result = await notarize(base("/json", { ...modeOptions, reveal: { sent: { redactHeaders: ["authorization"] }, recv: { jsonFields: ["owner"] } } }));
    assert.equal(result.recv.path, "zk");
    assert.match(result.recv.printable, /"owner":"Alice Example"/);
    assert.ok(!result.recv.printable.includes("1234.56"), "the balance stays hidden");
  });
}

test("an abort mid-session rejects with ABORTED, and the next session runs", async () => {
  const controller = new AbortController();
  const aborted = notarize(base("/bytes?n=52224", {
    reveal: { recv: [{ start: 0, end: 100 }] },
    signal: controller.signal,
    onProgress: (p) => p.phase === "prove" && controller.abort(),
  }));
  await assert.rejects(aborted, (e) => e instanceof AbortError && e.code === "ABORTED");
  const result = await notarize(base("/json"));
  assert.equal(result.recv.path, "fast");
});

test("a server the verifier does not allow is refused with its code", async () => {
  const refused = notarize(base("/json", { url: `https://${env("TLSPROOF_TEST_ECHO")}/` }));
  await assert.rejects(refused, (e) => e instanceof TlsproofError && e.code === "SERVER_NOT_ALLOWED");
});

test("bad options are refused by name before anything is sent", async () => {
  await assert.rejects(notarize(base("/json", { revael: {} })), (e) => e.code === "BAD_OPTIONS" && /revael/.test(e.message));
  // what JSON would drop or empty is refused, as the browser's structured clone refuses it
  const headers = new Headers({ Authorization: "Bearer node-secret" });
  await assert.rejects(notarize(base("/json", { headers })), (e) => e.code === "BAD_OPTIONS" && /Headers/.test(e.message));
  await assert.rejects(notarize(base("/json", { serverName: () => "x" })), (e) => e.code === "BAD_OPTIONS");
});

test("a prepared session notarizes a request given later, once", async () => {
  const session = await prepare(base("/json", { mode: "mpc", proxyUrl, maxSentBytes: 1024 }));
  assert.equal(session.maxSentBytes, 1024);
  const result = await session.notarize({ headers: { Authorization: "Bearer later-secret" } });
  assert.equal(result.mode, "mpc");
  assert.ok(!text(result.sent.bytes).includes("later-secret"));
  await assert.rejects(session.notarize(), (e) => e.code === "SESSION_CLOSED");
});

test("the attestation's presentation verifies under the verifier's key", async () => {
  const result = await notarize(base("/json"));
  const { attestation, secrets } = result.attestation;
  const length = result.recv.length;
  const presentation = present(attestation, secrets, [["received", 0, length]]);
  const verified = verifyPresentation(presentation, { verifierKey });
  assert.match(JSON.stringify(verified), /Alice Example/);
  assert.throws(() => verifyPresentation(presentation, { verifierKey: "secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf" }));
});

test("the event loop keeps running during a 51 KB redacted session", async () => {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  try {
    const result = await notarize(base("/bytes?n=52224", { reveal: { recv: [{ start: 0, end: 52000 }] } }));
    assert.equal(result.recv.path, "zk");
  } finally {
    clearInterval(timer);
  }
  assert.ok(worst <= 50, `a 10 ms timer waited ${worst.toFixed(1)} ms`);
});

test("the README's Node.js example runs as written", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["node-example.mjs"], {
    env: { ...process.env, VERIFIER_URL: verifierUrl, URL: `https://${fixture}/json`, CA_PEM: caPem, TOKEN: "readme-secret" },
  });
  assert.match(stdout, /Alice Example/);
  assert.ok(!stdout.includes("readme-secret"));
});

test("either TLS version as asked; statements and commitments as in the browser", async () => {
  for (const version of ["1.2", "1.3"]) {
    const result = await notarize(base("/json", { tls: { versions: [version] } }));
    assert.equal(result.tls.version, version);
  }
  const proven = await notarize(base("/json", { reveal: { prove: ["account.balance.amount >= 1000"] } }));
  assert.deepEqual(proven.statements.map((s) => s.statement), ["account.balance.amount >= 1000"]);
  assert.ok(!proven.recv.printable.includes("1234.56"), "the stated value stays hidden");
  await assert.rejects(notarize(base("/json", { reveal: { prove: ["account.balance.amount >= 2000"] } })), (e) => e.code === "STATEMENT_FALSE");
  const committed = await notarize(base("/json", { reveal: { recv: { jsonFields: ["owner"] }, commitRecv: { jsonFields: ["balance"] } } }));
  assert.equal(committed.commitments.length, 1);
  assert.ok(!committed.recv.printable.includes("1234.56"));
});
