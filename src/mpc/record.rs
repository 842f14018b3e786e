//! MPC mode's AES-GCM record layer (TLS 1.2, RFC 5288; TLS 1.3, RFC 8446 §5.2–5.3) over key
//! wires neither party can read: the garbled material of a direction and its records, and
//! sealing a client record. The versions differ only in a record's nonce, its additional data
//! and whether an explicit nonce precedes the ciphertext ([`RecordLayer`]); TLS 1.3's inner
//! content type is part of the plaintext, which the prover writes.
//!
//! - **Garbled material** ([`Phases`], so the re-proof covers it): the AES key schedule once
//!   per direction; the verifier's share of the GHASH key H (H ⊕ m under a mask of the
//!   prover's); per record the keystream, revealed masked by the prover's mask (a one-time pad
//!   to the verifier, which sends it back), and the verifier's share of E_K(J0).
//! - **Sending** ([`seal_prover`], [`seal_verifier`]): the prover encrypts its plaintext with
//!   the keystream itself (the plaintext never enters a circuit) and sends the verifier the
//!   explicit nonce and ciphertext; the verifier refuses any nonce but its own count of the
//!   direction's records (a repeated nonce would give the prover two tags under one E_K(J0),
//!   hence H) and answers its tag share. The verifier now knows exactly what the server gets.
//!
//! The server's records are not checked in two parties: they are fixed in the verifier's copy
//! before the prover could learn a key, and the transcript proof checks their tags afterwards
//! (docs/protocol.md, "A connection in two parties").
//!
//! The additional data is built by the verifier from its own count of records, the content
//! type, the version and the length, never taken from the prover.

use super::ghash::{GhashError, PowerShares};
use super::phases::{Input, PhaseError, Phases};
use crate::channel::{Channel, ChannelError};
use crate::circuits::aes::{key_schedule, RoundKeys};
use crate::circuits::keystream::{ghash_key, j0_block, keystream_blocks};
use crate::circuits::{constant_bytes, xor_bits, Circuit, Gates};
use crate::tls::crypto::{EXPLICIT_NONCE_LEN as NONCE_LEN, TAG_LEN};

/// The largest ciphertext of a TLS 1.2 record (RFC 5246 §6.2.3: 2^14 + 2048 with the nonce and
/// tag; our records carry at most 2^14 bytes of plaintext).
pub(crate) const MAX_CIPHERTEXT: usize = 1 << 14;

/// Why a record exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error(transparent)]
    Ghash(#[from] GhashError),
    #[error("OLE: {0}")]
    Ole(#[from] super::ole::OleError),
    #[error("the peer sent a malformed record message: {0}")]
    Malformed(&'static str),
    #[error("record {seq}: explicit nonce {got:#018x} is not the record's sequence number")]
    NonceNotSequence { seq: u64, got: u64 },
    #[error("record {seq}: a ciphertext of {len} bytes, more than {MAX_CIPHERTEXT}")]
    TooLong { seq: u64, len: usize },
    #[error("record {seq}: a ciphertext of {len} bytes for a keystream of {keystream}")]
    NotItsKeystreamsLength { seq: u64, len: usize, keystream: usize },
}

/// Which TLS version's record layer a direction speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordLayer {
    /// Nonce: a 4-byte implicit salt, then the 8-byte explicit nonce (the sequence number
    /// here), which the record carries before its ciphertext; additional data: seq_num ‖ type ‖
    /// version ‖ length.
    Tls12,
    /// Nonce: the 12-byte IV ⊕ the sequence number (RFC 8446 §5.3), nothing on the wire;
    /// additional data: the record header, type ‖ 0x0303 ‖ length with the tag.
    Tls13,
}

impl RecordLayer {
    /// The additional data of record `seq` of `content_type` (TLS 1.3: the outer type) with
    /// `len` bytes of ciphertext before its tag.
    pub(crate) fn additional_data(self, seq: u64, content_type: u8, len: usize) -> Vec<u8> {
        match self {
            RecordLayer::Tls12 => {
                crate::tls::crypto::aead_aad(seq, content_type, crate::tls::codec::TLS12, len).to_vec()
            }
            RecordLayer::Tls13 => {
                let [hi, lo] = ((len + TAG_LEN) as u16).to_be_bytes();
                vec![content_type, 0x03, 0x03, hi, lo]
            }
        }
    }

    /// The explicit nonce record `seq` carries before its ciphertext (TLS 1.2: the sequence
    /// number; TLS 1.3: none).
    pub(crate) fn explicit_nonce(self, seq: u64) -> Vec<u8> {
        match self {
            RecordLayer::Tls12 => seq.to_be_bytes().to_vec(),
            RecordLayer::Tls13 => Vec::new(),
        }
    }
}

/// A direction's garbled AES: the round keys and the nonce's private part (TLS 1.2's 4-byte
/// salt, TLS 1.3's 12-byte IV), as wires.
pub(crate) struct Direction<B: Circuit> {
    layer: RecordLayer,
    rk: RoundKeys<B>,
    nonce_base: Vec<B::Bit>,
}

impl<B: Circuit> Direction<B> {
    pub(crate) fn layer(&self) -> RecordLayer {
        self.layer
    }

    /// Record `seq`'s 96-bit nonce: the salt and the explicit nonce `seq` (TLS 1.2), or the
    /// IV ⊕ (0^4 ‖ seq) (TLS 1.3, an XOR with a constant: free).
    pub(super) fn iv(&self, b: &B, seq: u64) -> Vec<B::Bit> {
        match self.layer {
            RecordLayer::Tls12 => [self.nonce_base.clone(), constant_bytes(b, &seq.to_be_bytes())].concat(),
            RecordLayer::Tls13 => {
                let mut mask = [0u8; 12];
                mask[4..].copy_from_slice(&seq.to_be_bytes());
                xor_bits(b, &self.nonce_base, &constant_bytes(b, &mask))
            }
        }
    }
}

/// The direction's key schedule (one phase, nothing revealed) from its key wires and the
/// wires of its nonce's private part (32 bits for TLS 1.2, 96 for TLS 1.3).
pub(crate) async fn direction<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    layer: RecordLayer,
    key: &[<P::Backend as Gates>::Bit],
    nonce_base: &[<P::Backend as Gates>::Bit],
) -> Result<Direction<P::Backend>, PhaseError> {
    let (d, _) = p
        .phase(ch, &mut |b| {
            (Direction { layer, rk: key_schedule(b, key), nonce_base: nonce_base.to_vec() }, Vec::new())
        })
        .await?;
    Ok(d)
}

