//! Proxy-mode notarization of TLS 1.2 sessions in the AES-256-GCM (SHA-384 PRF) and
//! ChaCha20-Poly1305 suites, end to end against `openssl s_server -tls1_2` restricted to one
//! suite: the prover's default offer reaches it, and the verifier proves the suite the server
//! chose by the fast path (the response revealed whole) and by the ZK path (one byte hidden).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::net::SocketAddr;
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::messages::TlsVersion;
use tlsproof::protocol::server::{SessionReport, VerifierServer};
use tlsproof::protocol::{notarize, ProverConfig, ProverError, ProverOutput, Reveal, RevealConfig, VerifierConfig};
use tlsproof::proxy::AllowList;
use tlsproof::tls::{CipherSuite, RootStore};
use tlsproof::transport::WsSocket;
use tokio::sync::mpsc::UnboundedReceiver;

struct Env {
    server: String,
    verifier: SocketAddr,
    ca_pem: String,
    reports: UnboundedReceiver<SessionReport>,
}

/// A verifier for an `openssl s_server -tls1_2` that speaks `cipher` only, with a leaf of `leaf`.
async fn openssl_env(cipher: &str, leaf: common::LeafKey) -> Option<(common::OpensslServer, Env)> {
    let pki = common::make_pki(common::PkiOptions { leaf, ..Default::default() });
    let openssl = common::start_openssl_tls12(&pki, cipher)?;
    let server = format!("localhost:{}", openssl.port);
    let config = VerifierConfig::new(AllowList::parse(&server).unwrap(), RootStore::from_pem(&pki.ca_pem).unwrap());
    let vserver = VerifierServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let verifier = vserver.local_addr().unwrap();
    let (tx, reports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(vserver.run(tx));
    Some((openssl, Env { server, verifier, ca_pem: pki.ca_pem.clone(), reports }))
}

/// The prover's configuration by default in proxy mode, TLS 1.2 only: every suite offered.
fn config(env: &Env) -> ProverConfig {
    ProverConfig {
        max_recv: 128 * 1024,
        tls_versions: vec![TlsVersion::Tls12],
        ..common::session::prover_config(&env.server, &env.ca_pem)
    }
}

fn request(token: &str) -> Vec<u8> {
    RequestBuilder::get("localhost", "/").header("Authorization", token).build().unwrap().bytes
}

async fn run(env: &mut Env, config: ProverConfig, token: &str, reveal: RevealConfig) -> ProverOutput {
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    match notarize(socket, config, request(token), reveal).await {
        Ok(out) => {
            let (_, report) = env.reports.recv().await.unwrap();
            assert_eq!(report.unwrap(), out.verified, "the verifier's report is the prover's verdict");
            out
        }
        Err(e) => panic!("prover: {e}; verifier: {:?}", env.reports.recv().await),
    }
}

/// One server restricted to `suite`: the fast path (the token hidden, the response revealed
/// whole), then the ZK path (the response's last byte hidden too).
async fn notarize_both_paths(cipher: &str, leaf: common::LeafKey, suite: CipherSuite) {
    let Some((_openssl, mut env)) = openssl_env(cipher, leaf).await else { return };
    let token = "Bearer suite-secret-token";
    let hide_token = || Reveal::AllExceptHeaders(vec!["authorization".into()]);
    let cfg = config(&env);
    let out = run(&mut env, cfg, token, RevealConfig::new(hide_token(), Reveal::All)).await;
    let v = &out.verified;
    assert_eq!(
        (v.tls.version, v.tls.cipher_suite.as_str(), v.tls.cipher_suite_id),
        (TlsVersion::Tls12, suite.name(), suite.id())
    );
    assert!(v.to_string().contains(&format!("TLS 1.2, {}", suite.name())), "{v}");
    assert!(!v.sent.fast_path && v.received.fast_path);
    assert_eq!(v.received.bytes, out.response, "the verifier decrypted exactly the response");
    assert!(out.response.starts_with(b"HTTP/1.0 200 ok"), "{}", String::from_utf8_lossy(&out.response[..40]));
    assert!(v.sent.printable().contains("Authorization: █"), "{}", v.sent.printable());
    assert!(!String::from_utf8_lossy(&v.sent.bytes).contains("suite-secret"), "the token leaked");

    let cfg = config(&env);
    let out = run(&mut env, cfg, token, RevealConfig::new(hide_token(), Reveal::AllButLast(1))).await;
    let v = &out.verified;
    assert_eq!(v.tls.cipher_suite_id, suite.id());
    assert!(!v.sent.fast_path && !v.received.fast_path);
    let total = out.response.len();
    assert_eq!(&v.received.bytes[..total - 1], &out.response[..total - 1]);
    assert_eq!(v.received.bytes[total - 1], 0, "the hidden byte stays hidden");

    // the default offer of proxy mode, both versions in one ClientHello, reaches it too
    let both = ProverConfig { tls_versions: vec![TlsVersion::Tls12, TlsVersion::Tls13], ..config(&env) };
    let out = run(&mut env, both, token, RevealConfig::new(hide_token(), Reveal::All)).await;
    assert_eq!((out.verified.tls.version, out.verified.tls.cipher_suite_id), (TlsVersion::Tls12, suite.id()));
    assert_eq!(out.verified.received.bytes, out.response);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecdhe_ecdsa_aes256_gcm_sha384_is_notarized_by_both_paths() {
    notarize_both_paths(
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        common::LeafKey::EcdsaP256,
        CipherSuite::EcdheEcdsaAes256GcmSha384,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecdhe_rsa_aes256_gcm_sha384_is_notarized_by_both_paths() {
    notarize_both_paths("ECDHE-RSA-AES256-GCM-SHA384", common::LeafKey::Rsa2048, CipherSuite::EcdheRsaAes256GcmSha384)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecdhe_ecdsa_chacha20_poly1305_is_notarized_by_both_paths() {
    notarize_both_paths(
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        common::LeafKey::EcdsaP256,
        CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecdhe_rsa_chacha20_poly1305_is_notarized_by_both_paths() {
    notarize_both_paths(
        "ECDHE-RSA-CHACHA20-POLY1305",
        common::LeafKey::Rsa2048,
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256,
    )
    .await;
}

/// A prover that offers only AES-128-GCM to a server restricted to AES-256-GCM fails the
/// handshake: the server has no suite in common with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offering_aes128_only_does_not_reach_an_aes256_only_server() {
    let Some((_openssl, env)) = openssl_env("ECDHE-ECDSA-AES256-GCM-SHA384", common::LeafKey::EcdsaP256).await else {
        return;
    };
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let config = ProverConfig { tls12_suites: CipherSuite::AES_128.to_vec(), ..config(&env) };
    let err = notarize(socket, config, request("x"), RevealConfig::default()).await.err().expect("no common suite");
    assert_eq!(err.code(), "TLS_ERROR", "{err}");
}

/// MPC mode's two-party client implements the AES-128-GCM suites only: a prover configured for
/// MPC mode with TLS 1.2 suites none of which is one of them is refused before it connects,
/// saying what MPC mode supports; one AES-128-GCM suite among them is enough.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_mode_without_an_aes128_suite_is_refused_before_connecting() {
    let Some((_openssl, env)) = openssl_env("ECDHE-ECDSA-AES128-GCM-SHA256", common::LeafKey::EcdsaP256).await else {
        return;
    };
    let mpc = |tls12_suites: Vec<CipherSuite>| ProverConfig {
        mode: tlsproof::protocol::prover::ProverMode::Mpc { proxy_url: "ws://127.0.0.1:1/".into() },
        tls12_suites,
        ..config(&env)
    };
    let no_aes128 = || mpc(vec![CipherSuite::EcdheEcdsaAes256GcmSha384, CipherSuite::EcdheRsaChaCha20Poly1305Sha256]);
    let err = no_aes128().check().expect_err("refused locally");
    assert!(matches!(err, ProverError::Unsupported(_)) && err.code() == "BAD_OPTIONS", "{err}");
    assert_eq!(
        err.to_string(),
        "not supported: these TLS 1.2 suites in MPC mode, which supports only \
         TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 and TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
    );
    let socket = WsSocket::connect(&format!("ws://{}/", env.verifier)).await.unwrap();
    let err = notarize(socket, no_aes128(), request("x"), RevealConfig::default()).await.err().expect("refused");
    assert!(matches!(err, ProverError::Unsupported(_)), "{err}");
    assert!(mpc(vec![CipherSuite::EcdheEcdsaAes256GcmSha384, CipherSuite::EcdheRsaAes128GcmSha256]).check().is_ok());
}
