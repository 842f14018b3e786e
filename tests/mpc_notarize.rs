//! MPC-mode notarization end to end, natively: the prover reaches the fixture server through
//! `tlsproof proxy` (the WebSocket-to-TCP proxy) while it and the verifier are the TLS client
//! together, over real WebSockets on 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]
mod common;

use std::net::SocketAddr;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::disclose::output::Ending;
use tlsproof::protocol::messages::{SessionMode, TlsVersion};
use tlsproof::protocol::prover::{prepare, ProverMode, RevealExtent, Sizing};
use tlsproof::protocol::server::{SessionReport, VerifierServer};
use tlsproof::protocol::{
    notarize, ProverConfig, ProverError, ProverOutput, Reveal, RevealConfig, VerifierConfig, VerifierError,
};
use tlsproof::proxy::{AllowList, ProxyConfig, ProxyServer};
use tlsproof::tls::RootStore;
use tlsproof::transport::WsSocket;
use tokio::sync::mpsc::UnboundedReceiver;

struct Env {
    /// `localhost:PORT` of the fixture.
    server: String,
    ca_pem: String,
    verifier: SocketAddr,
    /// `ws://…/` of a proxy that allows the fixture.
    proxy: String,
    reports: UnboundedReceiver<SessionReport>,
}

/// A fixture, a proxy allowing it, and a verifier configured by `configure` (allowing the
/// fixture unless told otherwise).
async fn env(configure: impl FnOnce(&mut VerifierConfig)) -> Env {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let server = format!("localhost:{}", fixture.local_addr().unwrap().port());
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    env_for(server, ca_pem, configure).await
}

/// A proxy allowing `server` (`localhost:PORT`, its certificate from `ca_pem`) and a verifier
/// configured by `configure`.
async fn env_for(server: String, ca_pem: String, configure: impl FnOnce(&mut VerifierConfig)) -> Env {
    let proxy = ProxyServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        ProxyConfig { allow: AllowList::parse(&server).unwrap(), ..ProxyConfig::default() },
    )
    .await
    .unwrap();
    let proxy_url = format!("ws://{}/", proxy.local_addr().unwrap());
    tokio::spawn(proxy.run());
    let mut config = VerifierConfig::new(AllowList::parse(&server).unwrap(), RootStore::from_pem(&ca_pem).unwrap());
    configure(&mut config);
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    Env { server, ca_pem, verifier, proxy: proxy_url, reports }
}

fn config(env: &Env, mode: ProverMode) -> ProverConfig {
    ProverConfig { max_sent: 2048, mode, ..common::session::prover_config(&env.server, &env.ca_pem) }
}

fn mpc(env: &Env) -> ProverMode {
    ProverMode::Mpc { proxy_url: env.proxy.clone() }
}

