// End to end in a real browser: loads the demo page served by `tlsproof verifier --www`,
// chooses JSON-field reveal, presses Notarize, waits for the verdict and checks what the
// page shows; then runs the README's dApp example page. Saves screenshots as artifacts.
//   node tests/e2e/demo-page.mjs http://127.0.0.1:PORT/ test-artifacts/
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Browser } from "./webdriver.mjs";

const [base, outDir = "test-artifacts"] = process.argv.slice(2);
if (!base) { console.error("usage: demo-page.mjs PAGE_URL [ARTIFACT_DIR]"); process.exit(2); }
mkdirSync(outDir, { recursive: true });

let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.error(`FAIL: ${what}`); } };

const browser = await Browser.start();
try {
  await browser.goto(base);
  await browser.until(async () => (await browser.text("#env")).includes("crossOriginIsolated=true"), 20000, "the page to load, isolated");
  await browser.click("input[name=reveal][value=json]");
  await browser.click("#notarize");
  const status = await browser.until(async () => {
    const s = await browser.text("#status");
    return s.startsWith("verified") || s.startsWith("failed") ? s : null;
  }, 180000, "the verdict");
  const sent = await browser.text("#sent");
  const recv = await browser.text("#recv");
  const recvPath = await browser.text("#recv-path");
  writeFileSync(join(outDir, "demo-page.png"), await browser.screenshot());
  console.log(`status: ${status}\nrequest:  ${sent}\nresponse: ${recv}\nresponse path: ${recvPath}`);
  check(status.startsWith("verified"), `the page reports a verdict (${status})`);
  check(recv.includes('"owner":"Alice Example"'), "the revealed JSON field is shown");
  check(recv.includes("█") && !recv.includes("ACC-0042") && !recv.includes("1234.56"), "the rest of the response is hidden");
  check(sent.includes("Authorization: █") && !sent.includes("demo-secret-token"), "the secret header is hidden");
  check(recvPath.startsWith("ZK path"), "the response took the ZK path");
  const highlighted = await browser.eval("return [...document.querySelectorAll('#recv .revealed')].map(e => e.textContent).join('|')");
  check(highlighted.includes('"owner":"Alice Example"'), `revealed bytes are highlighted (${highlighted})`);

  // The README's dApp example, as a page.
  await browser.goto(new URL("example.html", base).href);
  const out = await browser.until(async () => {
    const t = await browser.text("#out");
    return t.includes("fast") || t.startsWith("Error") ? t : null;
  }, 180000, "the dApp example");
  writeFileSync(join(outDir, "dapp-example.png"), await browser.screenshot());
  console.log(`dApp example: ${out}`);
  check(out.includes("Alice Example") && out.includes("fast"), "the dApp example notarized with the fast path");

  // A thread pool that is not up in time rejects with TIMEOUT (1 ms is always too short), and a
  // retry in the same module waits for that same start (a second initThreadPool would fail).
  await browser.eval(`
    const src = 'import { initProver } from "' + location.origin + '/pkg/direct.js";' +
      'const code = (p) => p.then(() => "started", (e) => e.code);' +
      'const first = await code(initProver({ startTimeoutMs: 1 }));' +
      'const bad = await code(initProver({ startTimeoutMs: -5 }));' +
      'postMessage([first, bad, await code(initProver({}))].join(","));';
    const w = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })), { type: "module" });
    w.onmessage = (e) => { window.__poolStart = e.data; w.terminate(); };
    w.onerror = (e) => { window.__poolStart = "worker error: " + e.message; };`);
  const pool = await browser.until(() => browser.eval("return window.__poolStart"), 60000, "the pool start test");
  check(pool === "TIMEOUT,BAD_OPTIONS,started", `thread pool start: timeout, bad option, then started (${pool})`);
  const proverStart = await browser.until(() => browser.eval(`
    if (!window.__prover) {
      window.__prover = "pending";
      import("/pkg/index.js").then(({ Prover }) => {
        const p = new Prover({ startTimeoutMs: 1 });
        p.ready.then(() => "started", (e) => e.code).then((r) => { window.__prover = r; p.terminate(); });
      });
    }
    return window.__prover === "pending" ? null : window.__prover;`), 60000, "the Prover start test");
  check(proverStart === "TIMEOUT", `a Prover whose pool cannot start in time rejects ready with TIMEOUT (${proverStart})`);
} finally {
  await browser.close();
}
console.log(`browser e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
