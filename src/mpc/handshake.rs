//! The end of a TLS 1.2 handshake in two parties, from additive shares of the premaster
//! secret: the garbled key derivation, the client Finished record sealed by both, and the
//! server Finished record checked by both (its tag, then its verify_data). The prover is the
//! garbler and the OLE sender; its masks (for the GHASH key and E_K(J0) of each direction and
//! the client Finished's keystream) are fresh inputs of its own.

use super::ecdh::{ReceiverCots, SenderCots};
use super::finished::{check_length, check_server_finished, FinishedError};
use super::fp::Fp;
use super::garbled::{EvaluatorParty, GarblerParty};
use super::ghash::{block_to_field, cots_for_powers, powers_a, powers_b, GhashError, PowerShares};
use super::kdf::{derive, KdfInputs, SessionKeys};
use super::phases::{Input, PhaseError};
use super::record::{self, direction, ghash_key_share, j0_share, masked_keystream, split_body, Direction, RecordError, MAX_CIPHERTEXT};
use crate::channel::Channel;
use crate::circuits::bytes_to_bits;
use crate::gc::{Evaluator, Garbler, Table, Wire};

const HANDSHAKE: u8 = 22;
/// The prover's 16-byte masks, in input order.
const MASK_CLIENT_H: usize = 0;
const MASK_CLIENT_J0: usize = 1;
const MASK_CLIENT_KS: usize = 2;
const MASK_SERVER_H: usize = 3;
const MASK_SERVER_J0: usize = 4;
pub const MASKS: usize = 5;

/// The prover's inputs to the handshake's circuits: its premaster share and its masks (for
/// the GHASH key and E_K(J0) of each direction and the client Finished's keystream).
pub struct HandshakeInputs {
    pub share: Fp,
    pub masks: [[u8; 16]; MASKS],
}

impl HandshakeInputs {
    /// Fresh masks for `share`.
    pub fn new(share: Fp) -> Self {
        HandshakeInputs { share, masks: rand::random() }
    }

    /// The input bytes in circuit order: the share (32 bytes, big-endian), then the masks.
    pub fn to_bytes(&self) -> zeroize::Zeroizing<Vec<u8>> {
        zeroize::Zeroizing::new([self.share.to_be_bytes().to_vec(), self.masks.concat()].concat())
    }
}

impl Drop for HandshakeInputs {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.masks);
        self.share = Fp::ZERO;
    }
}

/// COTs for the verifier's premaster share's labels (the garbling Δ must be their correlation).
pub const INPUT_COTS: usize = 256;

/// The highest power of the GHASH key each direction's tags need: one for the additional
/// data, one per block of the longest record, one for the lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Powers {
    pub client: usize,
    pub server: usize,
}

impl Powers {
    /// Enough for the two Finished records (one block each).
    pub const FINISHED: Powers = Powers { client: 3, server: 3 };

    /// For records of up to `client` and `server` plaintext bytes (at most 2^14 each).
    pub fn for_records(client: usize, server: usize) -> Powers {
        let p = |len: usize| 2 + len.clamp(16, MAX_CIPHERTEXT).div_ceil(16);
        Powers { client: p(client), server: p(server) }
    }
}

/// COTs for the OLEs of both directions' GHASH powers (any correlation of the prover's).
pub fn ole_cots(powers: Powers) -> usize {
    cots_for_powers(powers.client) + cots_for_powers(powers.server)
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
    #[error(transparent)]
    Finished(#[from] FinishedError),
    #[error("the server Finished record is malformed")]
    Malformed,
}

/// Checks a party's count of OLE COTs before any work; returns the client direction's part.
fn check_ole_cots(got: usize, powers: Powers) -> Result<usize, HandshakeError> {
    if got != ole_cots(powers) {
        return Err(GhashError::from(super::ole::OleError::CountMismatch { what: "COTs for the records' GHASH", expected: ole_cots(powers), got }).into());
    }
    Ok(cots_for_powers(powers.client))
}

pub type GarbledBackend = Garbler<Vec<Table>>;
pub type EvaluatedBackend = Evaluator<std::vec::IntoIter<Table>>;

/// The prover's state between its client Finished and the server's.
pub struct ProverHandshake {
    pub keys: SessionKeys<GarbledBackend>,
    client: Direction<GarbledBackend>,
    client_powers: PowerShares,
    server_powers: usize,
    masks: [[u8; 16]; MASKS],
    mask_wires: Vec<Wire>,
    server_ole_keys: Vec<crate::primitives::field::F128>,
    ole_delta: crate::primitives::field::F128,
    server_ole_first: u64,
    verifier_input: Vec<Wire>,
}

/// The verifier's state between the client Finished and the server's.
pub struct VerifierHandshake {
    pub keys: SessionKeys<EvaluatedBackend>,
    client: Direction<EvaluatedBackend>,
    client_powers: PowerShares,
    server_powers: usize,
    mask_wires: Vec<Wire>,
    server_ole_choices: Vec<bool>,
    server_ole_macs: Vec<crate::primitives::field::F128>,
    server_ole_first: u64,
    verifier_input: Vec<Wire>,
}

/// What a party holds for the records after the handshake: the client direction's garbled
/// AES and its share of the powers of that direction's GHASH key (the server's records are
/// only forwarded: docs/protocol.md, "A connection in two parties").
pub struct RecordKeys<B: crate::circuits::Circuit> {
    pub client: Direction<B>,
    /// The client write key and IV (salt) as wires, for circuits garbled ahead of them.
    pub client_key_and_salt: Vec<B::Bit>,
    pub client_powers: PowerShares,
    /// The verifier's premaster share's input wires: the zero labels on the garbler, the
    /// labels it holds on the evaluator (which it publishes after the connection).
    pub verifier_input: Vec<Wire>,
}

fn mask(wires: &[Wire], i: usize) -> Input<'_, GarbledBackend> {
    Input::Wires(&wires[128 * i..128 * (i + 1)])
}

