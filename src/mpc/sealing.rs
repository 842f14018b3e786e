//! The client's records in two parties, whichever the suite: its direction on wires and the
//! garbled phases of a record before its ciphertext exists (the masked keystream, then
//! AES-GCM's E_K(J0) share or ChaCha20-Poly1305's one-time key). The connection runs them
//! online or garbled ahead, and the proof of the garbling replays them.

use super::chacha_record::{self, ChaChaDirection, MASKED_R_BYTES, R_MASK_BYTES};
use super::phases::{Input, PhaseError, Phases};
use super::record::{self, direction, j0_share, Direction, RecordLayer};
use crate::channel::Channel;
use crate::circuits::Gates;
use crate::tls::tls13::messages::Suite13;

/// The AEAD protecting the client's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordCipher {
    AesGcm,
    ChaCha20Poly1305,
}

/// AND gates of a ChaCha20 block: 336 32-bit additions of 31 each.
const CHACHA20_BLOCK_ANDS: u64 = 336 * 31;

impl RecordCipher {
    /// The cipher of a TLS 1.3 suite the two-party client offers (AES-128-GCM or
    /// ChaCha20-Poly1305).
    pub(crate) fn of13(suite: Suite13) -> Self {
        match suite {
            Suite13::ChaCha20Poly1305Sha256 => RecordCipher::ChaCha20Poly1305,
            _ => RecordCipher::AesGcm,
        }
    }

    /// Bytes of the prover's masks per record after its keystream's: its share of E_K(J0),
    /// or its mask of r.
    pub(crate) fn tail_mask(self) -> usize {
        match self {
            RecordCipher::AesGcm => 16,
            RecordCipher::ChaCha20Poly1305 => R_MASK_BYTES,
        }
    }

    /// Bytes P commits for a TLS 1.3 handshake besides its share of the secret: its mask of
    /// the client direction's GHASH key (AES-GCM), or none.
    pub(crate) fn handshake_mask(self) -> usize {
        match self {
            RecordCipher::AesGcm => 16,
            RecordCipher::ChaCha20Poly1305 => 0,
        }
    }

    /// Bits of the key and of the nonce's private part, in `layer`.
    pub(crate) fn key_bits(self, layer: RecordLayer) -> (usize, usize) {
        match (self, layer) {
            (RecordCipher::AesGcm, RecordLayer::Tls12) => (128, 32),
            (RecordCipher::AesGcm, RecordLayer::Tls13) => (128, 96),
            (RecordCipher::ChaCha20Poly1305, _) => (256, 96),
        }
    }

    /// At most the gate tables of the direction and of `records`' phases before their
    /// ciphertexts: AES at 160 S-boxes of 32 AND per block (blocks that share a prefix cost
    /// less), its key schedule 40 S-boxes; ChaCha20's blocks and r's 192-bit masking sum.
    pub(crate) fn tables_for_records(self, records: &[(u64, usize)]) -> u64 {
        match self {
            RecordCipher::AesGcm => {
                let blocks: u64 = records.iter().map(|&(_, len)| len.div_ceil(16) as u64 + 1).sum();
                32 * (40 + 160 * blocks)
            }
            RecordCipher::ChaCha20Poly1305 => records
                .iter()
                .map(|&(_, len)| (len.div_ceil(64) as u64 + 1) * CHACHA20_BLOCK_ANDS + 8 * R_MASK_BYTES as u64)
                .sum(),
        }
    }

    /// The phases of [`client_direction`] and then, per record of `records`, of
    /// [`record_phases`], as the bits each reveals: what an evaluator expects of a request
    /// garbled ahead ([`super::garbled::EvaluatorParty::receive_ahead`]).
    pub(crate) fn ahead_decoding(self, records: &[(u64, usize)]) -> Vec<usize> {
        let (direction, block, per_phase, tail) = match self {
            RecordCipher::AesGcm => (vec![0], 16, record::KEYSTREAM_PHASE_BLOCKS, 128),
            RecordCipher::ChaCha20Poly1305 => (vec![], 64, chacha_record::PHASE_BLOCKS, 8 * MASKED_R_BYTES),
        };
        let mut phases = direction;
        for &(_, len) in records {
            phases.extend(
                (0..len.div_ceil(block))
                    .step_by(per_phase)
                    .map(|first| 8 * (len - block * first).min(block * per_phase)),
            );
            phases.push(tail);
        }
        phases
    }
}

/// The client direction on wires.
pub(crate) enum ClientDirection<B: crate::circuits::Circuit> {
    AesGcm(Direction<B>),
    ChaCha20Poly1305(ChaChaDirection<B>),
}

/// The client direction from its key and nonce wires ([`RecordCipher::key_bits`]): AES's key
/// schedule is a phase; ChaCha20 has none.
pub(crate) async fn client_direction<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    cipher: RecordCipher,
    layer: RecordLayer,
    key: &[<P::Backend as Gates>::Bit],
    nonce: &[<P::Backend as Gates>::Bit],
) -> Result<ClientDirection<P::Backend>, PhaseError> {
    Ok(match cipher {
        RecordCipher::AesGcm => ClientDirection::AesGcm(direction(p, ch, layer, key, nonce).await?),
        RecordCipher::ChaCha20Poly1305 => ClientDirection::ChaCha20Poly1305(
            ChaChaDirection::new(key, nonce)
                .ok_or(super::phases::PeerMisbehaved::Malformed("a ChaCha20 key of 256 bits and IV of 96"))?,
        ),
    })
}

/// What a record's phases before its ciphertext leave for its tag.
pub(crate) enum RecordTail<Bit> {
    /// AES-GCM: the verifier's share of E_K(J0) (`None` on the prover's side).
    J0(Option<[u8; 16]>),
    /// ChaCha20-Poly1305: s on wires, and r + m for the verifier (`None` on the prover's).
    OneTimeKey { s: Vec<Bit>, masked_r: Option<[u8; MASKED_R_BYTES]> },
}

/// Record `seq`'s phases before its ciphertext exists, over the prover's masks' wires
/// (`len` bytes for the keystream, then [`RecordCipher::tail_mask`] bytes): its keystream,
/// revealed to both masked, and its tail.
pub(crate) async fn record_phases<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &ClientDirection<P::Backend>,
    seq: u64,
    len: usize,
    masks: &[<P::Backend as Gates>::Bit],
) -> Result<(Vec<u8>, RecordTail<<P::Backend as Gates>::Bit>), PhaseError> {
    let (keystream, tail) = masks.split_at(8 * len);
    Ok(match d {
        ClientDirection::AesGcm(d) => {
            let masked = record::masked_keystream(p, ch, d, seq, len, &Input::Wires(keystream)).await?;
            (masked, RecordTail::J0(j0_share(p, ch, d, seq, &Input::Wires(tail)).await?))
        }
        ClientDirection::ChaCha20Poly1305(d) => {
            let masked = chacha_record::masked_keystream(p, ch, d, seq, len, &Input::Wires(keystream)).await?;
            let (s, masked_r) = chacha_record::one_time_key(p, ch, d, seq, &Input::Wires(tail)).await?;
            (masked, RecordTail::OneTimeKey { s, masked_r })
        }
    })
}
