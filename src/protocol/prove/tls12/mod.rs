//! The proxy-mode proof, written once and run by both parties in lockstep (docs/protocol.md,
//! "What is proven"). The prover's only private input is the master secret. The suite sets
//! the PRF's hash (SHA-256, or SHA-384 for the AES-256-GCM suites), the key block's split and
//! the record cipher (AES-128-GCM, AES-256-GCM or ChaCha20-Poly1305).
//!
//! Batches:
//! 1. commit MS; its HMAC pad states; the inner state is **opened** (see [`PublicInner`]).
//! 2. (through 4, deferred: checked together with 5) the PRF with public inner hashes, one outer
//!    compression per HMAC: A(i) of "key expansion", "client finished" and "server finished"
//!    opened; key block = P_hash(MS, "key expansion" ‖ sr ‖ cr) private; client verify_data
//!    **opened** (both sides need it for H_s).
//! 5. server verify_data (private); both Finished records must decrypt in ZK to
//!    `14 00 00 0c ‖ verify_data` (this binds MS to the real server's session); then per
//!    direction either the fast path (write key + IV opened) or what lets the verifier check
//!    every tag: for AES-GCM H = AES_K(0) and every record's E_K(J0), for ChaCha20-Poly1305
//!    every record's Poly1305 one-time key (the first half of its ChaCha20 block 0).
//! 6. (ZK path of the request) its hidden bytes' plaintext, each asserted to be neither CR nor
//!    LF, so that no hidden header value can hold another header or request
//!    (`protocol::exchange`); deferred into the next check.
//! 7. (ZK path only) keystream blocks that touch revealed bytes, in batches of bounded size,
//!    opened only at the revealed positions, and the 2 keystream bytes of every encrypted
//!    alert ([`opened_blocks`]), so the verifier knows how each direction ended.

pub mod check;

use crate::channel::Channel;
use crate::circuits::aes::{key_schedule, RoundKeys};
use crate::circuits::constant_bytes;
use crate::circuits::hmac_prf::{hmac_pad_states, hmac_public_inner_with, PublicInner, Sha2};
use crate::circuits::keystream::{ghash_key, j0_block, keystream_blocks};
use crate::circuits::sha256::sha256;
pub(crate) use crate::protocol::disclose::output::Commitment;
use crate::protocol::disclose::reveal::{complement, covers_all};
use crate::protocol::observe::tls12::EncryptedRecord;
use crate::protocol::prove::statements::{self, StatementInputs};
use crate::tls::keys::{key_block_len, HandshakeHash};
use crate::tls::{Aead12, CipherSuite, PrfHash};
use crate::zk::bytes::assert_decrypts_to;
use crate::zk::bytes::{assert_no_line_breaks, commit_bytes, open_bytes, open_selected_bytes};
use crate::zk::{Backend, Party, ProofError};
use std::ops::Range;

use crate::cost::KeystreamCipher;
#[cfg(test)]
pub(crate) use crate::cost::PARTLY_REVEALED_PREPROCESS;
pub(crate) use crate::cost::{
    derivation_cots, keystream_cots_of, line_break_cots_of, BLOCKS_PER_BATCH, CHECK_EVERY, KEYSTREAM_PREPROCESS,
};
pub use crate::cost::{
    keystream_cots, line_break_cots, most_keystream_cots, most_line_break_cots, preprocess_cots, MOST_DERIVATION_COTS,
    PREPROCESS_COTS,
};

/// The shape of a keystream batch ([`Party::expect_shape`]): its circuit depends only on how
/// many blocks it proves and how many of their bytes it opens, so batches alike in both skip
/// the counting pass after the first.
fn keystream_shape(chunk: &[(usize, u32, Vec<usize>)]) -> u64 {
    let opened: usize = chunk.iter().map(|(_, _, positions)| positions.len()).sum();
    ((chunk.len() as u64) << 32) | opened as u64
}

/// Where keystream batches that take `needs[k]` COTs each top up the pool, in order: (k, n)
/// when batch k finds too few left and makes n ready, its own and the following batches' up to
/// `cap` in all (a batch over `cap` alone).
fn cot_groups(needs: &[usize], cap: usize) -> Vec<(usize, usize)> {
    let mut groups = Vec::new();
    let mut ready = 0usize;
    for (k, &need) in needs.iter().enumerate() {
        if ready < need {
            ready = 0;
            for &n in &needs[k..] {
                if ready > 0 && ready + n > cap {
                    break;
                }
                ready += n;
            }
            groups.push((k, ready));
        }
        ready -= need;
    }
    groups
}

/// The Finished message header: type 20, length 12.
const FINISHED_HEADER: [u8; 4] = [0x14, 0, 0, 0x0c];

/// What both parties know before the proof.
pub struct PublicInputs<'a> {
    /// The negotiated suite: the PRF's hash, the key block's split, the record cipher.
    pub suite: CipherSuite,
    pub client_random: [u8; 32],
    pub server_random: [u8; 32],
    /// Hash of the handshake messages up to ClientKeyExchange (the suite's PRF hash).
    pub client_finished_hash: HandshakeHash,
    /// Encrypted records per direction, Finished first.
    pub sent: &'a [EncryptedRecord],
    pub received: &'a [EncryptedRecord],
    /// Canonical reveal ranges per direction, in application-data plaintext positions.
    pub reveal_sent: &'a [Range<u64>],
    pub reveal_received: &'a [Range<u64>],
    /// Ranges to hash-commit to, per direction (canonical).
    pub commit_sent: &'a [Range<u64>],
    pub commit_received: &'a [Range<u64>],
    /// Statements about hidden values of both directions.
    pub statements: StatementInputs<'a>,
}

impl<'a> PublicInputs<'a> {
    /// What both sides know of a session: its transcript and the prover's reveal plan.
    pub fn new(
        t: &'a crate::protocol::observe::tls12::SessionTranscript,
        plan: &'a crate::protocol::disclose::reveal::RevealPlan,
    ) -> Self {
        use crate::tls::Direction;
        PublicInputs {
            suite: t.cipher_suite(),
            client_random: *t.client_random(),
            server_random: *t.server_random(),
            client_finished_hash: t.client_finished_hash(),
            sent: t.encrypted_records(Direction::Sent),
            received: t.encrypted_records(Direction::Received),
            reveal_sent: &plan.sent,
            reveal_received: &plan.received,
            commit_sent: &plan.commit_sent,
            commit_received: &plan.commit_received,
            statements: StatementInputs::of(plan),
        }
    }
}

