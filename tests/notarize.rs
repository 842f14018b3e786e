//! Proxy-mode notarization end to end, natively: fixture server ← verifier (relay + checks)
//! ← prover, over a real WebSocket on 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::net::SocketAddr;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::disclose::output::Ending;
use tlsproof::protocol::messages::ControlMessage;
use tlsproof::protocol::server::{SessionReport, VerifierServer};
use tlsproof::protocol::{notarize, ProverConfig, ProverError, Reveal, RevealConfig, VerifierConfig, VerifierError};
use tlsproof::proxy::AllowList;
use tlsproof::tls::RootStore;
use tlsproof::transport::WsSocket;
use tokio::sync::mpsc::UnboundedReceiver;

struct Env {
    fixture: SocketAddr,
    /// `localhost:PORT` of the fixture: the certified name, as the verifier dials it.
    server: String,
    verifier: SocketAddr,
    ca_pem: String,
    reports: UnboundedReceiver<SessionReport>,
}

async fn env_with(key_type: KeyType, verifier_roots: Option<RootStore>) -> Env {
    env_configured(key_type, verifier_roots, |_| {}).await
}

async fn env_configured(
    key_type: KeyType,
    verifier_roots: Option<RootStore>,
    configure: impl FnOnce(&mut VerifierConfig),
) -> Env {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), key_type, 30).await.unwrap();
    let faddr = fixture.local_addr().unwrap();
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    let roots = verifier_roots.unwrap_or_else(|| RootStore::from_pem(&ca_pem).unwrap());
    let server = format!("localhost:{}", faddr.port());
    let mut config = VerifierConfig::new(AllowList::parse(&server).unwrap(), roots);
    configure(&mut config);
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    Env { fixture: faddr, server, verifier, ca_pem, reports }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

async fn run(
    env: &Env,
    path: &str,
    headers: &[(&str, &str)],
    reveal: RevealConfig,
) -> Result<tlsproof::protocol::ProverOutput, ProverError> {
    run_with(env, path, headers, reveal, prover_config(env)).await
}

async fn run_with(
    env: &Env,
    path: &str,
    headers: &[(&str, &str)],
    reveal: RevealConfig,
    config: ProverConfig,
) -> Result<tlsproof::protocol::ProverOutput, ProverError> {
    let mut req = RequestBuilder::get("localhost", path);
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let request = req.build().unwrap().bytes;
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    notarize(socket, config, request, reveal).await
}

fn prover_config(env: &Env) -> ProverConfig {
    prover_config_for(env, env.server.clone())
}

/// A prover for `server` (`HOST:PORT`), certifying its host.
fn prover_config_for(env: &Env, server: String) -> ProverConfig {
    ProverConfig {
        server_name: server.rsplit_once(':').unwrap().0.to_string(),
        max_recv: 128 * 1024,
        ..common::session::prover_config(&server, &env.ca_pem)
    }
}

use tlsproof::primitives::prg::PrgKind;

/// A proxy-mode session request for the fixture with 4 KiB limits, as a raw client sends it.
fn small_request(env: &Env) -> tlsproof::protocol::messages::SessionRequest {
    tlsproof::protocol::messages::SessionRequest {
        version: tlsproof::protocol::messages::PROTOCOL_VERSION,
        mode: Default::default(),
        server: env.server.clone(),
        server_name: "localhost".into(),
        max_sent: 4096,
        max_recv: 4096,
        preprocess: 0,
        prg: Default::default(),
        response_in_zk: false,
    }
}

