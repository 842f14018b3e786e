// Signed attestations and presentations (docs/attestation.md) in plain JavaScript: no wasm and
// no threads, so a third party checks a presentation with nothing but the verifier's public
// key, and the prover builds one from what notarize returned. Every function is synchronous.
// The checks, their order and the error reasons are those of src/attestation/ in Rust.
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, concatBytes, hexToBytes } from "@noble/hashes/utils.js";
import { PresentationError } from "./errors.js";

export { PresentationError };

const MAGIC = "TLSPROOF";
const FORMAT_VERSION = 4;
const MAX_NAME = 253;
const MAX_RANGES = 4096;
const MAX_EXCHANGES = 16;
const MAX_STATEMENTS = 16;
const MAX_VALUE_RANGES = 64;
/** The longest statement text, in bytes. */
const MAX_TEXT = 4096;
/** Bytes per encoded range: start, end, digest. */
const RANGE_BYTES = 8 + 8 + 32;
/** Prefixed to the attestation before signing: EIP-191's 0x19, then "tlsproof attestation". */
const DOMAIN = concatBytes(Uint8Array.of(0x19), new TextEncoder().encode("tlsproof attestation"));
const SCHEMES = { 1: "secp256k1", 2: "ed25519" };
const MODES = ["proxy", "mpc"];
const TLS_VERSIONS = { 0x0303: "1.2", 0x0304: "1.3" };
const DIRECTIONS = ["sent", "received"];
const utf8 = new TextDecoder("utf-8", { fatal: false });
/** Refuses invalid UTF-8, and keeps a leading U+FEFF as the text's own. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function fail(reason, message) {
  throw new PresentationError(message, { reason });
}

/** Bytes from a hex string (either case, as Rust's decoder takes) or bytes as they are. */
function fromHex(value, what) {
  if (value instanceof Uint8Array) return value;
  if (typeof value !== "string" || value.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(value)) {
    fail("BadHex", `${what} is not a hex string`);
  }
  return hexToBytes(value);
}

function opening(value, what) {
  const bytes = fromHex(value, what);
  if (bytes.length !== 16) fail("Malformed", `${what}: an opening has 16 bytes, not ${bytes.length}`);
  return bytes;
}

function directionName(value, what) {
  if (!DIRECTIONS.includes(value)) fail("Malformed", `${what}: the direction is "sent" or "received", not ${JSON.stringify(value)}`);
  return value;
}

function offset(value, what) {
  if (!Number.isInteger(value) || value < 0) fail("Malformed", `${what}: ${JSON.stringify(value)} is not a byte offset`);
  return value;
}

function isObject(value) {
  return typeof value === "object" && value !== null;
}

/** SHA-256(bytes ‖ opening), hex: the hash of both kinds of attested range. */
function rangeDigest(bytes, open) {
  return bytesToHex(sha256(concatBytes(bytes, open)));
}

/** A cursor over untrusted bytes: every read checks what is left. */
class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 0;
  }
  get left() {
    return this.bytes.length - this.at;
  }
  take(n) {
    if (this.left < n) fail("Truncated", "attestation truncated");
    this.at += n;
    return this.bytes.subarray(this.at - n, this.at);
  }
  u8() {
    return this.take(1)[0];
  }
  u16() {
    const b = this.take(2);
    return (b[0] << 8) | b[1];
  }
  /** A BigInt: a u64 may exceed what a JS number holds exactly. */
  u64() {
    const b = this.take(8);
    return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0);
  }
}

const isNameByte = (c) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d || c === 0x5f || c === 0x3a;

/**
 * Reads an attestation's bytes (a hex string or a Uint8Array), refusing anything the Rust
 * encoder would not have written, with the reason naming the field. Does not check the
 * signature: use verifyAttestation for that.
 */
export function decodeAttestation(data) {
  return withNumbers(decode(fromHex(data, "attestation data")));
}

