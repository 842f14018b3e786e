// The package's attestation.js against the published vectors (docs/attestation-vectors.json,
// which the Rust code produces), against attestations encoded here from the spec's layout,
// and against tampering, each refusal with Rust's reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, concatBytes, hexToBytes } from "@noble/hashes/utils.js";
import { decodeAttestation, present, verifyAttestation, verifyPresentation } from "../../js/attestation.js";
import { PresentationError, TlsproofError } from "../../js/errors.js";

const { domain, vectors } = JSON.parse(readFileSync(new URL("../../docs/attestation-vectors.json", import.meta.url), "utf8"));
const COOKIE = "committed cookie";
const STATEMENTS = "statements about hidden values";
const [k1, ed] = ["secp256k1", "ed25519"].map((s) => vectors.find((v) => v.scheme === s && v.name === COOKIE));
const stated = ["secp256k1", "ed25519"].map((s) => vectors.find((v) => v.scheme === s && v.name === STATEMENTS));
/**
 * The statements of the vectors that carry some: the hidden amount and currency of the
 * response's balance, and the hidden number of days the request's body asked for.
 */
const VECTOR_STATEMENTS = [
  { exchange: 1, direction: "received", statement: "account.balance.amount >= 1000", value: [{ start: 120, end: 127 }] },
  { exchange: 1, direction: "received", statement: 'account.balance.currency in {"EUR", "USD"}', value: [{ start: 141, end: 144 }] },
  { exchange: 1, direction: "sent", statement: "days <= 90", value: [{ start: 127, end: 129 }] },
];
const DOMAIN = hexToBytes(domain);
const DISCLOSE = [{ direction: "sent", start: 43, end: 49 }, { direction: "received", start: 0, end: 52 }];
const ATTESTATION_REASONS = ["Truncated", "TrailingBytes", "BadMagic", "UnsupportedFormat", "UnknownScheme", "UnknownMode",
  "UnknownTlsVersion", "BadPort", "BadServerName", "BadEnding", "TooManyRanges", "RangeOutsideTranscript", "RangesOutOfOrder", "BadExchangeCount", "ExchangesNotTiling",
  "TooManyStatements", "BadStatementExchange", "BadStatementDirection", "BadValueRangeCount", "ValueOutsideMessage", "ValueRangesOutOfOrder", "BadStatementLength",
  "StatementNotCanonical", "SchemeMismatch", "WrongLength", "NonCanonical", "BadRecoveryByte", "SignatureMismatch"];

/** The reason `f` throws with, checking it throws a PresentationError. */
function reason(f) {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof PresentationError && e instanceof TlsproofError, `not a PresentationError: ${e}`);
    assert.equal(e.code, "BAD_PRESENTATION");
    return e.reason;
  }
  assert.fail("did not throw");
}

/** A deep copy of the vector's presentation, changed by `change`. */
function tampered(vector, change) {
  const p = structuredClone(vector.presentation);
  change(p);
  return p;
}

const hexEdit = (hex, edit) => {
  const bytes = hexToBytes(hex);
  edit(bytes);
  return bytesToHex(bytes);
};

/** r ‖ s ‖ v over Keccak-256(DOMAIN ‖ data), as an EVM's ecrecover takes it. */
function signSecp256k1(secretKey, data) {
  const rec = secp256k1.sign(keccak_256(concatBytes(DOMAIN, data)), secretKey, { prehash: false, format: "recovered" });
  return concatBytes(rec.subarray(1), Uint8Array.of(27 + rec[0]));
}

function addressOf(secretKey) {
  return bytesToHex(keccak_256(secp256k1.getPublicKey(secretKey, false).subarray(1)).subarray(12));
}

