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
    let config = || a_config(super::ProverMode::Mpc { proxy_url: "ws://p/".into() }, &[Default::default()]);
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

/// The configuration these unit tests build sessions from.
fn a_config(mode: super::ProverMode, versions: &[crate::protocol::messages::TlsVersion]) -> super::ProverConfig {
    super::ProverConfig {
        server: "a:1".into(),
        server_name: "a".into(),
        roots: crate::tls::RootStore::mozilla(),
        max_sent: 1,
        max_recv: 1,
        now: 0,
        step_timeout: std::time::Duration::from_secs(1),
        prg: Default::default(),
        mode,
        tls_versions: versions.to_vec(),
        tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        tls12_suites: crate::tls::CipherSuite::ALL.to_vec(),
    }
}

/// A handshake refused by the server's alert names the alert, the versions and suites offered
/// and what to try, by what was offered and the mode; other TLS errors stay as they are.
#[test]
fn a_refused_handshake_says_what_was_offered_and_what_to_try() {
    use super::error::refused_handshake;
    use super::ProverMode::{Mpc, Proxy};
    use crate::protocol::messages::TlsVersion::{Tls12, Tls13};
    use crate::tls::{AlertDescription, CipherSuite, Error, PeerMisbehaved};
    let alert = |d| Error::PeerMisbehaved(PeerMisbehaved::FatalAlert(AlertDescription(d)));
    let mpc = || Mpc { proxy_url: "ws://p/".into() };
    let text = |e: Error, c: super::ProverConfig| refused_handshake(e, &c).to_string();
    let only12 = text(alert(70), a_config(Proxy, &[Tls12]));
    assert!(
        only12.contains("with protocol_version (70)") && only12.contains("TLS 1.3 only needs it offered"),
        "{only12}"
    );
    assert!(
        only12.contains("TLS 1.2 with TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, ") && !only12.contains("TLS 1.3 with")
    );
    let only13 = text(alert(40), a_config(Proxy, &[Tls13]));
    assert!(only13.contains("handshake_failure (40)") && only13.contains("TLS 1.2 only needs it offered"), "{only13}");
    let both = text(alert(71), a_config(Proxy, &[Tls12, Tls13]));
    assert!(
        both.contains("insufficient_security (71)") && both.contains("; TLS 1.3 with TLS_AES_128_GCM_SHA256"),
        "{both}"
    );
    assert!(both.contains("a key exchange or a signature scheme"), "{both}");
    let aes128 =
        super::ProverConfig { tls12_suites: CipherSuite::AES_128.to_vec(), ..a_config(Proxy, &[Tls12, Tls13]) };
    let some = text(alert(40), aes128);
    assert!(some.contains("a suite not offered needs it among tls.cipherSuites (--tls12-suites"), "{some}");
    let m = text(alert(40), a_config(mpc(), &[Tls12]));
    assert!(m.contains("with tls.versions [\"1.3\"] (--tls-versions 1.3)") && !m.contains("CHACHA20"), "{m}");
    let m = text(alert(40), a_config(mpc(), &[Tls13]));
    assert!(m.contains("(TLS 1.3 with TLS_CHACHA20_POLY1305_SHA256, TLS_AES_128_GCM_SHA256)"), "{m}");
    assert!(m.contains("TLS 1.2 only is reached in MPC mode"), "{m}");
    // another alert, or another error, is the TLS error it was
    assert!(matches!(refused_handshake(alert(42), &a_config(Proxy, &[Tls12])), super::ProverError::Tls(_)));
    assert_eq!(
        text(alert(42), a_config(Proxy, &[])),
        "TLS: peer misbehaved: server sent fatal alert bad_certificate (42)"
    );
    assert_eq!(AlertDescription(200).to_string(), "alert 200");
}

/// A certificate the prover refuses says what is wrong with it (the names it has, its
/// validity) and what to try; the names, which the server chose, are cut to printable ASCII.
#[test]
fn a_refused_certificate_says_why_and_what_to_try() {
    use super::error::refused_certificate;
    use rustls_pki_types::{ServerName, UnixTime};
    let presented = ["a.example", "b\u{1b}[2J.example", "c.example", "d.example", "e.example", "f.example"];
    let name = webpki::Error::CertNotValidForName(webpki::InvalidNameContext {
        expected: ServerName::try_from("bank.example").unwrap(),
        presented: presented.iter().map(|n| n.to_string()).collect(),
    });
    assert_eq!(
        refused_certificate(name, "bank.example").to_string(),
        "TLS: the server's certificate is not accepted for bank.example: it is issued for a.example, \
         b[2J.example, c.example, d.example, 2 more. The name checked is the URL's host (or serverName): use a \
         name the certificate lists."
    );
    let t = |s| UnixTime::since_unix_epoch(std::time::Duration::from_secs(s));
    let expired = refused_certificate(webpki::Error::CertExpired { time: t(200), not_after: t(100) }, "x");
    assert!(expired.to_string().contains("it expired at 100 (Unix time), before the time checked, 200"), "{expired}");
    assert!(expired
        .to_string()
        .ends_with("Check the clock of the machine (and of the verifier, which checks at its own time)."));
    let early = refused_certificate(webpki::Error::CertNotValidYet { time: t(50), not_before: t(100) }, "x");
    assert!(early.to_string().contains("valid from 100 (Unix time), after the time checked, 50"), "{early}");
    let unknown = refused_certificate(webpki::Error::UnknownIssuer, "x").to_string();
    assert!(unknown.contains("leads to no root the prover trusts") && unknown.contains("caPem, --roots"), "{unknown}");
    assert_eq!(refused_certificate(webpki::Error::UnknownIssuer, "x").code(), "TLS_ERROR");
}