/// What the proof opened for one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenedDirection {
    /// Fast path: the write key and IV (the AES-GCM salt or ChaCha20-Poly1305's 12 bytes).
    Key { key: Vec<u8>, iv: Vec<u8> },
    /// ZK path of AES-GCM: the GHASH key, E_K(J0) per record, and the keystream bytes at the
    /// revealed positions (in increasing position order).
    Keystream { h: [u8; 16], j0: Vec<[u8; 16]>, revealed_keystream: Vec<u8> },
    /// ZK path of ChaCha20-Poly1305: every record's Poly1305 one-time key, and the keystream
    /// bytes at the revealed positions (in increasing position order).
    ChaChaKeystream { poly_keys: Vec<[u8; 32]>, revealed_keystream: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    pub client_verify_data: [u8; 12],
    pub sent: OpenedDirection,
    pub received: OpenedDirection,
    pub commitments: Vec<Commitment>,
}

/// Which keystream blocks of `size` bytes (per record) and which byte positions in them a
/// reveal touches.
/// `records` are the direction's encrypted records (Finished first); only application-data
/// records (type 23) form the plaintext stream.
pub(crate) fn touched_blocks_of(
    size: u64,
    records: &[EncryptedRecord],
    reveal: &[Range<u64>],
) -> Vec<(usize, u32, Vec<usize>)> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    let mut r = 0;
    for (i, rec) in records.iter().enumerate().skip(1) {
        if rec.content_type != 23 {
            continue;
        }
        let len = rec.ciphertext.len() as u64;
        let (start, end) = (offset, offset + len);
        while r < reveal.len() && reveal[r].end <= start {
            r += 1;
        }
        let mut k = r;
        let mut blocks: Vec<(u32, Vec<usize>)> = Vec::new();
        while k < reveal.len() && reveal[k].start < end {
            let lo = reveal[k].start.max(start) - start;
            let hi = reveal[k].end.min(end) - start;
            for p in lo..hi {
                let (blk, pos) = ((p / size) as u32, (p % size) as usize);
                match blocks.last_mut() {
                    Some((b, ps)) if *b == blk => ps.push(pos),
                    _ => blocks.push((blk, vec![pos])),
                }
            }
            k += 1;
        }
        out.extend(blocks.into_iter().map(|(b, ps)| (i, b, ps)));
        offset = end;
    }
    out
}

/// The keystream a ZK-path direction opens: the blocks the reveal touches, then the first two
/// bytes of every encrypted alert (after the Finished), whose plaintext the verifier always
/// learns. Both sides take the keystream in this order.
#[cfg(test)]
pub(crate) fn opened_blocks(records: &[EncryptedRecord], reveal: &[Range<u64>]) -> Vec<(usize, u32, Vec<usize>)> {
    opened_blocks_of(16, records, reveal)
}

/// [`opened_blocks`] for keystream blocks of `size` bytes.
pub(crate) fn opened_blocks_of(
    size: u64,
    records: &[EncryptedRecord],
    reveal: &[Range<u64>],
) -> Vec<(usize, u32, Vec<usize>)> {
    let mut out = touched_blocks_of(size, records, reveal);
    out.extend(
        records.iter().enumerate().skip(1).filter(|(_, r)| r.content_type == 21).map(|(i, _)| (i, 0, vec![0, 1])),
    );
    out
}

/// Test-only: how the prover's side of [`run`] cheats, set per thread by the cheating-prover
/// tests (`protocol::cheating_prover`); never compiled outside tests.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProofCheat {
    /// On this direction's fast path, open a write key other than the derived one.
    pub fast_key: Option<usize>,
    /// In the commitment batches, a plaintext other than ciphertext ⊕ keystream (a false
    /// witness in the keystream's AES).
    pub commit_plaintext: bool,
    /// In the commitment batches, a digest other than the computed SHA-256.
    pub commit_digest: bool,
    /// TLS 1.3: commit the pad states of an MS other than the session's.
    pub other_ms: bool,
}

#[cfg(test)]
thread_local! {
    pub(crate) static PROOF_CHEAT: std::cell::Cell<ProofCheat> = std::cell::Cell::new(ProofCheat::default());
}

/// Test-only: runs `f` with `cheat` in force for the prover on this thread, then none.
#[cfg(test)]
pub(crate) fn with_cheat<T>(cheat: ProofCheat, f: impl FnOnce() -> T) -> T {
    PROOF_CHEAT.with(|c| c.set(cheat));
    let out = f();
    PROOF_CHEAT.with(|c| c.set(ProofCheat::default()));
    out
}

/// The cheat in force for this side (none on the verifier's).
#[cfg(test)]
pub(in crate::protocol) fn cheat(is_prover: bool) -> ProofCheat {
    if is_prover {
        PROOF_CHEAT.with(|c| c.get())
    } else {
        ProofCheat::default()
    }
}

/// Test-only: makes the prover claim `bits` with their first bit flipped when it opens them.
#[cfg(test)]
pub(in crate::protocol) fn claim_flipped<B: Backend>(b: &mut B, bits: &[B::Bit]) {
    let mut claim: Vec<bool> = bits.iter().map(|w| b.value(*w).unwrap_or(false)).collect();
    claim[0] ^= true;
    b.cheat_claim_opens(&claim);
}

/// Total application-data plaintext length of a direction.
pub(crate) fn app_len(records: &[EncryptedRecord]) -> u64 {
    records.iter().skip(1).filter(|r| r.content_type == 23).map(|r| r.ciphertext.len() as u64).sum()
}

/// A direction's write key in ZK, as its record cipher uses it.
enum WriteKey<B: Backend> {
    /// AES-GCM: the expanded key and the 4-byte salt.
    Aes { rk: RoundKeys<B>, salt: Vec<B::Bit> },
    /// ChaCha20-Poly1305: the key and the 12-byte IV.
    ChaCha { key: Vec<B::Bit>, iv: Vec<B::Bit> },
}

impl<B: Backend> WriteKey<B> {
    fn new(b: &mut B, aead: Aead12, key: &[B::Bit], iv: &[B::Bit]) -> Self {
        match aead {
            Aead12::Aes128Gcm | Aead12::Aes256Gcm => WriteKey::Aes { rk: key_schedule(b, key), salt: iv.to_vec() },
            Aead12::ChaCha20Poly1305 => WriteKey::ChaCha { key: key.to_vec(), iv: iv.to_vec() },
        }
    }

