import type { AttestedSession } from "./attestation.js";
export type { AttestedSession, SignedAttestation, AttestationSecrets } from "./attestation.js";
// Types of the tlsproof package (index.js: main thread; direct.js: inside a worker; node.js:
// Node.js, the native prover, the same API).

/** A half-open byte range `[start, end)` of a direction's plaintext. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * What one direction reveals. `"all"` takes the fast path (the direction's key is opened and
 * the verifier decrypts it itself); anything else is proven in zero knowledge.
 * - `"none"`: only the length; `"body"`: the HTTP body after the head;
 * - a list of ranges; `{ redactHeaders }`: all but these headers' values (case-insensitive);
 * - `{ jsonFields }`: the `"name": value` members with these names in a JSON body.
 */
export type RevealChoice =
  | "all"
  | "none"
  | "body"
  | ByteRange[]
  | { redactHeaders: string[] }
  | { jsonFields: string[] };

export interface RevealOptions {
  /** The request. Default `{ redactHeaders: ["authorization", "cookie"] }`. */
  sent?: RevealChoice;
  /** The response. Default `"all"` (fast path). */
  recv?: RevealChoice;
  /**
   * Hidden ranges of the request / response to commit to (same choices as above): the
   * verifier holds only a proven SHA-256 digest of each, and an attestation's presentation can
   * open them later (`tlsproof/attestation`). Default: none.
   */
  commitSent?: RevealChoice;
  commitRecv?: RevealChoice;
  /**
   * Statements about values of the response's JSON body, proven in zero knowledge without
   * revealing the values (each stated value is hidden, whatever `recv` says): a dotted path of
   * object keys, then `< <= > >= == !=` and a constant, or `in [LOW, HIGH]`, or
   * `in {"A", "B"}`. A number constant is a decimal without exponent or `+`
   * (`"account.balance.amount >= 1000"`); a text constant is a JSON string
   * (`'date >= "2026-01-01"'`, compared byte by byte with a value of its length). The response
   * around the values must be revealed (its head, the JSON's structure and keys). A false
   * statement rejects with `STATEMENT_FALSE` before the proof; the result lists the proven ones
   * in `statements`. Default: none.
   */
  prove?: Statement[];
  /**
   * The same about values of the request's JSON body (`body`, sent with its Content-Length):
   * each stated value is hidden, whatever `sent` says, e.g. `"transfer.amount <= 500"` about
   * `{"transfer": {"amount": 250}}`. Header values may stay hidden; the body's structure and
   * keys are revealed. Default: none.
   */
  proveRequest?: Statement[];
}

/** A statement of `reveal.prove` or `reveal.proveRequest`, e.g. `"account.balance.amount >= 1000"`. */
export type Statement =
  | `${string} ${"<" | "<=" | ">" | ">=" | "==" | "!="} ${string}`
  | `${string} in [${string}]`
  | `${string} in {${string}}`;

/** A statement the verifier verified about a hidden value of a request or a response. */
export interface StatementResult {
  /** The exchange (from 1) whose request (`"sent"`) or response (`"received"`) holds the value. */
  exchange: number;
  direction: "sent" | "received";
  /** The statement as the grammar writes it. */
  statement: string;
  /** Where the hidden value is in `sent` or `recv`: its length is public, its bytes are not. */
  value: ByteRange[];
}

export type Phase = "connect" | "waiting" | "preprocess" | "request" | "prove" | "done";

export interface Progress {
  phase: Phase;
  /** Rough overall progress, 0 to 1. */
  fraction: number;
  /** `phase: "waiting"`: the session's place in the verifier's queue (1 = next). */
  position?: number;
}

/** The IANA names of the suites `tls.cipherSuites` takes: TLS 1.3's, then TLS 1.2's. */
export type CipherSuiteName =
  | "TLS_AES_128_GCM_SHA256"
  | "TLS_CHACHA20_POLY1305_SHA256"
  | "TLS_AES_256_GCM_SHA384"
  | "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
  | "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
  | "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
  | "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
  | "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
  | "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";

