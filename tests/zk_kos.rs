//! The ZK engine end to end with real KOS15 correlated OT (the unit tests use a dealer):
//! PRF and GCM keystream proofs against independent implementations, and a cheating prover.
#![cfg(not(target_arch = "wasm32"))]

mod zk_circuits;

use futures::executor::block_on;
use tlsproof::tls::keys::{key_block, verify_data, MasterSecret};
use zk_circuits::*;

#[test]
fn prf_proof_with_kos_matches_the_tls_key_schedule() {
    let ms: [u8; 48] = rand::random();
    let (cr, sr, hc): ([u8; 32], [u8; 32], [u8; 32]) = (rand::random(), rand::random(), rand::random());
    let (p, v) = block_on(prove(|b| prf_circuit(b, Some(&ms), &cr, &sr, &hc), |b| prf_circuit(b, None, &cr, &sr, &hc)));
    let (kb_bytes, vd) = v.expect("verifier accepts");
    assert_eq!(p.unwrap(), (kb_bytes.clone(), vd.clone()));
    let reference = key_block(&MasterSecret(ms), &cr, &sr);
    assert_eq!(&kb_bytes[..16], &reference.client_write_key);
    assert_eq!(&kb_bytes[16..32], &reference.server_write_key);
    assert_eq!(&kb_bytes[32..36], &reference.client_write_iv);
    assert_eq!(&kb_bytes[36..40], &reference.server_write_iv);
    assert_eq!(vd, verify_data(&MasterSecret(ms), b"client finished", &hc));
}

#[test]
fn keystream_proof_with_kos_matches_aes() {
    let (key, salt, explicit): ([u8; 16], [u8; 4], [u8; 8]) = (rand::random(), rand::random(), rand::random());
    let (indices, positions) = ([0u32, 3, 64], [0usize, 1, 9, 15]);
    let (p, v) = block_on(prove(
        |b| keystream_circuit(b, Some(&key), Some(&salt), &explicit, &indices, &positions),
        |b| keystream_circuit(b, None, None, &explicit, &indices, &positions),
    ));
    let expected = reference_keystream(&key, &salt, &explicit, &indices, &positions);
    assert_eq!(v.expect("verifier accepts"), expected);
    assert_eq!(p.unwrap(), expected);
}

#[test]
fn prover_with_a_different_circuit_is_rejected() {
    // The prover proves key block bytes for one master secret but the verifier's circuit opens
    // the PRF with another seed: the openings cannot match the verifier's MACs.
    let ms: [u8; 48] = rand::random();
    let (cr, sr, hc): ([u8; 32], [u8; 32], [u8; 32]) = (rand::random(), rand::random(), rand::random());
    let other_sr: [u8; 32] = rand::random();
    let (_p, v) =
        block_on(prove(|b| prf_circuit(b, Some(&ms), &cr, &sr, &hc), |b| prf_circuit(b, None, &cr, &other_sr, &hc)));
    assert!(v.is_err(), "verifier accepted a proof for a different seed");
}
