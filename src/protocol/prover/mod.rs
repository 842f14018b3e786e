//! The prover's side of a session (native and browser): TLS through the verifier (proxy
//! mode) or through a WebSocket-to-TCP proxy with the verifier as the other half of the client
//! (MPC mode), then the proof of what it chose to reveal.

pub(crate) mod error;
mod mpc;
#[cfg(test)]
mod tests;

use crate::channel::Channel;
use crate::ot::FerretReceiver;
use crate::primitives::prg::PrgKind;
use crate::protocol::disclose::exchange::{split_responses, MAX_EXCHANGES};
use crate::protocol::disclose::output::VerifierOutput;
use crate::protocol::disclose::placement;
use crate::protocol::disclose::reveal::{
    check_commitments, check_hidden_line_breaks, covers_all, join_adjacent, Reveal, RevealConfig, RevealError,
};
use crate::protocol::messages::{
    ControlMessage, RecordShapes, RevealPlan, SessionMode, SessionRequest, TlsDone, TlsVersion, PROTOCOL_VERSION,
};
use crate::protocol::observe::tls12::{self as transcript};
use crate::protocol::observe::tls13::{self as transcript13, Handshake13, Transcript13};
use crate::protocol::prove::tls12::{self as proof, PublicInputs};
use crate::protocol::prove::tls13::{self as proof13, PublicInputs13};
use crate::protocol::target::ServerTarget;
use crate::tls::{driver, unix_time, AnyVersionClient, Client, ClientConfig, Direction, RootStore};
use crate::transport::MessageSocket;
use crate::wire::mux::{multiplex, MuxChannel, MuxError, MuxLimits, SessionChannels};
use crate::wire::tls_channel::TlsChannelIo;
use crate::zk::Prover;
pub use error::ProverError;
use futures::FutureExt;
use mpc::*;
use std::ops::Range;

/// What the prover asks for.
pub struct ProverConfig {
    /// `HOST:PORT` of the server (the verifier connects to it).
    pub server: String,
    /// Name the server certificate must be valid for: the host of `server` (the verifier
    /// certifies the host it dials, so a different name is refused before connecting).
    pub server_name: String,
    /// Roots the prover itself checks the server against (the verifier checks too).
    pub roots: RootStore,
    /// Most application bytes sent / received; the verifier must accept these limits.
    pub max_sent: u32,
    pub max_recv: u32,
    /// Current time (Unix seconds) for certificate validity.
    pub now: u64,
    /// Longest wait for any one step (the verifier's answer, the TLS exchange, the proof).
    pub step_timeout: std::time::Duration,
    /// The proof engine's PRG; [`PrgKind::fastest_here`] unless testing.
    pub prg: PrgKind,
    /// How to reach the server.
    pub mode: ProverMode,
    /// The TLS versions to offer, in either mode: both go in one ClientHello, and the server
    /// chooses. [`ProverMode::default_tls_versions`] is what the CLI and the JS API offer
    /// unless told otherwise.
    pub tls_versions: Vec<TlsVersion>,
    /// The TLS 1.3 suites to offer, in order of preference (usually
    /// [`Suite13::PROVER_DEFAULT`](crate::tls::tls13::Suite13::PROVER_DEFAULT)).
    pub tls13_suites: Vec<crate::tls::tls13::Suite13>,
    /// The TLS 1.2 suites to offer in proxy mode, in order of preference (usually
    /// [`CipherSuite::ALL`](crate::tls::CipherSuite::ALL): AES-128-GCM, ChaCha20-Poly1305,
    /// AES-256-GCM). MPC mode offers the two AES-128-GCM suites, the only ones its two-party
    /// client implements, and needs one of them here.
    pub tls12_suites: Vec<crate::tls::CipherSuite>,
}

impl ProverConfig {
    /// What the prover refuses of its own configuration, checked before anything is sent: so
    /// that a session it would refuse is not opened at the verifier (whose log would show only
    /// a connection that went away).
    pub fn check(&self) -> Result<(), ProverError> {
        if self.tls_versions.is_empty() {
            return Err(ProverError::Unsupported("offering no TLS version"));
        }
        if self.mode.session_mode() == SessionMode::Mpc
            && self.tls_versions.contains(&TlsVersion::Tls13)
            && crate::mpc::connection::Suites13::of(&self.tls13_suites).is_none()
        {
            return Err(ProverError::Unsupported(
                "these TLS 1.3 suites in MPC mode, which supports only TLS_CHACHA20_POLY1305_SHA256 and \
                 TLS_AES_128_GCM_SHA256",
            ));
        }
        if self.tls_versions.contains(&TlsVersion::Tls12) && self.tls12_suites.is_empty() {
            return Err(ProverError::Unsupported("offering TLS 1.2 without a cipher suite"));
        }
        if self.mode.session_mode() == SessionMode::Mpc
            && self.tls_versions.contains(&TlsVersion::Tls12)
            && !self.tls12_suites.iter().any(|s| crate::tls::CipherSuite::AES_128.contains(s))
        {
            return Err(ProverError::Unsupported(
                "these TLS 1.2 suites in MPC mode, which supports only TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 \
                 and TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            ));
        }
        ServerTarget::new(&self.server, &self.server_name)?;
        Ok(())
    }
}

/// How the prover reaches the server ([`SessionMode`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ProverMode {
    /// Through the verifier, which dials the server.
    #[default]
    Proxy,
    /// Through the WebSocket-to-TCP proxy at `proxy_url` (`ws://HOST:PORT/`, as `tlsproof
    /// proxy` serves it), with the verifier as the other half of the TLS client.
    Mpc { proxy_url: String },
}

impl ProverMode {
    /// The TLS versions offered when none are asked for: both, in one ClientHello (the server
    /// chooses, so a server that speaks one of them only is reached either way), in either mode.
    pub fn default_tls_versions(&self) -> Vec<TlsVersion> {
        vec![TlsVersion::Tls12, TlsVersion::Tls13]
    }