function decode(bytes) {
  const r = new Reader(bytes);
  if (String.fromCharCode(...r.take(8)) !== MAGIC) fail("BadMagic", "not a tlsproof attestation (magic bytes)");
  const formatVersion = r.u16();
  if (formatVersion !== FORMAT_VERSION) {
    fail("UnsupportedFormat", `attestation format version ${formatVersion}; this code reads version ${FORMAT_VERSION}`);
  }
  const code = r.u8();
  const scheme = SCHEMES[code] ?? fail("UnknownScheme", `unknown signature scheme ${code}`);
  const protocolVersion = r.u16();
  const modeCode = r.u8();
  const mode = MODES[modeCode] ?? fail("UnknownMode", `unknown session mode ${modeCode}`);
  const tls = r.u16();
  const tlsVersion = TLS_VERSIONS[tls] ?? fail("UnknownTlsVersion", `unknown TLS version 0x${tls.toString(16).padStart(4, "0")}`);
  const cipherSuite = r.u16();
  const group = r.u16();
  const connectionTime = r.u64();
  const port = r.u16();
  if ((mode === "proxy") === (port === 0)) {
    fail("BadPort", `port ${port} in ${mode} mode (proxy mode names the port dialed, MPC mode none)`);
  }
  const name = r.take(r.u8());
  if (name.length === 0 || name.length > MAX_NAME || !name.every(isNameByte)) {
    fail("BadServerName", "server name is not a lower-case host name or address");
  }
  const sent = direction(r, "sent");
  const received = direction(r, "received");
  const exchanges = exchangeList(r, sent.len, received.len);
  const statements = statementList(r, exchanges);
  if (r.left !== 0) fail("TrailingBytes", `attestation has ${r.left} bytes after its end`);
  return {
    formatVersion, scheme, protocolVersion, mode, tlsVersion, cipherSuite, group, connectionTime, port,
    serverName: String.fromCharCode(...name), sent, received, exchanges, statements,
  };
}

/**
 * The statements about hidden values: at most 16, each about one of the exchanges (from 1) in
 * a direction (byte 0 "sent": the request, 1 "received": the response), its value's 1 to 64
 * ranges sorted, disjoint and inside that exchange's request or response, its text 1 to 4096
 * bytes of UTF-8 without a byte below 0x20. Rust also reads the text with the statement grammar
 * and refuses it unless it prints back the same (StatementNotCanonical); that part is not
 * checked here.
 */
function statementList(r, exchanges) {
  const count = r.u8();
  if (count > MAX_STATEMENTS) fail("TooManyStatements", `${count} statements, more than ${MAX_STATEMENTS}`);
  const list = [];
  for (let i = 0; i < count; i++) {
    const exchange = r.u8();
    if (exchange === 0 || exchange > exchanges.length) {
      fail("BadStatementExchange", `statement ${i}: exchange ${exchange}, not 1 to ${exchanges.length}`);
    }
    const directionByte = r.u8();
    const direction = DIRECTIONS[directionByte]
      ?? fail("BadStatementDirection", `statement ${i}: direction byte ${directionByte}, not 0 (sent: the request) or 1 (received: the response)`);
    // an unanswered request's response is empty: no value range fits inside it
    const message = direction === "sent" ? exchanges[exchange - 1].request : exchanges[exchange - 1].response;
    const messageName = direction === "sent" ? "request" : "response";
    const ranges = r.u8();
    if (ranges === 0 || ranges > MAX_VALUE_RANGES) {
      fail("BadValueRangeCount", `statement ${i}: ${ranges} value ranges, not 1 to ${MAX_VALUE_RANGES}`);
    }
    // before allocating, as for the attested ranges
    if (r.left < ranges * 16) fail("Truncated", "attestation truncated");
    const value = [];
    for (let k = 0; k < ranges; k++) {
      const start = r.u64();
      const end = r.u64();
      if (start >= end || start < message.start || end > message.end) {
        fail("ValueOutsideMessage",
          `statement ${i}: value range ${start}..${end} is empty or outside its exchange's ${messageName} ${message.start}..${message.end}`);
      }
      if (k > 0 && value[k - 1].end > start) fail("ValueRangesOutOfOrder", `statement ${i}: value ranges are not sorted and disjoint`);
      value.push({ start, end });
    }
    const len = r.u16();
    if (len === 0 || len > MAX_TEXT) fail("BadStatementLength", `statement ${i}: text of ${len} bytes, not 1 to ${MAX_TEXT}`);
    const bytes = r.take(len);
    const notCanonical = () => fail("StatementNotCanonical", `statement ${i}: the text is not a statement in canonical form`);
    let statement;
    try {
      statement = strictUtf8.decode(bytes);
    } catch {
      notCanonical();
    }
    if (bytes.some((b) => b < 0x20)) notCanonical();
    list.push({ exchange, direction, statement, value });
  }
  return list;
}

