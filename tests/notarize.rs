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
    run_with(env, path, headers, reveal, prover_config(env)).await
}

async fn run_with(env: &Env, path: &str, headers: &[(&str, &str)], reveal: RevealConfig, config: ProverConfig) -> Result<tlsproof::protocol::ProverOutput, ProverError> {
    let mut req = RequestBuilder::get("localhost", path);
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let request = req.build().unwrap().bytes;
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    notarize(socket, config, request, reveal).await
}

fn prover_config(env: &Env) -> ProverConfig {
    ProverConfig {
        server: env.fixture.to_string(),
        server_name: "localhost".into(),
        roots: RootStore::from_pem(&env.ca_pem).unwrap(),
        max_sent: 4096,
        max_recv: 128 * 1024,
        now: now(),
        step_timeout: tlsproof::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: tlsproof::zk::prg::PrgKind::fastest_here(),
    }
}

use tlsproof::zk::prg::PrgKind;

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
        let report = report.unwrap();
        assert_eq!((&report.sent, &report.received), (&out.verified.sent, &out.verified.received));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redacted_response_takes_the_zk_path() {
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    // the 1 KB session uses ChaCha12 as the engine's PRG, as a browser prover does
    for (n, prg) in [(1024usize, PrgKind::ChaCha12), (51 * 1024, PrgKind::fastest_here())] {
        // Hide only the last byte of the response (the reference benchmark's "redacted" case).
        let config = ProverConfig { prg, ..prover_config(&env) };
        let out = run_with(&env, &format!("/bytes?n={n}"), &[], RevealConfig::new(Reveal::All, Reveal::AllButLast(1)), config)
            .await
            .expect("notarization");
        let v = &out.verified;
        let total = out.response.len();
        assert!(v.sent.fast_path && !v.received.fast_path);
        assert_eq!(v.received.len as usize, total);
        assert_eq!(&v.received.bytes[..total - 1], &out.response[..total - 1]);
        assert_eq!(v.received.bytes[total - 1], 0, "the hidden byte is not revealed");
        assert!(v.received.printable().ends_with('█'));
        let (_, report) = env.reports.recv().await.unwrap();
        report.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_reach_the_prover_with_reasons() {
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    // Response larger than the limits the prover asked for.
    let err = run(&env, "/bytes?n=200000", &[], RevealConfig::default()).await.err().expect("over the limit");
    // Whichever side notices first: the prover's HTTP limit or the verifier's relay limit.
    let msg = err.to_string();
    assert!(msg.contains("body larger than 131072 bytes") || msg.contains("transcript beyond the limits"), "{msg}");
    let (_, report) = env.reports.recv().await.unwrap();
    assert!(report.is_err());

    // A server the verifier does not allow, and one that does not answer.
    let dead = { let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap(); l.local_addr().unwrap() };
    for (server, needle) in [(dead.to_string(), "not on the proxy's allow-list")] {
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let config = ProverConfig {
            server,
            server_name: "localhost".into(),
            roots: RootStore::from_pem(&env.ca_pem).unwrap(),
            max_sent: 4096,
            max_recv: 4096,
            now: now(),
        step_timeout: tlsproof::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: tlsproof::zk::prg::PrgKind::fastest_here(),
        };
        let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
        let err = notarize(socket, config, request, RevealConfig::default()).await.err().expect("refused");
        assert!(matches!(&err, ProverError::VerifierRejected(r) if r.contains(needle)), "{err}");
        assert_eq!(err.code(), "SERVER_NOT_ALLOWED");
        let (_, report) = env.reports.recv().await.unwrap();
        assert!(matches!(report, Err(VerifierError::Policy(_))), "{report:?}");
    }

    // An allowed server that does not answer.
    let config = VerifierConfig::new(AllowList::parse(&dead.to_string()).unwrap(), RootStore::from_pem(&env.ca_pem).unwrap());
    let server = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let vaddr = server.local_addr().unwrap();
    let (tx, mut reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(server.run(tx));
    let socket = WsSocket::connect(&format!("ws://{vaddr}/")).await.unwrap();
    let config = ProverConfig {
        server: dead.to_string(),
        server_name: "localhost".into(),
        roots: RootStore::from_pem(&env.ca_pem).unwrap(),
        max_sent: 4096,
        max_recv: 4096,
        now: now(),
        step_timeout: tlsproof::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: tlsproof::zk::prg::PrgKind::fastest_here(),
    };
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let err = notarize(socket, config, request, RevealConfig::default()).await.err().expect("unreachable");
    assert!(matches!(&err, ProverError::VerifierRejected(r) if r.contains("cannot connect to the server")), "{err}");
    assert_eq!(err.code(), "SERVER_UNREACHABLE");
    assert!(matches!(reports.recv().await.unwrap().1, Err(VerifierError::Connect(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sessions_do_not_disturb_a_good_one() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    // Garbage on the control channel, an unknown channel, and a client that leaves mid-session.
    let (mut garbage, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    garbage.send(Message::binary(vec![0u8, 0xff, 0xff, 0xff])).await.unwrap();
    let (mut unknown, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    unknown.send(Message::binary(vec![9u8, 1, 2, 3])).await.unwrap();
    let (mut leaver, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    leaver.send(Message::binary(vec![0u8])).await.unwrap();
    drop(leaver);
    // An oversized message (3 MiB, over the 2 MiB frame limit).
    let (mut huge, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    let _ = huge.send(Message::binary(vec![2u8; 3 << 20])).await;
    let good = run(&env, "/json", &[], RevealConfig::default()).await.expect("the good session");
    assert!(good.verified.received.printable().contains("Alice Example"));
    let mut oks = 0;
    let mut errs = Vec::new();
    for _ in 0..5 {
        let (_, report) = tokio::time::timeout(std::time::Duration::from_secs(60), env.reports.recv()).await.unwrap().unwrap();
        match report {
            Ok(_) => oks += 1,
            Err(e) => errs.push(e.to_string()),
        }
    }
    assert_eq!(oks, 1, "{errs:?}");
    assert_eq!(errs.len(), 4, "{errs:?}");
    drop((garbage, unknown, huge));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commitment_to_the_hidden_token_opens_with_its_blinder() {
    use sha2::{Digest, Sha256};
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let token = "Bearer committed-token-42";
    let mut config = RevealConfig::default();
    // Find the token's position in the request the builder will produce.
    let request = RequestBuilder::get("localhost", "/json").header("Authorization", token).build().unwrap().bytes;
    let at = request.windows(token.len()).position(|w| w == token.as_bytes()).unwrap();
    config.commit_sent = Reveal::Ranges(vec![at..at + token.len()]);
    let out = run(&env, "/json", &[("Authorization", token)], config).await.expect("notarization");
    let (_, report) = env.reports.recv().await.unwrap();
    let verified = report.unwrap();
    assert_eq!(verified.commitments.len(), 1);
    let c = &verified.commitments[0];
    assert_eq!((c.direction.as_str(), c.range.clone()), ("sent", at as u64..(at + token.len()) as u64));
    assert!(!String::from_utf8_lossy(&verified.sent.bytes).contains("committed-token"));
    let (mine, blinder) = &out.commitments[0];
    assert_eq!(mine, c);
    let mut h = Sha256::new();
    h.update(token.as_bytes());
    h.update(blinder);
    assert_eq!(h.finalize().as_slice(), &c.digest, "the digest opens to the token with the prover's blinder");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_verifier_times_out_and_early_server_close_is_an_error() {
    // A "verifier" that accepts the WebSocket and never answers.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent = l.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = l.accept().await {
            held.push(tokio_tungstenite::accept_async(tcp).await);
        }
    });
    let env = env_with(KeyType::EcdsaP256, None).await;
    let config = |server: String| ProverConfig {
        server,
        server_name: "localhost".into(),
        roots: RootStore::from_pem(&env.ca_pem).unwrap(),
        max_sent: 4096,
        max_recv: 4096,
        now: now(),
        step_timeout: std::time::Duration::from_millis(300),
        prg: tlsproof::zk::prg::PrgKind::fastest_here(),
    };
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let socket = WsSocket::connect(&format!("ws://{silent}/")).await.unwrap();
    let err = notarize(socket, config(env.fixture.to_string()), request.clone(), RevealConfig::default()).await.err().unwrap();
    assert!(matches!(err, ProverError::Timeout("the verifier to accept")), "{err}");
    assert_eq!(err.code(), "TIMEOUT");

    // A server that accepts TCP and closes at once: a clear TLS error, not a hang.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closer = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            drop(tcp);
        }
    });
    let vconfig = VerifierConfig::new(AllowList::parse(&closer.to_string()).unwrap(), RootStore::from_pem(&env.ca_pem).unwrap());
    let server = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), vconfig).await.unwrap();
    let vaddr = server.local_addr().unwrap();
    let (tx, mut reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(server.run(tx));
    let socket = WsSocket::connect(&format!("ws://{vaddr}/")).await.unwrap();
    let mut c = config(closer.to_string());
    c.step_timeout = std::time::Duration::from_secs(10);
    let err = notarize(socket, c, request, RevealConfig::default()).await.err().unwrap();
    assert!(matches!(err, ProverError::Tls(_) | ProverError::VerifierRejected(_)), "{err}");
    assert!(reports.recv().await.unwrap().1.is_err());
}

/// Sends one raw control frame as a (possibly misbehaving) prover and returns the verifier's
/// report for that session.
async fn raw_request(env: &mut Env, msg: tlsproof::protocol::messages::ControlMessage) -> Result<tlsproof::protocol::VerifierOutput, VerifierError> {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    let mut frame = vec![0u8];
    frame.extend(msg.encode());
    ws.send(Message::binary(frame)).await.unwrap();
    let report = tokio::time::timeout(std::time::Duration::from_secs(30), env.reports.recv()).await.unwrap().unwrap().1;
    drop(ws);
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verifier_refuses_other_versions_and_excessive_limits() {
    use tlsproof::protocol::messages::{ControlMessage, SessionRequest, PROTOCOL_VERSION};
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let server = env.fixture.to_string();
    let pre = tlsproof::protocol::proof::preprocess_cots(1024, false, true) as u32;
    let request = |version, max_recv, preprocess| {
        ControlMessage::Request(SessionRequest {
            version,
            server: server.clone(),
            server_name: "localhost".into(),
            max_sent: 1024,
            max_recv,
            preprocess,
            prg: Default::default(),
        })
    };
    let r = raw_request(&mut env, request(PROTOCOL_VERSION + 1, 1024, pre)).await;
    assert!(matches!(r, Err(VerifierError::Version { got, ours }) if got == PROTOCOL_VERSION + 1 && ours == PROTOCOL_VERSION), "{r:?}");
    let r = raw_request(&mut env, request(PROTOCOL_VERSION, u32::MAX, pre)).await;
    assert!(matches!(r, Err(VerifierError::LimitTooHigh { what: "max_recv", .. })), "{r:?}");
    // preprocessing beyond what a session with a 1 KB request can use would make the verifier
    // work for nothing
    let r = raw_request(&mut env, request(PROTOCOL_VERSION, 1024, pre + 1)).await;
    assert!(matches!(r, Err(VerifierError::LimitTooHigh { what: "preprocess", asked, limit }) if asked == pre + 1 && limit == pre), "{r:?}");
    // A session that starts with anything but a request is refused too.
    let r = raw_request(&mut env, ControlMessage::TlsDone(tlsproof::protocol::messages::TlsDone { sent: 0, received: 0 })).await;
    assert!(matches!(r, Err(VerifierError::UnexpectedMessage { expected: "Request", got: "TlsDone" })), "{r:?}");
}

/// The browser API's error codes for verifier refusals come from the verifier's messages:
/// this pins the messages the classification relies on.
#[test]
fn verifier_refusals_map_to_stable_error_codes() {
    use tlsproof::proxy::Refusal;
    let code = |e: VerifierError| ProverError::VerifierRejected(e.to_string()).code();
    assert_eq!(code(VerifierError::Connect("refused".into())), "SERVER_UNREACHABLE");
    assert_eq!(code(VerifierError::Policy(Refusal::Unresolvable("x:1".into()))), "SERVER_UNREACHABLE");
    assert_eq!(code(VerifierError::Policy(Refusal::NotAllowed("x:1".into()))), "SERVER_NOT_ALLOWED");
    assert_eq!(code(VerifierError::LimitTooHigh { what: "max_recv", asked: 2, limit: 1 }), "LIMIT_EXCEEDED");
    assert_eq!(code(VerifierError::TranscriptTooLarge { what: "received", got: 2, limit: 1 }), "LIMIT_EXCEEDED");
    assert_eq!(code(VerifierError::AppDataTooLarge { direction: "received", got: 2, limit: 1 }), "LIMIT_EXCEEDED");
    assert_eq!(code(VerifierError::Timeout("the proof")), "TIMEOUT");
    assert_eq!(code(VerifierError::ProverAborted("x".into())), "VERIFIER_REJECTED");
    assert_eq!(code(VerifierError::Version { got: 9, ours: 1 }), "VERIFIER_REJECTED");
}

/// A prover whose TlsDone claims other byte counts than it exchanged.
struct MiscountingSocket {
    inner: WsSocket,
    sent_delta: i64,
    received_delta: i64,
}

impl tlsproof::transport::MessageSocket for MiscountingSocket {
    async fn send(&mut self, msg: &[u8]) -> Result<(), tlsproof::transport::TransportError> {
        use tlsproof::protocol::messages::ControlMessage;
        // Control frames are channel 0.
        if let Some((0, payload)) = msg.split_first() {
            if let Ok(ControlMessage::TlsDone(mut done)) = ControlMessage::decode(payload) {
                done.sent = done.sent.saturating_add_signed(self.sent_delta);
                done.received = done.received.saturating_add_signed(self.received_delta);
                let mut frame = vec![0u8];
                frame.extend(ControlMessage::TlsDone(done).encode());
                return self.inner.send(&frame).await;
            }
        }
        self.inner.send(msg).await
    }
    async fn recv(&mut self) -> Result<Option<Vec<u8>>, tlsproof::transport::TransportError> {
        self.inner.recv().await
    }
    async fn close(&mut self) -> Result<(), tlsproof::transport::TransportError> {
        self.inner.close().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byte_counts_that_differ_from_the_relayed_session_are_rejected() {
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    // Claiming fewer sent bytes (to drop a record), or more received bytes than were relayed.
    for (sent_delta, received_delta) in [(-1i64, 0i64), (1, 0), (0, 1)] {
        let config = prover_config(&env);
        let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
        let inner = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let socket = MiscountingSocket { inner, sent_delta, received_delta };
        let prover = notarize(socket, config, request, RevealConfig::new(Reveal::All, Reveal::All)).await;
        assert!(matches!(prover, Err(ProverError::VerifierRejected(_))), "{:?}", prover.err());
        let report = tokio::time::timeout(std::time::Duration::from_secs(30), env.reports.recv()).await.unwrap().unwrap().1;
        assert!(matches!(report, Err(VerifierError::CountMismatch { .. })), "({sent_delta}, {received_delta}): {report:?}");
    }
}