    pub(crate) fn session_mode(&self) -> SessionMode {
        match self {
            ProverMode::Proxy => SessionMode::Proxy,
            ProverMode::Mpc { .. } => SessionMode::Mpc,
        }
    }
}

/// The proxy's URL for a connection to `address` (`HOST:PORT`): `?target=` appended.
fn proxy_target_url(proxy_url: &str, address: &str) -> String {
    let mut url = proxy_url.to_string();
    let has_path = url.split_once("://").is_some_and(|(_, rest)| rest.contains('/'));
    if !has_path && !url.contains('?') {
        url.push('/');
    }
    url.push(if url.contains('?') { '&' } else { '?' });
    url + "target=" + address
}

/// How long a server that has answered may stay silent before the prover ends the connection:
/// in proxy mode the wait for its close_notify after a response complete by its framing; in
/// MPC mode, which cannot read the framing before the connection ends, the silence after
/// which the response is taken as ended (docs/protocol.md, "How the connection ends").
const SERVER_QUIET: std::time::Duration = std::time::Duration::from_millis(500);

/// The default for [`ProverConfig::step_timeout`].
pub const DEFAULT_STEP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Where a session is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Opening the session; the verifier connects to the server.
    Connect,
    /// Waiting for a turn at a busy verifier, at `position` in its queue (1 = next).
    Waiting { position: u32 },
    /// Oblivious-transfer setup for the proof (runs alongside the request).
    Preprocess,
    /// The TLS exchange with the server.
    Request,
    /// Proving what is revealed, then waiting for the verdict.
    Prove,
    /// The verdict arrived.
    Done,
}

impl Phase {
    /// The lower-case name the browser API reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Connect => "connect",
            Phase::Waiting { .. } => "waiting",
            Phase::Preprocess => "preprocess",
            Phase::Request => "request",
            Phase::Prove => "prove",
            Phase::Done => "done",
        }
    }
}

/// A progress report: the phase just entered and a rough overall fraction (0 to 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub phase: Phase,
    pub fraction: f64,
}

/// One HTTP/1.1 request of a session and what to reveal of it and of its response. In a
/// session of several, every request but the last keeps the connection open (no
/// `Connection: close`), and the reveal choices apply to each request's and each response's
/// own bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangePlan {
    pub request: Vec<u8>,
    pub reveal: RevealConfig,
}

/// What the prover ends with.
pub struct ProverOutput {
    /// The HTTP requests and responses, each direction's plaintext in full (only the prover
    /// has them); [`VerifierOutput::exchanges`] says where each request and response is.
    pub request: Vec<u8>,
    pub response: Vec<u8>,
    /// Exactly what the verifier verified.
    pub verified: VerifierOutput,
    /// Each commitment with its blinder: keep both to open the commitment later.
    pub commitments: Vec<(proof::Commitment, [u8; 16])>,
    /// The verifier's signed attestation of `verified`, checked against it and against the
    /// prover's own plaintext, with what a [`Presentation`](crate::attestation::Presentation)
    /// needs; none when the verifier does not sign.
    pub attestation: Option<crate::protocol::disclose::attest::AttestedSession>,
}

/// Runs one session over `socket` (a WebSocket to `tlsproof verifier`): sends `request` to the
/// server as `config.mode` says, then proves what `reveal` selects.
pub async fn notarize<S: MessageSocket>(
    socket: S,
    config: ProverConfig,
    request: Vec<u8>,
    reveal: RevealConfig,
) -> Result<ProverOutput, ProverError> {
    notarize_with_progress(socket, config, request, reveal, |_| {}).await
}

/// [`notarize`], calling `progress` as the session enters each [`Phase`] (for UIs).
pub async fn notarize_with_progress<S: MessageSocket, P: Fn(Progress)>(
    socket: S,
    config: ProverConfig,
    request: Vec<u8>,
    reveal: RevealConfig,
    progress: P,
) -> Result<ProverOutput, ProverError> {
    notarize_exchanges(socket, config, vec![ExchangePlan { request, reveal }], progress).await
}

/// Runs one session of several requests over one TLS connection (at most
/// [`MAX_EXCHANGES`](crate::protocol::disclose::exchange::MAX_EXCHANGES)), in order. In proxy
/// mode each request goes out once the response before it is complete; in MPC mode, which
/// reads no response until the session ends, they go out together (HTTP/1.1 pipelining).
pub async fn notarize_exchanges<S: MessageSocket, P: Fn(Progress)>(
    socket: S,
    config: ProverConfig,
    plans: Vec<ExchangePlan>,
    progress: P,
) -> Result<ProverOutput, ProverError> {
    let (driver, channels) = multiplex(socket, MuxLimits::default());
    let SessionChannels { mut control, tls, zk, cot } = channels;
    let driver = driver.fuse();
    futures::pin_mut!(driver);
    // on the heap: in wasm a large future built on the stack and moved a few times overflowed
    // the main thread's stack (a_sessions_future_stays_small)
    let outcome =
        with_driver(&mut driver, Box::pin(session(&mut control, tls, zk, cot, config, plans, &progress))).await;
    told(explained(outcome, &mut control), control, driver).await
}