async fn run(env: &Env, mode: ProverMode, path: &str, reveal: RevealConfig) -> Result<ProverOutput, ProverError> {
    let request = RequestBuilder::get("localhost", path)
        .header("Authorization", "Bearer top-secret-token")
        .build()
        .unwrap()
        .bytes;
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    notarize(socket, config(env, mode), request, reveal).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mpc_session_through_the_proxy_is_verified_as_the_same_exchange_in_proxy_mode() {
    let mut env = env(|_| {}).await;
    let mpc_out = match run(&env, mpc(&env), "/bytes?n=1024", RevealConfig::default()).await {
        Ok(o) => o,
        Err(e) => panic!("prover: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
    };
    let v = &mpc_out.verified;
    assert_eq!(v.mode, SessionMode::Mpc);
    assert!(v.received.fast_path && !v.sent.fast_path, "the response by the fast path, the request by the ZK path");
    assert_eq!(v.received.bytes, mpc_out.response, "the verifier sees exactly the response");
    assert!(String::from_utf8_lossy(&mpc_out.response).starts_with("HTTP/1.1 200"));
    assert!(v.sent.printable().contains("Authorization: █████"), "{}", v.sent.printable());
    assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("top-secret"), "the token leaked");
    assert_eq!((v.sent.ending(), v.received.ending()), (Ending::CloseNotify, Ending::CloseNotify));
    assert!(v.to_string().contains("MPC mode, through the prover's proxy"), "{v}");
    let (_, report) = env.reports.recv().await.unwrap();
    assert_eq!(report.expect("the verifier's verdict"), *v);

    // The same exchange in proxy mode: the same verdict but for the mode, time and figures.
    let proxy_out = run(&env, ProverMode::Proxy, "/bytes?n=1024", RevealConfig::default()).await.expect("proxy mode");
    let p = &proxy_out.verified;
    assert_eq!(p.mode, SessionMode::Proxy);
    assert_eq!((&p.server_name, &p.server, &p.sni, &p.exchanges), (&v.server_name, &v.server, &v.sni, &v.exchanges));
    assert_eq!((&p.sent, &p.received), (&v.sent, &v.received));
    env.reports.recv().await.unwrap().1.expect("proxy-mode verdict");
}

/// TLS 1.3 in MPC mode: the same exchange as in TLS 1.2, the response on the fast path and the
/// request's token hidden by the ZK path, then a response with its last byte hidden (its key
/// stays in ZK); the verdict names TLS 1.3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mpc_session_in_tls13_is_verified_with_the_request_hidden_and_the_response_by_either_path() {
    let mut env = env(|_| {}).await;
    // max_recv exactly the response (its headers and 1,024 bytes): the server's close_notify,
    // which TLS 1.3 does not tell from data during the connection, is no data
    let tls13 =
        |env: &Env| ProverConfig { tls_versions: vec![TlsVersion::Tls13], max_recv: 1124, ..config(env, mpc(env)) };
    let request = RequestBuilder::get("localhost", "/bytes?n=1024")
        .header("Authorization", "Bearer top-secret-token")
        .build()
        .unwrap()
        .bytes;
    for reveal in [
        RevealConfig::default(),
        RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::AllButLast(1)),
    ] {
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let out = match notarize(socket, tls13(&env), request.clone(), reveal.clone()).await {
            Ok(o) => o,
            Err(e) => panic!("prover: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
        };
        let v = &out.verified;
        assert_eq!(v.mode, SessionMode::Mpc);
        assert_eq!(v.tls.version, TlsVersion::Tls13, "{v}");
        let whole = matches!(reveal.received, Reveal::All);
        assert_eq!(v.received.fast_path, whole, "the fast path exactly when the response is revealed whole");
        assert!(!v.sent.fast_path);
        assert!(String::from_utf8_lossy(&out.response).starts_with("HTTP/1.1 200"));
        assert!(v.sent.printable().contains("Authorization: █████"), "{}", v.sent.printable());
        assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("top-secret"), "the token leaked");
        assert_eq!(v.sent.ending(), Ending::CloseNotify);
        let (_, report) = env.reports.recv().await.unwrap();
        assert_eq!(report.expect("the verifier's verdict"), *v);
    }
}

