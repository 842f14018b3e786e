//! The verifier's side of the connection: its copy of the client fed the prover's forwarded
//! bytes, the key exchange, and the records it evaluates and seals with the prover.

use super::*;
use crate::channel::Channel;
use crate::mpc::ecdh::{run_verifier, EcdhVerifier, ReceiverCots};
use crate::mpc::garbled::EvaluatorParty;
use crate::mpc::handshake::{self, INPUT_COTS};
use crate::mpc::phases::Input;
use crate::mpc::record::{direction, j0_share, masked_keystream, RecordLayer};
use crate::mpc::script::{CommittedInputs, SessionScript};
use crate::ot::{CotReceiver, KosReceiver};
use crate::primitives::field::F128;
use crate::tls::codec::ContentType;
use crate::tls::{Client, RootStore};
use crate::zk::Party;

/// What the verifier holds before the handshake: its COTs and the request as announced (its
/// records garbled ahead, or its length).
pub(crate) struct PreparedVerifier<W> {
    pub(super) ep: EvaluatorParty,
    pub(super) choices: Vec<bool>,
    pub(super) macs: Vec<F128>,
    pub(super) request: RequestView<W>,
}

/// The verifier's side of [`prepare_prover`].
pub(crate) async fn prepare_verifier<C: Channel, W>(
    ch: &mut C,
    limits: ConnectionLimits,
) -> Result<PreparedVerifier<W>, ConnectionError> {
    let (choices, macs) = KosReceiver::new().extend(ch, limits.cots()).await?;
    let mut ep = EvaluatorParty::new();
    let request = request_ahead_verifier(&mut ep, ch, limits).await?;
    Ok(PreparedVerifier { ep, choices, macs, request })
}