/// How long a prover that gives up waits for its reason to reach the verifier.
const GIVE_UP_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// A session the prover gave up on (not one the verifier refused, nor one whose connection
/// was lost) tells the verifier why before it closes, so that the verifier's log shows the
/// cause rather than a connection that went away. `control` is the session's last channel
/// handle: once it is dropped, the driver sends what it holds and closes the socket.
async fn told<T>(
    outcome: Result<T, ProverError>,
    control: MuxChannel,
    driver: impl std::future::Future<Output = Result<(), MuxError>>,
) -> Result<T, ProverError> {
    let Err(e) = &outcome else { return outcome };
    if !matches!(
        e,
        ProverError::VerifierRejected(_) | ProverError::Busy { .. } | ProverError::Mux(_) | ProverError::Channel(_)
    ) {
        let reason = e.to_string();
        let tell = async move {
            let mut control = control;
            let _ = control.send(ControlMessage::Abort { reason }.encode()).await;
        };
        let _ = crate::transport::timeout(GIVE_UP_GRACE, futures::future::join(driver, tell)).await;
    }
    outcome
}

/// Runs `session` while `driver` moves its frames. Frames received before the socket ended
/// are already in the channels' inboxes (e.g. the verdict, sent just before the verifier
/// closed): the session may use them, and the transport error counts only if the session
/// cannot finish.
async fn with_driver<T>(
    driver: impl std::future::Future<Output = Result<(), MuxError>>,
    session: impl std::future::Future<Output = Result<T, ProverError>>,
) -> Result<T, ProverError> {
    let session = session.fuse();
    let driver = driver.fuse();
    futures::pin_mut!(session, driver);
    // the driver first: a frame the session has just sent goes out before it computes on
    futures::select_biased! {
        ended = driver => match (ended, session.await) {
            (_, Ok(out)) => Ok(out),
            (_, Err(e @ (ProverError::VerifierRejected(_) | ProverError::Busy { .. }))) | (Ok(()), Err(e)) => Err(e),
            (Err(transport), Err(_)) => Err(transport.into()),
        },
        result = session => result,
    }
}

/// When the verifier gives up it says why on the control channel before closing; that reason
/// explains a failure better than the closed channel the session ran into.
fn explained<T>(outcome: Result<T, ProverError>, control: &mut MuxChannel) -> Result<T, ProverError> {
    if outcome.is_err() {
        if let Some(Ok(frame)) = control.recv().now_or_never() {
            match ControlMessage::decode(&frame) {
                Ok(ControlMessage::Abort { reason }) => return Err(ProverError::VerifierRejected(reason)),
                Ok(ControlMessage::Busy { reason, retry_after }) => {
                    return Err(ProverError::Busy { reason, retry_after })
                }
                _ => {}
            }
        }
    }
    outcome
}

/// A session opened and prepared before its request is known ([`prepare`]): in MPC mode the
/// OT and the request's records garbled ahead, for a request of up to the length prepared, so
/// that [`PreparedSession::notarize`] starts with the TLS connection. Proxy mode has nothing
/// worth doing early (its preprocessing is short, and the verifier dials the server as the
/// session opens, which must not wait for the request), so there the whole session runs in
/// `notarize`. The verifier bounds how long a session may last (`session_timeout`), preparation
/// included.
///
/// Its socket's driver is boxed without `Send`: drive the session on the task that prepared it.
pub struct PreparedSession {
    driver: futures::future::Fuse<futures::future::LocalBoxFuture<'static, Result<(), MuxError>>>,
    control: MuxChannel,
    tls: MuxChannel,
    zk: MuxChannel,
    cot: MuxChannel,
    config: ProverConfig,
    mpc: Option<MpcPrepared>,
}

/// What MPC mode prepares: the opened session and the connection's preparation.
struct MpcPrepared {
    opened: Opened,
    connection: crate::mpc::connection::PreparedProver<ZkBit>,
}

type ZkBit = <<Prover<FerretReceiver> as crate::zk::Party<MuxChannel>>::Backend as crate::circuits::Gates>::Bit;

/// What a session is sized for before its request is known: the request's length (at most),
/// whether the request is revealed whole, how many of its bytes are hidden (their proof of no
/// line break), and how much of the response is revealed. They size the proofs'
/// preprocessing; a session that turns out otherwise still works, and makes what it lacks
/// when it needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizing {
    pub request_len: usize,
    pub request_whole: bool,
    pub request_hidden: usize,
    pub response: RevealExtent,
}

/// How much of a direction a reveal option opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevealExtent {
    /// All of it: the fast path.
    Whole,
    /// Some of it: the ZK path proves the keystream of what it opens.
    Partly,
    /// None of it.
    Nothing,
}

impl Sizing {
    /// For `request` revealed as `reveal` says.
    pub fn of(request: &[u8], reveal: &RevealConfig) -> Self {
        Sizing::of_exchanges(&[ExchangePlan { request: request.to_vec(), reveal: reveal.clone() }])
    }

    /// For the requests of `plans`, each revealed as it says.
    pub fn of_exchanges(plans: &[ExchangePlan]) -> Self {
        // The requests are the sent direction's whole plaintext, so whether it takes the fast
        // path is known now (a selector that does not resolve fails later, with its own error).
        let (mut len, mut shown) = (0, 0);
        for plan in plans {
            let revealed = plan.reveal.sent.resolve(&plan.request).map(to_u64).unwrap_or_default();
            len += plan.request.len();
            shown += revealed.iter().map(|r| (r.end - r.start) as usize).sum::<usize>();
        }
        // a stated value is hidden, so a response with statements is never wholly revealed
        let received = |which: &Reveal| plans.iter().all(|p| p.reveal.received == *which);
        let stated = plans.iter().any(|p| !p.reveal.statements.is_empty());
        let received = if received(&Reveal::All) && !stated {
            Reveal::All
        } else if received(&Reveal::Nothing) {
            Reveal::Nothing
        } else {
            Reveal::HttpBody
        };
        // nor is a request with statements
        let whole = shown == len && plans.iter().all(|p| p.reveal.request_statements.is_empty());
        Sizing { request_hidden: len - shown, ..Sizing::new(len, whole, &received) }
    }