test("both vectors verify and disclose the cookie (committed) and the response (revealed)", () => {
  for (const v of [k1, ed]) {
    const { attestation, disclosed } = verifyPresentation(v.presentation, { verifierKey: v.verifierKey });
    assert.equal(attestation.scheme, v.scheme);
    assert.deepEqual(disclosed.map(({ direction, start, end, revealedToVerifier, text }) => ({ direction, start, end, revealedToVerifier, text })), [
      { direction: "sent", start: 43, end: 49, revealedToVerifier: false, text: "secret" },
      { direction: "received", start: 0, end: 52, revealedToVerifier: true, text: "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"balance\":7}" },
    ]);
    v.presentation.disclosures.forEach((d, i) => assert.deepEqual(disclosed[i].data, hexToBytes(d.data)));
    // as JSON text too
    assert.equal(verifyPresentation(JSON.stringify(v.presentation), { verifierKey: v.verifierKey }).disclosed.length, 2);
    assert.deepEqual(verifyAttestation(v.attestation, { verifierKey: v.verifierKey }), attestation);
  }
});

test("present builds the vectors' presentations, from objects or tuples", () => {
  for (const v of [k1, ed]) {
    assert.deepEqual(present(v.attestation, v.secrets, DISCLOSE), v.presentation);
    assert.deepEqual(present(v.attestation, v.secrets, DISCLOSE.map((d) => [d.direction, d.start, d.end])), v.presentation);
  }
});

test("decodeAttestation reads the vectors' header and directions", () => {
  for (const v of [k1, ed]) {
    const a = decodeAttestation(v.attestation.data);
    assert.deepEqual(decodeAttestation(hexToBytes(v.attestation.data)), a);
    assert.equal(a.formatVersion, 4);
    assert.deepEqual(a.statements, []);
    assert.equal(a.mode, "proxy");
    assert.equal(a.serverName, "example.com");
    assert.equal(a.port, 443);
    assert.equal(a.tlsVersion, "1.2");
    assert.equal(a.cipherSuite, 0xc02b);
    assert.equal(a.group, 23);
    assert.equal(a.connectionTime, 1796262400);
    assert.equal(a.sent.len, 53);
    assert.equal(a.sent.ending, "open");
    assert.equal(a.received.len, 52);
    assert.equal(a.received.ending, "close_notify");
    assert.equal(a.received.alert, null);
    assert.deepEqual(a.sent.revealed.map(({ start, end }) => [start, end]), [[0, 43]]);
    assert.deepEqual(a.sent.committed.map(({ start, end }) => [start, end]), [[43, 49]]);
    assert.equal(a.sent.committed[0].digest, bytesToHex(sha256(concatBytes(new TextEncoder().encode("secret"), new Uint8Array(16).fill(3)))));
  }
});

test("the vectors' keys are the ones their secret keys derive", () => {
  assert.equal(k1.verifierKey, `secp256k1:0x${addressOf(hexToBytes(k1.secretKey))}`);
  assert.equal(ed.verifierKey, `ed25519:${bytesToHex(ed25519.getPublicKey(hexToBytes(ed.secretKey)))}`);
  // the generator's well-known address (private key 1)
  assert.equal(addressOf(hexToBytes("00".repeat(31) + "01")), "7e5f4552091a69125d5dfcb7b8c2659029395bdf");
});

test("every altered byte of the attestation is refused", () => {
  for (const v of [k1, ed, ...stated]) {
    const bytes = hexToBytes(v.attestation.data);
    for (let i = 0; i < bytes.length; i++) {
      const p = tampered(v, (q) => { q.attestation.data = hexEdit(q.attestation.data, (b) => { b[i] ^= 1; }); });
      const why = reason(() => verifyPresentation(p, { verifierKey: v.verifierKey }));
      assert.ok(ATTESTATION_REASONS.includes(why), `${v.scheme} byte ${i}: ${why}`);
    }
  }
});

