//! One record sealed in two parties: its keystream and tail garbled ([`record_phases`]), the
//! ciphertext computed by the prover, the tag made with the verifier (AES-GCM: GHASH on
//! shares and E_K(J0)'s; ChaCha20-Poly1305: the Poly1305 OLEs and the tag phase), both
//! checked by the verifier.

use super::*;
use crate::channel::Channel;
use crate::circuits::bytes_to_bits;
use crate::mpc::chacha_record::{tag, R_MASK_BYTES};
use crate::mpc::f1305::F1305_BYTES;
use crate::mpc::garbled::{EvaluatorParty, GarblerParty};
use crate::mpc::handshake::{EvaluatedBackend, GarbledBackend, RecordKeys, TagKeys};
use crate::mpc::phases::Input;
use crate::mpc::poly1305::{block_count, message_blocks, tag_share_prover, tag_share_verifier, OLE_COTS};
use crate::mpc::record::{ciphertext_of, seal_prover, seal_verifier};
use crate::mpc::sealing::{record_phases, ClientDirection, RecordCipher, RecordTail};
use crate::tls::codec::{ContentType, MAX_PLAINTEXT};
use crate::zk::Party;
use zeroize::Zeroizing;

impl<B: crate::circuits::Circuit> RecordKeys<B> {
    pub(super) fn cipher(&self) -> RecordCipher {
        match self.client {
            ClientDirection::AesGcm(_) => RecordCipher::AesGcm,
            ClientDirection::ChaCha20Poly1305(_) => RecordCipher::ChaCha20Poly1305,
        }
    }

    fn layer(&self) -> RecordLayer {
        match &self.client {
            ClientDirection::AesGcm(d) => d.layer(),
            ClientDirection::ChaCha20Poly1305(_) => RecordLayer::Tls13,
        }
    }
}

/// P: one record of `content_type` with `plaintext` (≤ 2^14 bytes) under sequence number
/// `seq`. Announces its length, commits its masks (keystream, then the cipher's tail), runs
/// the record's phases, encrypts and has the tag made ([`encrypt_and_seal`]). Returns the
/// record's body and the inputs it committed. An empty announcement (length 0) ends the
/// request.
pub(super) async fn seal_record_prover<C: Channel, Z: Party<C>>(
    gp: &mut GarblerParty,
    ch: &mut C,
    zk: &mut Z,
    keys: &mut RecordKeys<GarbledBackend>,
    seq: u64,
    content_type: ContentType,
    plaintext: &[u8],
) -> Result<(Vec<u8>, Vec<Bit<Z, C>>), ConnectionError> {
    let len = plaintext.len();
    ch.send((len as u32).to_be_bytes().to_vec()).await?;
    let masks: Vec<u8> = (0..len + keys.cipher().tail_mask()).map(|_| rand::random()).collect();
    let mut committed = commit(zk, ch, &masks).await?;
    let wires = gp.own_inputs(ch, &bytes_to_bits(&masks)).await?;
    let (masked, tail) = record_phases(gp, ch, &keys.client, seq, len, &wires).await?;
    let (body, for_tag) =
        encrypt_and_seal(gp, ch, zk, keys, seq, content_type, plaintext, (&masked, &masks), tail).await?;
    committed.extend(for_tag);
    Ok((body, committed))
}

/// P: encrypts `plaintext` with the keystream (the revealed `masked` one under the first
/// bytes of `masks`, whose tail follows) and has the tag made with V: AES-GCM's from its GHASH
/// powers and E_K(J0) shares (V answers its tag share for the ciphertext, P sends the tag);
/// ChaCha20-Poly1305's by sending V the ciphertext, the Poly1305 OLEs and the tag phase over
/// the shares, P's committed before its labels. Returns the record's body and the inputs
/// committed for the tag.
#[allow(clippy::too_many_arguments)]
pub(super) async fn encrypt_and_seal<C: Channel, Z: Party<C>>(
    gp: &mut GarblerParty,
    ch: &mut C,
    zk: &mut Z,
    keys: &mut RecordKeys<GarbledBackend>,
    seq: u64,
    content_type: ContentType,
    plaintext: &[u8],
    (masked, masks): (&[u8], &[u8]),
    tail: RecordTail<crate::gc::Wire>,
) -> Result<(Vec<u8>, Vec<Bit<Z, C>>), ConnectionError> {
    let len = plaintext.len();
    let ciphertext: Vec<u8> = plaintext.iter().zip(masked.iter().zip(masks)).map(|(p, (m, k))| p ^ m ^ k).collect();
    let tail_mask = &masks[len..];
    let layer = keys.layer();
    let aad = layer.additional_data(seq, content_type as u8, len);
    match (&mut keys.tags, tail) {
        (TagKeys::Ghash(powers), RecordTail::J0(_)) => {
            let j0_mask: [u8; 16] =
                tail_mask.try_into().map_err(|_| ConnectionError::Malformed("16 bytes of mask for E_K(J0)"))?;
            let body = seal_prover(ch, powers, layer, seq, content_type as u8, &ciphertext, j0_mask).await?;
            ch.send(body[body.len() - 16..].to_vec()).await?;
            Ok((body, Vec::new()))
        }
        (TagKeys::Poly1305(cots), RecordTail::OneTimeKey { s, .. }) => {
            let r_mask: [u8; R_MASK_BYTES] =
                tail_mask.try_into().map_err(|_| ConnectionError::Malformed("24 bytes of mask for r"))?;
            ch.send(ciphertext.clone()).await?;
            let blocks = message_blocks(&aad, &ciphertext);
            let x = Zeroizing::new(
                tag_share_prover(ch, &r_mask, &blocks, cots.take_sender(OLE_COTS * (blocks.len() + 1))?).await?,
            );
            let committed = commit(zk, ch, &x[..]).await?;
            let x_wires = gp.own_inputs(ch, &bytes_to_bits(&x[..])).await?;
            let y_keys: Vec<u128> = cots.take_sender(OLE_COTS)?.keys.iter().map(|k| k.0).collect();
            let y_wires = gp.peer_inputs(ch, &y_keys).await?;
            let t =
                gp.online(async |gp| tag(gp, ch, &s, &Input::Wires(&x_wires), &Input::Wires(&y_wires)).await).await?;
            keys.verifier_input.extend(y_wires);
            Ok(([ciphertext, t.to_vec()].concat(), committed))
        }
        _ => Err(ConnectionError::Malformed("a record's phases of another suite than its keys")),
    }
}