    /// For a request of `request_len` bytes, revealed whole or not, and the response revealed
    /// as `received` says.
    pub fn new(request_len: usize, request_whole: bool, received: &Reveal) -> Self {
        let response = match received {
            Reveal::All => RevealExtent::Whole,
            Reveal::Nothing => RevealExtent::Nothing,
            _ => RevealExtent::Partly,
        };
        // which of a request not yet written is hidden is not known: its proof of no line
        // break makes its COTs when it runs
        Sizing { request_len, request_whole, request_hidden: 0, response }
    }
}

/// Opens a session over `socket` and prepares what does not depend on the request, for a
/// request of up to `sizing.request_len` bytes (at most `config.max_sent`) revealed as
/// `sizing` says (see [`PreparedSession`]). `progress` sees the connect and preprocess phases.
pub async fn prepare<S: MessageSocket + 'static, P: Fn(Progress)>(
    socket: S,
    config: ProverConfig,
    sizing: Sizing,
    progress: P,
) -> Result<PreparedSession, ProverError> {
    let (driver, channels) = multiplex(socket, MuxLimits::default());
    let SessionChannels { mut control, tls, mut zk, cot } = channels;
    let mut driver = driver.boxed_local().fuse();
    let report = |phase, fraction| progress(Progress { phase, fraction });
    let outcome = match (config.check(), &config.mode) {
        (Err(e), _) => {
            drop(cot);
            Err(e)
        }
        (Ok(()), ProverMode::Proxy) => Ok((None, cot)),
        (Ok(()), ProverMode::Mpc { .. }) => {
            let setup = async {
                let mut opened = open(&mut control, &config, sizing, &report).await?;
                let (mut connection, cot) =
                    mpc_prepare(&mut zk, cot, &mut opened.prover, opened.preprocess, &config, sizing.request_len)
                        .await?;
                // prepared means the verifier holds the tables: the request may come much later
                within(config.step_timeout * 5, "garbling ahead", connection.settle(&mut zk)).await??;
                Ok((Some(MpcPrepared { opened, connection }), cot))
            };
            let outcome = with_driver(&mut driver, Box::pin(setup)).await;
            explained(outcome, &mut control)
        }
    };
    match outcome {
        Ok((mpc, cot)) => Ok(PreparedSession { driver, control, tls, zk, cot, config, mpc }),
        Err(e) => {
            // control is then the last handle (see `told`)
            drop((tls, zk));
            Box::pin(told(Err(e), control, driver)).await
        }
    }
}

impl PreparedSession {
    /// The longest request this session takes: what MPC mode prepared for, `max_sent` in
    /// proxy mode.
    pub fn capacity(&self) -> usize {
        self.mpc.as_ref().map_or(self.config.max_sent as usize, |m| m.connection.capacity())
    }

    /// Sends `request` and proves what `reveal` selects, as [`notarize_with_progress`] does,
    /// with `now` (Unix seconds) the time the server's certificate is checked at.
    pub async fn notarize<P: Fn(Progress)>(
        self,
        request: Vec<u8>,
        reveal: RevealConfig,
        now: u64,
        progress: P,
    ) -> Result<ProverOutput, ProverError> {
        self.notarize_exchanges(vec![ExchangePlan { request, reveal }], now, progress).await
    }

    /// Sends the requests of `plans` and proves what each reveals, as [`notarize_exchanges`]
    /// does (their lengths together within [`Self::capacity`]).
    pub async fn notarize_exchanges<P: Fn(Progress)>(
        self,
        plans: Vec<ExchangePlan>,
        now: u64,
        progress: P,
    ) -> Result<ProverOutput, ProverError> {
        let PreparedSession { mut driver, mut control, tls, mut zk, cot, mut config, mpc } = self;
        config.now = now;
        let outcome = match (check_plans(&plans), mpc) {
            (Err(e), _) => Err(e),
            (Ok(()), None) => {
                with_driver(&mut driver, Box::pin(session(&mut control, tls, zk, cot, config, plans, &progress))).await
            }
            (Ok(()), Some(MpcPrepared { mut opened, connection })) => {
                drop(tls);
                let run = async {
                    let request = all_requests(&plans);
                    if request.len() > connection.capacity() {
                        return Err(ProverError::RequestTooLarge {
                            len: request.len(),
                            max: connection.capacity() as u32,
                        });
                    }
                    let report = |phase, fraction| progress(Progress { phase, fraction });
                    let server = connect_proxy(&config, &opened.target).await?;
                    let beside = cots_beside_max(&config, Sizing::of_exchanges(&plans));
                    let exchanged = Box::pin(mpc_exchange(
                        &mut zk,
                        cot,
                        &mut opened.prover,
                        &config,
                        server,
                        connection,
                        &opened.target,
                        &request,
                        beside,
                        &report,
                    ))
                    .await?;
                    prove(&mut control, &mut zk, &mut opened.prover, &config, exchanged, &plans, &report).await
                };
                let outcome = with_driver(&mut driver, Box::pin(run)).await;
                // control is then the last handle (see `told`)
                drop(zk);
                outcome
            }
        };
        told(explained(outcome, &mut control), control, driver).await
    }
}