    /// The record's 96-bit nonce: salt ‖ explicit nonce (RFC 5288), or IV ⊕ the padded
    /// sequence number (RFC 7905), which [`EncryptedRecord::explicit_nonce`] holds there.
    fn nonce(&self, b: &B, rec: &EncryptedRecord) -> Vec<B::Bit> {
        match self {
            WriteKey::Aes { salt, .. } => {
                let mut iv = salt.clone();
                iv.extend(constant_bytes(b, &rec.explicit_nonce));
                iv
            }
            WriteKey::ChaCha { iv, .. } => {
                let mut mask = [0u8; 12];
                mask[4..].copy_from_slice(&rec.explicit_nonce);
                crate::circuits::xor_bits(b, iv, &constant_bytes(b, &mask))
            }
        }
    }

    /// Keystream block `j` of a record's payload on `nonce`: AES-GCM's counter j + 2 (16
    /// bytes), ChaCha20's counter j + 1 (64 bytes).
    fn block(&self, b: &mut B, nonce: &[B::Bit], j: u32) -> Vec<B::Bit> {
        match self {
            WriteKey::Aes { rk, .. } => keystream_blocks(b, rk, nonce, &[j]).into_iter().flatten().collect(),
            WriteKey::ChaCha { key, .. } => crate::circuits::chacha20::block(b, key, nonce, j + 1),
        }
    }
}

/// Bytes of a keystream block of `aead`.
pub(crate) fn block_len(aead: Aead12) -> usize {
    match aead {
        Aead12::ChaCha20Poly1305 => 64,
        Aead12::Aes128Gcm | Aead12::Aes256Gcm => 16,
    }
}

/// The keystream cipher of `aead`, and its blocks per batch.
pub(crate) fn keystream_cipher(aead: Aead12) -> (KeystreamCipher, usize) {
    match aead {
        Aead12::Aes128Gcm => (KeystreamCipher::Aes128, BLOCKS_PER_BATCH),
        Aead12::Aes256Gcm => (KeystreamCipher::Aes256, BLOCKS_PER_BATCH),
        Aead12::ChaCha20Poly1305 => (KeystreamCipher::ChaCha20, crate::cost::CHACHA20_BLOCKS_PER_BATCH),
    }
}

/// A keystream batch's work: a direction (0 sent, 1 received) and its blocks, each (record,
/// block, byte positions opened in it).
pub(in crate::protocol) type KeystreamJob = (usize, Vec<(usize, u32, Vec<usize>)>);

impl KeystreamCipher {
    /// A batch's shape. A ChaCha20 block's circuit depends on its public counter too (the
    /// final addition of the counter word folds its carries up to its lowest 1 bit), so its
    /// key also counts those folds; bits 63 and 62 keep the ciphers' keys apart.
    fn shape(self, chunk: &[(usize, u32, Vec<usize>)]) -> u64 {
        match self {
            KeystreamCipher::Aes128 => keystream_shape(chunk),
            KeystreamCipher::Aes256 => 1 << 62 | keystream_shape(chunk),
            KeystreamCipher::ChaCha20 => {
                let opened: u64 = chunk.iter().map(|(_, _, positions)| positions.len() as u64).sum();
                let folds: u64 =
                    chunk.iter().map(|(_, blk, _)| (blk.wrapping_add(1).trailing_zeros() as u64 + 1).min(31)).sum();
                1 << 63 | (chunk.len() as u64) << 40 | folds << 20 | opened
            }
        }
    }
}

/// Runs the keystream batches `jobs` in order (`batch` builds one and returns the bytes it
/// opens), for both TLS versions alike: COTs made ahead in groups of at most
/// [`KEYSTREAM_PREPROCESS`], shapes reused, a multiplication check every [`CHECK_EVERY`].
pub(in crate::protocol) async fn keystream_batches<P: Party<C>, C: Channel>(
    party: &mut P,
    ch: &mut C,
    cipher: KeystreamCipher,
    jobs: &[KeystreamJob],
    mut batch: impl FnMut(&mut P::Backend, usize, &[(usize, u32, Vec<usize>)]) -> Vec<u8>,
) -> Result<Vec<Vec<u8>>, ProofError> {
    let needs: Vec<usize> = jobs.iter().map(|(_, chunk)| cipher.batch_cots(chunk.len())).collect();
    let mut groups = cot_groups(&needs, KEYSTREAM_PREPROCESS).into_iter().peekable();
    let mut out = Vec::with_capacity(jobs.len());
    for (k, (side, chunk)) in jobs.iter().enumerate() {
        if let Some((_, n)) = groups.next_if(|&(at, _)| at == k) {
            party.preprocess(ch, n).await?;
        }
        party.expect_shape(cipher.shape(chunk));
        out.push(
            party
                .run_batch_every(ch, k, jobs.len(), CHECK_EVERY, &mut |b: &mut P::Backend| batch(b, *side, chunk))
                .await?,
        );
    }
    Ok(out)
}

/// The plaintext bits at byte `positions` (increasing) of a record: the keystream proven on
/// `nonce` from the round keys, XOR the public ciphertext. Each block touched is computed once.
pub(in crate::protocol) fn decrypted_bytes<B: Backend>(
    b: &mut B,
    rk: &RoundKeys<B>,
    nonce: &[B::Bit],
    ciphertext: &[u8],
    positions: &[usize],
) -> Vec<B::Bit> {
    decrypted_with(b, 16, ciphertext, positions, |b, j| {
        keystream_blocks(b, rk, nonce, &[j]).into_iter().flatten().collect()
    })
}

/// The plaintext bits at byte `positions` (increasing) of a record whose keystream comes in
/// blocks of `size` bytes, block j from `block(b, j)`, XOR the public ciphertext. Each block
/// touched is computed once.
pub(in crate::protocol) fn decrypted_with<B: Backend>(
    b: &mut B,
    size: usize,
    ciphertext: &[u8],
    positions: &[usize],
    mut block: impl FnMut(&mut B, u32) -> Vec<B::Bit>,
) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(positions.len() * 8);
    let mut current: (Option<usize>, Vec<B::Bit>) = (None, Vec::new());
    for &p in positions {
        if current.0 != Some(p / size) {
            current = (Some(p / size), block(b, (p / size) as u32));
        }
        let c = ciphertext.get(p).copied().unwrap_or(0);
        for i in 0..8 {
            out.push(b.xor(current.1[(p % size) * 8 + i], b.constant((c >> i) & 1 == 1)));
        }
    }
    out
}