/// The verifier's share of the direction's GHASH key, H ⊕ m under the prover's 16-byte mask m
/// (`None` on the prover's side, whose share is m).
pub(crate) async fn ghash_key_share<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &Direction<P::Backend>,
    mask: &Input<'_, P::Backend>,
) -> Result<Option<[u8; 16]>, PhaseError> {
    let ((), share) = p
        .phase_for_verifier(ch, &mut |b| {
            let h = ghash_key(b, &d.rk);
            ((), xor_bits(b, &h, &mask.wires(b)))
        })
        .await?;
    share.map(block16).transpose()
}

/// Request bytes one record carries: TLS 1.3's inner content type takes a byte of the 2^14
/// a record's plaintext may have here.
pub(crate) fn record_content(layer: RecordLayer) -> usize {
    match layer {
        RecordLayer::Tls12 => MAX_CIPHERTEXT,
        RecordLayer::Tls13 => MAX_CIPHERTEXT - 1,
    }
}

/// The records of a request of `len` bytes as the client seals them, (sequence number,
/// plaintext length): in TLS 1.2 records of at most 2^14 bytes from sequence number 1 (0 is
/// the client Finished); in TLS 1.3 from 0 under the application key, each of at most
/// 2^14 − 1 request bytes and its inner content type.
pub(crate) fn request_records(layer: RecordLayer, len: usize) -> Vec<(u64, usize)> {
    let (per, first, extra) = match layer {
        RecordLayer::Tls12 => (record_content(layer), 1, 0),
        RecordLayer::Tls13 => (record_content(layer), 0, 1),
    };
    (0..len.div_ceil(per)).map(|i| (i as u64 + first, (len - i * per).min(per) + extra)).collect()
}

/// Keystream blocks per phase: 128 AES blocks stay well under a phase's table limit.
pub(crate) const KEYSTREAM_PHASE_BLOCKS: usize = 128;

/// The keystream of record `seq` of `len` bytes, revealed to both masked by
/// the prover's mask of `len` bytes: the prover unmasks it, the verifier sees a one-time pad.
/// One phase per [`KEYSTREAM_PHASE_BLOCKS`] blocks.
pub(crate) async fn masked_keystream<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &Direction<P::Backend>,
    seq: u64,
    len: usize,
    mask: &Input<'_, P::Backend>,
) -> Result<Vec<u8>, PhaseError> {
    keystream_in_phases(p, ch, len, (16, KEYSTREAM_PHASE_BLOCKS), mask, &|b, piece| {
        let iv = d.iv(b, seq);
        keystream_blocks(b, &d.rk, &iv, piece).into_iter().flatten().collect()
    })
    .await
}

