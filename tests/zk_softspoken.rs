//! The ZK engine end to end with the default COT source (Ferret bootstrapped from SoftSpokenOT,
//! as the protocol builds it with `FerretSender::with_prg` / `FerretReceiver::with_prg`) and
//! with SoftSpokenOT alone: PRF and GCM keystream proofs against independent implementations,
//! and a cheater.
#![cfg(not(target_arch = "wasm32"))]

#[allow(dead_code)]
mod zk_circuits;

use futures::executor::block_on;
use tlsproof::channel::memory_pair;
use tlsproof::ot::{
    BaseCotReceiver, BaseCotSender, CotReceiver, CotSender, FerretReceiver, FerretSender, SoftSpokenReceiver,
    SoftSpokenSender,
};
use tlsproof::primitives::prg::PrgKind;
use tlsproof::tls::keys::{key_block, verify_data, MasterSecret};
use tlsproof::zk::{ProofError, Prover, ProverBackend, Verifier, VerifierBackend, MAX_MESSAGE};
use zk_circuits::*;

async fn prove_with<T, R: CotReceiver, S: CotSender>(
    recv: R,
    send: S,
    mut pf: impl FnMut(&mut ProverBackend) -> T,
    mut vf: impl FnMut(&mut VerifierBackend) -> T,
) -> (Result<T, ProofError>, Result<T, ProofError>) {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let mut prover = Prover::new(recv);
    let mut verifier = Verifier::new(send);
    let p = async move { prover.run(&mut a, &mut pf).await };
    let v = async move { verifier.run(&mut b, &mut vf).await };
    futures::join!(p, v)
}

#[test]
fn default_sources_bootstrap_ferret_from_softspoken() {
    assert!(matches!(FerretSender::new().base(), BaseCotSender::SoftSpoken(_)));
    assert!(matches!(FerretReceiver::new().base(), BaseCotReceiver::SoftSpoken(_)));
}

/// A PRF proof over Ferret with `prg` as the session's PRG opens the TLS key block and
/// verify_data.
fn prf_proof_over_ferret_matches_the_tls_key_schedule(prg: PrgKind) {
    let ms: [u8; 48] = rand::random();
    let (cr, sr, hc): ([u8; 32], [u8; 32], [u8; 32]) = (rand::random(), rand::random(), rand::random());
    let (p, v) = block_on(prove_with(
        FerretReceiver::with_prg(prg),
        FerretSender::with_prg(prg),
        |b| prf_circuit(b, Some(&ms), &cr, &sr, &hc),
        |b| prf_circuit(b, None, &cr, &sr, &hc),
    ));
    let (kb_bytes, vd) = v.expect("verifier accepts");
    assert_eq!(p.unwrap(), (kb_bytes.clone(), vd.clone()));
    let reference = key_block(&MasterSecret(ms), &cr, &sr);
    assert_eq!(&kb_bytes[..16], &reference.client_write_key);
    assert_eq!(&kb_bytes[16..32], &reference.server_write_key);
    assert_eq!(vd, verify_data(&MasterSecret(ms), b"client finished", &hc));
}

#[test]
fn prf_proof_with_default_ferret_over_softspoken_matches_the_tls_key_schedule() {
    prf_proof_over_ferret_matches_the_tls_key_schedule(PrgKind::default());
}

/// What a browser prover runs: the session's PRG is ChaCha12 (no AES instruction there).
#[test]
fn prf_proof_with_ferret_over_chacha12_matches_the_tls_key_schedule() {
    prf_proof_over_ferret_matches_the_tls_key_schedule(PrgKind::ChaCha12);
}

#[test]
fn keystream_proof_with_softspoken_alone_matches_aes() {
    let (key, salt, explicit): ([u8; 16], [u8; 4], [u8; 8]) = (rand::random(), rand::random(), rand::random());
    let (indices, positions) = ([0u32, 3, 64], [0usize, 1, 9, 15]);
    for k in [8usize, 3] {
        let (p, v) = block_on(prove_with(
            SoftSpokenReceiver::new().with_k(k).unwrap(),
            SoftSpokenSender::new().with_k(k).unwrap(),
            |b| keystream_circuit(b, Some(&key), Some(&salt), &explicit, &indices, &positions),
            |b| keystream_circuit(b, None, None, &explicit, &indices, &positions),
        ));
        let expected = reference_keystream(&key, &salt, &explicit, &indices, &positions);
        assert_eq!(v.expect("verifier accepts"), expected);
        assert_eq!(p.unwrap(), expected);
    }
}

#[test]
fn prover_with_a_different_circuit_is_rejected_over_the_default_source() {
    let ms: [u8; 48] = rand::random();
    let (cr, sr, hc): ([u8; 32], [u8; 32], [u8; 32]) = (rand::random(), rand::random(), rand::random());
    let other_sr: [u8; 32] = rand::random();
    let (_p, v) = block_on(prove_with(
        FerretReceiver::new(),
        FerretSender::new(),
        |b| prf_circuit(b, Some(&ms), &cr, &sr, &hc),
        |b| prf_circuit(b, None, &cr, &other_sr, &hc),
    ));
    assert!(v.is_err(), "verifier accepted a proof for a different seed");
}