/// A session prepared before its request exists: the OT and a request of up to max_sent
/// bytes garbled ahead, then, a while later, a shorter request. The connection's time is when
/// it happened, and its online phase carries no garbled request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mpc_session_prepared_ahead_takes_a_shorter_request_later() {
    let mut env = env(|_| {}).await;
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let prepared_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let prepared = prepare(
        socket,
        config(&env, mpc(&env)),
        Sizing { request_len: 2048, request_whole: false, request_hidden: 0, response: RevealExtent::Whole },
        |_| {},
    )
    .await
    .expect("prepared");
    assert_eq!(prepared.capacity(), 2048);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let request = RequestBuilder::get("localhost", "/json")
        .header("Authorization", "Bearer top-secret-token")
        .build()
        .unwrap()
        .bytes;
    assert!(request.len() < 200, "well under the 2048 bytes prepared");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let out = match prepared.notarize(request.clone(), RevealConfig::default(), now, |_| {}).await {
        Ok(o) => o,
        Err(e) => panic!("prover: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
    };
    let v = &out.verified;
    assert_eq!(v.mode, SessionMode::Mpc);
    assert_eq!(v.sent.len as usize, request.len());
    assert!(
        v.sent.printable().starts_with("GET /json HTTP/1.1") && v.sent.printable().contains("Authorization: █████"),
        "{}",
        v.sent.printable()
    );
    assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("top-secret"), "the token leaked");
    assert_eq!(v.received.bytes, out.response);
    assert!(
        v.connection_time >= prepared_at + 2,
        "the connection's time, not the preparation's: {} vs {prepared_at}",
        v.connection_time
    );
    // 2,048 bytes garbled ahead are about 14 MB of tables, all before the connection, whose
    // own (about 8 MB) are the key derivation's
    let s = &v.stats;
    assert!(s.preprocess.bytes_up > 12_000_000 && s.online.bytes_up < 9_500_000, "{s:?}");
    assert!(s.online.millis < 2000.0, "the wait before the connection is not online time: {s:?}");
    env.reports.recv().await.unwrap().1.expect("verdict");

    // The same with the default offer, both versions: the preparation takes the verifier's
    // halves of the TLS 1.3 key shares before its receipt of the tables, and the fixture
    // chooses TLS 1.3.
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let both = ProverConfig { tls_versions: vec![TlsVersion::Tls12, TlsVersion::Tls13], ..config(&env, mpc(&env)) };
    let sizing = Sizing { request_len: 1024, request_whole: false, request_hidden: 0, response: RevealExtent::Whole };
    let prepared = prepare(socket, both, sizing, |_| {}).await.expect("prepared");
    let out = match prepared.notarize(request, RevealConfig::default(), now, |_| {}).await {
        Ok(o) => o,
        Err(e) => panic!("prover: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
    };
    assert_eq!(out.verified.tls.version, TlsVersion::Tls13);
    env.reports.recv().await.unwrap().1.expect("verdict");
}

