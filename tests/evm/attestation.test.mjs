// contracts/TlsproofAttestations.sol compiled with solc-js and run on an in-process EVM
// (@ethereumjs/evm): the secp256k1 test vectors of docs/attestation-vectors.json (a disclosed
// commitment; statements about hidden values, read by a contract that trusts them), refusals by
// their custom errors, and attestations built here from the layout of docs/attestation.md.
// Writes the gas it measures to test-artifacts/evm-gas.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createEVM } from '@ethereumjs/evm';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EVM_VERSION = 'cancun';
const N = secp256k1.Point.Fn.ORDER;
const DOMAIN = hexToBytes('19746c7370726f6f66206174746573746174696f6e');
const vectors = JSON.parse(readFileSync(`${root}docs/attestation-vectors.json`, 'utf8'));
const vector = vectors.vectors.find((v) => v.scheme === 'secp256k1' && v.name === 'committed cookie');
const statementVector = vectors.vectors.find((v) => v.scheme === 'secp256k1' && v.name === 'statements about hidden values');
const SENT = 0;
const RECEIVED = 1;

// ---- bytes and a small ABI codec ----

const hex = (b) => bytesToHex(b);
const unhex = (s) => hexToBytes(s.replace(/^0x/, ''));
const selector = (signature) => keccak_256(utf8ToBytes(signature)).slice(0, 4);

/** A big-endian unsigned integer of `size` bytes. */
function be(value, size) {
  const out = new Uint8Array(size);
  let v = BigInt(value);
  for (let i = size - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  assert.equal(v, 0n, `${value} does not fit in ${size} bytes`);
  return out;
}
const word = (value) => be(value, 32);
const padRight = (b) => concatBytes(b, new Uint8Array((32 - (b.length % 32)) % 32));

/**
 * ABI-encodes arguments, each `['uint', n]`, `['address', hex]`, `['bytes16', bytes]` or
 * `['bytes', bytes]` (the only dynamic type used here).
 */
function abiEncode(args) {
  const heads = [];
  const tails = [];
  let tailAt = 32 * args.length;
  for (const [type, value] of args) {
    if (type === 'uint') heads.push(word(value));
    else if (type === 'address') heads.push(word(BigInt(`0x${value.replace(/^0x/, '')}`)));
    else if (type === 'bytes16') heads.push(padRight(value));
    else if (type === 'bytes') {
      heads.push(word(tailAt));
      const tail = concatBytes(word(value.length), padRight(value));
      tails.push(tail);
      tailAt += tail.length;
    } else throw new Error(`type ${type}`);
  }
  return concatBytes(...heads, ...tails);
}
const calldata = (signature, args) => concatBytes(selector(signature), abiEncode(args));

const readWord = (b, at) => BigInt(`0x${hex(b.slice(at, at + 32))}`);
/** The `bytes` or `string` whose offset (relative to `base`) is in the word at `at`. */
function readDynamic(b, base, at) {
  const start = base + Number(readWord(b, at));
  const len = Number(readWord(b, start));
  return b.slice(start + 32, start + 32 + len);
}

// ---- the attestation layout (docs/attestation.md) and secp256k1 signing ----

/**
 * One statement: exchange (from 1), direction (0 sent: the request, 1 received: the response),
 * value range count, ranges, text length, text.
 */
const encodeStatement = ({ exchange, direction, value, text }) => {
  const bytes = typeof text === 'string' ? utf8ToBytes(text) : text;
  return concatBytes(be(exchange, 1), be(direction, 1), be(value.length, 1), ...value.map(([start, end]) => concatBytes(be(start, 8), be(end, 8))), be(bytes.length, 2), bytes);
};

/** The canonical encoding of `a`; `scheme` 1 is secp256k1. */
function encodeAttestation(a) {
  const direction = (d) =>
    concatBytes(
      be(d.len, 8),
      Uint8Array.from(d.ending),
      ...[d.revealed, d.committed].flatMap((list) => [be(list.length, 2), ...list.map((r) => concatBytes(be(r.start, 8), be(r.end, 8), r.digest))]),
    );
  const name = utf8ToBytes(a.serverName);
  return concatBytes(
    utf8ToBytes('TLSPROOF'),
    be(a.format ?? 4, 2),
    be(a.scheme ?? 1, 1),
    be(a.protocolVersion, 2),
    be(a.mode, 1),
    be(a.tlsVersion, 2),
    be(a.cipherSuite, 2),
    be(a.group, 2),
    be(a.connectionTime, 8),
    be(a.port, 2),
    be(name.length, 1),
    name,
    direction(a.sent),
    direction(a.received),
    be(a.exchanges.length, 1),
    ...a.exchanges.map(([requestStart, requestEnd, responseStart, responseEnd]) =>
      concatBytes(be(requestStart, 8), be(requestEnd, 8), be(responseStart, 8), be(responseEnd, 8))),
    be((a.statements ?? []).length, 1),
    ...(a.statements ?? []).map(encodeStatement),
  );
}

const rangeDigest = (data, opening) => sha256(concatBytes(data, opening));

function addressOf(secretKey) {
  const point = secp256k1.getPublicKey(secretKey, false);
  return hex(keccak_256(point.slice(1)).slice(12));
}

/** r ‖ s ‖ v over Keccak-256(DOMAIN ‖ data), low s, v = 27 + recovery id. */
function sign(data, secretKey) {
  const digest = keccak_256(concatBytes(DOMAIN, data));
  const recovered = secp256k1.sign(digest, secretKey, { prehash: false, format: 'recovered' });
  return concatBytes(recovered.slice(1), Uint8Array.of(27 + recovered[0]));
}

// ---- compile, deploy, call ----

/**
 * A contract that relies on the attestations: it accepts an attestation of the trusted
 * verifier when its first statement is that the balance in bank.example's response is at least
 * 1000, with no byte of the response disclosed. It checks the direction too: the same text
 * about the request's body would state what the prover sent, not what the bank answered.
 */
const CONSUMER = `// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity ^0.8.24;
import "./TlsproofAttestations.sol";

contract BalanceGate {
    TlsproofAttestations public immutable attestations;

    constructor(TlsproofAttestations attestations_) {
        attestations = attestations_;
    }

    function qualifies(bytes calldata attestation, bytes calldata signature) external view returns (bool) {
        (string memory serverName,,, uint8 direction,, bytes memory text) = attestations.statement(attestation, signature, 0);
        return keccak256(bytes(serverName)) == keccak256("bank.example") && direction == 1
            && keccak256(text) == keccak256("account.balance.amount >= 1000");
    }
}
`;

function compile() {
  const source = readFileSync(`${root}contracts/TlsproofAttestations.sol`, 'utf8');
  const input = {
    language: 'Solidity',
    sources: { 'TlsproofAttestations.sol': { content: source }, 'BalanceGate.sol': { content: CONSUMER } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  // Errors fail the test, and so do warnings: the contract should compile cleanly.
  const problems = (output.errors ?? []).map((e) => e.formattedMessage);
  assert.deepEqual(problems, [], `solc ${solc.version()} reported:\n${problems.join('\n')}`);
  const contract = output.contracts['TlsproofAttestations.sol'].TlsproofAttestations;
  const consumer = output.contracts['BalanceGate.sol'].BalanceGate;
  return { abi: contract.abi, bytecode: unhex(contract.evm.bytecode.object), consumer: unhex(consumer.evm.bytecode.object) };
}

const compiled = compile();
const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork: Hardfork.Cancun }) });
const caller = createAddressFromString('0x00000000000000000000000000000000000000ee');
await evm.stateManager.putAccount(caller, new Account(0n, 10n ** 20n));

