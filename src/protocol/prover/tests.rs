/// A session's future is built on the caller's stack and moved into the executor; in wasm
/// the main thread's stack is small (an MPC session's future of 160 KB, moved a few times,
/// overflowed it). Its big parts are boxed, which keeps it small.
#[test]
fn a_sessions_future_stays_small() {
    struct Idle;
    impl crate::transport::MessageSocket for Idle {
        async fn send(&mut self, _: &[u8]) -> Result<(), crate::transport::TransportError> {
            Ok(())
        }
        async fn recv(&mut self) -> Result<Option<Vec<u8>>, crate::transport::TransportError> {
            Ok(None)
        }
        async fn close(&mut self) -> Result<(), crate::transport::TransportError> {
            Ok(())
        }
    }
    let config = || super::ProverConfig {
        server: "a:1".into(),
        server_name: "a".into(),
        roots: crate::tls::RootStore::mozilla(),
        max_sent: 1,
        max_recv: 1,
        now: 0,
        step_timeout: std::time::Duration::from_secs(1),
        prg: Default::default(),
        mode: super::ProverMode::Mpc { proxy_url: "ws://p/".into() },
        tls_versions: vec![Default::default()],
        tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        tls12_suites: crate::tls::CipherSuite::ALL.to_vec(),
    };
    let session = super::notarize_with_progress(Idle, config(), vec![], Default::default(), |_| {});
    assert!(std::mem::size_of_val(&session) < 16 * 1024, "{} bytes", std::mem::size_of_val(&session));
    let sizing = super::Sizing {
        request_len: 1,
        request_whole: false,
        request_hidden: 1,
        response: super::RevealExtent::Nothing,
    };
    let preparing = super::prepare(Idle, config(), sizing, |_| {});
    assert!(std::mem::size_of_val(&preparing) < 16 * 1024, "{} bytes", std::mem::size_of_val(&preparing));
}

/// A handshake refused by the server's alert names the alert, what was offered and what to
/// try, by the versions offered and the mode; other TLS errors stay as they are.
#[test]
fn a_refused_handshake_says_what_was_offered_and_what_to_try() {
    use super::error::refused_handshake;
    use crate::protocol::messages::{SessionMode, TlsVersion};
    use crate::tls::{AlertDescription, Error, PeerMisbehaved};
    let alert = |d| Error::PeerMisbehaved(PeerMisbehaved::FatalAlert(AlertDescription(d)));
    let text = |e: Error, v: &[TlsVersion], m| refused_handshake(e, v, m).to_string();
    let only12 = text(alert(70), &[TlsVersion::Tls12], SessionMode::Proxy);
    assert!(
        only12.contains("with protocol_version (70)") && only12.contains("TLS 1.3 only needs it offered"),
        "{only12}"
    );
    let only13 = text(alert(40), &[TlsVersion::Tls13], SessionMode::Proxy);
    assert!(only13.contains("handshake_failure (40)") && only13.contains("TLS 1.2 only needs it offered"), "{only13}");
    let both = text(alert(71), &[TlsVersion::Tls12, TlsVersion::Tls13], SessionMode::Proxy);
    assert!(both.contains("insufficient_security (71)") && both.contains("AES-256-GCM or ChaCha20-Poly1305"), "{both}");
    let mpc = text(alert(40), &[TlsVersion::Tls12], SessionMode::Mpc);
    assert!(mpc.contains("proxy mode reaches servers that require TLS 1.3"), "{mpc}");
    // another alert, or another error, is the TLS error it was
    assert!(matches!(
        refused_handshake(alert(42), &[TlsVersion::Tls12], SessionMode::Proxy),
        super::ProverError::Tls(_)
    ));
    assert_eq!(
        text(alert(42), &[], SessionMode::Proxy),
        "TLS: peer misbehaved: server sent fatal alert bad_certificate (42)"
    );
    assert_eq!(AlertDescription(200).to_string(), "alert 200");
}