test("altered, foreign and malleated signatures are refused", () => {
  const key = { verifierKey: k1.verifierKey };
  const withSignature = (vector, signature) => tampered(vector, (q) => { q.attestation.signature = bytesToHex(signature); });
  const sig = hexToBytes(k1.attestation.signature);
  for (const v of [k1, ed]) {
    const altered = tampered(v, (q) => { q.attestation.signature = hexEdit(q.attestation.signature, (b) => { b[3] ^= 1; }); });
    assert.match(reason(() => verifyPresentation(altered, { verifierKey: v.verifierKey })), /^(SignatureMismatch|NonCanonical)$/);
    const short = tampered(v, (q) => { q.attestation.signature = q.attestation.signature.slice(2); });
    assert.equal(reason(() => verifyPresentation(short, { verifierKey: v.verifierKey })), "WrongLength");
  }
  const data = hexToBytes(k1.attestation.data);
  const other = signSecp256k1(secp256k1.utils.randomSecretKey(), data);
  assert.equal(reason(() => verifyPresentation(withSignature(k1, other), key)), "SignatureMismatch");
  // a low-s signature of our own making is accepted under its own key
  const mine = secp256k1.utils.randomSecretKey();
  verifyAttestation({ data: k1.attestation.data, signature: bytesToHex(signSecp256k1(mine, data)) }, { verifierKey: `secp256k1:0x${addressOf(mine)}` });
  // (r, n - s) with the other parity recovers the same key: refused as malleable
  const n = secp256k1.Point.Fn.ORDER;
  const s = BigInt("0x" + bytesToHex(sig.subarray(32, 64)));
  const high = concatBytes(sig.subarray(0, 32), hexToBytes((n - s).toString(16).padStart(64, "0")), Uint8Array.of(sig[64] ^ 27 ^ 28));
  assert.equal(reason(() => verifyPresentation(withSignature(k1, high), key)), "NonCanonical");
  const v1 = concatBytes(sig.subarray(0, 64), Uint8Array.of(1));
  assert.equal(reason(() => verifyPresentation(withSignature(k1, v1), key)), "BadRecoveryByte");
  // an Ed25519 signature of the same statement by another key
  const edData = hexToBytes(ed.attestation.data);
  const edOther = ed25519.sign(concatBytes(DOMAIN, edData), ed25519.utils.randomSecretKey());
  assert.equal(reason(() => verifyPresentation(withSignature(ed, edOther), { verifierKey: ed.verifierKey })), "SignatureMismatch");
  // R the identity (small order) and S = k·a: the cofactored equation holds, but Rust's
  // verify_strict refuses a small-order R, and so must this
  const edKey = ed25519.utils.randomSecretKey();
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(edKey);
  const identity = concatBytes(Uint8Array.of(1), new Uint8Array(31));
  const le = (bytes) => BigInt("0x" + bytesToHex(bytes.slice().reverse()));
  const L = ed25519.Point.Fn.ORDER;
  const k = le(sha512(concatBytes(identity, pointBytes, DOMAIN, edData))) % L;
  const S = hexToBytes(((k * scalar) % L).toString(16).padStart(64, "0")).reverse();
  const weak = { data: ed.attestation.data, signature: bytesToHex(concatBytes(identity, S)) };
  assert.ok(ed25519.verify(hexToBytes(weak.signature), concatBytes(DOMAIN, edData), pointBytes, { zip215: false }), "noble accepts it");
  assert.equal(reason(() => verifyAttestation(weak, { verifierKey: `ed25519:${bytesToHex(pointBytes)}` })), "SignatureMismatch");
});

test("a key of the other scheme, or a malformed one, is refused", () => {
  assert.equal(reason(() => verifyPresentation(ed.presentation, { verifierKey: k1.verifierKey })), "SchemeMismatch");
  assert.equal(reason(() => verifyPresentation(k1.presentation, { verifierKey: ed.verifierKey })), "SchemeMismatch");
  const address = k1.verifierKey.slice("secp256k1:0x".length);
  for (const bad of [
    `secp256k1:${address}`, `secp256k1:0x${address.toUpperCase()}`, `secp256k1:0x${address}00`, "ed25519:00", "rsa:00", "ed25519",
    ed.verifierKey.toUpperCase(), undefined, 7,
  ]) {
    assert.equal(reason(() => verifyPresentation(k1.presentation, { verifierKey: bad })), "BadKey", String(bad));
  }
});

