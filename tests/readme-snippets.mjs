// The README's code must be the code the tests run: its dApp example is www/example.js.
import { readFileSync } from "node:fs";
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const example = readFileSync(new URL("../www/example.js", import.meta.url), "utf8");
if (!readme.includes("```js\n" + example + "```")) {
  console.error("README.md's dApp example differs from www/example.js (the code the browser e2e test runs)");
  process.exit(1);
}
console.log("README: the dApp example is www/example.js, verbatim");
