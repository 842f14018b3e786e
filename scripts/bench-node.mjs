// One sample of `tlsproof bench run --target node`: a notarization through the package's Node.js
// prover (PACKAGE_DIR/node.js, as `import "tlsproof"` loads it under Node). Reads the job,
// {options, prepared}, from stdin; prints {ok, totalMs, peakMemory} or {ok: false, error} as
// one JSON line.
//   node scripts/bench-node.mjs PACKAGE_DIR < job.json
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * This process's peak resident set (the prover's threads and Node.js itself), bytes: Linux's
 * VmHWM, as the native target reads it. Not getrusage's maxRSS, which on Linux keeps the
 * high-water mark of the bench process this one was forked from.
 */
function peakMemory() {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch { /* not Linux */ }
  return process.resourceUsage().maxRSS * 1024;
}

const failure = (e) => ({ ok: false, error: { code: e?.code || "INTERNAL", message: String(e?.message || e) } });
try {
  const { notarize, prepare } = await import(pathToFileURL(resolve(process.argv[2], "node.js")).href);
  const job = JSON.parse(readFileSync(0, "utf8"));
  // a prepared session's time is its notarize call's, as the browser target measures it
  const session = job.prepared ? await prepare(job.options) : null;
  const t0 = performance.now();
  await (session ? session.notarize() : notarize(job.options));
  const totalMs = performance.now() - t0;
  console.log(JSON.stringify({ ok: true, totalMs, peakMemory: peakMemory() }));
} catch (e) {
  console.log(JSON.stringify(failure(e)));
  process.exitCode = 1;
}
