//! Proxy-mode notarization of TLS 1.3 sessions end to end, natively: the fixture server
//! (rustls, offering TLS 1.2 and 1.3) ← verifier ← prover offering TLS 1.3, over a real
//! WebSocket on 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::disclose::output::Ending;
use tlsproof::protocol::messages::TlsVersion;
use tlsproof::protocol::server::{SessionReport, VerifierServer};
use tlsproof::protocol::{notarize, ProverConfig, ProverOutput, Reveal, RevealConfig, VerifierConfig};
use tlsproof::proxy::AllowList;
use tlsproof::tls::RootStore;
use tlsproof::transport::WsSocket;
use tokio::sync::mpsc::UnboundedReceiver;

struct Env {
    server: String,
    verifier: SocketAddr,
    ca_pem: String,
    reports: UnboundedReceiver<SessionReport>,
}

async fn env(key_type: KeyType) -> Env {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), key_type, 30).await.unwrap();
    let server = format!("localhost:{}", fixture.local_addr().unwrap().port());
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    let config = VerifierConfig::new(AllowList::parse(&server).unwrap(), RootStore::from_pem(&ca_pem).unwrap());
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    Env { server, verifier, ca_pem, reports }
}

fn config(env: &Env, tls_versions: &[TlsVersion]) -> ProverConfig {
    ProverConfig {
        max_recv: 128 * 1024,
        tls_versions: tls_versions.to_vec(),
        ..common::session::prover_config(&env.server, &env.ca_pem)
    }
}

fn request(path: &str, token: &str) -> Vec<u8> {
    RequestBuilder::get("localhost", path).header("Authorization", token).build().unwrap().bytes
}

async fn run(env: &mut Env, path: &str, token: &str, reveal: RevealConfig) -> ProverOutput {
    run_offering(env, &[TlsVersion::Tls13], path, token, reveal).await
}