/// The verifier's connection after [`prepare_verifier`]; `clock` is read when the prover
/// starts it (which may be long after the preparation).
pub(crate) async fn connect_verifier<C: Channel, Z: Party<C>>(
    prepared: PreparedVerifier<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    roots: RootStore,
    server_name: &str,
    clock: impl FnOnce() -> rustls_pki_types::UnixTime,
    limits: ConnectionLimits,
) -> Result<VerifierConnection<Bit<Z, C>>, ConnectionError> {
    let PreparedVerifier { mut ep, choices, macs, request: mut ahead } = prepared;
    if let RequestView::Ahead(records) = &mut ahead {
        for r in records {
            r.committed = take_commitment(zk, ch, r.len + 16).await?;
        }
    }
    let random: [u8; 32] =
        ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("the client random is 32 bytes"))?;
    let now = clock();
    let mut client = Client::with_client_random(two_party_config(roots), server_name, now, random)?;
    client.take_outgoing();
    let mut account = ServerBytes::new(limits);
    take_until(ch, &mut client, &mut account, key_exchange_pending).await?;

    let (mine, share_point_of_d) = own_key_share(&client)?;
    let theirs = parse_point(&ch.recv().await?)
        .ok_or(ConnectionError::Malformed("the prover's key share is not a point on P-256"))?;
    ch.send(compressed(&mine)).await?;
    let share =
        run_verifier(ch, EcdhVerifier::new(&share_point_of_d)?, &choices[..ECDH_COTS], &macs[..ECDH_COTS], 0).await?;
    client.complete_two_party_key_exchange(client_key_share(&theirs, &mine))?;

    let handshake_wires = take_commitment(zk, ch, 32 + 16 * handshake::MASKS).await?;
    let input = ECDH_COTS..ECDH_COTS + INPUT_COTS;
    let input_macs: Vec<u128> = macs[input.clone()].iter().map(|m| m.0).collect();
    let ole = ReceiverCots { choices: &choices[input.end..], macs: &macs[input.end..], first: input.end as u64 };
    let kdf = kdf_inputs(&client)?;
    let (ciphertext, keys) = handshake::client_finished_verifier(
        &mut ep,
        ch,
        &share,
        (&choices[input], &input_macs),
        ole,
        &kdf,
        limits.powers(),
    )
    .await?;
    let tag = tag_from(&ch.recv().await?)?;
    client.send_sealed_finished(keys.client_verify_data, &[&[0u8; 8][..], &ciphertext, &tag].concat())?;
    let mut script = SessionScript {
        kdf,
        requests_ahead: matches!(ahead, RequestView::Ahead(_)),
        requests: Vec::new(),
        closing: Vec::new(),
    };
    let mut committed = CommittedInputs { handshake: handshake_wires, requests: Vec::new(), closing: Vec::new() };

    match ahead {
        RequestView::Ahead(ahead) => {
            let key_and_salt = ep.solder(ch, &keys.client_key_and_salt).await?;
            ep.set_replay(true);
            let (key, salt) = key_and_salt.split_at(128);
            let d = direction(&mut ep, ch, RecordLayer::Tls12, key, salt).await?;
            let lens = record_lengths(&ch.recv().await?, &ahead)?;
            for (r, len) in ahead.into_iter().zip(lens) {
                let seq = client.next_sealed_seq();
                masked_keystream(&mut ep, ch, &d, seq, r.len, &Input::Wires(&r.wires[..8 * r.len])).await?;
                let j0 = j0_share(&mut ep, ch, &d, seq, &Input::Wires(&r.wires[8 * r.len..]))
                    .await?
                    .ok_or(ConnectionError::Malformed("no share of E_K(J0)"))?;
                let body = take_sealed(ch, &keys, seq, ContentType::ApplicationData, j0, len).await?;
                client.send_sealed(ContentType::ApplicationData as u8, &body, None)?;
                script.requests.push((seq, r.len));
                committed.requests.push(r.committed);
            }
            ep.set_replay(false);
        }
        RequestView::Online { announced } => {
            let mut sent = 0;
            while sent < announced {
                let seq = client.next_sealed_seq();
                let Some((body, wires)) =
                    seal_record_verifier(&mut ep, ch, zk, &keys, seq, ContentType::ApplicationData, announced - sent)
                        .await?
                else {
                    break;
                };
                let len = body.len() - 24;
                sent += len;
                client.send_sealed(ContentType::ApplicationData as u8, &body, None)?;
                script.requests.push((seq, len));
                committed.requests.push(wires);
            }
        }
    }
    client.take_outgoing();

    let mut received = 0;
    loop {
        let records = client.take_sealed_records();
        count_received(&mut received, &records, limits.max_recv)?;
        if client.received_sealed_alert() || !take_forwarded(ch, &mut client, &mut account).await? {
            break;
        }
    }
    let seq = client.next_sealed_seq();
    let (body, wires) = seal_record_verifier(&mut ep, ch, zk, &keys, seq, ContentType::Alert, CLOSE_NOTIFY.len())
        .await?
        .ok_or(ConnectionError::Malformed("the prover ended without close_notify"))?;
    client.send_sealed(ContentType::Alert as u8, &body, None)?;
    client.take_outgoing();
    script.closing.push((seq, body.len() - 24));
    committed.closing.push(wires);
    let (revealed, for_verifier) = (ep.revealed().to_vec(), ep.for_verifier().to_vec());
    Ok(VerifierConnection {
        client,
        premaster_share: share,
        committed,
        script,
        revealed,
        for_verifier,
        own_labels: keys.verifier_input,
        connection_time: now,
    })
}

/// V: the lengths of the records P sends from those garbled ahead, in order: each at least one
/// byte and at most its record's prepared length, and no more records than were prepared.
pub(super) fn record_lengths<W>(msg: &[u8], ahead: &[AheadRecordView<W>]) -> Result<Vec<usize>, ConnectionError> {
    if !msg.len().is_multiple_of(4) {
        return Err(ConnectionError::Malformed("record lengths are 4 bytes each"));
    }
    if msg.len() / 4 > ahead.len() {
        return Err(ConnectionError::TooMuchSent { limit: ahead.iter().map(|r| r.len).sum() });
    }
    msg.chunks_exact(4)
        .zip(ahead)
        .map(|(b, r)| match u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize {
            0 => Err(ConnectionError::Malformed("an empty request record")),
            len if len > r.len => Err(ConnectionError::TooMuchSent { limit: r.len }),
            len => Ok(len),
        })
        .collect()
}

pub(super) fn tag_from(msg: &[u8]) -> Result<[u8; 16], ConnectionError> {
    msg.try_into().map_err(|_| ConnectionError::Malformed("a record tag is 16 bytes"))
}
