//! The batched QuickSilver check: the verifier's challenge χ and the (parallel) random linear
//! combinations with coefficients χ, χ², χ³, ….

use rayon::prelude::*;

use crate::zk::field::F128;

/// Work unit for the rayon pool.
const CHUNK: usize = 2048;

/// Coefficients χ_i = χ^(i+1) for a uniform χ chosen by the verifier after the batch is
/// fixed. A false constraint makes the checked sum a nonzero polynomial of degree ≤ n in χ,
/// so it vanishes with probability ≤ n / 2^128 (Schwartz–Zippel); any range of powers can be
/// computed independently, which keeps the sums parallel.
pub(crate) struct Challenge {
    chi: F128,
    /// χ^1 ..= χ^m, m = min(CHUNK, the longest list the check sums): every chunk is summed
    /// against this one table.
    table: Vec<F128>,
}

impl Challenge {
    /// The challenge from its seed, for sums over lists of at most `max_items` entries.
    pub(crate) fn new(seed: [u8; 16], max_items: usize) -> Self {
        let chi = F128::from_le_bytes(seed);
        let m = CHUNK.min(max_items);
        let mut table = Vec::with_capacity(m);
        let mut c = chi;
        for _ in 0..m {
            table.push(c);
            c *= chi;
        }
        Challenge { chi, table }
    }
}

/// Parallel Σ_i χ^(offset+i+1)·(terms of items[i]): every chunk is summed against the
/// challenge's table χ^1..χ^CHUNK and then scaled by χ^(its start), so each item costs no power
/// of its own. `f` turns (coefficients, chunk) into the chunk's two sums.
fn par_sums<T: Sync>(
    ch: &Challenge,
    offset: usize,
    items: &[T],
    f: impl Fn(&[F128], &[T]) -> (F128, F128) + Sync,
) -> (F128, F128) {
    debug_assert!(ch.table.len() >= CHUNK.min(items.len()), "challenge table too short");
    items
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(ci, chunk)| {
            let scale = ch.chi.pow((offset + ci * CHUNK) as u128);
            let (a, b) = f(&ch.table[..chunk.len()], chunk);
            (a * scale, b * scale)
        })
        .reduce(|| (F128::ZERO, F128::ZERO), |a, b| (a.0 ^ b.0, a.1 ^ b.1))
}

/// Prover, AND triples stored as [M_x, M_y, A1 = x·M_y ⊕ y·M_x ⊕ M_z]:
/// returns (Σ χ_i·M_x·M_y, Σ χ_i·A1_i).
pub(crate) fn prover_and_sums(ch: &Challenge, triples: &[[F128; 3]]) -> (F128, F128) {
    par_sums(ch, 0, triples, F128::and_sums)
}

/// Prover, field triples [a, M_a, b, M_b, M_c]: A0 = M_a·M_b, A1 = a·M_b + b·M_a + M_c.
pub(crate) fn prover_product_sums(
    ch: &Challenge,
    offset: usize,
    triples: &[[F128; 5]],
) -> (F128, F128) {
    par_sums(ch, offset, triples, F128::product_sums)
}

/// Verifier, triples [K_a, K_b, K_c]: returns (Σ χ_i·K_a·K_b, Σ χ_i·K_c); the caller forms
/// B = first + Δ·second.
pub(crate) fn verifier_sums(ch: &Challenge, offset: usize, triples: &[[F128; 3]]) -> (F128, F128) {
    par_sums(ch, offset, triples, F128::and_sums)
}