async fn run_offering(
    env: &mut Env,
    versions: &[TlsVersion],
    path: &str,
    token: &str,
    reveal: RevealConfig,
) -> ProverOutput {
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    match notarize(socket, config(env, versions), request(path, token), reveal).await {
        Ok(out) => {
            let (_, report) = env.reports.recv().await.unwrap();
            assert_eq!(report.unwrap(), out.verified, "the verifier's report is the prover's verdict");
            out
        }
        Err(e) => panic!("prover: {e}; verifier: {:?}", env.reports.recv().await),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls13_session_is_notarized_by_the_fast_path_with_a_hidden_token() {
    for (key_type, n) in [(KeyType::EcdsaP256, 1024), (KeyType::Rsa2048, 51 * 1024)] {
        let mut env = env(key_type).await;
        let out = run(&mut env, &format!("/bytes?n={n}"), "Bearer top-secret-token", RevealConfig::default()).await;
        let v = &out.verified;
        assert_eq!(
            (v.tls.version, v.tls.cipher_suite.as_str(), v.tls.group.as_str()),
            (TlsVersion::Tls13, "TLS_AES_128_GCM_SHA256", "x25519")
        );
        assert_eq!((v.server_name.as_str(), v.sni.as_deref()), ("localhost", Some("localhost")));
        assert!(v.received.fast_path && !v.sent.fast_path);
        assert_eq!(v.received.bytes, out.response, "the verifier decrypted exactly the response");
        assert_eq!(v.exchanges[0].status, Some(200));
        assert_eq!(v.exchanges[0].response_complete, Some(true));
        // Both sides' close_notify alerts are records under the application keys, opened on
        // both paths.
        assert_eq!((v.sent.ending(), v.received.ending()), (Ending::CloseNotify, Ending::CloseNotify));
        let sent = v.sent.printable();
        assert!(
            sent.starts_with(&format!("GET /bytes?n={n} HTTP/1.1")) && sent.contains("Authorization: █████"),
            "{sent}"
        );
        assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("top-secret"), "the token leaked");
        assert!(v.to_string().contains("TLS 1.3, TLS_AES_128_GCM_SHA256, key exchange x25519"), "{v}");
        // The verdict says where each record's content, type byte and padding are: the
        // response's records hold it, with tickets before and close_notify last.
        let content: usize = v.received.records.iter().filter(|r| r.content_type == 23).map(|r| r.content_len).sum();
        assert_eq!(content as u64, v.received.len);
        assert_eq!(v.received.records.last().map(|r| (r.content_type, r.content_len)), Some((21, 2)));
        assert!(v.received.records.iter().all(|r| r.padding == 0), "rustls pads nothing");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redacted_tls13_response_takes_the_zk_path_and_a_hidden_token_is_committed() {
    let mut env = env(KeyType::EcdsaP256).await;
    let token = "Bearer committed-token-42";
    let req = request("/bytes?n=3000", token);
    let at = req.windows(token.len()).position(|w| w == token.as_bytes()).unwrap();
    let reveal = RevealConfig {
        commit_sent: Reveal::Ranges(vec![at..at + token.len()]),
        ..RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::AllButLast(1))
    };
    let out = run(&mut env, "/bytes?n=3000", token, reveal).await;
    let v = &out.verified;
    let total = out.response.len();
    assert!(!v.sent.fast_path && !v.received.fast_path);
    assert_eq!(&v.received.bytes[..total - 1], &out.response[..total - 1]);
    assert_eq!(v.received.bytes[total - 1], 0, "the hidden byte stays hidden");
    assert_eq!(v.received.ending(), Ending::CloseNotify, "the ZK path opens the alerts");
    assert_eq!(v.exchanges[0].status, Some(200));
    let c = &v.commitments[0];
    assert_eq!((c.direction.as_str(), c.range.clone()), ("sent", at as u64..(at + token.len()) as u64));
    let (mine, blinder) = &out.commitments[0];
    assert_eq!(mine, c);
    let digest = Sha256::new().chain_update(token.as_bytes()).chain_update(blinder).finalize();
    assert_eq!(digest.as_slice(), &c.digest, "the digest opens to the token with the prover's blinder");
}

/// Offering both versions in one ClientHello: the fixture (TLS 1.2 and 1.3) chooses 1.3, and
/// the verifier proves what it chose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offering_both_versions_is_notarized_in_the_servers_choice() {
    let mut env = env(KeyType::EcdsaP256).await;
    for versions in [[TlsVersion::Tls12, TlsVersion::Tls13], [TlsVersion::Tls13, TlsVersion::Tls12]] {
        let out = run_offering(&mut env, &versions, "/bytes?n=2000", "Bearer t", RevealConfig::default()).await;
        let v = &out.verified;
        assert_eq!(v.tls.version, TlsVersion::Tls13);
        assert_eq!(v.received.bytes, out.response);
        assert_eq!(v.exchanges[0].status, Some(200));
    }
}

/// A verifier for an `openssl s_server -tls1_3` that speaks `suite` on `group` only.
async fn openssl_env(suite: &str, group: &str) -> Option<(common::OpensslServer, Env)> {
    let pki = common::make_pki(common::PkiOptions::default());
    let openssl = common::start_openssl_tls13(&pki, suite, group)?;
    let env = verifier_for(&openssl, &pki).await;
    Some((openssl, env))
}

/// A verifier that allows `openssl` and trusts `pki`'s root.
async fn verifier_for(openssl: &common::OpensslServer, pki: &common::Pki) -> Env {
    let server = format!("localhost:{}", openssl.port);
    let config = VerifierConfig::new(AllowList::parse(&server).unwrap(), RootStore::from_pem(&pki.ca_pem).unwrap());
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    Env { server, verifier, ca_pem: pki.ca_pem.clone(), reports }
}

/// What the CLI and the browser API offer by default in proxy mode (both versions, in one
/// ClientHello) reaches a server that speaks TLS 1.3 only and one that speaks TLS 1.2 only;
/// offering one version to a server that speaks only the other fails with the server's alert
/// by name, what was offered and what to try.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_offer_reaches_a_tls13_only_and_a_tls12_only_server() {
    let defaults = tlsproof::protocol::ProverMode::Proxy.default_tls_versions();
    assert_eq!(defaults, [TlsVersion::Tls12, TlsVersion::Tls13]);
    let pki = common::make_pki(common::PkiOptions::default());
    let servers = [
        (common::start_openssl_tls13(&pki, "TLS_AES_128_GCM_SHA256", "X25519"), TlsVersion::Tls13, TlsVersion::Tls12),
        (common::start_openssl(&pki, false), TlsVersion::Tls12, TlsVersion::Tls13),
    ];
    for (openssl, speaks, other) in servers {
        let Some(openssl) = openssl else { return };
        let mut env = verifier_for(&openssl, &pki).await;
        let out = run_offering(&mut env, &defaults, "/", "Bearer default-offer", RevealConfig::default()).await;
        assert_eq!(out.verified.tls.version, speaks);
        assert!(out.response.starts_with(b"HTTP/1.0 200 ok"));
        let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
        let err = notarize(socket, config(&env, &[other]), request("/", "x"), RevealConfig::default()).await.err();
        let err = err.expect("the server speaks the other version only");
        let text = err.to_string();
        assert_eq!(err.code(), "TLS_ERROR", "{text}");
        assert!(text.contains("the server refused the handshake with protocol_version (70)"), "{text}");
        assert!(text.contains("--tls-versions 1.2,1.3"), "{text}");
        // the prover told the verifier why it gave up: the verifier's report has the cause
        let (_, report) = env.reports.recv().await.unwrap();
        match report {
            Err(tlsproof::protocol::VerifierError::ProverAborted(reason)) => {
                assert!(reason.contains("refused the handshake with protocol_version (70)"), "{reason}")
            }
            other => panic!("the verifier's report: {other:?}"),
        }
    }
}

