//! What a session is, as both roles and the attestation name it: its mode, its TLS version, the
//! protocol version, how each direction ended, and the bound on reveal ranges.

use serde::{Deserialize, Serialize};

/// Bumped on any incompatible change; peers with another version are refused clearly.
pub const PROTOCOL_VERSION: u16 = 25;

/// Most reveal ranges per direction.
pub(crate) const MAX_RANGES: usize = 4096;

/// Most request/response pairs in one session: each adds its checks and its line to every
/// verdict and attestation, and a session of many requests is many sessions' worth of one
/// prover's time.
pub const MAX_EXCHANGES: usize = 16;

/// How the prover reaches the server, and so who holds the session keys while the
/// connection is open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionMode {
    /// The verifier relays the TLS bytes to a server it dials itself; the prover alone is the
    /// TLS client.
    #[default]
    Proxy,
    /// The prover reaches the server through a WebSocket-to-TCP proxy of its choice; prover
    /// and verifier are the TLS client together ([`crate::mpc::connection`]), so neither holds
    /// the keys until every server record has reached the verifier.
    Mpc,
}

impl SessionMode {
    /// The lower-case name the CLI, the JS API and the verdict use.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionMode::Proxy => "proxy",
            SessionMode::Mpc => "mpc",
        }
    }
}

impl std::str::FromStr for SessionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "proxy" => Ok(SessionMode::Proxy),
            "mpc" => Ok(SessionMode::Mpc),
            other => Err(format!("unknown mode {other:?}: expected \"proxy\" or \"mpc\"")),
        }
    }
}

/// The TLS version of a session. The prover chooses what to offer; the verifier reads which
/// one the server chose from the relayed ServerHello.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TlsVersion {
    #[default]
    #[serde(rename = "1.2")]
    Tls12,
    #[serde(rename = "1.3")]
    Tls13,
}

impl TlsVersion {
    /// `"1.2"` or `"1.3"`, as the CLI, the JS API and the verdict write it.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "1.2",
            TlsVersion::Tls13 => "1.3",
        }
    }
}

impl std::str::FromStr for TlsVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "1.2" => Ok(TlsVersion::Tls12),
            "1.3" => Ok(TlsVersion::Tls13),
            other => Err(format!("unknown TLS version {other:?}: expected \"1.2\" or \"1.3\"")),
        }
    }
}

/// How a direction of the proven transcript ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// close_notify: the sender said it was done, so nothing was cut off at the TLS layer.
    CloseNotify,
    /// A fatal alert (its description).
    FatalAlert(u8),
    /// No ending alert in the proven transcript: it may have been cut off.
    Open,
}

impl Ending {
    /// The name used in the JS result and the JSON verdict.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::CloseNotify => "close_notify",
            Ending::FatalAlert(_) => "fatal_alert",
            Ending::Open => "open",
        }
    }
}
