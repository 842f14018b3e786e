// wasm-bindgen-rayon's no-bundler helper starts each thread worker from a blob: copy of itself
// (so that a helper on a CDN still works). In a Manifest V3 extension that worker then cannot
// load the wasm-bindgen glue: the extension's CSP (script-src 'self') refuses
// chrome-extension://ID/…/tlsproof.js from a blob: worker. This patch starts the worker from the
// helper's own URL when it is same-origin (extensions, and pages serving the package
// themselves) and keeps the blob: copy for a helper on another origin.
//   node scripts/patch-worker-helpers.mjs dist/tlsproof/wasm/snippets
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// (The file has CRLF line endings.)
const blob = /let scriptBlob = await fetch\(import\.meta\.url\)\.then\(r => r\.blob\(\)\);(\r?\n)(\s*)let url = URL\.createObjectURL\(scriptBlob\);/;
const own = "// tlsproof: from its own URL when same-origin (an extension's CSP refuses imports in a blob: worker)$1" +
  "$2let url = new URL(import.meta.url).origin === self.location.origin ? import.meta.url$1" +
  "$2  : URL.createObjectURL(await fetch(import.meta.url).then(r => r.blob()));";
const files = readdirSync(process.argv[2], { recursive: true }).filter((f) => f.endsWith("workerHelpers.no-bundler.js"));
if (files.length !== 1) { console.error(`[package] expected one workerHelpers.no-bundler.js, found ${files.length}`); process.exit(1); }
const path = join(process.argv[2], files[0]);
const text = readFileSync(path, "utf8");
if (!blob.test(text)) { console.error(`[package] ${path}: wasm-bindgen-rayon's blob: worker code changed; update this patch`); process.exit(1); }
writeFileSync(path, text.replace(blob, own));
console.log(`[package] ${files[0]}: thread workers start from the helper's own URL when same-origin`);