/**
 * The exchanges: 1 to 16, their requests following one another from 0 to the sent length,
 * their responses from 0 to the received length (an empty one: a request no byte answered).
 */
function exchangeList(r, sentLen, receivedLen) {
  const count = r.u8();
  if (count === 0 || count > MAX_EXCHANGES) fail("BadExchangeCount", `${count} exchanges, not 1 to ${MAX_EXCHANGES}`);
  const notTiling = (direction) =>
    fail("ExchangesNotTiling", `the exchanges' ${direction} ranges do not follow one another from 0 to the direction's length`);
  const list = [];
  let [requestAt, responseAt] = [0n, 0n];
  for (let i = 0; i < count; i++) {
    const request = { start: r.u64(), end: r.u64() };
    const response = { start: r.u64(), end: r.u64() };
    if (request.start !== requestAt || request.end < request.start) notTiling("sent");
    if (response.start !== responseAt || response.end < response.start) notTiling("received");
    [requestAt, responseAt] = [request.end, response.end];
    list.push({ request, response });
  }
  if (requestAt !== sentLen) notTiling("sent");
  if (responseAt !== receivedLen) notTiling("received");
  return list;
}

/**
 * The decoded attestation with its u64 fields as numbers, refusing those a JS number cannot
 * hold exactly. Called after Rust's checks (and the signature's), so that whatever Rust
 * refuses is refused here for the same reason. Once the lengths are safe, so are the ranges
 * within them.
 */
function withNumbers(a) {
  const safe = (value, what) => {
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      fail("TooLarge", `${what} is ${value}, more than JavaScript numbers hold exactly (Number.MAX_SAFE_INTEGER)`);
    }
    return Number(value);
  };
  return {
    ...a,
    connectionTime: safe(a.connectionTime, "the connection time"),
    sent: { ...a.sent, len: safe(a.sent.len, "the sent length") },
    received: { ...a.received, len: safe(a.received.len, "the received length") },
    // within the lengths, so exact
    exchanges: a.exchanges.map(({ request, response }) => ({
      request: { start: Number(request.start), end: Number(request.end) },
      response: response.start === response.end ? null : { start: Number(response.start), end: Number(response.end) },
    })),
    // within a request or a response, so exact
    statements: a.statements.map(({ exchange, direction, statement, value }) => ({
      exchange, direction, statement, value: value.map(({ start, end }) => ({ start: Number(start), end: Number(end) })),
    })),
  };
}

function direction(r, name) {
  const len = r.u64();
  const [kind, alert] = r.take(2);
  // description 0 is close_notify, whatever its level
  const ending = kind === 0 && alert === 0 ? "open"
    : kind === 1 && alert === 0 ? "close_notify"
    : kind === 2 && alert !== 0 ? "fatal_alert"
    : fail("BadEnding", `${name}: unknown ending [${kind}, ${alert}]`);
  const revealed = ranges(r, name, len);
  if (revealed.some((x, i) => i > 0 && revealed[i - 1].end > x.start)) {
    fail("RangesOutOfOrder", `${name}: revealed ranges are not sorted and disjoint`);
  }
  const committed = ranges(r, name, len);
  // exact when the length is, which withNumbers checks
  const numbers = (list) => list.map(({ start, end, digest }) => ({ start: Number(start), end: Number(end), digest }));
  return { len, ending, alert: kind === 2 ? alert : null, revealed: numbers(revealed), committed: numbers(committed) };
}

