//! The browser API's options and result objects, as plain serde types.
//!
//! They carry no wasm-bindgen types so that the parsing and validation of what a web page
//! passes in (untrusted: any JS value) is unit-tested natively; `js.rs` only moves them across
//! the boundary with serde-wasm-bindgen.

use crate::protocol::disclose::exchange::MAX_EXCHANGES;
use crate::protocol::disclose::statement::GrammarError;
use crate::protocol::prover::ExchangePlan;
use crate::protocol::target::split_host_port;
use crate::protocol::{ProverOutput, Reveal, RevealConfig, VerifiedDirection};
use crate::tls::tls13::Suite13;
use serde::{Deserialize, Serialize};

/// Default limits: a request with a few headers, a response of a typical API call.
pub const DEFAULT_MAX_SENT: u32 = 16 * 1024;
pub const DEFAULT_MAX_RECV: u32 = 256 * 1024;

/// The fields of [`NotarizeOptions`] and of [`RevealOptions`]. serde-wasm-bindgen reads a
/// struct by looking up its fields, so it never sees unknown ones and `deny_unknown_fields`
/// cannot catch a misspelt option there; the bindings check keys against these lists first
/// (a test keeps them in step with the structs).
pub const OPTION_FIELDS: &[&str] = &[
    "verifierUrl",
    "mode",
    "proxyUrl",
    "url",
    "server",
    "path",
    "serverName",
    "caPem",
    "method",
    "headers",
    "body",
    "reveal",
    "maxSentBytes",
    "maxRecvBytes",
    "timeoutMs",
    "tls",
    "verifierKey",
    "requests",
];
/// The fields of one of `requests` ([`RequestOptions`]).
pub const REQUEST_FIELDS: &[&str] = &["url", "path", "method", "headers", "body", "reveal"];
pub const REVEAL_FIELDS: &[&str] = &["sent", "recv", "commitSent", "commitRecv", "prove", "proveRequest"];
pub const TLS_FIELDS: &[&str] = &["versions", "cipherSuites"];

/// `notarize(options)`: what to request and what to reveal.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotarizeOptions {
    /// `ws://` or `wss://` URL of `tlsproof verifier`.
    pub verifier_url: String,
    /// `"proxy"` (the default: the verifier dials the server) or `"mpc"` (through `proxyUrl`,
    /// with the verifier as the other half of the TLS client).
    #[serde(default)]
    pub mode: Option<String>,
    /// `ws://` or `wss://` URL of `tlsproof proxy`, for `mode: "mpc"`.
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// `https://host[:port]/path?query`; or give `server` and `path` instead.
    #[serde(default)]
    pub url: Option<String>,
    /// `HOST:PORT` the verifier connects to (with `path`), when there is no `url`.
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    /// Name the certificate must be valid for; default: the URL's host.
    #[serde(default)]
    pub server_name: Option<String>,
    /// Trusted roots (PEM); default: Mozilla's roots.
    #[serde(default)]
    pub ca_pem: Option<String>,
    /// HTTP method; default `GET`.
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub headers: Headers,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub reveal: Option<RevealOptions>,
    /// Several requests over the session's one connection, in order (at most 16), each with its
    /// own `url` (or `path`), method, headers, body and reveal choices; instead of the
    /// top-level ones. Every request but the last keeps the connection open.
    #[serde(default)]
    pub requests: Option<Vec<RequestOptions>>,
    #[serde(default)]
    pub max_sent_bytes: Option<u32>,
    #[serde(default)]
    pub max_recv_bytes: Option<u32>,
    /// Longest the whole session may take, in milliseconds (also bounds each step).
    #[serde(default)]
    pub timeout_ms: Option<f64>,
    /// `undefined` or absent: the defaults.
    #[serde(default)]
    pub tls: Option<TlsOptions>,
    /// The verifier's public key (`secp256k1:0x…`, `ed25519:…`): the session must end with an
    /// attestation signed by it (`BAD_ATTESTATION` otherwise).
    #[serde(default)]
    pub verifier_key: Option<String>,
}

/// One of `requests`: what `notarize` takes for one request, per request.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestOptions {
    /// `https://host[:port]/path?query`, on the session's server; or give `path`.
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub headers: Headers,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub reveal: Option<RevealOptions>,
}

/// `tls: {versions, cipherSuites}`: what the prover's TLS client offers.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TlsOptions {
    /// `["1.2"]` (the default), `["1.3"]`, or both in one ClientHello (the server chooses).
    #[serde(default)]
    pub versions: Option<Vec<String>>,
    /// The suites to offer, by IANA name, in order of preference; each name tells its
    /// version (TLS 1.3's `TLS_AES_…`, TLS 1.2's `TLS_ECDHE_…`). A version none of whose suites
    /// are named offers its default: all, cheapest proof first ([`Suite13::PROVER_DEFAULT`],
    /// [`CipherSuite::ALL`](crate::tls::CipherSuite::ALL)).
    #[serde(default)]
    pub cipher_suites: Option<Vec<String>>,
}

/// Request headers, in order: a `{name: value}` object or a list of `[name, value]` pairs.
#[derive(Debug, Default)]
pub struct Headers(pub Vec<(String, String)>);