fn body_of(response: &[u8]) -> &[u8] {
    let i = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    &response[i + 4..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_reveal_takes_the_fast_path_and_hides_the_token() {
    for (key_type, n) in [(KeyType::EcdsaP256, 1024), (KeyType::Rsa2048, 51 * 1024)] {
        let mut env = env_with(key_type, None).await;
        let out = match run(
            &env,
            &format!("/bytes?n={n}"),
            &[("Authorization", "Bearer top-secret-token")],
            RevealConfig::default(),
        )
        .await
        {
            Ok(o) => o,
            Err(e) => panic!("prover: {e}; verifier: {:?}", env.reports.recv().await),
        };
        let v = &out.verified;
        assert_eq!(
            (v.server_name.as_str(), v.server.as_str(), v.sni.as_deref()),
            ("localhost", env.server.as_str(), Some("localhost"))
        );
        assert!(v.received.fast_path, "a fully revealed response takes the fast path");
        assert_eq!(
            (v.sent.ending(), v.received.ending()),
            (Ending::CloseNotify, Ending::CloseNotify),
            "both sides closed cleanly"
        );
        let want = tlsproof::protocol::disclose::output::HttpExchange {
            request: 0..v.sent.len,
            request_line: Some(format!("GET /bytes?n={n} HTTP/1.1")),
            response: Some(0..v.received.len),
            status: Some(200),
            response_complete: Some(true),
        };
        assert_eq!(v.exchanges, [want]);
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
        let out = run_with(
            &env,
            &format!("/bytes?n={n}"),
            &[],
            RevealConfig::new(Reveal::All, Reveal::AllButLast(1)),
            config,
        )
        .await
        .expect("notarization");
        let v = &out.verified;
        let total = out.response.len();
        assert!(v.sent.fast_path && !v.received.fast_path);
        // the ZK path opens the alerts' plaintext too
        assert_eq!((v.sent.ending(), v.received.ending()), (Ending::CloseNotify, Ending::CloseNotify));
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
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    for (server, needle) in [(dead.to_string(), "server not allowed by the verifier: target")] {
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let config = ProverConfig { max_recv: 4096, ..prover_config_for(&env, server) };
        let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
        let err = notarize(socket, config, request, RevealConfig::default()).await.err().expect("refused");
        assert!(matches!(&err, ProverError::VerifierRejected(r) if r.contains(needle)), "{err}");
        assert_eq!(err.code(), "SERVER_NOT_ALLOWED");
        let (_, report) = env.reports.recv().await.unwrap();
        assert!(matches!(report, Err(VerifierError::Policy(_))), "{report:?}");
    }

    // An allowed server that does not answer.
    let config =
        VerifierConfig::new(AllowList::parse(&dead.to_string()).unwrap(), RootStore::from_pem(&env.ca_pem).unwrap());
    let server = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let vaddr = server.local_addr().unwrap();
    let (tx, mut reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(server.run(tx));
    let socket = WsSocket::connect(&format!("ws://{vaddr}/")).await.unwrap();
    let config = ProverConfig { max_recv: 4096, ..prover_config_for(&env, dead.to_string()) };
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
        let (_, report) =
            tokio::time::timeout(std::time::Duration::from_secs(60), env.reports.recv()).await.unwrap().unwrap();
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

/// The prover checks the server's certificate itself, against its own roots, and says what is
/// wrong and what to try; the verifier hears why it gave up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prover_with_other_roots_refuses_the_server_saying_why() {
    let other = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let config = ProverConfig { roots: RootStore::from_pem(&other.certs.ca_pem).unwrap(), ..prover_config(&env) };
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let err = notarize(socket, config, request, RevealConfig::default()).await.err().expect("refused");
    assert!(matches!(err, ProverError::CertificateRefused { .. }), "{err:?}");
    assert_eq!(err.code(), "TLS_ERROR");
    assert_eq!(
        err.to_string(),
        "TLS: the server's certificate is not accepted for localhost: its chain is not signed by the root of that \
         name the prover trusts. The roots are Mozilla's (webpki-roots) unless others are given: a server with a \
         private CA needs that CA's certificate (caPem, --roots); the verifier checks against its own roots too."
    );
    let report = env.reports.recv().await.unwrap().1;
    assert!(
        matches!(&report, Err(VerifierError::ProverAborted(r)) if r.contains("not accepted for localhost")),
        "{report:?}"
    );
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
async fn silent_verifier_or_server_times_out_and_early_server_close_is_an_error() {
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
        max_recv: 4096,
        step_timeout: std::time::Duration::from_millis(300),
        ..prover_config_for(&env, server)
    };
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let socket = WsSocket::connect(&format!("ws://{silent}/")).await.unwrap();
    let err =
        notarize(socket, config(env.server.clone()), request.clone(), RevealConfig::default()).await.err().unwrap();
    assert!(matches!(err, ProverError::Timeout("the verifier to accept")), "{err}");
    assert_eq!(err.code(), "TIMEOUT");

    // A server that accepts TCP and never answers: the exchange's own clock, started at the
    // verifier's acceptance, runs out.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mute = l.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = l.accept().await {
            held.push(tcp);
        }
    });
    let (socket, _reports) = verifier_allowing(mute, &env.ca_pem).await;
    let mut c = config(mute.to_string());
    c.step_timeout = std::time::Duration::from_secs(2);
    let err = notarize(socket, c, request.clone(), RevealConfig::default()).await.err().unwrap();
    assert!(matches!(err, ProverError::Timeout("the TLS exchange")), "{err}");

    // A server that accepts TCP and closes at once: a clear TLS error, not a hang.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closer = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            drop(tcp);
        }
    });
    let (socket, mut reports) = verifier_allowing(closer, &env.ca_pem).await;
    let mut c = config(closer.to_string());
    c.step_timeout = std::time::Duration::from_secs(10);
    let err = notarize(socket, c, request, RevealConfig::default()).await.err().unwrap();
    assert!(matches!(err, ProverError::Tls(_) | ProverError::VerifierRejected(_)), "{err}");
    assert!(reports.recv().await.unwrap().1.is_err());
}

/// A verifier of its own that allows only `server` (trusting the fixture's CA), a prover's
/// socket to it, and its reports.
async fn verifier_allowing(server: SocketAddr, ca_pem: &str) -> (WsSocket, UnboundedReceiver<SessionReport>) {
    let vconfig =
        VerifierConfig::new(AllowList::parse(&server.to_string()).unwrap(), RootStore::from_pem(ca_pem).unwrap());
    let verifier = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), vconfig).await.unwrap();
    let vaddr = verifier.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(verifier.run(tx));
    (WsSocket::connect(&format!("ws://{vaddr}/")).await.unwrap(), reports)
}