/// The request with its token hidden and the response's status line alone revealed: both
/// directions by the ZK path. Checks the verdict's suite and what it shows and hides.
async fn notarize_redacted(env: &mut Env, suite: &str, token: &str) {
    let reveal = RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::Ranges(vec![0..15]));
    let out = run(env, "/", token, reveal).await;
    let v = &out.verified;
    assert_eq!((v.tls.version, v.tls.cipher_suite.as_str()), (TlsVersion::Tls13, suite));
    assert!(!v.sent.fast_path && !v.received.fast_path);
    assert!(
        v.sent.printable().contains("Authorization: █") && !String::from_utf8_lossy(&v.sent.bytes).contains(token),
        "{}",
        v.sent.printable()
    );
    assert_eq!(&v.received.bytes[..15], &out.response[..15]);
    assert!(out.response.starts_with(b"HTTP/1.0 200 ok"), "{}", String::from_utf8_lossy(&out.response[..40]));
    assert!(v.received.bytes[15..].iter().all(|&b| b == 0), "the rest of the response stays hidden");
}

/// A server that speaks ChaCha20-Poly1305 only (`openssl s_server`): the request with its
/// token hidden and the response redacted both take the ZK path, over ChaCha20 blocks proven
/// in ZK, and the verifier checks every record's Poly1305 tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chacha20_poly1305_session_is_notarized_by_the_zk_path() {
    let Some((_openssl, mut env)) = openssl_env("TLS_CHACHA20_POLY1305_SHA256", "X25519").await else { return };
    notarize_redacted(&mut env, "TLS_CHACHA20_POLY1305_SHA256", "Bearer chacha-secret").await;
}

/// A server that speaks TLS_AES_256_GCM_SHA384 on P-256 only: the key derivation runs on
/// SHA-384, the ZK path over AES-256 blocks; then the response revealed whole, by the fast
/// path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aes256_gcm_sha384_session_is_notarized_by_both_paths() {
    let Some((_openssl, mut env)) = openssl_env("TLS_AES_256_GCM_SHA384", "P-256").await else { return };
    notarize_redacted(&mut env, "TLS_AES_256_GCM_SHA384", "Bearer aes256-secret").await;
    let reveal = RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::All);
    let out = run(&mut env, "/", "Bearer aes256-secret", reveal).await;
    let v = &out.verified;
    assert_eq!((v.tls.cipher_suite.as_str(), v.tls.group.as_str()), ("TLS_AES_256_GCM_SHA384", "secp256r1"));
    assert!(!v.sent.fast_path && v.received.fast_path);
    assert_eq!(v.received.bytes, out.response);
}