/// V: the other side of [`seal_record_prover`], with at most `budget` bytes allowed (what is
/// left of max_sent). Returns the record's body and P's inputs committed for it, or `None`
/// when P announces the end of the request.
pub(super) async fn seal_record_verifier<C: Channel, Z: Party<C>>(
    ep: &mut EvaluatorParty,
    ch: &mut C,
    zk: &mut Z,
    keys: &mut RecordKeys<EvaluatedBackend>,
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
    let masks = len + keys.cipher().tail_mask();
    let mut committed = take_commitment(zk, ch, masks).await?;
    let wires = ep.peer_inputs(ch, 8 * masks).await?;
    let (_, tail) = record_phases(ep, ch, &keys.client, seq, len, &wires).await?;
    let (body, for_tag) = take_sealed(ep, ch, zk, keys, seq, content_type, len, tail).await?;
    committed.extend(for_tag);
    Ok(Some((body, committed)))
}

/// V: the other side of [`encrypt_and_seal`] for a record of `len` bytes: takes the
/// ciphertext and makes the tag with P (refusing a ciphertext of another length). Returns the
/// record's body and P's inputs committed for the tag.
#[allow(clippy::too_many_arguments)]
pub(super) async fn take_sealed<C: Channel, Z: Party<C>>(
    ep: &mut EvaluatorParty,
    ch: &mut C,
    zk: &mut Z,
    keys: &mut RecordKeys<EvaluatedBackend>,
    seq: u64,
    content_type: ContentType,
    len: usize,
    tail: RecordTail<crate::gc::Wire>,
) -> Result<(Vec<u8>, Vec<Bit<Z, C>>), ConnectionError> {
    let layer = keys.layer();
    match (&mut keys.tags, tail) {
        (TagKeys::Ghash(powers), RecordTail::J0(j0)) => {
            let j0 = j0.ok_or(ConnectionError::Malformed("no share of E_K(J0)"))?;
            let ciphertext = seal_verifier(ch, powers, layer, seq, content_type as u8, j0, len).await?;
            let tag = tag_from(&ch.recv().await?)?;
            Ok(([&layer.explicit_nonce(seq)[..], &ciphertext, &tag].concat(), Vec::new()))
        }
        (TagKeys::Poly1305(cots), RecordTail::OneTimeKey { s, masked_r }) => {
            let masked_r = masked_r.ok_or(ConnectionError::Malformed("no r + m"))?;
            let msg = ch.recv().await?;
            let ciphertext = ciphertext_of(layer, &msg, seq, len)?.to_vec();
            let blocks = block_count(5, len);
            let y = Zeroizing::new(
                tag_share_verifier(ch, &masked_r, blocks, cots.take_receiver(OLE_COTS * (blocks + 1))?).await?,
            );
            let committed = take_commitment(zk, ch, F1305_BYTES).await?;
            let x_wires = ep.peer_inputs(ch, 8 * F1305_BYTES).await?;
            let rc = cots.take_receiver(OLE_COTS)?;
            let macs: Vec<u128> = rc.macs.iter().map(|m| m.0).collect();
            let y_wires = ep.own_inputs(ch, &bytes_to_bits(&y[..]), rc.choices, &macs).await?;
            let t =
                ep.online(async |ep| tag(ep, ch, &s, &Input::Wires(&x_wires), &Input::Wires(&y_wires)).await).await?;
            keys.verifier_input.extend(y_wires);
            keys.verifier_values.extend_from_slice(&y[..]);
            Ok(([ciphertext, t.to_vec()].concat(), committed))
        }
        _ => Err(ConnectionError::Malformed("a record's phases of another suite than its keys")),
    }
}