/// A prover that points the verifier at a forwarder of its own (which would relay the real
/// server's handshake, then inject records under the session key the prover knows) cannot get
/// the real server's name certified: the verifier dials only the name it certifies, on the
/// allow-list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarder_in_front_of_the_server_cannot_be_certified() {
    use tlsproof::protocol::messages::{SessionRequest, PROTOCOL_VERSION};
    use tlsproof::protocol::target::TargetError;
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let forwarder = l.local_addr().unwrap();
    let fixture = env.fixture;
    tokio::spawn(async move {
        while let Ok((mut client, _)) = l.accept().await {
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(fixture).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    // The forwarder's address with the real server's name: the prover refuses before connecting…
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let config = ProverConfig { server_name: "localhost".into(), ..prover_config_for(&env, forwarder.to_string()) };
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let err = notarize(socket, config, request, RevealConfig::default()).await.err().expect("refused");
    assert!(matches!(&err, ProverError::Target(TargetError::NameMismatch { .. })), "{err}");
    assert_eq!(err.code(), "SERVER_NAME_MISMATCH");
    // (the verifier saw no request, and the prover's reason for giving up)
    let report = env.reports.recv().await.unwrap().1;
    assert!(matches!(&report, Err(VerifierError::ProverAborted(r)) if r.contains("name")), "{report:?}");
    // …and so does the verifier, asked directly.
    let request = |server: String, server_name: &str| {
        ControlMessage::Request(SessionRequest {
            version: PROTOCOL_VERSION,
            server,
            server_name: server_name.into(),
            max_sent: 1024,
            max_recv: 1024,
            preprocess: 0,
            prg: Default::default(),
            response_in_zk: false,
            mode: Default::default(),
        })
    };
    let r = raw_request(&mut env, request(forwarder.to_string(), "localhost")).await;
    assert!(
        matches!(&r, Err(VerifierError::Target(TargetError::NameMismatch { host, name })) if host == "127.0.0.1" && name == "localhost"),
        "{r:?}"
    );
    assert_eq!(ProverError::VerifierRejected(r.unwrap_err().to_string()).code(), "SERVER_NAME_MISMATCH");
    // The forwarder by the certified name, or certified as its own IP: not on the allow-list.
    for server in [format!("localhost:{}", forwarder.port()), forwarder.to_string()] {
        let name = server.rsplit_once(':').unwrap().0.to_string();
        let r = raw_request(&mut env, request(server, &name)).await;
        assert!(matches!(r, Err(VerifierError::Policy(tlsproof::proxy::Refusal::NotAllowed(_)))), "{r:?}");
    }
}

/// Sends one raw control frame as a (possibly misbehaving) prover and returns the verifier's
/// report for that session.
async fn raw_request(env: &mut Env, msg: ControlMessage) -> Result<tlsproof::protocol::VerifierOutput, VerifierError> {
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
    use tlsproof::protocol::messages::{SessionRequest, PROTOCOL_VERSION};
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let server = env.server.clone();
    use tlsproof::protocol::prove::tls12::{
        keystream_cots, line_break_cots, most_keystream_cots, most_line_break_cots, preprocess_cots,
        MOST_DERIVATION_COTS, PREPROCESS_COTS,
    };
    // In proxy mode the server chooses the version and suite after the request: the limit is
    // that of TLS 1.3's SHA-384 suite, with the request's keystream and its proof of no hidden
    // line break (all of it hidden at most).
    let pre =
        preprocess_cots(MOST_DERIVATION_COTS, most_keystream_cots(1024) + most_line_break_cots(1024), true) as u32;
    let request_in = |mode, version, max_recv, preprocess| {
        ControlMessage::Request(SessionRequest {
            version,
            server: server.clone(),
            server_name: "localhost".into(),
            max_sent: 1024,
            max_recv,
            preprocess,
            prg: Default::default(),
            response_in_zk: false,
            mode,
        })
    };
    let request = |version, max_recv, preprocess| request_in(Default::default(), version, max_recv, preprocess);
    let r = raw_request(&mut env, request(PROTOCOL_VERSION + 1, 1024, pre)).await;
    assert!(
        matches!(r, Err(VerifierError::Version { got, ours }) if got == PROTOCOL_VERSION + 1 && ours == PROTOCOL_VERSION),
        "{r:?}"
    );
    let r = raw_request(&mut env, request(PROTOCOL_VERSION, u32::MAX, pre)).await;
    assert!(matches!(r, Err(VerifierError::LimitTooHigh { what: "max_recv", .. })), "{r:?}");
    // preprocessing beyond what a session with a 1 KB request can use would make the verifier
    // work for nothing
    let r = raw_request(&mut env, request(PROTOCOL_VERSION, 1024, pre + 1)).await;
    assert!(
        matches!(r, Err(VerifierError::LimitTooHigh { what: "preprocess", asked, limit }) if asked == pre + 1 && limit == pre),
        "{r:?}"
    );
    // MPC mode's limit adds the COTs of the proof of the garbling but no setup iteration for a
    // partly revealed response (the prover asks for none there), for the costlier version
    let tls12 = preprocess_cots(PREPROCESS_COTS, keystream_cots(1024) + line_break_cots(1024), false)
        + tlsproof::mpc::reproof::preprocess_cots(1024, false);
    let mpc = tlsproof::protocol::messages::SessionMode::Mpc;
    let mpc_pre = tlsproof::protocol::preprocess_limit(mpc, 1024);
    assert!(
        mpc_pre
            >= tls12 + tlsproof::mpc::reproof::preprocess_cots(1024, true)
                - tlsproof::mpc::reproof::preprocess_cots(1024, false),
        "TLS 1.3's proof of the garbling is the costlier"
    );
    let mpc_pre = mpc_pre as u32;
    let r = raw_request(&mut env, request_in(mpc, PROTOCOL_VERSION, 1024, mpc_pre + 1)).await;
    assert!(
        matches!(r, Err(VerifierError::LimitTooHigh { what: "preprocess", asked, limit }) if asked == mpc_pre + 1 && limit == mpc_pre),
        "{r:?}"
    );
    // A session that starts with anything but a request is refused too.
    let r =
        raw_request(&mut env, ControlMessage::TlsDone(tlsproof::protocol::messages::TlsDone { sent: 0, received: 0 }))
            .await;
    assert!(matches!(r, Err(VerifierError::UnexpectedMessage { expected: "Request", got: "TlsDone" })), "{r:?}");
}

/// The browser API's error codes for verifier refusals come from the verifier's messages:
/// this pins the messages the classification relies on.
#[test]
fn verifier_refusals_map_to_stable_error_codes() {
    use tlsproof::protocol::target::TargetError;
    use tlsproof::proxy::Refusal;
    let code = |e: VerifierError| ProverError::VerifierRejected(e.to_string()).code();
    assert_eq!(code(VerifierError::Connect("refused".into())), "SERVER_UNREACHABLE");
    assert_eq!(code(VerifierError::Policy(Refusal::Unresolvable("x:1".into()))), "SERVER_UNREACHABLE");
    assert_eq!(code(VerifierError::Policy(Refusal::NotAllowed("x:1".into()))), "SERVER_NOT_ALLOWED");
    let mismatch = TargetError::NameMismatch { host: "127.0.0.1".into(), name: "localhost".into() };
    assert_eq!(code(VerifierError::Target(mismatch.clone())), "SERVER_NAME_MISMATCH");
    assert_eq!(ProverError::Target(mismatch).code(), "SERVER_NAME_MISMATCH");
    let busy = VerifierError::Busy { reason: "the queue is full (64 waiting)".into(), retry_after: 3 };
    assert_eq!(code(busy), "BUSY");
    assert_eq!(ProverError::Busy { reason: "x".into(), retry_after: 3 }.code(), "BUSY");
    assert_eq!(code(VerifierError::LimitTooHigh { what: "max_recv", asked: 2, limit: 1 }), "LIMIT_EXCEEDED");
    assert_eq!(code(VerifierError::TranscriptTooLarge { what: "received", got: 2, limit: 1 }), "LIMIT_EXCEEDED");
    assert_eq!(code(VerifierError::AppDataTooLarge { direction: "received", got: 2, limit: 1 }), "LIMIT_EXCEEDED");
    assert_eq!(code(VerifierError::Timeout("the proof")), "TIMEOUT");
    assert_eq!(code(VerifierError::ProverAborted("x".into())), "VERIFIER_REJECTED");
    assert_eq!(code(VerifierError::Version { got: 9, ours: 1 }), "VERIFIER_REJECTED");
}

/// A prover whose control messages `tamper` rewrites on their way to the verifier.
struct ControlTamperingSocket<F> {
    inner: WsSocket,
    tamper: F,
}

impl<F: FnMut(ControlMessage) -> ControlMessage + Send> tlsproof::transport::MessageSocket
    for ControlTamperingSocket<F>
{
    async fn send(&mut self, msg: &[u8]) -> Result<(), tlsproof::transport::TransportError> {
        // Control frames are channel 0.
        if let Some((0, payload)) = msg.split_first() {
            if let Ok(m) = ControlMessage::decode(payload) {
                let mut frame = vec![0u8];
                frame.extend((self.tamper)(m).encode());
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
        let socket = ControlTamperingSocket {
            inner,
            tamper: move |m| match m {
                ControlMessage::TlsDone(mut done) => {
                    done.sent = done.sent.saturating_add_signed(sent_delta);
                    done.received = done.received.saturating_add_signed(received_delta);
                    ControlMessage::TlsDone(done)
                }
                m => m,
            },
        };
        let prover = notarize(socket, config, request, RevealConfig::new(Reveal::All, Reveal::All)).await;
        assert!(matches!(prover, Err(ProverError::VerifierRejected(_))), "{:?}", prover.err());
        let report =
            tokio::time::timeout(std::time::Duration::from_secs(30), env.reports.recv()).await.unwrap().unwrap().1;
        assert!(
            matches!(report, Err(VerifierError::CountMismatch { .. })),
            "({sent_delta}, {received_delta}): {report:?}"
        );
    }
}

/// Commitments are bounded when the plan is checked, before any wire is built for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_commitments_are_refused_before_the_proof() {
    use tlsproof::protocol::disclose::reveal::{RevealError, MAX_COMMITTED_BYTES};
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let inner = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let socket = ControlTamperingSocket {
        inner,
        tamper: |m| match m {
            ControlMessage::Reveal(mut plan) => {
                plan.commit_received = vec![0..MAX_COMMITTED_BYTES + 1];
                ControlMessage::Reveal(plan)
            }
            m => m,
        },
    };
    let request = RequestBuilder::get("localhost", "/bytes?n=20000").build().unwrap().bytes;
    let prover = notarize(socket, prover_config(&env), request, RevealConfig::new(Reveal::All, Reveal::All)).await;
    assert!(matches!(prover, Err(ProverError::VerifierRejected(_))), "{:?}", prover.err());
    let report = tokio::time::timeout(std::time::Duration::from_secs(30), env.reports.recv()).await.unwrap().unwrap().1;
    assert!(
        matches!(report, Err(VerifierError::Reveal { direction: "received commitments", error: RevealError::CommitmentsTooLarge { bytes, .. } }) if bytes == MAX_COMMITTED_BYTES + 1),
        "{report:?}"
    );
}

/// The relay is no TCP pipe: bytes that are not a ClientHello for the certified name never
/// reach the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_forwards_nothing_but_tls_for_the_certified_name() {
    use futures::SinkExt;
    use tlsproof::protocol::observe::relay_guard::RelayError;
    use tokio::io::AsyncReadExt;
    use tokio_tungstenite::tungstenite::Message;
    // An allowed "server" that counts what reaches it.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = l.local_addr().unwrap();
    let (got_tx, mut got) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = l.accept().await {
            let got_tx = got_tx.clone();
            tokio::spawn(async move {
                let mut all = Vec::new();
                let _ = tcp.read_to_end(&mut all).await;
                let _ = got_tx.send(all);
            });
        }
    });
    let config = VerifierConfig::new(AllowList::parse(&target.to_string()).unwrap(), RootStore::mozilla());
    let server = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let vaddr = server.local_addr().unwrap();
    let (tx, mut reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(server.run(tx));
    let hello_for = |name: &str| {
        let mut c = tlsproof::tls::Client::new(
            tlsproof::tls::ClientConfig::new(RootStore::mozilla()),
            name,
            tlsproof::tls::unix_time(now()),
        )
        .unwrap();
        c.take_outgoing()
    };
    for (payload, want) in [
        (b"POST /transfer HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec(), "not TLS"),
        (hello_for("bank.example"), "SNI"),
    ] {
        // once the verifier accepted, the payload goes on the TLS channel
        let mut ws = accepted_raw_session(vaddr, target, 1024).await;
        ws.send(Message::binary([&[1u8][..], &payload].concat())).await.unwrap();
        let report = tokio::time::timeout(std::time::Duration::from_secs(30), reports.recv()).await.unwrap().unwrap().1;
        match (want, &report) {
            ("not TLS", Err(VerifierError::Relay(RelayError::NotTls(_)))) => {}
            ("SNI", Err(VerifierError::Relay(RelayError::SniMismatch { got: Some(g), expected: None })))
                if g == "bank.example" => {}
            _ => panic!("{want}: {report:?}"),
        }
        let reached = tokio::time::timeout(std::time::Duration::from_secs(10), got.recv()).await.unwrap().unwrap();
        assert!(reached.is_empty(), "{want}: {} bytes reached the server", reached.len());
        drop(ws);
    }
}

/// A client that asks for a session of small limits and then says nothing: it holds its online
/// reservation (`cost::online` of its request) until the verifier's step timeout.
async fn budget_holder(
    env: &Env,
) -> (tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>, u64) {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let request = small_request(env);
    let cost = tlsproof::protocol::admission::cost::online(&request);
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    ws.send(Message::binary([vec![0u8], ControlMessage::Request(request).encode()].concat())).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    (ws, cost)
}

/// A verifier whose budget one [`budget_holder`]'s session fills, with `configure` applied.
async fn env_with_budget_for_one(configure: impl FnOnce(&mut VerifierConfig)) -> Env {
    // the holder's online cost, taken from a request like the holder's
    let fills = tlsproof::protocol::admission::cost::online(&tlsproof::protocol::messages::SessionRequest {
        version: 0,
        mode: Default::default(),
        server: String::new(),
        server_name: String::new(),
        max_sent: 4096,
        max_recv: 4096,
        preprocess: 0,
        prg: Default::default(),
        response_in_zk: false,
    });
    env_configured(KeyType::EcdsaP256, None, |c| {
        // online reservations share half the budget: the holder's fills it
        c.budget.memory = 2 * fills;
        c.queue_timeout = std::time::Duration::from_secs(1);
        c.step_timeout = std::time::Duration::from_secs(5);
        configure(c)
    })
    .await
}

/// Runs the fixture's /json session and collects the places in the queue it was told.
async fn run_watching_the_queue(env: &Env) -> (Result<tlsproof::protocol::ProverOutput, ProverError>, Vec<u32>) {
    run_watching_the_queue_with(env, prover_config(env), RevealConfig::default()).await
}

async fn run_watching_the_queue_with(
    env: &Env,
    config: ProverConfig,
    reveal: RevealConfig,
) -> (Result<tlsproof::protocol::ProverOutput, ProverError>, Vec<u32>) {
    let places = std::cell::RefCell::new(Vec::new());
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let progress = |p: tlsproof::protocol::Progress| {
        if let tlsproof::protocol::Phase::Waiting { position } = p.phase {
            places.borrow_mut().push(position);
        }
    };
    let result = tlsproof::protocol::notarize_with_progress(socket, config, request, reveal, progress).await;
    (result, places.into_inner())
}

/// Admission by budget: beyond the sessions open at once or those from one address a prover is
/// refused at once; a session the budget cannot take now waits in the queue, told its place,
/// and is refused only when the queue is full or its wait runs out: each time `BUSY` with a
/// reason and a retry hint. The session holding the budget is not disturbed, and the next
/// prover is served once it leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_beyond_the_budget_wait_their_turn_or_are_refused_busy() {
    for (max_sessions, max_queued, max_per_ip, needle, places) in [
        (1, 8, 100, "9 sessions open", &[][..]),
        (8, 0, 8, "the queue is full (0 waiting)", &[]),
        (8, 1, 8, "no turn within 1 s", &[1]),
        (8, 8, 1, "1 sessions from 127.0.0.1 already", &[]),
    ] {
        let mut env = env_with_budget_for_one(|c| {
            c.budget.max_sessions = max_sessions;
            c.max_queued = max_queued;
            c.max_per_ip = max_per_ip;
        })
        .await;
        let (holder, _) = budget_holder(&env).await;
        // with one session open, the cap on open sessions is reached by filling it
        let fillers = if max_sessions == 1 {
            let mut f = Vec::new();
            for _ in 0..8 {
                f.push(tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap().0);
            }
            f
        } else {
            Vec::new()
        };
        let (result, told) = run_watching_the_queue(&env).await;
        let err = result.err().expect("refused");
        assert!(
            matches!(&err, ProverError::Busy { reason, retry_after } if reason.contains(needle) && *retry_after >= 1),
            "{needle}: {err}"
        );
        assert_eq!(err.code(), "BUSY");
        assert_eq!(told, places, "{needle}");
        let (_, report) = env.reports.recv().await.unwrap();
        assert!(matches!(&report, Err(VerifierError::Busy { reason, .. }) if reason.contains(needle)), "{report:?}");
        // Once the place is free, the next prover is served.
        drop((holder, fillers));
        let (_, report) = env.reports.recv().await.unwrap();
        assert!(report.is_err(), "the silent client's session ends without a verdict");
        let out = run(&env, "/json", &[], RevealConfig::default()).await.expect("served after the holder left");
        assert!(out.verified.received.printable().contains("Alice Example"));
    }
}

/// A client that asks for a session and, while it waits for its turn, floods the OT channel is
/// cut off once it passes what a waiting session may hold (64 KiB per channel), instead of
/// growing the verifier's memory for as long as it waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_session_that_floods_is_cut_off() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let mut env = env_with_budget_for_one(|c| c.queue_timeout = std::time::Duration::from_secs(20)).await;
    let (holder, _) = budget_holder(&env).await;
    let (mut flooder, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
    let request = small_request(&env);
    flooder.send(Message::binary([vec![0u8], ControlMessage::Request(request).encode()].concat())).await.unwrap();
    // 16 KiB frames on the ZK channel (id 2), well past 64 KiB; the verifier ends the session
    // well before they are all sent
    for _ in 0..64 {
        if flooder.send(Message::binary([vec![2u8], vec![7u8; 16 << 10]].concat())).await.is_err() {
            break;
        }
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let report = loop {
        let (_, report) = tokio::time::timeout_at(deadline, env.reports.recv()).await.unwrap().unwrap();
        // the holder's session may end first: on a loaded machine it times out waiting for
        // the TLS traffic it never sends
        if !matches!(&report, Err(VerifierError::Timeout(_))) {
            break report;
        }
    };
    assert!(
        matches!(&report, Err(VerifierError::Mux(tlsproof::wire::mux::MuxError::InboxOverflow { max, .. })) if *max == 64 << 10),
        "{report:?}"
    );
    drop(holder);
}

/// A session that waits is served, in order, as soon as the budget frees: told its place, and
/// verified like any other. What a proxy-mode prover sends while it waits (its OT setup's
/// first messages) fits what a waiting session may hold, whatever it will prove: the fast path
/// over TLS 1.2, or a partly revealed response over TLS 1.3 (which asks for the most setup).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_session_is_served_when_the_budget_frees() {
    use tlsproof::protocol::messages::TlsVersion;
    for (tls13, reveal) in [
        (false, RevealConfig::default()),
        (true, RevealConfig { received: Reveal::AllButLast(1), ..RevealConfig::default() }),
    ] {
        let env = env_with_budget_for_one(|c| c.queue_timeout = std::time::Duration::from_secs(20)).await;
        let mut config = prover_config(&env);
        if tls13 {
            config.tls_versions = vec![TlsVersion::Tls13];
        }
        let (holder, _) = budget_holder(&env).await;
        let release = async {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            drop(holder);
        };
        let ((result, told), ()) = futures::join!(run_watching_the_queue_with(&env, config, reveal), release);
        let out = result.expect("served once the holder left");
        assert!(out.verified.received.printable().contains("Alice Example"));
        assert_eq!(out.verified.tls.version, if tls13 { TlsVersion::Tls13 } else { TlsVersion::Tls12 });
        assert_eq!(told.first(), Some(&1), "told its place: {told:?}");
        assert!(told.iter().all(|&p| p == 1), "{told:?}");
    }
}

/// The fast path opens the server's write key, so a prover that holds relayed server bytes
/// its proof does not cover (here the first bytes of a close_notify record whose rest never
/// comes) refuses it; the ZK path still works, and the verdict says the response did not end
/// with close_notify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fast_path_is_refused_over_relayed_bytes_the_proof_leaves_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let faddr = fixture.local_addr().unwrap();
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    // Between verifier and server: passes the server's records on whole, but of the first
    // alert (the close_notify after the response) only its first 10 bytes, then stalls.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cut = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = l.accept().await {
            tokio::spawn(async move {
                let server = tokio::net::TcpStream::connect(faddr).await.unwrap();
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                });
                let (mut held, mut buf) = (Vec::new(), vec![0u8; 16384]);
                'relay: while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    held.extend_from_slice(&buf[..n]);
                    while held.len() >= 5 {
                        let end = 5 + u16::from_be_bytes([held[3], held[4]]) as usize;
                        if held.len() < end {
                            break;
                        }
                        let record: Vec<u8> = held.drain(..end).collect();
                        let alert = record[0] == 21;
                        if cw.write_all(if alert { &record[..10] } else { &record }).await.is_err() || alert {
                            break 'relay;
                        }
                    }
                }
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            });
        }
    });
    let server = format!("localhost:{}", cut.port());
    let config = VerifierConfig::new(AllowList::parse(&server).unwrap(), RootStore::from_pem(&ca_pem).unwrap());
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    let env = Env { fixture: faddr, server, verifier, ca_pem, reports };
    let err =
        run(&env, "/json", &[], RevealConfig::new(Reveal::All, Reveal::All)).await.err().expect("fast path refused");
    assert!(matches!(err, ProverError::UnprovenReceived(10)), "{err}");
    let out =
        run(&env, "/json", &[], RevealConfig::new(Reveal::All, Reveal::AllButLast(1))).await.expect("the ZK path");
    assert_eq!(out.verified.received.ending(), Ending::Open, "no close_notify: the verdict says it may be cut off");
    assert_eq!(out.verified.exchanges[0].response_complete, Some(true), "complete by its Content-Length all the same");
}

