//! The verifier as a service, natively over 127.0.0.1: its port answers `/healthz`,
//! `/readyz` and `/metrics` beside the sessions, the metrics match what ran, and asked to
//! stop it drains: the running session gets its verdict, a new one is refused `BUSY`, and
//! readiness turns 503 until it returns.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::net::SocketAddr;
use std::time::Duration;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::server::VerifierServer;
use tlsproof::protocol::{notarize, ProverError, ProverOutput, Reveal, RevealConfig, VerifierConfig};
use tlsproof::proxy::AllowList;
use tlsproof::tls::RootStore;
use tlsproof::transport::WsSocket;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `GET path` over plain HTTP/1.1: the status code and the body.
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).await.unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

struct Env {
    ca_pem: String,
    verifier: SocketAddr,
}

impl Env {
    /// A session with a response of `n` bytes.
    async fn notarize(&self, server: &str, n: usize, reveal: RevealConfig) -> Result<ProverOutput, ProverError> {
        let request = RequestBuilder::get("localhost", &format!("/bytes?n={n}"))
            .header("Authorization", "Bearer service-secret")
            .build()
            .unwrap()
            .bytes;
        let config = common::session::prover_config(server, &self.ca_pem);
        let socket = WsSocket::connect(&format!("ws://{}/", self.verifier)).await.unwrap();
        notarize(socket, config, request, reveal).await
    }
}

/// The metric's value in the OpenMetrics text, 0 when absent.
fn value(metrics: &str, series: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_port_reports_health_readiness_and_metrics_and_drains_on_stop() {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let server = format!("localhost:{}", fixture.local_addr().unwrap().port());
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    let config = VerifierConfig::new(AllowList::parse(&server).unwrap(), RootStore::from_pem(&ca_pem).unwrap());
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let metrics = vserver.metrics();
    let (tx, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(vserver.run_until(
        tx,
        async {
            let _ = stopped.await;
        },
        Duration::from_secs(60),
    ));
    let env = Env { ca_pem, verifier };

    assert_eq!(get(verifier, "/healthz").await, (200, "ok\n".into()));
    assert_eq!(get(verifier, "/readyz").await, (200, "ready\n".into()));

    // One session verified (the fast path), one refused by the allow-list.
    env.notarize(&server, 2048, RevealConfig::default()).await.expect("verified");
    let refused =
        env.notarize("localhost:1", 2048, RevealConfig::default()).await.err().expect("not on the allow-list");
    assert_eq!(refused.code(), "SERVER_NOT_ALLOWED");
    for _ in 0..2 {
        let _ = reports.recv().await.unwrap();
    }
    let (status, text) = get(verifier, "/metrics").await;
    assert_eq!(status, 200);
    assert_eq!(value(&text, r#"tlsproof_sessions_total{outcome="verified",mode="proxy"}"#), 1.0, "{text}");
    assert_eq!(value(&text, r#"tlsproof_sessions_total{outcome="SERVER_NOT_ALLOWED",mode="any"}"#), 1.0, "{text}");
    assert_eq!(value(&text, r#"tlsproof_phase_seconds_count{phase="prove"}"#), 1.0, "{text}");
    assert!(value(&text, r#"tlsproof_payload_bytes_total{direction="up"}"#) > 2048.0, "{text}");
    assert_eq!(value(&text, "tlsproof_sessions_running"), 0.0, "{text}");
    // (the session refused by the allow-list was refused before its turn)
    assert_eq!(value(&text, "tlsproof_queue_wait_seconds_count"), 1.0, "{text}");
    assert_eq!(value(&text, "tlsproof_memory_reserved_bytes"), 0.0, "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(!text.contains("service-secret") && !text.contains("abcdefghij"), "no transcript bytes: {text}");

    // A redacted session (the ZK path) runs; the stop comes while it does (its 12 KB keep it
    // running well beyond the 50 ms the checks below take).
    let reveal = RevealConfig { received: Reveal::HttpBody, ..RevealConfig::default() };
    let running = env.notarize(&server, 12 * 1024, reveal);
    let meanwhile = async {
        while metrics.running() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        stop.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(get(verifier, "/readyz").await, (503, "draining\n".into()));
        assert!(value(&get(verifier, "/metrics").await.1, "tlsproof_memory_reserved_bytes") > 0.0);
        // refused at the handshake, so that a load balancer tries another verifier
        let late = WsSocket::connect(&format!("ws://{verifier}/")).await.err().expect("refused while draining");
        assert!(matches!(late, tlsproof::transport::TransportError::Busy { retry_after: Some(1), .. }), "{late}");
    };
    let (out, ()) = futures::join!(running, meanwhile);
    let out = out.expect("the session that ran when the stop came is verified");
    assert!(!out.verified.received.fast_path);
    tokio::time::timeout(Duration::from_secs(10), serving).await.expect("run_until returns once drained").unwrap();
}