/// SHA-256(plaintext ‖ blinder) in ZK, the blinder committed by the prover (`None` on the
/// verifier): a hash commitment to hidden plaintext.
fn commitment_digest_bits<B: Backend>(
    b: &mut B,
    mut plaintext: Vec<B::Bit>,
    blinder: Option<&[u8; 16]>,
) -> Vec<B::Bit> {
    plaintext.extend(commit_bytes(b, blinder.map(|x| &x[..]), 16));
    sha256(b, &plaintext)
}

/// [`commitment_digest_bits`], opened.
pub(in crate::protocol) fn commitment_digest<B: Backend>(
    b: &mut B,
    plaintext: Vec<B::Bit>,
    blinder: Option<&[u8; 16]>,
) -> Vec<u8> {
    let digest = commitment_digest_bits(b, plaintext, blinder);
    open_bytes(b, &digest)
}

/// The plaintext bits at the `touched` positions ([`touched_blocks_of`] at the cipher's block
/// size) of `recs`: keystream proven under `key`, XOR the ciphertext.
fn plaintext_bits<B: Backend>(
    b: &mut B,
    key: &WriteKey<B>,
    recs: &[EncryptedRecord],
    touched: &[(usize, u32, Vec<usize>)],
) -> Vec<B::Bit> {
    let size = match key {
        WriteKey::Aes { .. } => 16,
        WriteKey::ChaCha { .. } => 64,
    };
    let mut bits = Vec::new();
    for (rec, blk, positions) in touched {
        let nonce = key.nonce(b, &recs[*rec]);
        let in_block: Vec<usize> = positions.iter().map(|p| *blk as usize * size + p).collect();
        bits.extend(decrypted_with(b, size, &recs[*rec].ciphertext, &in_block, |b, j| key.block(b, &nonce, j)));
    }
    bits
}

/// The hidden parts of a request of `len` bytes revealed as `reveal` says, in
/// [`statements::batch_pieces`]: one batch of the line-break proof each.
pub(in crate::protocol) fn line_break_pieces(reveal: &[Range<u64>], len: u64) -> Vec<Vec<Range<u64>>> {
    statements::batch_pieces(complement(reveal, len).into_iter())
}

/// A failed line-break batch is a hidden line break (on the verifier's side, the assertion's
/// mismatch); other errors stay as they are.
pub(in crate::protocol) fn line_break_error(e: ProofError) -> ProofError {
    match e {
        ProofError::ConstantMismatch => ProofError::HiddenLineBreak,
        e => e,
    }
}

