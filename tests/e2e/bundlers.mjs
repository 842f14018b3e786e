// The npm package where dApps are built: a Vite app (current and previous major) and a webpack 5
// app (tests/bundlers/) install the packed tarball, are built for production and served from
// the built folder with only the cross-origin isolation headers; headless Chromium then runs a
// fast-path and a ZK-path notarization in each. Last, the same Vite app on its dev server.
//   node --experimental-websocket tests/e2e/bundlers.mjs TARBALL VERIFIER_WS_URL FIXTURE_ADDR CA_PEM_FILE WORK_DIR
// Checks per build: the wasm is emitted exactly once (and nowhere inlined), every request the
// page and its workers make stays inside the built folder (or is the verifier's WebSocket), and
// the prover's thread workers started.
import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { collectLogs } from "./cdp-log.mjs";
import { Browser, freePort } from "./webdriver.mjs";

// verifierKey: the verifier's public key when it signs (the page then checks a presentation)
const [tarball, verifierUrl, fixture, caFile, work, verifierKey] = process.argv.slice(2);
if (!work) { console.error("usage: bundlers.mjs TARBALL VERIFIER_WS_URL FIXTURE_ADDR CA_PEM_FILE WORK_DIR"); process.exit(2); }
const templates = join(dirname(fileURLToPath(import.meta.url)), "..", "bundlers");
const secret = "bundler-secret-token";
const isolation = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
const wasm = readFileSync(join(tarballPackageDir(), "wasm", "tlsproof_bg.wasm"));
const threads = 2; // the machine's cores, as navigator.hardwareConcurrency gives them to defaultThreads()

let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.error(`FAIL: ${what}`); } };

/** The unpacked package the tarball was made from (to compare the emitted wasm with). */
function tarballPackageDir() {
  const dir = join(work, "package");
  if (!existsSync(dir)) execFileSync("tar", ["-xzf", tarball, "-C", work]);
  return dir;
}