test("tampered disclosures are refused with the check that failed", () => {
  const verify = (change) => reason(() => verifyPresentation(tampered(k1, change), { verifierKey: k1.verifierKey }));
  assert.equal(verify((q) => { q.disclosures[0].start += 1; q.disclosures[0].end += 1; }), "NotAttested");
  assert.equal(verify((q) => { q.disclosures[0].end -= 1; q.disclosures[0].data = q.disclosures[0].data.slice(0, -2); }), "NotAttested");
  assert.equal(verify((q) => { q.disclosures[0].end = 1000; }), "RangeOutsideTranscript");
  assert.equal(verify((q) => { q.disclosures[0].data = hexEdit(q.disclosures[0].data, (b) => { b[0] ^= 1; }); }), "OpeningMismatch");
  assert.equal(verify((q) => { q.disclosures[0].opening = hexEdit(q.disclosures[0].opening, (b) => { b[0] ^= 1; }); }), "OpeningMismatch");
  assert.equal(verify((q) => { q.disclosures[1].opening = hexEdit(q.disclosures[1].opening, (b) => { b[15] ^= 1; }); }), "OpeningMismatch");
  assert.equal(verify((q) => { q.disclosures[0].data += "21"; }), "LengthMismatch");
  assert.equal(verify((q) => { q.version = 2; }), "UnsupportedVersion");
  assert.equal(verify((q) => { q.disclosures[0].data = "7"; }), "BadHex");
  assert.equal(verify((q) => { q.disclosures[0].opening = "00"; }), "Malformed");
  assert.equal(verify((q) => { q.disclosures[0].direction = "both"; }), "Malformed");
  assert.equal(reason(() => verifyPresentation("{", { verifierKey: k1.verifierKey })), "Malformed");
});

test("present checks the secrets and the ranges", () => {
  const wrong = structuredClone(k1.secrets);
  wrong.blinders.sent[0] = hexEdit(wrong.blinders.sent[0], (b) => { b[0] ^= 1; });
  assert.equal(reason(() => present(k1.attestation, wrong, DISCLOSE)), "WrongSecrets");
  const missing = structuredClone(k1.secrets);
  missing.blinders.sent = [];
  assert.equal(reason(() => present(k1.attestation, missing, DISCLOSE)), "WrongSecrets");
  const short = structuredClone(k1.secrets);
  short.sent = short.sent.slice(0, -2);
  assert.equal(reason(() => present(k1.attestation, short, DISCLOSE)), "WrongSecrets");
  assert.equal(reason(() => present(k1.attestation, k1.secrets, [{ direction: "sent", start: 0, end: 5 }])), "NotAttested");
  assert.equal(reason(() => present(k1.attestation, k1.secrets, [["sent", 50, 60]])), "RangeOutsideTranscript");
});

