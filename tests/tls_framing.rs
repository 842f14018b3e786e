//! Handshake messages fragmented across records and coalesced within records, byte-at-a-time
//! input, the record transcript against the wire, external key exchange, tickets,
//! CertificateRequest.
#![cfg(not(target_arch = "wasm32"))]
mod common;
use common::*;
use std::sync::Arc;
use tlsproof::tls::codec::split_records;
use tlsproof::tls::crypto::{KeyExchange, RingKeyExchange};
use tlsproof::tls::{Client, Direction, KeyExchangeMode};

fn finish_exchange(h: &mut Harness, hook: Hook<'_>) {
    h.client.write_plaintext(b"GET /len/100 HTTP/1.1\r\n\r\n").unwrap();
    h.to_server(hook).unwrap();
    let (resp, _) = http_response("/len/100");
    h.server_send(&resp, true);
    h.to_client(hook).unwrap();
    assert_eq!(h.client.take_plaintext(), resp);
    assert!(h.client.received_close_notify());
}

#[test]
fn server_fragments_handshake_messages() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions { max_fragment_size: Some(64), tickets: false });
    let mut h = Harness::new(Client::new(client_config(&pki), "fixture.test", now()).unwrap(), scfg);
    h.handshake(&mut no_hook()).unwrap();
    // The certificate message cannot fit in one 64-byte record.
    let n_hs_records = h.client.transcript().direction(Direction::Received).filter(|r| r.content_type == 22).count();
    assert!(n_hs_records > 5, "{n_hs_records}");
    finish_exchange(&mut h, &mut no_hook());
}

/// Re-frame the server's plaintext handshake records: split their concatenated payload into
/// records of `size` bytes (fragmenting or coalescing messages).
fn reframe(bytes: &[u8], size: usize) -> Vec<u8> {
    let (recs, used) = split_records(bytes).unwrap();
    assert_eq!(used, bytes.len());
    if recs.iter().any(|(h, _)| h.content_type != 22) {
        return bytes.to_vec();
    }
    let stream: Vec<u8> = recs.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    let mut out = Vec::new();
    for c in stream.chunks(size) {
        out.extend_from_slice(&[22, 3, 3]);
        out.extend_from_slice(&(c.len() as u16).to_be_bytes());
        out.extend_from_slice(c);
    }
    out
}

#[test]
fn reframed_and_byte_by_byte_first_flight() {
    for size in [1usize, 3, 7, 100, 1000, 16384] {
        let pki = make_pki(PkiOptions::default());
        let (scfg, _) = server_config(&pki, ServerOptions::default());
        let client = Client::new(client_config(&pki), "fixture.test", now()).unwrap();
        let mut h = Harness::new(client, scfg);
        h.to_server(&mut no_hook()).unwrap();
        let mut out = Vec::new();
        while h.server.wants_write() {
            h.server.write_tls(&mut out).unwrap();
        }
        let framed = reframe(&out, size);
        if size == 16384 {
            // everything coalesced into one record
            assert_eq!(split_records(&framed).unwrap().0.len(), 1);
        }
        for b in &framed {
            h.client.feed(std::slice::from_ref(b)).unwrap();
        }
        h.handshake(&mut no_hook()).unwrap();
        finish_exchange(&mut h, &mut no_hook());
    }
}

#[test]
fn transcript_raw_bytes_equal_wire_bytes() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut h = Harness::new(Client::new(client_config(&pki), "fixture.test", now()).unwrap(), scfg);
    let (mut sent, mut recv) = (Vec::new(), Vec::new());
    let mut hook = |to_server: bool, b: &mut Vec<u8>| {
        if to_server {
            sent.extend_from_slice(b)
        } else {
            recv.extend_from_slice(b)
        }
    };
    h.handshake(&mut hook).unwrap();
    finish_exchange(&mut h, &mut hook);
    h.client.send_close_notify().unwrap();
    h.to_server(&mut hook).unwrap();
    let t = h.client.transcript();
    assert_eq!(t.raw_bytes(Direction::Sent), sent);
    assert_eq!(t.raw_bytes(Direction::Received), recv);
    // sequence numbers of encrypted records count from 0 per direction, explicit nonce = seq
    for d in [Direction::Sent, Direction::Received] {
        let seqs: Vec<u64> = t.direction(d).filter_map(|r| r.seq).collect();
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
        for r in t.direction(d).filter(|r| r.is_encrypted()) {
            assert_eq!(r.raw.len(), 5 + 8 + r.ciphertext.len() + 16);
            if d == Direction::Sent {
                assert_eq!(r.explicit_nonce.unwrap(), r.seq.unwrap().to_be_bytes());
            }
        }
    }
}

#[test]
fn external_key_exchange_step() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut cfg = client_config(&pki);
    cfg.key_exchange = KeyExchangeMode::External;
    let mut h = Harness::new(Client::new(cfg, "fixture.test", now()).unwrap(), scfg);
    h.to_server(&mut no_hook()).unwrap();
    assert!(h.client.key_exchange_request().is_none());
    h.to_client(&mut no_hook()).unwrap();
    let req = h.client.key_exchange_request().expect("key exchange requested");
    assert!(!h.client.wants_write(), "nothing sent before the key exchange completes");
    let kx = Box::new(RingKeyExchange::generate(req.group).unwrap());
    let public = kx.public_key().to_vec();
    let pms = kx.complete(&req.server_public).unwrap();
    h.client.complete_key_exchange(public.clone(), pms).unwrap();
    assert_eq!(h.client.client_public_key(), &public[..]);
    h.handshake(&mut no_hook()).unwrap();
    finish_exchange(&mut h, &mut no_hook());
}

