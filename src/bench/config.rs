//! The benchmark configuration: a TOML file of groups and benches, expanded into the concrete
//! [`BenchCase`]s the runner measures.
//!
//! ```toml
//! [[group]]
//! name = "download_sweep"
//! profile = "cable"            # cable | mobile_5g | fiber | local
//! samples = 10
//! upload_size = 1024
//! request_redaction = "authorization"
//!
//! [[bench]]
//! group = "download_sweep"
//! download_size = [1024, 5120, 52224]      # a list expands into one case per value
//! reveal_recv = ["all", "all_but_last"]
//! ```
//!
//! A bench inherits every field of its group, a group every field of its profile, and a profile
//! the built-in defaults; a field set closer to the bench wins. Any field may be a list: the
//! cases are the cartesian product of all lists, in file order.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest request and response the bench will ask for (the prover's limits are set from them;
/// the bench's verifier allows the largest response).
pub(crate) const MAX_UPLOAD: usize = 64 * 1024;
pub(crate) const MAX_DOWNLOAD: usize = 16 * 1024 * 1024;
/// The request must at least hold the request line, Host, the secret header and padding header.
pub(crate) const MIN_UPLOAD: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("TOML: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("bench #{index}: no group named {group:?}")]
    UnknownGroup { index: usize, group: String },
    #[error("unknown profile {0:?} (expected cable, mobile_5g, fiber or local)")]
    UnknownProfile(String),
    #[error("case {case}: {message}")]
    Invalid { case: String, message: String },
    #[error("the configuration has no [[bench]] entries")]
    Empty,
    #[error("{0} cases: more than the limit of 10000 (check the lists)")]
    TooManyCases(usize),
}

/// How the prover reaches the server: through the verifier (proxy mode), or through a
/// WebSocket-to-TCP proxy next to the prover, with the verifier as the other half of the TLS
/// client (MPC mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Proxy,
    Mpc,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Proxy => "proxy",
            Mode::Mpc => "mpc",
        }
    }
}

/// How much of the response the prover reveals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevealRecv {
    /// The whole response: the full-reveal fast path.
    All,
    /// All but the last byte: the ZK path over len − 1 bytes.
    AllButLast,
    /// A JSON response (the fixture's `/json` padded to the download size) with its amount
    /// hidden: the baseline of [`RevealRecv::AmountStated`].
    AmountHidden,
    /// The same response with the statement `account.balance.amount >= 1000` proven about the
    /// hidden amount, everything else revealed.
    AmountStated,
}

impl RevealRecv {
    /// Whether the case's response is the JSON document with the amount.
    pub fn is_json(self) -> bool {
        matches!(self, RevealRecv::AmountHidden | RevealRecv::AmountStated)
    }

    /// How reports name it.
    pub fn describe(self) -> &'static str {
        match self {
            RevealRecv::All => "all (fast path)",
            RevealRecv::AllButLast => "all but last (ZK)",
            RevealRecv::AmountHidden => "all but the amount (ZK)",
            RevealRecv::AmountStated => "all but the amount, amount >= 1000 proven (ZK)",
        }
    }
}

/// Where the prover runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Native,
    Browser,
    /// The package's Node.js prover (the napi-rs addon), a process per sample.
    Node,
}

/// One measured configuration (every field resolved).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchCase {
    pub group: String,
    pub mode: Mode,
    /// The TLS version the prover offers (`"1.2"` or `"1.3"`).
    pub tls_version: crate::protocol::messages::TlsVersion,
    /// With TLS 1.3, the one suite the prover offers (IANA name), or `default` (all three,
    /// cheapest proof first, and the server chooses).
    pub cipher_suite: String,
    /// The profile the network figures came from (`custom` when set by hand).
    pub profile: String,
    /// Prover ↔ verifier round trip, milliseconds.
    pub protocol_latency: f64,
    /// Verifier ↔ server round trip (in proxy mode the verifier talks to the server), ms.
    pub app_latency: f64,
    /// Prover ↔ verifier bandwidth, each direction, Mbit/s (0 = unshaped).
    pub bandwidth: f64,
    /// Verifier ↔ server bandwidth, Mbit/s (0 = unshaped).
    pub app_bandwidth: f64,
    /// Request bytes (the whole HTTP request).
    pub upload_size: usize,
    /// Response body bytes.
    pub download_size: usize,
    pub reveal_recv: RevealRecv,
    /// Request header whose value is hidden from the verifier, or `none`.
    pub request_redaction: String,
    pub samples: usize,
    pub target: Target,
    /// The session is prepared before the request (`prepare`, then `notarize`): `time_total`
    /// is then the `notarize` call alone, what a user waits for once the request is known.
    pub prepared: bool,
}