/**
 * What a transaction starts with (EIP-2929): an empty access set but for the sender, the
 * recipient and the precompiles, which are warm. runCall alone keeps the set between calls,
 * so without this the gas of a call would depend on the calls before it.
 */
async function newTransaction(to) {
  await evm.journal.cleanup();
  for (const address of [caller.toString(), to?.toString(), ...[...evm.precompiles.keys()].map((a) => `0x${a}`)]) {
    if (address !== undefined) evm.journal.addAlwaysWarmAddress(address);
  }
}

/** A Cancun transaction's gas before execution: base, calldata, and for a creation its base and init code words. */
function intrinsicGas(data, create) {
  const zeros = data.filter((b) => b === 0).length;
  const calldataGas = 4 * zeros + 16 * (data.length - zeros);
  return BigInt(21000 + calldataGas + (create ? 32000 + 2 * Math.ceil(data.length / 32) : 0));
}

/**
 * Deploys a contract trusting `verifier` (hex address), or with `bytecode` another one whose
 * constructor takes an address; returns its address and gas.
 */
async function deploy(verifier, bytecode = compiled.bytecode) {
  await newTransaction();
  const data = concatBytes(bytecode, abiEncode([['address', verifier]]));
  const result = await evm.runCall({ caller, data, gasLimit: 30_000_000n });
  assert.equal(result.execResult.exceptionError, undefined, 'deployment failed');
  return { address: result.createdAddress, gas: result.execResult.executionGasUsed, intrinsic: intrinsicGas(data, true) };
}

async function call(to, data) {
  await newTransaction(to);
  const result = await evm.runCall({ caller, to, data, gasLimit: 30_000_000n });
  const { exceptionError, returnValue, executionGasUsed } = result.execResult;
  return { reverted: exceptionError !== undefined, error: exceptionError?.error, ret: returnValue, gas: executionGasUsed, intrinsic: intrinsicGas(data, false) };
}

/** Asserts a revert with the custom error `signature` (e.g. `NonCanonical()`). */
function assertError(res, signature) {
  assert.ok(res.reverted, `expected ${signature}, but the call returned`);
  assert.equal(res.error, 'revert', `expected ${signature}, got ${res.error}`);
  assert.equal(hex(res.ret.slice(0, 4)), hex(selector(signature)), `expected ${signature}, revert data 0x${hex(res.ret)}`);
}

const headerCall = (attestation, signature) => calldata('header(bytes,bytes)', [['bytes', attestation], ['bytes', signature]]);
const disclosedCall = (attestation, signature, direction, start, end, data, opening) =>
  calldata('disclosed(bytes,bytes,uint8,uint64,uint64,bytes,bytes16)', [
    ['bytes', attestation],
    ['bytes', signature],
    ['uint', direction],
    ['uint', start],
    ['uint', end],
    ['bytes', data],
    ['bytes16', opening],
  ]);

function decodeHeader(ret) {
  const at = Number(readWord(ret, 0)); // the tuple's offset
  const field = (i) => readWord(ret, at + 32 * i);
  return {
    protocolVersion: field(0),
    mode: field(1),
    tlsVersion: field(2),
    cipherSuite: field(3),
    group: field(4),
    connectionTime: field(5),
    port: field(6),
    serverName: new TextDecoder().decode(readDynamic(ret, at, at + 32 * 7)),
    sentLength: field(8),
    receivedLength: field(9),
    receivedEnding: field(10),
    exchangeCount: field(11),
    statementCount: field(12),
  };
}