test("the decoder refuses what the encoder would not write", () => {
  const data = k1.attestation.data;
  const at = (offset, hex) => data.slice(0, 2 * offset) + hex + data.slice(2 * offset + hex.length);
  const decode = (hex) => reason(() => decodeAttestation(hex));
  assert.equal(decode(data + "00"), "TrailingBytes");
  assert.equal(decode(data.slice(0, -2)), "Truncated");
  assert.equal(decode(at(0, "58")), "BadMagic");
  assert.equal(decode(at(8, "0001")), "UnsupportedFormat");
  assert.equal(decode(at(10, "03")), "UnknownScheme");
  assert.equal(decode(at(13, "02")), "UnknownMode");
  assert.equal(decode(at(14, "0301")), "UnknownTlsVersion");
  assert.equal(decode(at(28, "0000")), "BadPort");
  assert.equal(decode(at(13, "01")), "BadPort");
  assert.equal(decode(at(31, "45")), "BadServerName");
  assert.equal(decodeAttestation(at(31, "5f")).serverName, "_xample.com", "an underscore, as some certificates' names have");
  // the sent direction follows the 11-byte name; its ending follows its length
  const sent = 31 + 11;
  assert.equal(decode(at(sent + 8, "0107")), "BadEnding");
  assert.equal(decode(at(sent + 8, "0200")), "BadEnding");
  assert.equal(decode(at(sent + 10, "1001")), "TooManyRanges");
  // the received direction's committed count precedes the exchanges (one, 33 bytes), which the
  // statements' count (0) follows: a count the bytes left cannot hold is refused before
  // anything is allocated
  const exchangesAt = data.length / 2 - 34;
  assert.equal(decode(at(exchangesAt - 2, "1000")), "Truncated");
  // one exchange: 0..53 of the sent bytes, 0..52 of the received ones
  assert.deepEqual(decodeAttestation(data).exchanges, [{ request: { start: 0, end: 53 }, response: { start: 0, end: 52 } }]);
  assert.equal(decode(at(exchangesAt, "00")), "BadExchangeCount");
  assert.equal(decode(at(exchangesAt, "11")), "BadExchangeCount");
  assert.equal(decode(at(exchangesAt + 1 + 7, "01")), "ExchangesNotTiling", "a request not from 0");
  assert.equal(decode(at(exchangesAt + 1 + 15, "34")), "ExchangesNotTiling", "a request short of the end");
  assert.equal(decode(at(exchangesAt + 1 + 31, "33")), "ExchangesNotTiling", "a response beyond the end");
  // a length JavaScript numbers cannot hold exactly
  const huge = (hex) => hex.slice(0, 2 * (exchangesAt + 9)) + "1000000000000000" + hex.slice(2 * (exchangesAt + 17));
  assert.equal(decode(huge(at(sent, "1000000000000000"))), "TooLarge", "(the first request ends there too)");
  assert.equal(decode(123), "BadHex");
});

// ---- attestations encoded here from the spec's layout, independently of the Rust vectors ----

const u16 = (n) => Uint8Array.of(n >> 8, n & 0xff);
const u64 = (n) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n));
  return b;
};
const ENDINGS = { open: [0, 0], close_notify: [1, 0] };

function encode(a, schemeCode) {
  const name = new TextEncoder().encode(a.serverName);
  const ranges = (list) => [u16(list.length), ...list.flatMap((r) => [u64(r.start), u64(r.end), hexToBytes(r.digest)])];
  const direction = (d) => [
    u64(d.len), Uint8Array.from(d.ending === "fatal_alert" ? [2, d.alert] : ENDINGS[d.ending]), ...ranges(d.revealed), ...ranges(d.committed),
  ];
  const statements = a.statements ?? [];
  return concatBytes(
    new TextEncoder().encode("TLSPROOF"), u16(4), Uint8Array.of(schemeCode), u16(a.protocolVersion), Uint8Array.of(a.mode === "mpc" ? 1 : 0),
    u16(a.tlsVersion === "1.3" ? 0x0304 : 0x0303), u16(a.cipherSuite), u16(a.group), u64(a.connectionTime), u16(a.port),
    Uint8Array.of(name.length), name, ...direction(a.sent), ...direction(a.received),
    Uint8Array.of(a.exchanges.length),
    ...a.exchanges.flatMap((x) => [u64(x.request.start), u64(x.request.end), ...(x.response ? [u64(x.response.start), u64(x.response.end)] : [u64(a.received.len), u64(a.received.len)])]),
    Uint8Array.of(statements.length), ...statements.map(statementBytes),
  );
}

/**
 * One statement as the spec lays it out: exchange, direction (0 sent, 1 received, or the byte
 * given), value range count, ranges, text length, text.
 */
function statementBytes({ exchange, direction, value, statement }) {
  const text = typeof statement === "string" ? new TextEncoder().encode(statement) : statement;
  const directionByte = typeof direction === "number" ? direction : ["sent", "received"].indexOf(direction);
  return concatBytes(Uint8Array.of(exchange, directionByte, value.length), ...value.flatMap((r) => [u64(r.start), u64(r.end)]), u16(text.length), text);
}

