// The service worker: it cannot start Web Workers, so it hands notarize requests to an
// offscreen document (one at a time is plenty) and relays the answer.
async function offscreenDocument() {
  if (await chrome.offscreen.hasDocument()) return;
  await chrome.offscreen.createDocument({
    url: "offscreen.html",
    reasons: ["WORKERS"],
    justification: "tlsproof runs its multithreaded wasm prover in Web Workers",
  });
}

chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  if (message?.type !== "notarize") return false;
  offscreenDocument()
    .then(() => chrome.runtime.sendMessage({ ...message, type: "offscreen-notarize" }))
    .then(sendResponse, (e) => sendResponse({ error: { code: "INTERNAL", message: String(e) } }));
  return true; // the answer comes later
});
