//! The verifier's side of a session: policy; then the relay to the server, recording every
//! byte (proxy mode), or its half of the TLS client (MPC mode); then in both the certificate
//! checks, the proof, and the verdict. Native only: in proxy mode it opens the TCP connection
//! to the server itself.

use crate::channel::{Channel, ChannelError};
use crate::ot::FerretSender;
use crate::protocol::admission::budget::{BudgetLimits, Reservation};
use crate::protocol::admission::{cost, AdmissionError, Gate};
use crate::protocol::disclose::exchange::{check_exchanges, ExchangeFault, RevealPolicy};
use crate::protocol::disclose::output::{PhaseStats, SessionStats, TlsParameters, VerifiedDirection, VerifierOutput};
use crate::protocol::disclose::placement;
use crate::protocol::disclose::reveal::{check_canonical, check_commitments, RevealError, MAX_COMMITTED_BYTES};
use crate::protocol::disclose::statement::{self, StatementError, MAX_CONTENT_RANGES, MAX_STATEMENTS};
use crate::protocol::disclose::verdict::LeanVerdict;
use crate::protocol::messages::{
    ControlMessage, MessageError, RevealPlan, SessionMode, SessionRequest, TlsDone, TlsVersion, PROTOCOL_VERSION,
};
use crate::protocol::observe::relay_guard::{OutboundGuard, RelayError};
use crate::protocol::observe::tls12::{self as transcript, TranscriptError};
use crate::protocol::observe::tls13 as transcript13;
use crate::protocol::prove::tls12::check::{recover_with, CheckError, RecoveredDirection};
use crate::protocol::prove::tls12::{self as proof, app_len, PublicInputs};
use crate::protocol::prove::tls13::check::{self as check13, Check13Error};
use crate::protocol::prove::tls13::{self as proof13, Proof13Error, PublicInputs13};
use crate::protocol::target::{ServerTarget, TargetError};
use crate::proxy::{AllowList, Refusal};
use crate::tls::transcript::TLS_OVERHEAD;
use crate::tls::{unix_time, Direction, NamedGroup, RootStore};
use crate::transport::MessageSocket;
use crate::wire::mux::{multiplex, MuxChannel, MuxError, MuxLimits};
use crate::wire::session::MAX_RANGES;
use crate::wire::statement::MAX_VALUE_RANGES;
use crate::zk::{ProofError, Verifier};
use futures::FutureExt;
use rustls_pki_types::UnixTime;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The verifier's policy and limits.
#[derive(Clone)]
pub struct VerifierConfig {
    /// Servers the verifier will connect to (same rules as the proxy's allow-list), and in MPC
    /// mode the servers it will certify (the proxy dials those).
    pub allow: AllowList,
    /// The modes it accepts (`--modes`): an MPC session costs the verifier more CPU and traffic
    /// than a proxy-mode one, and an operator may want one mode only.
    pub modes: Vec<SessionMode>,
    /// Roots for the server certificate.
    pub roots: RootStore,
    /// The largest `max_sent` / `max_recv` a prover may ask for.
    pub max_sent: u32,
    pub max_recv: u32,
    /// Each wait for the prover or the server.
    pub step_timeout: Duration,
    /// The wait for the session request, which a prover sends as soon as it is connected: a
    /// client that says nothing gives its place up this soon.
    pub request_timeout: Duration,
    /// The whole session.
    pub session_timeout: Duration,
    /// Admission ([`admission`](crate::protocol::admission)): the memory all sessions may
    /// reserve, the sessions proving at once, and those admitted at once whatever they cost.
    pub budget: BudgetLimits,
    /// Sessions waiting for a turn (each at most `queue_timeout`), and sessions open (waiting or
    /// running) per client IP. Anyone beyond is refused `BUSY`.
    pub max_queued: usize,
    /// What of the request must be revealed (`--require-reveal`; default: the request line
    /// and the Host header).
    pub require_reveal: RevealPolicy,
    pub max_per_ip: usize,
    pub queue_timeout: Duration,
    /// Load balancers in front (`--trusted-proxy`): a connection from one of them is counted
    /// as coming from the last address of its `X-Forwarded-For`.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Signs each verdict as an [`Attestation`](crate::attestation::Attestation) sent with it
    /// (`--signing-key`); none: verdicts are not signed.
    pub signing_key: Option<std::sync::Arc<crate::attestation::SigningKey>>,
}

