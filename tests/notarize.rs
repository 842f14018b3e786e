//! Proxy-mode notarization end to end, natively: fixture server ← verifier (relay + checks)
//! ← prover, over a real WebSocket on 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]

use std::net::SocketAddr;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::server::{SessionReport, VerifierServer};
use tlsproof::protocol::{notarize, ProverConfig, ProverError, Reveal, RevealConfig, VerifierConfig, VerifierError};
use tlsproof::proxy::AllowList;
use tlsproof::tls::RootStore;
use tlsproof::transport::WsSocket;
use tokio::sync::mpsc::UnboundedReceiver;

struct Env {
    fixture: SocketAddr,
    verifier: SocketAddr,
    ca_pem: String,
    reports: UnboundedReceiver<SessionReport>,
}

async fn env_with(key_type: KeyType, verifier_roots: Option<RootStore>) -> Env {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), key_type, 30).await.unwrap();
    let faddr = fixture.local_addr().unwrap();
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    let roots = verifier_roots.unwrap_or_else(|| RootStore::from_pem(&ca_pem).unwrap());
    let config = VerifierConfig::new(AllowList::parse(&faddr.to_string()).unwrap(), roots);
    let server = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = server.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(server.run(tx));
    Env { fixture: faddr, verifier, ca_pem, reports }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

async fn run(env: &Env, path: &str, headers: &[(&str, &str)], reveal: RevealConfig) -> Result<tlsproof::protocol::ProverOutput, ProverError> {
    let mut req = RequestBuilder::get("localhost", path);
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let request = req.build().unwrap().bytes;
    let config = ProverConfig {
        server: env.fixture.to_string(),
        server_name: "localhost".into(),
        roots: RootStore::from_pem(&env.ca_pem).unwrap(),
        max_sent: 4096,
        max_recv: 128 * 1024,
        now: now(),
    };
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    notarize(socket, config, request, reveal).await
}

fn body_of(response: &[u8]) -> &[u8] {
    let i = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    &response[i + 4..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_reveal_takes_the_fast_path_and_hides_the_token() {
    for (key_type, n) in [(KeyType::EcdsaP256, 1024), (KeyType::Rsa2048, 51 * 1024)] {
        let mut env = env_with(key_type, None).await;
        let out = match run(&env, &format!("/bytes?n={n}"), &[("Authorization", "Bearer top-secret-token")], RevealConfig::default()).await {
            Ok(o) => o,
            Err(e) => panic!("prover: {e}; verifier: {:?}", env.reports.recv().await),
        };
        let v = &out.verified;
        assert!(v.received.fast_path, "a fully revealed response takes the fast path");
        assert!(!v.sent.fast_path, "a redacted request stays on the ZK path");
        assert_eq!(v.received.bytes, out.response, "the verifier sees exactly the response");
        assert_eq!(body_of(&v.received.bytes).len(), n);
        let sent = v.sent.printable();
        assert!(sent.contains("Authorization: █████"), "{sent}");
        assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("top-secret"), "secret leaked");
        assert!(sent.starts_with(&format!("GET /bytes?n={n} HTTP/1.1")), "{sent}");
        let (_, report) = env.reports.recv().await.unwrap();
        assert_eq!(report.unwrap(), out.verified);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redacted_response_takes_the_zk_path() {
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    for n in [1024usize, 51 * 1024] {
        // Hide only the last byte of the response (the reference benchmark's "redacted" case).
        let out = run(&env, &format!("/bytes?n={n}"), &[], RevealConfig { sent: Reveal::All, received: Reveal::Ranges(vec![]) })
            .await
            .map(|_| ())
            .err();
        assert!(out.is_none(), "{out:?}");
        let _ = env.reports.recv().await;
        let total = {
            // Learn the response length from a fast-path run, then hide its last byte.
            let full = run(&env, &format!("/bytes?n={n}"), &[], RevealConfig { sent: Reveal::All, received: Reveal::All }).await.unwrap();
            let _ = env.reports.recv().await;
            full.response.len()
        };
        let out = run(&env, &format!("/bytes?n={n}"), &[], RevealConfig { sent: Reveal::All, received: Reveal::Ranges(vec![0..total - 1]) })
            .await
            .expect("notarization");
        let v = &out.verified;
        assert!(v.sent.fast_path && !v.received.fast_path);
        assert_eq!(&v.received.bytes[..total - 1], &out.response[..total - 1]);
        assert_eq!(v.received.bytes[total - 1], 0, "the hidden byte is not revealed");
        assert!(v.received.printable().ends_with('█'));
        let (_, report) = env.reports.recv().await.unwrap();
        report.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verifier_with_other_roots_rejects_the_server() {
    let other = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let other_roots = RootStore::from_pem(&other.certs.ca_pem).unwrap();
    let mut env = env_with(KeyType::EcdsaP256, Some(other_roots)).await;
    let err = run(&env, "/json", &[], RevealConfig::default()).await.err().expect("must fail");
    assert!(matches!(&err, ProverError::VerifierRejected(r) if r.contains("InvalidSignatureForPublicKey")), "{err}");
    let (_, report) = env.reports.recv().await.unwrap();
    assert!(matches!(report, Err(VerifierError::Transcript(_))), "{report:?}");
}
