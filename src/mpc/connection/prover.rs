//! The prover's side of the connection: preparation (the request garbled ahead), the key
//! exchange, its records sealed in two parties, and the server's bytes forwarded.

use super::*;
use crate::channel::Channel;
use crate::gc::Garbler;
use crate::mpc::ecdh::{run_prover, EcdhProver, SenderCots};
use crate::mpc::garbled::{GarblerParty, Schedule};
use crate::mpc::handshake::{self, HandshakeInputs, INPUT_COTS};
use crate::mpc::phases::Input;
use crate::mpc::record::{direction, j0_share, masked_keystream, RecordLayer};
use crate::mpc::script::{CommittedInputs, SessionScript};
use crate::ot::{CotSender, KosSender};
use crate::primitives::field::F128;
use crate::tls::codec::{ContentType, MAX_PLAINTEXT};
use crate::tls::driver::ByteIo;
use crate::tls::Client;
use crate::zk::Party;

/// What the prover makes before the handshake: the COTs of the connection's inputs and
/// OLEs, and a request of up to `request_len` bytes garbled ahead when it fits.
pub(crate) struct PreparedProver<W> {
    pub(super) gp: GarblerParty,
    pub(super) cots: Vec<F128>,
    pub(super) ahead: Option<AheadRequest<W>>,
    pub(super) request_len: usize,
    /// The verifier's receipt of the tables garbled ahead is still to be read.
    pub(super) receipt_pending: bool,
}

impl<W> PreparedProver<W> {
    /// The longest request the connection was prepared for.
    pub(crate) fn capacity(&self) -> usize {
        self.request_len
    }

    /// Waits until the verifier holds every table garbled ahead. A preparation made long
    /// before its request calls this, so the connection later sends no table of the request;
    /// a connection that follows at once need not: its handshake with the server then runs
    /// while the tables are still on their way ([`connect_prover`] takes the receipt before
    /// the first message it needs from the verifier).
    pub(crate) async fn settle<C: Channel>(&mut self, ch: &mut C) -> Result<(), ConnectionError> {
        if std::mem::take(&mut self.receipt_pending) && ch.recv().await? != [1] {
            return Err(ConnectionError::Malformed("the verifier's receipt of the tables garbled ahead"));
        }
        Ok(())
    }
}

/// The prover's preparation for a request of at most `request_len` bytes (the verifier's is
/// [`prepare_verifier`]): it can run while the proxy connects to the server, or long before
/// the request is known. A shorter request costs the same as one of `request_len` bytes:
/// each record garbled ahead is replayed whole, and its unused keystream is left unused.
pub(crate) async fn prepare_prover<C: Channel, W>(
    ch: &mut C,
    request_len: usize,
    limits: ConnectionLimits,
) -> Result<PreparedProver<W>, ConnectionError> {
    prepare_with(GarblerParty::new(Garbler::new(Vec::new())), ch, request_len, limits).await
}

pub(super) async fn prepare_with<C: Channel, W>(
    mut gp: GarblerParty,
    ch: &mut C,
    request_len: usize,
    limits: ConnectionLimits,
) -> Result<PreparedProver<W>, ConnectionError> {
    if request_len > limits.max_sent {
        return Err(ConnectionError::TooMuchSent { limit: limits.max_sent });
    }
    let delta = F128(gp.garbler().delta());
    let cots = KosSender::with_delta(delta).extend(ch, limits.cots()).await?;
    let ahead = request_ahead_prover(&mut gp, ch, request_len).await?;
    Ok(PreparedProver { gp, cots, receipt_pending: ahead.is_some(), ahead, request_len })
}

