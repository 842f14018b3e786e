//! Every check the client makes, violated once: a specific error, an alert where TLS says so,
//! and no panic.
#![cfg(not(target_arch = "wasm32"))]
mod common;
use common::*;
use tlsproof::tls::codec::{handshake_message, split_records};
use tlsproof::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
use tlsproof::tls::{Client, ClientConfig, Error, PeerMisbehaved};

fn alert_record(desc: u8) -> Vec<u8> {
    vec![21, 3, 3, 0, 2, 2, desc]
}

fn fresh(pki: &Pki, name: &str) -> Client {
    Client::new(client_config(pki), name, now()).unwrap()
}

fn record(typ: u8, payload: &[u8]) -> Vec<u8> {
    let mut r = vec![typ, 3, 3];
    r.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    r.extend_from_slice(payload);
    r
}

fn server_hello(suite: u16, version: u16, exts: &[u8]) -> Vec<u8> {
    let mut b = version.to_be_bytes().to_vec();
    b.extend_from_slice(&[0x55; 32]);
    b.push(0);
    b.extend_from_slice(&suite.to_be_bytes());
    b.push(0);
    if !exts.is_empty() {
        b.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        b.extend_from_slice(exts);
    }
    record(22, &handshake_message(2, &b))
}

/// Map a handshake-stream offset of message `typ` to wire offsets of its body in `wire`
/// (plaintext records only). Returns the wire offset of body byte `i` for each i.
fn body_wire_offsets(wire: &[u8], typ: u8) -> Vec<usize> {
    let (recs, _) = split_records(wire).unwrap();
    let mut stream = Vec::new(); // (byte, wire offset)
    let mut off = 0;
    for (h, payload) in recs {
        if h.content_type == 22 {
            for (i, b) in payload.iter().enumerate() {
                stream.push((*b, off + 5 + i));
            }
        }
        off += 5 + h.length;
    }
    let mut p = 0;
    while p + 4 <= stream.len() {
        let t = stream[p].0;
        let len = ((stream[p + 1].0 as usize) << 16) | ((stream[p + 2].0 as usize) << 8) | stream[p + 3].0 as usize;
        if t == typ {
            return stream[p + 4..p + 4 + len].iter().map(|x| x.1).collect();
        }
        p += 4 + len;
    }
    panic!("message {typ} not found");
}

fn handshake_err(client: Client, scfg: std::sync::Arc<rustls::ServerConfig>, hook: Hook<'_>) -> (Error, Harness) {
    let mut h = Harness::new(client, scfg);
    let e = h.handshake(hook).unwrap_err();
    (e, h)
}

#[test]
fn untrusted_ca_is_rejected_with_unknown_ca_alert() {
    let pki = make_pki(PkiOptions::default());
    let other = make_pki(PkiOptions { ca_name: "another CA".into(), ..Default::default() });
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let client = Client::new(client_config(&other), "fixture.test", now()).unwrap();
    let (e, mut h) = handshake_err(client, scfg, &mut no_hook());
    assert_eq!(e, Error::Certificate(webpki::Error::UnknownIssuer));
    assert_eq!(h.client.take_outgoing(), alert_record(48));
    // After failure everything reports the earlier failure.
    assert!(matches!(h.client.feed(&[1, 2, 3]), Err(Error::AlreadyFailed(_))));
    // A different CA with the same name: the chain signature does not verify.
    let same_name = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let client = Client::new(client_config(&same_name), "fixture.test", now()).unwrap();
    let (e, _) = handshake_err(client, scfg, &mut no_hook());
    assert_eq!(e, Error::Certificate(webpki::Error::InvalidSignatureForPublicKey));
}

#[test]
fn wrong_host_name_is_rejected() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let (e, mut h) = handshake_err(fresh(&pki, "other.test"), scfg, &mut no_hook());
    assert!(matches!(e, Error::Certificate(webpki::Error::CertNotValidForName(_))), "{e:?}");
    assert_eq!(h.client.take_outgoing(), alert_record(42));
}

#[test]
fn expired_certificate_is_rejected() {
    let pki = make_pki(PkiOptions { not_after: (2030, 1, 1), ..Default::default() });
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    // 2031-01-01 is after notAfter.
    let later = rustls::pki_types::UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_924_992_000));
    let client = Client::new(client_config(&pki), "fixture.test", later).unwrap();
    let (e, mut h) = handshake_err(client, scfg.clone(), &mut no_hook());
    assert!(matches!(e, Error::Certificate(webpki::Error::CertExpired { .. })), "{e:?}");
    assert_eq!(h.client.take_outgoing(), alert_record(45));
    // And the same cert is fine at the current time (so the test can fail).
    let mut ok = Harness::new(fresh(&pki, "fixture.test"), scfg);
    ok.handshake(&mut no_hook()).unwrap();
}

