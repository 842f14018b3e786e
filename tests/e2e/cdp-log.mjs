// Collects console messages, exceptions and log entries (CSP refusals among them) from every
// target of a Chromium that chromedriver started: pages, the extension's service worker and
// offscreen document, and their workers. Needs a global WebSocket (Node >= 22, or Node 20 with
// --experimental-websocket). `targets` lists "type url" of every target seen, `requests` the
// URL of every request any of them made.
export async function collectLogs(debuggerAddress) {
  const lines = [], targets = [], requests = [];
  if (typeof WebSocket === "undefined") throw new Error("no global WebSocket: use Node >= 22 or node --experimental-websocket");
  if (!debuggerAddress) throw new Error("chromedriver did not report the browser's debugger address");
  const { webSocketDebuggerUrl } = await (await fetch(`http://${debuggerAddress}/json/version`)).json();
  const ws = new WebSocket(webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let nextId = 1;
  const send = (method, params = {}, sessionId) => ws.send(JSON.stringify({ id: nextId++, method, params, sessionId }));
  const where = new Map();
  ws.onmessage = ({ data }) => {
    const { method, params, sessionId } = JSON.parse(data);
    if (method === "Target.attachedToTarget") {
      const s = params.sessionId;
      targets.push(`${params.targetInfo.type} ${params.targetInfo.url}`);
      where.set(s, `${params.targetInfo.type} ${params.targetInfo.url}`.slice(0, 100));
      send("Runtime.enable", {}, s);
      send("Log.enable", {}, s);
      send("Network.enable", {}, s);
      send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, s);
      send("Runtime.runIfWaitingForDebugger", {}, s);
    } else if (method === "Runtime.consoleAPICalled") {
      lines.push(`[${where.get(sessionId)}] console.${params.type}: ${params.args.map((a) => a.value ?? a.description).join(" ")}`);
    } else if (method === "Runtime.exceptionThrown") {
      const d = params.exceptionDetails;
      lines.push(`[${where.get(sessionId)}] exception: ${d.exception?.description ?? d.text}`);
    } else if (method === "Network.requestWillBeSent") {
      requests.push(params.request.url);
    } else if (method === "Network.webSocketCreated") {
      requests.push(params.url);
    } else if (method === "Log.entryAdded") {
      lines.push(`[${where.get(sessionId)}] ${params.entry.level}: ${params.entry.text}`);
    }
  };
  send("Target.setDiscoverTargets", { discover: true });
  send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
  return { lines, targets, requests, close: () => ws.close() };
}
