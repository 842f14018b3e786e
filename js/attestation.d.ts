// Types of attestation.js (`tlsproof/attestation`): signed attestations and presentations
// (docs/attestation.md).
export { PresentationError } from "./index.js";
export type { PresentationErrorReason } from "./index.js";
// Plain JavaScript, no wasm: these run anywhere, synchronously, and throw PresentationError.

/** The verifier's signed statement: `data` is its canonical encoding; both are lower-case hex. */
export interface SignedAttestation {
  data: string;
  signature: string;
}

/**
 * What the prover keeps to present later (hex): its plaintext of both directions, one salt per
 * revealed range and one blinder per commitment, in the attestation's order. It holds hidden
 * bytes: keep it private.
 */
export interface AttestationSecrets {
  sent: string;
  received: string;
  salts: { sent: string[]; received: string[] };
  blinders: { sent: string[]; received: string[] };
}

/** A notarize result's `attestation`: the JSON `tlsproof prove --attestation-out` writes too. */
export interface AttestedSession {
  attestation: SignedAttestation;
  /** The key that signed: `secp256k1:0x<address>` or `ed25519:<hex>`. */
  verifierKey: string;
  /**
   * Your plaintext in full (hidden bytes included) and the openings. In a notarize result it is
   * not enumerable: `JSON.stringify(result)` and spreads leave it out, so sending a result
   * somewhere does not send the hidden token with it. Read it by name, and keep it private.
   */
  secrets: AttestationSecrets;
}

/** One disclosed range: its bytes and the opening of its attested hash (hex). */
export interface Disclosure {
  direction: "sent" | "received";
  start: number;
  end: number;
  data: string;
  /** 16 bytes: a revealed range's salt or a commitment's blinder. */
  opening: string;
}

/** A signed attestation with some of its ranges opened; its JSON is the exchange form. */
export interface Presentation {
  version: 1;
  attestation: SignedAttestation;
  disclosures: Disclosure[];
}

/** A range to disclose: exactly a revealed range or a commitment of the attestation. */
export type DisclosureRequest =
  | { direction: "sent" | "received"; start: number; end: number }
  | ["sent" | "received", number, number];

export interface AttestedRange {
  start: number;
  end: number;
  /** Hex SHA-256(bytes ‖ 16-byte opening). */
  digest: string;
}

export interface AttestedDirection {
  /** Plaintext length. */
  len: number;
  ending: "open" | "close_notify" | "fatal_alert";
  /** The fatal alert's description; null for the other endings. */
  alert: number | null;
  /** Ranges the verifier saw, sorted and disjoint. */
  revealed: AttestedRange[];
  /** Commitments to hidden ranges, proven in zero knowledge. */
  committed: AttestedRange[];
}

/**
 * A statement proven in zero knowledge about a hidden value of a request's or a response's
 * JSON body (`account.balance.amount >= 1000`). The value stays hidden; its length is public.
 */
export interface AttestedStatement {
  /** The exchange, from 1 (`exchanges[exchange - 1]`), whose request or response holds the value. */
  exchange: number;
  /**
   * Which of the exchange's messages holds the value: `"sent"` its request, `"received"` its
   * response. Check it with the text: the same path may name a field of either body.
   */
  direction: "sent" | "received";
  /**
   * The statement's canonical text, as the verifier signed it: compare it byte for byte with
   * the text you expect. Decoding checks that it is 1 to 4096 bytes of UTF-8 with no character
   * below U+0020. It does not read it with the statement grammar: Rust's decoder also refuses
   * a text that does not print back the same (`StatementNotCanonical`), which this one accepts.
   * The prover chose the path and constants: escape the text before printing it.
   */
  statement: string;
  /**
   * Where the value is in the bytes of `direction`: sorted, disjoint, inside the exchange's
   * request (sent) or response (received).
   */
  value: Array<{ start: number; end: number }>;
}

/** What an attestation states. */
export interface DecodedAttestation {
  formatVersion: 4;
  scheme: "secp256k1" | "ed25519";
  /** The session protocol version the verifier ran. */
  protocolVersion: number;
  mode: "proxy" | "mpc";
  tlsVersion: "1.2" | "1.3";
  /** IANA code points. */
  cipherSuite: number;
  group: number;
  /** Unix seconds. */
  connectionTime: number;
  /** The port the verifier dialed; 0 in MPC mode, where only the name is certified. */
  port: number;
  serverName: string;
  sent: AttestedDirection;
  received: AttestedDirection;
  /**
   * The HTTP requests in order, each with the response that answers it (`null`: no byte
   * answered it), as the verifier paired them: where each is in the sent and received bytes.
   */
  exchanges: Array<{ request: { start: number; end: number }; response: { start: number; end: number } | null }>;
  /** The statements about hidden values, proven in zero knowledge; they need no disclosure. */
  statements: AttestedStatement[];
}

/** A disclosed range as checked. */
export interface DisclosedRange {
  direction: "sent" | "received";
  start: number;
  end: number;
  /** Whether the verifier saw these bytes (a revealed range) or only a commitment to them. */
  revealedToVerifier: boolean;
  data: Uint8Array;
  /** `data` as UTF-8 (invalid sequences replaced). */
  text: string;
}

export interface VerifiedPresentation {
  attestation: DecodedAttestation;
  disclosed: DisclosedRange[];
}

/** Reads an attestation's bytes (hex or bytes) without checking its signature. */
export function decodeAttestation(data: string | Uint8Array): DecodedAttestation;
/** Checks the signature under the verifier's public key, then returns what it attests. */
export function verifyAttestation(attestation: SignedAttestation, options: { verifierKey: string }): DecodedAttestation;
/**
 * Builds a presentation disclosing `disclose`, after checking that the secrets open the
 * attestation (reason `WrongSecrets` otherwise). Does not check the signature.
 */
export function present(attestation: SignedAttestation, secrets: AttestationSecrets, disclose: DisclosureRequest[]): Presentation;
/** Checks a presentation (an object or its JSON text) under the verifier's public key. */
export function verifyPresentation(presentation: Presentation | string, options: { verifierKey: string }): VerifiedPresentation;