export interface NotarizeOptions {
  /** `ws://` or `wss://` URL of `tlsproof verifier`. */
  verifierUrl: string;
  /**
   * `"proxy"` (default): the verifier dials the server and relays the TLS bytes. `"mpc"`: the
   * prover reaches the server through `proxyUrl`, and prover and verifier are the TLS client
   * together, so neither holds the session keys while the connection is open (slower: see the
   * README's figures).
   */
  mode?: "proxy" | "mpc";
  /** `ws://` or `wss://` URL of `tlsproof proxy`, for `mode: "mpc"`. */
  proxyUrl?: string;
  /** `https://host[:port]/path?query`. Give this, or `server` with `path`. */
  url?: string;
  /** `HOST:PORT` for the verifier to connect to (instead of `url`). */
  server?: string;
  path?: string;
  /**
   * Name the certificate must be valid for: the URL's (or `server`'s) host, which is also the
   * default. The verifier certifies only the host it connects to, so another name is refused
   * with `SERVER_NAME_MISMATCH`.
   */
  serverName?: string;
  /** Trusted roots (PEM); default: Mozilla's roots. */
  caPem?: string;
  /** Default `"GET"`. */
  method?: string;
  /** Request headers, kept in order. `Host`, `Connection: close` and `Accept-Encoding: identity` are added unless given. */
  headers?: Record<string, string> | Array<[string, string]>;
  body?: string;
  reveal?: RevealOptions;
  /**
   * Several requests over the session's one TLS connection, in order (1 to 16), instead of the
   * top-level `url`/`path`, `method`, `headers`, `body` and `reveal` (give `server`, or a `url`
   * in the first request). Every request but the last keeps the connection open
   * (`Connection: keep-alive`). In proxy mode each goes out once the response before it is
   * complete; in MPC mode they go out together (pipelined). The result's `exchanges` lists
   * them with their responses.
   */
  requests?: RequestOptions[];
  /** Most request bytes (default 16 KiB, all requests together); the verifier must allow it. */
  maxSentBytes?: number;
  /** Most response bytes (default 256 KiB); the verifier must allow it. */
  maxRecvBytes?: number;
  /** Longest the whole session may take (default: 60 s per step). */
  timeoutMs?: number;
  /**
   * What the TLS client offers: `versions: ["1.2", "1.3"]`, both in one ClientHello (the
   * server chooses; a downgrade is refused), the default in both modes; or one of them. MPC
   * mode's TLS 1.3 offers TLS_CHACHA20_POLY1305_SHA256 then TLS_AES_128_GCM_SHA256, an X25519
   * key share (P-256 when the server asks for it).
   * `cipherSuites`: the suites offered, by IANA name, in order of preference; each name tells its
   * version, which must be among the versions. TLS 1.3: by default all three, cheapest proof
   * first: TLS_AES_128_GCM_SHA256 (which every TLS 1.3 server supports),
   * TLS_CHACHA20_POLY1305_SHA256, TLS_AES_256_GCM_SHA384. TLS 1.2: by default all six, cheapest
   * proof first: TLS_ECDHE_{ECDSA,RSA}_WITH_AES_128_GCM_SHA256, then _CHACHA20_POLY1305_SHA256,
   * then _AES_256_GCM_SHA384 (MPC mode: the AES_128_GCM ones only, and in TLS 1.3
   * TLS_CHACHA20_POLY1305_SHA256 and TLS_AES_128_GCM_SHA256, of which it requires one). A version
   * none of whose suites is named offers its default.
   */
  tls?: {
    versions?: Array<"1.2" | "1.3">;
    cipherSuites?: Array<CipherSuiteName>;
  };
  /**
   * The verifier's public key (`secp256k1:0x…` or `ed25519:…`): the session must end with an
   * attestation signed by it, or it fails with BAD_ATTESTATION. Default: any key, or none.
   */
  verifierKey?: string;
  onProgress?: (progress: Progress) => void;
  /** Aborting closes the session; the promise rejects with an `AbortError` (code `ABORTED`). */
  signal?: AbortSignal;
}

