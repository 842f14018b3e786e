// Runs the wasm module in a module Web Worker: rayon needs a thread that may block.
import init, { initThreadPool, fetchHttpsViaProxy } from "/pkg/tlsproof.js";

let ready = null;
async function setup(threads) {
  if (!ready) ready = (async () => { await init(); await initThreadPool(threads); })();
  return ready;
}

self.onmessage = async ({ data }) => {
  const { id, op, args } = data;
  try {
    if (op === "fetch") {
      await setup(args.threads);
      const request = new TextEncoder().encode(
        `GET ${args.path} HTTP/1.1\r\nHost: ${args.host}\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n`);
      const t0 = performance.now();
      const reply = await fetchHttpsViaProxy(args.proxyUrl, args.target, args.serverName, args.caPem, request);
      self.postMessage({ id, ok: true, text: new TextDecoder().decode(reply), ms: performance.now() - t0 });
    }
  } catch (e) {
    self.postMessage({ id, ok: false, error: String(e && e.message || e) });
  }
};
