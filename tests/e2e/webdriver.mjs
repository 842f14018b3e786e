// A minimal WebDriver client (the W3C HTTP protocol, Node's built-in fetch) driving headless
// Chromium through chromedriver: no Playwright download, works offline.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on("error", reject);
  });
}

export class Browser {
  /** `args`: more Chromium switches (e.g. `--load-extension=DIR`). */
  static async start({ chromedriver = "/usr/bin/chromedriver", chromium = "/usr/bin/chromium", args: extra = [] } = {}) {
    const port = await freePort();
    const driver = spawn(chromedriver, [`--port=${port}`], { stdio: "ignore" });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try { if ((await (await fetch(`${base}/status`)).json()).value.ready) break; } catch { /* not up yet */ }
      if (i > 100) { driver.kill(); throw new Error("chromedriver did not start"); }
      await sleep(100);
    }
    const profile = mkdtempSync(join(tmpdir(), "tlsproof-e2e-"));
    const b = new Browser(driver, base, profile);
    const args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--window-size=1200,1500", `--user-data-dir=${profile}`, ...extra];
    const s = await b.#cmd("POST", "/session", { capabilities: { alwaysMatch: { browserName: "chrome", "goog:chromeOptions": { binary: chromium, args } } } });
    b.session = s.sessionId;
    b.capabilities = s.capabilities;
    return b;
  }

  constructor(driver, base, profile) { this.driver = driver; this.base = base; this.profile = profile; }

  async #cmd(method, path, body) {
    const r = await fetch(this.base + path, { method, headers: { "content-type": "application/json" }, body: body && JSON.stringify(body) });
    const j = await r.json();
    if (!r.ok) throw new Error(`WebDriver ${method} ${path}: ${j.value?.error}: ${j.value?.message}`);
    return j.value;
  }
  #s(path) { return `/session/${this.session}${path}`; }

  goto(url) { return this.#cmd("POST", this.#s("/url"), { url }); }
  async find(css) { return (await this.#cmd("POST", this.#s("/element"), { using: "css selector", value: css }))[ELEMENT]; }
  async click(css) { return this.#cmd("POST", this.#s(`/element/${await this.find(css)}/click`), {}); }
  async text(css) { return this.#cmd("GET", this.#s(`/element/${await this.find(css)}/text`)); }
  eval(script, ...args) { return this.#cmd("POST", this.#s("/execute/sync"), { script, args }); }
  async screenshot() { return Buffer.from(await this.#cmd("GET", this.#s("/screenshot")), "base64"); }

  /** Polls `fn` until it returns a truthy value or `ms` pass. */
  async until(fn, ms, what) {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn().catch(() => null);
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await sleep(250);
    }
  }

  async close() {
    try { if (this.session) await this.#cmd("DELETE", this.#s("")); } catch { /* already gone */ }
    this.driver.kill();
    rmSync(this.profile, { recursive: true, force: true });
  }
}