/// The limits bound application data; the handshake and the records' overhead come on top
/// (`TLS_OVERHEAD`): a response of exactly `max_recv` bytes, behind an RSA certificate chain
/// larger than a kilobyte, is notarized. The verdict's phase figures are measured: each phase
/// took time and moved bytes, and together they fit in the prover's wall time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_of_exactly_max_recv_passes_and_the_phases_are_measured() {
    let mut env = env_with(KeyType::Rsa2048, None).await;
    let first = run(&env, "/bytes?n=3000", &[], RevealConfig::default()).await.expect("notarization");
    env.reports.recv().await;
    let exact = first.response.len() as u32;
    let started = std::time::Instant::now();
    let config = ProverConfig { max_recv: exact, ..prover_config(&env) };
    let request = RequestBuilder::get("localhost", "/bytes?n=3000").build().unwrap().bytes;
    let counted = std::sync::Arc::new([std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0)]);
    let socket = Counting {
        inner: WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap(),
        counted: counted.clone(),
    };
    let out = notarize(socket, config, request, RevealConfig::default()).await.expect("a response of exactly max_recv");
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(out.verified.received.len, exact as u64);
    let s = &out.verified.stats;
    for (name, phase) in [("preprocess", &s.preprocess), ("online", &s.online), ("prove", &s.prove)] {
        assert!(phase.millis > 0.0 && phase.millis <= wall_ms, "{name}: {} ms of {wall_ms} ms", phase.millis);
        assert!(phase.bytes_up > 0 && phase.bytes_down > 0, "{name}: {phase:?}");
    }
    // preprocessing overlaps the online phase; the online phase and the proof do not overlap
    assert!(s.online.millis + s.prove.millis <= wall_ms, "{s:?} in {wall_ms} ms");
    assert!(s.online.millis + s.prove.millis >= wall_ms / 4.0, "{s:?} in {wall_ms} ms");
    // The phases' bytes are the session's payload bytes, which the socket carried with their
    // framing (a few bytes a frame) and the control messages.
    let [up, down] = [0, 1].map(|i| counted[i].load(std::sync::atomic::Ordering::Relaxed));
    let (phases_up, phases_down) = (
        s.preprocess.bytes_up + s.online.bytes_up + s.prove.bytes_up,
        s.preprocess.bytes_down + s.online.bytes_down + s.prove.bytes_down,
    );
    assert!(phases_up <= up && phases_up * 10 >= up * 9, "{phases_up} of {up} bytes up");
    assert!(phases_down <= down && phases_down * 10 >= down * 9, "{phases_down} of {down} bytes down");
}