impl<'de> Deserialize<'de> for Headers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Headers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("headers as an object {name: value} or a list of [name, value] pairs")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Headers, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = m.next_entry::<String, String>()? {
                    out.push(kv);
                }
                Ok(Headers(out))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Headers, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = s.next_element::<(String, String)>()? {
                    out.push(kv);
                }
                Ok(Headers(out))
            }
            fn visit_unit<E>(self) -> Result<Headers, E> {
                Ok(Headers::default())
            }
            fn visit_none<E>(self) -> Result<Headers, E> {
                Ok(Headers::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// What the verifier gets to see, per direction.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevealOptions {
    /// Default: everything but the values of `Authorization` and `Cookie`.
    #[serde(default = "default_sent")]
    pub sent: RevealSpec,
    /// Default: all of the response (the fast path).
    #[serde(default = "default_recv")]
    pub recv: RevealSpec,
    /// Hidden ranges to commit to (SHA-256 of the bytes and a blinder, proven): the verifier
    /// learns only the digest, and a presentation can open them later. Default: none.
    #[serde(default, rename = "commitSent")]
    pub commit_sent: Option<RevealSpec>,
    #[serde(default, rename = "commitRecv")]
    pub commit_recv: Option<RevealSpec>,
    /// Statements about values of the response's JSON body, proven without revealing them
    /// (each value is hidden): `PATH OP VALUE`, `PATH in [LOW, HIGH]` or `PATH in {"A", …}`,
    /// the CLI's `--prove-json` grammar. Default: none.
    #[serde(default)]
    pub prove: Vec<String>,
    /// The same about values of the request's JSON body (`body`, framed by Content-Length):
    /// each value is hidden, whatever `sent` says. Default: none.
    #[serde(default, rename = "proveRequest")]
    pub prove_request: Vec<String>,
}

fn default_sent() -> RevealSpec {
    RevealSpec::Redact(RedactHeaders { redact_headers: vec!["authorization".into(), "cookie".into()] })
}

fn default_recv() -> RevealSpec {
    RevealSpec::Word("all".into())
}

impl Default for RevealOptions {
    fn default() -> Self {
        RevealOptions {
            sent: default_sent(),
            recv: default_recv(),
            commit_sent: None,
            commit_recv: None,
            prove: vec![],
            prove_request: vec![],
        }
    }
}

/// One direction's reveal choice as JS spells it.
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = r#"a reveal choice: "all", "none", "body", a list of {start, end}, {redactHeaders: [...]} or {jsonFields: [...]}"#
)]
pub enum RevealSpec {
    Word(String),
    Ranges(Vec<ByteRange>),
    Redact(RedactHeaders),
    Json(JsonFields),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedactHeaders {
    pub redact_headers: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsonFields {
    pub json_fields: Vec<String>,
}

/// A half-open byte range `[start, end)` in a direction's plaintext.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ByteRange {
    pub start: u64,
    pub end: u64,
}

impl RevealSpec {
    fn to_reveal(&self, direction: &'static str) -> Result<Reveal, OptionsError> {
        Ok(match self {
            RevealSpec::Word(w) => match w.as_str() {
                "all" => Reveal::All,
                "none" => Reveal::Nothing,
                "body" => Reveal::HttpBody,
                other => return Err(OptionsError::RevealWord { direction, word: other.to_string() }),
            },
            RevealSpec::Ranges(ranges) => {
                let mut out = Vec::with_capacity(ranges.len());
                for r in ranges {
                    if r.start >= r.end {
                        return Err(OptionsError::EmptyRange { direction, start: r.start, end: r.end });
                    }
                    let start = usize::try_from(r.start).map_err(|_| OptionsError::EmptyRange {
                        direction,
                        start: r.start,
                        end: r.end,
                    })?;
                    let end = usize::try_from(r.end).map_err(|_| OptionsError::EmptyRange {
                        direction,
                        start: r.start,
                        end: r.end,
                    })?;
                    out.push(start..end);
                }
                Reveal::Ranges(out)
            }
            RevealSpec::Redact(r) => Reveal::AllExceptHeaders(r.redact_headers.clone()),
            RevealSpec::Json(j) => Reveal::JsonFields(j.json_fields.clone()),
        })
    }
}

/// Options that cannot describe a session (the API's `BAD_OPTIONS`).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OptionsError {
    #[error("options: {0}")]
    Shape(String),
    #[error("verifierUrl must be a ws:// or wss:// URL, not {0:?}")]
    VerifierUrl(String),
    #[error("mode must be \"proxy\" or \"mpc\", not {0:?}")]
    Mode(String),
    #[error("proxyUrl must be a ws:// or wss:// URL, not {0:?}")]
    ProxyUrl(String),
    #[error("tls.versions must list \"1.2\" and/or \"1.3\", each once, not {0}")]
    TlsVersions(String),
    #[error("tls.cipherSuites must list TLS 1.3 suites (TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256, TLS_AES_256_GCM_SHA384) or TLS 1.2 suites (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384), each once, not {0}")]
    CipherSuites(String),
    #[error("tls.cipherSuites names TLS 1.3 suites: tls.versions must include \"1.3\"")]
    CipherSuitesWithoutTls13,
    #[error("tls.cipherSuites names TLS 1.2 suites: tls.versions must include \"1.2\"")]
    CipherSuitesWithoutTls12,
    #[error("mode \"mpc\" needs proxyUrl (a tlsproof proxy's ws:// URL)")]
    NoProxyUrl,
    #[error("proxyUrl is for mode \"mpc\"; in proxy mode the verifier dials the server")]
    ProxyUrlWithoutMpc,
    #[error("give either url or server (with path), not both")]
    UrlAndServer,
    #[error("give url (https://host/path) or server (HOST:PORT) with path")]
    NoTarget,
    #[error("url must be https://host[:port]/path, not {0:?}")]
    Url(String),
    #[error("server must be HOST:PORT, not {0:?}")]
    Server(String),
    #[error(
        "reveal.{direction} must be \"all\", \"none\" or \"body\" (or ranges, redactHeaders, jsonFields), not {word:?}"
    )]
    RevealWord { direction: &'static str, word: String },
    #[error("reveal.{field}: {error}")]
    Statement { field: &'static str, error: String },
    #[error("reveal.{direction}: range {start}..{end} is empty or inverted")]
    EmptyRange { direction: &'static str, start: u64, end: u64 },
    #[error("{0} must be a positive number")]
    NotPositive(&'static str),
    #[error("the request cannot be encoded: {0}")]
    Request(String),
    #[error("caPem: {0}")]
    CaPem(String),
    #[error("verifierKey: {0}")]
    VerifierKey(String),
    /// A prepared session's `notarize` options name another session than `prepare` opened.
    #[error("{0} cannot change after prepare(): the session was opened with another value")]
    ChangedAfterPrepare(&'static str),
    #[error("with requests, give {0} per request, not at the top level")]
    PerRequest(&'static str),
    #[error("requests must list 1 to {max} requests, not {count}")]
    RequestCount { count: usize, max: usize },
    #[error("requests[{index}].url names {got}, not the session's server {server} (a session talks to one server)")]
    OtherServer { index: usize, got: String, server: String },
    #[error("requests[{index}] needs url or path")]
    NoPath { index: usize },
    /// `serverName` is not the host the verifier would connect to.
    #[error(transparent)]
    Target(#[from] crate::protocol::target::TargetError),
}

/// Everything a session needs, resolved from the options.
#[derive(Debug)]
pub struct SessionPlan {
    pub verifier_url: String,
    pub mode: crate::protocol::prover::ProverMode,
    pub tls_versions: Vec<crate::protocol::messages::TlsVersion>,
    /// The TLS 1.3 suites offered, in order.
    pub tls13_suites: Vec<Suite13>,
    /// The TLS 1.2 suites offered, in order.
    pub tls12_suites: Vec<crate::tls::CipherSuite>,
    /// `HOST:PORT` for the verifier to connect to.
    pub server: String,
    pub server_name: String,
    /// PEM roots; `None`: Mozilla's.
    pub ca_pem: Option<String>,
    /// The requests, each with what to reveal of it and of its response.
    pub exchanges: Vec<ExchangePlan>,
    pub max_sent: u32,
    pub max_recv: u32,
    pub timeout: Option<std::time::Duration>,
    pub verifier_key: Option<crate::attestation::VerifyingKey>,
}

/// The TLS 1.2 suites offered when none are named: all in proxy mode, cheapest proof first;
/// the AES-128-GCM ones, which its two-party client implements, in MPC mode.
fn default12(mode: &crate::protocol::prover::ProverMode) -> Vec<crate::tls::CipherSuite> {
    match mode {
        crate::protocol::prover::ProverMode::Proxy => crate::tls::CipherSuite::ALL.to_vec(),
        crate::protocol::prover::ProverMode::Mpc { .. } => crate::tls::CipherSuite::AES_128.to_vec(),
    }
}

impl NotarizeOptions {
    /// Validates the options and encodes the HTTP request.
    pub fn plan(&self) -> Result<SessionPlan, OptionsError> {
        use crate::protocol::prover::ProverMode;
        let v = self.verifier_url.trim();
        if !is_ws_url(v) {
            return Err(OptionsError::VerifierUrl(self.verifier_url.clone()));
        }
        let proxy_url = self.proxy_url.as_deref().map(str::trim).filter(|u| !u.is_empty());
        let mode = match (self.mode.as_deref().unwrap_or("proxy"), proxy_url) {
            ("proxy", None) => ProverMode::Proxy,
            ("proxy", Some(_)) => return Err(OptionsError::ProxyUrlWithoutMpc),
            ("mpc", None) => return Err(OptionsError::NoProxyUrl),
            ("mpc", Some(u)) if is_ws_url(u) => ProverMode::Mpc { proxy_url: u.to_string() },
            ("mpc", Some(u)) => return Err(OptionsError::ProxyUrl(u.to_string())),
            (other, _) => return Err(OptionsError::Mode(other.to_string())),
        };
        use crate::protocol::messages::TlsVersion;
        let tls_versions: Vec<TlsVersion> = match self.tls.as_ref().and_then(|t| t.versions.as_deref()) {
            None => mode.default_tls_versions(),
            Some(list) => {
                let bad = || OptionsError::TlsVersions(format!("{list:?}"));
                let parsed =
                    list.iter().map(|v| v.parse::<TlsVersion>().map_err(|_| bad())).collect::<Result<Vec<_>, _>>()?;
                if parsed.is_empty() || (parsed.len() == 2 && parsed[0] == parsed[1]) || parsed.len() > 2 {
                    return Err(bad());
                }
                parsed
            }
        };
        let (tls13_suites, tls12_suites) = match self.tls.as_ref().and_then(|t| t.cipher_suites.as_deref()) {
            None => (Suite13::PROVER_DEFAULT.to_vec(), default12(&mode)),
            Some(list) => {
                let bad = || OptionsError::CipherSuites(format!("{list:?}"));
                if list.is_empty() || list.iter().enumerate().any(|(i, n)| list[..i].contains(n)) {
                    return Err(bad());
                }
                let (mut tls13, mut tls12) = (Vec::new(), Vec::new());
                for name in list {
                    match (Suite13::from_name(name), crate::tls::CipherSuite::from_name(name)) {
                        (Some(s), _) => tls13.push(s),
                        (None, Some(s)) => tls12.push(s),
                        (None, None) => return Err(bad()),
                    }
                }
                if !tls13.is_empty() && !tls_versions.contains(&TlsVersion::Tls13) {
                    return Err(OptionsError::CipherSuitesWithoutTls13);
                }
                if !tls12.is_empty() && !tls_versions.contains(&TlsVersion::Tls12) {
                    return Err(OptionsError::CipherSuitesWithoutTls12);
                }
                if tls13.is_empty() {
                    tls13 = Suite13::PROVER_DEFAULT.to_vec();
                }
                if tls12.is_empty() {
                    tls12 = default12(&mode);
                }
                (tls13, tls12)
            }
        };
        let requests = self.requests.as_deref();
        if let Some(list) = requests {
            let top = [
                ("url", self.url.is_some()),
                ("path", self.path.is_some()),
                ("method", self.method.is_some()),
                ("headers", !self.headers.0.is_empty()),
                ("body", self.body.is_some()),
                ("reveal", self.reveal.is_some()),
            ];
            if let Some((name, _)) = top.iter().find(|(_, given)| *given) {
                return Err(OptionsError::PerRequest(name));
            }
            if list.is_empty() || list.len() > MAX_EXCHANGES {
                return Err(OptionsError::RequestCount { count: list.len(), max: MAX_EXCHANGES });
            }
        }
        let first_url = requests.and_then(|r| r[0].url.as_ref()).or(self.url.as_ref());
        let (host, port, path) = match (first_url, &self.server) {
            (Some(_), Some(_)) if requests.is_none() => return Err(OptionsError::UrlAndServer),
            (_, Some(server)) => {
                let (host, port) = split_host_port(server).ok_or_else(|| OptionsError::Server(server.clone()))?;
                (host, port, self.path.clone().unwrap_or_else(|| "/".into()))
            }
            (Some(url), None) => parse_https_url(url)?,
            (None, None) => return Err(OptionsError::NoTarget),
        };
        let server = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
        let server_name = self.server_name.clone().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| host.clone());
        let target = crate::protocol::target::ServerTarget::new(&server, &server_name)?;
        let (server, server_name) = (target.address(), target.name().to_string());
        // RFC 9110 §7.2: the port unless it is the default, an IPv6 address in brackets
        let bracketed = if server_name.contains(':') { format!("[{server_name}]") } else { server_name.clone() };
        let host_header = if port == 443 { bracketed } else { format!("{bracketed}:{port}") };
        let one = RequestOptions {
            url: None,
            path: Some(path),
            method: self.method.clone(),
            headers: Headers(self.headers.0.clone()),
            body: self.body.clone(),
            reveal: None,
        };
        let list = requests.unwrap_or(std::slice::from_ref(&one));
        let mut exchanges = Vec::with_capacity(list.len());
        for (index, r) in list.iter().enumerate() {
            let path = match (&r.url, &r.path) {
                (Some(url), _) => {
                    let (h, p, path) = parse_https_url(url)?;
                    if (h.as_str(), p) != (host.as_str(), port) {
                        let server = format!("{host}:{port}");
                        return Err(OptionsError::OtherServer { index, got: format!("{h}:{p}"), server });
                    }
                    path
                }
                (None, Some(path)) => path.clone(),
                (None, None) => return Err(OptionsError::NoPath { index }),
            };
            let keep_open = index + 1 < list.len();
            let reveal = r.reveal.as_ref().or(self.reveal.as_ref());
            exchanges.push(ExchangePlan {
                request: encode_request(r, &host_header, &path, keep_open)?,
                reveal: reveal.map_or_else(|| RevealOptions::default().to_config(), RevealOptions::to_config)?,
            });
        }
        let positive = |x: Option<u32>, name, default| match x {
            Some(0) => Err(OptionsError::NotPositive(name)),
            Some(n) => Ok(n),
            None => Ok(default),
        };
        let timeout = match self.timeout_ms {
            None => None,
            Some(ms) if ms.is_finite() && ms > 0.0 => Some(std::time::Duration::from_secs_f64(ms / 1e3)),
            Some(_) => return Err(OptionsError::NotPositive("timeoutMs")),
        };
        let ca_pem = self.ca_pem.clone().filter(|p| !p.trim().is_empty());
        if let Some(pem) = &ca_pem {
            crate::tls::RootStore::from_pem(pem).map_err(|e| OptionsError::CaPem(e.to_string()))?;
        }
        Ok(SessionPlan {
            verifier_url: v.to_string(),
            mode,
            tls_versions,
            tls13_suites,
            tls12_suites,
            server,
            server_name,
            ca_pem,
            exchanges,
            max_sent: positive(self.max_sent_bytes, "maxSentBytes", DEFAULT_MAX_SENT)?,
            max_recv: positive(self.max_recv_bytes, "maxRecvBytes", DEFAULT_MAX_RECV)?,
            timeout,
            verifier_key: self
                .verifier_key
                .as_deref()
                .map(|k| k.parse().map_err(|e: crate::attestation::KeyError| OptionsError::VerifierKey(e.to_string())))
                .transpose()?,
        })
    }
}

/// One request's bytes: `Connection: keep-alive` unless it is the last (or its headers say).
fn encode_request(r: &RequestOptions, host_header: &str, path: &str, keep_open: bool) -> Result<Vec<u8>, OptionsError> {
    let mut req = crate::http::RequestBuilder::new(r.method.as_deref().unwrap_or("GET"), host_header, path);
    for (k, val) in &r.headers.0 {
        req = req.header(k, val);
    }
    if keep_open && !r.headers.0.iter().any(|(k, _)| k.eq_ignore_ascii_case("connection")) {
        req = req.header("Connection", "keep-alive");
    }
    if let Some(body) = &r.body {
        req = req.body(body.as_bytes().to_vec());
    }
    Ok(req.build().map_err(|e| OptionsError::Request(e.to_string()))?.bytes)
}

impl RevealOptions {
    fn to_config(&self) -> Result<RevealConfig, OptionsError> {
        let commit = |spec: &Option<RevealSpec>, direction| {
            spec.as_ref().map_or(Ok(Reveal::Nothing), |s| s.to_reveal(direction))
        };
        let mut config = RevealConfig::new(self.sent.to_reveal("sent")?, self.recv.to_reveal("recv")?);
        config.commit_sent = commit(&self.commit_sent, "commitSent")?;
        config.commit_received = commit(&self.commit_recv, "commitRecv")?;
        let statements = |texts: &[String], field| {
            (texts.iter())
                .map(|s| s.parse().map_err(|e: GrammarError| OptionsError::Statement { field, error: e.to_string() }))
                .collect::<Result<Vec<_>, _>>()
        };
        config.statements = statements(&self.prove, "prove")?;
        config.request_statements = statements(&self.prove_request, "proveRequest")?;
        Ok(config)
    }
}

impl SessionPlan {
    /// Refuses a plan for another session than `prepared` (a prepared session's `notarize`
    /// may change the request and what to reveal, not whom it talks to or its limits).
    pub fn check_same_session(&self, prepared: &SessionPlan) -> Result<(), OptionsError> {
        let differs = [
            ("verifierUrl", self.verifier_url != prepared.verifier_url),
            ("mode or proxyUrl", self.mode != prepared.mode),
            ("the server (url's host and port, or server)", self.server != prepared.server),
            ("serverName", self.server_name != prepared.server_name),
            ("caPem", self.ca_pem != prepared.ca_pem),
            ("maxSentBytes", self.max_sent != prepared.max_sent),
            ("maxRecvBytes", self.max_recv != prepared.max_recv),
            ("tls.versions", self.tls_versions != prepared.tls_versions),
            (
                "tls.cipherSuites",
                self.tls13_suites != prepared.tls13_suites || self.tls12_suites != prepared.tls12_suites,
            ),
            ("verifierKey", self.verifier_key != prepared.verifier_key),
        ];
        match differs.iter().find(|(_, d)| *d) {
            Some((name, _)) => Err(OptionsError::ChangedAfterPrepare(name)),
            None => Ok(()),
        }
    }

    /// What `prepare` sizes the session for: a request of up to maxSentBytes, revealed as the
    /// options say (the default hides a header, so the request takes the ZK path).
    pub fn sizing(&self) -> crate::protocol::prover::Sizing {
        // a request with statements hides their values
        let whole =
            (self.exchanges.iter()).all(|x| x.reveal.sent == Reveal::All && x.reveal.request_statements.is_empty());
        // which of a request not yet written is hidden is not known (see `Sizing::new`)
        crate::protocol::prover::Sizing {
            request_len: self.max_sent as usize,
            request_whole: whole,
            request_hidden: 0,
            ..crate::protocol::prover::Sizing::of_exchanges(&self.exchanges)
        }
    }
}

fn is_ws_url(u: &str) -> bool {
    (u.starts_with("ws://") || u.starts_with("wss://")) && u.len() > "wss://".len()
}

/// `https://host[:port][/path][?query][#fragment]` → (host, port, path with query). IPv6
/// hosts come bracketed in the URL and bare here.
fn parse_https_url(url: &str) -> Result<(String, u16, String), OptionsError> {
    let bad = || OptionsError::Url(url.to_string());
    let rest = url.trim().strip_prefix("https://").ok_or_else(bad)?;
    let rest = rest.split('#').next().unwrap_or("");
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    if authority.contains('@') {
        return Err(bad());
    }
    let (host, port) = if authority.ends_with(']') || !authority.contains(':') {
        (authority.to_string(), 443)
    } else {
        split_host_port(authority).ok_or_else(bad)?
    };
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    if host.is_empty() || host.contains(['[', ']', ' ']) {
        return Err(bad());
    }
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    Ok((host.to_ascii_lowercase(), port, path))
}

/// A failure as the API reports it: a stable [`code`](ApiError::code) and a readable message.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error("cannot reach the verifier: {0}")]
    VerifierUnreachable(crate::transport::TransportError),
    #[error(transparent)]
    Prover(#[from] crate::protocol::ProverError),
    #[error("aborted by the caller")]
    Aborted,
    #[error("the session took longer than timeoutMs = {0} ms")]
    Timeout(f64),
    /// A prepared session notarizes once; it is used up, closed, or failed.
    #[error("this prepared session was already used, closed or failed: prepare another")]
    SessionClosed,
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// The stable `code` string JS sees (documented in the package's `index.d.ts`).
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Options(OptionsError::Target(crate::protocol::target::TargetError::NameMismatch { .. })) => {
                "SERVER_NAME_MISMATCH"
            }
            ApiError::Options(_) => "BAD_OPTIONS",
            ApiError::VerifierUnreachable(_) => "VERIFIER_UNREACHABLE",
            ApiError::Prover(e) => e.code(),
            ApiError::Aborted => "ABORTED",
            ApiError::Timeout(_) => "TIMEOUT",
            ApiError::SessionClosed => "SESSION_CLOSED",
            ApiError::Internal(_) => "INTERNAL",
        }
    }
}

/// `notarize` resolves to this: what the verifier verified, as a page can use it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotarizeResult {
    /// `"proxy"` or `"mpc"`.
    pub mode: &'static str,
    /// The name the server certificate was validated for, and the address the verifier
    /// dialed (proxy mode) or the prover's proxy did (MPC mode: the port is not certified).
    pub server_name: String,
    pub server: String,
    /// The ClientHello's SNI (none when the name is an IP address).
    pub sni: Option<String>,
    /// Unix seconds when the verifier connected to the server.
    pub connection_time: u64,
    /// The TLS version (`"1.2"`, `"1.3"`), suite and key-exchange group the server chose.
    pub tls: TlsResult,
    pub sent: DirectionResult,
    pub recv: DirectionResult,
    /// The requests in the order sent, each with its response: where each is in `sent` and
    /// `recv`, the request line, the response status and whether the response is complete by
    /// its own framing (`null`: that part was hidden).
    pub exchanges: Vec<ExchangeResult>,
    /// Hex SHA-256 commitments the verifier holds (none unless requested).
    pub commitments: Vec<String>,
    /// The statements about hidden values the verifier verified (none unless requested).
    pub statements: Vec<StatementResult>,
    pub timings: Timings,
    pub bytes: Traffic,
    /// The verifier's signed attestation with the secrets to present it later
    /// (`{attestation, verifierKey, secrets}`, as `tlsproof prove --attestation-out` writes
    /// it); `null` when the verifier does not sign.
    pub attestation: Option<crate::protocol::disclose::attest::AttestedSession>,
}

/// A statement the verifier verified about a hidden value of a response.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementResult {
    /// The exchange (from 1) whose request (`"sent"`) or response (`"received"`) holds the
    /// value.
    pub exchange: u64,
    pub direction: &'static str,
    /// The statement as the grammar writes it, e.g. `account.balance.amount >= 1000`.
    pub statement: String,
    /// Where the hidden value is in `sent` or `recv` (its length is public).
    pub value: Vec<ByteRange>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TlsResult {
    pub version: &'static str,
    pub cipher_suite: String,
    pub group: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExchangeResult {
    pub request: ByteRange,
    pub request_line: Option<String>,
    /// `null` when no byte answered the request.
    pub response: Option<ByteRange>,
    pub status: Option<u16>,
    pub response_complete: Option<bool>,
}

/// One direction as the verifier saw it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectionResult {
    /// Plaintext length; every byte's existence is proven.
    pub length: u64,
    /// The plaintext with hidden bytes zeroed (a `Uint8Array` in JS).
    #[serde(serialize_with = "as_bytes")]
    pub bytes: Vec<u8>,
    pub revealed: Vec<ByteRange>,
    pub hidden: Vec<ByteRange>,
    /// `"fast"`: the direction was fully revealed and its key opened; `"zk"`: proven in ZK.
    pub path: &'static str,
    /// Revealed bytes as text (escaped: [`VerifiedDirection::printable`]), hidden ones as `█`.
    pub printable: String,
    /// How the direction ended: `"close_notify"`, `"fatal_alert"` or `"open"` (no ending
    /// alert in the proven transcript: it may have been cut off).
    pub ending: &'static str,
    /// Its TLS alerts as [level, description].
    pub alerts: Vec<[u8; 2]>,
    /// TLS 1.3: each record after the handshake, as proven (empty for TLS 1.2).
    pub records: Vec<RecordResult>,
}

/// A TLS 1.3 record's plaintext: content, the inner type byte, zero padding.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordResult {
    pub content_length: usize,
    pub content_type: u8,
    pub padding: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timings {
    pub preprocess_ms: f64,
    pub online_ms: f64,
    pub prove_ms: f64,
    /// Wall time of the whole call, as the prover measured it.
    pub total_ms: f64,
}

/// Session traffic as the verifier counted it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Traffic {
    pub prover_to_verifier: u64,
    pub verifier_to_prover: u64,
}

fn as_bytes<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(v)
}