/// The prover's connection after [`prepare_prover`], for a request no longer than the one it
/// was prepared for.
///
/// P cannot read the response before the connection has ended (the server's records open only
/// once V publishes its key share), so it cannot end the connection where the response's
/// framing does. It reads until the server's close_notify, another alert or a close, or until
/// the server, having begun to answer, sends nothing for `quiet` (when given): then it ends the
/// stream itself, as a server that keeps the connection open after its response needs
/// (docs/protocol.md, "How the connection ends").
#[allow(clippy::too_many_arguments)]
pub(crate) async fn connect_prover<C: Channel, S: ByteIo, Z: Party<C>>(
    mut prepared: PreparedProver<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    server: &mut S,
    mut client: Client,
    request: &[u8],
    limits: ConnectionLimits,
    quiet: Option<std::time::Duration>,
) -> Result<ProverConnection<Bit<Z, C>>, ConnectionError> {
    if request.len() > prepared.request_len {
        return Err(ConnectionError::NotPrepared { prepared: prepared.request_len, got: request.len() });
    }
    let delta = F128(prepared.gp.garbler().delta());
    // the masks of the records garbled ahead, committed before anything of the connection
    // (the preparation uses no COTs of the proofs, so it runs beside their making)
    for r in prepared.ahead.iter_mut().flat_map(|a| a.records.iter_mut()) {
        r.committed = commit(zk, ch, &r.masks).await?;
    }
    ch.send(client.client_random().to_vec()).await?;
    flush(&mut client, server).await?;
    let mut account = ServerBytes::new(limits);
    forward_until(ch, server, &mut client, &mut account, key_exchange_pending).await?;

    let (mine, share_point_of_d) = own_key_share(&client)?;
    ch.send(compressed(&mine)).await?;
    prepared.settle(ch).await?;
    let PreparedProver { mut gp, cots, ahead, request_len, .. } = prepared;
    let theirs = parse_point(&ch.recv().await?)
        .ok_or(ConnectionError::Malformed("the verifier's key share is not a point on P-256"))?;
    let share = run_prover(ch, EcdhProver::new(&share_point_of_d)?, delta, &cots[..ECDH_COTS], 0).await?;
    client.complete_two_party_key_exchange(client_key_share(&mine, &theirs))?;

    let inputs = HandshakeInputs::new(share);
    let handshake_wires = commit(zk, ch, &inputs.to_bytes()).await?;
    let input_keys: Vec<u128> = cots[ECDH_COTS..ECDH_COTS + INPUT_COTS].iter().map(|k| k.0).collect();
    let ole = SenderCots { delta, keys: &cots[ECDH_COTS + INPUT_COTS..], first: (ECDH_COTS + INPUT_COTS) as u64 };
    let kdf = kdf_inputs(&client)?;
    let (body, keys) =
        handshake::client_finished_prover(&mut gp, ch, &inputs, &input_keys, ole, &kdf, limits.powers()).await?;
    // The tag is public (it goes on the wire); V keeps the whole record.
    ch.send(body[body.len() - 16..].to_vec()).await?;
    client.send_sealed_finished(keys.client_verify_data, &body)?;
    // False Start: the request follows the Finished at once, and the server's Finished is
    // forwarded with the response.
    flush(&mut client, server).await?;
    let mut script = SessionScript { kdf, requests_ahead: ahead.is_some(), requests: Vec::new(), closing: Vec::new() };
    let mut committed = CommittedInputs { handshake: handshake_wires, requests: Vec::new(), closing: Vec::new() };

    match ahead {
        Some(ahead) => {
            // the records' circuits were garbled before the key existed: its wires now go in
            gp.solder(ch, &keys.client_key_and_salt, &ahead.key_and_salt).await?;
            gp.set_schedule(Schedule::Replay);
            let (key, salt) = ahead.key_and_salt.split_at(128);
            let d = direction(&mut gp, ch, RecordLayer::Tls12, key, salt).await?;
            // Each record used is replayed as it was garbled, so over its prepared length; its
            // ciphertext is as long as its plaintext, which V learns here.
            let lens: Vec<u8> = request.chunks(MAX_PLAINTEXT).flat_map(|c| (c.len() as u32).to_be_bytes()).collect();
            ch.send(lens).await?;
            for (chunk, r) in request.chunks(MAX_PLAINTEXT).zip(ahead.records) {
                let seq = client.next_sealed_seq();
                let prepared = r.masks.len() - 16;
                let masked =
                    masked_keystream(&mut gp, ch, &d, seq, prepared, &Input::Wires(&r.wires[..8 * prepared])).await?;
                j0_share(&mut gp, ch, &d, seq, &Input::Wires(&r.wires[8 * prepared..])).await?;
                let masks = [&r.masks[..chunk.len()], &r.masks[prepared..]].concat();
                let body = encrypt_and_seal(
                    ch,
                    &keys,
                    seq,
                    ContentType::ApplicationData,
                    chunk,
                    &masked[..chunk.len()],
                    &masks,
                )
                .await?;
                client.send_sealed(ContentType::ApplicationData as u8, &body, Some(chunk.to_vec()))?;
                script.requests.push((seq, prepared));
                committed.requests.push(r.committed);
            }
            gp.set_schedule(Schedule::Online);
        }
        None => {
            for chunk in request.chunks(MAX_PLAINTEXT) {
                let seq = client.next_sealed_seq();
                let (body, wires) =
                    seal_record_prover(&mut gp, ch, zk, &keys, seq, ContentType::ApplicationData, chunk).await?;
                client.send_sealed(ContentType::ApplicationData as u8, &body, Some(chunk.to_vec()))?;
                script.requests.push((seq, chunk.len()));
                committed.requests.push(wires);
            }
            if request.len() < request_len {
                // shorter than announced: an empty announcement ends it
                ch.send(0u32.to_be_bytes().to_vec()).await?;
            }
        }
    }
    flush(&mut client, server).await?;

    let mut received = 0;
    let mut answering = false;
    loop {
        let records = client.take_sealed_records();
        count_received(&mut received, &records, limits.max_recv)?;
        answering |= records.iter().any(|r| r.content_type == ContentType::ApplicationData as u8);
        let quiet = quiet.filter(|_| answering);
        if client.received_sealed_alert() || !forward_once(ch, server, &mut client, &mut account, quiet).await? {
            break;
        }
    }
    // Like a one-party client, P ends its side with close_notify, sealed as a request record
    // is. The server may have gone already: what matters is that the record is in both
    // transcripts.
    let seq = client.next_sealed_seq();
    let (body, wires) = seal_record_prover(&mut gp, ch, zk, &keys, seq, ContentType::Alert, &CLOSE_NOTIFY).await?;
    client.send_sealed(ContentType::Alert as u8, &body, Some(CLOSE_NOTIFY.to_vec()))?;
    script.closing.push((seq, CLOSE_NOTIFY.len()));
    committed.closing.push(wires);
    let _ = flush(&mut client, server).await;
    let revealed = gp.revealed().to_vec();
    let verifier_input = (keys.verifier_input, gp.garbler().delta());
    Ok(ProverConnection { client, premaster_share: share, committed, script, revealed, verifier_input })
}
