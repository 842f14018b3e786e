//! The prover's side of the connection: preparation (the request garbled ahead), the key
//! exchange, its records sealed in two parties, and the server's bytes forwarded.

use super::*;
use crate::channel::Channel;
use crate::gc::Garbler;
use crate::mpc::ecdh::SenderCots;
use crate::mpc::garbled::GarblerParty;
use crate::mpc::handshake::{self, HandshakeInputs, INPUT_COTS};
use crate::ot::{CotSender, KosSender};
use crate::primitives::field::F128;
use crate::tls::driver::ByteIo;
use crate::tls::{Client, RootStore};
use crate::zk::Party;
use rustls_pki_types::UnixTime;

/// What the prover makes before the handshake: the COTs of the connection's inputs and
/// OLEs, and a request of up to `request_len` bytes garbled ahead when it fits.
pub(crate) struct PreparedProver<W> {
    pub(super) gp: GarblerParty,
    pub(super) cots: Vec<F128>,
    pub(super) ahead: Option<AheadRequest<W>>,
    pub(super) request_len: usize,
    /// The verifier's receipt of the tables garbled ahead is still to be read.
    pub(super) receipt_pending: bool,
    pub(super) tls: TwoPartyTls,
    /// TLS 1.3: this party's halves of the client key shares, and once the verifier's halves
    /// are read (its first message after the COTs), the client key shares.
    pub(super) halves: Option<KeyHalves>,
    pub(super) client_key_shares: Option<Vec<(NamedGroup, Vec<u8>)>>,
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
        self.take_peer_halves(ch).await?;
        if std::mem::take(&mut self.receipt_pending) && ch.recv().await? != [1] {
            return Err(ConnectionError::Malformed("the verifier's receipt of the tables garbled ahead"));
        }
        Ok(())
    }
}

impl<W> PreparedProver<W> {
    /// TLS 1.3: reads the verifier's halves of the key shares, which it sent before the tables
    /// garbled ahead, and makes the client key shares (once; nothing in TLS 1.2).
    pub(super) async fn take_peer_halves<C: Channel>(&mut self, ch: &mut C) -> Result<(), ConnectionError> {
        if let (Some(halves), None) = (&self.halves, &self.client_key_shares) {
            self.client_key_shares = Some(halves.client_key_shares(&ch.recv().await?)?);
        }
        Ok(())
    }
}

/// The connection's start in either version: the request checked against the preparation,
/// and the masks of the records garbled ahead committed before anything of the connection
/// (the preparation uses no COTs of the proofs, so it runs beside their making). Returns the
/// garbling Δ.
pub(super) async fn start<C: Channel, Z: Party<C>>(
    prepared: &mut PreparedProver<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    request: &[u8],
) -> Result<F128, ConnectionError> {
    if request.len() > prepared.request_len {
        return Err(ConnectionError::NotPrepared { prepared: prepared.request_len, got: request.len() });
    }
    for r in prepared.ahead.iter_mut().flat_map(|a| a.records.iter_mut()) {
        r.committed = commit(zk, ch, &r.masks).await?;
    }
    Ok(F128(prepared.gp.garbler().delta()))
}

/// The prover's preparation for a request of at most `request_len` bytes (the verifier's is
/// [`prepare_verifier`]): it can run while the proxy connects to the server, or long before
/// the request is known. A shorter request costs the same as one of `request_len` bytes:
/// each record garbled ahead is replayed whole, and its unused keystream is left unused.
pub(crate) async fn prepare_prover<C: Channel, W>(
    ch: &mut C,
    tls: TwoPartyTls,
    request_len: usize,
    limits: ConnectionLimits,
) -> Result<PreparedProver<W>, ConnectionError> {
    prepare_with(GarblerParty::new(Garbler::new(Vec::new())), ch, tls, request_len, limits).await
}

pub(super) async fn prepare_with<C: Channel, W>(
    mut gp: GarblerParty,
    ch: &mut C,
    tls: TwoPartyTls,
    request_len: usize,
    limits: ConnectionLimits,
) -> Result<PreparedProver<W>, ConnectionError> {
    if request_len > limits.max_sent {
        return Err(ConnectionError::TooMuchSent { limit: limits.max_sent });
    }
    let delta = F128(gp.garbler().delta());
    let halves = match tls {
        TwoPartyTls::Tls12 => None,
        TwoPartyTls::Tls13 { group, .. } => Some(KeyHalves::new(group)),
    };
    ch.send([tls.encode(), halves.as_ref().map(KeyHalves::public).unwrap_or_default()].concat()).await?;
    let cots = KosSender::with_delta(delta).extend(ch, limits.cots(tls)).await?;
    let ahead = request_ahead_prover(&mut gp, ch, tls, request_len).await?;
    let receipt_pending = ahead.is_some();
    Ok(PreparedProver { gp, cots, receipt_pending, ahead, request_len, tls, halves, client_key_shares: None })
}

