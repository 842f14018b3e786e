// Runs the wasm prover in a module Web Worker: rayon needs a thread that may block.
import init, { initThreadPool, notarize } from "/pkg/tlsproof.js";

let ready = null;
async function setup(threads) {
  if (!ready) ready = (async () => { await init(); await initThreadPool(threads); })();
  return ready;
}

self.onmessage = async ({ data }) => {
  const { id, op, args } = data;
  try {
    if (op === "notarize") {
      await setup(args.threads);
      const secret = args.secret ? `${args.secret}\r\n` : "";
      const request = new TextEncoder().encode(
        `GET ${args.path} HTTP/1.1\r\nHost: ${args.serverName}\r\n${secret}Accept-Encoding: identity\r\nConnection: close\r\n\r\n`);
      const redact = args.secret ? [args.secret.split(":")[0].trim()] : [];
      const t0 = performance.now();
      const json = await notarize(args.verifierUrl, args.server, args.serverName, args.caPem, request, redact, args.reveal);
      self.postMessage({ id, ok: true, result: JSON.parse(json), ms: performance.now() - t0 });
    }
  } catch (e) {
    self.postMessage({ id, ok: false, error: String(e && e.message || e) });
  }
};
