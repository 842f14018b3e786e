//! Proof circuits shared by the native and the browser engine tests: prover and verifier run
//! the same gadget code over an in-memory channel with real KOS15 correlated OT.

use tlsproof::channel::memory_pair;
use tlsproof::circuits::aes::key_schedule;
use tlsproof::circuits::constant_bytes;
use tlsproof::circuits::hmac_prf::{hmac_key, tls12_key_block, tls12_verify_data};
use tlsproof::circuits::keystream::keystream_blocks;
use tlsproof::ot::{KosReceiver, KosSender};
use tlsproof::zk::bytes::{commit_bytes, open_bytes, open_selected_bytes};
use tlsproof::zk::{Backend, ProofError, Prover, Verifier, MAX_MESSAGE};

/// Key block (40 bytes) and client verify_data from a private master secret, both opened.
pub fn prf_circuit<B: Backend>(
    b: &mut B,
    ms: Option<&[u8]>,
    cr: &[u8; 32],
    sr: &[u8; 32],
    hc: &[u8; 32],
) -> (Vec<u8>, Vec<u8>) {
    let ms = commit_bytes(b, ms, 48);
    let key = hmac_key(b, &ms);
    let kb = tls12_key_block(b, &key, sr, cr, 40);
    let vd = tls12_verify_data(b, &key, b"client finished", hc);
    (open_bytes(b, &kb), open_bytes(b, &vd))
}

/// GCM keystream blocks `indices` (counter j+2) under a private key and salt, opened at
/// `positions` of each block.
pub fn keystream_circuit<B: Backend>(
    b: &mut B,
    key: Option<&[u8]>,
    salt: Option<&[u8]>,
    explicit: &[u8; 8],
    indices: &[u32],
    positions: &[usize],
) -> Vec<u8> {
    let kb = commit_bytes(b, key, 16);
    let mut iv = commit_bytes(b, salt, 4);
    iv.extend(constant_bytes(b, explicit));
    let rk = key_schedule(b, &kb);
    let blocks = keystream_blocks(b, &rk, &iv, indices);
    blocks.iter().flat_map(|blk| open_selected_bytes(b, blk, positions)).collect()
}

/// Runs one batch on both sides concurrently; returns (prover's, verifier's) results.
pub async fn prove<T>(
    mut pf: impl FnMut(&mut tlsproof::zk::ProverBackend) -> T,
    mut vf: impl FnMut(&mut tlsproof::zk::VerifierBackend) -> T,
) -> (Result<T, ProofError>, Result<T, ProofError>) {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let mut prover = Prover::new(KosReceiver::new());
    let mut verifier = Verifier::new(KosSender::new());
    // Each side owns its end and drops it when done, so a side that fails ends the other's
    // wait with a closed channel instead of a hang.
    let p = async move { prover.run(&mut a, &mut pf).await };
    let v = async move { verifier.run(&mut b, &mut vf).await };
    futures::join!(p, v)
}

/// The reference GCM keystream bytes (counter j+2) from the `aes` crate.
pub fn reference_keystream(
    key: &[u8; 16],
    salt: &[u8; 4],
    explicit: &[u8; 8],
    indices: &[u32],
    positions: &[usize],
) -> Vec<u8> {
    use aes::cipher::{BlockEncrypt, KeyInit};
    let cipher = aes::Aes128::new(key.into());
    let mut out = Vec::new();
    for j in indices {
        let mut block = [0u8; 16];
        block[..4].copy_from_slice(salt);
        block[4..12].copy_from_slice(explicit);
        block[12..].copy_from_slice(&(j + 2).to_be_bytes());
        let mut b = aes::Block::from(block);
        cipher.encrypt_block(&mut b);
        out.extend(positions.iter().map(|p| b[*p]));
    }
    out
}