/** One of `NotarizeOptions.requests`. */
export interface RequestOptions {
  /** `https://host[:port]/path?query` on the session's server; or give `path`. */
  url?: string;
  path?: string;
  /** Default `"GET"`. */
  method?: string;
  headers?: Record<string, string> | Array<[string, string]>;
  body?: string;
  /** What to reveal of this request and of its response (default as for `notarize`). */
  reveal?: RevealOptions;
}

/** One request of the session and the response that answered it, as the verifier read them. */
export interface ExchangeResult {
  /** Where the request is in `sent`. */
  request: ByteRange;
  requestLine: string | null;
  /** Where its response is in `recv`; `null` when no byte answered it. */
  response: ByteRange | null;
  status: number | null;
  /** Complete by its own framing (Content-Length, chunked, or close-delimited ended by close_notify); `null` when its framing is hidden. */
  responseComplete: boolean | null;
}

/** One direction as the verifier verified it. */
export interface DirectionResult {
  /** Plaintext length; every byte's existence is proven. */
  length: number;
  /** The plaintext with hidden bytes zeroed. */
  bytes: Uint8Array;
  revealed: ByteRange[];
  hidden: ByteRange[];
  /** `"fast"`: fully revealed, key opened; `"zk"`: proven in zero knowledge. */
  path: "fast" | "zk";
  /** Revealed bytes as text, hidden bytes as `█`; control and invisible characters, `\` and a revealed `█` are escaped (`\r`, `\x1b`, `\u{2588}`), so only hidden bytes print as `█`. */
  printable: string;
  /**
   * How the direction ended in the proven transcript: `"close_notify"` (the sender said it was
   * done), `"fatal_alert"`, or `"open"` (no ending alert: it may have been cut off).
   */
  ending: "close_notify" | "fatal_alert" | "open";
  /** Its TLS alerts as `[level, description]`. */
  alerts: Array<[number, number]>;
  /**
   * TLS 1.3: each record after the handshake as proven, in order: `contentLength` bytes of
   * content, then the inner type byte (23 application data, 21 alert, 22 handshake), then
   * `padding` zero bytes. Empty for TLS 1.2.
   */
  records: Array<{ contentLength: number; contentType: number; padding: number }>;
}

export interface NotarizeResult {
  mode: "proxy" | "mpc";
  /** The name the verifier validated the certificate for. */
  serverName: string;
  /**
   * `HOST:PORT`, `serverName` and a port: the verifier dialed it (proxy mode), or the prover's
   * proxy did (MPC mode, where only the name is certified, not the port).
   */
  server: string;
  /** The SNI the ClientHello carried, checked to be `serverName`; `null` when that is an IP address. */
  sni: string | null;
  /** Unix seconds when the verifier connected to the server. */
  connectionTime: number;
  /** What the server chose, as the verifier read it from the relayed handshake. */
  tls: {
    version: "1.2" | "1.3";
    /** IANA name, e.g. `"TLS_AES_128_GCM_SHA256"`. */
    cipherSuite: string;
    /** Key-exchange group, e.g. `"x25519"`, `"secp256r1"`. */
    group: string;
  };
  sent: DirectionResult;
  recv: DirectionResult;
  /** The requests in order, each with its response, as the revealed bytes show them; `null` where that part was hidden. */
  exchanges: ExchangeResult[];
  /** Hex SHA-256 commitments the verifier holds. */
  commitments: string[];
  /** The statements of `reveal.prove` and `reveal.proveRequest`, proven. */
  statements: StatementResult[];
  timings: { preprocessMs: number; onlineMs: number; proveMs: number; totalMs: number };
  bytes: { proverToVerifier: number; verifierToProver: number };
  /**
   * The verifier's signed attestation of this session, checked against the verdict, with what
   * `present` needs to disclose its ranges later; null when the verifier does not sign (no
   * `--signing-key`).
   */
  attestation: AttestedSession | null;
}

export type ErrorCode =
  | "BAD_OPTIONS"
  | "VERIFIER_UNREACHABLE"
  | "VERIFIER_REJECTED"
  | "SERVER_NOT_ALLOWED"
  | "SERVER_NAME_MISMATCH"
  | "BUSY"
  | "SERVER_UNREACHABLE"
  | "PROXY_UNREACHABLE"
  | "LIMIT_EXCEEDED"
  | "TIMEOUT"
  | "ABORTED"
  | "TLS_ERROR"
  | "CONNECTION_LOST"
  | "PROTOCOL_ERROR"
  | "NOT_ISOLATED"
  | "WORKER_START_FAILED"
  | "BAD_ATTESTATION"
  | "BAD_PRESENTATION"
  | "SESSION_CLOSED"
  | "STATEMENT_FALSE"
  | "INTERNAL";

