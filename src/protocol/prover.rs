//! The prover's side of a session (native and browser): TLS through the verifier (proxy
//! mode) or through a WebSocket-to-TCP proxy with the verifier as the other half of the client
//! (MPC mode), then the proof of what it chose to reveal.

use crate::channel::{Channel, ChannelError};
use crate::mpc::connection::ConnectionError;
use crate::mpc::cots_beside::{BesideError, OwnThread};
use crate::ot::FerretReceiver;
use crate::primitives::prg::PrgKind;
use crate::protocol::disclose::output::VerifierOutput;
use crate::protocol::disclose::reveal::{
    check_commitments, check_hidden_line_breaks, covers_all, Reveal, RevealConfig, RevealError,
};
use crate::protocol::messages::{
    ControlMessage, MessageError, RecordShapes, RevealPlan, SessionMode, SessionRequest, TlsDone, TlsVersion,
    PROTOCOL_VERSION,
};
use crate::protocol::observe::tls12::{self as transcript, TranscriptError};
use crate::protocol::observe::tls13::{self as transcript13, Handshake13, Transcript13};
use crate::protocol::prove::tls12::{self as proof, PublicInputs};
use crate::protocol::prove::tls13::{self as proof13, Proof13Error, PublicInputs13};
use crate::protocol::target::{ServerTarget, TargetError};
use crate::tls::{driver, unix_time, AnyVersionClient, Client, ClientConfig, Direction, RootStore};
use crate::transport::MessageSocket;
use crate::wire::mux::{multiplex, MuxChannel, MuxError, MuxLimits, SessionChannels};
use crate::wire::tls_channel::TlsChannelIo;
use crate::zk::{ProofError, Prover};
use futures::FutureExt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// The TLS versions to offer (proxy mode; MPC mode speaks TLS 1.2): both go in one
    /// ClientHello, and the server chooses.
    pub tls_versions: Vec<TlsVersion>,
    /// The TLS 1.3 suites to offer, in order of preference (usually
    /// [`Suite13::PROVER_DEFAULT`](crate::tls::tls13::Suite13::PROVER_DEFAULT)).
    pub tls13_suites: Vec<crate::tls::tls13::Suite13>,
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
    pub fn session_mode(&self) -> SessionMode {
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

/// How long the prover waits for the server's close_notify after a complete response.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The default for [`ProverConfig::step_timeout`].
pub const DEFAULT_STEP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum ProverError {
    #[error("session transport: {0}")]
    Mux(#[from] MuxError),
    #[error("channel: {0}")]
    Channel(#[from] ChannelError),
    #[error(transparent)]
    Message(#[from] MessageError),
    #[error("the verifier refused or aborted: {0}")]
    VerifierRejected(String),
    #[error("unexpected {got} message from the verifier (expected {expected})")]
    UnexpectedMessage { expected: &'static str, got: &'static str },
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::Error),
    #[error("request of {len} bytes exceeds max_sent = {max}")]
    RequestTooLarge { len: usize, max: u32 },
    #[error("reveal: {0}")]
    Reveal(#[from] RevealError),
    #[error("own transcript: {0}")]
    Transcript(#[from] TranscriptError),
    #[error("proof: {0}")]
    Proof(#[from] ProofError),
    #[error("proof: {0}")]
    Proof13(#[from] Proof13Error),
    #[error("not supported: {0}")]
    Unsupported(&'static str),
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    #[error("cannot reach the proxy: {0}")]
    ProxyUnreachable(crate::transport::TransportError),
    #[error(transparent)]
    Attestation(#[from] crate::protocol::disclose::attest::AttestError),
    #[error("the connection in two parties: {0}")]
    Connection(#[from] crate::mpc::connection::ConnectionError),
    #[error("the proof of the garbling: {0}")]
    Reproof(#[from] crate::mpc::reproof::ReproofError),
    #[error("COTs beside the connection: {0}")]
    Beside(#[from] crate::mpc::cots_beside::BesideError),
    /// The fast path opens the server's write key, which would let the verifier decrypt
    /// server bytes it relayed that the proof does not cover.
    #[error("the server sent {0} bytes after the proven transcript; revealing the whole response (the fast path) would show them to the verifier, so the session is refused")]
    UnprovenReceived(u64),
}

impl ProverError {
    /// A stable, machine-readable name for this failure: the browser API's error `code`.
    ///
    /// The verifier's refusals arrive as text (`Abort { reason }`, its `VerifierError`
    /// message); they are classified by those messages, which a native test pins down.
    pub fn code(&self) -> &'static str {
        use crate::tls::Error as Tls;
        match self {
            ProverError::VerifierRejected(reason) => rejection_code(reason),
            ProverError::Timeout(_) => "TIMEOUT",
            ProverError::Target(TargetError::NameMismatch { .. }) => "SERVER_NAME_MISMATCH",
            ProverError::Target(_) => "BAD_OPTIONS",
            ProverError::RequestTooLarge { .. } => "LIMIT_EXCEEDED",
            ProverError::Tls(Tls::Http(msg)) if msg.contains("larger than") => "LIMIT_EXCEEDED",
            ProverError::Tls(Tls::Io(_) | Tls::Closed) => "CONNECTION_LOST",
            ProverError::Tls(_) => "TLS_ERROR",
            ProverError::Reveal(_) | ProverError::UnprovenReceived(_) | ProverError::Unsupported(_) => "BAD_OPTIONS",
            ProverError::Mux(_) | ProverError::Channel(_) => "CONNECTION_LOST",
            ProverError::ProxyUnreachable(_) => "PROXY_UNREACHABLE",
            ProverError::Attestation(_) => "BAD_ATTESTATION",
            ProverError::Connection(ConnectionError::Tls(Tls::Io(msg))) => proxy_code(msg),
            ProverError::Connection(ConnectionError::Tls(_)) => "TLS_ERROR",
            ProverError::Connection(ConnectionError::TooMuchSent { .. } | ConnectionError::TooMuchReceived { .. }) => {
                "LIMIT_EXCEEDED"
            }
            ProverError::Connection(ConnectionError::Channel(_)) => "CONNECTION_LOST",
            ProverError::Beside(BesideError::Channel(_)) => "CONNECTION_LOST",
            ProverError::Connection(_)
            | ProverError::Reproof(_)
            | ProverError::Beside(_)
            | ProverError::Message(_)
            | ProverError::UnexpectedMessage { .. }
            | ProverError::Transcript(_)
            | ProverError::Proof(_)
            | ProverError::Proof13(_) => "PROTOCOL_ERROR",
        }
    }
}

/// Classifies a failure of the stream through the proxy by the close code the proxy sent
/// ([`crate::transport::close_code`]).
fn proxy_code(msg: &str) -> &'static str {
    use crate::transport::close_code::{BAD_GATEWAY, POLICY, TRY_AGAIN_LATER};
    let closed_with = |code: u16| msg.contains(&format!("closed by peer (code {code})"));
    if closed_with(POLICY) {
        "SERVER_NOT_ALLOWED"
    } else if closed_with(BAD_GATEWAY) {
        "SERVER_UNREACHABLE"
    } else if closed_with(TRY_AGAIN_LATER) {
        "BUSY"
    } else {
        "CONNECTION_LOST"
    }
}

/// Classifies a verifier's refusal by its `VerifierError` message.
fn rejection_code(reason: &str) -> &'static str {
    if reason.starts_with("cannot connect to the server") || reason.contains("cannot resolve target") {
        "SERVER_UNREACHABLE"
    } else if reason.starts_with("verifier busy") {
        "BUSY"
    } else if reason.starts_with("server name mismatch") {
        "SERVER_NAME_MISMATCH"
    } else if reason.starts_with("server not allowed") {
        "SERVER_NOT_ALLOWED"
    } else if reason.contains("exceeds this verifier's limit")
        || reason.starts_with("transcript beyond the limits")
        || reason.starts_with("application data of")
    {
        "LIMIT_EXCEEDED"
    } else if reason.starts_with("timed out") {
        "TIMEOUT"
    } else {
        "VERIFIER_REJECTED"
    }
}

/// Where a session is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Opening the session; the verifier connects to the server.
    Connect,
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

/// What the prover ends with.
pub struct ProverOutput {
    /// The HTTP request and response plaintext, in full (only the prover has them).
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
    let (driver, channels) = multiplex(socket, MuxLimits::default());
    let SessionChannels { mut control, tls, zk, cot } = channels;
    // on the heap: in wasm a large future built on the stack and moved a few times overflowed
    // the main thread's stack (a_sessions_future_stays_small)
    let outcome =
        with_driver(driver, Box::pin(session(&mut control, tls, zk, cot, config, request, reveal, &progress))).await;
    explained(outcome, &mut control)
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
            (_, Err(e @ ProverError::VerifierRejected(_))) | (Ok(()), Err(e)) => Err(e),
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
            if let Ok(ControlMessage::Abort { reason }) = ControlMessage::decode(&frame) {
                return Err(ProverError::VerifierRejected(reason));
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
        // The request is the sent direction's whole plaintext, so whether it takes the fast
        // path is known now (a selector that does not resolve fails later, with its own error).
        let revealed = reveal.sent.resolve(request).map(to_u64).unwrap_or_default();
        let request_whole = covers_all(&revealed, request.len() as u64);
        let shown: u64 = revealed.iter().map(|r| r.end - r.start).sum();
        Sizing {
            request_hidden: request.len() - shown as usize,
            ..Sizing::new(request.len(), request_whole, &reveal.received)
        }
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
    ServerTarget::new(&config.server, &config.server_name)?;
    let (driver, channels) = multiplex(socket, MuxLimits::default());
    let SessionChannels { mut control, tls, mut zk, cot } = channels;
    let mut driver = driver.boxed_local().fuse();
    let report = |phase, fraction| progress(Progress { phase, fraction });
    let (mpc, cot) = match &config.mode {
        ProverMode::Proxy => (None, cot),
        ProverMode::Mpc { .. } => {
            let setup = async {
                let mut opened = open(&mut control, &config, sizing, &report).await?;
                let (mut connection, cot) =
                    mpc_prepare(&mut zk, cot, &mut opened.prover, opened.preprocess, &config, sizing.request_len)
                        .await?;
                // prepared means the verifier holds the tables: the request may come much later
                within(config.step_timeout * 5, "garbling ahead", connection.settle(&mut zk)).await??;
                Ok((MpcPrepared { opened, connection }, cot))
            };
            let outcome = with_driver(&mut driver, Box::pin(setup)).await;
            let (prepared, cot) = explained(outcome, &mut control)?;
            (Some(prepared), cot)
        }
    };
    Ok(PreparedSession { driver, control, tls, zk, cot, config, mpc })
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
        let PreparedSession { mut driver, mut control, tls, mut zk, cot, mut config, mpc } = self;
        config.now = now;
        refuse_hidden_line_breaks(&request, &reveal)?;
        let outcome = match mpc {
            None => {
                with_driver(
                    &mut driver,
                    Box::pin(session(&mut control, tls, zk, cot, config, request, reveal, &progress)),
                )
                .await
            }
            Some(MpcPrepared { mut opened, connection }) => {
                let run = async {
                    if request.len() > connection.capacity() {
                        return Err(ProverError::RequestTooLarge {
                            len: request.len(),
                            max: connection.capacity() as u32,
                        });
                    }
                    let report = |phase, fraction| progress(Progress { phase, fraction });
                    let server = connect_proxy(&config, &opened.target).await?;
                    let beside = cots_beside_max(&config, Sizing::of(&request, &reveal));
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
                    prove(&mut control, &mut zk, &mut opened.prover, &config, exchanged, reveal, &report).await
                };
                with_driver(&mut driver, Box::pin(run)).await
            }
        };
        explained(outcome, &mut control)
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
    let msg = ControlMessage::decode(&within(d, what, control.recv()).await??)?;
    if let ControlMessage::Abort { reason } = msg {
        return Err(ProverError::VerifierRejected(reason));
    }
    Ok(msg)
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
    let target = ServerTarget::new(&config.server, &config.server_name)?;
    if config.tls_versions != [TlsVersion::Tls12] && config.mode.session_mode() == SessionMode::Mpc {
        return Err(ProverError::Unsupported("TLS 1.3 in MPC mode (the two-party client speaks TLS 1.2)"));
    }
    if sizing.request_len > config.max_sent as usize {
        return Err(ProverError::RequestTooLarge { len: sizing.request_len, max: config.max_sent });
    }
    // what the request names is what both sides generate (an over-large count is the
    // verifier's to refuse)
    let mode = config.mode.session_mode();
    // A server offered TLS 1.3 mostly chooses it, and the first suite offered: preprocess for
    // that key derivation.
    let len = if sizing.request_whole { 0 } else { sizing.request_len };
    let (derivation, request_keystream) = match config.tls13_suites.first() {
        Some(&suite) if config.tls_versions.contains(&TlsVersion::Tls13) => (
            proof::derivation_cots(
                suite,
                usize::from(!sizing.request_whole) + usize::from(sizing.response != RevealExtent::Whole),
            ),
            proof::keystream_cots_of(suite, len) + proof::line_break_cots_of(suite, sizing.request_hidden),
        ),
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
        preprocess += crate::mpc::reproof::preprocess_cots(sizing.request_len);
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
    };
    control.send(ControlMessage::Request(req).encode()).await?;
    Ok(Opened { target, preprocess: preprocess as usize, prover: Prover::new(FerretReceiver::with_prg(config.prg)) })
}

/// Waits for the verifier to accept the session asked for.
async fn accepted(
    control: &mut MuxChannel,
    config: &ProverConfig,
    report: &dyn Fn(Phase, f64),
) -> Result<(), ProverError> {
    match recv_control(control, config.step_timeout, "the verifier to accept").await? {
        ControlMessage::Accepted { .. } => {}
        other => return Err(ProverError::UnexpectedMessage { expected: "Accepted", got: other.kind() }),
    }
    report(Phase::Preprocess, 0.05);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn session(
    control: &mut MuxChannel,
    mut tls: MuxChannel,
    mut zk: MuxChannel,
    cot: MuxChannel,
    config: ProverConfig,
    request: Vec<u8>,
    reveal: RevealConfig,
    progress: &dyn Fn(Progress),
) -> Result<ProverOutput, ProverError> {
    let report = |phase, fraction| progress(Progress { phase, fraction });
    refuse_hidden_line_breaks(&request, &reveal)?;
    let sizing = Sizing::of(&request, &reveal);
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
                &request,
                preprocess,
                &report,
            ))
            .await?;
            (prover, exchanged)
        }
        ProverMode::Mpc { .. } => {
            let Opened { target, preprocess, mut prover } = open(control, &config, sizing, &report).await?;
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
    prove(control, &mut zk, &mut prover, &config, exchanged, reveal, &report).await
}

/// A request whose hidden bytes hold a line break is refused before anything reaches the
/// verifier or the server: the proof would fail on it (docs/protocol.md, "One request, one
/// response"). A selector that does not resolve fails later, with its own error.
fn refuse_hidden_line_breaks(request: &[u8], reveal: &RevealConfig) -> Result<(), ProverError> {
    match reveal.sent.resolve(request) {
        Ok(revealed) => Ok(check_hidden_line_breaks(&to_u64(revealed), request)?),
        Err(_) => Ok(()),
    }
}

/// The prove phase of both modes: the reveal plan, the transcript proof, the verdict.
async fn prove(
    control: &mut MuxChannel,
    zk: &mut MuxChannel,
    prover: &mut Prover<FerretReceiver>,
    config: &ProverConfig,
    exchanged: Exchanged,
    reveal: RevealConfig,
    report: &dyn Fn(Phase, f64),
) -> Result<ProverOutput, ProverError> {
    let step = config.step_timeout;
    let Exchanged { keys, sent_plain, recv_plain, response, unproven } = exchanged;

    // What to reveal, resolved against our own plaintext.
    let plan = RevealPlan {
        sent: to_u64(reveal.sent.resolve(&sent_plain)?),
        received: to_u64(reveal.received.resolve(&recv_plain)?),
        commit_sent: to_u64(reveal.commit_sent.resolve(&sent_plain)?),
        commit_received: to_u64(reveal.commit_received.resolve(&recv_plain)?),
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
        ControlMessage::Verified { output, attestation } => {
            let verified: VerifierOutput = *output;
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
    request: &[u8],
    preprocess: usize,
    report: &dyn Fn(Phase, f64),
) -> Result<Exchanged, ProverError> {
    let now = unix_time(config.now);
    let mut client = tls_client(config, target.name())?;
    let mut io = TlsChannelIo::new(tls);
    let limits = crate::http::Limits { max_header_bytes: 64 * 1024, max_body_bytes: config.max_recv as usize };
    // Two steps, each with its own clock: the verifier's acceptance, then the exchange.
    let tls_part = async {
        accepted(control, config, report).await?;
        report(Phase::Request, 0.1);
        let exchange = async {
            let response = driver::http_exchange(&mut client, &mut io, request, limits).await?;
            // The server's close_notify, when it follows the response, goes into the transcript
            // so the verdict can say the response was not cut off; a server that keeps the
            // connection open costs at most CLOSE_GRACE.
            let _ = within(CLOSE_GRACE, "close_notify", driver::read_until_close(&mut client, &mut io)).await;
            io.shutdown().await?;
            Ok::<_, ProverError>(response)
        };
        within(config.step_timeout, "the TLS exchange", exchange).await?
    };
    // The preprocessing starts as the session is asked for (see `ask`) and runs beside both
    // steps, so it has both steps' time; a refusal ends it.
    let preprocess = async { Ok::<_, ProverError>(prover.preprocess(zk, preprocess).await?) };
    let (response, ()) =
        within(config.step_timeout * 2, "the OT preprocessing", async { futures::try_join!(tls_part, preprocess) })
            .await??;
    let unread = io.unread();
    let [sent_raw, mut received_raw] = io.take_log();
    // The proof covers the server's whole records; a partial one at the end (the server sent
    // the rest later, or never) stays out, like bytes that arrived but were not read.
    let whole = whole_records_len(&received_raw);
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
            let application = schedule
                .application_traffic
                .as_ref()
                .ok_or(crate::tls::Error::InvalidState("no application secrets"))?;
            let transcript = transcript13::parse(&sent_raw, &received_raw)?;
            let (c_hs, s_hs) = (&schedule.handshake_traffic.client, &schedule.handshake_traffic.server);
            let handshake =
                transcript.read_handshake(c_hs.as_bytes(), s_hs.as_bytes(), &config.roots, target.name(), now)?;
            let suite = transcript.suite();
            let (sent, sent_plain) = proof13::read_records(
                suite,
                &application.client,
                proof13::application_records(&transcript, &handshake, Direction::Sent),
            )?;
            let (received, recv_plain) = proof13::read_records(
                suite,
                &application.server,
                proof13::application_records(&transcript, &handshake, Direction::Received),
            )?;
            let keys = SessionKeys::Tls13 {
                handshake_secret: schedule.handshake_secret.clone(),
                transcript,
                handshake,
                shapes: RecordShapes { sent, received },
            };
            (keys, sent_plain, recv_plain)
        }
    };
    Ok(Exchanged { keys, sent_plain, recv_plain, response, unproven })
}

/// The length of the whole TLS records at the start of `stream`.
fn whole_records_len(stream: &[u8]) -> usize {
    let mut at = 0;
    while let Ok(Some(h)) = crate::tls::codec::parse_record_header(&stream[at..]) {
        let end = at + crate::tls::codec::RECORD_HEADER_LEN + h.length;
        if end > stream.len() {
            break;
        }
        at = end;
    }
    at
}

/// The TLS client for the versions the prover offers: both in one ClientHello, or one.
fn tls_client(config: &ProverConfig, name: &str) -> Result<AnyVersionClient, ProverError> {
    use crate::tls::tls13::{Client13, Config13};
    let now = unix_time(config.now);
    let config12 = ClientConfig::new(config.roots.clone());
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

/// MPC mode's preparation: the COTs for the proofs, then the connection's own and a request
/// of up to `capacity` bytes garbled ahead of the handshake.
/// MPC mode's preparation: the COTs for the proofs, made on the COT channel while the request
/// is garbled ahead on the ZK channel (which uses none of them). Gives the COT channel back.
async fn mpc_prepare(
    zk: &mut MuxChannel,
    cot: MuxChannel,
    prover: &mut Prover<FerretReceiver>,
    preprocess: usize,
    config: &ProverConfig,
    capacity: usize,
) -> Result<(crate::mpc::connection::PreparedProver<ZkBit>, MuxChannel), ProverError> {
    let step = config.step_timeout;
    let making = make_beside(prover, cot, preprocess, preprocess, Arc::new(AtomicBool::new(true)))?;
    let prepare = crate::mpc::connection::prepare_prover(zk, capacity, connection_limits(config));
    let prepared = within(step * 5, "garbling ahead", Box::pin(prepare)).await??;
    let cot = take_back(prover, making, step, "preprocessing").await?;
    Ok((prepared, cot))
}

type Making = OwnThread<(FerretReceiver, MuxChannel, Result<crate::mpc::cots_beside::ProverMade, BesideError>)>;

/// Lends `prover`'s COT source to a thread of its own that makes `total` COTs on `cot` in steps
/// of `step` while `go_on` holds ([`crate::mpc::cots_beside`]); [`take_back`] returns them.
fn make_beside(
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
async fn take_back(
    prover: &mut Prover<FerretReceiver>,
    making: Making,
    d: std::time::Duration,
    what: &'static str,
) -> Result<MuxChannel, ProverError> {
    let (source, cot, made) = within(d, what, making.finish()).await?.ok_or(BesideError::Lost)?;
    prover.give_back(source, made?);
    Ok(cot)
}

fn connection_limits(config: &ProverConfig) -> crate::mpc::connection::ConnectionLimits {
    crate::mpc::connection::ConnectionLimits { max_sent: config.max_sent as usize, max_recv: config.max_recv as usize }
}

/// How many COTs MPC mode makes beside its connection, for the keystream proof of a response
/// that is only partly revealed ([`crate::mpc::cots_beside`]).
fn cots_beside_max(config: &ProverConfig, sizing: Sizing) -> usize {
    match sizing.response {
        RevealExtent::Partly => crate::mpc::cots_beside::max_cots(config.max_recv as usize),
        RevealExtent::Whole | RevealExtent::Nothing => 0,
    }
}

/// MPC mode: the proxy's byte stream to the server.
async fn connect_proxy(
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
async fn mpc_exchange(
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
    use crate::mpc::connection::{connect_prover, two_party_config};
    let step = config.step_timeout;
    report(Phase::Request, 0.1);
    let client = Client::new(two_party_config(config.roots.clone()), target.name(), unix_time(config.now))?;
    // `beside` COTs for the proof after the connection, made while it runs; the verifier
    // expects the exchange even when there are none
    let connected = Arc::new(AtomicBool::new(true));
    let making = make_beside(prover, cot, beside, crate::mpc::cots_beside::COTS_PER_STEP, connected.clone())?;
    let connection = async {
        let conn = within(
            step * 5,
            "the connection in two parties",
            Box::pin(connect_prover(prepared, zk, prover, &mut server, client, request, connection_limits(config))),
        )
        .await??;
        // the proxy's stream is done with (the server has ended its side)
        let _ = server.close().await;
        let v_share =
            within(step * 5, "the proof of the garbling", Box::pin(crate::mpc::reproof::prove(prover, zk, &conn)))
                .await??;
        Ok::<_, ProverError>((conn, v_share))
    };
    let connection = connection.await;
    connected.store(false, Ordering::Release);
    let (conn, v_share) = connection?;
    take_back(prover, making, step, "the COTs made beside the connection").await?;
    let ms = conn.master_secret(&v_share);
    let records = conn.open_received(&ms)?;
    let recv_plain: Vec<u8> = records
        .into_iter()
        .filter(|(t, _)| *t == crate::tls::codec::ContentType::ApplicationData as u8)
        .flat_map(|(_, b)| b)
        .collect();
    let raw = |d| conn.client.transcript().raw_bytes(d);
    Ok(Exchanged {
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

#[cfg(test)]
mod tests {
    /// A session's future is built on the caller's stack and moved into the executor; in wasm
    /// the main thread's stack is small (an MPC session's future of 160 KB, moved a few times,
    /// overflowed it). Its big parts are boxed, which keeps it small.
    #[test]
    fn a_sessions_future_stays_small() {
        struct Idle;
        impl crate::transport::MessageSocket for Idle {
            async fn send(&mut self, _: &[u8]) -> Result<(), crate::transport::TransportError> {
                Ok(())
            }
            async fn recv(&mut self) -> Result<Option<Vec<u8>>, crate::transport::TransportError> {
                Ok(None)
            }
            async fn close(&mut self) -> Result<(), crate::transport::TransportError> {
                Ok(())
            }
        }
        let config = || super::ProverConfig {
            server: "a:1".into(),
            server_name: "a".into(),
            roots: crate::tls::RootStore::mozilla(),
            max_sent: 1,
            max_recv: 1,
            now: 0,
            step_timeout: std::time::Duration::from_secs(1),
            prg: Default::default(),
            mode: super::ProverMode::Mpc { proxy_url: "ws://p/".into() },
            tls_versions: vec![Default::default()],
            tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        };
        let session = super::notarize_with_progress(Idle, config(), vec![], Default::default(), |_| {});
        assert!(std::mem::size_of_val(&session) < 16 * 1024, "{} bytes", std::mem::size_of_val(&session));
        let sizing = super::Sizing {
            request_len: 1,
            request_whole: false,
            request_hidden: 1,
            response: super::RevealExtent::Nothing,
        };
        let preparing = super::prepare(Idle, config(), sizing, |_| {});
        assert!(std::mem::size_of_val(&preparing) < 16 * 1024, "{} bytes", std::mem::size_of_val(&preparing));
    }
}