/// A prepared session refuses a request longer than it was prepared for, and in proxy mode
/// (where nothing is prepared) runs the whole session when the request comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_sessions_refuse_longer_requests_and_work_in_proxy_mode() {
    let mut env = env(|_| {}).await;
    let sizing = Sizing { request_len: 2048, request_whole: false, request_hidden: 0, response: RevealExtent::Whole };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let prepared = prepare(socket, config(&env, mpc(&env)), sizing, |_| {}).await.expect("prepared");
    match prepared.notarize(vec![b'x'; 2049], RevealConfig::default(), now, |_| {}).await {
        Err(ProverError::RequestTooLarge { len: 2049, max: 2048 }) => {}
        other => panic!("expected RequestTooLarge, got {:?}", other.map(|o| o.verified)),
    }
    // the verifier's session ends without a verdict, with the prover's reason
    let report = env.reports.recv().await.unwrap().1;
    assert!(matches!(&report, Err(VerifierError::ProverAborted(r)) if r.contains("exceeds")), "{report:?}");

    // an option the prover refuses itself is refused before it asks, and the verifier hears why
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let aes256 = ProverConfig {
        tls_versions: vec![TlsVersion::Tls13],
        tls13_suites: vec![tlsproof::tls::tls13::Suite13::Aes256GcmSha384],
        ..config(&env, mpc(&env))
    };
    match prepare(socket, aes256, sizing, |_| {}).await {
        Err(e @ ProverError::Unsupported(_)) => assert!(e.to_string().contains("TLS 1.3 suites in MPC mode"), "{e}"),
        other => panic!("expected Unsupported, got {:?}", other.err()),
    }
    let report = env.reports.recv().await.unwrap().1;
    assert!(matches!(&report, Err(VerifierError::ProverAborted(r)) if r.contains("TLS 1.3 suites")), "{report:?}");

    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let prepared = prepare(socket, config(&env, ProverMode::Proxy), sizing, |_| {}).await.expect("prepared");
    let request = RequestBuilder::get("localhost", "/json").build().unwrap().bytes;
    let out = prepared.notarize(request, RevealConfig::default(), now, |_| {}).await.expect("proxy mode");
    assert_eq!(out.verified.mode, SessionMode::Proxy);
    env.reports.recv().await.unwrap().1.expect("verdict");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mpc_session_with_a_redacted_response_takes_the_zk_path() {
    let mut env = env(|_| {}).await;
    let reveal = RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::AllButLast(1));
    let out = match run(&env, mpc(&env), "/bytes?n=2048", reveal).await {
        Ok(o) => o,
        Err(e) => panic!("prover: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
    };
    let v = &out.verified;
    let total = out.response.len();
    assert!(!v.received.fast_path && !v.sent.fast_path);
    assert_eq!(v.received.len as usize, total);
    assert_eq!(&v.received.bytes[..total - 1], &out.response[..total - 1]);
    assert_eq!(v.received.bytes[total - 1], 0, "the hidden byte is not revealed");
    env.reports.recv().await.unwrap().1.expect("verdict");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_sessions_are_refused_where_the_operator_or_the_lists_do_not_allow_them() {
    // A verifier that accepts proxy mode only.
    let mut env = env(|c| c.modes = vec![SessionMode::Proxy]).await;
    let err = run(&env, mpc(&env), "/json", RevealConfig::default()).await.err().expect("refused");
    assert!(matches!(&err, ProverError::VerifierRejected(r) if r.contains("does not accept mpc mode")), "{err}");
    assert!(matches!(env.reports.recv().await.unwrap().1, Err(VerifierError::ModeNotAllowed(SessionMode::Mpc))));

    // A verifier that does not certify the server, though the proxy would reach it.
    let mut env = env_with_verifier_allow("localhost:1").await;
    let err = run(&env, mpc(&env), "/json", RevealConfig::default()).await.err().expect("refused");
    assert_eq!(err.code(), "SERVER_NOT_ALLOWED", "{err}");
    assert!(matches!(env.reports.recv().await.unwrap().1, Err(VerifierError::Policy(_))));

    // A proxy that does not allow the server: it closes with a policy code.
    let env = env_with_proxy_allow("localhost:1").await;
    let err = run(&env, mpc(&env), "/json", RevealConfig::default()).await.err().expect("refused");
    assert_eq!(err.code(), "SERVER_NOT_ALLOWED", "{err}");

    // No proxy there at all.
    let dead = { std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap() };
    let err = run(&env, ProverMode::Mpc { proxy_url: format!("ws://{dead}/") }, "/json", RevealConfig::default())
        .await
        .err()
        .expect("no proxy");
    assert_eq!(err.code(), "PROXY_UNREACHABLE", "{err}");
}

async fn env_with_verifier_allow(allow: &str) -> Env {
    let allow = AllowList::parse(allow).unwrap();
    env(move |c| c.allow = allow).await
}

/// [`env`] with a second proxy, allowing only `allow`, in place of the first.
async fn env_with_proxy_allow(allow: &str) -> Env {
    let mut e = env(|_| {}).await;
    let proxy = ProxyServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        ProxyConfig { allow: AllowList::parse(allow).unwrap(), ..ProxyConfig::default() },
    )
    .await
    .unwrap();
    e.proxy = format!("ws://{}/", proxy.local_addr().unwrap());
    tokio::spawn(proxy.run());
    e
}