function ranges(r, name, len) {
  const count = r.u16();
  if (count > MAX_RANGES) fail("TooManyRanges", `${name}: ${count} ranges, more than ${MAX_RANGES}`);
  // before allocating: a count the bytes cannot hold is refused at once
  if (r.left < count * RANGE_BYTES) fail("Truncated", "attestation truncated");
  return Array.from({ length: count }, () => {
    const start = r.u64();
    const end = r.u64();
    if (start >= end || end > len) {
      fail("RangeOutsideTranscript", `${name}: range ${start}..${end} is empty or outside the transcript of ${len} bytes`);
    }
    return { start, end, digest: bytesToHex(r.take(32)) };
  });
}

/**
 * A verifier key as text: `secp256k1:0x` and its Ethereum address, or `ed25519:` and its
 * public key, in lower-case hex (one spelling per key).
 */
function parseKey(text) {
  const bad = () => fail("BadKey",
    `malformed public key ${JSON.stringify(String(text).slice(0, 100))}: expected secp256k1:0x<40 hex digits> or ed25519:<64 hex digits>`);
  const m = typeof text === "string" ? /^(?:secp256k1:0x([0-9a-f]{40})|ed25519:([0-9a-f]{64}))$/.exec(text.trim()) : null;
  if (!m) bad();
  if (m[1]) return { scheme: "secp256k1", address: m[1] };
  const publicKey = hexToBytes(m[2]);
  // ZIP-215 decoding accepts what ed25519-dalek's VerifyingKey::from_bytes does: any point
  if (!ed25519.utils.isValidPublicKey(publicKey, true)) bad();
  return { scheme: "ed25519", publicKey };
}

function mismatch() {
  fail("SignatureMismatch", "the signature does not verify under the verifier's key (another key, or altered data)");
}

/** The Ethereum address of an uncompressed secp256k1 point: Keccak-256 of x ‖ y, last 20 bytes. */
function ethereumAddress(uncompressed) {
  return bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12));
}

/** ECDSA over Keccak-256(DOMAIN ‖ data), r ‖ s ‖ v, as ecrecover takes it, refusing high s. */
function verifySecp256k1(address, data, signature) {
  if (signature.length !== 65) fail("WrongLength", `signature of ${signature.length} bytes; secp256k1 signatures have 65`);
  const v = signature[64];
  if (v !== 27 && v !== 28) fail("BadRecoveryByte", `secp256k1 signature's recovery byte is ${v}, not 27 or 28`);
  const n = secp256k1.Point.Fn.ORDER;
  const [r, s] = [signature.subarray(0, 32), signature.subarray(32, 64)].map((b) => BigInt("0x" + bytesToHex(b)));
  // (r, n - s) signs the same digest too: only the low s is accepted, as on an EVM
  if (r === 0n || r >= n || s === 0n || s > n >> 1n) {
    fail("NonCanonical", "secp256k1 signature with a high s (malleable) or r, s out of range");
  }
  let key;
  try {
    key = new secp256k1.Signature(r, s, v - 27).recoverPublicKey(keccak_256(concatBytes(DOMAIN, data)));
  } catch {
    mismatch();
  }
  if (ethereumAddress(key.toBytes(false)) !== address) mismatch();
}