test("attestations encoded and signed here from the spec verify, and present", () => {
  const text = (s) => new TextEncoder().encode(s);
  const sentText = text("POST /v1 HTTP/1.1\r\n");
  const receivedText = text("HTTP/1.1 200 OK\r\n\r\n{\"id\":42}");
  const opening = (byte) => new Uint8Array(16).fill(byte);
  const range = (bytes, start, end, open) => ({ start, end, digest: bytesToHex(sha256(concatBytes(bytes.subarray(start, end), open))) });
  const statement = {
    protocolVersion: 3, mode: "mpc", tlsVersion: "1.3", cipherSuite: 0x1301, group: 29, connectionTime: 1700000000, port: 0,
    serverName: "api-1.example:8443",
    sent: { len: sentText.length, ending: "fatal_alert", alert: 40, revealed: [range(sentText, 0, 4, opening(1))], committed: [] },
    received: {
      len: receivedText.length, ending: "open", alert: null,
      revealed: [range(receivedText, 0, 8, opening(2)), range(receivedText, 8, 19, opening(3))],
      committed: [range(receivedText, 19, receivedText.length, opening(4))],
    },
    // two requests, the second one unanswered
    exchanges: [
      { request: { start: 0, end: 10 }, response: { start: 0, end: receivedText.length } },
      { request: { start: 10, end: sentText.length }, response: null },
    ],
    // the id (committed too), in two pieces; a byte of the second request, which no byte answered
    statements: [
      { exchange: 1, direction: "received", statement: "id in [40, 49]", value: [{ start: 25, end: 26 }, { start: 26, end: 27 }] },
      { exchange: 2, direction: "sent", statement: 'v == "1"', value: [{ start: 16, end: 17 }] },
    ],
  };
  const secrets = {
    sent: bytesToHex(sentText), received: bytesToHex(receivedText),
    salts: { sent: [bytesToHex(opening(1))], received: [bytesToHex(opening(2)), bytesToHex(opening(3))] },
    blinders: { sent: [], received: [bytesToHex(opening(4))] },
  };
  const secpKey = secp256k1.utils.randomSecretKey();
  const edKey = ed25519.utils.randomSecretKey();
  const signers = [
    ["secp256k1", 1, (data) => signSecp256k1(secpKey, data), `secp256k1:0x${addressOf(secpKey)}`],
    ["ed25519", 2, (data) => ed25519.sign(concatBytes(DOMAIN, data), edKey), `ed25519:${bytesToHex(ed25519.getPublicKey(edKey))}`],
  ];
  for (const [scheme, code, sign, verifierKey] of signers) {
    const data = encode(statement, code);
    const attestation = { data: bytesToHex(data), signature: bytesToHex(sign(data)) };
    assert.deepEqual(verifyAttestation(attestation, { verifierKey }), { formatVersion: 4, scheme, ...statement });
    const p = present(attestation, secrets, [["received", 19, receivedText.length], ["sent", 0, 4]]);
    const { disclosed } = verifyPresentation(p, { verifierKey });
    assert.deepEqual(disclosed.map((d) => [d.direction, d.revealedToVerifier, d.text]), [["received", false, "{\"id\":42}"], ["sent", true, "POST"]]);
    // the other scheme's key for the same statement
    const [, , , otherKey] = signers.find(([s]) => s !== scheme);
    assert.equal(reason(() => verifyAttestation(attestation, { verifierKey: otherKey })), "SchemeMismatch");
  }
  // overlapping revealed ranges are out of order; adjacent ones are not
  const overlapping = structuredClone(statement);
  overlapping.received.revealed[1].start = 7;
  assert.equal(reason(() => decodeAttestation(encode(overlapping, 2))), "RangesOutOfOrder");
  // a statement about the response of the second exchange, which no byte answered, has nowhere
  // to be; one about its request is inside that request only
  const unanswered = structuredClone(statement);
  unanswered.statements[1].direction = "received";
  assert.equal(reason(() => decodeAttestation(encode(unanswered, 2))), "ValueOutsideMessage");
  const firstRequest = structuredClone(statement);
  firstRequest.statements[1].exchange = 1;
  assert.equal(reason(() => decodeAttestation(encode(firstRequest, 2))), "ValueOutsideMessage");
  const badDirection = structuredClone(statement);
  badDirection.statements[1].direction = 2;
  assert.equal(reason(() => decodeAttestation(encode(badDirection, 2))), "BadStatementDirection");
});