const exchangeCall = (attestation, signature, index) =>
  calldata('exchange(bytes,bytes,uint256)', [['bytes', attestation], ['bytes', signature], ['uint', index]]);
const decodeExchange = (ret) => [0, 1, 2, 3].map((i) => Number(readWord(ret, 32 * i)));

const statementCall = (attestation, signature, index) =>
  calldata('statement(bytes,bytes,uint256)', [['bytes', attestation], ['bytes', signature], ['uint', index]]);
function decodeStatement(ret) {
  return {
    serverName: new TextDecoder().decode(readDynamic(ret, 0, 0)),
    connectionTime: readWord(ret, 32),
    exchange: Number(readWord(ret, 64)),
    direction: Number(readWord(ret, 96)),
    valueLength: Number(readWord(ret, 128)),
    text: new TextDecoder().decode(readDynamic(ret, 0, 160)),
  };
}

function decodeDisclosed(ret) {
  return {
    serverName: new TextDecoder().decode(readDynamic(ret, 0, 0)),
    connectionTime: readWord(ret, 32),
    data: readDynamic(ret, 0, 64),
  };
}

// ---- the vector ----

const trusted = vector.verifierKey.replace(/^secp256k1:0x/, '');
const data = unhex(vector.attestation.data);
const signature = unhex(vector.attestation.signature);
const disclosures = vector.presentation.disclosures.map((d) => ({
  direction: d.direction === 'sent' ? SENT : RECEIVED,
  start: d.start,
  end: d.end,
  data: unhex(d.data),
  opening: unhex(d.opening),
}));
const sentCommitment = disclosures.find((d) => d.direction === SENT);
const receivedRange = disclosures.find((d) => d.direction === RECEIVED);
const disclose = (d, over = {}) => {
  const x = { attestation: data, signature, ...d, ...over };
  return disclosedCall(x.attestation, x.signature, x.direction, x.start, x.end, x.data, x.opening);
};

const gas = {};
const deployment = await deploy(trusted);
const contract = deployment.address;
gas.deployment = deployment;

test('the vector is the one its secret key signs', () => {
  assert.equal(addressOf(unhex(vector.secretKey)), trusted);
  assert.equal(hex(sign(data, unhex(vector.secretKey))), hex(signature), 'RFC 6979: the signature is deterministic');
});

test('verifier() is the trusted address', async () => {
  const res = await call(contract, selector('verifier()'));
  assert.ok(!res.reverted);
  assert.equal(readWord(res.ret, 0), BigInt(`0x${trusted}`));
});

test('header() returns the vector’s attested header', async () => {
  const res = await call(contract, headerCall(data, signature));
  assert.ok(!res.reverted, `reverted: 0x${hex(res.ret)}`);
  gas.header = res;
  assert.deepEqual(decodeHeader(res.ret), {
    protocolVersion: 18n,
    mode: 0n,
    tlsVersion: 0x0303n,
    cipherSuite: 0xc02bn,
    group: 23n,
    connectionTime: 1796262400n,
    port: 443n,
    serverName: 'example.com',
    sentLength: 53n,
    receivedLength: 52n,
    receivedEnding: 1n,
    exchangeCount: 1n,
    statementCount: 0n,
  });
  const x = await call(contract, exchangeCall(data, signature, 0));
  assert.deepEqual(decodeExchange(x.ret), [0, 53, 0, 52], 'one exchange: all of both directions');
});

test('disclosed() returns each disclosure of the vector', async () => {
  for (const d of disclosures) {
    const res = await call(contract, disclose(d));
    assert.ok(!res.reverted, `${d.direction} ${d.start}..${d.end} reverted: 0x${hex(res.ret)}`);
    const out = decodeDisclosed(res.ret);
    assert.equal(out.serverName, 'example.com');
    assert.equal(out.connectionTime, 1796262400n);
    assert.equal(hex(out.data), hex(d.data));
    if (d === receivedRange) gas.disclosedReceived = res;
    else gas.disclosedSentCommitment = res;
  }
  assert.equal(new TextDecoder().decode(sentCommitment.data), 'secret');
  assert.equal(receivedRange.end - receivedRange.start, 52);
});

test('signatures: altered data, another key, high s and a bad recovery byte are refused', async () => {
  const flipped = data.slice();
  flipped[flipped.length - 3] ^= 1;
  assertError(await call(contract, headerCall(flipped, signature)), 'SignatureMismatch()');
  assertError(await call(contract, disclose(receivedRange, { attestation: flipped })), 'SignatureMismatch()');

  const other = sign(data, secp256k1.utils.randomSecretKey());
  assertError(await call(contract, headerCall(data, other)), 'SignatureMismatch()');

  // the same signature with s' = n − s and the other recovery id: valid for ecrecover, but malleable
  const s = BigInt(`0x${hex(signature.slice(32, 64))}`);
  const highS = concatBytes(signature.slice(0, 32), word(N - s), Uint8Array.of(55 - signature[64]));
  assertError(await call(contract, headerCall(data, highS)), 'NonCanonical()');

  const v1 = concatBytes(signature.slice(0, 64), Uint8Array.of(1));
  assertError(await call(contract, headerCall(data, v1)), 'BadRecoveryByte(uint8)');

  assertError(await call(contract, headerCall(data, signature.slice(0, 64))), 'WrongLength(uint256)');
});

