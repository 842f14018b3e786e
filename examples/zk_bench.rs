//! End-to-end QuickSilver throughput with real KOS15 correlated OT (prover and verifier in two
//! threads over an in-memory channel). Times and bytes include COT generation.
//!
//! cargo run --release --example zk_bench

use std::time::Instant;

use tlsproof::zk::channel::{memory_pair, Channel};
use tlsproof::zk::gadgets::aes::{encrypt, key_schedule};
use tlsproof::zk::gadgets::aes_bool::{encrypt_bool, key_schedule_bool};
use tlsproof::zk::gadgets::sha256::{compress, state_from_bytes};
use tlsproof::zk::gadgets::{commit_bytes, constant_bytes, open_bytes};
use tlsproof::zk::ot::{KosReceiver, KosSender};
use tlsproof::zk::quicksilver::{Backend, Prover, Verifier, MAX_MESSAGE};

/// Run the circuit as `batches` batches on both sides (steady state: buffers are reused);
/// returns (seconds, bytes prover→verifier).
fn bench<F, G>(batches: usize, mut pf: F, mut vf: G) -> (f64, u64)
where
    F: FnMut(&mut tlsproof::zk::quicksilver::ProverBackend) + Send + 'static,
    G: FnMut(&mut tlsproof::zk::quicksilver::VerifierBackend) + Send + 'static,
{
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let start = Instant::now();
    let pt = std::thread::spawn(move || {
        let mut p = Prover::new(KosReceiver::new());
        for _ in 0..batches {
            futures::executor::block_on(p.run(&mut a, &mut pf)).expect("prover");
        }
        a.bytes_sent()
    });
    let mut v = Verifier::new(KosSender::new());
    for _ in 0..batches {
        futures::executor::block_on(v.run(&mut b, &mut vf)).expect("verifier rejected");
    }
    let sent = pt.join().expect("prover thread");
    (start.elapsed().as_secs_f64(), sent)
}

fn and_circuit<B: Backend>(b: &mut B, n: usize, witness: bool) {
    let mut x = b.commit(if witness { Some(true) } else { None });
    let y = b.commit(if witness { Some(true) } else { None });
    for _ in 0..n {
        x = b.and(x, y);
    }
    b.open(&[x]);
}

fn sha_circuit<B: Backend>(b: &mut B, n: usize, witness: bool) {
    let st = commit_bytes(b, witness.then_some(&[3u8; 32][..]), 32);
    let mut state = state_from_bytes::<B>(&st);
    let block = commit_bytes(b, witness.then_some(&[5u8; 64][..]), 64);
    for _ in 0..n {
        state = compress(b, &state, &block);
    }
    let mut out = Vec::new();
    for w in &state {
        out.extend_from_slice(w);
    }
    open_bytes(b, &out);
}

fn aes_circuit<B: Backend>(b: &mut B, n: usize, witness: bool, boolean: bool) {
    let kb = commit_bytes(b, witness.then_some(&[9u8; 16][..]), 16);
    let mut iv = commit_bytes(b, witness.then_some(&[1u8; 4][..]), 4);
    iv.extend(constant_bytes(b, &[2u8; 8]));
    let rk = if boolean { key_schedule_bool(b, &kb) } else { key_schedule(b, &kb) };
    for i in 0..n as u32 {
        let mut blk = iv.clone();
        blk.extend(constant_bytes(b, &(i + 2).to_be_bytes()));
        let out = if boolean { encrypt_bool(b, &rk, &blk) } else { encrypt(b, &rk, &blk) };
        open_bytes(b, &out[..8]);
    }
}

fn main() {
    println!("threads: rayon {}", rayon::current_num_threads());
    let (batches, per) = (8, 250_000);
    let n = batches * per;
    let (t, bytes) = bench(batches, move |b| and_circuit(b, per, true), move |b| and_circuit(b, per, false));
    println!("AND gates: {n} in {t:.3}s = {:.2} M AND/s, {:.2} bits/AND sent", n as f64 / t / 1e6, bytes as f64 * 8.0 / n as f64);

    let (batches, per) = (5, 10);
    let n = batches * per;
    let (t, bytes) = bench(batches, move |b| sha_circuit(b, per, true), move |b| sha_circuit(b, per, false));
    println!("SHA-256 compressions (private state+block): {n} in {t:.3}s = {:.1} /s, {} KiB sent", n as f64 / t, bytes / 1024);

    let (batches, per) = (4, 256);
    let n = batches * per;
    let (t, bytes) = bench(batches, move |b| aes_circuit(b, per, true, false), move |b| aes_circuit(b, per, false, false));
    let mut pb = tlsproof::zk::quicksilver::PlainBackend::new();
    aes_circuit(&mut pb, 1, true, false);
    let s1 = pb.stats();
    let mut pb2 = tlsproof::zk::quicksilver::PlainBackend::new();
    aes_circuit(&mut pb2, 2, true, false);
    let s2 = pb2.stats();
    println!(
        "AES-128 blocks (field S-box): {n} in {t:.3}s = {:.0} blocks/s, {} committed bits + {} products per block, {} B sent per block",
        n as f64 / t,
        s2.commits - s1.commits,
        s2.products - s1.products,
        bytes / n as u64
    );

    let (batches, per) = (4, 64);
    let n = batches * per;
    let (t, bytes) = bench(batches, move |b| aes_circuit(b, per, true, true), move |b| aes_circuit(b, per, false, true));
    let mut pb = tlsproof::zk::quicksilver::PlainBackend::new();
    aes_circuit(&mut pb, 1, true, true);
    let s1 = pb.stats();
    let mut pb2 = tlsproof::zk::quicksilver::PlainBackend::new();
    aes_circuit(&mut pb2, 2, true, true);
    let s2 = pb2.stats();
    println!(
        "AES-128 blocks (boolean S-box): {n} in {t:.3}s = {:.0} blocks/s, {} AND per block, {} B sent per block",
        n as f64 / t,
        s2.and_gates - s1.and_gates,
        bytes / n as u64
    );
}