impl BenchCase {
    /// A short label for tables and plots, e.g. `proxy cable reveal all (native)`.
    pub fn series(&self) -> String {
        let tls = match self.tls_version {
            crate::protocol::messages::TlsVersion::Tls12 => "",
            crate::protocol::messages::TlsVersion::Tls13 => " tls1.3",
        };
        let prepared = if self.prepared { " prepared" } else { "" };
        let suite = if self.cipher_suite == "default" {
            String::new()
        } else {
            format!(" {}", self.cipher_suite.to_lowercase())
        };
        format!("{:?}{tls}{suite}{prepared} {}", self.mode, series_label(&self.profile, self.reveal_recv, self.target))
            .to_lowercase()
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |message: String| Err(ConfigError::Invalid { case: self.series(), message });
        if !(MIN_UPLOAD..=MAX_UPLOAD).contains(&self.upload_size) {
            return bad(format!("upload_size {} is outside {MIN_UPLOAD}..={MAX_UPLOAD}", self.upload_size));
        }
        if !(1..=MAX_DOWNLOAD).contains(&self.download_size) {
            return bad(format!("download_size {} is outside 1..={MAX_DOWNLOAD}", self.download_size));
        }
        if self.cipher_suite != "default" {
            use crate::protocol::messages::TlsVersion;
            match (
                crate::tls::tls13::Suite13::from_name(&self.cipher_suite),
                crate::tls::CipherSuite::from_name(&self.cipher_suite),
            ) {
                (Some(_), _) if self.tls_version != TlsVersion::Tls13 => {
                    return bad("cipher_suite names a TLS 1.3 suite: it needs tls_version = 1.3".into());
                }
                (None, Some(_)) if self.tls_version != TlsVersion::Tls12 => {
                    return bad("cipher_suite names a TLS 1.2 suite: it needs tls_version = 1.2".into());
                }
                (None, Some(s)) if !s.name().contains("_ECDSA_") => {
                    return bad("cipher_suite names an RSA suite: the bench's fixture server has an ECDSA key".into());
                }
                (None, Some(s)) if self.mode == Mode::Mpc && !crate::tls::CipherSuite::AES_128.contains(&s) => {
                    return bad("MPC mode supports the AES-128-GCM suites only in TLS 1.2".into());
                }
                (Some(s), _) if self.mode == Mode::Mpc && crate::mpc::connection::Suites13::of(&[s]).is_none() => {
                    return bad(
                        "MPC mode supports TLS_CHACHA20_POLY1305_SHA256 and TLS_AES_128_GCM_SHA256 only in TLS 1.3"
                            .into(),
                    );
                }
                (None, None) => {
                    return bad(format!(
                        "cipher_suite {:?} is not a TLS 1.3 or TLS 1.2 suite's IANA name (or \"default\")",
                        self.cipher_suite
                    ));
                }
                _ => {}
            }
        }
        if !(1..=1000).contains(&self.samples) {
            return bad(format!("samples {} is outside 1..=1000", self.samples));
        }
        for (name, v) in [
            ("protocol_latency", self.protocol_latency),
            ("app_latency", self.app_latency),
            ("bandwidth", self.bandwidth),
            ("app_bandwidth", self.app_bandwidth),
        ] {
            if !(v.is_finite() && (0.0..=100_000.0).contains(&v)) {
                return bad(format!("{name} = {v} must be a number in 0..=100000"));
            }
        }
        let r = self.request_redaction.as_str();
        if r != "none" && (r.is_empty() || !r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')) {
            return bad(format!("request_redaction {r:?} must be a header name or \"none\""));
        }
        Ok(())
    }
}

/// `<profile> <reveal> (<target>)`: the line a case belongs to in tables and plots.
pub(crate) fn series_label(profile: &str, reveal: RevealRecv, target: Target) -> String {
    let reveal = match reveal {
        RevealRecv::All => "reveal all",
        RevealRecv::AllButLast => "redacted",
        RevealRecv::AmountHidden => "amount hidden",
        RevealRecv::AmountStated => "amount stated",
    };
    let target = match target {
        Target::Native => "native",
        Target::Browser => "browser",
        Target::Node => "node",
    };
    format!("{profile} {reveal} ({target})")
}