/// The prover's connection after [`prepare_prover`], for a request no longer than the one it
/// was prepared for, in the version the server chooses of those prepared for.
///
/// P cannot read the response before the connection has ended (the server's records open only
/// once V publishes its key share), so it cannot end the connection where the response's
/// framing does. It reads until the server's close_notify, another alert or a close, or until
/// the server, having begun to answer, sends nothing for `quiet` (when given): then it ends the
/// stream itself, as a server that keeps the connection open after its response needs
/// (docs/protocol.md, "How the connection ends").
#[allow(clippy::too_many_arguments)]
pub(crate) async fn connect<C: Channel, S: ByteIo, Z: Party<C>>(
    prepared: PreparedProver<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    server: &mut S,
    (roots, server_name, now): (RootStore, &str, UnixTime),
    request: &[u8],
    limits: ConnectionLimits,
    quiet: Option<std::time::Duration>,
) -> Result<ProverConnected<Bit<Z, C>>, ConnectionError> {
    if prepared.tls == TwoPartyTls::Tls12 {
        let client = Client::new(two_party_config(roots), server_name, now)?;
        let conn = connect_prover(prepared, ch, zk, server, client, request, limits, quiet).await?;
        return Ok(ProverConnected::Tls12(Box::new(conn)));
    }
    connect_prover13(prepared, ch, zk, server, (roots, server_name, now), request, limits, quiet).await
}

/// The prover's connection in the version the server chose.
pub(crate) enum ProverConnected<W> {
    Tls12(Box<ProverConnection<W>>),
    Tls13(Box<ProverConnection13<W>>),
}

/// [`connect`] for a connection prepared for TLS 1.2 alone, through `client`.
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
    if prepared.tls != TwoPartyTls::Tls12 {
        return Err(ConnectionError::Malformed("a connection prepared for TLS 1.3 goes on in TLS 1.3"));
    }
    let delta = start(&mut prepared, ch, zk, request).await?;
    ch.send(client.client_random().to_vec()).await?;
    flush(&mut client, server).await?;
    let account = ServerBytes::new(limits);
    tls12_after_hello(prepared, ch, zk, server, client, request, (limits, quiet), (delta, account)).await
}

/// P's TLS 1.2 connection from its ClientHello on, sent (by `client`, or by the TLS 1.3 client
/// it continues from) with `account` holding the server's bytes so far.
#[allow(clippy::too_many_arguments)]
pub(super) async fn tls12_after_hello<C: Channel, S: ByteIo, Z: Party<C>>(
    mut prepared: PreparedProver<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    server: &mut S,
    mut client: Client,
    request: &[u8],
    (limits, quiet): (ConnectionLimits, Option<std::time::Duration>),
    (delta, mut account): (F128, ServerBytes),
) -> Result<ProverConnection<Bit<Z, C>>, ConnectionError> {
    forward_until(ch, server, &mut client, &mut account, key_exchange_pending).await?;
    let (half, server_public) = server_key_exchange(&client)?;
    ch.send(half.public()).await?;
    prepared.settle(ch).await?;
    let PreparedProver { mut gp, cots, ahead, request_len, .. } = prepared;
    let client_public = half.client_key_share(&ch.recv().await?)?;
    let share = ecdh_prover(ch, &half, &server_public, delta, &cots[..ECDH_COTS]).await?;
    client.complete_two_party_key_exchange(client_public)?;

    let inputs = HandshakeInputs::new(share);
    let handshake_wires = commit(zk, ch, &inputs.to_bytes()).await?;
    let input_keys: Vec<u128> = cots[ECDH_COTS..ECDH_COTS + INPUT_COTS].iter().map(|k| k.0).collect();
    // (the pool may hold more, for TLS 1.3's ChaCha20-Poly1305 tags offered beside)
    let first = ECDH_COTS + INPUT_COTS;
    let ole = SenderCots { delta, keys: cots_for(&cots, first, limits)?, first: first as u64 };
    let kdf = kdf_inputs(&client, half.shared_group())?;
    let (body, mut keys, verify_data) =
        handshake::client_finished_prover(&mut gp, ch, &inputs, &input_keys, ole, &kdf, limits.powers()).await?;
    // The tag is public (it goes on the wire); V keeps the whole record.
    ch.send(body[body.len() - 16..].to_vec()).await?;
    client.send_sealed_finished(verify_data, &body)?;
    // False Start: the request follows the Finished at once, and the server's Finished is
    // forwarded with the response.
    flush(&mut client, server).await?;
    let (script, committed) = exchange_prover(
        &mut gp,
        ch,
        zk,
        server,
        &mut client,
        &mut keys,
        ahead,
        (request, request_len),
        &mut account,
        (limits, quiet),
        (HandshakeScript::Tls12(kdf), handshake_wires),
    )
    .await?;
    let revealed = gp.revealed().to_vec();
    let verifier_input = (keys.verifier_input, gp.garbler().delta());
    let premaster_share = inputs.share.clone();
    Ok(ProverConnection { client, premaster_share, committed, script, revealed, verifier_input })
}
