//! The request garbled ahead of the handshake: its records' keystream phases sized from its
//! announced length, so the connection itself waits for none.

use super::*;
use crate::channel::Channel;
use crate::circuits::bytes_to_bits;
use crate::mpc::garbled::{EvaluatorParty, GarblerParty, Schedule};
use crate::mpc::record::request_records;
use crate::mpc::sealing::{client_direction, record_phases, RecordCipher};

/// P's side of a request record garbled ahead: its masks (keystream, then the cipher's tail),
/// their wires and their commitment.
pub(super) struct AheadRecord<W> {
    pub(super) masks: Vec<u8>,
    pub(super) wires: Vec<crate::gc::Wire>,
    pub(super) committed: Vec<W>,
}

/// P's request garbled ahead of the handshake for one cipher and record layer: the wires its
/// key and nonce will be soldered onto, and its records.
pub(super) struct AheadRequest<W> {
    pub(super) cipher: RecordCipher,
    pub(super) layer: RecordLayer,
    pub(super) key_and_salt: Vec<crate::gc::Wire>,
    pub(super) records: Vec<AheadRecord<W>>,
}

/// V's side of a request record garbled ahead: its length, the wires of P's masks and their
/// commitment.
pub(super) struct AheadRecordView<W> {
    pub(super) len: usize,
    pub(super) wires: Vec<crate::gc::Wire>,
    pub(super) committed: Vec<W>,
}

/// P, before the handshake: announces the request's length and, when its records' tables fit
/// [`AHEAD_TABLES`], sends the labels of their masks and garbles the client direction (for
/// the record layer and cipher `tls` prefers) and the records' phases before their ciphertexts over wires for
/// the key and nonce that the handshake will solder in (docs/protocol.md, "Garbling ahead").
/// The masks are committed as the connection starts ([`connect_prover`]).
pub(super) async fn request_ahead_prover<C: Channel, W>(
    gp: &mut GarblerParty,
    ch: &mut C,
    tls: TwoPartyTls,
    len: usize,
) -> Result<Option<AheadRequest<W>>, ConnectionError> {
    ch.send((len as u32).to_be_bytes().to_vec()).await?;
    let (layer, cipher) = (tls.layer(), tls.ahead_cipher());
    let plan = request_records(layer, len);
    if cipher.tables_for_records(&plan) > AHEAD_TABLES {
        return Ok(None);
    }
    let mut records = Vec::with_capacity(plan.len());
    for &(_, len) in &plan {
        let masks: Vec<u8> = (0..len + cipher.tail_mask()).map(|_| rand::random()).collect();
        let wires = gp.own_inputs(ch, &bytes_to_bits(&masks)).await?;
        records.push(AheadRecord { masks, wires, committed: Vec::new() });
    }
    let (key_bits, nonce_bits) = cipher.key_bits(layer);
    let key_and_salt = gp.reserve_inputs(key_bits + nonce_bits);
    gp.set_schedule(Schedule::Ahead);
    let (key, nonce) = key_and_salt.split_at(key_bits);
    let d = client_direction(gp, ch, cipher, layer, key, nonce).await?;
    for (r, &(seq, len)) in records.iter().zip(&plan) {
        record_phases(gp, ch, &d, seq, len, &r.wires).await?;
    }
    gp.end_ahead(ch).await?;
    gp.set_schedule(Schedule::Online);
    // V answers with a receipt once it holds them all ([`PreparedProver::settle`])
    Ok(Some(AheadRequest { cipher, layer, key_and_salt, records }))
}

/// What V knows of the request before the handshake.
pub(super) enum RequestView<W> {
    /// Its records, garbled ahead for `cipher` in `layer`.
    Ahead { cipher: RecordCipher, layer: RecordLayer, announced: usize, records: Vec<AheadRecordView<W>> },
    /// Its length: it is garbled record by record once the keys exist.
    Online { announced: usize },
}

/// V's side of [`request_ahead_prover`]: refuses a request over max_sent, keeps at most the
/// tables its records take.
pub(super) async fn request_ahead_verifier<C: Channel, W>(
    ep: &mut EvaluatorParty,
    ch: &mut C,
    limits: ConnectionLimits,
    tls: TwoPartyTls,
) -> Result<RequestView<W>, ConnectionError> {
    let len: [u8; 4] =
        ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("a request length is 4 bytes"))?;
    let announced = u32::from_be_bytes(len) as usize;
    if announced > limits.max_sent {
        return Err(ConnectionError::TooMuchSent { limit: limits.max_sent });
    }
    let (layer, cipher) = (tls.layer(), tls.ahead_cipher());
    let plan = request_records(layer, announced);
    let tables = cipher.tables_for_records(&plan);
    if tables > AHEAD_TABLES {
        return Ok(RequestView::Online { announced });
    }
    let mut records = Vec::with_capacity(plan.len());
    for &(_, len) in &plan {
        let wires = ep.peer_inputs(ch, 8 * (len + cipher.tail_mask())).await?;
        records.push(AheadRecordView { len, wires, committed: Vec::new() });
    }
    ep.receive_ahead(ch, tables, &cipher.ahead_decoding(&plan)).await?;
    ch.send(vec![1]).await?;
    Ok(RequestView::Ahead { cipher, layer, announced, records })
}