impl DirectionResult {
    fn from_verified(d: &VerifiedDirection) -> Self {
        let revealed: Vec<ByteRange> = d.revealed.iter().map(|r| ByteRange { start: r.start, end: r.end }).collect();
        let mut hidden = Vec::new();
        let mut at = 0;
        for r in &d.revealed {
            if r.start > at {
                hidden.push(ByteRange { start: at, end: r.start });
            }
            at = r.end;
        }
        if d.len > at {
            hidden.push(ByteRange { start: at, end: d.len });
        }
        DirectionResult {
            length: d.len,
            bytes: d.bytes.clone(),
            revealed,
            hidden,
            path: if d.fast_path { "fast" } else { "zk" },
            printable: d.printable(),
            ending: d.ending().as_str(),
            alerts: d.alerts.clone(),
            records: d
                .records
                .iter()
                .map(|r| RecordResult {
                    content_length: r.content_len,
                    content_type: r.content_type,
                    padding: r.padding,
                })
                .collect(),
        }
    }
}

impl NotarizeResult {
    pub fn new(out: &ProverOutput, total_ms: f64) -> Self {
        let v = &out.verified;
        let s = &v.stats;
        let hex = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        NotarizeResult {
            mode: v.mode.as_str(),
            server_name: v.server_name.clone(),
            server: v.server.clone(),
            sni: v.sni.clone(),
            connection_time: v.connection_time,
            tls: TlsResult {
                version: v.tls.version.as_str(),
                cipher_suite: v.tls.cipher_suite.clone(),
                group: v.tls.group.clone(),
            },
            sent: DirectionResult::from_verified(&v.sent),
            recv: DirectionResult::from_verified(&v.received),
            exchanges: v
                .exchanges
                .iter()
                .map(|x| ExchangeResult {
                    request: ByteRange { start: x.request.start, end: x.request.end },
                    request_line: x.request_line.clone(),
                    response: x.response.as_ref().map(|r| ByteRange { start: r.start, end: r.end }),
                    status: x.status,
                    response_complete: x.response_complete,
                })
                .collect(),
            commitments: v.commitments.iter().map(|c| hex(&c.digest)).collect(),
            statements: (v.statements.iter())
                .map(|s| StatementResult {
                    exchange: s.exchange,
                    direction: s.direction.as_str(),
                    statement: s.statement.to_string(),
                    value: s.value.iter().map(|r| ByteRange { start: r.start, end: r.end }).collect(),
                })
                .collect(),
            timings: Timings {
                preprocess_ms: s.preprocess.millis,
                online_ms: s.online.millis,
                prove_ms: s.prove.millis,
                total_ms,
            },
            bytes: Traffic { prover_to_verifier: s.bytes().0, verifier_to_prover: s.bytes().1 },
            attestation: out.attestation.clone(),
        }
    }
}