impl VerifierConfig {
    pub fn new(allow: AllowList, roots: RootStore) -> Self {
        VerifierConfig {
            allow,
            roots,
            modes: vec![SessionMode::Proxy, SessionMode::Mpc],
            max_sent: 64 * 1024,
            // admission reserves by what each session asks, so the limit can be generous
            max_recv: 16 * 1024 * 1024,
            step_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(5),
            session_timeout: Duration::from_secs(300),
            budget: BudgetLimits::for_this_machine(),
            // a waiting session costs a thread and its socket's buffers
            max_queued: 1024,
            require_reveal: RevealPolicy::default(),
            max_per_ip: 8,
            queue_timeout: Duration::from_secs(30),
            trusted_proxies: Vec::new(),
            signing_key: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VerifierError {
    #[error("session transport: {0}")]
    Mux(#[from] MuxError),
    #[error("channel: {0}")]
    Channel(#[from] ChannelError),
    #[error(transparent)]
    Message(#[from] MessageError),
    #[error("prover speaks protocol version {got}, this verifier {ours}")]
    Version { got: u16, ours: u16 },
    #[error("this verifier does not accept {} mode sessions", .0.as_str())]
    ModeNotAllowed(SessionMode),
    #[error("the connection in two parties: {0}")]
    Connection(#[from] crate::mpc::connection::ConnectionError),
    #[error("the proof of the garbling: {0}")]
    Reproof(#[from] crate::mpc::reproof::ReproofError),
    #[error("COTs beside the connection: {0}")]
    Beside(#[from] crate::mpc::cots_beside::BesideError),
    #[error("unexpected {got} message from the prover (expected {expected})")]
    UnexpectedMessage { expected: &'static str, got: &'static str },
    /// The prover gave up and said why (its text, escaped and cut to [`MAX_ABORT_REASON`]
    /// characters: it goes to the operator's log).
    #[error("the prover gave up: {}", shown_reason(.0))]
    ProverAborted(String),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("server not allowed by the verifier: {0}")]
    Policy(#[from] Refusal),
    #[error("requested {what} = {asked} exceeds this verifier's limit {limit}")]
    LimitTooHigh { what: &'static str, asked: u32, limit: u32 },
    #[error("cannot connect to the server: {0}")]
    Connect(String),
    #[error("transcript beyond the limits: {what} {got} bytes > {limit}")]
    TranscriptTooLarge { what: &'static str, got: u64, limit: u64 },
    #[error("the prover's byte counts ({claimed:?}) do not match what was relayed (sent {sent}, received {received})")]
    CountMismatch { claimed: TlsDone, sent: u64, received: u64 },
    #[error("relay: {0}")]
    Relay(#[from] RelayError),
    #[error("server I/O: {0}")]
    ServerIo(String),
    #[error("transcript: {0}")]
    Transcript(#[from] TranscriptError),
    #[error("reveal plan ({direction}): {error}")]
    Reveal { direction: &'static str, error: RevealError },
    #[error("application data of {direction}: {got} bytes > max {limit}")]
    AppDataTooLarge { direction: &'static str, got: u64, limit: u32 },
    #[error("proof rejected: {0}")]
    Proof(#[from] ProofError),
    #[error("proof rejected: {0}")]
    Proof13(#[from] Proof13Error),
    #[error("{direction} records: {error}")]
    Records { direction: &'static str, error: Check13Error },
    #[error("check failed: {0}")]
    Check(#[from] CheckError),
    #[error("HTTP {0}")]
    Exchange(#[from] ExchangeFault),
    /// A statement about a hidden value the verifier's reading does not confirm.
    #[error("statement: {0}")]
    Statement(#[from] StatementError),
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    /// Not admitted ([`VerifierConfig::budget`] and its queue, or the per-IP limit); the
    /// prover is told to try again after about `retry_after` seconds.
    #[error("verifier busy: {reason}; try again in {retry_after} s")]
    Busy { reason: String, retry_after: u32 },
}

impl From<AdmissionError> for VerifierError {
    fn from(e: AdmissionError) -> Self {
        match e {
            AdmissionError::Busy { reason, retry_after } => VerifierError::Busy { reason, retry_after },
            AdmissionError::Channel(e) => VerifierError::Channel(e),
        }
    }
}

async fn within<T>(
    d: Duration,
    what: &'static str,
    f: impl std::future::Future<Output = T>,
) -> Result<T, VerifierError> {
    tokio::time::timeout(d, f).await.map_err(|_| VerifierError::Timeout(what))
}

/// The COTs an MPC-mode prover may ask for beside the connection: those of the keystream proof
/// of `max_recv` bytes if it declared part of the response hidden (`response_in_zk`), which
/// admission charged it for; none otherwise, whatever it asks later.
fn beside_cap(req: &SessionRequest) -> usize {
    if req.response_in_zk {
        crate::mpc::cots_beside::max_cots(req.max_recv as usize)
    } else {
        0
    }
}

/// Most characters of a prover's reason for giving up that a verdict or log shows.
const MAX_ABORT_REASON: usize = 300;

/// A prover's reason as a log line can show it: escaped (no line break or terminal control
/// from the prover), at most [`MAX_ABORT_REASON`] characters.
fn shown_reason(reason: &str) -> String {
    let mut out = String::new();
    crate::wire::text::push_escaped_line(&mut out, reason);
    match out.char_indices().nth(MAX_ABORT_REASON) {
        Some((cut, _)) => format!("{}…", &out[..cut]),
        None => out,
    }
}

/// A session that failed on a closed channel may have been given up by the prover, which says
/// why on control before it closes: that reason, if it came, explains the failure better.
fn prover_gave_up(
    result: Result<VerifierOutput, VerifierError>,
    control: &mut MuxChannel,
) -> Result<VerifierOutput, VerifierError> {
    match result {
        Err(e) if met_the_channel_closed(&e) => {
            while let Some(Ok(frame)) = control.recv().now_or_never() {
                if let Ok(ControlMessage::Abort { reason }) = ControlMessage::decode(&frame) {
                    return Err(VerifierError::ProverAborted(reason));
                }
            }
            Err(e)
        }
        other => other,
    }
}

async fn recv_control(
    control: &mut MuxChannel,
    d: Duration,
    what: &'static str,
) -> Result<ControlMessage, VerifierError> {
    let frame = within(d, what, control.recv()).await??;
    let msg = ControlMessage::decode(&frame)?;
    if let ControlMessage::Abort { reason } = msg {
        return Err(VerifierError::ProverAborted(reason));
    }
    Ok(msg)
}

impl VerifierError {
    /// A stable name for how the session ended: the code a prover's error carries for this
    /// refusal (the JS API's `code`), for the verifier's metrics and logs.
    pub fn code(&self) -> &'static str {
        match self {
            VerifierError::Mux(_) | VerifierError::Channel(_) => "CONNECTION_LOST",
            VerifierError::ProverAborted(_) => "PROVER_ABORTED",
            _ => crate::protocol::prover::error::rejection_code(&self.to_string()),
        }
    }
}

/// How long the verifier keeps a session's socket open after its verdict for the prover to
/// read it and close: closing under a prover still sending would reset the connection, and
/// the prover could lose the verdict or the reason of a refusal.
const LINGER: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs one session on `socket` to its verdict, admitted by `gate` if given (else at once).
/// On failure the prover is told why (best effort). `outcome` gets the result as soon as the
/// prover has been sent it; the future ends once the prover has closed too, or 2 s later
/// (`LINGER`).
pub(crate) async fn verify_session<S: MessageSocket>(
    socket: S,
    config: &VerifierConfig,
    gate: Option<&Gate>,
    outcome: impl FnOnce(Result<VerifierOutput, VerifierError>),
) {
    let (driver, channels) = multiplex(socket, MuxLimits::verifier());
    let mut control = channels.control;
    let (tls, zk, cot) = (channels.tls, channels.zk, channels.cot);
    // how the transport ended, if it did while the session ran: then it is why the session
    // failed if the session met a closed channel, however deep in its error
    let transport = std::cell::RefCell::new(None::<MuxError>);
    let session_over = std::cell::Cell::new(false);
    let (worked, work_done) = futures::channel::oneshot::channel::<()>();
    let work = async {
        let result = tokio::time::timeout(config.session_timeout, session(&mut control, tls, zk, cot, config, gate))
            .await
            .unwrap_or(Err(VerifierError::Timeout("the session to finish")));
        let result = prover_gave_up(result, &mut control);
        session_over.set(true);
        let attested = match (&result, config.signing_key.as_deref()) {
            (Ok(out), Some(key)) => crate::protocol::disclose::attest::attest(out, key).map(|a| Some(Box::new(a))),
            _ => Ok(None),
        };
        let reply = match (&result, attested) {
            (Ok(out), Ok(attestation)) => {
                ControlMessage::Verified { verdict: Box::new(LeanVerdict::of(out)), attestation }
            }
            (Ok(_), Err(e)) => {
                ControlMessage::Abort { reason: format!("the verifier could not sign its verdict: {e}") }
            }
            (Err(VerifierError::Busy { reason, retry_after }), _) => {
                ControlMessage::Busy { reason: reason.clone(), retry_after: *retry_after }
            }
            (Err(e), _) => ControlMessage::Abort { reason: e.to_string() },
        };
        let _ = control.send(reply.encode()).await;
        drop(control);
        let _ = worked.send(());
        outcome(match (result, transport.borrow_mut().take()) {
            (Err(session), Some(e)) if met_the_channel_closed(&session) => Err(e.into()),
            (result, _) => result,
        });
    };
    // The driver reads on after the verdict until the prover closes (see `multiplex`).
    let driver = async {
        let linger = async {
            let _ = work_done.await;
            tokio::time::sleep(LINGER).await;
        };
        if let futures::future::Either::Left((Err(e), _)) =
            futures::future::select(std::pin::pin!(driver), std::pin::pin!(linger)).await
        {
            if !session_over.get() {
                *transport.borrow_mut() = Some(e);
            }
        }
    };
    futures::join!(work, driver);
}

/// Whether the session failed on one of its channels (closed, or the transport gone), not on
/// a check of its own: a check's refusal stays the reason even if the prover then hung up.
fn met_the_channel_closed(e: &VerifierError) -> bool {
    let mut cause: Option<&dyn std::error::Error> = Some(e);
    while let Some(c) = cause {
        if c.is::<ChannelError>() || c.is::<MuxError>() {
            return true;
        }
        cause = c.source();
    }
    false
}

async fn session(
    control: &mut MuxChannel,
    mut tls: MuxChannel,
    mut zk: MuxChannel,
    cot: MuxChannel,
    config: &VerifierConfig,
    gate: Option<&Gate>,
) -> Result<VerifierOutput, VerifierError> {
    let req: SessionRequest = match recv_control(control, config.request_timeout, "the session request").await? {
        ControlMessage::Request(r) => r,
        other => return Err(VerifierError::UnexpectedMessage { expected: "Request", got: other.kind() }),
    };
    if req.version != PROTOCOL_VERSION {
        return Err(VerifierError::Version { got: req.version, ours: PROTOCOL_VERSION });
    }
    if !config.modes.contains(&req.mode) {
        return Err(VerifierError::ModeNotAllowed(req.mode));
    }
    let max_preprocess = u32::try_from(preprocess_limit(req.mode, req.max_sent as usize)).unwrap_or(u32::MAX);
    for (what, asked, limit) in [
        ("max_sent", req.max_sent, config.max_sent),
        ("max_recv", req.max_recv, config.max_recv),
        ("preprocess", req.preprocess, max_preprocess),
    ] {
        if asked > limit {
            return Err(VerifierError::LimitTooHigh { what, asked, limit });
        }
    }
    // The host dialed (by the verifier, or by the prover's proxy) is the name certified (see
    // `target`), and it must be on the allow-list.
    let target = ServerTarget::new(&req.server, &req.server_name)?;
    config.allow.permits(&target.address())?;
    // Held until the verdict: what the session's limits let it hold. Until then its channels
    // hold little more than an honest prover's first messages (`MuxLimits::verifier`).
    let _online = match gate {
        Some(gate) => Some(gate.online(cost::online(&req), control).await?),
        None => None,
    };
    for c in [&tls, &zk, &cot] {
        c.set_inbox_limit(MuxLimits::default().max_buffered);
    }
    let mut verifier = Verifier::new(FerretSender::with_prg(req.prg));
    // On the heap, so that the session's own future stays small (see the prover's). A channel
    // the mode does not use is refused: a prover that sends on it ends the session.
    let online = match req.mode {
        SessionMode::Proxy => {
            cot.refuse();
            Box::pin(proxy_online(control, &mut tls, &mut zk, &mut verifier, &req, &target, config)).await?
        }
        SessionMode::Mpc => {
            tls.refuse();
            Box::pin(mpc_online(control, &mut zk, cot, &mut verifier, &req, &target, config)).await?
        }
    };
    Box::pin(prove_phase(control, &mut zk, &mut verifier, online, &req, &target, config, gate)).await
}

/// The most COTs a session of `mode` within `max_sent` can use ahead of its proofs (the
/// request's keystream and its proof of no hidden line break, all of it hidden at most): in
/// proxy mode, of any TLS version and suite (the server chooses them later), with the setup
/// iteration a partly revealed response adds there; in MPC mode, of either version and its
/// two-party suites, where a partly revealed response adds nothing ahead of the connection
/// (its keystream COTs are made beside the connection, bounded by `cots_beside::max_cots`).
pub fn preprocess_limit(mode: SessionMode, max_sent: usize) -> usize {
    match mode {
        SessionMode::Proxy => proof::preprocess_cots(
            proof::MOST_DERIVATION_COTS,
            proof::most_keystream_cots(max_sent) + proof::most_line_break_cots(max_sent),
            true,
        ),
        SessionMode::Mpc => {
            // the costlier of the two versions MPC mode speaks
            let tls12 = proof::preprocess_cots(
                proof::PREPROCESS_COTS,
                proof::keystream_cots(max_sent) + proof::line_break_cots(max_sent),
                false,
            ) + crate::mpc::reproof::preprocess_cots(max_sent, false);
            let tls13 = crate::mpc::connection::Suites13::TWO_PARTY.iter().map(|&suite| {
                proof::preprocess_cots(
                    proof::derivation_cots(suite, 2),
                    proof::keystream_cots_of(suite, max_sent) + proof::line_break_cots_of(suite, max_sent),
                    false,
                ) + crate::mpc::reproof::preprocess_cots(max_sent, true)
            });
            tls13.fold(tls12, usize::max)
        }
    }
}

/// What the online phase leaves for the proof: the raw TLS bytes of both directions as the
/// verifier holds them, when the connection began, and the figures so far.
struct Online {
    sent_raw: Vec<u8>,
    received_raw: Vec<u8>,
    connection_time: u64,
    preprocess: PhaseStats,
    online: PhaseStats,
    /// When the prove phase began, and the bytes up and down the ZK channel until then (the
    /// prove phase uses no other).
    prove_from: (Instant, u64, u64),
}

type Serving = crate::mpc::cots_beside::OwnThread<(
    FerretSender,
    MuxChannel,
    Result<crate::mpc::cots_beside::VerifierMade, crate::mpc::cots_beside::BesideError>,
)>;

/// Lends the verifier's COT source to a thread of its own that serves the prover's steps on
/// `cot` up to `cap` COTs ([`crate::mpc::cots_beside`]); [`take_back`] returns them.
fn serve_beside(
    verifier: &mut Verifier<FerretSender>,
    mut cot: MuxChannel,
    cap: usize,
) -> Result<Serving, VerifierError> {
    let mut source = verifier.lend_source().ok_or(ProofError::SourceLent)?;
    Ok(crate::mpc::cots_beside::OwnThread::spawn(move || async move {
        let made = crate::mpc::cots_beside::serve(&mut source, &mut cot, cap).await;
        (source, cot, made)
    }))
}

/// Waits (at most `d`) for what [`serve_beside`] made and gives it and the source back to
/// `verifier`; returns the COT channel.
async fn take_back(
    verifier: &mut Verifier<FerretSender>,
    serving: Serving,
    d: Duration,
    what: &'static str,
) -> Result<MuxChannel, VerifierError> {
    let (source, cot, made) =
        within(d, what, serving.finish()).await?.ok_or(crate::mpc::cots_beside::BesideError::Lost)?;
    verifier.give_back(source, made?);
    Ok(cot)
}

fn phase_since(t: Instant, up0: u64, down0: u64, ch: &MuxChannel) -> PhaseStats {
    PhaseStats {
        millis: t.elapsed().as_secs_f64() * 1e3,
        bytes_up: ch.bytes_received() - up0,
        bytes_down: ch.bytes_sent() - down0,
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Proxy mode's online phase: dial the server, relay and record the TLS bytes. The OT setup
/// for the proof runs alongside from the start, while the server is dialed too (the prover
/// starts its side as it sends the request); a failed dial drops it.
async fn proxy_online(
    control: &mut MuxChannel,
    tls: &mut MuxChannel,
    zk: &mut MuxChannel,
    verifier: &mut Verifier<FerretSender>,
    req: &SessionRequest,
    target: &ServerTarget,
    config: &VerifierConfig,
) -> Result<Online, VerifierError> {
    let step = config.step_timeout;
    let timed_setup = async {
        let (t, up0, down0) = (Instant::now(), zk.bytes_received(), zk.bytes_sent());
        verifier.preprocess(zk, req.preprocess as usize).await?;
        Ok::<_, VerifierError>(phase_since(t, up0, down0, zk))
    };
    let connected = async {
        let addrs = within(step, "DNS", config.allow.resolve(&target.address())).await??;
        let tcp = within(step, "the server to accept", TcpStream::connect(&addrs[..]))
            .await?
            .map_err(|e| VerifierError::Connect(e.to_string()))?;
        let _ = tcp.set_nodelay(true);
        let connection_time = unix_now();
        control.send(ControlMessage::Accepted { connection_time }.encode()).await?;
        let t_online = Instant::now();
        let limits = (req.max_sent as u64 + TLS_OVERHEAD, req.max_recv as u64 + TLS_OVERHEAD);
        let guard = OutboundGuard::new((!target.is_ip()).then(|| target.name()));
        let relayed = relay(tls, tcp, guard, limits, step).await?;
        Ok((relayed, connection_time, t_online))
    };
    let (((mut sent_raw, mut received_raw), connection_time, t_online), preprocess) =
        futures::try_join!(connected, timed_setup)?;
    let done = match recv_control(control, step, "TlsDone").await? {
        ControlMessage::TlsDone(d) => d,
        other => return Err(VerifierError::UnexpectedMessage { expected: "TlsDone", got: other.kind() }),
    };
    if done.sent != sent_raw.len() as u64 || done.received > received_raw.len() as u64 {
        return Err(VerifierError::CountMismatch {
            claimed: done,
            sent: sent_raw.len() as u64,
            received: received_raw.len() as u64,
        });
    }
    received_raw.truncate(done.received as usize);
    sent_raw.shrink_to_fit();
    let online = phase_since(t_online, 0, 0, tls);
    let prove_from = (Instant::now(), zk.bytes_received(), zk.bytes_sent());
    Ok(Online { sent_raw, received_raw, connection_time, preprocess, online, prove_from })
}

/// MPC mode's online phase: COTs for the proofs, then the connection in two parties (the
/// prover forwards every server byte; the verifier's own copy of the client checks them),
/// then the proof that the prover garbled honestly, after which the prover holds the keys.
/// The verifier dials nothing; everything runs on the ZK channel, and Ferret on the COT
/// channel beside it.
async fn mpc_online(
    control: &mut MuxChannel,
    zk: &mut MuxChannel,
    cot: MuxChannel,
    verifier: &mut Verifier<FerretSender>,
    req: &SessionRequest,
    target: &ServerTarget,
    config: &VerifierConfig,
) -> Result<Online, VerifierError> {
    config.allow.permits(&target.address())?;
    control.send(ControlMessage::Accepted { connection_time: unix_now() }.encode()).await?;
    let step = config.step_timeout;
    let t = Instant::now();
    // The COTs for the proofs on the COT channel while the request is garbled ahead on the ZK
    // channel (which uses none of them), then those the prover asks for beside the connection,
    // up to the keystream proof of `max_recv` (see `crate::mpc::cots_beside`).
    let serving = serve_beside(verifier, cot, req.preprocess as usize)?;
    let limits =
        crate::mpc::connection::ConnectionLimits { max_sent: req.max_sent as usize, max_recv: req.max_recv as usize };
    let prepared =
        within(config.session_timeout, "garbling ahead", crate::mpc::connection::prepare_verifier(zk, limits))
            .await??;
    let cot = take_back(verifier, serving, step, "preprocessing").await?;
    let cot_preprocess = (cot.bytes_received(), cot.bytes_sent());
    let preprocess = phase_since(t, 0, 0, zk).plus(cot_preprocess);

    // A prover that prepared ahead starts the connection when it has its request: the
    // connection's time and the online phase begin then.
    let (up0, down0) = (zk.bytes_received(), zk.bytes_sent());
    // only for a response the prover declared it proves in zero knowledge (which its
    // reservation counted)
    let beside = beside_cap(req);
    let serving = serve_beside(verifier, cot, beside)?;
    let started = std::cell::Cell::new(None);
    let clock = || {
        started.set(Some(Instant::now()));
        unix_time(unix_now())
    };
    let conn_timeout = config.session_timeout;
    let (what, garbling) = ("the connection in two parties", "the proof of the garbling");
    let server_side = (config.roots.clone(), target.name());
    let connect = crate::mpc::connection::accept(prepared, zk, verifier, server_side, clock, limits);
    let conn = within(conn_timeout, what, connect).await??;
    let online = phase_since(started.get().unwrap_or(t), up0, down0, zk);
    let prove_from = (Instant::now(), zk.bytes_received(), zk.bytes_sent());
    let (sent_raw, received_raw, connection_time) = match conn {
        crate::mpc::connection::VerifierConnected::Tls12(conn) => {
            within(conn_timeout, garbling, crate::mpc::reproof::verify(verifier, zk, &*conn)).await??;
            let raw = |d| conn.client.transcript().raw_bytes(d);
            (raw(Direction::Sent), raw(Direction::Received), conn.connection_time.as_secs())
        }
        crate::mpc::connection::VerifierConnected::Tls13(conn) => {
            within(conn_timeout, garbling, crate::mpc::reproof::verify(verifier, zk, &*conn)).await??;
            let [sent, received] = conn.wire();
            // the proof covers the server's whole records (a partial one at the end: bytes the
            // prover forwarded after the server's last whole record)
            let received = &received[..crate::tls::codec::whole_records_len(received)];
            (sent.clone(), received.to_vec(), conn.connection_time.as_secs())
        }
    };
    let cot = take_back(verifier, serving, config.session_timeout, "the COTs made beside the connection").await?;
    // the COTs made beside the connection count as its bytes
    let online = online.plus((cot.bytes_received() - cot_preprocess.0, cot.bytes_sent() - cot_preprocess.1));
    Ok(Online { sent_raw, received_raw, connection_time, preprocess, online, prove_from })
}

/// What both modes share once the verifier holds the TLS bytes: the server's identity, the
/// reveal plan, the transcript proof (for the TLS version the server chose), and the verdict.
#[allow(clippy::too_many_arguments)]
async fn prove_phase(
    control: &mut MuxChannel,
    zk: &mut MuxChannel,
    verifier: &mut Verifier<FerretSender>,
    online: Online,
    req: &SessionRequest,
    target: &ServerTarget,
    config: &VerifierConfig,
    gate: Option<&Gate>,
) -> Result<VerifierOutput, VerifierError> {
    let Online { sent_raw, received_raw, connection_time, preprocess, online, prove_from } = online;
    let session = Session { control, zk, verifier, req, target, config, gate, now: unix_time(connection_time) };
    let proven = match transcript13::server_version(&received_raw)? {
        TlsVersion::Tls12 => prove12(session, &sent_raw, &received_raw).await?,
        TlsVersion::Tls13 => prove13(session, &sent_raw, &received_raw).await?,
    };
    let (t, up0, down0) = prove_from;
    let stats = SessionStats { preprocess, online, prove: phase_since(t, up0, down0, zk) };
    let direction = |d: RecoveredDirection| VerifiedDirection {
        len: d.bytes.len() as u64,
        bytes: d.bytes,
        revealed: d.revealed,
        fast_path: d.fast_path,
        alerts: d.alerts,
        records: d.records,
    };
    let (sent, received) = (direction(proven.sent), direction(proven.received));
    let exchanges = check_exchanges(&sent, &received, target.name(), target.port(), config.require_reveal)?;
    let content = [&proven.string_content[0][..], &proven.string_content[1][..]];
    let statements = placement::confirm([&sent, &received], &exchanges, &proven.statements, content)?;
    Ok(VerifierOutput {
        mode: req.mode,
        server_name: target.name().to_string(),
        server: target.address(),
        sni: proven.sni,
        tls: proven.tls,
        connection_time,
        sent,
        received,
        exchanges,
        commitments: proven.commitments,
        statements,
        stats,
    })
}

/// What the prove phase works with.
struct Session<'a> {
    control: &'a mut MuxChannel,
    zk: &'a mut MuxChannel,
    verifier: &'a mut Verifier<FerretSender>,
    req: &'a SessionRequest,
    target: &'a ServerTarget,
    config: &'a VerifierConfig,
    gate: Option<&'a Gate>,
    /// When the connection began: the certificates must be valid then.
    now: UnixTime,
}

impl Session<'_> {
    /// Waits for the memory and the proving slot of a proof of `cots` COTs of keystream
    /// proofs (the gate's; at once without one).
    async fn reserve_proof(&self, cots: usize) -> Result<Option<Reservation>, VerifierError> {
        match self.gate {
            Some(gate) => Ok(Some(gate.proof(cost::proof(cots)).await?)),
            None => Ok(None),
        }
    }
}

/// Bytes of a direction of `len` bytes its proof covers in zero knowledge: none when `reveal`
/// opens it all (the fast path opens its key), all of them otherwise.
fn in_zk(reveal: &[std::ops::Range<u64>], len: u64) -> usize {
    if crate::protocol::disclose::reveal::covers_all(reveal, len) {
        0
    } else {
        len as usize
    }
}

/// What the proof of either TLS version establishes.
struct Proven {
    sni: Option<String>,
    tls: TlsParameters,
    sent: RecoveredDirection,
    received: RecoveredDirection,
    commitments: Vec<proof::Commitment>,
    /// The plan's statements and hidden string content per direction, proven; confirmed
    /// against the verifier's own reading once the exchanges are read.
    statements: Vec<statement::StatementPlan>,
    string_content: [Vec<std::ops::Range<u64>>; 2],
}

async fn reveal_plan(s: &mut Session<'_>) -> Result<RevealPlan, VerifierError> {
    match recv_control(s.control, s.config.step_timeout, "the reveal plan").await? {
        ControlMessage::Reveal(p) => Ok(p),
        other => Err(VerifierError::UnexpectedMessage { expected: "Reveal", got: other.kind() }),
    }
}

/// Checks the reveal plan against the application data's lengths and the session's limits.
fn check_plan(plan: &RevealPlan, sent_len: u64, recv_len: u64, req: &SessionRequest) -> Result<(), VerifierError> {
    for (direction, len, limit) in [("sent", sent_len, req.max_sent), ("received", recv_len, req.max_recv)] {
        if len > limit as u64 {
            return Err(VerifierError::AppDataTooLarge { direction, got: len, limit });
        }
    }
    check_canonical(&plan.sent, sent_len, MAX_RANGES)
        .map_err(|error| VerifierError::Reveal { direction: "sent", error })?;
    check_canonical(&plan.received, recv_len, MAX_RANGES)
        .map_err(|error| VerifierError::Reveal { direction: "received", error })?;
    check_commitments(&plan.commit_sent, sent_len)
        .map_err(|error| VerifierError::Reveal { direction: "sent commitments", error })?;
    check_commitments(&plan.commit_received, recv_len)
        .map_err(|error| VerifierError::Reveal { direction: "received commitments", error })?;
    if plan.statements.len() > MAX_STATEMENTS {
        return Err(StatementError::TooMany { count: plan.statements.len() }.into());
    }
    let lens = [sent_len, recv_len];
    for (side, content) in [&plan.string_content_sent, &plan.string_content_received].into_iter().enumerate() {
        let stated =
            |error| VerifierError::Reveal { direction: ["sent statements", "received statements"][side], error };
        let values = || plan.statements.iter().filter(|s| s.direction.index() == side).flat_map(|s| &s.value);
        for s in plan.statements.iter().filter(|s| s.direction.index() == side) {
            check_canonical(&s.value, lens[side], MAX_VALUE_RANGES).map_err(stated)?;
        }
        let value_bytes: u64 = values().map(|r| r.end - r.start).sum();
        if value_bytes > MAX_COMMITTED_BYTES {
            return Err(stated(RevealError::CommitmentsTooLarge { bytes: value_bytes, max: MAX_COMMITTED_BYTES }));
        }
        check_canonical(content, lens[side], MAX_CONTENT_RANGES).map_err(stated)?;
    }
    Ok(())
}

/// Bytes of direction `side` (0 sent, 1 received) the statements' proof computes in ZK beside
/// the reveal's: each value's, and the hidden string bytes proven content (bounded by
/// [`check_plan`]).
fn stated_in_zk(plan: &RevealPlan, side: usize) -> usize {
    let bytes = |r: &std::ops::Range<u64>| (r.end - r.start) as usize;
    let content = [&plan.string_content_sent, &plan.string_content_received][side];
    (plan.statements.iter().filter(|s| s.direction.index() == side).flat_map(|s| &s.value).map(bytes)).sum::<usize>()
        + content.iter().map(bytes).sum::<usize>()
}

/// TLS 1.2: the server's identity from the plaintext handshake, then the proof.
async fn prove12(mut s: Session<'_>, sent_raw: &[u8], received_raw: &[u8]) -> Result<Proven, VerifierError> {
    // The server really is who it claims: chain, name, validity, key-exchange signature.
    let transcript = transcript::parse(sent_raw, received_raw)?;
    transcript.validate_server(&s.config.roots, s.target.name(), s.now)?;
    let (sent_len, recv_len) = (
        app_len(transcript.encrypted_records(Direction::Sent)),
        app_len(transcript.encrypted_records(Direction::Received)),
    );
    let plan = reveal_plan(&mut s).await?;
    check_plan(&plan, sent_len, recv_len, s.req)?;
    let suite = transcript.cipher_suite();
    let cots = crate::cost::keystream_cots_12(suite, in_zk(&plan.sent, sent_len) + stated_in_zk(&plan, 0))
        + crate::cost::keystream_cots_12(suite, in_zk(&plan.received, recv_len) + stated_in_zk(&plan, 1));
    let _proving = s.reserve_proof(cots).await?;
    let inputs = PublicInputs::new(&transcript, &plan);
    let opened = within(
        s.config.session_timeout,
        "the proof",
        proof::run(s.verifier, s.zk, None, None, &inputs, |cvd| transcript.server_finished_hash(cvd)),
    )
    .await??;
    let sent = recover_with("sent", suite, transcript.encrypted_records(Direction::Sent), &opened.sent, &plan.sent)?;
    let received = recover_with(
        "received",
        suite,
        transcript.encrypted_records(Direction::Received),
        &opened.received,
        &plan.received,
    )?;
    let tls = TlsParameters {
        version: TlsVersion::Tls12,
        cipher_suite: transcript.cipher_suite().name().into(),
        group: transcript.server_key_exchange().group.name().into(),
        cipher_suite_id: transcript.cipher_suite().id(),
        group_id: transcript.server_key_exchange().group.id(),
    };
    Ok(Proven {
        sni: transcript.sni().map(str::to_string),
        tls,
        sent,
        received,
        commitments: opened.commitments,
        statements: plan.statements,
        string_content: [plan.string_content_sent, plan.string_content_received],
    })
}

/// TLS 1.3: the record shapes the prover announces, then the proof, during which the verifier
/// reads the encrypted handshake with the opened handshake traffic secrets and checks the
/// server's identity there.
async fn prove13(mut s: Session<'_>, sent_raw: &[u8], received_raw: &[u8]) -> Result<Proven, VerifierError> {
    let transcript = transcript13::parse(sent_raw, received_raw)?;
    // The plan comes first; it is checked once the shapes that define the lengths are in.
    let plan = reveal_plan(&mut s).await?;
    let shapes = match recv_control(s.control, s.config.step_timeout, "the record shapes").await? {
        ControlMessage::RecordShapes(shapes) => shapes,
        other => return Err(VerifierError::UnexpectedMessage { expected: "RecordShapes", got: other.kind() }),
    };
    for (direction, announced) in [("sent", &shapes.sent), ("received", &shapes.received)] {
        check13::check_announced(announced).map_err(|error| VerifierError::Records { direction, error })?;
    }
    let (sent_len, recv_len) = (check13::app_len(&shapes.sent), check13::app_len(&shapes.received));
    check_plan(&plan, sent_len, recv_len, s.req)?;
    let suite = transcript.suite();
    let cots = proof::keystream_cots_of(suite, in_zk(&plan.sent, sent_len) + stated_in_zk(&plan, 0))
        + proof::keystream_cots_of(suite, in_zk(&plan.received, recv_len) + stated_in_zk(&plan, 1));
    let _proving = s.reserve_proof(cots).await?;
    let inputs = PublicInputs13::new(&transcript, &plan, &shapes);
    let (roots, name, now) = (&s.config.roots, s.target.name(), s.now);
    let proof = proof13::run(s.verifier, s.zk, None, None, &inputs, |secrets| {
        transcript.read_handshake(&secrets.client, &secrets.server, roots, name, now)
    });
    let opened = within(s.config.session_timeout, "the proof", proof).await??;
    let aead = transcript.suite().aead();
    let [sent, received] = [
        (Direction::Sent, "sent", &shapes.sent, &plan.sent),
        (Direction::Received, "received", &shapes.received, &plan.received),
    ]
    .map(|(d, direction, shapes, reveal)| {
        let records = proof13::application_records(&transcript, &opened.handshake, d);
        let side = usize::from(d == Direction::Received);
        check13::recover(direction, aead, records, shapes, reveal, &opened.records[side])
            .map_err(|error| VerifierError::Records { direction, error })
    });
    let tls = TlsParameters {
        version: TlsVersion::Tls13,
        cipher_suite: transcript.suite().name().into(),
        group: NamedGroup::from_id(transcript.group())
            .map_or_else(|| format!("0x{:04x}", transcript.group()), |g| g.name().into()),
        cipher_suite_id: transcript.suite().id(),
        group_id: transcript.group(),
    };
    Ok(Proven {
        sni: transcript.sni().map(str::to_string),
        tls,
        sent: sent?,
        received: received?,
        commitments: opened.commitments,
        statements: plan.statements,
        string_content: [plan.string_content_sent, plan.string_content_received],
    })
}

/// Relays between the prover's TLS channel and the server until the prover half-closes,
/// recording both directions; `guard` decides what of the prover's bytes may go out.
/// Returns (client→server bytes, server→client bytes).
async fn relay(
    tls: &mut MuxChannel,
    tcp: TcpStream,
    mut guard: OutboundGuard,
    limits: (u64, u64),
    step: Duration,
) -> Result<(Vec<u8>, Vec<u8>), VerifierError> {
    let (mut r, mut w) = tcp.into_split();
    let (mut sent, mut received) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; 16 * 1024];
    let mut server_open = true;
    loop {
        tokio::select! {
            frame = tls.recv() => {
                let frame = frame?;
                if frame.is_empty() {
                    let _ = w.shutdown().await;
                    return Ok((sent, received));
                }
                if sent.len() as u64 + frame.len() as u64 > limits.0 {
                    return Err(VerifierError::TranscriptTooLarge { what: "sent", got: sent.len() as u64 + frame.len() as u64, limit: limits.0 });
                }
                let out = guard.push(&frame)?;
                sent.extend_from_slice(&frame);
                if !out.is_empty() {
                    within(step, "the server to read", w.write_all(&out)).await?.map_err(|e| VerifierError::ServerIo(e.to_string()))?;
                }
            }
            n = r.read(&mut buf), if server_open => {
                let n = n.map_err(|e| VerifierError::ServerIo(e.to_string()))?;
                if n == 0 {
                    server_open = false;
                    tls.send(Vec::new()).await?;
                    continue;
                }
                if received.len() as u64 + n as u64 > limits.1 {
                    return Err(VerifierError::TranscriptTooLarge { what: "received", got: received.len() as u64 + n as u64, limit: limits.1 });
                }
                received.extend_from_slice(&buf[..n]);
                tls.send(buf[..n].to_vec()).await?;
            }
            _ = tokio::time::sleep(step) => return Err(VerifierError::Timeout("TLS traffic")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_request() -> SessionRequest {
        SessionRequest {
            version: PROTOCOL_VERSION,
            mode: SessionMode::Mpc,
            server: "h:443".into(),
            server_name: "h".into(),
            max_sent: 1024,
            max_recv: 1 << 20,
            preprocess: 0,
            prg: crate::primitives::prg::PrgKind::fastest_here(),
            response_in_zk: true,
        }
    }

    /// The plan's statements are bounded before any proof: their count, each value's ranges
    /// (canonical, inside the direction), the values' bytes together, and the string ranges.
    #[test]
    fn a_plan_whose_statements_exceed_the_bounds_is_refused() {
        let stated = |direction, value: Vec<std::ops::Range<u64>>| statement::StatementPlan {
            exchange: 1,
            direction,
            statement: "a >= 1".parse().unwrap(),
            value,
        };
        let statement = |value| stated(statement::Direction::Received, value);
        let plan = |statements, string_content_received| RevealPlan {
            received: vec![0..10],
            statements,
            string_content_received,
            ..Default::default()
        };
        let check = |p: &RevealPlan| check_plan(p, 100, 100_000, &a_request());
        assert!(check(&plan(vec![statement(vec![10..17])], vec![20..30])).is_ok());
        let many = plan(vec![statement(vec![10..17]); MAX_STATEMENTS + 1], vec![]);
        assert!(matches!(check(&many), Err(VerifierError::Statement(StatementError::TooMany { count: 17 }))));
        for (what, value) in
            [("unsorted", vec![20..25, 10..15]), ("empty", vec![12..12]), ("outside", vec![99_990..100_001])]
        {
            let r = check(&plan(vec![statement(value)], vec![]));
            assert!(matches!(r, Err(VerifierError::Reveal { direction: "received statements", .. })), "{what}: {r:?}");
        }
        let huge = plan(vec![statement(vec![0..9_000]), statement(vec![10_000..19_000])], vec![]);
        assert!(matches!(
            check(&huge),
            Err(VerifierError::Reveal { error: RevealError::CommitmentsTooLarge { bytes: 18_000, .. }, .. })
        ));
        let split: Vec<std::ops::Range<u64>> = (0..MAX_VALUE_RANGES as u64 + 1).map(|i| 2 * i..2 * i + 1).collect();
        let r = check(&plan(vec![statement(split)], vec![]));
        assert!(
            matches!(r, Err(VerifierError::Reveal { error: RevealError::TooMany { count: 65, max: 64 }, .. })),
            "{r:?}"
        );
        let overlapping = plan(vec![], vec![20..30, 25..40]);
        assert!(matches!(
            check(&overlapping),
            Err(VerifierError::Reveal { error: RevealError::NotCanonical { .. }, .. })
        ));
        // a request's statement and string ranges lie in the sent direction (100 bytes here)
        let request = plan(vec![stated(statement::Direction::Sent, vec![90..97])], vec![]);
        assert!(check(&request).is_ok());
        let r = check(&plan(vec![stated(statement::Direction::Sent, vec![95..105])], vec![]));
        assert!(matches!(r, Err(VerifierError::Reveal { direction: "sent statements", .. })), "{r:?}");
        let r = check(&RevealPlan { string_content_sent: vec![99..101], ..plan(vec![], vec![]) });
        assert!(matches!(r, Err(VerifierError::Reveal { direction: "sent statements", .. })), "{r:?}");
    }

    /// A session admitted as fully revealed (no `response_in_zk`, so charged no COTs beside the
    /// connection) may have none made; one that declared a hidden response, those of its
    /// `max_recv`.
    #[test]
    fn cots_beside_the_connection_are_capped_by_what_the_request_declared() {
        let req = |response_in_zk| SessionRequest { response_in_zk, max_recv: 16 * 1024, ..a_request() };
        assert_eq!(super::beside_cap(&req(false)), 0);
        assert_eq!(super::beside_cap(&req(true)), crate::mpc::cots_beside::max_cots(16 * 1024));
        assert!(super::beside_cap(&req(true)) > 0);
    }

    /// A prover's reason reaches the log escaped and bounded: no line of its own, no terminal
    /// control, no flood.
    #[test]
    fn a_provers_reason_is_shown_escaped_and_bounded() {
        let shown =
            super::VerifierError::ProverAborted("TLS: x\nverified localhost 1.2.3.4: \x1b[2K".into()).to_string();
        assert_eq!(shown, "the prover gave up: TLS: x\\nverified localhost 1.2.3.4: \\x1b[2K");
        let long = super::VerifierError::ProverAborted("a".repeat(10_000)).to_string();
        assert_eq!(long.chars().count(), "the prover gave up: ".len() + super::MAX_ABORT_REASON + 1, "{long}");
        assert!(long.ends_with("a…"));
    }
}
