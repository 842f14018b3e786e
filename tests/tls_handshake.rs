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

/// Our client and a rustls server with the default certificate chain, before any byte moved.
fn default_harness() -> Harness {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _) = server_config(&pki, ServerOptions::default());
    let client = tlsproof::tls::Client::new(client_config(&pki), "fixture.test", now()).unwrap();
    Harness::new(client, scfg)
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
    let mut h = default_harness();
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

/// What the handshake settles is reported from the step that settles it, and kept: the
/// server's first flight is fed one handshake message at a time (each re-framed in a record of
/// its own), and after each the client reports exactly what that message settled.
#[test]
fn each_step_reports_what_it_settled_and_keeps_what_came_before() {
    let mut h = default_harness();
    h.to_server(&mut no_hook()).unwrap();
    let mut flight = Vec::new();
    while h.server.wants_write() {
        h.server.write_tls(&mut flight).unwrap();
    }
    let (records, used) = tlsproof::tls::codec::split_records(&flight).unwrap();
    assert_eq!(used, flight.len());
    let payload: Vec<u8> = records.iter().flat_map(|(_, p)| p.to_vec()).collect();
    let mut messages = Vec::new();
    let mut rest = &payload[..];
    while !rest.is_empty() {
        let len = 4 + u32::from_be_bytes([0, rest[1], rest[2], rest[3]]) as usize;
        messages.push(rest[..len].to_vec());
        rest = &rest[len..];
    }
    assert_eq!(
        messages.iter().map(|m| m[0]).collect::<Vec<_>>(),
        [2, 11, 12, 14],
        "ServerHello, Certificate, ServerKeyExchange, ServerHelloDone"
    );
    let c = |h: &Harness| {
        (
            h.client.cipher_suite().is_some(),
            *h.client.server_random() != [0; 32],
            !h.client.server_cert_chain().is_empty(),
            h.client.server_key_exchange().is_some() && h.client.group().is_some(),
            h.client.master_secret().is_some() && h.client.client_finished_hash().is_some(),
            h.client.server_finished_hash().is_some(),
        )
    };
    assert_eq!(c(&h), (false, false, false, false, false, false));
    let settled = [
        (true, true, false, false, false, false),
        (true, true, true, false, false, false),
        (true, true, true, true, false, false),
        // ServerHelloDone: the (local) key exchange runs and our Finished goes out
        (true, true, true, true, true, false),
    ];
    for (m, want) in messages.iter().zip(settled) {
        let record = [&[22, 3, 3][..], &(m.len() as u16).to_be_bytes(), m].concat();
        h.client.feed(&record).unwrap();
        assert_eq!(c(&h), want, "after message type {}", m[0]);
    }
    h.to_server(&mut no_hook()).unwrap();
    h.to_client(&mut no_hook()).unwrap();
    assert!(h.client.is_connected());
    assert_eq!(c(&h), (true, true, true, true, true, true));
    assert!(h.client.server_verify_data().is_some() && h.client.client_verify_data().is_some());
}