/// The options object as JSON text (the Node binding's way in, `js/node.js`), its keys
/// checked as the browser binding checks them: a misspelt option is refused, not ignored.
pub fn plan_from_json(json: &str) -> Result<SessionPlan, ApiError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| OptionsError::Shape(format!("options are not JSON: {e}")))?;
    let object = |v: &serde_json::Value| v.as_object().cloned();
    let Some(options) = object(&value) else {
        return Err(OptionsError::Shape("notarize options must be an object".into()).into());
    };
    check_json_keys(&options, OPTION_FIELDS, "")?;
    for (field, fields, prefix) in [("reveal", REVEAL_FIELDS, "reveal."), ("tls", TLS_FIELDS, "tls.")] {
        if let Some(inner) = options.get(field).and_then(object) {
            check_json_keys(&inner, fields, prefix)?;
        }
    }
    if let Some(list) = options.get("requests").and_then(|r| r.as_array()) {
        for (i, request) in list.iter().enumerate() {
            if let Some(request) = object(request) {
                check_json_keys(&request, REQUEST_FIELDS, &format!("requests[{i}]."))?;
                if let Some(reveal) = request.get("reveal").and_then(object) {
                    check_json_keys(&reveal, REVEAL_FIELDS, &format!("requests[{i}].reveal."))?;
                }
            }
        }
    }
    let opts: NotarizeOptions = serde_json::from_value(value).map_err(|e| OptionsError::Shape(e.to_string()))?;
    Ok(opts.plan()?)
}

