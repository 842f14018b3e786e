//! MPC mode's part of a session: the connection prepared with the verifier (the request
//! garbled ahead, COTs made beside), the server reached through the WebSocket-to-TCP proxy,
//! and the connection in two parties.

use super::*;
use crate::mpc::cots_beside::{BesideError, OwnThread};
use crate::ot::FerretReceiver;
use crate::protocol::observe::tls12::{self as transcript};
use crate::protocol::target::ServerTarget;
use crate::tls::{unix_time, Direction};
use crate::wire::mux::MuxChannel;
use crate::zk::{ProofError, Prover};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// MPC mode's preparation: the COTs for the proofs, then the connection's own and a request
/// of up to `capacity` bytes garbled ahead of the handshake.
/// MPC mode's preparation: the COTs for the proofs, made on the COT channel while the request
/// is garbled ahead on the ZK channel (which uses none of them). Gives the COT channel back.
pub(super) async fn mpc_prepare(
    zk: &mut MuxChannel,
    cot: MuxChannel,
    prover: &mut Prover<FerretReceiver>,
    preprocess: usize,
    config: &ProverConfig,
    capacity: usize,
) -> Result<(crate::mpc::connection::PreparedProver<ZkBit>, MuxChannel), ProverError> {
    let step = config.step_timeout;
    let making = make_beside(prover, cot, preprocess, preprocess, Arc::new(AtomicBool::new(true)))?;
    let prepare =
        crate::mpc::connection::prepare_prover(zk, two_party_tls(config), capacity, connection_limits(config));
    let prepared = within(step * 5, "garbling ahead", Box::pin(prepare)).await??;
    let cot = take_back(prover, making, step, "preprocessing").await?;
    Ok((prepared, cot))
}

/// The TLS versions MPC mode's connection offers: those of the configuration, TLS 1.3 with an
/// X25519 key share first and the two-party suites it allows, ChaCha20-Poly1305 first (its
/// check allows no configuration with TLS 1.3 and neither).
fn two_party_tls(config: &ProverConfig) -> crate::mpc::connection::TwoPartyTls {
    use crate::mpc::connection::{Suites13, TwoPartyTls};
    match Suites13::of(&config.tls13_suites).filter(|_| config.tls_versions.contains(&TlsVersion::Tls13)) {
        Some(suites) => TwoPartyTls::Tls13 {
            group: crate::tls::codec::NamedGroup::X25519,
            suites,
            also_tls12: config.tls_versions.contains(&TlsVersion::Tls12),
        },
        None => TwoPartyTls::Tls12,
    }
}

pub(super) type Making =
    OwnThread<(FerretReceiver, MuxChannel, Result<crate::mpc::cots_beside::ProverMade, BesideError>)>;

/// Lends `prover`'s COT source to a thread of its own that makes `total` COTs on `cot` in steps
/// of `step` while `go_on` holds ([`crate::mpc::cots_beside`]); [`take_back`] returns them.
pub(super) fn make_beside(
    prover: &mut Prover<FerretReceiver>,
    mut cot: MuxChannel,
    total: usize,
    step: usize,
    go_on: Arc<AtomicBool>,
) -> Result<Making, ProverError> {
    let mut source = prover.lend_source().ok_or(ProofError::SourceLent)?;
    Ok(OwnThread::spawn(move || async move {
        let made = crate::mpc::cots_beside::make(&mut source, &mut cot, total, step, &go_on).await;
        (source, cot, made)
    }))
}

/// Waits (at most `d`) for what [`make_beside`] made and gives it and the source back to
/// `prover`; returns the COT channel.
pub(super) async fn take_back(
    prover: &mut Prover<FerretReceiver>,
    making: Making,
    d: std::time::Duration,
    what: &'static str,
) -> Result<MuxChannel, ProverError> {
    let (source, cot, made) = within(d, what, making.finish()).await?.ok_or(BesideError::Lost)?;
    prover.give_back(source, made?);
    Ok(cot)
}

pub(super) fn connection_limits(config: &ProverConfig) -> crate::mpc::connection::ConnectionLimits {
    crate::mpc::connection::ConnectionLimits { max_sent: config.max_sent as usize, max_recv: config.max_recv as usize }
}

/// How many COTs MPC mode makes beside its connection, for the keystream proof of a response
/// that is only partly revealed ([`crate::mpc::cots_beside`]), under the cipher the server is
/// expected to choose: the first offered.
pub(super) fn cots_beside_max(config: &ProverConfig, sizing: Sizing) -> usize {
    match sizing.response {
        RevealExtent::Partly => {
            crate::mpc::cots_beside::cots_for(two_party_tls(config).ahead_cipher(), config.max_recv as usize)
        }
        RevealExtent::Whole | RevealExtent::Nothing => 0,
    }
}