/// `len` bytes of a keystream of `block`-byte blocks 0, 1, … in phases of `per_phase` blocks
/// (`blocks` gives a phase's blocks' bits), each revealed to both masked by the prover's mask.
pub(crate) async fn keystream_in_phases<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    len: usize,
    (block, per_phase): (usize, usize),
    mask: &Input<'_, P::Backend>,
    blocks: &dyn Fn(&mut P::Backend, &[u32]) -> Vec<<P::Backend as Gates>::Bit>,
) -> Result<Vec<u8>, PhaseError> {
    let mut revealed = Vec::with_capacity(len);
    let indices: Vec<u32> = (0..len.div_ceil(block) as u32).collect();
    for piece in indices.chunks(per_phase) {
        let (from, to) = (block * piece[0] as usize, (block * (piece[piece.len() - 1] as usize + 1)).min(len));
        let ((), part) = p
            .phase(ch, &mut |b| {
                let ks: Vec<_> = blocks(b, piece).into_iter().take(8 * (to - from)).collect();
                ((), xor_bits(b, &ks, &mask.wires(b)[8 * from..8 * to]))
            })
            .await?;
        revealed.extend_from_slice(&part);
    }
    Ok(revealed)
}

/// The verifier's share of E_K(J0) for record `seq`, masked by the prover's 16-byte mask
/// (`None` on the prover's side).
pub(crate) async fn j0_share<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &Direction<P::Backend>,
    seq: u64,
    mask: &Input<'_, P::Backend>,
) -> Result<Option<[u8; 16]>, PhaseError> {
    let ((), share) = p
        .phase_for_verifier(ch, &mut |b| {
            let iv = d.iv(b, seq);
            let j0 = j0_block(b, &d.rk, &iv);
            ((), xor_bits(b, &j0, &mask.wires(b)))
        })
        .await?;
    share.map(block16).transpose()
}

fn block16(bytes: Vec<u8>) -> Result<[u8; 16], PhaseError> {
    bytes.try_into().map_err(|_| super::phases::PeerMisbehaved::Malformed("a 16-byte share").into())
}

fn xor16(a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// The prover's side of sending record `seq`: sends the explicit nonce (TLS 1.2: the sequence
/// number) and the ciphertext it encrypted with its keystream, takes the verifier's tag share
/// and returns the record's body for the server (nonce ‖ ciphertext ‖ tag). `j0_mask` is its
/// share of E_K(J0).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn seal_prover<C: Channel>(
    ch: &mut C,
    powers: &PowerShares,
    layer: RecordLayer,
    seq: u64,
    content_type: u8,
    ciphertext: &[u8],
    j0_mask: [u8; 16],
) -> Result<Vec<u8>, RecordError> {
    let mine = powers.tag_share(&layer.additional_data(seq, content_type, ciphertext.len()), ciphertext, j0_mask)?;
    let body = [&layer.explicit_nonce(seq)[..], ciphertext].concat();
    ch.send(body.clone()).await?;
    let theirs: [u8; 16] =
        ch.recv().await?.try_into().map_err(|_| RecordError::Malformed("a tag share is 16 bytes"))?;
    Ok([body, xor16(mine, theirs).to_vec()].concat())
}

/// The ciphertext of record `seq` in the prover's message `msg` (after TLS 1.2's explicit
/// nonce, which must be `seq`), refused when oversized or of another length than its
/// keystream's `len` bytes: what both ciphers' verifier sides take before helping with a tag.
pub(crate) fn ciphertext_of(layer: RecordLayer, msg: &[u8], seq: u64, len: usize) -> Result<&[u8], RecordError> {
    let ciphertext = match layer {
        RecordLayer::Tls12 => {
            let (nonce, ciphertext) = msg
                .split_first_chunk::<NONCE_LEN>()
                .ok_or(RecordError::Malformed("a record without its explicit nonce"))?;
            let got = u64::from_be_bytes(*nonce);
            if got != seq {
                return Err(RecordError::NonceNotSequence { seq, got });
            }
            ciphertext
        }
        RecordLayer::Tls13 => msg,
    };
    if ciphertext.len() > MAX_CIPHERTEXT {
        return Err(RecordError::TooLong { seq, len: ciphertext.len() });
    }
    if ciphertext.len() != len {
        return Err(RecordError::NotItsKeystreamsLength { seq, len: ciphertext.len(), keystream: len });
    }
    Ok(ciphertext)
}