test('disclosures that do not match the attestation are refused', async () => {
  const moved = { start: sentCommitment.start + 1, end: sentCommitment.end + 1 };
  assertError(await call(contract, disclose(sentCommitment, moved)), 'NotAttested(uint8,uint64,uint64)');
  assertError(await call(contract, disclose(receivedRange, { end: 53, data: concatBytes(receivedRange.data, Uint8Array.of(0)) })), 'RangeOutsideTranscript(uint8,uint64,uint64,uint64)');
  assertError(await call(contract, disclose(receivedRange, { start: 52 })), 'RangeOutsideTranscript(uint8,uint64,uint64,uint64)');
  for (const d of disclosures) {
    const changed = d.data.slice();
    changed[0] ^= 0x20;
    assertError(await call(contract, disclose(d, { data: changed })), 'OpeningMismatch(uint8,uint64,uint64)');
    const opening = d.opening.slice();
    opening[15] ^= 1;
    assertError(await call(contract, disclose(d, { opening })), 'OpeningMismatch(uint8,uint64,uint64)');
    assertError(await call(contract, disclose(d, { data: concatBytes(d.data, Uint8Array.of(0x41)) })), 'LengthMismatch(uint8,uint64,uint64,uint256)');
  }
  // the received direction of the vector has no range 43..49: the direction matters
  assertError(await call(contract, disclose(sentCommitment, { direction: RECEIVED })), 'NotAttested(uint8,uint64,uint64)');
  assertError(await call(contract, disclose(sentCommitment, { direction: 2 })), 'BadDirection(uint8)');
});

test('a contract trusting another address refuses the vector', async () => {
  const { address } = await deploy(addressOf(secp256k1.utils.randomSecretKey()));
  assertError(await call(address, headerCall(data, signature)), 'SignatureMismatch()');
  assertError(await call(address, disclose(receivedRange)), 'SignatureMismatch()');
});

// ---- an attestation built here, signed with a fresh key ----