fn mask_e(wires: &[Wire], i: usize) -> Input<'_, EvaluatedBackend> {
    Input::Wires(&wires[128 * i..128 * (i + 1)])
}

/// The prover's side up to its Finished: from its premaster share, the COT keys of the
/// verifier's share's [`INPUT_COTS`] labels (under the garbler's Δ) and [`ole_cots`] COTs for
/// the OLEs of `powers`. Returns the client Finished record's body (explicit nonce ‖
/// ciphertext ‖ tag).
pub async fn client_finished_prover<C: Channel>(gp: &mut GarblerParty, ch: &mut C, inputs: &HandshakeInputs, input_keys: &[u128], ole: SenderCots<'_>, kdf: &KdfInputs, powers: Powers) -> Result<(Vec<u8>, ProverHandshake), HandshakeError> {
    let half = check_ole_cots(ole.keys.len(), powers)?;
    let masks = inputs.masks;
    let mine = gp.own_inputs(ch, &bytes_to_bits(&inputs.to_bytes())).await?;
    let theirs = gp.peer_inputs(ch, input_keys).await?;
    let keys = derive(gp, ch, Input::Wires(&mine[..256]), Input::Wires(&theirs), kdf).await?;
    let mask_wires = mine[256..].to_vec();
    let d = direction(gp, ch, &keys.client_write_key, &keys.client_write_iv).await?;
    ghash_key_share(gp, ch, &d, &mask(&mask_wires, MASK_CLIENT_H)).await?;
    j0_share(gp, ch, &d, 0, &mask(&mask_wires, MASK_CLIENT_J0)).await?;
    let ks = masked_keystream(gp, ch, &d, 0, 16, &mask(&mask_wires, MASK_CLIENT_KS)).await?;
    let client_powers = powers_a(ch, block_to_field(masks[MASK_CLIENT_H]), powers.client, ole.delta, &ole.keys[..half], ole.first).await?;
    let finished = [&[20u8, 0, 0, 12][..], &keys.client_verify_data].concat();
    let ciphertext: Vec<u8> = finished.iter().zip(ks.iter().zip(&masks[MASK_CLIENT_KS])).map(|(p, (m, k))| p ^ m ^ k).collect();
    let body = record::seal_prover(ch, &client_powers, 0, HANDSHAKE, &ciphertext, masks[MASK_CLIENT_J0]).await?;
    let state = ProverHandshake { keys, client: d, client_powers, server_powers: powers.server, masks, mask_wires, server_ole_keys: ole.keys[half..].to_vec(), ole_delta: ole.delta, server_ole_first: ole.first + half as u64, verifier_input: theirs };
    Ok((body, state))
}

