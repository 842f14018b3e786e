// Compiles against the package's .d.ts (npm test runs tsc on it); not executed.
import { notarize, prepare, Prover, TlsproofError, AbortError, LimitExceededError, WorkerStartError, ProxyUnreachableError, SessionClosedError, BusyError, StatementFalseError, type NotarizeResult, type StatementResult, type PreparedSession, type Progress } from "tlsproof";
import { present, verifyPresentation, decodeAttestation, verifyAttestation, PresentationError, type Presentation, type SignedAttestation } from "tlsproof/attestation";
import { initProver, notarize as notarizeInThisWorker, prepare as prepareInThisWorker, TimeoutError as DirectTimeout, WorkerStartError as DirectWorkerStart } from "tlsproof/direct";
// @ts-expect-error: the attestation functions are their own entry point (tlsproof/attestation)
import { present as notInTheMainEntry } from "tlsproof";
// @ts-expect-error: tlsproof/direct runs in the calling worker; it has no Prover class
import { Prover as NoProverHere } from "tlsproof/direct";

export async function everything(): Promise<string> {
  const controller = new AbortController();
  const prover = await Prover.create({ threads: 4 });
  try {
    const r: NotarizeResult = await prover.notarize({
      verifierUrl: "wss://verifier.example/",
      verifierKey: "secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf",
      url: "https://api.example/v1/me",
      serverName: "api.example",
      method: "POST",
      headers: [["Authorization", "Bearer x"], ["Content-Type", "application/json"]],
      body: "{}",
      reveal: { sent: [{ start: 0, end: 4 }], recv: { jsonFields: ["owner"] }, commitRecv: { jsonFields: ["balance"] } },
      maxSentBytes: 4096,
      maxRecvBytes: 65536,
      timeoutMs: 30_000,
      onProgress: (p: Progress) => console.log(p.phase === "waiting" ? `place ${p.position}` : p.phase, p.fraction.toFixed(2)),
      signal: controller.signal,
    });
    const path: "fast" | "zk" = r.recv.path;
    const firstHidden: number | undefined = r.sent.hidden[0]?.start;
    const bytes: Uint8Array = r.recv.bytes;
    return `${path} ${firstHidden} ${bytes.length} ${r.timings.totalMs} ${r.bytes.proverToVerifier} ${r.commitments.length}`;
  } catch (e) {
    if (e instanceof LimitExceededError) return `too big: ${e.message}`;
    if (e instanceof AbortError) return "cancelled";
    if (e instanceof WorkerStartError) return `not deployed right: ${e.message}`;
    if (e instanceof TlsproofError && e.code === "SERVER_UNREACHABLE") return "server down";
    if (e instanceof BusyError) return `busy: again in ${e.retryAfter ?? 10} s`;
    throw e;
  } finally {
    prover.terminate();
  }
}

export async function oneCall(): Promise<string> {
  const r = await notarize({ verifierUrl: "ws://127.0.0.1:7047/", server: "127.0.0.1:4443", path: "/json", reveal: { recv: "body" } });
  return r.sent.printable;
}

export async function provenStatement(): Promise<string> {
  const r = await notarize({
    verifierUrl: "ws://v/",
    url: "https://h/json",
    reveal: { prove: ["account.balance.amount >= 1000", 'account.balance.currency in {"EUR", "USD"}'] },
  });
  const s: StatementResult | undefined = r.statements[0];
  return `${s?.exchange} ${s?.statement} ${s?.value[0]?.end}`;
}

export async function provenAboutTheRequest(): Promise<string> {
  const r = await notarize({
    verifierUrl: "ws://v/",
    url: "https://h/transfer",
    method: "POST",
    body: '{"transfer":{"amount":250}}',
    reveal: { proveRequest: ["transfer.amount <= 500"], prove: ['status == "accepted"'] },
  });
  const direction: "sent" | "received" | undefined = r.statements[0]?.direction;
  return `${direction}`;
}

export async function twoRequests(): Promise<string> {
  const r = await notarize({
    verifierUrl: "ws://v/",
    requests: [
      { url: "https://h/login", method: "POST", body: "{}", reveal: { sent: "all", recv: "all" } },
      { path: "/me", headers: { Authorization: "Bearer t" }, reveal: { recv: { jsonFields: ["id"] } } },
    ],
  });
  const [first, second] = r.exchanges;
  const end: number | undefined = second?.response?.end;
  return `${first?.requestLine} ${first?.status} ${end}`;
}

export async function inMpcMode(): Promise<string> {
  try {
    const r = await notarize({ verifierUrl: "ws://v/", mode: "mpc", proxyUrl: "ws://proxy/", url: "https://h/" });
    const mode: "proxy" | "mpc" = r.mode;
    return mode;
  } catch (e) {
    if (e instanceof ProxyUnreachableError) return `no proxy: ${e.code}`;
    throw e;
  }
}

export async function overTls13(): Promise<string> {
  const r = await notarize({ verifierUrl: "ws://v/", url: "https://h/", tls: { versions: ["1.3"] } });
  const version: "1.2" | "1.3" = r.tls.version;
  const typeOfFirst: number | undefined = r.recv.records[0]?.contentType;
  return `${version} ${r.tls.cipherSuite} ${r.tls.group} ${typeOfFirst}`;
}