async fn within<T>(
    d: std::time::Duration,
    what: &'static str,
    f: impl std::future::Future<Output = T>,
) -> Result<T, ProverError> {
    crate::transport::timeout(d, f).await.ok_or(ProverError::Timeout(what))
}

async fn recv_control(
    control: &mut MuxChannel,
    d: std::time::Duration,
    what: &'static str,
) -> Result<ControlMessage, ProverError> {
    match ControlMessage::decode(&within(d, what, control.recv()).await??)? {
        ControlMessage::Abort { reason } => Err(ProverError::VerifierRejected(reason)),
        ControlMessage::Busy { reason, retry_after } => Err(ProverError::Busy { reason, retry_after }),
        msg => Ok(msg),
    }
}

fn to_u64(ranges: Vec<Range<usize>>) -> Vec<Range<u64>> {
    ranges.into_iter().map(|r| r.start as u64..r.end as u64).collect()
}

/// A session the verifier accepted: the server it names, the COTs it asked for, and the
/// proof engine's prover.
struct Opened {
    target: ServerTarget,
    preprocess: usize,
    prover: Prover<FerretReceiver>,
}

/// Asks the verifier for a session sized as `sizing` says, and waits for its acceptance.
async fn open(
    control: &mut MuxChannel,
    config: &ProverConfig,
    sizing: Sizing,
    report: &dyn Fn(Phase, f64),
) -> Result<Opened, ProverError> {
    let opened = ask(control, config, sizing, report).await?;
    accepted(control, config, report).await?;
    Ok(opened)
}

/// Asks the verifier for a session sized as `sizing` says. Its preprocessing may start at
/// once: the verifier runs its side while it dials the server, and drops it if it refuses.
async fn ask(
    control: &mut MuxChannel,
    config: &ProverConfig,
    sizing: Sizing,
    report: &dyn Fn(Phase, f64),
) -> Result<Opened, ProverError> {
    report(Phase::Connect, 0.02);
    config.check()?;
    let target = ServerTarget::new(&config.server, &config.server_name)?;
    if sizing.request_len > config.max_sent as usize {
        return Err(ProverError::RequestTooLarge { len: sizing.request_len, max: config.max_sent });
    }
    // what the request names is what both sides generate (an over-large count is the
    // verifier's to refuse)
    let mode = config.mode.session_mode();
    // A server offered TLS 1.3 mostly chooses it, and the first suite offered: preprocess for
    // that key derivation.
    let len = if sizing.request_whole { 0 } else { sizing.request_len };
    // (MPC mode offers its two-party suites in its own order)
    let first13 = match mode {
        SessionMode::Mpc => crate::mpc::connection::Suites13::of(&config.tls13_suites).map(|s| s.first()),
        SessionMode::Proxy => config.tls13_suites.first().copied(),
    };
    let (derivation, request_keystream) = match first13 {
        Some(suite) if config.tls_versions.contains(&TlsVersion::Tls13) => (
            proof::derivation_cots(
                suite,
                usize::from(!sizing.request_whole) + usize::from(sizing.response != RevealExtent::Whole),
            ),
            proof::keystream_cots_of(suite, len) + proof::line_break_cots_of(suite, sizing.request_hidden),
        ),
        // TLS 1.2 in proxy mode: the costliest of the suites offered, since the server chooses
        // (MPC mode speaks AES-128-GCM)
        _ if mode == SessionMode::Proxy => config
            .tls12_suites
            .iter()
            .map(|&suite| {
                (
                    crate::cost::derivation_cots_12(suite),
                    crate::cost::keystream_cots_12(suite, len)
                        + crate::cost::line_break_cots_12(suite, sizing.request_hidden),
                )
            })
            .fold((proof::PREPROCESS_COTS, 0), |(d, k), (d2, k2)| (d.max(d2), k.max(k2))),
        _ => (proof::PREPROCESS_COTS, proof::keystream_cots(len) + proof::line_break_cots(sizing.request_hidden)),
    };
    // A partly revealed response asks for one setup iteration more in proxy mode, where it runs
    // beside the TLS exchange; in MPC mode nothing runs beside it, and the iteration would only
    // delay the connection (the keystream proof makes its COTs when it needs them).
    let mut preprocess = proof::preprocess_cots(
        derivation,
        request_keystream,
        sizing.response == RevealExtent::Partly && mode != SessionMode::Mpc,
    );
    if mode == SessionMode::Mpc {
        preprocess +=
            crate::mpc::reproof::preprocess_cots(sizing.request_len, config.tls_versions.contains(&TlsVersion::Tls13));
    }
    let preprocess = u32::try_from(preprocess).unwrap_or(u32::MAX);
    let req = SessionRequest {
        version: PROTOCOL_VERSION,
        mode,
        server: target.address(),
        server_name: target.name().to_string(),
        max_sent: config.max_sent,
        max_recv: config.max_recv,
        preprocess,
        prg: config.prg,
        response_in_zk: sizing.response == RevealExtent::Partly,
    };
    control.send(ControlMessage::Request(req).encode()).await?;
    Ok(Opened { target, preprocess: preprocess as usize, prover: Prover::new(FerretReceiver::with_prg(config.prg)) })
}

/// Waits for the verifier to accept the session asked for, reporting its place while it waits
/// for a turn (the verifier says so every few seconds, so each wait has the step's time).
async fn accepted(
    control: &mut MuxChannel,
    config: &ProverConfig,
    report: &dyn Fn(Phase, f64),
) -> Result<(), ProverError> {
    loop {
        match recv_control(control, config.step_timeout, "the verifier to accept").await? {
            ControlMessage::Accepted { .. } => break,
            ControlMessage::Waiting { position } => report(Phase::Waiting { position }, 0.02),
            other => return Err(ProverError::UnexpectedMessage { expected: "Accepted", got: other.kind() }),
        }
    }
    report(Phase::Preprocess, 0.05);
    Ok(())
}