fn flip_ske(leaf: LeafKey, flip_signature: bool) {
    let pki = make_pki(PkiOptions { leaf, ..Default::default() });
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut hook = |to_server: bool, bytes: &mut Vec<u8>| {
        if !to_server && bytes.first() == Some(&22) && bytes.len() > 300 {
            let offs = body_wire_offsets(bytes, 12);
            // params: curve_type(1) named_curve(2) len(1) point...; flip inside the point or
            // inside the signature (last byte).
            let i = if flip_signature { *offs.last().unwrap() } else { offs[10] };
            bytes[i] ^= 0x01;
        }
    };
    let (e, mut h) = handshake_err(fresh(&pki, "fixture.test"), scfg, &mut hook);
    assert_eq!(e, Error::PeerMisbehaved(PeerMisbehaved::BadServerKeyExchangeSignature));
    assert_eq!(h.client.take_outgoing(), alert_record(51));
}

#[test]
fn bad_server_key_exchange_signature() {
    flip_ske(LeafKey::EcdsaP256, false);
    flip_ske(LeafKey::EcdsaP256, true);
    flip_ske(LeafKey::Rsa2048, false);
    flip_ske(LeafKey::Rsa2048, true);
}

fn connected(pki: &Pki) -> Harness {
    let (scfg, _) = server_config(pki, ServerOptions::default());
    let mut h = Harness::new(fresh(pki, "fixture.test"), scfg);
    h.handshake(&mut no_hook()).unwrap();
    h
}

#[test]
fn tampered_app_record_gives_bad_record_mac_and_alert() {
    let pki = make_pki(PkiOptions::default());
    let mut h = connected(&pki);
    h.server_send(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false);
    let mut hook = |_: bool, b: &mut Vec<u8>| {
        let n = b.len();
        b[n - 20] ^= 0x80;
    };
    let e = h.to_client(&mut hook).unwrap_err();
    assert_eq!(e, Error::PeerMisbehaved(PeerMisbehaved::BadRecordMac));
    assert!(h.client.take_plaintext().is_empty());
    // The (encrypted) alert reaches the server as bad_record_mac.
    let e = h.to_server(&mut no_hook()).unwrap_err();
    assert_eq!(e, rustls::Error::AlertReceived(rustls::AlertDescription::BadRecordMac));
    // The transcript still records the bad record, without plaintext.
    let last = h.client.transcript().direction(tlsproof::tls::Direction::Received).last().unwrap();
    assert!(last.is_encrypted() && last.plaintext.is_none());
}

#[test]
fn tampered_server_finished_gives_bad_record_mac() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut hook = |to_server: bool, b: &mut Vec<u8>| {
        // the server's second flight: CCS record then encrypted Finished
        if !to_server && b.first() == Some(&20) {
            let n = b.len();
            b[n - 1] ^= 1;
        }
    };
    let (e, _) = handshake_err(fresh(&pki, "fixture.test"), scfg, &mut hook);
    assert_eq!(e, Error::PeerMisbehaved(PeerMisbehaved::BadRecordMac));
}

/// A close without close_notify after the handshake, between records, ends the connection
/// (many servers close so; whether the data is whole is for its framing to say); inside a
/// record it is a truncation, and during the handshake an unexpected end.
#[test]
fn a_close_without_close_notify_ends_the_connection_between_records_only() {
    let pki = make_pki(PkiOptions::default());
    let mut h = connected(&pki);
    h.server_send(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false);
    h.to_client(&mut no_hook()).unwrap();
    assert_eq!(h.client.take_plaintext().len(), 41);
    assert_eq!(h.client.feed_eof(), Ok(()));
    assert!(!h.client.received_close_notify());

    let mut h = connected(&pki);
    h.server_send(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false);
    h.to_client(&mut no_hook()).unwrap();
    h.client.feed(&[23, 3, 3, 0, 40, 0]).unwrap();
    assert_eq!(h.client.feed_eof(), Err(PeerMisbehaved::TruncatedWithoutCloseNotify.into()));

    let mut c = fresh(&pki, "fixture.test");
    assert_eq!(c.feed_eof(), Err(PeerMisbehaved::UnexpectedEof.into()));
}

