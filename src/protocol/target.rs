//! The server a session certifies.
//!
//! The verifier dials the host it certifies: if the prover could name one host to dial and
//! another to validate the certificate for, it could point the verifier at a forwarder of its
//! own that relays the real server's handshake and then, since the prover knows the session
//! keys, answers with records it made up. So a request's `HOST:PORT` and its certificate name
//! must be the same host, and an IP-literal host is certified as that IP (the certificate must
//! list it).

use rustls_pki_types::ServerName;
use std::net::IpAddr;

/// A `HOST:PORT` whose host is the name the certificate is validated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerTarget {
    /// Lower-case DNS name without a trailing dot, or an IP literal in canonical form.
    name: String,
    port: u16,
}

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum TargetError {
    #[error("malformed server address {0:?}: expected HOST:PORT")]
    BadAddress(String),
    #[error("invalid server name {0:?}")]
    InvalidName(String),
    /// The prover asked to dial one host and to certify another.
    #[error("server name mismatch: the server to connect to is {host} but the name to certify is {name}; they must be the same host")]
    NameMismatch { host: String, name: String },
}

impl ServerTarget {
    /// The target for dialing `server` (`HOST:PORT`, `[v6]:PORT`) and certifying `server_name`.
    pub(crate) fn new(server: &str, server_name: &str) -> Result<ServerTarget, TargetError> {
        let (host, port) = split_host_port(server).ok_or_else(|| TargetError::BadAddress(server.to_string()))?;
        let host = canonical(&host).ok_or(TargetError::InvalidName(host))?;
        let name = canonical(server_name).ok_or_else(|| TargetError::InvalidName(server_name.to_string()))?;
        if host != name {
            return Err(TargetError::NameMismatch { host, name: server_name.to_string() });
        }
        Ok(ServerTarget { name, port })
    }

    /// The name the certificate is validated for (and the ClientHello's SNI, unless an IP).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    pub(crate) fn is_ip(&self) -> bool {
        self.name.parse::<IpAddr>().is_ok()
    }

    /// `HOST:PORT` to dial (IPv6 bracketed).
    pub(crate) fn address(&self) -> String {
        if self.name.contains(':') {
            format!("[{}]:{}", self.name, self.port)
        } else {
            format!("{}:{}", self.name, self.port)
        }
    }
}

/// `host` as it is compared: an IP literal canonical, a DNS name lower-case without a trailing
/// dot; `None` if it is neither.
fn canonical(host: &str) -> Option<String> {
    let host = host.trim();
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip.to_string());
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    match ServerName::try_from(name.as_str()) {
        Ok(ServerName::DnsName(_)) => Some(name),
        _ => None,
    }
}

/// Splits `host:port` / `[v6]:port`; the host is returned without brackets.
pub(crate) fn split_host_port(s: &str) -> Option<(String, u16)> {
    let s = s.trim();
    let (host, port) = match s.strip_prefix('[') {
        Some(rest) => rest.split_once("]:")?,
        None => {
            let (h, p) = s.rsplit_once(':')?;
            if h.contains(':') {
                return None; // a bare IPv6 address is ambiguous
            }
            (h, p)
        }
    };
    let port: u16 = port.parse().ok().filter(|p| *p != 0)?;
    (!host.is_empty()).then(|| (host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_name_must_be_the_same() {
        let t = ServerTarget::new("LocalHost.:4443", "localhost").unwrap();
        assert_eq!(
            (t.name(), t.port(), t.address(), t.is_ip()),
            ("localhost", 4443, "localhost:4443".to_string(), false)
        );
        let t = ServerTarget::new("[::1]:8443", "0:0::1").unwrap();
        assert_eq!((t.name(), t.address(), t.is_ip()), ("::1", "[::1]:8443".to_string(), true));
        assert!(ServerTarget::new("127.0.0.1:443", "127.0.0.1").unwrap().is_ip());

        assert_eq!(
            ServerTarget::new("127.0.0.1:4443", "localhost"),
            Err(TargetError::NameMismatch { host: "127.0.0.1".into(), name: "localhost".into() })
        );
        assert!(matches!(ServerTarget::new("evil.example:443", "bank.example"), Err(TargetError::NameMismatch { .. })));
        assert!(matches!(
            ServerTarget::new("bank.example.evil:443", "bank.example"),
            Err(TargetError::NameMismatch { .. })
        ));
        for bad in ["bank.example", "bank.example:0", "bank.example:x", "::1:443", ":443", "[::1]443"] {
            assert_eq!(ServerTarget::new(bad, "bank.example"), Err(TargetError::BadAddress(bad.into())), "{bad}");
        }
        for bad in ["", "bank example", "a/b", "-"] {
            assert!(matches!(ServerTarget::new("bank.example:443", bad), Err(TargetError::InvalidName(_))), "{bad:?}");
        }
        assert!(matches!(ServerTarget::new("a_b!:443", "a_b!"), Err(TargetError::InvalidName(_))));
    }
}