/// `f` bounded by `d` counted from when `start` completes (not before).
async fn within_after<T>(
    start: impl std::future::Future<Output = ()>,
    d: std::time::Duration,
    what: &'static str,
    f: impl std::future::Future<Output = T>,
) -> Result<T, ProverError> {
    let deadline = async {
        start.await;
        within(d, what, std::future::pending::<()>()).await
    };
    futures::pin_mut!(f, deadline);
    match futures::future::select(f, deadline).await {
        futures::future::Either::Left((value, _)) => Ok(value),
        futures::future::Either::Right((ended, _)) => Err(ended.err().unwrap_or(ProverError::Timeout(what))),
    }
}

#[allow(clippy::too_many_arguments)]
async fn session(
    control: &mut MuxChannel,
    mut tls: MuxChannel,
    mut zk: MuxChannel,
    cot: MuxChannel,
    config: ProverConfig,
    plans: Vec<ExchangePlan>,
    progress: &dyn Fn(Progress),
) -> Result<ProverOutput, ProverError> {
    let report = |phase, fraction| progress(Progress { phase, fraction });
    check_plans(&plans)?;
    let sizing = Sizing::of_exchanges(&plans);
    // On the heap: an MPC connection's future is large.
    let (mut prover, exchanged) = match &config.mode {
        ProverMode::Proxy => {
            let Opened { target, preprocess, mut prover } = ask(control, &config, sizing, &report).await?;
            let exchanged = Box::pin(proxy_exchange(
                control,
                &mut tls,
                &mut zk,
                &mut prover,
                &config,
                &target,
                &plans,
                preprocess,
                &report,
            ))
            .await?;
            (prover, exchanged)
        }
        ProverMode::Mpc { .. } => {
            let Opened { target, preprocess, mut prover } = open(control, &config, sizing, &report).await?;
            let request = all_requests(&plans);
            // the proxy connects to the server while the preparation runs
            let (server, prepared) = futures::join!(
                connect_proxy(&config, &target),
                mpc_prepare(&mut zk, cot, &mut prover, preprocess, &config, request.len())
            );
            let ((prepared, cot), server) = (prepared?, server?);
            let exchanged = Box::pin(mpc_exchange(
                &mut zk,
                cot,
                &mut prover,
                &config,
                server,
                prepared,
                &target,
                &request,
                cots_beside_max(&config, sizing),
                &report,
            ))
            .await?;
            (prover, exchanged)
        }
    };
    prove(control, &mut zk, &mut prover, &config, exchanged, &plans, &report).await
}

/// What the prover refuses of its requests before anything reaches the verifier or the
/// server: none, or more than the verifier takes; and a request whose hidden bytes hold a
/// line break, which the proof would fail on (docs/protocol.md, "Requests and responses"). A
/// selector that does not resolve fails later, with its own error.
fn check_plans(plans: &[ExchangePlan]) -> Result<(), ProverError> {
    if plans.is_empty() || plans.len() > MAX_EXCHANGES {
        return Err(ProverError::RequestCount { count: plans.len(), max: MAX_EXCHANGES });
    }
    let mut at = 0;
    for plan in plans {
        if let Ok(revealed) = plan.reveal.sent.resolve(&plan.request) {
            check_hidden_line_breaks(&to_u64(revealed), &plan.request).map_err(|e| match e {
                RevealError::HiddenLineBreak { at: i } => RevealError::HiddenLineBreak { at: at + i },
                other => other,
            })?;
        }
        at += plan.request.len() as u64;
    }
    Ok(())
}

/// The requests one after another: the sent direction's plaintext.
fn all_requests(plans: &[ExchangePlan]) -> Vec<u8> {
    plans.iter().flat_map(|p| p.request.iter().copied()).collect()
}

/// Each direction's ranges for `select` of every exchange, resolved over that exchange's own
/// bytes (`parts`, in order) and placed where they are in the direction.
fn resolve_each(
    plans: &[ExchangePlan],
    parts: &[Range<usize>],
    plain: &[u8],
    select: impl Fn(&RevealConfig) -> &Reveal,
) -> Result<Vec<Range<u64>>, ProverError> {
    let mut all = Vec::new();
    for (plan, part) in plans.iter().zip(parts) {
        if part.is_empty() {
            continue;
        }
        let at = part.start as u64;
        all.extend(
            select(&plan.reveal)
                .resolve(&plain[part.clone()])?
                .into_iter()
                .map(|r| r.start as u64 + at..r.end as u64 + at),
        );
    }
    // adjacent parts' ranges meet: one range, as a canonical plan has it
    Ok(join_adjacent(all))
}