/// The network figures of a named profile: (protocol RTT ms, bandwidth Mbit/s).
pub fn profile(name: &str) -> Result<(f64, f64), ConfigError> {
    Ok(match name {
        "cable" => (20.0, 20.0),
        "mobile_5g" => (30.0, 30.0),
        "fiber" => (15.0, 100.0),
        "local" => (0.0, 0.0),
        other => return Err(ConfigError::UnknownProfile(other.to_string())),
    })
}

/// Default verifier ↔ server round trip, ms.
pub(crate) const DEFAULT_APP_LATENCY: f64 = 50.0;

type Table = toml::map::Map<String, toml::Value>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    group: Vec<Table>,
    #[serde(default)]
    bench: Vec<Table>,
}

/// Parses a configuration and expands it into cases.
pub fn parse(text: &str) -> Result<Vec<BenchCase>, ConfigError> {
    let file: File = toml::from_str(text)?;
    if file.bench.is_empty() {
        return Err(ConfigError::Empty);
    }
    let groups: BTreeMap<String, &Table> =
        file.group.iter().filter_map(|g| g.get("name").and_then(|n| n.as_str()).map(|n| (n.to_string(), g))).collect();
    let mut cases = Vec::new();
    for (index, bench) in file.bench.iter().enumerate() {
        let group_name = bench.get("group").and_then(|g| g.as_str()).unwrap_or("default").to_string();
        let mut merged = Table::new();
        if bench.contains_key("group") {
            let group =
                groups.get(&group_name).ok_or(ConfigError::UnknownGroup { index, group: group_name.clone() })?;
            for (k, v) in group.iter().filter(|(k, _)| *k != "name") {
                merged.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in bench.iter() {
            merged.insert(k.clone(), v.clone());
        }
        merged.insert("group".into(), toml::Value::String(group_name));
        for combo in expand(&merged) {
            if cases.len() >= 10_000 {
                return Err(ConfigError::TooManyCases(cases.len() + 1));
            }
            cases.push(resolve(combo)?);
        }
    }
    Ok(cases)
}

/// The cartesian product over every array-valued field.
fn expand(table: &Table) -> Vec<Table> {
    let mut out = vec![Table::new()];
    for (k, v) in table {
        let values: Vec<toml::Value> = match v {
            toml::Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        out = out
            .into_iter()
            .flat_map(|t| {
                values.iter().map(move |v| {
                    let mut t = t.clone();
                    t.insert(k.clone(), v.clone());
                    t
                })
            })
            .take(10_001)
            .collect();
    }
    out
}

/// Fills in a single combination: profile figures, then defaults, then checks.
fn resolve(mut t: Table) -> Result<BenchCase, ConfigError> {
    let explicit_network = t.contains_key("protocol_latency") || t.contains_key("bandwidth");
    let profile_name = match t.get("profile").and_then(|p| p.as_str()) {
        Some(p) => p.to_string(),
        None if explicit_network => "custom".to_string(),
        None => "local".to_string(),
    };
    let (rtt, bw) = if profile_name == "custom" { (0.0, 0.0) } else { profile(&profile_name)? };
    t.insert("profile".into(), profile_name.into());
    let mut default = |k: &str, v: toml::Value| {
        t.entry(k.to_string()).or_insert(v);
    };
    default("mode", "proxy".into());
    default("tls_version", "1.2".into());
    default("cipher_suite", "default".into());
    default("protocol_latency", rtt.into());
    default("bandwidth", bw.into());
    default("app_latency", DEFAULT_APP_LATENCY.into());
    default("app_bandwidth", 0.0.into());
    default("upload_size", 1024.into());
    default("download_size", 1024.into());
    default("reveal_recv", "all".into());
    default("request_redaction", "authorization".into());
    default("samples", 10.into());
    default("target", "native".into());
    default("prepared", false.into());
    // `tls_version = 1.3` reads as a float: it means the version.
    if let Some(toml::Value::Float(v)) = t.get("tls_version") {
        let v = format!("{v:.1}");
        t.insert("tls_version".into(), v.into());
    }
    // Integers are fine where the struct wants a float.
    for k in ["protocol_latency", "bandwidth", "app_latency", "app_bandwidth"] {
        if let Some(toml::Value::Integer(i)) = t.get(k) {
            let f = *i as f64;
            t.insert(k.into(), f.into());
        }
    }
    // A profile whose figures were overridden is no longer that profile.
    let net = (t.get("protocol_latency").and_then(|v| v.as_float()), t.get("bandwidth").and_then(|v| v.as_float()));
    if explicit_network && net != (Some(rtt), Some(bw)) {
        t.insert("profile".into(), "custom".into());
    }
    let case: BenchCase = toml::Value::Table(t.clone()).try_into().map_err(|e: toml::de::Error| {
        ConfigError::Invalid { case: format!("{t}").replace('\n', " "), message: e.message().to_string() }
    })?;
    case.validate()?;
    Ok(case)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_profiles_and_lists_expand() {
        let cases = parse(
            r#"
            [[group]]
            name = "sweep"
            profile = "cable"
            samples = 3
            [[bench]]
            group = "sweep"
            download_size = [1024, 2048]
            reveal_recv = ["all", "all_but_last"]
            [[bench]]
            profile = "local"
            bandwidth = 5
            "#,
        )
        .unwrap();
        assert_eq!(cases.len(), 5);
        let c = &cases[0];
        assert_eq!((c.protocol_latency, c.bandwidth, c.app_latency, c.samples), (20.0, 20.0, 50.0, 3));
        assert_eq!(c.profile, "cable");
        let sizes: Vec<_> = cases[..4].iter().map(|c| (c.download_size, c.reveal_recv)).collect();
        assert_eq!(
            sizes,
            [
                (1024, RevealRecv::All),
                (1024, RevealRecv::AllButLast),
                (2048, RevealRecv::All),
                (2048, RevealRecv::AllButLast)
            ]
        );
        // A field set on the bench beats its profile.
        assert_eq!((cases[4].protocol_latency, cases[4].bandwidth, cases[4].samples), (0.0, 5.0, 10));
        assert_eq!(cases[4].group, "default");
        assert_eq!(cases[4].profile, "custom");
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(matches!(parse(""), Err(ConfigError::Empty)));
        assert!(matches!(parse("[[bench]]\ngroup = \"x\""), Err(ConfigError::UnknownGroup { .. })));
        assert!(matches!(parse("[[bench]]\nprofile = \"dialup\""), Err(ConfigError::UnknownProfile(_))));
        assert!(matches!(parse("[[bench]]\ndownload_size = 0"), Err(ConfigError::Invalid { .. })));
        assert!(matches!(parse("[[bench]]\nupload_size = 10"), Err(ConfigError::Invalid { .. })));
        assert!(matches!(parse("[[bench]]\nreveal_recv = \"some\""), Err(ConfigError::Invalid { .. })));
        assert!(matches!(parse("[[bench]]\nrequest_redaction = \"a b\""), Err(ConfigError::Invalid { .. })));
        assert!(matches!(parse("[[bench]]\nbandwidth = -1"), Err(ConfigError::Invalid { .. })));
        assert!(matches!(parse("[[bench]]\ncolour = 1"), Err(ConfigError::Invalid { .. })));
        let big = format!(
            "[[bench]]\ndownload_size = [{}]\nupload_size = [{}]",
            vec!["1"; 200].join(","),
            vec!["200"; 200].join(",")
        );
        assert!(matches!(parse(&big), Err(ConfigError::TooManyCases(_))));
    }

    #[test]
    fn the_seed_sweep_parses() {
        let cases = parse(include_str!("../../benches/seed_sweep.toml")).unwrap();
        assert!(cases.len() >= 14);
        assert!(cases.iter().any(|c| c.download_size == 51 * 1024 && c.reveal_recv == RevealRecv::AllButLast));
        use crate::protocol::messages::TlsVersion;
        let tls13: Vec<&BenchCase> = cases.iter().filter(|c| c.tls_version == TlsVersion::Tls13).collect();
        assert_eq!(tls13.len(), 14, "the cable sweep over TLS 1.3");
        assert!(tls13.iter().all(|c| c.mode == Mode::Proxy && c.series().starts_with("proxy tls1.3 cable")));
    }

    #[test]
    fn sessions_are_prepared_only_when_asked_and_the_label_says_so() {
        let cases = parse(&std::fs::read_to_string("benches/mpc_prepared.toml").unwrap()).unwrap();
        assert_eq!(cases.len(), 4);
        assert!(
            cases.iter().all(|c| c.prepared && c.series().starts_with("mpc prepared cable")),
            "{:?}",
            cases.iter().map(BenchCase::series).collect::<Vec<_>>()
        );
        assert!(!parse("[[bench]]").unwrap()[0].prepared);
    }

    #[test]
    fn the_tls_version_is_1_2_unless_asked_in_either_mode() {
        use crate::protocol::messages::TlsVersion;
        let versions = |toml: &str| parse(toml).map(|cases| cases.iter().map(|c| c.tls_version).collect::<Vec<_>>());
        assert_eq!(versions("[[bench]]").unwrap(), [TlsVersion::Tls12]);
        assert_eq!(versions("[[bench]]\ntls_version = 1.3").unwrap(), [TlsVersion::Tls13]);
        assert_eq!(
            versions("[[bench]]\ntls_version = [\"1.2\", \"1.3\"]").unwrap(),
            [TlsVersion::Tls12, TlsVersion::Tls13]
        );
        assert!(versions("[[bench]]\ntls_version = \"1.1\"").is_err());
        let mpc = versions("[[bench]]\nmode = \"mpc\"\ntls_version = [\"1.2\", \"1.3\"]").unwrap();
        assert_eq!(mpc, [TlsVersion::Tls12, TlsVersion::Tls13], "MPC mode's cases, one version each");
    }

    #[test]
    fn a_tls12_cipher_suite_is_an_ecdsa_suite_of_a_tls12_case() {
        let suite = |toml: &str| {
            parse(toml).map(|cases| (cases[0].cipher_suite.clone(), cases[0].series())).map_err(|e| e.to_string())
        };
        let (name, series) = suite("[[bench]]\ncipher_suite = \"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\"").unwrap();
        assert_eq!(name, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384");
        assert!(series.contains("tls_ecdhe_ecdsa_with_aes_256_gcm_sha384"), "{series}");
        let e = suite("[[bench]]\ntls_version = 1.3\ncipher_suite = \"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\"");
        assert!(e.unwrap_err().contains("needs tls_version = 1.2"));
        let e = suite("[[bench]]\ncipher_suite = \"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\"");
        assert!(e.unwrap_err().contains("ECDSA key"));
        let e = suite("[[bench]]\nmode = \"mpc\"\ncipher_suite = \"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\"");
        assert!(e.unwrap_err().contains("AES-128-GCM suites only"));
        let mpc13 =
            |name: &str| suite(&format!("[[bench]]\nmode = \"mpc\"\ntls_version = 1.3\ncipher_suite = \"{name}\""));
        assert!(mpc13("TLS_AES_256_GCM_SHA384").unwrap_err().contains("TLS_CHACHA20_POLY1305_SHA256 and"));
        assert!(mpc13("TLS_AES_128_GCM_SHA256").is_ok() && mpc13("TLS_CHACHA20_POLY1305_SHA256").is_ok());
        let cases = parse(&std::fs::read_to_string("benches/tls12_suites.toml").unwrap()).unwrap();
        assert_eq!(cases.len(), 12);
        assert!(cases.iter().all(|c| crate::tls::CipherSuite::from_name(&c.cipher_suite).is_some()));
    }

    #[test]
    fn a_cipher_suite_is_a_tls13_suite_of_a_tls13_case() {
        let suite = |toml: &str| {
            parse(toml).map(|cases| (cases[0].cipher_suite.clone(), cases[0].series())).map_err(|e| e.to_string())
        };
        assert_eq!(suite("[[bench]]\ntls_version = 1.3").unwrap().0, "default");
        let (name, series) = suite("[[bench]]\ntls_version = 1.3\ncipher_suite = \"TLS_AES_256_GCM_SHA384\"").unwrap();
        assert_eq!(name, "TLS_AES_256_GCM_SHA384");
        assert!(series.contains("tls1.3 tls_aes_256_gcm_sha384"), "{series}");
        assert!(suite("[[bench]]\ntls_version = 1.3\ncipher_suite = \"TLS_AES_128_CCM_SHA256\"")
            .unwrap_err()
            .contains("not a TLS 1.3 or TLS 1.2 suite"));
        assert!(suite("[[bench]]\ncipher_suite = \"TLS_AES_256_GCM_SHA384\"")
            .unwrap_err()
            .contains("needs tls_version = 1.3"));
        let cases = parse(&std::fs::read_to_string("benches/tls13_suites.toml").unwrap()).unwrap();
        assert_eq!(cases.len(), 12);
        assert!(cases.iter().all(
            |c| c.cipher_suite.starts_with("TLS_") && c.tls_version == crate::protocol::messages::TlsVersion::Tls13
        ));
    }
}
