//! What can go wrong for the prover, and the stable code each failure has in the JS API.

use crate::channel::ChannelError;
use crate::mpc::connection::ConnectionError;
use crate::mpc::cots_beside::BesideError;
use crate::protocol::disclose::reveal::RevealError;
use crate::protocol::disclose::statement::StatementError;
use crate::protocol::messages::MessageError;
use crate::protocol::observe::tls12::TranscriptError;
use crate::protocol::prove::tls13::Proof13Error;
use crate::protocol::target::TargetError;
use crate::wire::mux::MuxError;
use crate::zk::ProofError;

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
    /// Not admitted now; the verifier suggests trying again after `retry_after` seconds.
    #[error("verifier busy: {reason}; try again in {retry_after} s")]
    Busy { reason: String, retry_after: u32 },
    #[error("unexpected {got} message from the verifier (expected {expected})")]
    UnexpectedMessage { expected: &'static str, got: &'static str },
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::Error),
    /// The server ended the handshake with an alert that says it takes none of what the
    /// ClientHello offered.
    #[error(
        "TLS: the server refused the handshake with {alert}: it accepts none of what was offered ({offered}). {hint}"
    )]
    HandshakeRefused { alert: crate::tls::AlertDescription, offered: String, hint: String },
    /// The prover's own check of the server's certificate failed (the verifier would refuse
    /// it too: it checks against its own roots).
    #[error("TLS: the server's certificate is not accepted for {name}: {problem}. {hint}")]
    CertificateRefused { name: String, problem: String, hint: &'static str },
    #[error("a session carries 1 to {max} requests, not {count}")]
    RequestCount { count: usize, max: usize },
    #[error("request of {len} bytes exceeds max_sent = {max}")]
    RequestTooLarge { len: usize, max: u32 },
    #[error("reveal: {0}")]
    Reveal(#[from] RevealError),
    /// A statement about a hidden value that the prover's own check refuses: false for the
    /// server's value, or about a document the verifier could not read unambiguously.
    #[error("statement: {0}")]
    Statement(#[from] StatementError),
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
    #[error("the verifier's verdict: {0}")]
    Verdict(#[from] crate::protocol::disclose::verdict::VerdictError),
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
            ProverError::Busy { .. } => "BUSY",
            ProverError::Timeout(_) => "TIMEOUT",
            ProverError::Target(TargetError::NameMismatch { .. }) => "SERVER_NAME_MISMATCH",
            ProverError::Target(_) => "BAD_OPTIONS",
            ProverError::RequestTooLarge { .. } => "LIMIT_EXCEEDED",
            ProverError::Tls(Tls::Http(msg)) if msg.contains("larger than") => "LIMIT_EXCEEDED",
            ProverError::Tls(Tls::Io(_) | Tls::Closed) => "CONNECTION_LOST",
            ProverError::Tls(_) | ProverError::HandshakeRefused { .. } | ProverError::CertificateRefused { .. } => {
                "TLS_ERROR"
            }
            ProverError::Statement(StatementError::False { .. }) => "STATEMENT_FALSE",
            ProverError::Reveal(_)
            | ProverError::Statement(_)
            | ProverError::UnprovenReceived(_)
            | ProverError::Unsupported(_)
            | ProverError::RequestCount { .. } => "BAD_OPTIONS",
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
            | ProverError::Verdict(_)
            | ProverError::UnexpectedMessage { .. }
            | ProverError::Transcript(_)
            | ProverError::Proof(_)
            | ProverError::Proof13(_) => "PROTOCOL_ERROR",
        }
    }
}

/// A TLS failure as the user should read it: a certificate the prover refuses
/// ([`refused_certificate`]) or a handshake the server refused ([`refused_handshake`]) says
/// why and what to try; anything else is the TLS error it was.
pub(super) fn tls_failure(e: crate::tls::Error, config: &super::ProverConfig, name: &str) -> ProverError {
    match e {
        crate::tls::Error::Certificate(c) => refused_certificate(c, name),
        e => refused_handshake(e, config),
    }
}

const UNTRUSTED: &str = "The roots are Mozilla's (webpki-roots) unless others are given: a server with a private CA needs that CA's certificate (caPem, --roots); the verifier checks against its own roots too.";

const CLOCK: &str = "Check the clock of the machine (and of the verifier, which checks at its own time).";

/// Names a certificate presents, for a message: printable ASCII only (they come from the
/// server), the first few.
fn listed_names(presented: &[String]) -> String {
    const SHOWN: usize = 4;
    let clean = |n: &String| n.chars().filter(|c| c.is_ascii_graphic()).take(64).collect::<String>();
    let mut names: Vec<String> = presented.iter().take(SHOWN).map(clean).collect();
    if presented.len() > SHOWN {
        names.push(format!("{} more", presented.len() - SHOWN));
    }
    match names.is_empty() {
        true => "no name".to_string(),
        false => names.join(", "),
    }
}

/// The certificate problems a user can act on, named with what to do; the rest as webpki
/// names them.
pub(super) fn refused_certificate(e: webpki::Error, name: &str) -> ProverError {
    let (problem, hint) = match &e {
        webpki::Error::UnknownIssuer => ("its chain leads to no root the prover trusts".to_string(), UNTRUSTED),
        // a root of the issuer's name that did not sign it (another CA of the same name), or a
        // forged chain
        webpki::Error::InvalidSignatureForPublicKey => {
            ("its chain is not signed by the root of that name the prover trusts".to_string(), UNTRUSTED)
        }
        webpki::Error::CertNotValidForName(c) => (
            format!("it is issued for {}", listed_names(&c.presented)),
            "The name checked is the URL's host (or serverName): use a name the certificate lists.",
        ),
        webpki::Error::CertExpired { time, not_after } => (
            format!("it expired at {} (Unix time), before the time checked, {}", not_after.as_secs(), time.as_secs()),
            CLOCK,
        ),
        webpki::Error::CertNotValidYet { time, not_before } => (
            format!(
                "it is valid from {} (Unix time), after the time checked, {}",
                not_before.as_secs(),
                time.as_secs()
            ),
            CLOCK,
        ),
        _ => (format!("{e:?}"), "The server's certificate chain does not validate."),
    };
    ProverError::CertificateRefused { name: name.to_string(), problem, hint }
}

/// A handshake the server refused outright (`handshake_failure`, `protocol_version`,
/// `insufficient_security`) as [`ProverError::HandshakeRefused`], naming the versions and
/// suites offered and what to try; any other TLS error as it is.
pub(super) fn refused_handshake(e: crate::tls::Error, config: &super::ProverConfig) -> ProverError {
    use crate::protocol::messages::TlsVersion;
    use crate::tls::tls13::Suite13;
    use crate::tls::{AlertDescription, CipherSuite, PeerMisbehaved};
    let alert = match &e {
        crate::tls::Error::PeerMisbehaved(PeerMisbehaved::FatalAlert(a))
            if [AlertDescription::HANDSHAKE_FAILURE, AlertDescription::PROTOCOL_VERSION, AlertDescription(71)]
                .contains(a) =>
        {
            *a
        }
        _ => return ProverError::Tls(e),
    };
    let (v12, v13) =
        (config.tls_versions.contains(&TlsVersion::Tls12), config.tls_versions.contains(&TlsVersion::Tls13));
    let mpc = config.mode.session_mode() == crate::wire::session::SessionMode::Mpc;
    let tls12: Vec<CipherSuite> = match mpc {
        true => config.tls12_suites.iter().copied().filter(|s| CipherSuite::AES_128.contains(s)).collect(),
        false => config.tls12_suites.clone(),
    };
    let names = |n: Vec<&str>| n.join(", ");
    let mut offered = Vec::new();
    if v12 {
        offered.push(format!("TLS 1.2 with {}", names(tls12.iter().map(|s| s.name()).collect())));
    }
    if v13 {
        let tls13: Vec<&str> = match mpc {
            true => crate::mpc::connection::Suites13::of(&config.tls13_suites)
                .map(|s| s.list().iter().map(|s| s.name()).collect())
                .unwrap_or_default(),
            false => config.tls13_suites.iter().map(|s| s.name()).collect(),
        };
        offered.push(format!("TLS 1.3 with {}", names(tls13)));
    }
    let all12 = CipherSuite::ALL.iter().all(|s| tls12.contains(s));
    let all13 = Suite13::ALL.iter().all(|s| config.tls13_suites.contains(s));
    let versions = "tls.versions [\"1.2\", \"1.3\"] (--tls-versions 1.2,1.3), the default";
    let mut hint = match (v12, v13) {
        (true, _) if mpc => "A server that speaks TLS 1.3 only is reached in MPC mode with tls.versions [\"1.3\"] (--tls-versions 1.3); MPC mode speaks AES-128-GCM (and in TLS 1.3 ChaCha20-Poly1305) only, and proxy mode reaches servers that require another suite.".to_string(),
        _ if mpc => "A server that speaks TLS 1.2 only is reached in MPC mode with tls.versions [\"1.2\"] (--tls-versions 1.2), the default; MPC mode speaks AES-128-GCM (and in TLS 1.3 ChaCha20-Poly1305) only, and proxy mode reaches servers that require another suite.".to_string(),
        (true, false) => format!("A server that speaks TLS 1.3 only needs it offered: {versions}."),
        (false, true) => format!("A server that speaks TLS 1.2 only needs it offered: {versions}."),
        _ => String::new(),
    };
    if !mpc && ((v12 && !all12) || (v13 && !all13)) {
        hint += " A server that needs a suite not offered needs it among tls.cipherSuites (--tls12-suites, --tls13-suites); by default all are offered.";
    } else if !mpc && v12 && v13 {
        hint += "The server may require a key exchange or a signature scheme tlsproof does not implement (ECDHE over P-256 or X25519; ECDSA, RSA PKCS#1 or PSS signatures).";
    }
    ProverError::HandshakeRefused { alert, offered: offered.join("; "), hint: hint.trim().to_string() }
}

/// Classifies a failure of the stream through the proxy by the close code the proxy sent
/// ([`crate::transport::close_code`]).
pub(super) fn proxy_code(msg: &str) -> &'static str {
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
pub(crate) fn rejection_code(reason: &str) -> &'static str {
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