#[test]
fn oversized_records_are_rejected() {
    let pki = make_pki(PkiOptions::default());
    // header length above 2^14 + 2048
    let mut c = fresh(&pki, "fixture.test");
    c.take_outgoing();
    assert_eq!(c.feed(&[22, 3, 3, 0x48, 0x01]), Err(PeerMisbehaved::RecordOverflow.into()));
    assert_eq!(c.take_outgoing(), alert_record(22));
    // plaintext record of 2^14 + 1 bytes
    let mut c = fresh(&pki, "fixture.test");
    c.take_outgoing();
    let big = record(22, &vec![0u8; 16385]);
    assert_eq!(c.feed(&big), Err(PeerMisbehaved::RecordOverflow.into()));
    // encrypted record whose plaintext is 2^14 + 1 bytes (valid tag)
    let mut h = connected(&pki);
    let kb = h.client.key_block().unwrap().clone();
    let seq =
        h.client.transcript().direction(tlsproof::tls::Direction::Received).filter(|r| r.is_encrypted()).count() as u64;
    let mut sc = AesGcmRecordCrypto::new(&kb.server_write_key, &kb.server_write_iv).unwrap();
    let payload = sc.seal(seq, 23, 0x0303, &vec![b'x'; 16385]).unwrap();
    assert_eq!(h.client.feed(&record(23, &payload)), Err(PeerMisbehaved::RecordOverflow.into()));
    let e = h.to_server(&mut no_hook()).unwrap_err();
    assert_eq!(e, rustls::Error::AlertReceived(rustls::AlertDescription::RecordOverflow));
    // ... while exactly 2^14 bytes is accepted.
    let mut h = connected(&pki);
    let kb = h.client.key_block().unwrap().clone();
    let mut sc = AesGcmRecordCrypto::new(&kb.server_write_key, &kb.server_write_iv).unwrap();
    let payload = sc.seal(1, 23, 0x0303, &vec![b'x'; 16384]).unwrap();
    h.client.feed(&record(23, &payload)).unwrap();
    assert_eq!(h.client.take_plaintext().len(), 16384);
}

#[test]
fn server_hello_violations() {
    let pki = make_pki(PkiOptions::default());
    let cases: Vec<(Vec<u8>, PeerMisbehaved, u8)> = vec![
        (server_hello(0xc028, 0x0303, &[]), PeerMisbehaved::UnofferedCipherSuite(0xc028), 47),
        (server_hello(0x002f, 0x0303, &[]), PeerMisbehaved::UnofferedCipherSuite(0x002f), 47),
        (server_hello(0xc02b, 0x0302, &[]), PeerMisbehaved::UnsupportedVersion(0x0302), 70),
        (server_hello(0xc02b, 0x0303, &[0, 35, 0, 0]), PeerMisbehaved::UnofferedExtension(35), 110),
        (server_hello(0xc02b, 0x0303, &[0, 23, 0, 0, 0, 23, 0, 0]), PeerMisbehaved::DuplicateExtension(23), 50),
        (server_hello(0xc02b, 0x0303, &[0xff, 1, 0, 2, 1, 9]), PeerMisbehaved::BadRenegotiationInfo, 40),
    ];
    for (bytes, want, alert) in cases {
        let mut c = fresh(&pki, "fixture.test");
        c.take_outgoing();
        assert_eq!(c.feed(&bytes), Err(want.clone().into()), "{want:?}");
        assert_eq!(c.take_outgoing(), alert_record(alert));
    }
    // A suite we support but did not offer in this config.
    let mut cfg: ClientConfig = client_config(&pki);
    cfg.cipher_suites = vec![tlsproof::tls::CipherSuite::EcdheEcdsaAes128GcmSha256];
    let mut c = Client::new(cfg, "fixture.test", now()).unwrap();
    assert_eq!(c.feed(&server_hello(0xc02f, 0x0303, &[])), Err(PeerMisbehaved::UnofferedCipherSuite(0xc02f).into()));
    // The AES-256-GCM and ChaCha20-Poly1305 suites, supported but not offered here.
    for suite in [0xc02c, 0xc030, 0xcca8, 0xcca9] {
        let mut cfg: ClientConfig = client_config(&pki);
        cfg.cipher_suites = tlsproof::tls::CipherSuite::AES_128.to_vec();
        let mut c = Client::new(cfg, "fixture.test", now()).unwrap();
        assert_eq!(c.feed(&server_hello(suite, 0x0303, &[])), Err(PeerMisbehaved::UnofferedCipherSuite(suite).into()));
    }
}

#[test]
fn resumption_attempt_is_refused() {
    let pki = make_pki(PkiOptions::default());
    let mut c = fresh(&pki, "fixture.test");
    c.take_outgoing();
    let mut bytes = server_hello(0xc02b, 0x0303, &[]);
    bytes.extend_from_slice(&record(20, &[1]));
    assert_eq!(c.feed(&bytes), Err(PeerMisbehaved::ResumptionAttempted.into()));
}

