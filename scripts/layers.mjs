// The crate's layers (docs/architecture.md): a module may use its own layer's and lower ones',
// never a higher one's, and no two top-level modules may use each other; and no files' modules
// anywhere use each other in a circle (a module and its own submodules aside). Reads the library's
// sources (not src/bin, not test code: tests.rs, *_tests.rs, modules declared under a test cfg
// and each file's `mod tests`) for `crate::<module>` paths outside comments.
//   node scripts/layers.mjs
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, dirname, basename } from "node:path";

const LAYERS = [
  ["primitives", "channel", "http"],
  ["tls", "ot", "circuits"],
  ["transport", "cost", "fixture", "proxy", "wire"],
  ["zk", "gc"],
  ["mpc"],
  ["attestation", "protocol"],
  ["bench", "wasm"],
];
// Uses that break the rule, each to be cut: none.
const KNOWN = new Set([]);

const root = join(dirname(new URL(import.meta.url).pathname), "..", "src");
const layer = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, i])));

function files(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".rs") ? [p] : [];
  });
}

// Modules declared only for tests: `#[cfg(…test…)]` on the line before `mod name;`.
const testOnly = new Set();
for (const f of files(root)) {
  const lines = readFileSync(f, "utf8").split("\n");
  lines.forEach((l, i) => {
    const m = l.match(/^\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+);/);
    if (m && i > 0 && /#\[cfg\(.*\btest\b.*\)\]/.test(lines[i - 1])) {
      const dir = ["mod.rs", "lib.rs"].includes(basename(f)) ? dirname(f) : f.replace(/\.rs$/, "");
      testOnly.add(join(dir, `${m[1]}.rs`));
      testOnly.add(join(dir, m[1]));
    }
  });
}

// The library's non-test code of file `f`, one string per line with comments removed; null for
// a test file.
function nonTestLines(f) {
  const rel = relative(root, f);
  if (/(^|\/)(tests|[a-z_]+_tests)\.rs$/.test(rel)) return null;
  if ([...testOnly].some((t) => f === t || f.startsWith(t + "/"))) return null;
  let src = readFileSync(f, "utf8");
  const cut = src.search(/^#\[cfg\((all\()?test[^\n]*\n(pub(\(crate\))? )?mod tests/m);
  if (cut >= 0) src = src.slice(0, cut);
  return src.split("\n").map((l) => (/^\s*\/\//.test(l) ? "" : l.replace(/\/\/.*$/, "")));
}

const edges = new Map();
for (const f of files(root)) {
  const rel = relative(root, f);
  const top = rel.split("/")[0].replace(/\.rs$/, "");
  if (top === "bin" || top === "lib" || !layer.has(top)) continue;
  const lines = nonTestLines(f);
  if (!lines) continue;
  lines.forEach((line, i) => {
    for (const m of line.matchAll(/crate::([a-z_]+)/g)) {
      const used = m[1];
      if (used === top || !layer.has(used)) continue;
      const key = `${top}->${used}`;
      if (!edges.has(key)) edges.set(key, `${rel}:${i + 1}`);
    }
  });
}

const problems = [];
for (const [key, where] of edges) {
  if (KNOWN.has(key)) continue;
  const [from, to] = key.split("->");
  if (layer.get(to) > layer.get(from)) problems.push(`${key}: a lower layer uses a higher one (${where})`);
  else if (edges.has(`${to}->${from}`) && !KNOWN.has(`${to}->${from}`)) problems.push(`${key}: the two use each other (${where})`);
}
for (const k of KNOWN) if (!edges.has(k)) problems.push(`${k} is listed as a known exception but no longer happens: remove it`);
// Circles between files' modules, over the same non-test code: `crate::a::b` paths (the longest
// prefix that names a module) and `super::x` siblings.
const modOf = (f) => relative(root, f).replace(/\.rs$/, "").replace(/\/mod$/, "").replace(/\//g, "::");
const mods = new Map();
for (const f of files(root)) {
  const m = modOf(f);
  if (m !== "lib" && !m.startsWith("bin")) mods.set(m, f);
}
const graph = new Map();
for (const [m, f] of mods) {
  const lines = nonTestLines(f);
  if (!lines) continue;
  const src = lines.join("\n");
  const deps = new Set();
  for (const x of src.matchAll(/crate::([a-z_0-9]+(?:::[a-z_0-9]+)*)/g)) {
    const parts = x[1].split("::");
    for (let k = parts.length; k > 0; k--) {
      const p = parts.slice(0, k).join("::");
      if (mods.has(p)) { deps.add(p); break; }
    }
  }
  const base = m.includes("::") ? m.slice(0, m.lastIndexOf("::")) + "::" : "";
  for (const x of src.matchAll(/\bsuper::([a-z_0-9]+)/g)) if (mods.has(base + x[1])) deps.add(base + x[1]);
  graph.set(m, [...deps].filter((d) => d !== m && !d.startsWith(m + "::") && !m.startsWith(d + "::")));
}
// Tarjan's strongly connected components.
let counter = 0;
const index = new Map(), low = new Map(), stack = [], onStack = new Set();
function connect(v) {
  index.set(v, counter); low.set(v, counter); counter++; stack.push(v); onStack.add(v);
  for (const w of graph.get(v) || []) {
    if (!index.has(w)) { connect(w); low.set(v, Math.min(low.get(v), low.get(w))); }
    else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const circle = [];
    let w;
    do { w = stack.pop(); onStack.delete(w); circle.push(w); } while (w !== v);
    if (circle.length > 1) problems.push(`these modules use each other in a circle: ${circle.sort().join(", ")}`);
  }
}
for (const v of graph.keys()) if (!index.has(v)) connect(v);

if (problems.length) {
  console.error(`[layers] ${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`[layers] ${edges.size} uses between top-level modules follow the layers (${KNOWN.size} known exceptions); no circle among ${graph.size} files' modules`);