const freshKey = secp256k1.utils.randomSecretKey();
const fresh = await deploy(addressOf(freshKey));
const sentText = utf8ToBytes('POST /transfer HTTP/1.1\r\nHost: bank.example\r\nAuthorization: Bearer s3cr3t-t0ken\r\n\r\n{"amount":12}');
const receivedText = utf8ToBytes(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"id":"tx-7781","status":"done","balance":1234}${'.'.repeat(40)}`);
/** A list of attested ranges over `text`, each with a random opening. */
const ranges = (text, list) =>
  list.map(([start, end]) => {
    const opening = randomBytes(16);
    return { start, end, opening, digest: rangeDigest(text.slice(start, end), opening) };
  });
const text = (bytes) => new TextDecoder().decode(bytes);
const tokenAt = text(sentText).indexOf('s3cr3t');
const bodyAt = text(sentText).indexOf('{"amount');
const sentCommitted = ranges(sentText, [[tokenAt, tokenAt + 's3cr3t-t0ken'.length], [bodyAt, sentText.length]]);
const receivedRevealed = ranges(receivedText, [[0, 17], [17, 49], [51, receivedText.length]]);
const statement = () => ({
  protocolVersion: 10,
  mode: 0,
  tlsVersion: 0x0304,
  cipherSuite: 0x1301,
  group: 29,
  connectionTime: 1800000000,
  port: 8443,
  serverName: 'bank.example',
  sent: { len: sentText.length, ending: [0, 0], revealed: ranges(sentText, [[0, tokenAt]]), committed: sentCommitted.map((r) => ({ ...r })) },
  received: { len: receivedText.length, ending: [2, 40], revealed: receivedRevealed.map((r) => ({ ...r })), committed: [] },
  // two requests: the second (its body) unanswered
  exchanges: [[0, bodyAt, 0, receivedText.length], [bodyAt, sentText.length, receivedText.length, receivedText.length]],
});
/** The fresh statement with statements about the response's hidden balance (1234). */
const balanceAt = text(receivedText).indexOf('1234');
const statementAttestation = () => {
  const a = statement();
  a.serverName = 'bank.example';
  a.statements = [
    { exchange: 1, direction: RECEIVED, value: [[balanceAt, balanceAt + 4]], text: 'account.balance.amount >= 1000' },
    { exchange: 1, direction: RECEIVED, value: [[balanceAt, balanceAt + 2], [balanceAt + 2, balanceAt + 4]], text: 'balance in [1000, 9999]' },
  ];
  return a;
};
/** A statement about the second request's body, `{"amount":12}`: its hidden 12. */
const amountAt = text(sentText).indexOf('12}');
const requestStatement = (text = 'amount <= 100') => ({ exchange: 2, direction: SENT, value: [[amountAt, amountAt + 2]], text });
const signed = (a) => {
  const bytes = a instanceof Uint8Array ? a : encodeAttestation(a);
  return { bytes, sig: sign(bytes, freshKey) };
};

test('a fresh attestation: header and disclosures of a commitment and a revealed range', async () => {
  const { bytes, sig } = signed(statement());
  const res = await call(fresh.address, headerCall(bytes, sig));
  assert.ok(!res.reverted, `reverted: 0x${hex(res.ret)}`);
  assert.deepEqual(decodeHeader(res.ret), {
    protocolVersion: 10n,
    mode: 0n,
    tlsVersion: 0x0304n,
    cipherSuite: 0x1301n,
    group: 29n,
    connectionTime: 1800000000n,
    port: 8443n,
    serverName: 'bank.example',
    sentLength: BigInt(sentText.length),
    receivedLength: BigInt(receivedText.length),
    receivedEnding: 2n,
    exchangeCount: 2n,
    statementCount: 0n,
  });
  for (const [index, expected] of statement().exchanges.entries()) {
    const x = await call(fresh.address, exchangeCall(bytes, sig, index));
    assert.ok(!x.reverted, `reverted: 0x${hex(x.ret)}`);
    assert.deepEqual(decodeExchange(x.ret), expected);
  }
  assertError(await call(fresh.address, exchangeCall(bytes, sig, 2)), 'NoExchange(uint256,uint256)');
  const cases = [
    [SENT, sentCommitted[0], 's3cr3t-t0ken'],
    [SENT, sentCommitted[1], '{"amount":12}'],
    [RECEIVED, receivedRevealed[2], `{"id":"tx-7781","status":"done","balance":1234}${'.'.repeat(40)}`],
  ];
  for (const [direction, r, expected] of cases) {
    const plaintext = direction === SENT ? sentText : receivedText;
    const out = await call(fresh.address, disclosedCall(bytes, sig, direction, r.start, r.end, plaintext.slice(r.start, r.end), r.opening));
    assert.ok(!out.reverted, `reverted: 0x${hex(out.ret)}`);
    const got = decodeDisclosed(out.ret);
    assert.equal(got.serverName, 'bank.example');
    assert.equal(got.connectionTime, 1800000000n);
    assert.equal(text(got.data), expected);
  }
  // a commitment's opening does not open another commitment
  const [first, second] = sentCommitted;
  const crossed = await call(fresh.address, disclosedCall(bytes, sig, SENT, first.start, first.end, sentText.slice(first.start, first.end), second.opening));
  assertError(crossed, 'OpeningMismatch(uint8,uint64,uint64)');
  // the vector's key did not sign this one
  assertError(await call(contract, headerCall(bytes, sig)), 'SignatureMismatch()');
});

test('a range both revealed and committed opens with either opening', async () => {
  const a = statement();
  const [start, end] = [0, 17];
  const blinder = randomBytes(16);
  a.received.committed = [{ start, end, opening: blinder, digest: rangeDigest(receivedText.slice(start, end), blinder) }];
  const { bytes, sig } = signed(a);
  for (const opening of [a.received.revealed[0].opening, blinder]) {
    const res = await call(fresh.address, disclosedCall(bytes, sig, RECEIVED, start, end, receivedText.slice(start, end), opening));
    assert.ok(!res.reverted, `reverted: 0x${hex(res.ret)}`);
  }
});

// ---- the vector with statements about hidden values ----

const statementData = unhex(statementVector.attestation.data);
const statementSignature = unhex(statementVector.attestation.signature);

test('statement() reads each statement of the vector, with no byte disclosed', async () => {
  assert.equal(statementVector.verifierKey, vector.verifierKey, 'the same verifier signed both vectors');
  const header = await call(contract, headerCall(statementData, statementSignature));
  assert.ok(!header.reverted, `reverted: 0x${hex(header.ret)}`);
  gas.headerWithStatements = header;
  const h = decodeHeader(header.ret);
  assert.deepEqual([h.serverName, h.tlsVersion, h.exchangeCount, h.statementCount], ['bank.example', 0x0304n, 1n, 3n]);
  const expected = [
    { exchange: 1, direction: RECEIVED, valueLength: 7, text: 'account.balance.amount >= 1000' },
    { exchange: 1, direction: RECEIVED, valueLength: 3, text: 'account.balance.currency in {"EUR", "USD"}' },
    { exchange: 1, direction: SENT, valueLength: 2, text: 'days <= 90' },
  ];
  const measured = ['statement', 'secondStatement', 'thirdStatement'];
  for (const [index, want] of expected.entries()) {
    const res = await call(contract, statementCall(statementData, statementSignature, index));
    assert.ok(!res.reverted, `statement ${index} reverted: 0x${hex(res.ret)}`);
    assert.deepEqual(decodeStatement(res.ret), { serverName: 'bank.example', connectionTime: 1796262400n, ...want });
    gas[measured[index]] = res;
  }
  assertError(await call(contract, statementCall(statementData, statementSignature, 3)), 'NoStatement(uint256,uint256)');
  assertError(await call(contract, statementCall(data, signature, 0)), 'NoStatement(uint256,uint256)');
  // the exchanges are found before the statements
  const x = await call(contract, exchangeCall(statementData, statementSignature, 0));
  assert.deepEqual(decodeExchange(x.ret), [0, 130, 0, 162]);
  // altered or signed by another key
  const flipped = statementData.slice();
  flipped[flipped.length - 5] ^= 1;
  assertError(await call(contract, statementCall(flipped, statementSignature, 0)), 'SignatureMismatch()');
  const other = sign(statementData, secp256k1.utils.randomSecretKey());
  assertError(await call(contract, statementCall(statementData, other, 0)), 'SignatureMismatch()');
});

test('a contract that trusts the verifier accepts the statement, and nothing else', async () => {
  const gate = await deploy(contract.toString(), compiled.consumer);
  const qualifies = (attestation, sig) =>
    call(gate.address, calldata('qualifies(bytes,bytes)', [['bytes', attestation], ['bytes', sig]]));
  const yes = await qualifies(statementData, statementSignature);
  assert.ok(!yes.reverted, `reverted: 0x${hex(yes.ret)}`);
  assert.equal(readWord(yes.ret, 0), 1n);
  gas.qualifies = yes;
  // the cookie vector has no statement; a forged signature is refused through the call
  assertError(await qualifies(data, signature), 'NoStatement(uint256,uint256)');
  assertError(await qualifies(statementData, sign(statementData, secp256k1.utils.randomSecretKey())), 'SignatureMismatch()');
  // another statement first: signed, but not the one the gate asks for
  const a = statementAttestation();
  a.statements.reverse();
  const bytes = encodeAttestation(a);
  const otherGate = await deploy(fresh.address.toString(), compiled.consumer);
  const no = await call(otherGate.address, calldata('qualifies(bytes,bytes)', [['bytes', bytes], ['bytes', sign(bytes, freshKey)]]));
  assert.ok(!no.reverted, `reverted: 0x${hex(no.ret)}`);
  assert.equal(readWord(no.ret, 0), 0n);
  // the gate's text first, but about the request's body: not what the bank answered
  const aboutRequest = statementAttestation();
  aboutRequest.statements.unshift(requestStatement('account.balance.amount >= 1000'));
  const requestBytes = encodeAttestation(aboutRequest);
  const requestSig = sign(requestBytes, freshKey);
  const read = await call(fresh.address, statementCall(requestBytes, requestSig, 0));
  assert.deepEqual(decodeStatement(read.ret), { serverName: 'bank.example', connectionTime: 1800000000n, exchange: 2, direction: SENT, valueLength: 2, text: 'account.balance.amount >= 1000' });
  const notResponse = await call(otherGate.address, calldata('qualifies(bytes,bytes)', [['bytes', requestBytes], ['bytes', requestSig]]));
  assert.ok(!notResponse.reverted, `reverted: 0x${hex(notResponse.ret)}`);
  assert.equal(readWord(notResponse.ret, 0), 0n);
});

test('statement() reads a statement about a request, after one about a response', async () => {
  const a = statementAttestation();
  a.statements.push(requestStatement());
  const { bytes, sig } = signed(a);
  const res = await call(fresh.address, statementCall(bytes, sig, 2));
  assert.ok(!res.reverted, `reverted: 0x${hex(res.ret)}`);
  assert.deepEqual(decodeStatement(res.ret), { serverName: 'bank.example', connectionTime: 1800000000n, exchange: 2, direction: SENT, valueLength: 2, text: 'amount <= 100' });
  assert.equal(text(sentText.slice(amountAt, amountAt + 2)), '12');
  const first = await call(fresh.address, statementCall(bytes, sig, 0));
  assert.equal(decodeStatement(first.ret).direction, RECEIVED);
});

test('signed but malformed attestations are refused like the Rust decoder refuses them', async (t) => {
  const valid = encodeAttestation(statement());
  const nameAt = 31;
  const sentAt = nameAt + 'bank.example'.length;
  const patched = (at, bytes) => {
    const out = valid.slice();
    out.set(bytes, at);
    return out;
  };
  const withStatement = (change) => {
    const a = statement();
    change(a);
    return a;
  };
  const withStatements = (change) => {
    const a = statementAttestation();
    change(a);
    return a;
  };
  // the statements section ends the attestation: patched at an offset from its count byte
  const withSection = encodeAttestation(statementAttestation());
  const sectionAt = withSection.length - concatBytes(be(2, 1), ...statementAttestation().statements.map(encodeStatement)).length;
  const patchedStatements = (at, bytes) => {
    const out = withSection.slice();
    out.set(bytes, sectionAt + at);
    return out;
  };
  assert.equal(withSection[sectionAt], 2);
  assert.equal(encodeStatement(statementAttestation().statements[0]).length, 51, 'the second statement follows the count and the first');
  const cases = [
    ['trailing byte', concatBytes(valid, Uint8Array.of(0)), 'TrailingBytes(uint256)'],
    ['truncated', valid.slice(0, valid.length - 1), 'Truncated()'],
    ['truncated header', valid.slice(0, 20), 'Truncated()'],
    ['magic', patched(0, utf8ToBytes('X')), 'BadMagic()'],
    ['format 1', patched(8, [0, 1]), 'UnsupportedFormat(uint16)'],
    ['no exchange', encodeAttestation(withStatement((a) => (a.exchanges = []))), 'BadExchangeCount(uint256)'],
    ['17 exchanges', encodeAttestation(withStatement((a) => (a.exchanges = Array(17).fill([0, 0, 0, 0])))), 'BadExchangeCount(uint256)'],
    ['a request not from 0', encodeAttestation(withStatement((a) => (a.exchanges[0][0] = 1))), 'ExchangesNotTiling(uint8)'],
    ['a gap between requests', encodeAttestation(withStatement((a) => (a.exchanges[1][0] += 1))), 'ExchangesNotTiling(uint8)'],
    ['requests short of the end', encodeAttestation(withStatement((a) => (a.exchanges[1][1] -= 1))), 'ExchangesNotTiling(uint8)'],
    ['responses beyond the end', encodeAttestation(withStatement((a) => (a.exchanges[1][3] += 1))), 'ExchangesNotTiling(uint8)'],
    ['Ed25519 scheme', patched(10, [2]), 'SchemeMismatch(uint8)'],
    ['mode 2', patched(13, [2]), 'UnknownMode(uint8)'],
    ['TLS 1.0', patched(14, [3, 1]), 'UnknownTlsVersion(uint16)'],
    ['port 0 in proxy mode', patched(28, [0, 0]), 'BadPort(uint8,uint16)'],
    ['a port in MPC mode', patched(13, [1]), 'BadPort(uint8,uint16)'],
    ['upper-case name', patched(nameAt, utf8ToBytes('B')), 'BadServerName()'],
    ['space in the name', patched(nameAt + 4, utf8ToBytes(' ')), 'BadServerName()'],
    ['empty name', encodeAttestation(withStatement((a) => (a.serverName = ''))), 'BadServerName()'],
    ['254-byte name', encodeAttestation(withStatement((a) => (a.serverName = 'a'.repeat(254)))), 'BadServerName()'],
    ['ending 01 07', patched(sentAt + 8, [1, 7]), 'BadEnding(uint8,bytes2)'],
    ['ending 02 00', patched(sentAt + 8, [2, 0]), 'BadEnding(uint8,bytes2)'],
    ['empty range', encodeAttestation(withStatement((a) => (a.sent.committed[0].end = a.sent.committed[0].start))), 'RangeOutsideTranscript(uint8,uint64,uint64,uint64)'],
    ['range past the end', encodeAttestation(withStatement((a) => (a.received.revealed[2].end = receivedText.length + 1))), 'RangeOutsideTranscript(uint8,uint64,uint64,uint64)'],
    ['revealed ranges out of order', encodeAttestation(withStatement((a) => a.received.revealed.reverse())), 'RangesOutOfOrder(uint8)'],
    ['overlapping revealed ranges', encodeAttestation(withStatement((a) => (a.received.revealed[1].start = 16))), 'RangesOutOfOrder(uint8)'],
    // the statements section
    ['17 statements', encodeAttestation(withStatements((a) => (a.statements = Array(17).fill(a.statements[0])))), 'TooManyStatements(uint256)'],
    ['a statement count past the end', patchedStatements(0, [3]), 'Truncated()'],
    ['a statement count short of the end', patchedStatements(0, [1]), 'TrailingBytes(uint256)'],
    ['a byte after the statements', concatBytes(encodeAttestation(statementAttestation()), Uint8Array.of(0)), 'TrailingBytes(uint256)'],
    ['a statement about exchange 0', patchedStatements(1, [0]), 'BadStatementExchange(uint256,uint8,uint256)'],
    ['a statement about exchange 3 of 2', patchedStatements(1, [3]), 'BadStatementExchange(uint256,uint8,uint256)'],
    ['a statement direction 2', patchedStatements(2, [2]), 'BadStatementDirection(uint256,uint8)'],
    ['a statement direction 255', patchedStatements(2, [255]), 'BadStatementDirection(uint256,uint8)'],
    ['a value of no range', patchedStatements(3, [0]), 'BadValueRangeCount(uint256,uint256)'],
    ['a value of 65 ranges', patchedStatements(3, [65]), 'BadValueRangeCount(uint256,uint256)'],
    ['64 value ranges past the end', patchedStatements(3, [64]), 'Truncated()'],
    ['an empty value range', patchedStatements(4 + 8, be(balanceAt, 8)), 'ValueOutsideMessage(uint256,uint8,uint64,uint64)'],
    ['a value range past the response', patchedStatements(4 + 8, be(receivedText.length + 1, 8)), 'ValueOutsideMessage(uint256,uint8,uint64,uint64)'],
    ['a value in the unanswered response', patchedStatements(1, [2]), 'ValueOutsideMessage(uint256,uint8,uint64,uint64)'],
    ['the response\'s value as one of the request', patchedStatements(2, [0]), 'ValueOutsideMessage(uint256,uint8,uint64,uint64)'],
    ['a request value past its request', encodeAttestation(withStatements((a) => a.statements.push({ ...requestStatement(), value: [[amountAt, sentText.length + 1]] }))), 'ValueOutsideMessage(uint256,uint8,uint64,uint64)'],
    ['a request value in the other request', encodeAttestation(withStatements((a) => a.statements.push({ ...requestStatement(), exchange: 1 }))), 'ValueOutsideMessage(uint256,uint8,uint64,uint64)'],
    ['value ranges out of order', encodeAttestation(withStatements((a) => a.statements[1].value.reverse())), 'ValueRangesOutOfOrder(uint256)'],
    ['overlapping value ranges', encodeAttestation(withStatements((a) => (a.statements[1].value[1][0] -= 1))), 'ValueRangesOutOfOrder(uint256)'],
    ['an empty text', patchedStatements(4 + 16, be(0, 2)), 'BadStatementLength(uint256,uint256)'],
    ['a text of 4097 bytes', patchedStatements(4 + 16, be(4097, 2)), 'BadStatementLength(uint256,uint256)'],
    ['a text past the end', patchedStatements(4 + 16, be(4096, 2)), 'Truncated()'],
    ['the second statement\'s range count', patchedStatements(1 + 51 + 2, [0]), 'BadValueRangeCount(uint256,uint256)'],
    ['the second statement\'s direction', patchedStatements(1 + 51 + 1, [2]), 'BadStatementDirection(uint256,uint8)'],
  ];
  const longest = encodeAttestation(withStatement((a) => (a.serverName = `${'a'.repeat(241)}.example:443`)));
  assert.ok(!(await call(fresh.address, headerCall(longest, sign(longest, freshKey)))).reverted, 'a 253-byte name is accepted');
  const underscore = patched(nameAt, utf8ToBytes('_'));
  const named = await call(fresh.address, headerCall(underscore, sign(underscore, freshKey)));
  assert.ok(!named.reverted, 'an underscore in the name, as some certificates have');
  assert.equal(decodeHeader(named.ret).serverName, '_ank.example');
  for (const [what, bytes, error] of cases) {
    const sig = sign(bytes, freshKey);
    await t.test(what, async () => {
      assertError(await call(fresh.address, headerCall(bytes, sig)), error);
      // disclosed() checks the whole attestation too, whichever direction it discloses
      const r = sentCommitted[0];
      assertError(await call(fresh.address, disclosedCall(bytes, sig, SENT, r.start, r.end, sentText.slice(r.start, r.end), r.opening)), error);
    });
  }
});

test('trailing bytes and 4097 ranges are refused when disclosing a sent range', async () => {
  const r = sentCommitted[0];
  const discloseSent = ({ bytes, sig }) => disclosedCall(bytes, sig, SENT, r.start, r.end, sentText.slice(r.start, r.end), r.opening);
  const trailing = signed(concatBytes(encodeAttestation(statement()), Uint8Array.of(0)));
  assertError(await call(fresh.address, discloseSent(trailing)), 'TrailingBytes(uint256)');

  const many = (count) => {
    const a = statement();
    const entry = a.received.revealed[0];
    a.received.committed = Array.from({ length: count }, () => entry);
    return signed(a);
  };
  const atLimit = await call(fresh.address, discloseSent(many(4096)));
  assert.ok(!atLimit.reverted, `4096 commitments are allowed: 0x${hex(atLimit.ret)}`);
  assertError(await call(fresh.address, discloseSent(many(4097))), 'TooManyRanges(uint8,uint256)');
  // a count with fewer bytes left than it names (the received commitments' count, before the
  // two exchanges and the statements' count)
  const short = encodeAttestation(statement());
  short.set(be(4096, 2), short.length - 1 - 1 - 2 * 32 - 2);
  assertError(await call(fresh.address, discloseSent(signed(short))), 'Truncated()');
});

test('gas', () => {
  const names = ['header', 'disclosedReceived', 'disclosedSentCommitment', 'headerWithStatements', 'statement', 'secondStatement', 'thirdStatement', 'qualifies', 'deployment'];
  for (const k of names) assert.equal(typeof gas[k]?.gas, 'bigint', `${k} measured`);
  const line = (f) =>
    `header ${f(gas.header)}, disclosed(received ${receivedRange.end - receivedRange.start} B) ${f(gas.disclosedReceived)}, ` +
    `disclosed(sent commitment) ${f(gas.disclosedSentCommitment)}, header(with statements) ${f(gas.headerWithStatements)}, ` +
    `statement(0) ${f(gas.statement)}, statement(1) ${f(gas.secondStatement)}, statement(2, about the request) ${f(gas.thirdStatement)}, ` +
    `qualifies ${f(gas.qualifies)}, deployment ${f(gas.deployment)}`;
  console.log(`gas: ${line((m) => m.gas)}`);
  console.log(`gas as Cancun transactions (+ 21000, calldata, creation): ${line((m) => m.gas + m.intrinsic)}`);
  const entry = (m) => ({ execution: Number(m.gas), transaction: Number(m.gas + m.intrinsic) });
  const report = {
    note:
      `execution: gas used by the EVM (@ethereumjs/evm, ${EVM_VERSION}), what a calling contract pays besides its CALL; ` +
      'transaction: the same sent as its own transaction (plus 21000, calldata, and for the deployment 32000 and init code words)',
    solc: solc.version(),
    optimizer: { enabled: true, runs: 200 },
    evmVersion: EVM_VERSION,
    attestationBytes: data.length,
    header: entry(gas.header),
    disclosedReceived52: entry(gas.disclosedReceived),
    disclosedSentCommitment: entry(gas.disclosedSentCommitment),
    statementAttestationBytes: statementData.length,
    headerWithStatements: entry(gas.headerWithStatements),
    statement: entry(gas.statement),
    secondStatement: entry(gas.secondStatement),
    thirdStatement: entry(gas.thirdStatement),
    balanceGateQualifies: entry(gas.qualifies),
    deployment: entry(gas.deployment),
  };
  mkdirSync(`${root}test-artifacts`, { recursive: true });
  writeFileSync(`${root}test-artifacts/evm-gas.json`, `${JSON.stringify(report, null, 2)}\n`);
});

// ---- a real session ----
// `npm test` passes the presentation its CLI round trip made from a notarization against the
// local fixture (a verifier with a secp256k1 key), and that key: the contract checks what a
// verifier signed for a real session, not only the published vector.
const session = process.env.TLSPROOF_SESSION_PRESENTATION;
test('a presentation of a real session is checked on chain', { skip: !session && 'TLSPROOF_SESSION_PRESENTATION not set (npm test sets it)' }, async () => {
  const p = JSON.parse(readFileSync(session, 'utf8'));
  const verifier = process.env.TLSPROOF_SESSION_VERIFIER_KEY.replace(/^secp256k1:0x/, '');
  const onChain = (await deploy(verifier)).address;
  const att = unhex(p.attestation.data);
  const sig = unhex(p.attestation.signature);
  const header = await call(onChain, headerCall(att, sig));
  assert.ok(!header.reverted, `header reverted: 0x${hex(header.ret)}`);
  assert.equal(decodeHeader(header.ret).serverName, 'localhost');
  for (const d of p.disclosures) {
    const direction = d.direction === 'sent' ? SENT : RECEIVED;
    const res = await call(onChain, disclosedCall(att, sig, direction, d.start, d.end, unhex(d.data), unhex(d.opening)));
    assert.ok(!res.reverted, `${d.direction} ${d.start}..${d.end} reverted: 0x${hex(res.ret)}`);
    assert.equal(hex(decodeDisclosed(res.ret).data), d.data);
  }
  // the same session under another verifier's address is refused
  const other = (await deploy(addressOf(secp256k1.utils.randomSecretKey()))).address;
  assertError(await call(other, headerCall(att, sig)), 'SignatureMismatch()');
  const shown = new TextDecoder().decode(unhex(p.disclosures[0].data));
  assert.match(shown, /"owner":"Alice Example"/);
});