// ---- statements about hidden values ----

test("the statement vectors verify, present, and show their statements with no value disclosed", () => {
  for (const v of stated) {
    const { attestation, disclosed } = verifyPresentation(v.presentation, { verifierKey: v.verifierKey });
    assert.equal(attestation.serverName, "bank.example");
    assert.deepEqual(attestation.statements, VECTOR_STATEMENTS);
    assert.deepEqual(decodeAttestation(v.attestation.data).statements, VECTOR_STATEMENTS);
    // the disclosed ranges are the response's revealed ones, around the hidden values
    assert.deepEqual(disclosed.map(({ start, end }) => [start, end]), [[0, 120], [127, 141], [144, 162]]);
    assert.ok(disclosed[0].text.endsWith('"balance":{"amount":"') && disclosed[1].text === '","currency":"', disclosed[0].text);
    assert.ok(disclosed.every((d) => !d.text.includes("1234.56") && !d.text.includes("EUR")));
    assert.deepEqual(present(v.attestation, v.secrets, v.presentation.disclosures), v.presentation);
    // with nothing disclosed, the statements are still signed
    const bare = present(v.attestation, v.secrets, []);
    assert.deepEqual(verifyPresentation(bare, { verifierKey: v.verifierKey }).attestation.statements, VECTOR_STATEMENTS);
  }
});

