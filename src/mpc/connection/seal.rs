//! One record sealed in two parties: AES-GCM's keystream and tag mask garbled, the
//! ciphertext and tag computed by the prover, checked by the verifier.

use super::*;
use crate::channel::Channel;
use crate::circuits::bytes_to_bits;
use crate::mpc::garbled::{EvaluatorParty, GarblerParty};
use crate::mpc::handshake::{EvaluatedBackend, GarbledBackend, RecordKeys};
use crate::mpc::phases::Input;
use crate::mpc::record::{j0_share, masked_keystream, seal_prover, seal_verifier};
use crate::tls::codec::{ContentType, MAX_PLAINTEXT};
use crate::zk::Party;

/// P: one record of `content_type` with `plaintext` (≤ 2^14 bytes) under sequence number
/// `seq`. Announces its length, commits masks for its keystream and E_K(J0), encrypts with
/// the unmasked keystream, gets the tag with V and sends V the tag. Returns the record's body.
/// An empty announcement (length 0) ends the request.
pub(super) async fn seal_record_prover<C: Channel, Z: Party<C>>(
    gp: &mut GarblerParty,
    ch: &mut C,
    zk: &mut Z,
    keys: &RecordKeys<GarbledBackend>,
    seq: u64,
    content_type: ContentType,
    plaintext: &[u8],
) -> Result<(Vec<u8>, Vec<Bit<Z, C>>), ConnectionError> {
    let len = plaintext.len();
    ch.send((len as u32).to_be_bytes().to_vec()).await?;
    let ks_mask: Vec<u8> = (0..len).map(|_| rand::random()).collect();
    let j0_mask: [u8; 16] = rand::random();
    let masks = [&ks_mask[..], &j0_mask].concat();
    let committed = commit(zk, ch, &masks).await?;
    let wires = gp.own_inputs(ch, &bytes_to_bits(&masks)).await?;
    let masked = masked_keystream(gp, ch, &keys.client, seq, len, &Input::Wires(&wires[..8 * len])).await?;
    j0_share(gp, ch, &keys.client, seq, &Input::Wires(&wires[8 * len..])).await?;
    Ok((encrypt_and_seal(ch, keys, seq, content_type, plaintext, &masked, &masks).await?, committed))
}

/// P: encrypts `plaintext` with the keystream (the revealed `masked` one under the first
/// bytes of `masks`, whose last 16 are its share of E_K(J0)), gets the tag with V and sends
/// V the tag. Returns the record's body.
pub(super) async fn encrypt_and_seal<C: Channel>(
    ch: &mut C,
    keys: &RecordKeys<GarbledBackend>,
    seq: u64,
    content_type: ContentType,
    plaintext: &[u8],
    masked: &[u8],
    masks: &[u8],
) -> Result<Vec<u8>, ConnectionError> {
    let ciphertext: Vec<u8> = plaintext.iter().zip(masked.iter().zip(masks)).map(|(p, (m, k))| p ^ m ^ k).collect();
    let j0_mask: [u8; 16] = masks[masks.len() - 16..]
        .try_into()
        .map_err(|_| ConnectionError::Malformed("masks end with 16 bytes for E_K(J0)"))?;
    let layer = keys.client.layer();
    let body = seal_prover(ch, &keys.client_powers, layer, seq, content_type as u8, &ciphertext, j0_mask).await?;
    ch.send(body[body.len() - 16..].to_vec()).await?;
    Ok(body)
}

/// V: the other side of [`seal_record_prover`], with at most `budget` bytes allowed (what is
/// left of max_sent). Returns the record's body, or `None` when P announces the end of the
/// request.
pub(super) async fn seal_record_verifier<C: Channel, Z: Party<C>>(
    ep: &mut EvaluatorParty,
    ch: &mut C,
    zk: &mut Z,
    keys: &RecordKeys<EvaluatedBackend>,
    seq: u64,
    content_type: ContentType,
    budget: usize,
) -> Result<Option<(Vec<u8>, Vec<Bit<Z, C>>)>, ConnectionError> {
    let len: [u8; 4] =
        ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("a record length is 4 bytes"))?;
    let len = u32::from_be_bytes(len) as usize;
    if len == 0 {
        return Ok(None);
    }
    if len > budget.min(MAX_PLAINTEXT) {
        return Err(ConnectionError::TooMuchSent { limit: budget.min(MAX_PLAINTEXT) });
    }
    let committed = take_commitment(zk, ch, len + 16).await?;
    let wires = ep.peer_inputs(ch, 8 * (len + 16)).await?;
    masked_keystream(ep, ch, &keys.client, seq, len, &Input::Wires(&wires[..8 * len])).await?;
    let j0 = j0_share(ep, ch, &keys.client, seq, &Input::Wires(&wires[8 * len..]))
        .await?
        .ok_or(ConnectionError::Malformed("no share of E_K(J0)"))?;
    Ok(Some((take_sealed(ch, keys, seq, content_type, j0, len).await?, committed)))
}

/// V: the other side of [`encrypt_and_seal`] for a record of `len` bytes: answers its tag
/// share for the ciphertext P sends, takes the tag. Returns the record's body.
pub(super) async fn take_sealed<C: Channel>(
    ch: &mut C,
    keys: &RecordKeys<EvaluatedBackend>,
    seq: u64,
    content_type: ContentType,
    j0: [u8; 16],
    len: usize,
) -> Result<Vec<u8>, ConnectionError> {
    let layer = keys.client.layer();
    let ciphertext = seal_verifier(ch, &keys.client_powers, layer, seq, content_type as u8, j0, len).await?;
    let tag = tag_from(&ch.recv().await?)?;
    Ok([&layer.explicit_nonce(seq)[..], &ciphertext, &tag].concat())
}
