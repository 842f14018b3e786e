import { notarize } from "tlsproof";

const result = await notarize({
  verifierUrl: process.env.VERIFIER_URL, // a `tlsproof verifier`, e.g. ws://127.0.0.1:7047/
  url: process.env.URL, // e.g. https://api.example.com/balance
  caPem: process.env.CA_PEM, // only for a server under a private CA
  headers: { Authorization: `Bearer ${process.env.TOKEN}` },
  reveal: { sent: { redactHeaders: ["authorization"] }, recv: "all" },
  onProgress: ({ phase, fraction }) => console.error(phase, fraction),
});
console.log(result.recv.printable);