/// The verifier's side of sending record `seq` of `len` bytes: takes the nonce (TLS 1.2) and
/// ciphertext, refuses a nonce other than `seq`, an oversized record and a ciphertext of
/// another length than its keystream, answers its tag share. Returns the ciphertext: what the
/// server receives.
pub(crate) async fn seal_verifier<C: Channel>(
    ch: &mut C,
    powers: &PowerShares,
    layer: RecordLayer,
    seq: u64,
    content_type: u8,
    j0_share: [u8; 16],
    len: usize,
) -> Result<Vec<u8>, RecordError> {
    let msg = ch.recv().await?;
    let ciphertext = ciphertext_of(layer, &msg, seq, len)?;
    let share = powers.tag_share(&layer.additional_data(seq, content_type, ciphertext.len()), ciphertext, j0_share)?;
    ch.send(share.to_vec()).await?;
    Ok(ciphertext.to_vec())
}

/// A server record's body split: explicit nonce, ciphertext, tag (the tests read the records
/// sealed in two parties back with it).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn split_body(body: &[u8]) -> Option<(u64, &[u8], [u8; 16])> {
    let (nonce, rest) = body.split_first_chunk::<NONCE_LEN>()?;
    let (ciphertext, tag) = rest.split_last_chunk::<TAG_LEN>()?;
    Some((u64::from_be_bytes(*nonce), ciphertext, *tag))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::circuits::bytes_to_bits;
    use crate::gc::Garbler;
    use crate::mpc::garbled::{EvaluatorParty, GarblerParty, Schedule};
    use crate::mpc::ghash::{block_to_field, cots_for_powers, powers_a, powers_b};
    use crate::mpc::phases::PeerMisbehaved;
    use crate::ot::test_util::random_cots;
    use crate::primitives::field::F128;
    use crate::zk::MAX_MESSAGE;
    use futures::executor::block_on;
    use futures::future::join;
    use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM};

    const APPLICATION_DATA: u8 = 23;

    /// One direction keyed by K = k_P ⊕ k_V with the prover's nonce base (TLS 1.2's 4-byte
    /// salt, TLS 1.3's 12-byte IV), garbled: the prover seals `plaintext` as record `seq`.
    /// Returns the record and the ciphertext the verifier saw.
    fn run(
        layer: RecordLayer,
        seq: u64,
        (k_p, k_v): ([u8; 16], [u8; 16]),
        salt: &[u8],
        plaintext: &[u8],
    ) -> (Vec<u8>, Vec<u8>) {
        let len = plaintext.len();
        let (h_mask, j0_mask): ([u8; 16], [u8; 16]) = (rand::random(), rand::random());
        let ks_mask: Vec<u8> = (0..len).map(|_| rand::random()).collect();
        let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
        let (in_keys, in_choices, in_macs) = random_cots(F128(gp.garbler().delta()), 128);
        let in_keys: Vec<u128> = in_keys.iter().map(|k| k.0).collect();
        let in_macs: Vec<u128> = in_macs.iter().map(|m| m.0).collect();
        let max_power = 2 + len.div_ceil(16);
        let delta = F128(rand::random());
        let (ole_keys, ole_choices, ole_macs) = random_cots(delta, cots_for_powers(max_power));
        let n = salt.len();
        let p_inputs = [&k_p[..], salt, &h_mask, &j0_mask, &ks_mask].concat();
        let n_p = 8 * p_inputs.len();
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let prover = async move {
            let mine = gp.own_inputs(&mut a, &bytes_to_bits(&p_inputs)).await?;
            let theirs = gp.peer_inputs(&mut a, &in_keys).await?;
            let (key, _) = gp.phase(&mut a, &mut |b| (xor_bits(b, &mine[..128], &theirs), Vec::new())).await?;
            let w = |from: usize, bytes: usize| Input::Wires(&mine[8 * from..8 * (from + bytes)]);
            let d = direction(&mut gp, &mut a, layer, &key, &mine[128..128 + 8 * n]).await?;
            assert_eq!(ghash_key_share(&mut gp, &mut a, &d, &w(16 + n, 16)).await?, None, "the garbler gets no share");
            let masked = masked_keystream(&mut gp, &mut a, &d, seq, len, &w(48 + n, len)).await?;
            assert_eq!(j0_share(&mut gp, &mut a, &d, seq, &w(32 + n, 16)).await?, None);
            let powers = powers_a(&mut a, block_to_field(h_mask), max_power, delta, &ole_keys, 0)
                .await
                .map_err(RecordError::from)?;
            let ciphertext: Vec<u8> =
                plaintext.iter().zip(masked.iter().zip(&ks_mask)).map(|(p, (m, k))| p ^ m ^ k).collect();
            Ok::<_, Box<dyn std::error::Error>>(
                seal_prover(&mut a, &powers, layer, seq, APPLICATION_DATA, &ciphertext, j0_mask).await?,
            )
        };
        let verifier = async move {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, n_p).await?;
            let mine = ep.own_inputs(&mut b, &bytes_to_bits(&k_v), &in_choices, &in_macs).await?;
            let (key, _) = ep.phase(&mut b, &mut |b| (xor_bits(b, &theirs[..128], &mine), Vec::new())).await?;
            let w = |from: usize, bytes: usize| Input::Wires(&theirs[8 * from..8 * (from + bytes)]);
            let d = direction(&mut ep, &mut b, layer, &key, &theirs[128..128 + 8 * n]).await?;
            let h_share = ghash_key_share(&mut ep, &mut b, &d, &w(16 + n, 16)).await?.expect("the verifier decodes");
            masked_keystream(&mut ep, &mut b, &d, seq, len, &w(48 + n, len)).await?;
            let j0 = j0_share(&mut ep, &mut b, &d, seq, &w(32 + n, 16)).await?.expect("the verifier decodes");
            let powers = powers_b(&mut b, block_to_field(h_share), max_power, &ole_choices, &ole_macs, 0)
                .await
                .map_err(RecordError::from)?;
            Ok::<_, Box<dyn std::error::Error>>(
                seal_verifier(&mut b, &powers, layer, seq, APPLICATION_DATA, j0, len).await?,
            )
        };
        let (p, v) = block_on(join(prover, verifier));
        (p.expect("prover"), v.expect("verifier"))
    }

    fn ring_key(key: &[u8; 16]) -> LessSafeKey {
        LessSafeKey::new(UnboundKey::new(&AES_128_GCM, key).expect("16 bytes"))
    }

    fn shares() -> ([u8; 16], [u8; 16], [u8; 16], [u8; 4]) {
        let (k_p, k_v, salt): ([u8; 16], [u8; 16], [u8; 4]) = (rand::random(), rand::random(), rand::random());
        (k_p, k_v, core::array::from_fn(|i| k_p[i] ^ k_v[i]), salt)
    }

    #[test]
    fn a_record_sealed_by_both_parties_opens_under_the_joint_key() {
        let (k_p, k_v, key, salt) = shares();
        let plaintext = b"GET /balance HTTP/1.1\r\nHost: bank.test\r\nAuthorization: Bearer 5ecret\r\n\r\n";
        let (client_record, seen_by_verifier) = run(RecordLayer::Tls12, 0, (k_p, k_v), &salt, plaintext);
        // ring opens the client record with the key neither party held.
        let (explicit, ciphertext, _) = split_body(&client_record).expect("a whole record");
        assert_eq!(explicit, 0);
        assert_eq!(seen_by_verifier, ciphertext, "the verifier saw the ciphertext the server gets");
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&salt);
        let mut in_out = client_record[NONCE_LEN..].to_vec();
        let opened = ring_key(&key)
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(RecordLayer::Tls12.additional_data(0, APPLICATION_DATA, plaintext.len())),
                &mut in_out,
            )
            .expect("the joint tag verifies");
        assert_eq!(opened, plaintext);
    }

    /// TLS 1.3: record 5 under the 12-byte IV (nonce IV ⊕ 5), the plaintext ending with its
    /// inner content type, no explicit nonce on the wire, the record header as additional data.
    #[test]
    fn a_tls13_record_sealed_by_both_parties_opens_under_the_joint_key() {
        let (k_p, k_v, key, _) = shares();
        let iv: [u8; 12] = rand::random();
        let plaintext = b"POST /pay HTTP/1.1\r\nHost: bank.test\r\nContent-Length: 2\r\n\r\n{}\x17";
        let (client_record, seen_by_verifier) = run(RecordLayer::Tls13, 5, (k_p, k_v), &iv, plaintext);
        assert_eq!(client_record.len(), plaintext.len() + TAG_LEN, "no explicit nonce");
        assert_eq!(seen_by_verifier, client_record[..plaintext.len()], "the verifier saw the ciphertext");
        let mut nonce = iv;
        nonce[4..].iter_mut().zip(5u64.to_be_bytes()).for_each(|(n, s)| *n ^= s);
        let header = [APPLICATION_DATA, 3, 3, 0, (plaintext.len() + TAG_LEN) as u8];
        assert_eq!(RecordLayer::Tls13.additional_data(5, APPLICATION_DATA, plaintext.len()), header);
        let mut in_out = client_record.clone();
        let opened = ring_key(&key)
            .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::from(header), &mut in_out)
            .expect("the joint tag verifies");
        assert_eq!(opened, plaintext);
    }

    /// What the verifier takes before it helps with a tag ([`ciphertext_of`], which the
    /// ChaCha20-Poly1305 records' side takes too): a nonce other than the record's position,
    /// an oversized record, a ciphertext of another length than its keystream are refused.
    #[test]
    fn the_verifier_refuses_a_nonce_other_than_the_records_position_oversized_records_and_other_lengths() {
        let powers = {
            let (mut a, mut b) = memory_pair(1 << 20);
            let delta = F128(rand::random());
            let (k, c, m) = random_cots(delta, cots_for_powers(4));
            let (_, pb) =
                block_on(join(powers_a(&mut a, F128::ONE, 4, delta, &k, 0), powers_b(&mut b, F128::ONE, 4, &c, &m, 0)));
            pb.expect("powers")
        };
        let tls12 = RecordLayer::Tls12;
        let cases = [
            (tls12, [&7u64.to_be_bytes()[..], &[0; 20]].concat(), "replayed nonce"),
            (tls12, [&3u64.to_be_bytes()[..], &vec![0; MAX_CIPHERTEXT + 1]].concat(), "oversized"),
            (tls12, [&3u64.to_be_bytes()[..], &[0; 21]].concat(), "longer than its keystream"),
            // TLS 1.3 carries no nonce: the same 28 bytes are a ciphertext of the wrong length
            (RecordLayer::Tls13, [&3u64.to_be_bytes()[..], &[0; 13]].concat(), "TLS 1.3, longer"),
            (RecordLayer::Tls13, vec![0; MAX_CIPHERTEXT + 1], "oversized"),
        ];
        for (layer, msg, what) in cases {
            let (mut ours, mut peer) = memory_pair(1 << 20);
            let r = block_on(async {
                peer.send(msg).await.expect("open");
                seal_verifier(&mut ours, &powers, layer, 3, APPLICATION_DATA, [0; 16], 20).await
            });
            match (what, r) {
                ("replayed nonce", Err(RecordError::NonceNotSequence { seq: 3, got: 7 }))
                | ("oversized", Err(RecordError::TooLong { seq: 3, .. }))
                | (
                    "longer than its keystream",
                    Err(RecordError::NotItsKeystreamsLength { seq: 3, len: 21, keystream: 20 }),
                )
                | ("TLS 1.3, longer", Err(RecordError::NotItsKeystreamsLength { seq: 3, len: 21, keystream: 20 })) => {}
                (what, other) => panic!("{what}: {other:?}"),
            }
        }
    }

    /// The keystream of `len` bytes of a record, AES-CTR from counter 2 (GCM), from ring.
    fn ring_keystream(key: &[u8; 16], salt: [u8; 4], explicit: u64, len: usize) -> Vec<u8> {
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(&salt);
        nonce[4..].copy_from_slice(&explicit.to_be_bytes());
        let mut ks = vec![0u8; len];
        let _tag = ring_key(key)
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut ks)
            .expect("seal");
        ks
    }

    #[test]
    fn a_keystream_garbled_before_its_key_exists_equals_aes_ctr_and_sends_no_tables_once_it_does() {
        let (key, salt): ([u8; 16], [u8; 4]) = (rand::random(), rand::random());
        let (len, nonce) = (300, 7);
        let mask: Vec<u8> = (0..len).map(|_| rand::random()).collect();
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let key_and_salt = bytes_to_bits(&[&key[..], &salt].concat());
        let mask_bits = bytes_to_bits(&mask);
        let prover = async move {
            let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
            // before the key exists: its wires, the salt's and the mask's are reserved
            let (key_w, salt_w, mask_w) = (gp.reserve_inputs(128), gp.reserve_inputs(32), gp.reserve_inputs(8 * len));
            gp.set_schedule(Schedule::Ahead);
            let d = direction(&mut gp, &mut a, RecordLayer::Tls12, &key_w, &salt_w).await?;
            masked_keystream(&mut gp, &mut a, &d, nonce, len, &Input::Wires(&mask_w)).await?;
            gp.end_ahead(&mut a).await?;
            let ahead = gp.bytes_of_tables();
            // the key and salt arrive as another circuit's wires (here inputs of the prover's)
            gp.set_schedule(Schedule::Online);
            let from = gp.own_inputs(&mut a, &key_and_salt).await?;
            gp.solder(&mut a, &from, &[key_w.clone(), salt_w.clone()].concat()).await?;
            gp.send_labels(&mut a, &mask_w, &mask_bits).await?;
            gp.set_schedule(Schedule::Replay);
            let d = direction(&mut gp, &mut a, RecordLayer::Tls12, &key_w, &salt_w).await?;
            let ks = masked_keystream(&mut gp, &mut a, &d, nonce, len, &Input::Wires(&mask_w)).await?;
            Ok::<_, PhaseError>((ks, ahead, gp.bytes_of_tables()))
        };
        let verifier = async move {
            let mut ep = EvaluatorParty::new();
            ep.receive_ahead(
                &mut b,
                1 << 20,
                &crate::mpc::sealing::RecordCipher::AesGcm.ahead_decoding(&[(nonce, len)])[..2],
            )
            .await?;
            let from = ep.peer_inputs(&mut b, 160).await?;
            let key_and_salt = ep.solder(&mut b, &from).await?;
            let mask_w = ep.peer_inputs(&mut b, 8 * len).await?;
            ep.set_replay(true);
            let d = direction(&mut ep, &mut b, RecordLayer::Tls12, &key_and_salt[..128], &key_and_salt[128..]).await?;
            masked_keystream(&mut ep, &mut b, &d, nonce, len, &Input::Wires(&mask_w)).await
        };
        let (p, v) = block_on(join(prover, verifier));
        let ((garbler_view, ahead, total), evaluator_view) = (p.expect("garbler"), v.expect("evaluator"));
        let expected: Vec<u8> = ring_keystream(&key, salt, nonce, len).iter().zip(&mask).map(|(k, m)| k ^ m).collect();
        assert_eq!(garbler_view, expected);
        assert_eq!(evaluator_view, expected);
        // the key schedule and 19 blocks of keystream (32 AND an S-box) went ahead, nothing after
        assert!(ahead as usize >= crate::gc::three_halves::encoded_len(32 * (40 + 133 * 19)), "{ahead} bytes ahead");
        assert_eq!(total, ahead, "tables sent once the key was known");
    }

    #[test]
    fn an_evaluator_keeps_no_more_tables_ahead_than_its_budget_and_replays_only_what_it_kept() {
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let prover = async move {
            let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
            let (key_w, salt_w) = (gp.reserve_inputs(128), gp.reserve_inputs(32));
            gp.set_schedule(Schedule::Ahead);
            let sent = direction(&mut gp, &mut a, RecordLayer::Tls12, &key_w, &salt_w).await.map(|_| ());
            let _ = gp.end_ahead(&mut a).await;
            sent
        };
        // the key schedule is 40 S-boxes of 32 AND
        let verifier = async move { EvaluatorParty::new().receive_ahead(&mut b, 1000, &[0]).await };
        let (_, v) = block_on(join(prover, verifier));
        assert!(matches!(v, Err(PhaseError::Peer(PeerMisbehaved::TooManyTables { got: 1280, max: 1000 }))), "{v:?}");

        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let prover = async move { GarblerParty::new(Garbler::new(Vec::new())).end_ahead(&mut a).await };
        let verifier = async move {
            let mut ep = EvaluatorParty::new();
            ep.receive_ahead(&mut b, 1 << 20, &[]).await?;
            ep.set_replay(true);
            let key: Vec<_> = (0..160).map(crate::gc::Wire::Label).collect();
            direction(&mut ep, &mut b, RecordLayer::Tls12, &key[..128], &key[128..]).await.map(|_| ())
        };
        let (p, v) = block_on(join(prover, verifier));
        p.expect("garbler");
        assert!(
            matches!(v, Err(PhaseError::Peer(PeerMisbehaved::Malformed(m))) if m.contains("no phase garbled ahead")),
            "{v:?}"
        );
    }

    /// What an evaluator keeps ahead is what its own plan of the request takes: a garbler that
    /// sends one phase more, another count of decoding bits, or a phase without gates is
    /// refused as it does so.
    #[test]
    fn an_evaluator_keeps_only_the_phases_its_plan_has_ahead() {
        fn run(
            plan: &[usize],
            garble: impl AsyncFnOnce(&mut GarblerParty, &mut crate::channel::MemoryChannel),
        ) -> Result<(), PhaseError> {
            let plan = plan.to_vec();
            let (mut a, mut b) = memory_pair(MAX_MESSAGE);
            let prover = async move {
                let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
                gp.set_schedule(Schedule::Ahead);
                garble(&mut gp, &mut a).await;
                let _ = gp.end_ahead(&mut a).await;
            };
            let verifier = async move { EvaluatorParty::new().receive_ahead(&mut b, 1 << 20, &plan).await };
            block_on(join(prover, verifier)).1
        }
        async fn key_schedule_phase(gp: &mut GarblerParty, a: &mut crate::channel::MemoryChannel) {
            let (key_w, salt_w) = (gp.reserve_inputs(128), gp.reserve_inputs(32));
            let _ = direction(gp, a, RecordLayer::Tls12, &key_w, &salt_w).await;
        }
        // one more phase than planned (up to one key schedule's tables and nothing else)
        let v = run(&[], async |gp, a| key_schedule_phase(gp, a).await);
        assert!(matches!(v, Err(PhaseError::Peer(PeerMisbehaved::AheadPhaseCount { expected: 0, got: 1 }))), "{v:?}");
        // fewer than planned
        let v = run(&[0, 0], async |gp, a| key_schedule_phase(gp, a).await);
        assert!(matches!(v, Err(PhaseError::Peer(PeerMisbehaved::AheadPhaseCount { expected: 2, got: 1 }))), "{v:?}");
        // a phase that reveals where the plan reveals nothing
        let v = run(&[0], async |gp, a| {
            let w = gp.reserve_inputs(8);
            let _ = gp
                .phase(a, &mut |b| {
                    let x = b.and(w[0], w[1]);
                    ((), vec![x; 8])
                })
                .await;
        });
        assert!(
            matches!(v, Err(PhaseError::Peer(PeerMisbehaved::DecodingCountMismatch { expected: 0, got: 8 }))),
            "{v:?}"
        );
        // a phase without gates
        let v = run(&[8], async |gp, a| {
            let w = gp.reserve_inputs(8);
            let _ = gp.phase(a, &mut |_| ((), w.clone())).await;
        });
        assert!(matches!(v, Err(PhaseError::Peer(PeerMisbehaved::EmptyAheadPhase))), "{v:?}");
        // the plan of a request: a key schedule, then per record its keystream phases and E_K(J0)
        assert_eq!(
            crate::mpc::sealing::RecordCipher::AesGcm.ahead_decoding(&[(1, 2049), (2, 5)]),
            vec![0, 8 * 2048, 8, 128, 40, 128]
        );
    }
}