/// Against another TLS stack: OpenSSL's s_server (`-www`: an HTTP/1.0 status page, ended by
/// closing the connection), when the binary exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mpc_session_against_openssl_s_server() {
    let pki = common::make_pki(common::PkiOptions::default());
    let Some(openssl) = common::start_openssl(&pki, false) else { return };
    let mut env = env_for(format!("localhost:{}", openssl.port), pki.ca_pem.clone(), |_| {}).await;
    let out = match run(&env, mpc(&env), "/", RevealConfig::default()).await {
        Ok(o) => o,
        Err(e) => panic!("prover: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
    };
    let v = &out.verified;
    assert_eq!(v.mode, SessionMode::Mpc);
    assert!(v.received.fast_path);
    assert_eq!(v.exchanges[0].status, Some(200), "{v}");
    // the status page names the cipher the session used
    assert!(String::from_utf8_lossy(&v.received.bytes).contains("ECDHE-ECDSA-AES128-GCM-SHA256"), "{v}");
    assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("top-secret"));
    env.reports.recv().await.unwrap().1.expect("verdict");
}

/// TLS 1.3 in MPC mode against OpenSSL's s_server, accepting X25519 only with
/// TLS_AES_128_GCM_SHA256 only (the request, garbled ahead for ChaCha20-Poly1305, offered
/// first, goes record by record), and P-256 only with TLS_CHACHA20_POLY1305_SHA256 only: the
/// latter answers the X25519 share with a HelloRetryRequest, and the parties' P-256 share,
/// made in the preparation beside the X25519 one, goes in the second ClientHello.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mpc_session_in_tls13_against_openssl_s_server_with_either_group_and_suite() {
    let pki = common::make_pki(common::PkiOptions::default());
    for (suite, groups, group) in
        [("TLS_AES_128_GCM_SHA256", "X25519", "x25519"), ("TLS_CHACHA20_POLY1305_SHA256", "P-256", "secp256r1")]
    {
        let Some(openssl) = common::start_openssl_tls13(&pki, suite, groups) else { return };
        let mut env = env_for(format!("localhost:{}", openssl.port), pki.ca_pem.clone(), |_| {}).await;
        let request = RequestBuilder::get("localhost", "/").build().unwrap().bytes;
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let config = ProverConfig { tls_versions: vec![TlsVersion::Tls13], ..config(&env, mpc(&env)) };
        let out = match notarize(socket, config, request, RevealConfig::default()).await {
            Ok(o) => o,
            Err(e) => panic!("prover ({groups}): {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
        };
        let v = &out.verified;
        assert_eq!((v.tls.version, v.tls.group.as_str()), (TlsVersion::Tls13, group), "{v}");
        assert_eq!(v.tls.cipher_suite, suite, "{v}");
        assert_eq!(v.exchanges[0].status, Some(200), "{v}");
        // the status page names the cipher the session used
        assert!(String::from_utf8_lossy(&v.received.bytes).contains(suite), "{v}");
        env.reports.recv().await.unwrap().1.expect("verdict");
    }
}

/// MPC mode's default offer, both versions in one ClientHello, reaches a server that speaks
/// TLS 1.3 only (OpenSSL, TLS_AES_128_GCM_SHA256 on X25519: the request garbled ahead for
/// ChaCha20-Poly1305 goes record by record) and one that speaks TLS 1.2 only (the request
/// garbled ahead for TLS 1.3 goes record by record under TLS 1.2), with the response's last
/// byte hidden (the ZK path) in both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_modes_default_offer_reaches_a_tls13_only_and_a_tls12_only_server() {
    let defaults = ProverMode::Mpc { proxy_url: String::new() }.default_tls_versions();
    assert_eq!(defaults, [TlsVersion::Tls12, TlsVersion::Tls13]);
    let pki = common::make_pki(common::PkiOptions::default());
    let servers = [
        (common::start_openssl_tls13(&pki, "TLS_AES_128_GCM_SHA256", "X25519"), TlsVersion::Tls13),
        (common::start_openssl(&pki, false), TlsVersion::Tls12),
    ];
    for (openssl, speaks) in servers {
        let Some(openssl) = openssl else { return };
        let mut env = env_for(format!("localhost:{}", openssl.port), pki.ca_pem.clone(), |_| {}).await;
        let request = RequestBuilder::get("localhost", "/").header("Authorization", "Bearer t0k").build().unwrap();
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let config = ProverConfig { tls_versions: defaults.clone(), max_recv: 16 * 1024, ..config(&env, mpc(&env)) };
        let reveal = RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::AllButLast(1));
        let out = match notarize(socket, config, request.bytes, reveal).await {
            Ok(o) => o,
            Err(e) => panic!("prover ({speaks:?}): {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
        };
        let v = &out.verified;
        assert_eq!(v.tls.version, speaks, "{v}");
        assert!(!v.received.fast_path && v.received.bytes.starts_with(b"HTTP/1.0 200 ok"), "{v}");
        assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("t0k"));
        env.reports.recv().await.unwrap().1.expect("verdict");
    }
}

