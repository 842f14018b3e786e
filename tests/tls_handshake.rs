#![cfg(not(target_arch = "wasm32"))]
mod common;
use common::*;
use tlsproof::http::{Limits, RequestBuilder, ResponseParser};
use tlsproof::tls::{CipherSuite, Direction, NamedGroup};

fn get(leaf: LeafKey, path: &str, ems: bool, groups: Vec<NamedGroup>) -> Harness {
    let pki = make_pki(PkiOptions { leaf, ..Default::default() });
    let (scfg, keylog) = server_config(&pki, ServerOptions::default());
    let mut ccfg = client_config(&pki);
    ccfg.offer_extended_master_secret = ems;
    ccfg.groups = groups;
    let client = tlsproof::tls::Client::new(ccfg, "fixture.test", now()).unwrap();
    let mut h = Harness::new(client, scfg);
    h.handshake(&mut no_hook()).unwrap();
    assert_eq!(h.client.extended_master_secret(), ems);
    let want_suite = match leaf {
        LeafKey::EcdsaP256 => CipherSuite::EcdheEcdsaAes128GcmSha256,
        LeafKey::Rsa2048 => CipherSuite::EcdheRsaAes128GcmSha256,
    };
    assert_eq!(h.client.cipher_suite(), Some(want_suite));
    // rustls logged the same master secret for our client_random
    let logged = keylog.0.lock().unwrap().clone();
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].0, "CLIENT_RANDOM");
    assert_eq!(&logged[0].1[..], &h.client.client_random()[..]);
    assert_eq!(&logged[0].2[..], &h.client.master_secret().unwrap().0[..]);

    let req = RequestBuilder::get("fixture.test", path).build().unwrap();
    h.client.write_plaintext(&req.bytes).unwrap();
    h.to_server(&mut no_hook()).unwrap();
    assert_eq!(h.request_seen, req.bytes, "server decrypted our request");
    let (resp, body) = http_response(path);
    h.server_send(&resp, true);
    h.to_client(&mut no_hook()).unwrap();
    assert!(h.client.received_close_notify());
    h.client.feed_eof().unwrap();
    let got = h.client.take_plaintext();
    assert_eq!(got, resp);
    let mut p = ResponseParser::new(Limits::default());
    assert!(p.feed(&got).unwrap());
    let r = p.response().unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, body);
    // transcript: plaintext of received app records equals what the server sent
    assert_eq!(h.client.transcript().app_plaintext(Direction::Received), resp);
    assert_eq!(h.client.transcript().app_plaintext(Direction::Sent), req.bytes);
    h
}

#[test]
fn ecdsa_get_with_ems_all_sizes() {
    for path in ["/len/0", "/len/1024", "/len/204800", "/chunked/0", "/chunked/1024", "/chunked/204800"] {
        get(LeafKey::EcdsaP256, path, true, vec![NamedGroup::Secp256r1, NamedGroup::X25519]);
    }
}

#[test]
fn rsa_get_with_ems_all_sizes() {
    for path in ["/len/0", "/len/1024", "/len/204800", "/chunked/1024", "/chunked/204800"] {
        get(LeafKey::Rsa2048, path, true, vec![NamedGroup::Secp256r1]);
    }
}

#[test]
fn without_ems_ecdsa_and_rsa() {
    get(LeafKey::EcdsaP256, "/len/1024", false, vec![NamedGroup::Secp256r1]);
    get(LeafKey::Rsa2048, "/chunked/1024", false, vec![NamedGroup::Secp256r1]);
}

#[test]
fn x25519_group() {
    let h = get(LeafKey::EcdsaP256, "/len/10", true, vec![NamedGroup::X25519]);
    assert_eq!(h.client.group(), Some(NamedGroup::X25519));
}

#[test]
fn large_response_uses_many_records() {
    let h = get(LeafKey::EcdsaP256, "/len/204800", true, vec![NamedGroup::Secp256r1]);
    let n = h.client.transcript().direction(Direction::Received).filter(|r| r.content_type == 23).count();
    assert!(n >= 13, "only {n} app records");
    for r in h.client.transcript().direction(Direction::Received).filter(|r| r.content_type == 23) {
        assert!(r.plaintext.as_ref().unwrap().len() <= 16384);
    }
}

/// False Start: the request can go out with our Finished, before the server's Finished has
/// arrived; the server decrypts it, and the handshake then completes as usual.
#[test]
fn request_goes_out_before_the_server_finished() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let client = tlsproof::tls::Client::new(client_config(&pki), "fixture.test", now()).unwrap();
    let mut h = Harness::new(client, scfg);
    let req = RequestBuilder::get("fixture.test", "/").build().unwrap();
    assert!(h.client.write_plaintext(&req.bytes).is_err(), "no application data before the key exchange");
    let mut early = false;
    for _ in 0..10 {
        if h.client.can_false_start() && !early {
            assert!(!h.client.is_connected(), "the server's Finished has not been processed yet");
            h.client.write_plaintext(&req.bytes).unwrap();
            early = true;
        }
        h.to_server(&mut no_hook()).unwrap();
        if h.client.is_connected() {
            break;
        }
        h.to_client(&mut no_hook()).unwrap();
    }
    assert!(early && h.client.is_connected());
    assert_eq!(h.request_seen, req.bytes, "the server decrypted the early request");
    assert_eq!(h.client.transcript().app_plaintext(Direction::Sent), req.bytes);
}