export class TlsproofError extends Error {
  constructor(code: string, message: string, options?: ErrorOptions);
  readonly code: ErrorCode | (string & {});
}
export class BadOptionsError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "BAD_OPTIONS"; }
export class VerifierUnreachableError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "VERIFIER_UNREACHABLE"; }
export class VerifierRejectedError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "VERIFIER_REJECTED"; }
export class ServerNotAllowedError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "SERVER_NOT_ALLOWED"; }
export class ServerNameMismatchError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "SERVER_NAME_MISMATCH"; }
export class ServerUnreachableError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "SERVER_UNREACHABLE"; }
/** `mode: "mpc"`: the WebSocket to `proxyUrl` could not be opened. */
export class ProxyUnreachableError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "PROXY_UNREACHABLE"; }
/** The verifier is serving as many sessions as it can; try again later. */
export class BusyError extends TlsproofError {
  constructor(message: string, options?: ErrorOptions & { retryAfter?: number });
  readonly code: "BUSY";
  /** The verifier's hint: try again after about this many seconds (absent when it gave none). */
  readonly retryAfter?: number;
}
export class LimitExceededError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "LIMIT_EXCEEDED"; }
export class TimeoutError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "TIMEOUT"; }
export class AbortError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "ABORTED"; }
export class TlsError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "TLS_ERROR"; }
export class ConnectionLostError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "CONNECTION_LOST"; }
export class ProtocolError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "PROTOCOL_ERROR"; }
export class NotIsolatedError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "NOT_ISOLATED"; }
/** The prover's worker or one of its thread workers did not load or start; the message names which and why. */
export class WorkerStartError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "WORKER_START_FAILED"; }
export class InternalError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "INTERNAL"; }
/** The verifier's attestation does not verify, or does not state the verdict it sent. */
export class BadAttestationError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "BAD_ATTESTATION"; }
/** A prepared session notarizes once: this one was used, closed or failed. */
export class SessionClosedError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "SESSION_CLOSED"; }
/** A statement of `reveal.prove` or `reveal.proveRequest` is false for its value (checked before the proof). */
export class StatementFalseError extends TlsproofError { constructor(message: string, options?: ErrorOptions); readonly code: "STATEMENT_FALSE"; }

/** The check a presentation, an attestation or a verifier key failed: Rust's error variant names, and a few of JS's own. */
export type PresentationErrorReason =
  | "UnsupportedVersion"
  | "Truncated"
  | "TrailingBytes"
  | "BadMagic"
  | "UnsupportedFormat"
  | "UnknownScheme"
  | "UnknownMode"
  | "UnknownTlsVersion"
  | "BadPort"
  | "BadServerName"
  | "BadEnding"
  | "TooManyRanges"
  | "RangeOutsideTranscript"
  | "RangesOutOfOrder"
  | "BadExchangeCount"
  | "ExchangesNotTiling"
  | "TooManyStatements"
  | "BadStatementExchange"
  | "BadStatementDirection"
  | "BadValueRangeCount"
  | "ValueOutsideMessage"
  | "ValueRangesOutOfOrder"
  | "BadStatementLength"
  /** Not UTF-8, or a character below U+0020 (Rust's decoder also checks the statement grammar). */
  | "StatementNotCanonical"
  | "SchemeMismatch"
  | "WrongLength"
  | "NonCanonical"
  | "BadRecoveryByte"
  /** Another key signed, or the data was altered (Rust's `SignatureError::Mismatch`). */
  | "SignatureMismatch"
  | "NotAttested"
  | "LengthMismatch"
  | "OpeningMismatch"
  | "WrongSecrets"
  /** The verifier key is not `secp256k1:0x<40 hex>` or `ed25519:<64 hex>` (lower case). */
  | "BadKey"
  | "BadHex"
  /** Not of the JSON form: a missing field, a wrong type, an unknown direction, an opening not of 16 bytes. */
  | "Malformed"
  /** A length or the connection time above `Number.MAX_SAFE_INTEGER`. */
  | "TooLarge";

