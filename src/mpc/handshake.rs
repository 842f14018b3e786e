//! The end of a TLS 1.2 handshake in two parties, from additive shares of the premaster
//! secret: the garbled key derivation and the client Finished record sealed by both. The
//! server's Finished is not checked here: the client sends its request without waiting for it
//! (False Start), and it is checked after the connection, with the keys opened (docs/protocol.md,
//! "A connection in two parties"). The prover is the garbler and the OLE sender; its masks (for
//! the client direction's GHASH key and E_K(J0), and the client Finished's keystream) are fresh
//! inputs of its own.

use super::ecdh::{ReceiverCots, SenderCots};
use super::garbled::{EvaluatorParty, GarblerParty};
use super::ghash::{block_to_field, cots_for_powers, powers_a, powers_b, GhashError, PowerShares};
use super::kdf::{derive, KdfInputs};
use super::phases::{Input, PhaseError};
use super::poly1305::TagCots;
use super::record::{
    self, direction, ghash_key_share, j0_share, masked_keystream, Direction, RecordError, RecordLayer, MAX_CIPHERTEXT,
};
use super::sealing::ClientDirection;
use crate::channel::Channel;
use crate::circuits::bytes_to_bits;
use crate::gc::{Evaluator, Garbler, Table, Wire};
use zeroize::Zeroizing;

const HANDSHAKE: u8 = 22;
/// The prover's 16-byte masks, in input order.
const MASK_CLIENT_H: usize = 0;
const MASK_CLIENT_J0: usize = 1;
const MASK_CLIENT_KS: usize = 2;
pub(crate) const MASKS: usize = 3;

/// The prover's inputs to the handshake's circuits: its premaster share (in its group's
/// encoding, [`super::shared_secret::SharedGroup`]) and its masks (for the client direction's
/// GHASH key and E_K(J0), and the client Finished's keystream).
pub(crate) struct HandshakeInputs {
    pub share: Zeroizing<[u8; 32]>,
    pub masks: Zeroizing<[[u8; 16]; MASKS]>,
}

impl HandshakeInputs {
    /// Fresh masks for `share`.
    pub(crate) fn new(share: Zeroizing<[u8; 32]>) -> Self {
        HandshakeInputs { share, masks: Zeroizing::new(rand::random()) }
    }

    /// The input bytes in circuit order: the share, then the masks.
    pub(crate) fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new([&self.share[..], &self.masks.concat()].concat())
    }
}

/// COTs for the verifier's premaster share's labels (the garbling Δ must be their correlation).
pub(crate) const INPUT_COTS: usize = 256;

/// The highest power of the client direction's GHASH key its tags need for records of up to
/// `len` plaintext bytes (at most 2^14): one for the additional data, one per block, one for
/// the lengths.
pub(crate) fn powers_for_records(len: usize) -> usize {
    2 + len.clamp(16, MAX_CIPHERTEXT).div_ceil(16)
}

/// Why the handshake's end failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error(transparent)]
    Phase(#[from] PhaseError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Ghash(#[from] GhashError),
    #[error("the verifier decoded no share of {0}")]
    Malformed(&'static str),
}

/// Checks a party's count of OLE COTs for `powers` before any work.
pub(crate) fn check_ole_cots(got: usize, powers: usize) -> Result<(), HandshakeError> {
    let expected = cots_for_powers(powers);
    if got != expected {
        return Err(GhashError::from(super::ole::OleError::CountMismatch {
            what: "COTs for the records' GHASH",
            expected,
            got,
        })
        .into());
    }
    Ok(())
}

pub(crate) type GarbledBackend = Garbler<Vec<Table>>;
pub(crate) type EvaluatedBackend = Evaluator<std::vec::IntoIter<Table>>;

/// What a party holds for the records after the handshake: the client direction on wires and
/// what its tags take (the server's records are only forwarded: docs/protocol.md, "A
/// connection in two parties").
pub(crate) struct RecordKeys<B: crate::circuits::Circuit> {
    pub client: ClientDirection<B>,
    /// The client write key and IV (salt) as wires, for circuits garbled ahead of them.
    pub client_key_and_salt: Vec<B::Bit>,
    pub tags: TagKeys,
    /// The verifier's input wires (its share of the key exchange's secret, then its share of
    /// each ChaCha20-Poly1305 record's polynomial): the zero labels on the garbler, the labels
    /// it holds on the evaluator (which it publishes after the connection).
    pub verifier_input: Vec<Wire>,
    /// The verifier's inputs after its share, as it publishes them with it: its Poly1305
    /// shares (empty on the prover's side, and for AES-GCM).
    pub verifier_values: Vec<u8>,
}

/// What a party's records' tags take.
pub(crate) enum TagKeys {
    /// AES-GCM: its shares of the powers of the direction's GHASH key.
    Ghash(PowerShares),
    /// ChaCha20-Poly1305: the COTs for each record's Poly1305 OLEs and the verifier's share
    /// into its tag phase.
    Poly1305(TagCots),
}

impl<B: crate::circuits::Circuit> RecordKeys<B> {
    /// AES-GCM keys, as the TLS 1.2 handshake and TLS 1.3's AES-128-GCM give them.
    pub(crate) fn aes_gcm(
        d: Direction<B>,
        key_and_salt: Vec<B::Bit>,
        powers: PowerShares,
        verifier: Vec<Wire>,
    ) -> Self {
        RecordKeys {
            client: ClientDirection::AesGcm(d),
            client_key_and_salt: key_and_salt,
            tags: TagKeys::Ghash(powers),
            verifier_input: verifier,
            verifier_values: Vec::new(),
        }
    }
}

fn mask(wires: &[Wire], i: usize) -> Input<'_, GarbledBackend> {
    Input::Wires(&wires[128 * i..128 * (i + 1)])
}