/// Runs the proof. `ms` is the master secret on the prover and `None` on the verifier;
/// `server_finished_hash` computes H_s from the opened client verify_data.
pub async fn run<P: Party<C>, C: Channel, H: AsRef<[u8]>>(
    party: &mut P,
    ch: &mut C,
    ms: Option<&[u8; 48]>,
    blinders: Option<&[[u8; 16]]>,
    inputs: &PublicInputs<'_>,
    server_finished_hash: impl FnOnce(&[u8; 12]) -> H,
) -> Result<Opened, ProofError> {
    let (sr, cr, hc) = (&inputs.server_random, &inputs.client_random, inputs.client_finished_hash.as_bytes());
    let suite = inputs.suite;
    let aead = suite.aead();
    let hash = match suite.prf_hash() {
        PrfHash::Sha256 => Sha2::Sha256,
        PrfHash::Sha384 => Sha2::Sha384,
    };
    if hc.len() != hash.output_len() {
        return Err(ProofError::Malformed("the client Finished hash is not the suite's hash"));
    }
    #[cfg(test)]
    let is_prover = ms.is_some();
    let (fin_c, fin_s) = match (inputs.sent.first(), inputs.received.first()) {
        (Some(c), Some(s)) => (c, s),
        _ => return Err(ProofError::Malformed("a direction has no Finished record")),
    };

    // The TLS 1.2 PRF, P_hash keyed by MS, with MS's HMAC inner state opened (see
    // `PublicInner`): every inner hash is public, so each HMAC is one outer compression in ZK.
    // The A(i) chain is opened (it is never key material); the key block and server
    // verify_data stay private. The batches feed each other opened values, so all but the
    // last are deferred: one round trip.
    let (ms_outer, inner) = party
        .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
            let m = commit_bytes(b, ms.map(|x| &x[..]), 48);
            let (inner, outer) = hmac_pad_states(b, hash, &m);
            (outer, open_bytes(b, &inner))
        })
        .await?;
    let inner = PublicInner::from_state(hash, &inner).ok_or(ProofError::Malformed("inner state length"))?;
    let seed_ke = [&b"key expansion"[..], sr, cr].concat();
    let seed_cf = [&b"client finished"[..], hc].concat();
    let prf = |b: &mut P::Backend, msg: &[u8]| hmac_public_inner_with(b, &ms_outer, &inner, msg);
    // P_hash outputs this many HMAC blocks for the key block
    let kb_len = key_block_len(suite);
    let blocks = kb_len.div_ceil(hash.output_len());

    let (a1_ke, a1_cf) = party
        .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
            let a1_ke = prf(b, &seed_ke);
            let a1_cf = prf(b, &seed_cf);
            (open_bytes(b, &a1_ke), open_bytes(b, &a1_cf))
        })
        .await?;
    let (cvd_bits, (a2_ke, cvd)) = party
        .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
            let a2 = prf(b, &a1_ke);
            let cvd = prf(b, &[&a1_cf[..], &seed_cf].concat())[..96].to_vec();
            let opened = (open_bytes(b, &a2), open_bytes(b, &cvd));
            (cvd, opened)
        })
        .await?;
    // A(3), … where the key block needs more than two HMAC blocks (ChaCha20's 88 bytes)
    let mut a_chain = vec![a1_ke, a2_ke];
    while a_chain.len() < blocks {
        let last = a_chain.last().cloned().unwrap_or_default();
        let next = party
            .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
                let a = prf(b, &last);
                open_bytes(b, &a)
            })
            .await?;
        a_chain.push(next);
    }
    let client_verify_data: [u8; 12] = cvd.try_into().map_err(|_| ProofError::Malformed("verify_data length"))?;
    let h_s = server_finished_hash(&client_verify_data);
    if h_s.as_ref().len() != hash.output_len() {
        return Err(ProofError::Malformed("the server Finished hash is not the suite's hash"));
    }
    let seed_sf = [&b"server finished"[..], h_s.as_ref()].concat();
    let (key_block, a1_sf) = party
        .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
            let mut kb = Vec::with_capacity(blocks * hash.output_len() * 8);
            for a in &a_chain[..blocks] {
                kb.extend(prf(b, &[&a[..], &seed_ke].concat()));
            }
            kb.truncate(kb_len * 8);
            let a1_sf = prf(b, &seed_sf);
            (kb, open_bytes(b, &a1_sf))
        })
        .await?;

    let fast = [
        covers_all(inputs.reveal_sent, app_len(inputs.sent)),
        covers_all(inputs.reveal_received, app_len(inputs.received)),
    ];
    let records = [inputs.sent, inputs.received];
    let size = block_len(aead);
    let (cipher, per_batch) = keystream_cipher(aead);
    // The keystream batches of the ZK-path directions (below), from public inputs alone.
    let reveals = [inputs.reveal_sent, inputs.reveal_received];
    let jobs: Vec<KeystreamJob> = (0..2)
        .filter(|side| !fast[*side])
        .flat_map(|side| {
            let touched = opened_blocks_of(size as u64, records[side], reveals[side]);
            touched.chunks(per_batch).map(|c| (side, c.to_vec())).collect::<Vec<_>>()
        })
        .collect();

    // The request's hidden bytes, proven free of line breaks right after batch 2.
    let pieces = if fast[0] { Vec::new() } else { line_break_pieces(inputs.reveal_sent, app_len(inputs.sent)) };

    // Finished records bound to the session; keys or tag material opened. Checked, with every
    // deferred PRF batch, unless more batches follow: then the last of them checks it too, and
    // the prover goes on to them without waiting for a challenge.
    let (k, v) = (aead.key_len() * 8, aead.iv_len() * 8);
    type Batch2<B> = ([WriteKey<B>; 2], [Option<(Vec<u8>, Vec<u8>)>; 2], [Option<TagOpenings>; 2]);
    let (write_keys, keys, tags): Batch2<P::Backend> = party
        .run_batch_unless_more(ch, !jobs.is_empty() || !pieces.is_empty(), &mut |b: &mut P::Backend| {
            let svd = prf(b, &[&a1_sf[..], &seed_sf].concat())[..96].to_vec();
            let mut keys = [None, None];
            let mut tags = [None, None];
            let write_keys = [0usize, 1].map(|side| {
                let key = &key_block[side * k..side * k + k];
                let iv = &key_block[2 * k + side * v..2 * k + side * v + v];
                let wk = WriteKey::new(b, aead, key, iv);
                let fin = if side == 0 { fin_c } else { fin_s };
                let nonce = wk.nonce(b, fin);
                let ks = wk.block(b, &nonce, 0);
                let mut pt = constant_bytes(b, &FINISHED_HEADER);
                pt.extend_from_slice(if side == 0 { &cvd_bits } else { &svd });
                assert_decrypts_to(b, &ks[..128], &fin.ciphertext, &pt);
                if fast[side] {
                    #[cfg(test)]
                    if cheat(is_prover).fast_key == Some(side) {
                        claim_flipped(b, key);
                    }
                    keys[side] = Some((open_bytes(b, key), open_bytes(b, iv)));
                } else {
                    tags[side] = Some(match &wk {
                        WriteKey::Aes { rk, .. } => {
                            let h = ghash_key(b, rk);
                            let h = open_bytes(b, &h);
                            let j0: Vec<Vec<u8>> = records[side]
                                .iter()
                                .map(|r| {
                                    let nonce = wk.nonce(b, r);
                                    let j = j0_block(b, rk, &nonce);
                                    open_bytes(b, &j)
                                })
                                .collect();
                            TagOpenings::Gcm(h, j0)
                        }
                        WriteKey::ChaCha { key, .. } => TagOpenings::Poly1305(
                            records[side]
                                .iter()
                                .map(|r| {
                                    let nonce = wk.nonce(b, r);
                                    let block = crate::circuits::chacha20::block(b, key, &nonce, 0);
                                    open_bytes(b, &block[..256])
                                })
                                .collect(),
                        ),
                    });
                }
                wk
            });
            (write_keys, keys, tags)
        })
        .await?;

    // The line-break proof: the hidden bytes' plaintext in ZK, asserted free of CR and LF; the
    // assertion is checked on arrival, its AND gates with the batches after.
    for (n, piece) in pieces.iter().enumerate() {
        let (wk, recs) = (&write_keys[0], records[0]);
        let touched = touched_blocks_of(size as u64, recs, piece);
        party
            .run_batch_unless_more(ch, n + 1 < pieces.len() || !jobs.is_empty(), &mut |b: &mut P::Backend| {
                let bits = plaintext_bits(b, wk, recs, &touched);
                assert_no_line_breaks(b, &bits)
            })
            .await
            .map_err(line_break_error)?;
    }

    // Batches 3…: keystream at the revealed positions of ZK-path directions. COTs are made
    // ahead for several batches at a time, and only every CHECK_EVERY-th batch waits for a
    // multiplication check, so the prover computes the next batch while the verifier checks
    // the last one.
    let mut revealed = [Vec::new(), Vec::new()];
    let opened = keystream_batches(party, ch, cipher, &jobs, |b, side, chunk| {
        let (wk, recs) = (&write_keys[side], records[side]);
        let mut out = Vec::new();
        for (rec, blk, positions) in chunk {
            let nonce = wk.nonce(b, &recs[*rec]);
            let ks = wk.block(b, &nonce, *blk);
            out.extend(open_selected_bytes(b, &ks, positions));
        }
        out
    })
    .await?;
    for ((side, _), bytes) in jobs.iter().zip(opened) {
        revealed[*side].extend(bytes);
    }

    // Statements about hidden values of the request and the response, over their plaintext
    // in ZK.
    let commits = [inputs.commit_sent, inputs.commit_received];
    for side in 0..2 {
        if inputs.statements.is_empty(side) {
            continue;
        }
        let (wk, recs) = (&write_keys[side], records[side]);
        let more = !inputs.statements.is_empty(1) && side == 0 || commits.iter().any(|c| !c.is_empty());
        statements::prove(party, ch, inputs.statements, side, more, &|b, ranges| {
            plaintext_bits(b, wk, recs, &touched_blocks_of(size as u64, recs, ranges))
        })
        .await?;
    }

    // Hash commitments: plaintext = ciphertext ⊕ keystream in ZK, then SHA-256 with a private
    // 16-byte blinder; only the digest is opened.
    let mut commitments = Vec::new();
    let mut n = 0;
    for side in 0..2 {
        for range in commits[side] {
            let blinder = match blinders {
                Some(b) => Some(*b.get(n).ok_or(ProofError::MissingWitness)?),
                None => None,
            };
            n += 1;
            let (wk, recs) = (&write_keys[side], records[side]);
            let touched = touched_blocks_of(size as u64, recs, std::slice::from_ref(range));
            let digest = party
                .run_batch(ch, &mut |b: &mut P::Backend| {
                    #[cfg(test)]
                    if cheat(is_prover).commit_plaintext {
                        b.cheat_flip_next_commit();
                    }
                    let msg = plaintext_bits(b, wk, recs, &touched);
                    let digest = commitment_digest_bits(b, msg, blinder.as_ref());
                    #[cfg(test)]
                    if cheat(is_prover).commit_digest {
                        claim_flipped(b, &digest);
                    }
                    open_bytes(b, &digest)
                })
                .await?;
            let digest: [u8; 32] = digest.try_into().map_err(|_| ProofError::Malformed("digest length"))?;
            commitments.push(Commitment { direction: ["sent", "received"][side].into(), range: range.clone(), digest });
        }
    }

    let opened_direction = |side: usize, revealed: Vec<u8>| -> Result<OpenedDirection, ProofError> {
        let arr16 = |v: &[u8]| -> Result<[u8; 16], ProofError> {
            v.try_into().map_err(|_| ProofError::Malformed("block length"))
        };
        match (&keys[side], &tags[side]) {
            (Some((key, iv)), _) => Ok(OpenedDirection::Key { key: key.clone(), iv: iv.clone() }),
            (None, Some(TagOpenings::Gcm(h, j0))) => Ok(OpenedDirection::Keystream {
                h: arr16(h)?,
                j0: j0.iter().map(|j| arr16(j)).collect::<Result<_, _>>()?,
                revealed_keystream: revealed,
            }),
            (None, Some(TagOpenings::Poly1305(poly_keys))) => Ok(OpenedDirection::ChaChaKeystream {
                poly_keys: poly_keys
                    .iter()
                    .map(|k| k.as_slice().try_into().map_err(|_| ProofError::Malformed("one-time key length")))
                    .collect::<Result<_, _>>()?,
                revealed_keystream: revealed,
            }),
            (None, None) => Err(ProofError::Malformed("direction has neither key nor tag openings")),
        }
    };
    if party.check_pending() {
        return Err(ProofError::Malformed("a deferred batch was never checked"));
    }
    let [rs, rr] = revealed;
    Ok(Opened { client_verify_data, sent: opened_direction(0, rs)?, received: opened_direction(1, rr)?, commitments })
}