/// A socket that counts the bytes it sends and receives ([0] up, [1] down).
struct Counting {
    inner: WsSocket,
    counted: std::sync::Arc<[std::sync::atomic::AtomicU64; 2]>,
}

impl tlsproof::transport::MessageSocket for Counting {
    async fn send(&mut self, msg: &[u8]) -> Result<(), tlsproof::transport::TransportError> {
        self.counted[0].fetch_add(msg.len() as u64, std::sync::atomic::Ordering::Relaxed);
        self.inner.send(msg).await
    }
    async fn recv(&mut self) -> Result<Option<Vec<u8>>, tlsproof::transport::TransportError> {
        let msg = self.inner.recv().await?;
        if let Some(m) = &msg {
            self.counted[1].fetch_add(m.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(msg)
    }
    async fn close(&mut self) -> Result<(), tlsproof::transport::TransportError> {
        self.inner.close().await
    }
}

/// The relay stops a direction once it carries more than its limit plus the TLS overhead
/// (64 KiB: the handshake, certificates, record framing), whatever the bytes are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_stops_each_direction_past_its_limit_and_the_tls_overhead() {
    use futures::SinkExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_tungstenite::tungstenite::Message;
    const LIMIT: usize = 1024;
    const OVERHEAD: usize = 64 * 1024;
    for direction in ["sent", "received"] {
        // A "server" that reads everything, and in the second round also sends more than the
        // received direction may carry.
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = l.local_addr().unwrap();
        let chatty = direction == "received";
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = l.accept().await {
                tokio::spawn(async move {
                    if chatty {
                        let _ = tcp.write_all(&vec![0x17; LIMIT + OVERHEAD + 1]).await;
                    }
                    let _ = tcp.read_to_end(&mut Vec::new()).await;
                });
            }
        });
        let config = VerifierConfig::new(AllowList::parse(&target.to_string()).unwrap(), RootStore::mozilla());
        let server = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
        let vaddr = server.local_addr().unwrap();
        let (tx, mut reports) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(server.run(tx));
        let mut ws = accepted_raw_session(vaddr, target, LIMIT as u32).await;
        // A ClientHello for the IP (no SNI), then application-data records: valid TLS framing
        // up to just past the limit and the overhead.
        let mut c = tlsproof::tls::Client::new(
            tlsproof::tls::ClientConfig::new(RootStore::mozilla()),
            &target.ip().to_string(),
            tlsproof::tls::unix_time(now()),
        )
        .unwrap();
        let mut stream = c.take_outgoing();
        if direction == "sent" {
            while stream.len() <= LIMIT + OVERHEAD {
                stream.extend_from_slice(&[0x17, 3, 3, 0x40, 0]);
                stream.extend_from_slice(&[0; 0x4000]);
            }
        }
        for chunk in stream.chunks(16 * 1024) {
            ws.send(Message::binary([&[1u8][..], chunk].concat())).await.unwrap();
        }
        let report = tokio::time::timeout(std::time::Duration::from_secs(30), reports.recv()).await.unwrap().unwrap().1;
        match &report {
            Err(VerifierError::TranscriptTooLarge { what, got, limit })
                if *what == direction && *limit == (LIMIT + OVERHEAD) as u64 && *got > *limit => {}
            other => panic!("{direction}: {other:?}"),
        }
        drop(ws);
    }
}