fn check_json_keys(
    object: &serde_json::Map<String, serde_json::Value>,
    known: &[&str],
    prefix: &str,
) -> Result<(), OptionsError> {
    check_keys(object.keys(), known, prefix)
}

/// Refuses a key not in `known` (a misspelt option would otherwise be ignored); `prefix` is
/// where the object is in the options (`"reveal."`).
pub fn check_keys<K: AsRef<str>>(
    keys: impl IntoIterator<Item = K>,
    known: &[&str],
    prefix: &str,
) -> Result<(), OptionsError> {
    match keys.into_iter().find(|k| !known.contains(&k.as_ref())) {
        Some(key) => {
            Err(OptionsError::Shape(format!("unknown option {prefix}{} (known: {})", key.as_ref(), known.join(", "))))
        }
        None => Ok(()),
    }
}

impl SessionPlan {
    /// The prover's configuration for this plan, the session starting at `now_ms` (Unix
    /// milliseconds).
    pub fn prover_config(&self, now_ms: f64) -> Result<crate::protocol::ProverConfig, ApiError> {
        let roots = match &self.ca_pem {
            Some(pem) => crate::tls::RootStore::from_pem(pem).map_err(|e| OptionsError::CaPem(e.to_string()))?,
            None => crate::tls::RootStore::mozilla(),
        };
        let step = crate::protocol::prover::DEFAULT_STEP_TIMEOUT;
        Ok(crate::protocol::ProverConfig {
            server: self.server.clone(),
            server_name: self.server_name.clone(),
            roots,
            max_sent: self.max_sent,
            max_recv: self.max_recv,
            now: (now_ms / 1000.0) as u64,
            step_timeout: self.timeout.map_or(step, |t| t.min(step)),
            prg: crate::primitives::prg::PrgKind::fastest_here(),
            mode: self.mode.clone(),
            tls_versions: self.tls_versions.clone(),
            tls13_suites: self.tls13_suites.clone(),
            tls12_suites: self.tls12_suites.clone(),
        })
    }

    /// Notarizes the plan's exchanges, as both JS bindings do: the configuration (at
    /// `now_ms`, Unix milliseconds) checked, the WebSocket to the verifier (the `connect`
    /// phase), the session.
    pub async fn notarize(
        &self,
        now_ms: f64,
        progress: &impl Fn(crate::protocol::Progress),
    ) -> Result<crate::protocol::ProverOutput, ApiError> {
        let (config, socket) = self.connect(now_ms, progress).await?;
        let exchanges = self.exchanges.clone();
        Ok(crate::protocol::prover::notarize_exchanges(socket, config, exchanges, progress).await?)
    }

    /// Opens the plan's session and prepares what does not depend on the request
    /// (`prepare(options)` in index.d.ts).
    pub async fn prepare(
        &self,
        now_ms: f64,
        progress: &impl Fn(crate::protocol::Progress),
    ) -> Result<crate::protocol::prover::PreparedSession, ApiError> {
        let (config, socket) = self.connect(now_ms, progress).await?;
        Ok(crate::protocol::prover::prepare(socket, config, self.sizing(), progress).await?)
    }

    async fn connect(
        &self,
        now_ms: f64,
        progress: &impl Fn(crate::protocol::Progress),
    ) -> Result<(crate::protocol::ProverConfig, crate::transport::WsSocket), ApiError> {
        let config = self.prover_config(now_ms)?;
        config.check()?;
        progress(crate::protocol::Progress { phase: crate::protocol::Phase::Connect, fraction: 0.0 });
        let socket =
            crate::transport::WsSocket::connect(&self.verifier_url).await.map_err(ApiError::VerifierUnreachable)?;
        Ok((config, socket))
    }

