//! Per-phase timing of one Ferret iteration on random inputs (native only, not part of the
//! protocol): `cargo run --release --example ferret_bench phases`. Each phase runs alone, with
//! the rayon pool to itself, so the sum is the CPU-critical path of one iteration when both
//! parties share one machine; the protocol's own end-to-end time is measured separately by the
//! example (warm `extend` of one iteration's net output).

use super::ggm::FixedKeyAes;
use super::{lpn, spcot, LpnParams};
use crate::primitives::prg::PrgKind;
use rand::Rng;
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

fn timed<T>(out: &mut Vec<(&'static str, f64)>, name: &'static str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    out.push((name, t.elapsed().as_secs_f64()));
    r
}

/// (phase, seconds) for one iteration with parameters `p`, both parties' work.
pub fn iteration_phases(p: LpnParams) -> Vec<(&'static str, f64)> {
    let (n, k, t, h) = (p.n, p.k, p.t, p.log_block);
    let th = t * h;
    let mut rng = rand::rng();
    let prg = FixedKeyAes::new();
    let delta: u128 = rng.random();
    let tweak = 1u128 << 64;
    let tree_keys: Vec<u128> = (0..th).map(|_| rng.random()).collect();
    let tree_u: Vec<u8> = (0..th).map(|_| rng.random::<u8>() & 1).collect();
    let tree_m: Vec<u128> = (0..th).map(|_| rng.random()).collect();
    let seeds: Vec<u128> = (0..t).map(|_| rng.random()).collect();
    let base_k: Vec<u128> = (0..k).map(|_| rng.random()).collect();
    let base_u: Vec<u8> = (0..k).map(|_| rng.random::<u8>() & 1).collect();
    let base_m: Vec<u128> = (0..k).map(|_| rng.random()).collect();
    let seed: [u8; 16] = rng.random();

    let kind = PrgKind::fastest_here();
    let mut out = Vec::new();
    // The protocol reuses its output buffers across iterations, so the phases below are timed
    // on touched memory: a fresh zeroed allocation would charge its page faults to the trees.
    let mut v = timed(&mut out, "alloc + touch v (n u128)", || vec![1u128; n]);
    let (mut w, mut e) = timed(&mut out, "alloc + touch w, e (prover)", || (vec![1u128; n], vec![1u8; n]));
    let mut msgs = vec![0u8; t * spcot::tree_message_bytes(h)];
    timed(&mut out, "half trees sender (t trees + msgs)", || {
        spcot::sender_trees(&prg, delta, h, &tree_keys, &seeds, tweak, &mut v, &mut msgs)
    });
    timed(&mut out, "half trees receiver (t punctured)", || {
        spcot::receiver_trees(&prg, h, &tree_u, &tree_m, &msgs, tweak, &mut w, &mut e)
    });
    timed(&mut out, "check sender (chi sums)", || black_box(spcot::chi_sums(kind, &seed, &v, None)));
    timed(&mut out, "check receiver (chi sums + e)", || black_box(spcot::chi_sums(kind, &seed, &w, Some(&e))));
    let cipher = kind.keyed(&seed);
    const CHUNK: usize = 4096;
    timed(&mut out, "LPN index generation (one side)", || {
        (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
            let cols = CHUNK.min(n - c * CHUNK);
            let mut idx = vec![0u32; lpn::D * cols];
            lpn::columns_indices(&cipher, c * CHUNK, k, &mut idx);
            black_box(&idx);
        })
    });
    let idx = {
        let mut idx = vec![0u32; lpn::D * n];
        idx.par_chunks_mut(lpn::D * CHUNK).enumerate().for_each(|(c, ch)| {
            lpn::columns_indices(&cipher, c * CHUNK, k, ch);
        });
        idx
    };
    timed(&mut out, "LPN gathers sender", || {
        v.par_chunks_mut(CHUNK).zip(idx.par_chunks(lpn::D * CHUNK)).for_each(|(o, ix)| lpn::gather_keys(&base_k, ix, o))
    });
    let packed: Vec<u64> = (0..k.div_ceil(64)).map(|_| rng.random()).collect();
    timed(&mut out, "LPN gathers receiver", || {
        w.par_chunks_mut(CHUNK)
            .zip(e.par_chunks_mut(CHUNK))
            .zip(idx.par_chunks(lpn::D * CHUNK))
            .for_each(|((m, u), ix)| lpn::gather_cots(&base_m, &packed, ix, m, u))
    });
    timed(&mut out, "LPN encode sender (total)", || lpn::encode_keys(kind, &seed, &base_k, &mut v));
    timed(&mut out, "LPN encode receiver (total)", || lpn::encode_cots(kind, &seed, &base_u, &base_m, &mut e, &mut w));
    black_box((&v, &w, &e));
    out
}
