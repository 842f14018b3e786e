//! The verifier's side of the connection: its copy of the client fed the prover's forwarded
//! bytes, the key exchange, and the records it evaluates and seals with the prover.

use super::*;
use crate::channel::Channel;
use crate::mpc::ecdh::ReceiverCots;
use crate::mpc::garbled::EvaluatorParty;
use crate::mpc::handshake::{self, INPUT_COTS};
use crate::ot::{CotReceiver, KosReceiver};
use crate::primitives::field::F128;
use crate::tls::{Client, RootStore};
use crate::zk::Party;
use rustls_pki_types::UnixTime;

/// What the verifier holds before the handshake: its COTs and the request as announced (its
/// records garbled ahead, or its length).
pub(crate) struct PreparedVerifier<W> {
    pub(super) ep: EvaluatorParty,
    pub(super) choices: Vec<bool>,
    pub(super) macs: Vec<F128>,
    pub(super) request: RequestView<W>,
    pub(super) tls: TwoPartyTls,
    /// TLS 1.3: its halves of the client key shares, and the client key shares.
    pub(super) halves: Option<(KeyHalves, Vec<(NamedGroup, Vec<u8>)>)>,
}

/// The verifier's side of [`prepare_prover`].
pub(crate) async fn prepare_verifier<C: Channel, W>(
    ch: &mut C,
    limits: ConnectionLimits,
) -> Result<PreparedVerifier<W>, ConnectionError> {
    let msg = ch.recv().await?;
    let (tls, prover_half) = TwoPartyTls::decode(&msg)?;
    let (choices, macs) = KosReceiver::new().extend(ch, limits.cots(tls)).await?;
    let halves = match tls {
        TwoPartyTls::Tls12 => None,
        TwoPartyTls::Tls13 { group, .. } => {
            let halves = KeyHalves::new(group);
            // checked now, so that a bad point fails the preparation, not the connection
            let shares = halves.client_key_shares(prover_half)?;
            ch.send(halves.public()).await?;
            Some((halves, shares))
        }
    };
    let mut ep = EvaluatorParty::new();
    let request = request_ahead_verifier(&mut ep, ch, limits, tls).await?;
    Ok(PreparedVerifier { ep, choices, macs, request, tls, halves })
}

/// The verifier's connection after [`prepare_verifier`], in the version the server chooses of
/// those the prover prepared for; `clock` is read when the prover starts it (which may be long
/// after the preparation).
pub(crate) async fn accept<C: Channel, Z: Party<C>>(
    prepared: PreparedVerifier<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    (roots, server_name): (RootStore, &str),
    clock: impl FnOnce() -> UnixTime,
    limits: ConnectionLimits,
) -> Result<VerifierConnected<Bit<Z, C>>, ConnectionError> {
    if prepared.tls == TwoPartyTls::Tls12 {
        let conn = connect_verifier(prepared, ch, zk, roots, server_name, clock, limits).await?;
        return Ok(VerifierConnected::Tls12(Box::new(conn)));
    }
    connect_verifier13(prepared, ch, zk, (roots, server_name), clock, limits).await
}

/// The verifier's connection in the version the server chose.
pub(crate) enum VerifierConnected<W> {
    Tls12(Box<VerifierConnection<W>>),
    Tls13(Box<VerifierConnection13<W>>),
}

/// [`accept`] for a connection prepared for TLS 1.2 alone.
pub(crate) async fn connect_verifier<C: Channel, Z: Party<C>>(
    mut prepared: PreparedVerifier<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    roots: RootStore,
    server_name: &str,
    clock: impl FnOnce() -> UnixTime,
    limits: ConnectionLimits,
) -> Result<VerifierConnection<Bit<Z, C>>, ConnectionError> {
    if prepared.tls != TwoPartyTls::Tls12 {
        return Err(ConnectionError::Malformed("a connection prepared for TLS 1.3 goes on in TLS 1.3"));
    }
    take_ahead_commitments(zk, ch, &mut prepared.request).await?;
    let random: [u8; 32] =
        ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("the client random is 32 bytes"))?;
    let now = clock();
    let mut client = Client::with_client_random(two_party_config(roots), server_name, now, random)?;
    client.take_outgoing();
    tls12_after_hello_verifier(prepared, ch, zk, client, limits, (now, ServerBytes::new(limits))).await
}

/// V's side of [`tls12_after_hello`], its copy of the client having written the ClientHello
/// and taken the server's bytes so far (`account`); its ahead commitments taken.
pub(super) async fn tls12_after_hello_verifier<C: Channel, Z: Party<C>>(
    prepared: PreparedVerifier<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    mut client: Client,
    limits: ConnectionLimits,
    (now, mut account): (UnixTime, ServerBytes),
) -> Result<VerifierConnection<Bit<Z, C>>, ConnectionError> {
    let PreparedVerifier { mut ep, choices, macs, request: ahead, .. } = prepared;
    take_until(ch, &mut client, &mut account, key_exchange_pending).await?;
    let (half, server_public) = server_key_exchange(&client)?;
    let client_public = half.client_key_share(&ch.recv().await?)?;
    ch.send(half.public()).await?;
    let share = ecdh_verifier(ch, &half, &server_public, &choices[..ECDH_COTS], &macs[..ECDH_COTS]).await?;
    client.complete_two_party_key_exchange(client_public)?;

    let handshake_wires = take_commitment(zk, ch, 32 + 16 * handshake::MASKS).await?;
    let input = ECDH_COTS..ECDH_COTS + INPUT_COTS;
    let input_macs: Vec<u128> = macs[input.clone()].iter().map(|m| m.0).collect();
    let ole = ReceiverCots {
        choices: cots_for(&choices, input.end, limits)?,
        macs: cots_for(&macs, input.end, limits)?,
        first: input.end as u64,
    };
    let kdf = kdf_inputs(&client, half.shared_group())?;
    let (ciphertext, mut keys, verify_data) = handshake::client_finished_verifier(
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
    client.send_sealed_finished(verify_data, &[&[0u8; 8][..], &ciphertext, &tag].concat())?;
    let handshake = (HandshakeScript::Tls12(kdf), handshake_wires);
    let (script, committed) =
        exchange_verifier(&mut ep, ch, zk, &mut client, &mut keys, ahead, &mut account, limits, handshake).await?;
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

/// V: the commitments to the masks of the records garbled ahead, which the connection starts
/// with ([`start`]).
pub(super) async fn take_ahead_commitments<C: Channel, Z: Party<C>>(
    zk: &mut Z,
    ch: &mut C,
    ahead: &mut RequestView<Bit<Z, C>>,
) -> Result<(), ConnectionError> {
    if let RequestView::Ahead { cipher, records, .. } = ahead {
        for r in records {
            r.committed = take_commitment(zk, ch, r.len + cipher.tail_mask()).await?;
        }
    }
    Ok(())
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