/// The verifier's side up to the client Finished: its premaster share with the COT choices
/// and MACs of its labels, and its side of the OLE COTs. Returns the Finished record's
/// ciphertext, as the server receives it.
pub async fn client_finished_verifier<C: Channel>(ep: &mut EvaluatorParty, ch: &mut C, v_share: &Fp, input: (&[bool], &[u128]), ole: ReceiverCots<'_>, kdf: &KdfInputs, powers: Powers) -> Result<(Vec<u8>, VerifierHandshake), HandshakeError> {
    let half = check_ole_cots(ole.choices.len(), powers).and(check_ole_cots(ole.macs.len(), powers))?;
    let theirs = ep.peer_inputs(ch, 256 + 128 * MASKS).await?;
    let mine = ep.own_inputs(ch, &bytes_to_bits(&v_share.to_be_bytes()), input.0, input.1).await?;
    let keys = derive(ep, ch, Input::Wires(&theirs[..256]), Input::Wires(&mine), kdf).await?;
    let mask_wires = theirs[256..].to_vec();
    let d = direction(ep, ch, &keys.client_write_key, &keys.client_write_iv).await?;
    let h = ghash_key_share(ep, ch, &d, &mask_e(&mask_wires, MASK_CLIENT_H)).await?.ok_or(HandshakeError::Malformed)?;
    let j0 = j0_share(ep, ch, &d, 0, &mask_e(&mask_wires, MASK_CLIENT_J0)).await?.ok_or(HandshakeError::Malformed)?;
    masked_keystream(ep, ch, &d, 0, 16, &mask_e(&mask_wires, MASK_CLIENT_KS)).await?;
    let client_powers = powers_b(ch, block_to_field(h), powers.client, &ole.choices[..half], &ole.macs[..half], ole.first).await?;
    let seen = record::seal_verifier(ch, &client_powers, 0, HANDSHAKE, j0, 16).await?;
    let state = VerifierHandshake { keys, client: d, client_powers, server_powers: powers.server, mask_wires, server_ole_choices: ole.choices[half..].to_vec(), server_ole_macs: ole.macs[half..].to_vec(), server_ole_first: ole.first + half as u64, verifier_input: mine };
    Ok((seen, state))
}

/// The prover's side of the server Finished record `body`, which the verifier already holds
/// as it arrived: both check its tag and its verify_data over `handshake_hash`.
pub async fn server_finished_prover<C: Channel>(gp: &mut GarblerParty, ch: &mut C, s: ProverHandshake, body: &[u8], handshake_hash: &[u8; 32]) -> Result<RecordKeys<GarbledBackend>, HandshakeError> {
    let (nonce, ciphertext, _) = split_body(body).ok_or(HandshakeError::Malformed)?;
    check_length(ciphertext)?;
    let d = direction(gp, ch, &s.keys.server_write_key, &s.keys.server_write_iv).await?;
    ghash_key_share(gp, ch, &d, &mask(&s.mask_wires, MASK_SERVER_H)).await?;
    j0_share(gp, ch, &d, nonce, &mask(&s.mask_wires, MASK_SERVER_J0)).await?;
    let powers = powers_a(ch, block_to_field(s.masks[MASK_SERVER_H]), s.server_powers, s.ole_delta, &s.server_ole_keys, s.server_ole_first).await?;
    record::check_prover(ch, &powers, 0, HANDSHAKE, body, s.masks[MASK_SERVER_J0]).await?;
    check_server_finished(gp, ch, &s.keys, &d, handshake_hash, nonce, ciphertext).await?;
    let client_key_and_salt = [&s.keys.client_write_key[..], &s.keys.client_write_iv].concat();
    Ok(RecordKeys { client: s.client, client_key_and_salt, client_powers: s.client_powers, verifier_input: s.verifier_input })
}

/// The verifier's side of the server Finished record `body` (as the prover forwarded it, the
/// first server record the verifier holds): checks it with the prover.
pub async fn server_finished_verifier<C: Channel>(ep: &mut EvaluatorParty, ch: &mut C, s: VerifierHandshake, body: &[u8], handshake_hash: &[u8; 32]) -> Result<RecordKeys<EvaluatedBackend>, HandshakeError> {
    let (nonce, ciphertext, _) = split_body(body).ok_or(HandshakeError::Malformed)?;
    check_length(ciphertext)?;
    let d = direction(ep, ch, &s.keys.server_write_key, &s.keys.server_write_iv).await?;
    let h = ghash_key_share(ep, ch, &d, &mask_e(&s.mask_wires, MASK_SERVER_H)).await?.ok_or(HandshakeError::Malformed)?;
    let j0 = j0_share(ep, ch, &d, nonce, &mask_e(&s.mask_wires, MASK_SERVER_J0)).await?.ok_or(HandshakeError::Malformed)?;
    let powers: PowerShares = powers_b(ch, block_to_field(h), s.server_powers, &s.server_ole_choices, &s.server_ole_macs, s.server_ole_first).await?;
    record::check_verifier(ch, &powers, 0, HANDSHAKE, body, j0).await?;
    check_server_finished(ep, ch, &s.keys, &d, handshake_hash, nonce, ciphertext).await?;
    let client_key_and_salt = [&s.keys.client_write_key[..], &s.keys.client_write_iv].concat();
    Ok(RecordKeys { client: s.client, client_key_and_salt, client_powers: s.client_powers, verifier_input: s.verifier_input })
}
