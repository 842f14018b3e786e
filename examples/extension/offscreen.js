import { notarize } from "./tlsproof/index.js";

chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  if (message?.type !== "offscreen-notarize") return false;
  notarize(message.options).then(
    (result) => sendResponse({ recv: result.recv.printable, sent: result.sent.printable, paths: [result.sent.path, result.recv.path] }),
    (e) => sendResponse({ error: { code: e.code, message: e.message } }),
  );
  return true; // answers asynchronously
});