/// What a record's keystream costs garbled, AES-128 (the suite built) against ChaCha20 (the
/// other TLS 1.3 suite with a SHA-256 schedule), for the choice recorded in docs/protocol.md
/// ("Which TLS 1.3 suites in two parties").
#[cfg(test)]
mod suite_cost {
    use crate::circuits::keystream::{j0_block, keystream_blocks};
    use crate::circuits::{aes::key_schedule, chacha20};
    use crate::gc::Garbler;

    /// AND gates (one table each) of a direction's key schedule, a record of `len` plaintext
    /// bytes' keystream and its tag mask: AES-128-GCM's E_K(J0), ChaCha20-Poly1305's one-time
    /// key block (Poly1305 itself runs on shares, like GHASH: no tables).
    fn ands(len: usize) -> (u64, u64) {
        let mut g = Garbler::new(Vec::new());
        let (key, _) = g.garbler_inputs(&[false; 128 + 96]);
        let rk = key_schedule(&mut g, &key[..128]);
        let blocks: Vec<u32> = (0..len.div_ceil(16) as u32).collect();
        keystream_blocks(&mut g, &rk, &key[128..], &blocks);
        j0_block(&mut g, &rk, &key[128..]);
        let aes = g.stats().and_gates;
        let mut g = Garbler::new(Vec::new());
        let (key, _) = g.garbler_inputs(&[false; 256 + 96]);
        for counter in 0..=len.div_ceil(64) as u32 {
            chacha20::block(&mut g, &key[..256], &key[256..], counter);
        }
        (aes, g.stats().and_gates)
    }

    /// For a 1 KB request record (1,025 bytes with TLS 1.3's type byte) and a whole 16 KiB
    /// record: ChaCha20 garbles fewer gates than AES-128 with this AES circuit.
    #[test]
    fn chacha20_garbles_fewer_gates_than_aes_128_per_record() {
        for len in [1025, 1 << 14] {
            let (aes, chacha) = ands(len);
            eprintln!("[suite cost] {len} bytes: AES-128 {aes} AND gates, ChaCha20 {chacha}");
            assert!(chacha < aes, "{len} bytes: ChaCha20 {chacha} against AES-128 {aes}");
        }
    }
}
