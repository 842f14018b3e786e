import { notarize } from "tlsproof";

export async function proveBalance({ verifierUrl, url, token, ...tls }) {
  const result = await notarize({
    verifierUrl, url, ...tls,
    headers: { Authorization: `Bearer ${token}` },
    reveal: { sent: { redactHeaders: ["authorization"] }, recv: "all" }, // "all": fast path
    onProgress: ({ phase, fraction }) => console.log(phase, fraction),
  });
  return `${result.recv.path}: ${result.recv.printable}`; // hidden bytes print as █
}