fn mask_e(wires: &[Wire], i: usize) -> Input<'_, EvaluatedBackend> {
    Input::Wires(&wires[128 * i..128 * (i + 1)])
}

/// The prover's side up to its Finished: from its premaster share, the COT keys of the
/// verifier's share's [`INPUT_COTS`] labels (under the garbler's Δ) and
/// [`cots_for_powers`]`(powers)` COTs for the OLEs of the client direction's GHASH powers.
/// Returns the client Finished record's body (explicit nonce ‖ ciphertext ‖ tag), what the
/// records take, and the Finished's verify_data (revealed: the client sends it).
pub(crate) async fn client_finished_prover<C: Channel>(
    gp: &mut GarblerParty,
    ch: &mut C,
    inputs: &HandshakeInputs,
    input_keys: &[u128],
    ole: SenderCots<'_>,
    kdf: &KdfInputs,
    powers: usize,
) -> Result<(Vec<u8>, RecordKeys<GarbledBackend>, [u8; 12]), HandshakeError> {
    check_ole_cots(ole.keys.len(), powers)?;
    let masks = &inputs.masks;
    let mine = gp.own_inputs(ch, &bytes_to_bits(&inputs.to_bytes())).await?;
    let theirs = gp.peer_inputs(ch, input_keys).await?;
    let keys = derive(gp, ch, Input::Wires(&mine[..256]), Input::Wires(&theirs), kdf).await?;
    let mask_wires = &mine[256..];
    let d = direction(gp, ch, RecordLayer::Tls12, &keys.client_write_key, &keys.client_write_iv).await?;
    ghash_key_share(gp, ch, &d, &mask(mask_wires, MASK_CLIENT_H)).await?;
    j0_share(gp, ch, &d, 0, &mask(mask_wires, MASK_CLIENT_J0)).await?;
    let ks = masked_keystream(gp, ch, &d, 0, 16, &mask(mask_wires, MASK_CLIENT_KS)).await?;
    let client_powers =
        powers_a(ch, block_to_field(masks[MASK_CLIENT_H]), powers, ole.delta, ole.keys, ole.first).await?;
    let finished = crate::tls::codec::handshake_message(crate::tls::codec::hs::FINISHED, &keys.client_verify_data);
    let ciphertext: Vec<u8> =
        finished.iter().zip(ks.iter().zip(&masks[MASK_CLIENT_KS])).map(|(p, (m, k))| p ^ m ^ k).collect();
    let body =
        record::seal_prover(ch, &client_powers, RecordLayer::Tls12, 0, HANDSHAKE, &ciphertext, masks[MASK_CLIENT_J0])
            .await?;
    let client_key_and_salt = [&keys.client_write_key[..], &keys.client_write_iv].concat();
    Ok((body, RecordKeys::aes_gcm(d, client_key_and_salt, client_powers, theirs), keys.client_verify_data))
}

/// The verifier's side up to the client Finished: its premaster share with the COT choices
/// and MACs of its labels, and its side of the OLE COTs. Returns the Finished record's
/// ciphertext, as the server receives it, what the records take and the verify_data.
pub(crate) async fn client_finished_verifier<C: Channel>(
    ep: &mut EvaluatorParty,
    ch: &mut C,
    v_share: &[u8; 32],
    input: (&[bool], &[u128]),
    ole: ReceiverCots<'_>,
    kdf: &KdfInputs,
    powers: usize,
) -> Result<(Vec<u8>, RecordKeys<EvaluatedBackend>, [u8; 12]), HandshakeError> {
    check_ole_cots(ole.choices.len(), powers).and(check_ole_cots(ole.macs.len(), powers))?;
    let theirs = ep.peer_inputs(ch, 256 + 128 * MASKS).await?;
    let mine = ep.own_inputs(ch, &bytes_to_bits(v_share), input.0, input.1).await?;
    let keys = derive(ep, ch, Input::Wires(&theirs[..256]), Input::Wires(&mine), kdf).await?;
    let mask_wires = &theirs[256..];
    let d = direction(ep, ch, RecordLayer::Tls12, &keys.client_write_key, &keys.client_write_iv).await?;
    let h = ghash_key_share(ep, ch, &d, &mask_e(mask_wires, MASK_CLIENT_H))
        .await?
        .ok_or(HandshakeError::Malformed("the GHASH key"))?;
    let j0 = j0_share(ep, ch, &d, 0, &mask_e(mask_wires, MASK_CLIENT_J0))
        .await?
        .ok_or(HandshakeError::Malformed("E_K(J0)"))?;
    masked_keystream(ep, ch, &d, 0, 16, &mask_e(mask_wires, MASK_CLIENT_KS)).await?;
    let client_powers = powers_b(ch, block_to_field(h), powers, ole.choices, ole.macs, ole.first).await?;
    let seen = record::seal_verifier(ch, &client_powers, RecordLayer::Tls12, 0, HANDSHAKE, j0, 16).await?;
    let client_key_and_salt = [&keys.client_write_key[..], &keys.client_write_iv].concat();
    Ok((seen, RecordKeys::aes_gcm(d, client_key_and_salt, client_powers, mine), keys.client_verify_data))
}