/** RFC 8032 Ed25519 over DOMAIN ‖ data, verified as strictly as ed25519-dalek's verify_strict. */
function verifyEd25519(publicKey, data, signature) {
  if (signature.length !== 64) fail("WrongLength", `signature of ${signature.length} bytes; ed25519 signatures have 64`);
  // zip215: false decodes strictly (canonical points and S) and refuses a small-order key;
  // verify_strict also refuses a small-order R
  const ok = ed25519.verify(signature, concatBytes(DOMAIN, data), publicKey, { zip215: false })
    && !ed25519.Point.fromBytes(signature.subarray(0, 32)).isSmallOrder();
  if (!ok) mismatch();
}

function signedAttestation(value) {
  if (!isObject(value)) fail("Malformed", "an attestation is {data, signature}");
  return { data: fromHex(value.data, "attestation data"), signature: fromHex(value.signature, "attestation signature") };
}

/** Decodes, checks that the attestation names the key's scheme, then the signature. */
function verifySigned(key, { data, signature }) {
  const attestation = decode(data);
  if (attestation.scheme !== key.scheme) {
    fail("SchemeMismatch", `the attestation is signed with ${attestation.scheme}, the key given is ${key.scheme}`);
  }
  if (key.scheme === "secp256k1") verifySecp256k1(key.address, data, signature);
  else verifyEd25519(key.publicKey, data, signature);
  return withNumbers(attestation);
}

/**
 * Checks a signed attestation (`{data, signature}`, hex) under the verifier's public key and
 * returns what it attests.
 */
export function verifyAttestation(attestation, { verifierKey } = {}) {
  const key = parseKey(verifierKey);
  return verifySigned(key, signedAttestation(attestation));
}

function parseSecrets(secrets) {
  if (!isObject(secrets) || !isObject(secrets.salts) || !isObject(secrets.blinders)) {
    fail("Malformed", "secrets are {sent, received, salts: {sent, received}, blinders: {sent, received}}");
  }
  const openings = (list, what) => {
    if (!Array.isArray(list)) fail("Malformed", `${what} is not a list of openings`);
    return list.map((o, i) => opening(o, `${what}[${i}]`));
  };
  const parsed = { salts: {}, blinders: {} };
  for (const d of DIRECTIONS) {
    parsed[d] = fromHex(secrets[d], `secrets.${d}`);
    parsed.salts[d] = openings(secrets.salts[d], `secrets.salts.${d}`);
    parsed.blinders[d] = openings(secrets.blinders[d], `secrets.blinders.${d}`);
  }
  return parsed;
}

/** Whether the secrets open every hash of the attestation, as Rust's AttestationSecrets::check. */
function checkSecrets(attested, secrets) {
  const wrong = (why) => fail("WrongSecrets", `the secrets do not belong to this attestation: ${why}`);
  for (const d of DIRECTIONS) {
    const a = attested[d];
    const plaintext = secrets[d];
    if (plaintext.length !== a.len) wrong("the plaintext length differs from the attested one");
    for (const [list, openings] of [[a.revealed, secrets.salts[d]], [a.committed, secrets.blinders[d]]]) {
      if (list.length !== openings.length) wrong("not one opening per attested range");
      if (list.some((r, i) => rangeDigest(plaintext.subarray(r.start, r.end), openings[i]) !== r.digest)) {
        wrong("an attested digest does not open with this plaintext and opening");
      }
    }
  }
}

function outsideTranscript(direction, start, end, len) {
  fail("RangeOutsideTranscript", `${direction} range ${start}..${end} is outside the transcript of ${len} bytes`);
}

/**
 * Builds a presentation that discloses `disclose` (`{direction, start, end}` or
 * `[direction, start, end]`), each exactly a revealed range or a commitment of the
 * attestation. The secrets are checked against the attestation first, so wrong secrets fail
 * here rather than at the third party. The signature is not checked.
 */
