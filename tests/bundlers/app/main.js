// A dApp page as a bundler user writes it: the package imported by name, nothing configured.
// It runs one fast-path and one ZK-path notarization, and one in a session prepared before its
// request, and prints the results as JSON in #out.
// Where the verifier and the server are comes in the URL's fragment (so the page itself makes
// no request for it): #{"verifierUrl": …, "fixture": "localhost:PORT", "caPem": …, "verifierKey": …}.
// With verifierKey (the verifier signs), it also presents the fast-path response from the
// attestation and checks the presentation as a third party would.
import { notarize, prepare } from "tlsproof";
import { present, verifyPresentation } from "tlsproof/attestation";

const out = document.getElementById("out");
const config = JSON.parse(decodeURIComponent(location.hash.slice(1)));
const request = {
  verifierUrl: config.verifierUrl,
  url: `https://${config.fixture}/json`,
  caPem: config.caPem,
  headers: { Authorization: "Bearer bundler-secret-token" },
};
const summary = (r) => ({ sentPath: r.sent.path, recvPath: r.recv.path, sent: r.sent.printable, recv: r.recv.printable });

async function run() {
  const fast = await notarize({ ...request, reveal: { sent: { redactHeaders: ["authorization"] }, recv: "all" } });
  const zk = await notarize({ ...request, reveal: { sent: { redactHeaders: ["authorization"] }, recv: { jsonFields: ["owner"] } } });
  // A session prepared before its request: the headers come later, and it notarizes once.
  const session = await prepare({ ...request, headers: {} });
  const prepared = await session.notarize({ headers: { Authorization: "Bearer bundler-secret-token" } });
  const again = await session.notarize().then(() => "notarized twice", (e) => e.code);
  let presented = null;
  let tokenInJson = null;
  if (config.verifierKey) {
    // the secrets hold the hidden token, but JSON.stringify(result) must not carry them
    const hex = (text) => Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
    tokenInJson = JSON.stringify(fast).includes(hex("bundler-secret-token"));
    const { attestation, secrets } = fast.attestation;
    const p = present(attestation, secrets, [{ direction: "received", start: 0, end: fast.recv.length }]);
    presented = verifyPresentation(JSON.stringify(p), { verifierKey: config.verifierKey }).disclosed[0].text;
  }
  return { ok: true, fast: summary(fast), zk: summary(zk), prepared: summary(prepared), again, presented, tokenInJson };
}

run().then(
  (result) => { out.textContent = JSON.stringify(result); },
  (e) => { out.textContent = JSON.stringify({ ok: false, code: e.code, message: e.message }); },
);