#[test]
fn new_session_ticket_is_accepted_and_hashed() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions { max_fragment_size: None, tickets: true });
    let mut cfg = client_config(&pki);
    cfg.offer_session_ticket = true;
    let mut h = Harness::new(Client::new(cfg, "fixture.test", now()).unwrap(), scfg);
    h.handshake(&mut no_hook()).unwrap();
    let types: Vec<u8> = h.client.handshake_messages().iter().map(|m| m.typ).collect();
    assert_eq!(types, vec![1, 2, 11, 12, 14, 16, 20, 4, 20]);
    finish_exchange(&mut h, &mut no_hook());
}

#[test]
fn certificate_request_answered_with_empty_certificate() {
    let pki = make_pki(PkiOptions::default());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from(pki.ca_der.clone())).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .unwrap();
    let scfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(pki.leaf_der.clone())],
            rustls::pki_types::PrivateKeyDer::Pkcs8(pki.leaf_key_der.clone().into()),
        )
        .unwrap();
    let mut h = Harness::new(Client::new(client_config(&pki), "fixture.test", now()).unwrap(), Arc::new(scfg));
    h.handshake(&mut no_hook()).unwrap();
    let types: Vec<u8> = h.client.handshake_messages().iter().map(|m| m.typ).collect();
    assert_eq!(types, vec![1, 2, 11, 12, 13, 14, 11, 16, 20, 20]);
    finish_exchange(&mut h, &mut no_hook());
}

/// A RecordCryptoFactory that wraps the ring one and counts seal/open calls: proves the seam
/// is what the state machine uses.
#[derive(Debug, Default)]
struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);
struct CountingCrypto(Box<dyn tlsproof::tls::RecordCrypto>, std::sync::Arc<std::sync::atomic::AtomicUsize>);
impl tlsproof::tls::RecordCrypto for CountingCrypto {
    fn seal(&mut self, seq: u64, t: u8, v: u16, p: &[u8]) -> Result<Vec<u8>, tlsproof::tls::Error> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.seal(seq, t, v, p)
    }
    fn open(&mut self, seq: u64, t: u8, v: u16, p: &[u8]) -> Result<Vec<u8>, tlsproof::tls::Error> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.open(seq, t, v, p)
    }
}
impl tlsproof::tls::RecordCryptoFactory for Counting {
    fn new_record_crypto(
        &self,
        suite: tlsproof::tls::CipherSuite,
        client_write: bool,
        key: &[u8],
        iv: &[u8],
    ) -> Result<Box<dyn tlsproof::tls::RecordCrypto>, tlsproof::tls::Error> {
        let inner = tlsproof::tls::crypto::RingRecordCryptoFactory.new_record_crypto(suite, client_write, key, iv)?;
        Ok(Box::new(CountingCrypto(inner, self.0.clone())))
    }
}

#[test]
fn record_crypto_seam_is_used() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut cfg = client_config(&pki);
    cfg.record_crypto = Arc::new(Counting(counter.clone()));
    let mut h = Harness::new(Client::new(cfg, "fixture.test", now()).unwrap(), scfg);
    h.handshake(&mut no_hook()).unwrap();
    finish_exchange(&mut h, &mut no_hook());
    // client Finished + request sealed; server Finished + response + close_notify opened
    assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 5);
}

#[test]
fn ip_address_server_name() {
    let pki = make_pki(PkiOptions { names: vec!["127.0.0.1".into()], ..Default::default() });
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut h = Harness::new(Client::new(client_config(&pki), "127.0.0.1", now()).unwrap(), scfg);
    h.handshake(&mut no_hook()).unwrap();
    finish_exchange(&mut h, &mut no_hook());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut h = Harness::new(Client::new(client_config(&pki), "127.0.0.2", now()).unwrap(), scfg);
    assert!(matches!(h.handshake(&mut no_hook()), Err(tlsproof::tls::Error::Certificate(_))));
}

#[test]
fn http_ranges_map_to_records() {
    use tlsproof::http::{Limits, RequestBuilder, ResponseParser};
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let mut h = Harness::new(Client::new(client_config(&pki), "fixture.test", now()).unwrap(), scfg);
    h.handshake(&mut no_hook()).unwrap();
    let req =
        RequestBuilder::get("fixture.test", "/chunked/40000").header("Authorization", "Bearer s3cret").build().unwrap();
    h.client.write_plaintext(&req.bytes).unwrap();
    h.to_server(&mut no_hook()).unwrap();
    let (resp, body) = http_response("/chunked/40000");
    h.server_send(&resp, true);
    h.to_client(&mut no_hook()).unwrap();
    let t = h.client.transcript();
    // The Authorization value range of the request points at the secret inside the sent
    // record's plaintext.
    let auth = req.header("Authorization").unwrap().range.value.clone();
    let sent_spans = t.app_record_spans(Direction::Sent);
    let (idx, span) = sent_spans.iter().find(|(_, s)| s.contains(&auth.start)).unwrap();
    let pt = t.records[*idx].plaintext.as_ref().unwrap();
    assert_eq!(&pt[auth.start - span.start..auth.end - span.start], b"Bearer s3cret");
    // Chunk data ranges of the response, read back through the record spans.
    let stream = t.app_plaintext(Direction::Received);
    let mut p = ResponseParser::new(Limits::default());
    assert!(p.feed(&stream).unwrap());
    let r = p.response().unwrap();
    let spans = t.app_record_spans(Direction::Received);
    assert!(spans.len() >= 3);
    let mut rebuilt = Vec::new();
    for range in r.body_ranges() {
        for pos in range {
            let (idx, span) = spans.iter().find(|(_, s)| s.contains(&pos)).unwrap();
            rebuilt.push(t.records[*idx].plaintext.as_ref().unwrap()[pos - span.start]);
        }
    }
    assert_eq!(rebuilt, body);
}