/** Thrown by the attestation functions; `reason` names the check that failed. */
export class PresentationError extends TlsproofError {
  constructor(message: string, options?: ErrorOptions & { reason?: PresentationErrorReason });
  readonly code: "BAD_PRESENTATION";
  readonly reason: PresentationErrorReason;
}

/** The error class for a code (plain `TlsproofError` for codes this version does not know). */
export function errorFromCode(code: string, message: string): TlsproofError;
export function toTlsproofError(e: unknown): TlsproofError;

export interface ProverConfig {
  /** Threads for the proof; default: the reported cores, at most 8. */
  threads?: number;
  /**
   * Where the package's worker.js is served, to start it from there instead of from next to
   * index.js (bundlers find it without this).
   */
  workerUrl?: string | URL;
  /**
   * How long the worker's thread pool may take to start (ms, default 30000): past it, `ready`
   * rejects with TimeoutError instead of waiting forever. A worker that fails to load rejects
   * at once with WorkerStartError.
   */
  startTimeoutMs?: number;
}

/**
 * A prover running in its own module Web Worker. Under Node.js it holds no worker: each
 * session runs on the native addon's threads, and `ProverConfig` has no use.
 */
export class Prover {
  constructor(config?: ProverConfig);
  /** Resolves once the worker has loaded the wasm and started its threads. */
  readonly ready: Promise<void>;
  static create(config?: ProverConfig): Promise<Prover>;
  notarize(options: NotarizeOptions): Promise<NotarizeResult>;
  /**
   * Opens a session and does ahead what does not depend on the request, while the user
   * is still reading the page, so that `session.notarize({headers, reveal, …})` starts with the
   * TLS connection. In MPC mode that is the OT and the request's encryption garbled for up to
   * `maxSentBytes` (set it near the request's size: up to about 3 KB is garbled ahead, a few
   * seconds and about 8.5 MB per KB; longer requests are garbled during the connection). In
   * proxy mode there is nothing worth doing early, and the whole session runs in `notarize`.
   *
   * The options are `notarize`'s: those naming the session (`verifierUrl`, `mode`, `proxyUrl`,
   * the server, `serverName`, `caPem`, `maxSentBytes`, `maxRecvBytes`, `tls`, `verifierKey`)
   * are fixed here; the others (the path, `method`, `headers`, `body`, `reveal`) are defaults for
   * `session.notarize`. `timeoutMs`, `onProgress` and `signal` apply to this call. The verifier
   * ends a session that lasts longer than its limit (5 minutes by default), preparation
   * included: `notarize` then rejects.
   *
   * @example
   * const session = await prover.prepare({ verifierUrl, mode: "mpc", proxyUrl, url, maxSentBytes: 1024 });
   * // … later, once the user's token is known:
   * const result = await session.notarize({ headers: { Authorization: `Bearer ${token}` } });
   */
  prepare(options: NotarizeOptions): Promise<PreparedSession>;
  /** Stops the worker; running calls reject with ABORTED. */
  terminate(): void;
}

/** A session opened by `prepare`: it notarizes once. */
export interface PreparedSession {
  /** The longest request the session takes, in bytes. */
  readonly maxSentBytes: number;
  /**
   * Sends the request and proves what to reveal: `options` over the ones given to `prepare`.
   * Changing one that names the session rejects with BadOptionsError; a second call, or one
   * after `close`, with SessionClosedError.
   */
  notarize(options?: Partial<NotarizeOptions>): Promise<NotarizeResult>;
  /** Ends the session without notarizing: the verifier frees what it holds for it. */
  close(): void;
}

/** One call: notarizes with a shared Prover started on first use. */
export function notarize(options: NotarizeOptions): Promise<NotarizeResult>;
/** One call: prepares a session on the shared Prover (see `Prover.prepare`). */
export function prepare(options: NotarizeOptions): Promise<PreparedSession>;