/// MPC mode: the proxy's byte stream to the server.
pub(super) async fn connect_proxy(
    config: &ProverConfig,
    target: &ServerTarget,
) -> Result<crate::transport::WsStream, ProverError> {
    let ProverMode::Mpc { proxy_url } = &config.mode else {
        return Err(ProverError::Unsupported("a proxy in proxy mode"));
    };
    let url = proxy_target_url(proxy_url, &target.address());
    within(config.step_timeout, "the proxy", crate::transport::WsStream::connect(&url))
        .await?
        .map_err(ProverError::ProxyUnreachable)
}

/// MPC mode after the preparation: the connection in two parties through the proxy (the
/// verifier holds half of every key), the proof of the garbling, and with the verifier's
/// published share the master secret and the response.
#[allow(clippy::too_many_arguments)]
pub(super) async fn mpc_exchange(
    zk: &mut MuxChannel,
    cot: MuxChannel,
    prover: &mut Prover<FerretReceiver>,
    config: &ProverConfig,
    mut server: crate::transport::WsStream,
    prepared: crate::mpc::connection::PreparedProver<ZkBit>,
    target: &ServerTarget,
    request: &[u8],
    beside: usize,
    report: &dyn Fn(Phase, f64),
) -> Result<Exchanged, ProverError> {
    use crate::mpc::connection::{connect, ConnectionError, ProverConnected};
    let step = config.step_timeout;
    report(Phase::Request, 0.1);
    let now = unix_time(config.now);
    // `beside` COTs for the proof after the connection, made while it runs; the verifier
    // expects the exchange even when there are none
    let connected = Arc::new(AtomicBool::new(true));
    let making = make_beside(prover, cot, beside, crate::mpc::cots_beside::COTS_PER_STEP, connected.clone())?;
    let limits = connection_limits(config);
    let quiet = Some(super::SERVER_QUIET);
    let failed = |e: ConnectionError| match e {
        ConnectionError::Tls(t @ (crate::tls::Error::PeerMisbehaved(_) | crate::tls::Error::Certificate(_))) => {
            super::error::tls_failure(t, config, target.name())
        }
        e => e.into(),
    };
    let garbling = "the proof of the garbling";
    let exchange = async {
        let server_side = (config.roots.clone(), target.name(), now);
        let connect = connect(prepared, zk, prover, &mut server, server_side, request, limits, quiet);
        let conn = within(step * 5, "the connection in two parties", Box::pin(connect)).await?.map_err(failed)?;
        // the proxy's stream is done with (the server ended it, or fell silent after answering)
        let _ = server.close().await;
        match conn {
            ProverConnected::Tls12(conn) => {
                let v_share =
                    within(step * 5, garbling, Box::pin(crate::mpc::reproof::prove(prover, zk, &*conn))).await??;
                let ms = conn.master_secret(&v_share)?;
                let records = conn.open_received(&ms)?;
                let recv_plain: Vec<u8> = records
                    .into_iter()
                    .filter(|(t, _)| *t == crate::tls::codec::ContentType::ApplicationData as u8)
                    .flat_map(|(_, b)| b)
                    .collect();
                let raw = |d| conn.client.transcript().raw_bytes(d);
                Ok::<_, ProverError>(Exchanged {
                    keys: SessionKeys::Tls12 {
                        session: transcript::parse(&raw(Direction::Sent), &raw(Direction::Received))?,
                        master_secret: zeroize::Zeroizing::new(ms.0),
                    },
                    sent_plain: conn.client.transcript().app_plaintext(Direction::Sent),
                    response: recv_plain.clone(),
                    recv_plain,
                    // every server record reached the verifier before the keys existed
                    unproven: 0,
                })
            }
            ProverConnected::Tls13(conn) => {
                let v_share =
                    within(step * 5, garbling, Box::pin(crate::mpc::reproof::prove(prover, zk, &*conn))).await??;
                let schedule = conn.schedule(&v_share)?;
                let [sent_raw, received_raw] =
                    conn.client.wire().ok_or(crate::tls::Error::InvalidState("no two-party client"))?;
                // the proof covers the server's whole records, as the verifier's copy holds them
                let received_raw = &received_raw[..crate::tls::codec::whole_records_len(received_raw)];
                let (keys, sent_plain, recv_plain) =
                    super::tls13_keys(sent_raw, received_raw, &schedule, &config.roots, target.name(), now)?;
                Ok(Exchanged { keys, sent_plain, response: recv_plain.clone(), recv_plain, unproven: 0 })
            }
        }
    };
    let exchanged = exchange.await;
    connected.store(false, Ordering::Release);
    let exchanged = exchanged?;
    take_back(prover, making, step, "the COTs made beside the connection").await?;
    Ok(exchanged)
}