    /// The verdict as the result object, the attestation checked against the pinned
    /// `verifierKey` first; `elapsed_ms` is the call's wall time.
    pub fn result(&self, out: &crate::protocol::ProverOutput, elapsed_ms: f64) -> Result<NotarizeResult, ApiError> {
        if let Some(key) = &self.verifier_key {
            crate::protocol::disclose::attest::require_key(out.attestation.as_ref(), key)
                .map_err(crate::protocol::ProverError::from)?;
        }
        Ok(NotarizeResult::new(out, elapsed_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(json: serde_json::Value) -> Result<NotarizeOptions, serde_json::Error> {
        serde_json::from_value(json)
    }

    /// The Node binding's way in: the options as JSON, every key checked as the browser
    /// binding checks them (top level, `reveal`, `tls`, each request and its `reveal`), the
    /// shape refused by name.
    #[test]
    fn options_as_json_are_checked_as_the_browsers_are() {
        let plan = plan_from_json(r#"{"verifierUrl":"ws://v/","url":"https://h/x","tls":{"versions":["1.3"]}}"#)
            .expect("valid options");
        assert_eq!(plan.tls_versions, [crate::protocol::messages::TlsVersion::Tls13]);
        let head = r#"{"verifierUrl":"ws://v/","server":"h:443","#;
        for (bad, named) in [
            (format!(r#"{head}"path":"/","revael":{{}}}}"#), "unknown option revael"),
            (format!(r#"{head}"path":"/","reveal":{{"rcev":"all"}}}}"#), "unknown option reveal.rcev"),
            (format!(r#"{head}"path":"/","tls":{{"version":"1.3"}}}}"#), "unknown option tls.version"),
            (format!(r#"{head}"requests":[{{"path":"/","mehtod":"GET"}}]}}"#), "unknown option requests[0].mehtod"),
            (
                format!(r#"{head}"requests":[{{"path":"/","reveal":{{"x":1}}}}]}}"#),
                "unknown option requests[0].reveal.x",
            ),
            ("[]".into(), "must be an object"),
            ("{".into(), "not JSON"),
            (format!(r#"{head}"path":7}}"#), "invalid type"),
        ] {
            let e = plan_from_json(&bad).expect_err(&bad);
            assert_eq!(e.code(), "BAD_OPTIONS", "{bad}");
            assert!(e.to_string().contains(named), "{bad}: {e}");
        }
    }

    #[test]
    fn url_form_builds_the_request_and_defaults() {
        let o = opts(serde_json::json!({
            "verifierUrl": "ws://127.0.0.1:7047/",
            "url": "https://LocalHost:4443/json?x=1#frag",
            "serverName": "localhost",
            "headers": {"Authorization": "Bearer t", "X-A": "1"},
        }))
        .unwrap();
        let p = o.plan().unwrap();
        assert_eq!((p.server.as_str(), p.server_name.as_str()), ("localhost:4443", "localhost"));
        let req = String::from_utf8(p.exchanges[0].request.clone()).unwrap();
        assert!(
            req.starts_with("GET /json?x=1 HTTP/1.1\r\nHost: localhost:4443\r\nAuthorization: Bearer t\r\nX-A: 1\r\n"),
            "{req}"
        );
        assert_eq!(p.exchanges[0].reveal, RevealConfig::default());
        assert_eq!((p.max_sent, p.max_recv, p.timeout), (DEFAULT_MAX_SENT, DEFAULT_MAX_RECV, None));
        assert_eq!(p.mode, crate::protocol::prover::ProverMode::Proxy);
        use crate::protocol::messages::TlsVersion;
        assert_eq!(p.tls_versions, [TlsVersion::Tls12, TlsVersion::Tls13], "both, the server chooses");
    }

    #[test]
    fn tls_versions_are_known_versions_each_once_and_1_3_in_proxy_mode_only() {
        use crate::protocol::messages::TlsVersion;
        let with = |tls: serde_json::Value, extra: serde_json::Value| {
            let mut o = serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "tls": tls});
            for (k, v) in extra.as_object().unwrap() {
                o[k] = v.clone();
            }
            opts(o).map_err(|e| e.to_string())?.plan().map(|p| p.tls_versions).map_err(|e| e.to_string())
        };
        let none = serde_json::json!({});
        assert_eq!(with(serde_json::json!({"versions": ["1.3"]}), none.clone()), Ok(vec![TlsVersion::Tls13]));
        assert_eq!(with(serde_json::json!({"versions": ["1.2"]}), none.clone()), Ok(vec![TlsVersion::Tls12]));
        assert_eq!(
            with(serde_json::json!({"versions": ["1.3", "1.2"]}), none.clone()),
            Ok(vec![TlsVersion::Tls13, TlsVersion::Tls12])
        );
        let both = Ok(vec![TlsVersion::Tls12, TlsVersion::Tls13]);
        assert_eq!(with(serde_json::json!({}), none.clone()), both);
        assert_eq!(with(serde_json::json!(null), none.clone()), both, "tls: undefined");
        for bad in [
            serde_json::json!({"versions": []}),
            serde_json::json!({"versions": ["1.1"]}),
            serde_json::json!({"versions": ["1.3", "1.3"]}),
            serde_json::json!({"versions": ["1.2", "1.3", "1.2"]}),
        ] {
            let e = with(bad.clone(), none.clone()).unwrap_err();
            assert!(e.contains("tls.versions must list"), "{bad}: {e}");
        }
        assert!(with(serde_json::json!({"version": "1.3"}), none.clone()).unwrap_err().contains("unknown field"));
        let mpc = serde_json::json!({"mode": "mpc", "proxyUrl": "ws://p/"});
        assert_eq!(with(serde_json::json!({"versions": ["1.3"]}), mpc.clone()), Ok(vec![TlsVersion::Tls13]));
        assert_eq!(with(serde_json::json!({"versions": ["1.2"]}), mpc.clone()), Ok(vec![TlsVersion::Tls12]));
        assert_eq!(with(serde_json::json!({}), mpc), both, "MPC mode's default: both, the server chooses");
    }

    #[test]
    fn cipher_suites_are_tls13_suites_each_once_and_need_tls13() {
        let with = |tls: serde_json::Value| {
            let o = serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "tls": tls});
            opts(o).map_err(|e| e.to_string())?.plan().map(|p| p.tls13_suites).map_err(|e| e.to_string())
        };
        assert_eq!(with(serde_json::json!({"versions": ["1.3"]})), Ok(Suite13::PROVER_DEFAULT.to_vec()));
        assert_eq!(
            with(
                serde_json::json!({"versions": ["1.3"], "cipherSuites": ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"]})
            ),
            Ok(vec![Suite13::Aes256GcmSha384, Suite13::Aes128GcmSha256])
        );
        for bad in [
            serde_json::json!([]),
            serde_json::json!(["TLS_AES_128_CCM_SHA256"]),
            serde_json::json!(["ECDHE-ECDSA-AES128-GCM-SHA256"]),
            serde_json::json!(["TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"]),
        ] {
            let e = with(serde_json::json!({"versions": ["1.2", "1.3"], "cipherSuites": bad})).unwrap_err();
            assert!(e.contains("tls.cipherSuites must list TLS 1.3 suites"), "{bad}: {e}");
        }
        assert_eq!(
            with(serde_json::json!({"versions": ["1.2"], "cipherSuites": ["TLS_AES_256_GCM_SHA384"]})),
            Err(OptionsError::CipherSuitesWithoutTls13.to_string())
        );
        let by_default = with(serde_json::json!({"cipherSuites": ["TLS_AES_256_GCM_SHA384"]}));
        assert_eq!(by_default, Ok(vec![Suite13::Aes256GcmSha384]), "proxy mode offers TLS 1.3 by default");
        // TLS 1.2 names choose the TLS 1.2 offer, each name telling its version
        use crate::tls::CipherSuite;
        let both = |tls: serde_json::Value| {
            let o = serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "tls": tls});
            opts(o)
                .map_err(|e| e.to_string())?
                .plan()
                .map(|p| (p.tls13_suites, p.tls12_suites))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            both(serde_json::json!({"cipherSuites": [
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
            ]})),
            Ok((
                vec![Suite13::Aes256GcmSha384],
                vec![CipherSuite::EcdheRsaChaCha20Poly1305Sha256, CipherSuite::EcdheEcdsaAes256GcmSha384]
            ))
        );
        assert_eq!(
            both(serde_json::json!({"versions": ["1.2"], "cipherSuites": ["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"]})),
            Ok((Suite13::PROVER_DEFAULT.to_vec(), vec![CipherSuite::EcdheRsaAes256GcmSha384]))
        );
        assert_eq!(both(serde_json::json!({})), Ok((Suite13::PROVER_DEFAULT.to_vec(), CipherSuite::ALL.to_vec())));
        assert_eq!(
            both(serde_json::json!({"versions": ["1.3"], "cipherSuites": ["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"]})),
            Err(OptionsError::CipherSuitesWithoutTls12.to_string())
        );
        let twice = both(serde_json::json!({"cipherSuites": [
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
        ]}));
        assert!(twice.unwrap_err().contains("each once"));
        let mpc = serde_json::json!({
            "verifierUrl": "ws://v/", "url": "https://h/", "mode": "mpc", "proxyUrl": "ws://p/", "tls": {}
        });
        let plan = opts(mpc).unwrap().plan().unwrap();
        assert_eq!(plan.tls12_suites, CipherSuite::AES_128.to_vec(), "MPC mode's default");
        assert!(with(serde_json::json!({"versions": ["1.3"], "ciphersuites": []}))
            .unwrap_err()
            .contains("unknown field"));
    }

    #[test]
    fn mpc_mode_needs_a_proxy_url_and_proxy_mode_refuses_one() {
        use crate::protocol::prover::ProverMode;
        let with = |extra: serde_json::Value| {
            let mut o = serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/"});
            o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            opts(o).unwrap().plan().map(|p| p.mode)
        };
        assert_eq!(
            with(serde_json::json!({"mode": "mpc", "proxyUrl": "ws://p:1/"})),
            Ok(ProverMode::Mpc { proxy_url: "ws://p:1/".into() })
        );
        assert_eq!(with(serde_json::json!({"mode": "proxy"})), Ok(ProverMode::Proxy));
        assert_eq!(with(serde_json::json!({"mode": "mpc"})), Err(OptionsError::NoProxyUrl));
        assert_eq!(
            with(serde_json::json!({"mode": "mpc", "proxyUrl": "http://p/"})),
            Err(OptionsError::ProxyUrl("http://p/".into()))
        );
        assert_eq!(with(serde_json::json!({"proxyUrl": "ws://p/"})), Err(OptionsError::ProxyUrlWithoutMpc));
        assert_eq!(with(serde_json::json!({"mode": "MPC"})), Err(OptionsError::Mode("MPC".into())));
    }

    #[test]
    fn server_form_post_with_body_and_every_reveal_shape() {
        let o = opts(serde_json::json!({
            "verifierUrl": "wss://v.example/",
            "server": "[::1]:8443", "path": "/api", "method": "POST", "body": "{\"a\":1}",
            "headers": [["Cookie", "id=1"]],
            "reveal": {"sent": [{"start": 0, "end": 4}], "recv": {"jsonFields": ["a"]}},
            "maxSentBytes": 100, "timeoutMs": 1500,
        }))
        .unwrap();
        let p = o.plan().unwrap();
        assert_eq!((p.server.as_str(), p.server_name.as_str()), ("[::1]:8443", "::1"));
        assert!(String::from_utf8(p.exchanges[0].request.clone())
            .unwrap()
            .ends_with("Content-Length: 7\r\n\r\n{\"a\":1}"));
        assert_eq!(
            p.exchanges[0].reveal,
            RevealConfig::new(Reveal::Ranges(vec![0..4]), Reveal::JsonFields(vec!["a".into()]))
        );
        assert_eq!((p.max_sent, p.timeout), (100, Some(std::time::Duration::from_millis(1500))));
        for (spec, want) in [
            (serde_json::json!("none"), Reveal::Nothing),
            (serde_json::json!("body"), Reveal::HttpBody),
            (serde_json::json!({"redactHeaders": ["x"]}), Reveal::AllExceptHeaders(vec!["x".into()])),
        ] {
            let o = opts(serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "reveal": {"recv": spec}}))
                .unwrap();
            assert_eq!(o.plan().unwrap().exchanges[0].reveal.received, want);
        }
    }

    #[test]
    fn bad_options_are_refused_with_a_reason() {
        let base = |extra: serde_json::Value| {
            let mut v = serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/"});
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            v
        };
        // Shape errors (serde): unknown fields, wrong types, unknown reveal shapes.
        for bad in [
            serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "revael": {}}),
            base(serde_json::json!({"headers": "Authorization: x"})),
            base(serde_json::json!({"reveal": {"recv": 5}})),
            base(serde_json::json!({"reveal": {"recv": {"redactHeader": []}}})),
            base(serde_json::json!({"maxSentBytes": -1})),
            serde_json::json!({"url": "https://h/"}),
        ] {
            assert!(opts(bad.clone()).is_err(), "{bad}");
        }
        // Semantic errors.
        let cases = [
            (serde_json::json!({"verifierUrl": "http://v/"}), "verifierUrl"),
            (serde_json::json!({"url": "http://h/"}), "url must be https"),
            (serde_json::json!({"url": "https://user@h/"}), "url must be https"),
            (serde_json::json!({"url": "https://h:99999/"}), "url must be https"),
            (serde_json::json!({"server": "h:1"}), "not both"),
            (serde_json::json!({"reveal": {"recv": "everything"}}), "reveal.recv"),
            (serde_json::json!({"reveal": {"sent": [{"start": 5, "end": 5}]}}), "reveal.sent: range 5..5"),
            (serde_json::json!({"maxRecvBytes": 0}), "maxRecvBytes"),
            (serde_json::json!({"timeoutMs": 0}), "timeoutMs"),
            (serde_json::json!({"method": "G T"}), "cannot be encoded"),
            (serde_json::json!({"headers": {"X": "a\nb"}}), "cannot be encoded"),
            (serde_json::json!({"caPem": "not a pem"}), "caPem"),
            (serde_json::json!({"reveal": {"prove": ["a >= 1e3"]}}), "reveal.prove: a: \"1e3\" is not a number"),
            (serde_json::json!({"reveal": {"prove": ["a ~ 1"]}}), "reveal.prove: \"a ~ 1\" is not a statement"),
        ];
        for (extra, needle) in cases {
            let err = opts(base(extra.clone())).unwrap().plan().err().unwrap_or_else(|| panic!("accepted {extra}"));
            assert!(err.to_string().contains(needle), "{extra}: {err}");
        }
        let none = opts(serde_json::json!({"verifierUrl": "ws://v/"})).unwrap().plan().unwrap_err();
        assert_eq!(none, OptionsError::NoTarget);
        // The verifier certifies the host it connects to, so another name has its own code.
        for (extra, code) in [
            (serde_json::json!({"url": "https://127.0.0.1:4443/", "serverName": "localhost"}), "SERVER_NAME_MISMATCH"),
            (serde_json::json!({"serverName": "bank.example"}), "SERVER_NAME_MISMATCH"),
            (serde_json::json!({"serverName": "not a name"}), "BAD_OPTIONS"),
        ] {
            let err = opts(base(extra.clone())).unwrap().plan().unwrap_err();
            assert_eq!(ApiError::Options(err).code(), code, "{extra}");
        }
    }

    /// `reveal.prove` takes the CLI's grammar; the statements reach the reveal config.
    #[test]
    fn statements_are_read_with_the_clis_grammar() {
        let plan = |reveal: serde_json::Value| {
            opts(serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "reveal": reveal})).unwrap().plan()
        };
        let p =
            plan(serde_json::json!({"prove": ["account.balance.amount >= 1000", "c in {\"DE\", \"FR\"}"]})).unwrap();
        let texts: Vec<String> = p.exchanges[0].reveal.statements.iter().map(|s| s.to_string()).collect();
        assert_eq!(texts, ["account.balance.amount >= 1000", "c in {\"DE\", \"FR\"}"]);
        assert_eq!(p.exchanges[0].reveal.received, Reveal::All, "the value is hidden when the session places it");
        assert!(plan(serde_json::json!({})).unwrap().exchanges[0].reveal.statements.is_empty());
        let p = plan(serde_json::json!({"sent": "all", "proveRequest": ["transfer.amount <= 500"]})).unwrap();
        assert!(!p.sizing().request_whole, "a stated request value is hidden");
        let texts: Vec<String> = p.exchanges[0].reveal.request_statements.iter().map(|s| s.to_string()).collect();
        assert_eq!((texts, p.exchanges[0].reveal.statements.len()), (vec!["transfer.amount <= 500".to_string()], 0));
        let e = plan(serde_json::json!({"proveRequest": ["a >= 1e3"]})).unwrap_err().to_string();
        assert!(e.starts_with("reveal.proveRequest: "), "{e}");
    }

    #[test]
    fn field_lists_match_the_structs() {
        let base = serde_json::json!({"verifierUrl": "ws://v/"});
        for f in OPTION_FIELDS {
            let mut v = base.clone();
            v[*f] = serde_json::json!(null);
            if let Err(e) = opts(v) {
                assert!(!e.to_string().contains("unknown field"), "{f}: {e}");
            }
        }
        let unknown = opts(serde_json::json!({"verifierUrl": "ws://v/", "x": 1})).unwrap_err().to_string();
        let listed = unknown.split("expected one of ").nth(1).unwrap_or_default().matches('`').count() / 2;
        assert_eq!(listed, OPTION_FIELDS.len(), "{unknown}");
        for f in REVEAL_FIELDS {
            let value = if f.starts_with("prove") { serde_json::json!([]) } else { serde_json::json!("all") };
            serde_json::from_value::<RevealOptions>(serde_json::json!({*f: value})).unwrap();
        }
        let unknown = serde_json::from_value::<RevealOptions>(serde_json::json!({"x": 1})).unwrap_err().to_string();
        assert_eq!(unknown.matches('`').count() / 2 - 1, REVEAL_FIELDS.len(), "{unknown}");
        for f in TLS_FIELDS {
            serde_json::from_value::<TlsOptions>(serde_json::json!({*f: null})).unwrap();
        }
        let unknown = serde_json::from_value::<TlsOptions>(serde_json::json!({"x": 1})).unwrap_err().to_string();
        assert!(unknown.contains("expected `versions`"), "{unknown}");
    }

    #[test]
    fn commitments_are_requested_per_direction_and_default_to_none() {
        let plan = |reveal: serde_json::Value| {
            opts(serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "reveal": reveal})).unwrap().plan()
        };
        let p = plan(serde_json::json!({"recv": "body", "commitRecv": {"jsonFields": ["balance"]}, "commitSent": [{"start": 3, "end": 5}]})).unwrap();
        assert_eq!(p.exchanges[0].reveal.commit_received, Reveal::JsonFields(vec!["balance".into()]));
        assert_eq!(p.exchanges[0].reveal.commit_sent, Reveal::Ranges(vec![3..5]));
        let p = plan(serde_json::json!({})).unwrap();
        assert_eq!(
            (p.exchanges[0].reveal.commit_sent.clone(), p.exchanges[0].reveal.commit_received.clone()),
            (Reveal::Nothing, Reveal::Nothing)
        );
        let e = plan(serde_json::json!({"commitRecv": "everything"})).unwrap_err();
        assert!(e.to_string().starts_with("reveal.commitRecv must be"), "{e}");
    }

    /// A prepared session's notarize may change the request and the reveal, nothing that
    /// names the session; prepare sizes for maxSentBytes and the reveal it was given.
    #[test]
    fn a_prepared_session_keeps_its_peer_target_and_limits() {
        let base = serde_json::json!({"verifierUrl": "ws://v/", "mode": "mpc", "proxyUrl": "ws://p/", "url": "https://h:8443/a", "maxSentBytes": 1024});
        let with = |extra: serde_json::Value| {
            let mut o = base.clone();
            o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            opts(o).unwrap().plan().unwrap()
        };
        let prepared = with(serde_json::json!({}));
        let sizing = prepared.sizing();
        assert_eq!(
            (sizing.request_len, sizing.request_whole, sizing.response),
            (1024, false, crate::protocol::prover::RevealExtent::Whole)
        );
        let all = with(serde_json::json!({"reveal": {"sent": "all", "recv": "body"}})).sizing();
        assert!(all.request_whole && all.response == crate::protocol::prover::RevealExtent::Partly);
        for same in [
            serde_json::json!({"url": "https://h:8443/other", "method": "POST", "body": "x", "headers": {"Authorization": "t"}}),
            serde_json::json!({"reveal": {"recv": "body"}, "timeoutMs": 5}),
        ] {
            assert_eq!(with(same.clone()).check_same_session(&prepared), Ok(()), "{same}");
        }
        for (other, name) in [
            (serde_json::json!({"verifierUrl": "ws://w/"}), "verifierUrl"),
            (serde_json::json!({"proxyUrl": "ws://q/"}), "mode or proxyUrl"),
            (serde_json::json!({"url": "https://h:443/a"}), "the server (url's host and port, or server)"),
            (serde_json::json!({"url": "https://h2:8443/a"}), "the server (url's host and port, or server)"),
            (serde_json::json!({"maxSentBytes": 1025}), "maxSentBytes"),
            (serde_json::json!({"maxRecvBytes": 1}), "maxRecvBytes"),
            (serde_json::json!({"verifierKey": "secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf"}), "verifierKey"),
        ] {
            assert_eq!(
                with(other.clone()).check_same_session(&prepared),
                Err(OptionsError::ChangedAfterPrepare(name)),
                "{other}"
            );
        }
    }

    #[test]
    fn a_verifier_key_is_parsed_up_front() {
        let plan = |key: &str| {
            opts(serde_json::json!({"verifierUrl": "ws://v/", "url": "https://h/", "verifierKey": key})).unwrap().plan()
        };
        let key = "secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf";
        assert_eq!(plan(key).unwrap().verifier_key.map(|k| k.to_string()).as_deref(), Some(key));
        assert!(matches!(plan("secp256k1:0x7E5F"), Err(OptionsError::VerifierKey(_))));
    }

    #[test]
    fn result_lists_hidden_ranges_and_the_path() {
        let d = VerifiedDirection {
            len: 10,
            bytes: b"ab\0\0\0fghi\0".to_vec(),
            revealed: vec![0..2, 5..9],
            fast_path: false,
            alerts: vec![[1, 0]],
            records: vec![],
        };
        let r = DirectionResult::from_verified(&d);
        assert_eq!(r.hidden, vec![ByteRange { start: 2, end: 5 }, ByteRange { start: 9, end: 10 }]);
        assert_eq!((r.path, r.printable.as_str(), r.ending), ("zk", "ab███fghi█", "close_notify"));
        let all = VerifiedDirection {
            len: 2,
            bytes: b"ok".to_vec(),
            revealed: vec![0..2],
            fast_path: true,
            alerts: vec![],
            records: vec![],
        };
        let r = DirectionResult::from_verified(&all);
        assert!(r.hidden.is_empty() && r.path == "fast" && r.ending == "open");
    }
}