test("a tampered statements section is refused with the check that failed", () => {
  const data = hexToBytes(stated[0].attestation.data);
  const section = concatBytes(Uint8Array.of(VECTOR_STATEMENTS.length), ...VECTOR_STATEMENTS.map(statementBytes));
  const at = data.length - section.length;
  assert.equal(bytesToHex(data.subarray(at)), bytesToHex(section), "the statements end the attestation");
  const head = data.subarray(0, at);
  const decode = (...parts) => reason(() => decodeAttestation(concatBytes(head, ...parts)));
  const one = (s) => [Uint8Array.of(1), statementBytes({ ...VECTOR_STATEMENTS[0], ...s })];
  assert.deepEqual(decodeAttestation(concatBytes(head, ...one({}))).statements, VECTOR_STATEMENTS.slice(0, 1));
  assert.deepEqual(decodeAttestation(concatBytes(head, Uint8Array.of(0))).statements, []);
  // the count
  const patched = (offset, bytes) => {
    const out = data.slice();
    out.set(bytes, at + offset);
    return reason(() => decodeAttestation(out));
  };
  assert.equal(patched(0, [17]), "TooManyStatements");
  assert.equal(patched(0, [4]), "Truncated", "more than there are");
  assert.equal(patched(0, [1]), "TrailingBytes", "fewer than there are");
  assert.equal(decode(Uint8Array.of(0), Uint8Array.of(1)), "TrailingBytes");
  assert.equal(reason(() => decodeAttestation(concatBytes(data, Uint8Array.of(0)))), "TrailingBytes");
  // the exchange: 1 to the exchanges' count (1)
  assert.equal(patched(1, [0]), "BadStatementExchange");
  assert.equal(patched(1, [2]), "BadStatementExchange");
  // the direction: 0 the request, 1 the response
  assert.equal(patched(2, [2]), "BadStatementDirection");
  assert.equal(patched(2, [0xff]), "BadStatementDirection");
  assert.equal(decode(Uint8Array.of(1, 1)), "Truncated", "the direction is read before the value");
  // the value's range count: 1 to 64, checked against the bytes left before allocating
  assert.equal(patched(3, [0]), "BadValueRangeCount");
  assert.equal(patched(3, [65]), "BadValueRangeCount");
  assert.equal(patched(3, [64]), "Truncated");
  // each value range inside the response (0..162), not empty, sorted, disjoint
  assert.equal(patched(4 + 8, u64(120)), "ValueOutsideMessage", "empty");
  assert.equal(patched(4 + 8, u64(119)), "ValueOutsideMessage", "reversed");
  assert.equal(patched(4 + 8, u64(163)), "ValueOutsideMessage", "past the response");
  assert.equal(decode(...one({ value: [{ start: 124, end: 127 }, { start: 120, end: 123 }] })), "ValueRangesOutOfOrder");
  assert.equal(decode(...one({ value: [{ start: 120, end: 124 }, { start: 123, end: 127 }] })), "ValueRangesOutOfOrder", "overlapping");
  assert.equal(decodeAttestation(concatBytes(head, ...one({ value: [{ start: 120, end: 123 }, { start: 123, end: 127 }] }))).statements[0].value.length, 2, "adjacent");
  // a sent statement's value inside the request (0..130): the currency's place (141..144), in
  // the response, is past it; the amount's (120..127) is inside both
  const currency = VECTOR_STATEMENTS[1].value;
  assert.equal(decode(...one({ direction: "sent", value: currency })), "ValueOutsideMessage");
  assert.equal(decode(...one({ direction: "sent", value: [{ start: 129, end: 131 }] })), "ValueOutsideMessage", "past the request");
  assert.equal(decodeAttestation(concatBytes(head, ...one({ direction: "sent" }))).statements[0].direction, "sent");
  assert.equal(decodeAttestation(concatBytes(head, ...one({ direction: "sent", value: [{ start: 0, end: 130 }] }))).statements[0].value[0].end, 130, "the whole request");
  const message = (() => { try { decodeAttestation(concatBytes(head, ...one({ direction: "sent", value: currency }))); } catch (e) { return e.message; } })();
  assert.equal(message, "statement 0: value range 141..144 is empty or outside its exchange's request 0..130");
  // the text: its length 1 to 4096, then UTF-8 with no control byte
  const textAt = 4 + 16 + 2;
  assert.equal(patched(4 + 16, u16(0)), "BadStatementLength");
  assert.equal(patched(4 + 16, u16(4097)), "BadStatementLength");
  assert.equal(patched(4 + 16, u16(4096)), "Truncated");
  assert.equal(decode(...one({ statement: "a >= 1 ".repeat(600) })), "BadStatementLength");
  assert.equal(patched(textAt + 5, [0xff]), "StatementNotCanonical", "not UTF-8");
  assert.equal(patched(textAt + 5, [0xc3]), "StatementNotCanonical", "a sequence cut short");
  assert.equal(patched(textAt + 5, [0x0a]), "StatementNotCanonical", "a line break");
  assert.equal(patched(textAt + 5, [0x00]), "StatementNotCanonical");
  // the later statements are read after the first, each named by its index
  const second = 1 + statementBytes(VECTOR_STATEMENTS[0]).length;
  const third = second + statementBytes(VECTOR_STATEMENTS[1]).length;
  assert.equal(patched(second + 2, [0]), "BadValueRangeCount");
  assert.equal(patched(third + 1, [7]), "BadStatementDirection");
  assert.equal(reason(() => decodeAttestation(data.slice(0, at + third + 2))), "Truncated", "cut after the third one's direction");
  const thirdMessage = (() => { const out = data.slice(); out.set([7], at + third + 1); try { decodeAttestation(out); } catch (e) { return e.message; } })();
  assert.equal(thirdMessage, "statement 2: direction byte 7, not 0 (sent: the request) or 1 (received: the response)");
});

test("a statement's text is reported as it is, not escaped or trimmed", () => {
  const data = hexToBytes(stated[0].attestation.data);
  const section = concatBytes(Uint8Array.of(VECTOR_STATEMENTS.length), ...VECTOR_STATEMENTS.map(statementBytes));
  const head = data.subarray(0, data.length - section.length);
  // a leading U+FEFF is the text's own (TextDecoder would drop it by default)
  const text = "\ufeffnote == \"\u202eok\u007f\"";
  const one = concatBytes(Uint8Array.of(1), statementBytes({ ...VECTOR_STATEMENTS[0], statement: text }));
  assert.equal(decodeAttestation(concatBytes(head, one)).statements[0].statement, text);
});
