// The README's code must be the code the tests run: its dApp example is www/example.js (run
// by tests/e2e/demo-page.mjs), its extension snippets are examples/extension/ (run by
// tests/e2e/extension.mjs), its Vite config is tests/bundlers/vite/ (run by tests/e2e/bundlers.mjs),
// its Node.js example is examples/node/notarize.mjs (run by tests/node/notarize.test.mjs).
import { readFileSync } from "node:fs";
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const snippets = [
  ["js", "www/example.js", "dApp example"],
  ["json", "examples/extension/manifest.json", "extension manifest"],
  ["js", "examples/extension/offscreen.js", "extension's offscreen document"],
  ["js", "tests/bundlers/vite/vite.config.js", "Vite config"],
  ["js", "examples/node/notarize.mjs", "Node.js example"],
];
let bad = 0;
for (const [lang, file, what] of snippets) {
  const code = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
  if (readme.includes("```" + lang + "\n" + code + "```")) {
    console.log(`README: the ${what} is ${file}, verbatim`);
  } else {
    console.error(`README.md's ${what} differs from ${file} (the code a browser e2e test runs)`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