export function present(attestation, secrets, disclose) {
  const signed = signedAttestation(attestation);
  const attested = withNumbers(decode(signed.data));
  const plain = parseSecrets(secrets);
  checkSecrets(attested, plain);
  if (!Array.isArray(disclose)) fail("Malformed", "the ranges to disclose are a list");
  const disclosures = disclose.map((spec, i) => {
    const [dir, from, to] = Array.isArray(spec) ? spec : [spec?.direction, spec?.start, spec?.end];
    const what = `range ${i} to disclose`;
    const direction = directionName(dir, what);
    const [start, end] = [offset(from, what), offset(to, what)];
    const a = attested[direction];
    if (start >= end || end > a.len) outsideTranscript(direction, start, end, a.len);
    const find = (list, openings) => {
      const at = list.findIndex((r) => r.start === start && r.end === end);
      return at < 0 ? undefined : openings[at];
    };
    const open = find(a.revealed, plain.salts[direction]) ?? find(a.committed, plain.blinders[direction])
      ?? fail("NotAttested", `${direction} range ${start}..${end} is neither a revealed range nor a commitment of the attestation`);
    return { direction, start, end, data: bytesToHex(plain[direction].subarray(start, end)), opening: bytesToHex(open) };
  });
  return { version: 1, attestation: { data: bytesToHex(signed.data), signature: bytesToHex(signed.signature) }, disclosures };
}

function parsePresentation(value) {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (e) {
      fail("Malformed", `a presentation is JSON: ${e.message}`);
    }
  }
  if (!isObject(value) || !Array.isArray(value.disclosures)) fail("Malformed", "a presentation is {version, attestation, disclosures: [...]}");
  if (!Number.isInteger(value.version) || value.version < 0 || value.version > 0xffff) {
    fail("Malformed", `the presentation's version ${JSON.stringify(value.version)} is not a format version`);
  }
  const disclosures = value.disclosures.map((x, i) => {
    const what = `disclosure ${i}`;
    if (!isObject(x)) fail("Malformed", `${what} is not {direction, start, end, data, opening}`);
    return {
      direction: directionName(x.direction, what),
      start: offset(x.start, what),
      end: offset(x.end, what),
      data: fromHex(x.data, `${what}'s data`),
      opening: opening(x.opening, `${what}'s opening`),
    };
  });
  return { version: value.version, attestation: signedAttestation(value.attestation), disclosures };
}

/** One disclosure against the attestation, with Rust's Presentation::check's checks in its order. */
function checkDisclosure(attestation, { direction, start, end, data, opening: open }) {
  const a = attestation[direction];
  const range = `${direction} range ${start}..${end}`;
  if (start >= end || end > a.len) outsideTranscript(direction, start, end, a.len);
  const same = (r) => r.start === start && r.end === end;
  if (!a.revealed.some(same) && !a.committed.some(same)) {
    fail("NotAttested", `${range} is neither a revealed range nor a commitment of the attestation`);
  }
  if (data.length !== end - start) fail("LengthMismatch", `${range} has ${data.length} bytes of data`);
  const digest = rangeDigest(data, open);
  const opens = (list) => list.some((r) => same(r) && r.digest === digest);
  const revealedToVerifier = opens(a.revealed);
  if (!revealedToVerifier && !opens(a.committed)) {
    fail("OpeningMismatch", `${range}: the data and opening do not hash to the attested digest`);
  }
  return { direction, start, end, revealedToVerifier, data, text: utf8.decode(data) };
}

/**
 * Checks a presentation (an object or its JSON text) under the verifier's public key: its
 * version, the attestation's signature, then each disclosure. Returns what is attested and
 * each disclosed range with its bytes, and whether the verifier saw them (a revealed range) or
 * they open a commitment.
 */
export function verifyPresentation(presentation, { verifierKey } = {}) {
  const key = parseKey(verifierKey);
  const p = parsePresentation(presentation);
  if (p.version !== 1) fail("UnsupportedVersion", `presentation format version ${p.version}; this code reads version 1`);
  const attestation = verifySigned(key, p.attestation);
  return { attestation, disclosed: p.disclosures.map((x) => checkDisclosure(attestation, x)) };
}
