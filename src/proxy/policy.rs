//! Which targets the proxy may connect to.
//!
//! The proxy must never be an open relay: the allow-list is empty by default, and addresses
//! that are not globally routable (loopback, private, link-local, ...) are refused unless the
//! allow-list entry that matched names the host explicitly as an IP literal or `localhost`.
//! A host *name* that resolves to a private address is refused, which blocks DNS-rebinding
//! tricks against the proxy's own network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why a target was refused. Each maps to a WebSocket close code and a readable reason.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    #[error("missing or malformed target: expected ?target=HOST:PORT")]
    BadTarget,
    #[error("target {0} is not on the allow-list")]
    NotAllowed(String),
    #[error("target {target} resolves to non-public address {addr}; allow it by IP or as localhost")]
    NonPublicAddress { target: String, addr: IpAddr },
    #[error("cannot resolve target {0}")]
    Unresolvable(String),
}

#[derive(Debug, thiserror::Error)]
#[error("bad allow-list entry {entry:?}: {why}")]
pub struct AllowListError {
    pub entry: String,
    pub why: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum HostPattern {
    /// One host name (lower-cased) or IP literal.
    Exact(String),
    /// `*.example.com`: any subdomain of `example.com`.
    Subdomains(String),
    /// `*`: any host (public addresses only).
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct AllowEntry {
    host: HostPattern,
    port: u16,
}

impl AllowEntry {
    fn matches(&self, host: &str, port: u16) -> bool {
        self.port == port
            && match &self.host {
                HostPattern::Exact(h) => h == host,
                HostPattern::Subdomains(d) => {
                    host.len() > d.len() + 1
                        && host.ends_with(d.as_str())
                        && host[..host.len() - d.len()].ends_with('.')
                }
                HostPattern::Any => true,
            }
    }

    /// Entries that name one host by IP literal or as `localhost` may reach non-public addresses.
    fn allows_non_public(&self) -> bool {
        match &self.host {
            HostPattern::Exact(h) => h == "localhost" || h.parse::<IpAddr>().is_ok(),
            _ => false,
        }
    }
}

/// The set of `HOST:PORT` targets a proxy will connect to.
#[derive(Clone, Debug, Default)]
pub struct AllowList {
    entries: Vec<AllowEntry>,
}

impl AllowList {
    /// Parses a comma-separated list: `host:port`, `[v6]:port`, `*.domain:port`, `*:port`.
    pub fn parse(list: &str) -> Result<AllowList, AllowListError> {
        let mut entries = Vec::new();
        for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let err = |why| AllowListError { entry: raw.to_string(), why };
            let (host, port) = split_host_port(raw).ok_or_else(|| err("expected HOST:PORT"))?;
            let host = if host == "*" {
                HostPattern::Any
            } else if let Some(d) = host.strip_prefix("*.") {
                if d.is_empty() || d.contains('*') {
                    return Err(err("wildcard must look like *.example.com"));
                }
                HostPattern::Subdomains(d.to_string())
            } else if host.contains('*') {
                return Err(err("wildcard only allowed as a leading *."));
            } else {
                HostPattern::Exact(host)
            };
            entries.push(AllowEntry { host, port });
        }
        Ok(AllowList { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry that allows `target` (`HOST:PORT`), with its host and port.
    fn entry_for(&self, target: &str) -> Result<(&AllowEntry, String, u16), Refusal> {
        let (host, port) = split_host_port(target).ok_or(Refusal::BadTarget)?;
        let entry = self
            .entries
            .iter()
            .find(|e| e.matches(&host, port))
            .ok_or_else(|| Refusal::NotAllowed(target.to_string()))?;
        Ok((entry, host, port))
    }

    /// Whether `target` (`HOST:PORT`) is on the list, without resolving it: for a verifier
    /// that certifies a name it does not dial (MPC mode), where the name points is the
    /// proxy's concern.
    pub(crate) fn permits(&self, target: &str) -> Result<(), Refusal> {
        self.entry_for(target).map(|_| ())
    }

    /// Checks `target` (`HOST:PORT`) and resolves it to the addresses the proxy may dial.
    pub(crate) async fn resolve(&self, target: &str) -> Result<Vec<SocketAddr>, Refusal> {
        let (entry, host, port) = self.entry_for(target)?;
        let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|_| Refusal::Unresolvable(target.to_string()))?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(Refusal::Unresolvable(target.to_string()));
        }
        if !entry.allows_non_public() {
            if let Some(a) = addrs.iter().find(|a| !is_public(a.ip())) {
                return Err(Refusal::NonPublicAddress { target: target.to_string(), addr: a.ip() });
            }
        }
        Ok(addrs)
    }
}

/// Splits `host:port` / `[v6]:port`; the host is lower-cased, without brackets.
fn split_host_port(s: &str) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, p) = rest.split_once("]:")?;
        (h, p)
    } else {
        let (h, p) = s.rsplit_once(':')?;
        if h.contains(':') {
            return None; // bare IPv6 without brackets is ambiguous
        }
        (h, p)
    };
    let port: u16 = port.parse().ok().filter(|p| *p != 0)?;
    if host.is_empty() || host.len() > 253 || !host.chars().all(|c| c.is_ascii_alphanumeric() || "-._:*".contains(c)) {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

/// Whether `ip` is globally routable (std's `is_global` is unstable, so spelled out here).
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0))
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // shared address space 100.64/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18/15
        || o[0] >= 240)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn empty_list_refuses_everything() {
        let a = AllowList::parse("").unwrap();
        assert!(a.is_empty());
        assert_eq!(rt().block_on(a.resolve("93.184.215.14:443")), Err(Refusal::NotAllowed("93.184.215.14:443".into())));
    }

    #[test]
    fn parses_and_matches_patterns() {
        let a = AllowList::parse("api.example.com:443, *.bank.test:8443,[::1]:9000,127.0.0.1:4443").unwrap();
        assert!(a.entries[0].matches("api.example.com", 443));
        assert!(!a.entries[0].matches("api.example.com", 444));
        assert!(a.entries[1].matches("www.bank.test", 8443));
        assert!(!a.entries[1].matches("bank.test", 8443));
        assert!(!a.entries[1].matches("evilbank.test", 8443));
        assert!(a.entries[2].matches("::1", 9000));
        assert!(a.entries[2].allows_non_public() && a.entries[3].allows_non_public());
        assert!(!a.entries[1].allows_non_public());
        for bad in ["nohost", "host:0", "host:99999", "a*b:1", "*.:1", "::1:80"] {
            assert!(AllowList::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn wildcard_never_reaches_loopback_or_private() {
        let a = AllowList::parse("*:4443").unwrap();
        let r = rt();
        assert!(matches!(r.block_on(a.resolve("127.0.0.1:4443")), Err(Refusal::NonPublicAddress { .. })));
        assert!(matches!(r.block_on(a.resolve("10.1.2.3:4443")), Err(Refusal::NonPublicAddress { .. })));
        assert!(matches!(r.block_on(a.resolve("[::1]:4443")), Err(Refusal::NonPublicAddress { .. })));
        assert!(r.block_on(a.resolve("93.184.215.14:4443")).is_ok());
        let explicit = AllowList::parse("127.0.0.1:4443,localhost:4443").unwrap();
        assert!(r.block_on(explicit.resolve("127.0.0.1:4443")).is_ok());
        assert!(r.block_on(explicit.resolve("localhost:4443")).is_ok());
    }

    #[test]
    fn permits_checks_the_list_without_resolving() {
        let a = AllowList::parse("*.example.com:443,localhost:8443").unwrap();
        assert_eq!(a.permits("api.example.com:443"), Ok(()));
        assert_eq!(a.permits("LOCALHOST:8443"), Ok(()));
        assert_eq!(a.permits("api.example.com:444"), Err(Refusal::NotAllowed("api.example.com:444".into())));
        assert_eq!(a.permits("evil.com:443"), Err(Refusal::NotAllowed("evil.com:443".into())));
        assert_eq!(a.permits("no-port"), Err(Refusal::BadTarget));
        // a name that resolves nowhere is still only a name: whether it is allowed is the
        // list's alone to say
        assert_eq!(a.permits("nowhere.example.com:443"), Ok(()));
    }

    #[test]
    fn classifies_addresses() {
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "240.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["1.1.1.1", "93.184.215.14", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