/// The prove phase of both modes: the reveal plan, the transcript proof, the verdict.
async fn prove(
    control: &mut MuxChannel,
    zk: &mut MuxChannel,
    prover: &mut Prover<FerretReceiver>,
    config: &ProverConfig,
    exchanged: Exchanged,
    plans: &[ExchangePlan],
    report: &dyn Fn(Phase, f64),
) -> Result<ProverOutput, ProverError> {
    let step = config.step_timeout;
    let Exchanged { keys, sent_plain, recv_plain, response, unproven } = exchanged;

    // What to reveal, resolved against our own plaintext: each exchange's choices over its
    // own request and response.
    let mut requests = Vec::with_capacity(plans.len());
    for plan in plans {
        let at = requests.last().map_or(0, |r: &Range<usize>| r.end);
        requests.push(at..at + plan.request.len());
    }
    let heads: Vec<bool> = plans.iter().map(|p| p.request.starts_with(b"HEAD ")).collect();
    let responses = split_responses(&recv_plain, &heads);
    let mut reveal = [
        resolve_each(plans, &requests, &sent_plain, |r| &r.sent)?,
        resolve_each(plans, &responses, &recv_plain, |r| &r.received)?,
    ];
    // each exchange's statements read in its request and response; their values taken out of
    // the reveal
    use crate::protocol::disclose::statement::Direction::{Received, Sent};
    let stated: Vec<placement::Stated<'_>> = (plans.iter().zip(requests.iter().zip(&responses)).enumerate())
        .flat_map(|(i, (p, (q, r)))| {
            [
                (Sent, i + 1, q.clone(), p.reveal.request_statements.as_slice()),
                (Received, i + 1, r.clone(), p.reveal.statements.as_slice()),
            ]
        })
        .collect();
    let (statements, [string_content_sent, string_content_received]) =
        placement::place([&sent_plain, &recv_plain], &mut reveal, &stated)?;
    let [sent, received] = reveal;
    let plan = RevealPlan {
        sent,
        received,
        commit_sent: resolve_each(plans, &requests, &sent_plain, |r| &r.commit_sent)?,
        commit_received: resolve_each(plans, &responses, &recv_plain, |r| &r.commit_received)?,
        statements,
        string_content_sent,
        string_content_received,
    };
    if unproven > 0 && covers_all(&plan.received, recv_plain.len() as u64) {
        return Err(ProverError::UnprovenReceived(unproven));
    }
    check_commitments(&plan.commit_sent, sent_plain.len() as u64)?;
    check_commitments(&plan.commit_received, recv_plain.len() as u64)?;
    control.send(ControlMessage::Reveal(plan.clone()).encode()).await?;

    report(Phase::Prove, 0.4);
    let blinders: Vec<[u8; 16]> =
        (0..plan.commit_sent.len() + plan.commit_received.len()).map(|_| rand::random()).collect();
    let commitments = match &keys {
        SessionKeys::Tls12 { session, master_secret } => {
            let inputs = PublicInputs::new(session, &plan);
            let proof = Box::pin(proof::run(prover, zk, Some(&**master_secret), Some(&blinders), &inputs, |cvd| {
                session.server_finished_hash(cvd)
            }));
            within(step * 5, "the proof", proof).await??.commitments
        }
        SessionKeys::Tls13 { transcript, handshake, handshake_secret, shapes } => {
            control.send(ControlMessage::RecordShapes(shapes.clone()).encode()).await?;
            let inputs = PublicInputs13::new(transcript, &plan, shapes);
            let proof =
                Box::pin(proof13::run(prover, zk, Some(handshake_secret.as_bytes()), Some(&blinders), &inputs, |_| {
                    Ok(handshake.clone())
                }));
            within(step * 5, "the proof", proof).await??.commitments
        }
    };
    let commitments: Vec<_> = commitments.into_iter().zip(blinders).collect();

    match recv_control(control, step, "the verdict").await? {
        ControlMessage::Verified { verdict, attestation } => {
            let verified: VerifierOutput = verdict.restore(&sent_plain, &recv_plain)?;
            let attestation = attestation
                .map(|a| {
                    crate::protocol::disclose::attest::accept(*a, &verified, &sent_plain, &recv_plain, &commitments)
                })
                .transpose()?;
            report(Phase::Done, 1.0);
            Ok(ProverOutput { request: sent_plain, response, verified, commitments, attestation })
        }
        other => Err(ProverError::UnexpectedMessage { expected: "Verified", got: other.kind() }),
    }
}

/// What the exchange with the server leaves the prover for the transcript proof: the records
/// as both parties hold them and its secret, the plaintext of both directions.
struct Exchanged {
    keys: SessionKeys,
    sent_plain: Vec<u8>,
    recv_plain: Vec<u8>,
    /// The HTTP response as the exchange read it.
    response: Vec<u8>,
    /// Server bytes that reached the prover beyond the proven transcript.
    unproven: u64,
}

/// The transcript as the verifier holds it and the prover's secret for its proof (copies wiped
/// when the session ends), per TLS version.
enum SessionKeys {
    Tls12 {
        session: transcript::SessionTranscript,
        master_secret: zeroize::Zeroizing<[u8; 48]>,
    },
    Tls13 {
        transcript: Transcript13,
        /// The prover's own reading of the handshake, as the verifier will read it.
        handshake: Handshake13,
        handshake_secret: crate::tls::tls13::Secret,
        shapes: RecordShapes,
    },
}