#[test]
fn unexpected_messages() {
    let pki = make_pki(PkiOptions::default());
    // ServerHelloDone instead of ServerHello
    let mut c = fresh(&pki, "fixture.test");
    let e = c.feed(&record(22, &handshake_message(14, &[]))).unwrap_err();
    assert_eq!(e, PeerMisbehaved::UnexpectedMessage { expected: "ServerHello", got: "ServerHelloDone".into() }.into());
    // application data before the handshake
    let mut c = fresh(&pki, "fixture.test");
    assert!(matches!(c.feed(&record(23, b"hi")), Err(Error::PeerMisbehaved(PeerMisbehaved::UnexpectedMessage { .. }))));
    // empty handshake fragment
    let mut c = fresh(&pki, "fixture.test");
    assert_eq!(c.feed(&record(22, &[])), Err(PeerMisbehaved::EmptyFragment.into()));
    // a warning alert during the handshake (e.g. unrecognized_name) is tolerated
    let mut c = fresh(&pki, "fixture.test");
    c.feed(&record(21, &[1, 112])).unwrap();
    assert!(c.is_handshaking());
    // a fatal alert from the server
    let mut c = fresh(&pki, "fixture.test");
    assert_eq!(
        c.feed(&record(21, &[2, 40])),
        Err(PeerMisbehaved::FatalAlert(tlsproof::tls::AlertDescription::HANDSHAKE_FAILURE).into())
    );
}

#[test]
fn garbage_bytes() {
    let pki = make_pki(PkiOptions::default());
    let mut c = fresh(&pki, "fixture.test");
    assert_eq!(c.feed(b"HTTP/1.1 400 Bad Request\r\n\r\n"), Err(PeerMisbehaved::UnknownContentType(b'H').into()));
    // Deterministic pseudo-random garbage, with and without a plausible record header: must
    // error (or wait for more bytes), never panic.
    let mut x: u64 = 0x1234_5678_9abc_def0;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..300 {
        let len = (next() % 600) as usize;
        let mut body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if i % 2 == 0 && !body.is_empty() {
            body[0] = [2u8, 11, 12, 14, 20][i % 5];
        }
        let bytes = if i % 3 == 0 { body } else { record(22, &body) };
        let mut c = fresh(&pki, "fixture.test");
        let _ = c.feed(&bytes);
    }
}

#[test]
fn hello_request_after_handshake_is_refused_with_warning() {
    let pki = make_pki(PkiOptions::default());
    let mut h = connected(&pki);
    let kb = h.client.key_block().unwrap().clone();
    let mut sc = AesGcmRecordCrypto::new(&kb.server_write_key, &kb.server_write_iv).unwrap();
    let payload = sc.seal(1, 22, 0x0303, &[0, 0, 0, 0]).unwrap();
    h.client.feed(&record(22, &payload)).unwrap();
    assert!(h.client.is_connected());
    let last = h.client.transcript().records.last().unwrap();
    assert_eq!(last.direction, tlsproof::tls::Direction::Sent);
    assert_eq!(last.content_type, 21);
    assert_eq!(last.plaintext.as_deref(), Some(&[1u8, 100][..]));
    // A different handshake message after the handshake is fatal.
    let payload = sc.seal(2, 22, 0x0303, &handshake_message(2, &[0; 40])).unwrap();
    assert!(matches!(
        h.client.feed(&record(22, &payload)),
        Err(Error::PeerMisbehaved(PeerMisbehaved::UnexpectedMessage { .. }))
    ));
}

/// False Start sends the request before the server's Finished; that Finished must still be
/// checked: tampered, it fails the session, which never counts as connected.
#[test]
fn tampered_server_finished_after_false_start_is_rejected() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut h = Harness::new(fresh(&pki, "fixture.test"), scfg);
    let mut hook = |to_server: bool, b: &mut Vec<u8>| {
        if !to_server && b.first() == Some(&20) {
            let n = b.len();
            b[n - 1] ^= 1;
        }
    };
    let mut sent_early = false;
    let mut result = Ok(());
    for _ in 0..10 {
        if h.client.can_false_start() && !sent_early {
            h.client.write_plaintext(b"GET / HTTP/1.1\r\nHost: fixture.test\r\n\r\n").unwrap();
            sent_early = true;
        }
        h.to_server(&mut hook).unwrap();
        result = h.to_client(&mut hook);
        if result.is_err() || h.client.is_connected() {
            break;
        }
    }
    assert!(sent_early, "the client reached the False Start point");
    assert_eq!(result, Err(Error::PeerMisbehaved(PeerMisbehaved::BadRecordMac)));
    assert!(!h.client.is_connected() && !h.client.can_false_start());
    assert!(h.client.take_plaintext().is_empty());
}