/// What a ZK-path direction opens for the verifier to check its tags.
enum TagOpenings {
    /// AES-GCM: H and every record's E_K(J0).
    Gcm(Vec<u8>, Vec<Vec<u8>>),
    /// ChaCha20-Poly1305: every record's Poly1305 one-time key.
    Poly1305(Vec<Vec<u8>>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::{batch_cots, COTS_PER_CHACHA20_BLOCK, COTS_PER_KEYSTREAM_BLOCK};

    /// A direction: the Finished, then records of these content types and lengths.
    fn records_of(records: &[(u8, usize)]) -> Vec<EncryptedRecord> {
        let record = |seq, content_type, n| EncryptedRecord {
            seq,
            content_type,
            version: 0x0303,
            explicit_nonce: [0; 8],
            ciphertext: vec![0; n],
            tag: [0; 16],
        };
        let mut out = vec![record(0, 22, 16)];
        for &(content_type, n) in records {
            out.push(record(out.len() as u64, content_type, n));
        }
        out
    }

    /// A direction as our client writes it: `len` bytes of application data in records of at
    /// most 2^14 bytes.
    fn records(len: usize) -> Vec<EncryptedRecord> {
        let sizes: Vec<(u8, usize)> = (0..len).step_by(1 << 14).map(|at| (23, (len - at).min(1 << 14))).collect();
        records_of(&sizes)
    }

    /// The keystream a reveal opens: per record (the Finished and alerts are no application
    /// data), the blocks its ranges touch and the positions in each, then every alert's two
    /// bytes.
    /// The line-break proof's batches: a long hidden run split into ranges of 4,064 bytes (254
    /// blocks, with the 2 its ends may touch: 256, a batch), ranges that fill a batch exactly
    /// in one, and short hidden ranges packed greedily, 3 blocks each, 85 to a batch.
    #[test]
    fn line_break_pieces_fill_each_batch_and_no_more() {
        let blocks =
            |piece: &[Range<u64>]| piece.iter().map(|r| (r.end - r.start).div_ceil(16) as usize + 2).sum::<usize>();
        let pieces = line_break_pieces(&[], 10_000);
        assert_eq!(pieces, vec![vec![0..4064], vec![4064..8128], vec![8128..10_000]]);
        assert_eq!(blocks(&pieces[0]), BLOCKS_PER_BATCH);
        // two ranges that fill a batch exactly (100 and 156 blocks) share it
        assert_eq!(line_break_pieces(&[1568..1600], 4064), vec![vec![0..1568, 1600..4064]]);
        // 200 hidden ranges of 5 bytes, at 2..7, 12..17, …
        let reveal: Vec<Range<u64>> =
            (0..=200).map(|i| (10 * i as u64).saturating_sub(3)..(10 * i as u64 + 2).min(2000)).collect();
        let pieces = line_break_pieces(&reveal, 2000);
        assert_eq!(pieces.iter().map(Vec::len).collect::<Vec<_>>(), [85, 85, 30]);
        assert_eq!(pieces[0][..2], [2..7, 12..17]);
        assert!(pieces.iter().all(|p| blocks(p) <= BLOCKS_PER_BATCH));
        assert_eq!(pieces.concat(), complement(&reveal, 2000));
    }

    #[test]
    fn a_reveal_opens_the_blocks_it_touches_record_by_record() {
        let recs = records_of(&[(23, 40), (21, 2), (23, 40), (23, 40), (23, 16)]);
        let reveal = [2..5, 45..50, 78..82, 100..120];
        let expected: Vec<(usize, u32, Vec<usize>)> = vec![
            (1, 0, vec![2, 3, 4]),
            (3, 0, vec![5, 6, 7, 8, 9]),
            (3, 2, vec![6, 7]),
            (4, 0, vec![0, 1]),
            (4, 1, (4..16).collect()),
            (4, 2, (0..8).collect()),
            (2, 0, vec![0, 1]),
        ];
        assert_eq!(opened_blocks(&recs, &reveal), expected);
        assert_eq!(app_len(&recs), 136);
    }

    /// The request's keystream COTs, asked for ahead of the proof, cover what the proof of a
    /// request revealed but for a token takes, with at most one block per record to spare.
    #[test]
    fn keystream_cots_cover_the_keystream_proof_with_one_block_per_record_to_spare() {
        for len in [1, 15, 16, 17, 1000, 1 << 14, (1 << 14) + 1, 40_000, 100_000] {
            let recs = records(len);
            let touched = opened_blocks(&recs, &[0..len as u64]);
            let used: usize = touched.chunks(BLOCKS_PER_BATCH).map(|c| batch_cots(c.len())).sum();
            let bound = keystream_cots(len);
            let spare = (recs.len() - 1) * (COTS_PER_KEYSTREAM_BLOCK + 128);
            assert!(used <= bound && bound <= used + spare, "{len} bytes: {used} COTs used, {bound} asked for");
        }
    }

    /// A session preprocesses its derivation and its request's keystream proof, and, when its
    /// response is partly revealed, at least what one setup iteration makes.
    #[test]
    fn a_session_preprocesses_its_derivation_and_request_keystream() {
        let (d, k) = (PREPROCESS_COTS, keystream_cots(1024));
        assert_eq!(preprocess_cots(d, k, false), d + k);
        assert_eq!(preprocess_cots(d, 0, false), d);
        assert_eq!(preprocess_cots(d, k, true), PARTLY_REVEALED_PREPROCESS);
        assert_eq!(preprocess_cots(MOST_DERIVATION_COTS, k, true), MOST_DERIVATION_COTS + k);
    }

    /// The verifier's bounds on what a session may preprocess are the largest asks of any
    /// suite: TLS_AES_256_GCM_SHA384's derivation with both keys hidden, ChaCha20's keystream.
    #[test]
    fn the_verifiers_bounds_are_the_largest_asks_of_any_suite() {
        use crate::tls::tls13::Suite13;
        assert_eq!(Suite13::ALL.map(|s| derivation_cots(s, 2)).into_iter().max(), Some(MOST_DERIVATION_COTS));
        for len in [1, 1000, 1 << 14, 100_000] {
            let asks = Suite13::ALL.map(|s| keystream_cots_of(s, len));
            assert_eq!(asks.into_iter().max(), Some(most_keystream_cots(len)), "{len} bytes");
            // AES-128-GCM's blocks are TLS 1.2's; AES-256's take more committed bits each
            assert_eq!(keystream_cots_of(Suite13::Aes128GcmSha256, len), keystream_cots(len));
            assert!(keystream_cots_of(Suite13::Aes256GcmSha384, len) > keystream_cots(len), "{len} bytes");
            // TLS 1.2's suites ask for no more than the bounds
            for suite in crate::tls::CipherSuite::ALL {
                assert!(crate::cost::keystream_cots_12(suite, len) <= most_keystream_cots(len), "{suite:?}");
                assert!(crate::cost::line_break_cots_12(suite, len) <= most_line_break_cots(len), "{suite:?}");
            }
        }
        for suite in crate::tls::CipherSuite::ALL {
            assert!(crate::cost::derivation_cots_12(suite) <= MOST_DERIVATION_COTS, "{suite:?}");
        }
    }

    /// Keystream batches of different shapes or ciphers never share a shape key: a batch that
    /// took the counts of another shape would fail an honest proof.
    #[test]
    fn keystream_shapes_differ_when_blocks_or_openings_differ() {
        let chunk = |blocks: usize, opened: usize| -> Vec<(usize, u32, Vec<usize>)> {
            (0..blocks).map(|i| (1, i as u32, (0..opened).filter(|p| p % blocks == i).collect())).collect()
        };
        let mut keys = std::collections::HashSet::new();
        for cipher in [KeystreamCipher::Aes128, KeystreamCipher::Aes256, KeystreamCipher::ChaCha20] {
            for blocks in [1, 2, 17, 255, BLOCKS_PER_BATCH] {
                for opened in [0, 1, 2, 16, 256, 4096] {
                    assert!(
                        keys.insert(cipher.shape(&chunk(blocks, opened))),
                        "{cipher:?}: {blocks} blocks, {opened} bytes opened"
                    );
                }
            }
        }
    }

    /// The counts of a keystream batch of `blocks` blocks of `cipher` under a key committed in
    /// it, one block at a time as the proof's batches do.
    fn keystream_batch_stats(cipher: KeystreamCipher, blocks: u32) -> crate::zk::BatchStats {
        fn circuit<B: Backend>(b: &mut B, cipher: KeystreamCipher, secret: Option<&[u8]>, blocks: u32) {
            let key_len = if cipher == KeystreamCipher::Aes128 { 16 } else { 32 };
            let key = commit_bytes(b, secret.map(|k| &k[..key_len]), key_len);
            let iv = commit_bytes(b, secret.map(|k| &k[..12]), 12);
            if cipher == KeystreamCipher::ChaCha20 {
                for blk in 0..blocks {
                    crate::circuits::chacha20::block(b, &key, &iv, blk + 1);
                }
            } else {
                let rk = key_schedule(b, &key);
                for blk in 0..blocks {
                    keystream_blocks(b, &rk, &iv, &[blk]);
                }
            }
        }
        let (p, v) = crate::zk::tests::zk_run(
            crate::zk::Cheat::default(),
            |b| circuit(b, cipher, Some(&[7; 32]), blocks),
            |b| {
                circuit(b, cipher, None, blocks);
                b.stats()
            },
        );
        p.and(v).expect("an honest batch")
    }

    /// A record's bytes are decrypted each with its own block's keystream, and each block
    /// touched is computed once, however many of its bytes are read.
    #[test]
    fn decryption_computes_each_touched_block_once_and_reads_each_byte_from_its_own() {
        let mut b = crate::zk::PlainBackend::new();
        let ciphertext: Vec<u8> = (0..48).collect();
        let positions = [0, 1, 15, 16, 17, 33];
        let mut calls = vec![];
        // every keystream byte of block j is 0x80 | j
        let bits = decrypted_with(&mut b, 16, &ciphertext, &positions, |b, j| {
            calls.push(j);
            let byte = 0x80 | j as u8;
            (0..16 * 8).map(|i| crate::circuits::Circuit::constant(b, (byte >> (i % 8)) & 1 == 1)).collect()
        });
        assert_eq!(calls, [0, 1, 2]);
        let bytes: Vec<u8> = bits
            .chunks(8)
            .map(|c| c.iter().enumerate().fold(0, |x, (i, bit)| x | u8::from(b.value(*bit) == Some(true)) << i))
            .collect();
        let expected: Vec<u8> = positions.iter().map(|&p| ciphertext[p] ^ (0x80 | (p / 16) as u8)).collect();
        assert_eq!(bytes, expected);
    }

    /// Keystream batches make their COTs ahead, in one group before its first batch: a whole
    /// run makes no more than its batches are sized at (a batch run before its group was made
    /// would make its own COTs on demand, then the group's on top).
    #[test]
    fn keystream_batches_make_their_cots_ahead_of_their_first_batch() {
        use crate::channel::memory_pair;
        let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        let (a, b) = memory_pair(crate::zk::MAX_MESSAGE);
        let jobs: Vec<KeystreamJob> =
            vec![(0, vec![(0, 0, vec![1])]), (0, vec![(0, 1, vec![]), (0, 2, vec![3, 4])]), (0, vec![(1, 0, vec![0])])];
        fn batch<B: Backend>(
            b: &mut B,
            (rk, iv): &(RoundKeys<B>, Vec<B::Bit>),
            chunk: &[(usize, u32, Vec<usize>)],
        ) -> Vec<u8> {
            chunk
                .iter()
                .flat_map(|(_, blk, at)| {
                    let ks = keystream_blocks(b, rk, iv, &[*blk]);
                    open_selected_bytes(b, &ks[0], at)
                })
                .collect()
        }
        fn key<B: Backend>(b: &mut B, secret: Option<&[u8]>) -> (RoundKeys<B>, Vec<B::Bit>) {
            let k = commit_bytes(b, secret, 16);
            (key_schedule(b, &k), commit_bytes(b, secret.map(|s| &s[..12]), 12))
        }
        let p = async {
            let mut a = a;
            let k = prover.run_batch_deferred(&mut a, &mut |b| key(b, Some(&[9; 16]))).await?;
            let before = prover.cot().issued();
            keystream_batches(&mut prover, &mut a, KeystreamCipher::Aes128, &jobs, |b, _, chunk| batch(b, &k, chunk))
                .await?;
            Ok::<_, ProofError>(prover.cot().issued() - before)
        };
        let v = async {
            let mut b = b;
            let k = verifier.run_batch_deferred(&mut b, &mut |b| key(b, None)).await?;
            keystream_batches(&mut verifier, &mut b, KeystreamCipher::Aes128, &jobs, |b, _, chunk| batch(b, &k, chunk))
                .await
        };
        let (made, opened) = futures::executor::block_on(async { futures::join!(p, v) });
        assert_eq!(opened.expect("an honest run").concat().len(), 4);
        let needed: usize = jobs.iter().map(|(_, chunk)| batch_cots(chunk.len())).sum();
        let made = made.expect("an honest run");
        assert!(made <= needed, "{made} COTs made for batches sized at {needed}");
    }

    #[test]
    fn keystream_batches_top_up_their_cots_in_groups_up_to_the_cap() {
        // batches of 10 under a cap of 25: two at a time, and the third alone
        assert_eq!(cot_groups(&[10, 10, 10], 25), vec![(0, 20), (2, 10)]);
        // a group exactly used up is topped up by the next batch, not before
        assert_eq!(cot_groups(&[10, 15, 10, 5], 25), vec![(0, 25), (2, 15)]);
        // a batch over the cap goes alone; nothing is made for no batch
        assert_eq!(cot_groups(&[30, 5], 25), vec![(0, 30), (1, 5)]);
        assert_eq!(cot_groups(&[], 25), vec![]);
    }

    /// What the proof makes ahead for a keystream batch is what the batch takes.
    #[test]
    fn chacha20_batch_shapes_name_their_and_counts() {
        // A block's AND gates depend on its counter only through the folds the shape counts,
        // so two batches of one shape key have one circuit size; the COT estimate bounds it.
        let ands = |counter: u32| {
            let mut b = crate::zk::PlainBackend::new();
            let key = commit_bytes(&mut b, Some(&[3; 32]), 32);
            let nonce = commit_bytes(&mut b, Some(&[5; 12]), 12);
            crate::circuits::chacha20::block(&mut b, &key, &nonce, counter);
            b.stats().and_gates
        };
        for blk in [0u32, 1, 2, 3, 7, 255, u32::MAX - 1] {
            let folds = KeystreamCipher::ChaCha20.shape(&[(0, blk, vec![])]) >> 20 & 0xfffff;
            assert_eq!(ands(blk + 1) as u64, 336 * 31 - 16 - folds, "block {blk}");
            assert!(ands(blk + 1) <= COTS_PER_CHACHA20_BLOCK);
        }
        let shape = |blocks: &[u32], opened: usize| {
            KeystreamCipher::ChaCha20.shape(&blocks.iter().map(|&b| (0, b, vec![0; opened])).collect::<Vec<_>>())
        };
        assert_eq!(shape(&[0, 2], 3), shape(&[2, 0], 3));
        assert_ne!(shape(&[0, 2], 3), shape(&[0, 1], 3), "counters 1, 3 fold less than 1, 2");
        // one block and two that fold alike, opening as many bytes
        let chacha = KeystreamCipher::ChaCha20;
        assert_ne!(chacha.shape(&[(0, 1, vec![0, 1])]), chacha.shape(&[(0, 0, vec![0]), (0, 2, vec![0])]));
        assert_ne!(shape(&[0], 3), KeystreamCipher::Aes128.shape(&[(0, 0, vec![0; 3])]));
    }

    /// What a keystream batch is sized at is what it takes: exactly for AES (every block
    /// commits the same bits), at most for ChaCha20, whose blocks fold a few carries of their
    /// public counter (at most 16 + 31 AND gates a block).
    #[test]
    fn batch_cots_are_what_a_keystream_batch_takes() {
        for cipher in [KeystreamCipher::Aes128, KeystreamCipher::Aes256, KeystreamCipher::ChaCha20] {
            let key_schedule = keystream_batch_stats(cipher, 0).commits;
            for blocks in [1, 3] {
                let taken = crate::zk::cots_needed(&keystream_batch_stats(cipher, blocks)) - key_schedule;
                let sized = cipher.batch_cots(blocks as usize);
                if cipher == KeystreamCipher::ChaCha20 {
                    assert!(
                        taken <= sized && sized <= taken + 47 * blocks as usize,
                        "{cipher:?}, {blocks} blocks: {taken} taken, {sized} sized"
                    );
                } else {
                    assert_eq!(taken, sized, "{cipher:?}, {blocks} blocks");
                }
            }
        }
        assert_eq!(KeystreamCipher::Aes128.batch_cots(5), batch_cots(5));
    }
}