/// Proxy mode: TLS through the verifier, with the OT setup for the proof overlapping it. The
/// channel records the raw bytes both ways, which are what the verifier relayed; the prover
/// then reads its own session as the verifier will.
#[allow(clippy::too_many_arguments)]
async fn proxy_exchange(
    control: &mut MuxChannel,
    tls: &mut MuxChannel,
    zk: &mut MuxChannel,
    prover: &mut Prover<FerretReceiver>,
    config: &ProverConfig,
    target: &ServerTarget,
    plans: &[ExchangePlan],
    preprocess: usize,
    report: &dyn Fn(Phase, f64),
) -> Result<Exchanged, ProverError> {
    let requests: Vec<&[u8]> = plans.iter().map(|p| p.request.as_slice()).collect();
    let now = unix_time(config.now);
    let mut client = tls_client(config, target.name())?;
    let mut io = TlsChannelIo::new(tls);
    let limits = crate::http::Limits { max_header_bytes: 64 * 1024, max_body_bytes: config.max_recv as usize };
    // Two steps, each with its own clock: the verifier's acceptance, then the exchange.
    let (admitted, admission) = futures::channel::oneshot::channel::<()>();
    let tls_part = async {
        accepted(control, config, report).await?;
        let _ = admitted.send(());
        report(Phase::Request, 0.1);
        let exchange = async {
            let response = driver::http_exchanges(&mut client, &mut io, &requests, limits)
                .await
                .map_err(|e| error::tls_failure(e, config, target.name()))?;
            // The server's close_notify, when it follows the response, goes into the transcript
            // so the verdict can say the response was not cut off; a server that keeps the
            // connection open costs at most SERVER_QUIET.
            let _ = within(SERVER_QUIET, "close_notify", driver::read_until_close(&mut client, &mut io)).await;
            io.shutdown().await?;
            Ok::<_, ProverError>(response)
        };
        within(config.step_timeout, "the TLS exchange", exchange).await?
    };
    // The preprocessing starts as the session is asked for (see `ask`) and runs beside both
    // steps, so it has both steps' time once the session is admitted (the verifier takes its
    // part only then); a refusal ends it.
    let preprocess = within_after(
        async {
            let _ = admission.await;
        },
        config.step_timeout * 2,
        "the OT preprocessing",
        prover.preprocess(zk, preprocess),
    );
    let preprocess = async { Ok::<_, ProverError>(preprocess.await??) };
    let (response, ()) = futures::try_join!(tls_part, preprocess)?;
    let unread = io.unread();
    let [sent_raw, mut received_raw] = io.take_log();
    // The proof covers the server's whole records; a partial one at the end (the server sent
    // the rest later, or never) stays out, like bytes that arrived but were not read.
    let whole = crate::tls::codec::whole_records_len(&received_raw);
    let unproven = unread + (received_raw.len() - whole) as u64;
    received_raw.truncate(whole);
    control
        .send(
            ControlMessage::TlsDone(TlsDone { sent: sent_raw.len() as u64, received: received_raw.len() as u64 })
                .encode(),
        )
        .await?;
    let (keys, sent_plain, recv_plain) = match &client {
        AnyVersionClient::Tls12(client) => {
            let ms = zeroize::Zeroizing::new(
                client.master_secret().ok_or(crate::tls::Error::InvalidState("no master secret"))?.0,
            );
            let keys = SessionKeys::Tls12 { session: transcript::parse(&sent_raw, &received_raw)?, master_secret: ms };
            (
                keys,
                client.transcript().app_plaintext(Direction::Sent),
                client.transcript().app_plaintext(Direction::Received),
            )
        }
        AnyVersionClient::Tls13 { client, .. } => {
            let schedule = client.key_schedule().ok_or(crate::tls::Error::InvalidState("no key schedule"))?;
            tls13_keys(&sent_raw, &received_raw, schedule, &config.roots, target.name(), now)?
        }
    };
    Ok(Exchanged { keys, sent_plain, recv_plain, response, unproven })
}

/// A TLS 1.3 session's keys for its proof, from the wire bytes as the verifier holds them and
/// the key schedule: the prover reads its own session as the verifier will (the handshake
/// checked, each direction's application records opened). Returns the keys and the request and
/// response data.
fn tls13_keys(
    sent_raw: &[u8],
    received_raw: &[u8],
    schedule: &crate::tls::tls13::Schedule13,
    roots: &crate::tls::RootStore,
    name: &str,
    now: rustls_pki_types::UnixTime,
) -> Result<(SessionKeys, Vec<u8>, Vec<u8>), ProverError> {
    let application =
        schedule.application_traffic.as_ref().ok_or(crate::tls::Error::InvalidState("no application secrets"))?;
    let transcript = transcript13::parse(sent_raw, received_raw)?;
    let (c_hs, s_hs) = (&schedule.handshake_traffic.client, &schedule.handshake_traffic.server);
    let handshake = transcript.read_handshake(c_hs.as_bytes(), s_hs.as_bytes(), roots, name, now)?;
    let suite = transcript.suite();
    let read =
        |secret, d| proof13::read_records(suite, secret, proof13::application_records(&transcript, &handshake, d));
    let (sent, sent_plain) = read(&application.client, Direction::Sent)?;
    let (received, recv_plain) = read(&application.server, Direction::Received)?;
    let keys = SessionKeys::Tls13 {
        handshake_secret: schedule.handshake_secret.clone(),
        transcript,
        handshake,
        shapes: RecordShapes { sent, received },
    };
    Ok((keys, sent_plain, recv_plain))
}

/// The TLS client for the versions the prover offers: both in one ClientHello, or one.
fn tls_client(config: &ProverConfig, name: &str) -> Result<AnyVersionClient, ProverError> {
    use crate::tls::tls13::{Client13, Config13};
    let now = unix_time(config.now);
    let config12 =
        ClientConfig { cipher_suites: config.tls12_suites.clone(), ..ClientConfig::new(config.roots.clone()) };
    let config13 = Config13 { suites: config.tls13_suites.clone(), ..Config13::new(config.roots.clone()) };
    let (tls12, tls13) =
        (config.tls_versions.contains(&TlsVersion::Tls12), config.tls_versions.contains(&TlsVersion::Tls13));
    Ok(match (tls12, tls13) {
        (true, true) => AnyVersionClient::new(config13, config12, name, now)?,
        (false, true) => {
            AnyVersionClient::Tls13 { client: Box::new(Client13::new(config13, name, now)?), undecided: None }
        }
        (true, false) => AnyVersionClient::Tls12(Box::new(Client::new(config12, name, now)?)),
        (false, false) => return Err(ProverError::Unsupported("offering no TLS version")),
    })
}