// @ts-expect-error: TLS versions are "1.2" and "1.3"
void notarize({ verifierUrl: "ws://v/", url: "https://h/", tls: { versions: ["1.1"] } });
void notarize({ verifierUrl: "ws://v/", url: "https://h/", tls: { versions: ["1.3"], cipherSuites: ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"] } });
// @ts-expect-error: cipherSuites names TLS 1.3 and TLS 1.2 suites by their IANA names
void notarize({ verifierUrl: "ws://v/", url: "https://h/", tls: { versions: ["1.3"], cipherSuites: ["TLS_AES_128_CCM_SHA256"] } });
void notarize({ verifierUrl: "ws://v/", url: "https://h/", tls: { versions: ["1.2"], cipherSuites: ["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"] } });
// @ts-expect-error: OpenSSL's names are not IANA names
void notarize({ verifierUrl: "ws://v/", url: "https://h/", tls: { cipherSuites: ["ECDHE-ECDSA-AES256-GCM-SHA384"] } });

export async function inAWorker(): Promise<NotarizeResult> {
  await initProver({ threads: 2 });
  void NoProverHere;
  void DirectTimeout;
  void DirectWorkerStart;
  return notarizeInThisWorker({ verifierUrl: "ws://127.0.0.1:7047/", url: "https://localhost:4443/json", headers: { Accept: "*/*" } });
}

export function misuse(): void {
  // @ts-expect-error: verifierUrl is required
  void notarize({ url: "https://h/" });
  // @ts-expect-error: reveal words are checked
  void notarize({ verifierUrl: "ws://v/", url: "https://h/", reveal: { recv: "everything" } });
  // @ts-expect-error: a statement has a path, an operator and a constant
  void notarize({ verifierUrl: "ws://v/", url: "https://h/", reveal: { prove: ["balance"] } });
  // @ts-expect-error: the mode is "proxy" or "mpc"
  void notarize({ verifierUrl: "ws://v/", url: "https://h/", mode: "2pc" });
  // @ts-expect-error: error codes are a closed set on the subclasses
  const code: "TIMEOUT" = new AbortError("x").code;
  void code;
}

export async function attested(): Promise<string> {
  const r = await notarize({ verifierUrl: "ws://v/", url: "https://h/", reveal: { recv: { jsonFields: ["balance"] } } });
  if (r.attestation === null) return "the verifier does not sign";
  const { attestation, verifierKey, secrets } = r.attestation;
  const p: Presentation = present(attestation, secrets, [{ direction: "received", start: 0, end: r.recv.length }, ["sent", 0, 4]]);
  try {
    const v = verifyPresentation(JSON.stringify(p), { verifierKey });
    const first = v.disclosed[0];
    const data: Uint8Array | undefined = first?.data;
    const ending: "open" | "close_notify" | "fatal_alert" = v.attestation.received.ending;
    return `${v.attestation.serverName}:${v.attestation.port} ${ending} ${first?.revealedToVerifier} ${first?.text} ${data?.length}`;
  } catch (e) {
    if (e instanceof PresentationError && e.reason === "SignatureMismatch") return `not this verifier: ${e.code}`;
    throw e;
  }
}

export function offline(signed: SignedAttestation, verifierKey: string): number {
  const a = verifyAttestation(signed, { verifierKey });
  const b = decodeAttestation(signed.data);
  // @ts-expect-error: reasons are a closed set
  const reason: PresentationError["reason"] = "Mismatch";
  void reason;
  // the statements about hidden values: exchange from 1, request or response, canonical text,
  // the value's ranges
  const stated = a.statements.find((s) => s.direction === "received" && s.statement === "account.balance.amount >= 1000");
  // @ts-expect-error: a direction is "sent" or "received"
  const wrong: typeof a.statements[number]["direction"] = "request";
  void wrong;
  const at: number | undefined = stated?.value[0]?.start;
  const refused: PresentationError["reason"] = "StatementNotCanonical";
  void refused;
  return a.connectionTime - b.sent.len + (stated?.exchange ?? 0) + (at ?? 0);
}

export async function preparedAhead(token: () => Promise<string>): Promise<string> {
  const session: PreparedSession = await prepare({ verifierUrl: "ws://v/", mode: "mpc", proxyUrl: "ws://proxy/", url: "https://h/me", maxSentBytes: 1024 });
  const limit: number = session.maxSentBytes;
  try {
    const r = await session.notarize({ headers: { Authorization: `Bearer ${await token()}` }, reveal: { recv: "body" }, signal: new AbortController().signal });
    return `${limit} ${r.mode}`;
  } catch (e) {
    if (e instanceof SessionClosedError) return "used";
    if (e instanceof StatementFalseError) return "false";
    throw e;
  } finally {
    session.close();
  }
}

export async function preparedInThisWorker(): Promise<number> {
  const session = await prepareInThisWorker({ verifierUrl: "ws://v/", url: "https://h/" });
  session.close();
  return session.maxSentBytes;
}
