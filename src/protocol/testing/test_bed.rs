//! Whole sessions in one test: the fixture server (and in MPC mode the WebSocket-to-TCP proxy)
//! on 127.0.0.1, `verifier::verify_session` and `prover::notarize` over an in-memory socket
//! pair, on the test's own thread (so that test-only hooks kept per thread reach both sides).

use crate::fixture::{FixtureServer, KeyType};
use crate::protocol::disclose::output::VerifierOutput;
use crate::protocol::disclose::reveal::RevealConfig;
use crate::protocol::messages::TlsVersion;
use crate::protocol::prover::{notarize, ProverConfig, ProverError, ProverMode, ProverOutput};
use crate::protocol::verifier::{verify_session, VerifierConfig, VerifierError};
use crate::proxy::AllowList;
use crate::tls::RootStore;

/// The servers a session talks to.
pub(super) struct Bed {
    /// `localhost:PORT` of the fixture server.
    server: String,
    ca_pem: String,
    /// MPC mode's `ws://…/` proxy, if started.
    proxy_url: Option<String>,
}

impl Bed {
    /// The fixture server, and the proxy when `mpc`.
    pub(super) async fn start(mpc: bool) -> Bed {
        let fixture =
            FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
        let server = format!("localhost:{}", fixture.local_addr().expect("addr").port());
        let ca_pem = fixture.certs.ca_pem.clone();
        tokio::spawn(fixture.run());
        let mut proxy_url = None;
        if mpc {
            let config =
                crate::proxy::ProxyConfig { allow: AllowList::parse(&server).expect("allow"), ..Default::default() };
            let proxy =
                crate::proxy::ProxyServer::bind("127.0.0.1:0".parse().expect("addr"), config).await.expect("proxy");
            proxy_url = Some(format!("ws://{}/", proxy.local_addr().expect("addr")));
            tokio::spawn(proxy.run());
        }
        Bed { server, ca_pem, proxy_url }
    }

    fn roots(&self) -> RootStore {
        RootStore::from_pem(&self.ca_pem).expect("roots")
    }

    /// A prover of `version` (proxy mode, or MPC mode through the bed's proxy) with these
    /// limits.
    pub(super) fn prover(&self, version: TlsVersion, max_sent: u32, max_recv: u32) -> ProverConfig {
        ProverConfig {
            server: self.server.clone(),
            server_name: "localhost".into(),
            roots: self.roots(),
            max_sent,
            max_recv,
            now: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs(),
            step_timeout: crate::protocol::prover::DEFAULT_STEP_TIMEOUT,
            prg: crate::primitives::prg::PrgKind::fastest_here(),
            mode: match &self.proxy_url {
                Some(proxy_url) => ProverMode::Mpc { proxy_url: proxy_url.clone() },
                None => ProverMode::Proxy,
            },
            tls_versions: vec![version],
            tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
            tls12_suites: crate::tls::CipherSuite::ALL.to_vec(),
        }
    }

    /// One session: the verifier's outcome and the prover's.
    pub(super) async fn session(
        &self,
        prover: ProverConfig,
        request: Vec<u8>,
        reveal: RevealConfig,
    ) -> (Result<VerifierOutput, VerifierError>, Result<ProverOutput, ProverError>) {
        let verifier = VerifierConfig::new(AllowList::parse(&self.server).expect("allow"), self.roots());
        let (a, b) = crate::transport::memory::pair();
        let verdict = std::cell::RefCell::new(None);
        let v = verify_session(a, &verifier, None, |r| *verdict.borrow_mut() = Some(r));
        let (_, proven) = futures::join!(v, notarize(b, prover, request, reveal));
        (verdict.into_inner().expect("the verifier's outcome"), proven)
    }
}