/** A copy of tests/bundlers/<template> plus the shared page, with the tarball installed. */
function app(name, template, devDependencies = {}) {
  const dir = join(work, name);
  cpSync(join(templates, template), dir, { recursive: true });
  cpSync(join(templates, "app"), dir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  pkg.dependencies.tlsproof = `file:${resolve(tarball)}`;
  Object.assign(pkg.devDependencies, devDependencies);
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  const t = Date.now();
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"], { cwd: dir, stdio: "inherit" });
  console.log(`[${name}] npm install: ${((Date.now() - t) / 1000).toFixed(1)} s (${Object.entries(pkg.devDependencies).map(([k, v]) => `${k} ${v}`).join(", ")})`);
  return dir;
}

const files = (dir) => readdirSync(dir, { recursive: true }).map((f) => join(dir, f)).filter((f) => statSync(f).isFile());

/** Builds for production; checks that the output holds the wasm exactly once. Returns the output folder. */
function build(name, dir, outDir) {
  const t = Date.now();
  execFileSync("npm", ["run", "--silent", "build"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  const out = join(dir, outDir);
  const all = files(out);
  const wasms = all.filter((f) => f.endsWith(".wasm"));
  const same = wasms.filter((f) => readFileSync(f).equals(wasm));
  // Inlined copies: the wasm's opening bytes as raw bytes or base64 in any other file.
  const head = wasm.subarray(8, 72);
  const inlined = all.filter((f) => !f.endsWith(".wasm") && (readFileSync(f).includes(head) || readFileSync(f).includes(head.toString("base64").slice(4, 60))));
  const sizes = all.map((f) => `${relative(out, f)} ${statSync(f).size}`).join(", ");
  console.log(`[${name}] build: ${((Date.now() - t) / 1000).toFixed(1)} s; ${sizes}`);
  check(wasms.length === 1 && same.length === 1 && !inlined.length,
    `[${name}] the output holds the package's wasm exactly once (${wasms.length} .wasm, ${same.length} identical, inlined in: ${inlined.map((f) => relative(out, f)).join(", ") || "none"})`);
  return out;
}

const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".json": "application/json" };

/** Serves `root` alone, with the isolation headers; records what was asked for and what was missing. */
function serve(root) {
  const missing = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = resolve(root, "." + path);
    if (file !== root && !file.startsWith(root + sep)) { res.writeHead(403).end(); return; }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) { missing.push(path); res.writeHead(404, isolation).end("not found"); return; }
    res.writeHead(200, { ...isolation, "Content-Type": types[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok({ origin: `http://127.0.0.1:${server.address().port}`, missing, close: () => server.close() })));
}

/**
 * Opens the page and checks its two notarizations, its thread workers and its requests; or,
 * with `refusal`, that the page failed with that error code and a message matching `refusal.message`.
 */
async function drive(name, origin, { missing = [], allowed = () => false, refusal } = {}) {
  const failedBefore = failed;
  const browser = await Browser.start();
  const logs = await collectLogs(browser.capabilities?.["goog:chromeOptions"]?.debuggerAddress);
  try {
    const config = { verifierUrl, fixture, caPem: readFileSync(caFile, "utf8"), verifierKey };
    await browser.goto(`${origin}/#${encodeURIComponent(JSON.stringify(config))}`);
    const text = await browser.until(async () => {
      const t = await browser.text("#out");
      return t.startsWith("{") ? t : null;
    }, 180000, `[${name}] the page's notarizations`);
    const r = JSON.parse(text);
    if (refusal) {
      console.log(`[${name}] ${r.code}: ${r.message}`);
      check(!r.ok && r.code === refusal.code && refusal.message.test(r.message), `[${name}] the page fails with ${refusal.code} naming what failed`);
      return;
    }
    check(r.ok, `[${name}] the page notarized (${r.ok ? "" : `${r.code}: ${r.message}`})`);
    if (r.ok) {
      console.log(`[${name}] fast: ${r.fast.sentPath}/${r.fast.recvPath}; zk: ${r.zk.sentPath}/${r.zk.recvPath}: ${r.zk.recv.split("\n").pop()}`);
      check(r.fast.recvPath === "fast" && r.fast.recv.includes('"owner":"Alice Example"'), `[${name}] the fully revealed response took the fast path`);
      check(r.zk.recvPath === "zk" && r.zk.recv.includes('"owner":"Alice Example"') && !r.zk.recv.includes("ACC-0042"),
        `[${name}] the JSON-field reveal took the ZK path and hides the rest`);
      check([r.fast, r.zk, r.prepared].every((x) => x.sent.includes("Authorization: █") && !x.sent.includes(secret)), `[${name}] the token stays hidden`);
      check(r.prepared.recvPath === "fast" && r.prepared.recv.includes('"owner":"Alice Example"') && r.again === "SESSION_CLOSED",
        `[${name}] a prepared session notarizes the request given later, once (then ${r.again})`);
      if (verifierKey) {
        check(typeof r.presented === "string" && r.presented.includes('"owner":"Alice Example"'), `[${name}] the attestation's presentation of the response verifies in the page`);
        check(r.tokenInJson === false, `[${name}] JSON.stringify(result) leaves the attestation's secrets (the hidden token) out`);
      }
    }
    const workers = logs.targets.filter((t) => t.startsWith("worker "));
    // The prover's worker plus one per thread (each thread's own copy of the pool code is never started).
    check(workers.length === 1 + threads, `[${name}] the prover's worker and its ${threads} thread workers started (${workers.length} workers: ${workers.join(", ")})`);
    // Network requests only (not the browser's own chrome:// pages, nor data: URLs).
    const network = [...new Set(logs.requests)].filter((u) => /^(https?|wss?):/.test(u));
    const outside = network.filter((u) => !u.startsWith(origin + "/") && u !== verifierUrl && !allowed(u));
    check(!outside.length, `[${name}] every request stays inside the served folder (outside: ${outside.join(", ") || "none"})`);
    check(!missing.length, `[${name}] every request was for a file the build emitted (missing: ${missing.join(", ") || "none"})`);
  } catch (e) {
    failed++;
    console.error(`FAIL: [${name}] ${e.message}`);
  } finally {
    if (failed > failedBefore) console.error(`[${name}] what the page and its workers logged:\n  ${logs.lines.join("\n  ") || "(nothing)"}`);
    logs.close();
    await browser.close();
  }
}

async function production(name, dir, outDir) {
  const out = build(name, dir, outDir);
  const server = await serve(out);
  try {
    await drive(name, server.origin, { missing: server.missing });
  } finally {
    server.close();
  }
  return out;
}

/** The built page with one of the package's workers not deployed: the error names that worker. */
async function withoutWorker(name, out, chunk, refusal) {
  const broken = `${out}-without-${chunk.source.replace(/\W/g, "")}`;
  cpSync(out, broken, { recursive: true });
  const gone = files(broken).filter((f) => chunk.test(relative(broken, f)));
  check(gone.length === 1, `[${name}] the build has one chunk matching ${chunk} (${gone.length})`);
  gone.forEach((f) => rmSync(f));
  const server = await serve(broken);
  try {
    await drive(name, server.origin, { refusal });
  } finally {
    server.close();
  }
}

/** The Vite dev server of `dir`: started on a free port, stopped after the page ran. */
async function viteDev(name, dir) {
  const vite = spawn(join(dir, "node_modules", ".bin", "vite"), ["--host", "127.0.0.1", "--port", String(await freePort()), "--strictPort"],
    { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
  try {
    const origin = await new Promise((ok, fail) => {
      let seen = "";
      vite.stdout.on("data", (d) => {
        seen += d.toString().replace(/\x1b\[[0-9;]*m/g, "");
        const m = seen.match(/http:\/\/127\.0\.0\.1:\d+/);
        if (m) ok(m[0]);
      });
      vite.on("exit", (code) => fail(new Error(`vite exited (${code}): ${seen}`)));
    });
    console.log(`[${name}] dev server at ${origin}`);
    // The dev server's own client (HMR) connects back to it over a WebSocket.
    await drive(name, origin, { allowed: (u) => u.startsWith(origin.replace("http:", "ws:") + "/") });
  } finally {
    vite.kill();
  }
}

const vite = app("vite8", "vite");
const viteOut = await production("vite 8 build", vite, "dist");
await withoutWorker("vite 8 build, thread worker not deployed", viteOut, /^assets\/thread-.*\.js$/,
  { code: "WORKER_START_FAILED", message: /^thread worker [12] of 2 \(tlsproof's thread\.js\) failed: its script or a module it imports did not load/ });
await withoutWorker("vite 8 build, prover worker not deployed", viteOut, /^assets\/worker-.*\.js$/,
  { code: "WORKER_START_FAILED", message: /^the tlsproof worker \(worker\.js\) failed: its script or a module it imports did not load/ });
const vite7 = app("vite7", "vite", { vite: "7.3.8" });
await production("vite 7 build", vite7, "dist");
await production("webpack 5 build", app("webpack5", "webpack"), "dist");
await viteDev("vite 8 dev", vite);
// Vite 7's dev server pre-bundles dependencies with esbuild into node_modules/.vite/, away from
// the package's worker files; the README's one extra line for it keeps the package as it is.
const config = join(vite7, "vite.config.js");
const plain = readFileSync(config, "utf8");
const excluded = plain.replace("preview: { headers } }", 'preview: { headers }, optimizeDeps: { exclude: ["tlsproof"] } }');
check(excluded !== plain, "[vite 7 dev] the config takes the optimizeDeps line");
writeFileSync(config, excluded);
await viteDev("vite 7 dev", vite7);

console.log(`bundlers e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
