//! The test bed of the end-to-end session tests that share it: the fixture, a WebSocket-to-TCP
//! proxy for MPC mode and a verifier server, all on 127.0.0.1, and a prover configuration for
//! them.

use tlsproof::attestation::SigningKey;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::protocol::messages::TlsVersion;
use tlsproof::protocol::prover::{notarize_exchanges, ExchangePlan, ProverMode};
use tlsproof::protocol::server::{SessionReport, VerifierServer};
use tlsproof::protocol::{ProverConfig, ProverError, ProverOutput, VerifierConfig};
use tlsproof::proxy::{AllowList, ProxyConfig, ProxyServer};
use tlsproof::tls::RootStore;
use tlsproof::transport::WsSocket;
use tokio::sync::mpsc::UnboundedReceiver;

pub struct Env {
    /// `localhost:PORT` of the fixture.
    pub server: String,
    pub ca_pem: String,
    pub verifier: String,
    pub proxy: String,
    pub reports: UnboundedReceiver<SessionReport>,
}

/// The test bed with a verifier that signs its verdicts with `signing_key`, if given.
pub async fn env(signing_key: Option<std::sync::Arc<SigningKey>>) -> Env {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let server = format!("localhost:{}", fixture.local_addr().unwrap().port());
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    let allow = AllowList::parse(&server).unwrap();
    let proxy =
        ProxyServer::bind("127.0.0.1:0".parse().unwrap(), ProxyConfig { allow: allow.clone(), ..Default::default() })
            .await
            .unwrap();
    let proxy_url = format!("ws://{}/", proxy.local_addr().unwrap());
    tokio::spawn(proxy.run());
    let mut config = VerifierConfig::new(allow, RootStore::from_pem(&ca_pem).unwrap());
    config.signing_key = signing_key;
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = format!("ws://{}/", vserver.local_addr().unwrap());
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    Env { server, ca_pem, verifier, proxy: proxy_url, reports }
}

/// A prover for the fixture in `mode`, offering `version` only.
pub fn config(env: &Env, mode: ProverMode, version: TlsVersion) -> ProverConfig {
    ProverConfig { mode, tls_versions: vec![version], ..prover_config(&env.server, &env.ca_pem) }
}

/// The prover's defaults for `server` (`localhost:PORT`, its certificate under `ca_pem`):
/// proxy mode, every suite, 4 KB up and 16 KB down.
pub fn prover_config(server: &str, ca_pem: &str) -> ProverConfig {
    ProverConfig {
        server_name: "localhost".into(),
        server: server.into(),
        roots: RootStore::from_pem(ca_pem).unwrap(),
        max_sent: 4096,
        max_recv: 16 * 1024,
        now: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs(),
        step_timeout: tlsproof::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: tlsproof::primitives::prg::PrgKind::fastest_here(),
        mode: Default::default(),
        tls_versions: vec![Default::default()],
        tls13_suites: tlsproof::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        tls12_suites: tlsproof::tls::CipherSuite::ALL.to_vec(),
    }
}

/// Proxy mode over TLS 1.2 and 1.3, and MPC mode (TLS 1.2).
pub fn modes_and_versions(env: &Env) -> [(ProverMode, TlsVersion); 3] {
    [
        (ProverMode::Proxy, TlsVersion::Tls12),
        (ProverMode::Proxy, TlsVersion::Tls13),
        (ProverMode::Mpc { proxy_url: env.proxy.clone() }, TlsVersion::Tls12),
    ]
}

/// One session of `plans` with the bed's verifier.
pub async fn run(env: &Env, config: ProverConfig, plans: Vec<ExchangePlan>) -> Result<ProverOutput, ProverError> {
    let socket = WsSocket::connect(&env.verifier).await.unwrap();
    notarize_exchanges(socket, config, plans, |_| {}).await
}