/// On the fast path the response's size stops mattering: a 16 MB response is verified in
/// both modes, and the verdict the prover shows is the verifier's, though it came without the
/// bytes (the prover put its own back and checked their digests).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_mb_response_on_the_fast_path_is_verified_in_both_modes() {
    const MAX: u32 = 16 << 20;
    let mut env = env(|c| c.max_recv = MAX).await;
    for mode in [ProverMode::Proxy, mpc(&env)] {
        let request = RequestBuilder::get("localhost", "/bytes?n=16000000").build().unwrap().bytes;
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let config = ProverConfig { max_recv: MAX, ..config(&env, mode.clone()) };
        let started = std::time::Instant::now();
        let out = match notarize(socket, config, request, RevealConfig::default()).await {
            Ok(o) => o,
            Err(e) => panic!("{mode:?}: {e} [{}]; verifier: {:?}", e.code(), env.reports.recv().await),
        };
        eprintln!("{mode:?}: 16 MB on the fast path in {:.2} s", started.elapsed().as_secs_f64());
        let v = &out.verified;
        assert!(v.received.fast_path && v.received.len > 16_000_000, "{mode:?}");
        assert_eq!(v.received.bytes, out.response, "{mode:?}");
        let (_, report) = env.reports.recv().await.unwrap();
        assert_eq!(report.expect("the verifier's verdict"), *v, "{mode:?}");
    }
}

/// Servers end connections in more ways than close_notify: one closes TCP without it (many
/// servers and CDNs), one keeps the connection open after its response though the request
/// asked to close. Both modes give a verdict without waiting for the server (the held
/// connection stays open for the fixture's 30 s keep-alive; each session here must end long
/// before), and both state the ending alike: the response complete by its framing, no
/// close_notify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_close_without_close_notify_or_hold_the_connection_end_alike_in_both_modes() {
    let mut env = env(|_| {}).await;
    for end in ["abrupt", "hold"] {
        for mode in [ProverMode::Proxy, mpc(&env)] {
            let started = std::time::Instant::now();
            let path = format!("/json?end={end}");
            let session = run(&env, mode.clone(), &path, RevealConfig::default());
            let out = match tokio::time::timeout(std::time::Duration::from_secs(20), session).await {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => panic!("{end} {mode:?}: {e}; verifier: {:?}", env.reports.recv().await),
                Err(_) => panic!("{end} {mode:?}: the session waited for the server"),
            };
            println!("{end} {mode:?}: verdict after {:.2} s", started.elapsed().as_secs_f64());
            let v = &out.verified;
            assert_eq!(v.received.ending(), Ending::Open, "{end} {mode:?}: {v}");
            assert!(v.to_string().contains("no close_notify (may be cut off)"), "{v}");
            assert_eq!(v.exchanges[0].status, Some(200), "{v}");
            assert_eq!(v.exchanges[0].response_complete, Some(true), "{end} {mode:?}: by its Content-Length: {v}");
            assert!(String::from_utf8_lossy(&v.received.bytes).ends_with(r#""status":"ok"}"#), "{v}");
            env.reports.recv().await.unwrap().1.expect("verdict");
        }
    }
}