type RawSession = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A session with the verifier at `vaddr`, asked by hand for `target` by its IP (so no SNI) with
/// both limits at `limit`, once the verifier has accepted it: its TLS channel is the caller's.
async fn accepted_raw_session(vaddr: std::net::SocketAddr, target: std::net::SocketAddr, limit: u32) -> RawSession {
    use futures::{SinkExt, StreamExt};
    use tlsproof::protocol::messages::{SessionRequest, PROTOCOL_VERSION};
    use tokio_tungstenite::tungstenite::Message;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{vaddr}/")).await.unwrap();
    let req = ControlMessage::Request(SessionRequest {
        version: PROTOCOL_VERSION,
        server: target.to_string(),
        server_name: target.ip().to_string(),
        max_sent: limit,
        max_recv: limit,
        preprocess: 0,
        prg: Default::default(),
        response_in_zk: false,
        mode: Default::default(),
    });
    ws.send(Message::binary([&[0u8][..], &req.encode()].concat())).await.unwrap();
    loop {
        let m = ws.next().await.unwrap().unwrap().into_data();
        if m.first() == Some(&0) && matches!(ControlMessage::decode(&m[1..]), Ok(ControlMessage::Accepted { .. })) {
            return ws;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_attestation_presents_the_response_and_opens_the_hidden_token() {
    use tlsproof::attestation::{Direction, Presentation, PresentationError, Scheme, SigningKey};
    for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
        let key = std::sync::Arc::new(SigningKey::generate(scheme));
        let k = key.clone();
        let mut env = env_configured(KeyType::EcdsaP256, None, move |c| c.signing_key = Some(k)).await;
        let token = "Bearer attested-token-7";
        let request = RequestBuilder::get("localhost", "/json").header("Authorization", token).build().unwrap().bytes;
        let at = request.windows(token.len()).position(|w| w == token.as_bytes()).unwrap() as u64;
        let hidden = at..at + token.len() as u64;
        let mut reveal =
            RevealConfig::new(Reveal::Ranges(vec![0..at as usize, hidden.end as usize..request.len()]), Reveal::All);
        reveal.commit_sent = Reveal::Ranges(vec![at as usize..hidden.end as usize]);
        let out = run(&env, "/json", &[("Authorization", token)], reveal).await.expect("notarization");
        let verified = env.reports.recv().await.unwrap().1.unwrap();
        let session = out.attestation.expect("the verifier signs");
        assert_eq!(session.verifier_key, key.verifying_key(), "signed by the verifier's key");
        let a = session.attestation.verify(&key.verifying_key()).unwrap();
        assert_eq!(
            (a.server_name.as_str(), a.port, a.connection_time),
            ("localhost", env.fixture.port(), verified.connection_time)
        );
        assert_eq!((a.tls_version, a.cipher_suite, a.group), (0x0303, 0xc02b, verified.tls.group_id));
        assert_eq!((a.sent.len, a.received.len), (verified.sent.len, verified.received.len));
        // the whole response (fast path) and the token the verifier never saw
        let recv_len = verified.received.len;
        let p = Presentation::build(
            &session.attestation,
            &session.secrets,
            &[(Direction::Received, 0..recv_len), (Direction::Sent, hidden.clone())],
        )
        .unwrap();
        let json = serde_json::to_string(&p).unwrap();
        let shown = serde_json::from_str::<Presentation>(&json).unwrap().verify(&key.verifying_key()).unwrap();
        assert_eq!(shown.disclosed[0].data, out.response, "the response as the prover received it");
        assert!(shown.disclosed[0].revealed_to_verifier);
        assert_eq!(
            (shown.disclosed[1].data.as_slice(), shown.disclosed[1].revealed_to_verifier),
            (token.as_bytes(), false)
        );
        // a third party trusting another key refuses it
        let other = SigningKey::generate(scheme).verifying_key();
        assert!(matches!(p.verify(&other), Err(PresentationError::Attestation(_))));
        // and a presentation of a range nobody attested cannot be built
        assert!(matches!(
            Presentation::build(&session.attestation, &session.secrets, &[(Direction::Sent, 0..3)]),
            Err(PresentationError::NotAttested { .. })
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_signing_key_the_verdict_comes_without_attestation() {
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let out = run(&env, "/json", &[], RevealConfig::default()).await.expect("notarization");
    env.reports.recv().await.unwrap().1.unwrap();
    assert!(out.attestation.is_none());
}

/// A second request cannot ride in the first (docs/protocol.md, "One request, one response"):
/// hidden in a cookie's value, its line breaks make the prover refuse before anything reaches
/// the server (the proof would fail on them); revealed, with `Transfer-Encoding: chunked`
/// beside `Content-Length` so that a server reading the chunked framing would take it as a
/// request of its own, the verifier refuses the exchange after the proof.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_request_cannot_ride_in_the_first() {
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    let smuggled = b"GET /bytes?n=5 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let body = [&b"0\r\n\r\n"[..], smuggled].concat();
    let head = format!("POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    let request = [head.as_bytes(), &body].concat();
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let reveal = RevealConfig::new(Reveal::All, Reveal::All);
    let err = notarize(socket, prover_config(&env), request, reveal).await.err().expect("refused");
    assert!(matches!(&err, ProverError::VerifierRejected(r) if r.contains("Transfer-Encoding")), "{err}");
    let (_, report) = env.reports.recv().await.unwrap();
    assert!(
        matches!(
            report,
            Err(VerifierError::Exchange(tlsproof::protocol::disclose::exchange::ExchangeFault {
                exchange: 1,
                error: tlsproof::protocol::disclose::exchange::ExchangeError::TransferEncoding
            }))
        ),
        "{report:?}"
    );

    let cookie = [&b"x\r\n\r\n"[..], &smuggled[..smuggled.len() - 4]].concat();
    let request = [&b"GET /json HTTP/1.1\r\nHost: localhost\r\nCookie: "[..], &cookie, b"\r\n\r\n"].concat();
    let at = request.windows(8).position(|w| w == b"Cookie: ").unwrap() + 8;
    let reveal = RevealConfig::new(Reveal::Ranges(vec![0..at, at + cookie.len()..request.len()]), Reveal::All);
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let err = notarize(socket, prover_config(&env), request, reveal).await.err().expect("refused");
    assert!(
        matches!(&err, ProverError::Reveal(tlsproof::protocol::disclose::reveal::RevealError::HiddenLineBreak { at: a }) if *a == at as u64 + 1),
        "{err}"
    );
    assert_eq!(err.code(), "BAD_OPTIONS");
}

/// A prover that floods the channel its session's mode does not use (Ferret's beside the
/// connection in proxy mode, the relayed TLS bytes in MPC mode) with 10^6 one-byte frames is
/// refused at its first such frame after the request; one that floods control, which the
/// verifier reads only between steps, is refused once 1 MiB of frames (128 B charged each)
/// waits there. Either way the verifier holds at most that inbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_of_tiny_frames_are_refused_in_both_modes() {
    use futures::SinkExt;
    use tlsproof::protocol::messages::{SessionMode, SessionRequest, PROTOCOL_VERSION};
    use tlsproof::wire::mux::{ChannelId, MuxError};
    use tokio_tungstenite::tungstenite::Message;
    let mut env = env_with(KeyType::EcdsaP256, None).await;
    for (mode, channel) in [
        (SessionMode::Proxy, ChannelId::Cot),
        (SessionMode::Mpc, ChannelId::Tls),
        (SessionMode::Proxy, ChannelId::Control),
    ] {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/", env.verifier)).await.unwrap();
        let request = SessionRequest {
            version: PROTOCOL_VERSION,
            mode,
            server: env.server.clone(),
            server_name: "localhost".into(),
            max_sent: 1024,
            max_recv: 4096,
            preprocess: 0,
            prg: Default::default(),
            response_in_zk: false,
        };
        ws.send(Message::binary([vec![ChannelId::Control as u8], ControlMessage::Request(request).encode()].concat()))
            .await
            .unwrap();
        for k in 0..1_000_000 {
            if ws.feed(Message::binary(vec![channel as u8, 7])).await.is_err()
                || (k % 1024 == 0 && ws.flush().await.is_err())
            {
                break;
            }
        }
        let report =
            tokio::time::timeout(std::time::Duration::from_secs(60), env.reports.recv()).await.unwrap().unwrap().1;
        let expected = |e: &MuxError| match channel {
            ChannelId::Control => matches!(e, MuxError::InboxOverflow { channel: ChannelId::Control, max: 1048576 }),
            _ => matches!(e, MuxError::UnusedChannel(c) if *c == channel),
        };
        assert!(matches!(&report, Err(VerifierError::Mux(e)) if expected(e)), "{mode:?}, {channel:?}: {report:?}");
    }
}

/// What the prover refuses of its own options it refuses before it opens a session: suites MPC
/// mode does not implement, no version at all, a certificate name that is not the host dialed.
#[test]
fn the_prover_refuses_its_own_impossible_options_before_connecting() {
    use tlsproof::protocol::messages::TlsVersion;
    use tlsproof::protocol::prover::ProverMode;
    let config = ProverConfig {
        server: "localhost:4443".into(),
        server_name: "localhost".into(),
        roots: RootStore::mozilla(),
        max_sent: 4096,
        max_recv: 4096,
        now: now(),
        step_timeout: tlsproof::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: PrgKind::fastest_here(),
        mode: ProverMode::Proxy,
        tls_versions: vec![TlsVersion::Tls12, TlsVersion::Tls13],
        tls13_suites: tlsproof::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        tls12_suites: tlsproof::tls::CipherSuite::ALL.to_vec(),
    };
    assert!(config.check().is_ok());
    // MPC mode offers both versions, or either, with a two-party suite of each offered
    let mpc = ProverConfig { mode: ProverMode::Mpc { proxy_url: "ws://127.0.0.1:1/".into() }, ..config };
    assert!(mpc.check().is_ok());
    let chacha12 = vec![tlsproof::tls::CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256];
    let mpc = ProverConfig { tls12_suites: chacha12, ..mpc };
    let err = mpc.check().unwrap_err();
    assert!(matches!(err, ProverError::Unsupported(what) if what.contains("TLS 1.2 suites in MPC mode")), "{err}");
    assert_eq!(err.code(), "BAD_OPTIONS");
    let none = ProverConfig { tls_versions: Vec::new(), ..mpc };
    assert_eq!(none.check().unwrap_err().code(), "BAD_OPTIONS");
    let tls13 = ProverConfig { tls_versions: vec![TlsVersion::Tls13], ..none };
    assert!(tls13.check().is_ok(), "the TLS 1.2 suites matter only when TLS 1.2 is offered");
    let chacha = ProverConfig { tls13_suites: vec![tlsproof::tls::tls13::Suite13::ChaCha20Poly1305Sha256], ..tls13 };
    assert!(chacha.check().is_ok());
    let aes256 = vec![tlsproof::tls::tls13::Suite13::Aes256GcmSha384];
    let mpc = ProverConfig { tls13_suites: aes256, ..chacha };
    let err = mpc.check().unwrap_err();
    let named = "only TLS_CHACHA20_POLY1305_SHA256 and TLS_AES_128_GCM_SHA256";
    assert!(matches!(err, ProverError::Unsupported(what) if what.contains(named)), "{err}");
    let renamed = ProverConfig {
        server_name: "bank.example".into(),
        mode: ProverMode::Proxy,
        tls_versions: vec![TlsVersion::Tls12],
        ..mpc
    };
    assert_eq!(renamed.check().unwrap_err().code(), "SERVER_NAME_MISMATCH");
}
