// The README's extension (examples/extension/) in headless Chromium: loads it unpacked with the
// package copied in, opens its popup page, presses Notarize and waits for the offscreen
// document's answer. Saves a screenshot as an artifact.
//   node tests/e2e/extension.mjs EXTENSION_DIR PACKAGE_DIR VERIFIER_WS_URL FIXTURE_ADDR CA_PEM_FILE [ARTIFACT_DIR]
import { createHash, generateKeyPairSync } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectLogs } from "./cdp-log.mjs";
import { Browser } from "./webdriver.mjs";

const [extSrc, pkg, verifierUrl, fixture, caFile, outDir = "test-artifacts"] = process.argv.slice(2);
if (!caFile) { console.error("usage: extension.mjs EXTENSION_DIR PACKAGE_DIR VERIFIER_WS_URL FIXTURE_ADDR CA_PEM_FILE [ARTIFACT_DIR]"); process.exit(2); }
mkdirSync(outDir, { recursive: true });
const secret = "extension-secret-token-5678";

// The extension as a user would ship it: its files plus the package in tlsproof/; the test adds
// config.json (where the verifier and the server are) and a manifest key, which pins the id.
const dir = mkdtempSync(join(tmpdir(), "tlsproof-extension-"));
cpSync(extSrc, dir, { recursive: true });
cpSync(pkg, join(dir, "tlsproof"), { recursive: true });
writeFileSync(join(dir, "config.json"), JSON.stringify({
  verifierUrl, url: `https://${fixture}/json`, serverName: "localhost", caPem: readFileSync(caFile, "utf8"), token: secret,
}));
const der = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "der" });
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...manifest, key: der.toString("base64") }, null, 2));
// An extension id is the key's SHA-256, first 16 bytes, hex digits 0-f written as a-p.
const id = [...createHash("sha256").update(der).digest("hex").slice(0, 32)].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join("");

let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.error(`FAIL: ${what}`); } };

const browser = await Browser.start({ args: [`--disable-extensions-except=${dir}`, `--load-extension=${dir}`] });
const logs = await collectLogs(browser.capabilities?.["goog:chromeOptions"]?.debuggerAddress);
try {
  const popup = `chrome-extension://${id}/popup.html`;
  await browser.until(async () => { await browser.goto(popup); return (await browser.text("#notarize")) === "Notarize"; }, 20000, `the extension's popup page (${popup})`);
  const isolated = await browser.eval("return crossOriginIsolated");
  check(isolated === true, `the extension's pages are cross-origin isolated (${isolated})`);
  await browser.click("#notarize");
  const out = await browser.until(async () => {
    const t = await browser.text("#out");
    return t.startsWith("verified") || t.startsWith("Error") ? t : null;
  }, Number(process.env.TLSPROOF_EXTENSION_TIMEOUT_MS || 180000), "the offscreen document's answer");
  writeFileSync(join(outDir, "extension.png"), await browser.screenshot());
  console.log(`extension popup:\n${out}`);
  check(out.startsWith("verified (zk, fast)"), "the offscreen document notarized (request: zk, response: fast path)");
  check(out.includes("Alice Example"), "the verified response is shown");
  check(out.includes("Authorization: █") && !out.includes(secret), "the secret header is hidden");
  // The prover's threads: the package's thread.js, started from its own file (a
  // blob: copy could not import the wasm glue under the extension's CSP).
  const threads = logs.targets.filter((t) => t.startsWith("worker ") && t.endsWith("/tlsproof/thread.js"));
  const blobWorkers = logs.targets.filter((t) => t.startsWith("worker blob:"));
  console.log(`thread workers: ${threads.length} (${threads[0] ?? "none"}), blob: workers: ${blobWorkers.length}`);
  check(threads.length >= 1 && threads.every((t) => t.startsWith(`worker chrome-extension://${id}/`)) && !blobWorkers.length,
    "the prover's thread workers run in the extension, from chrome-extension:// URLs");
} catch (e) {
  failed++;
  console.error(`FAIL: ${e.message}`);
} finally {
  if (failed) console.error(`what the extension's pages and workers logged:\n  ${logs.lines.join("\n  ") || "(nothing)"}`);
  logs.close();
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`extension e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
