//! The batched QuickSilver check: the verifier's challenge χ and the (parallel) random linear
//! combinations it defines.
//!
//! Every constraint i of a batch satisfies B_i = A0_i + A1_i·Δ + e_i·Δ², where e_i is zero
//! exactly when the constraint holds; the check tests Σ c_i·B_i = Σ c_i·A0_i + Σ c_i·A1_i·Δ
//! (plus a random mask). A cheating prover escapes only if Σ c_i·e_i = 0 (or, with probability
//! ≤ 2/2^128, by guessing Δ), so the coefficients c_i must make that sum nonzero for every
//! nonzero error vector fixed before χ is drawn:
//!
//! * **AND gates** have errors e_i = x_i·y_i ⊕ z_i ∈ GF(2), since every committed wire is a bit.
//!   The gates are packed in rows of [`AND_ROW`] = 128: gate j of row r (of length L) gets
//!   c = χ^(r+1)·x^(L−1−j). The bits of row r's errors are then the coefficients of a
//!   polynomial of degree < 128, so g_r = Σ_j x^(L−1−j)·e_rj is nonzero exactly when the row
//!   has a false gate, and the checked sum Σ_r χ^(r+1)·g_r is a nonzero polynomial of degree
//!   ≤ R in χ when any gate is false: it vanishes with probability ≤ R / 2^128
//!   (Schwartz–Zippel). Weighting by x^k is a shift, so a gate costs one field multiplication
//!   per side (its A0 or K_a·K_b) instead of three. The row sums g_r do not involve χ, so both
//!   sides compute them while the circuit is still running ([`super::and_rows`]).
//! * **Products of field elements** can have any error in GF(2^128), which packing would let
//!   cancel, so they keep a power each: constraint i gets χ^(R+i+1), after the R AND rows.

use rayon::prelude::*;

use crate::primitives::field::F128;

/// Work unit for the rayon pool (product constraints).
const CHUNK: usize = 2048;
/// AND gates per packed row: a row's error bits are one field element's coefficients.
pub(crate) const AND_ROW: usize = 128;

/// The verifier's χ (uniform, drawn after the batch is fixed) with a table of its powers, for a
/// batch of `n_and` AND gates and `n_products` field-product constraints. Any range of powers
/// can be computed independently, which keeps the sums parallel.
pub(crate) struct Challenge {
    chi: F128,
    /// χ^1 ..= χ^m, m = min(CHUNK, the number of product constraints): every chunk of products
    /// is summed against this one table.
    table: Vec<F128>,
    /// R: the number of AND rows, i.e. the powers χ^1..χ^R the AND gates use.
    and_rows: usize,
}

impl Challenge {
    /// The challenge from its seed, for a batch of `n_and` AND gates and `n_products` products.
    pub(crate) fn new(seed: [u8; 16], n_and: usize, n_products: usize) -> Self {
        let chi = F128::from_le_bytes(seed);
        let and_rows = n_and.div_ceil(AND_ROW);
        let m = CHUNK.min(n_products);
        let mut table = Vec::with_capacity(m);
        let mut c = chi;
        for _ in 0..m {
            table.push(c);
            c *= chi;
        }
        Challenge { chi, table, and_rows }
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

/// The AND gates' part of the check, (Σ_r χ^(r+1)·g0_r, Σ_r χ^(r+1)·g1_r), from the packed
/// rows' sums ([`super::and_rows::AndRows`]: the prover's rows of [M_x, M_y, A1 = x·M_y ⊕
/// y·M_x ⊕ M_z] give (ΣA0, ΣA1); the verifier's of [K_x, K_y, K_z] give the two parts of B =
/// first + Δ·second), by Horner's rule.
pub(crate) fn and_rows_sum(ch: &Challenge, rows: &[[F128; 2]]) -> (F128, F128) {
    debug_assert!(ch.and_rows == rows.len(), "challenge drawn for another batch");
    rows.iter().rev().fold((F128::ZERO, F128::ZERO), |(s0, s1), [g0, g1]| ((s0 ^ *g0) * ch.chi, (s1 ^ *g1) * ch.chi))
}

/// Prover, field triples [a, M_a, b, M_b, M_c]: A0 = M_a·M_b, A1 = a·M_b + b·M_a + M_c, with
/// the powers after the AND rows.
pub(crate) fn prover_product_sums(ch: &Challenge, triples: &[[F128; 5]]) -> (F128, F128) {
    par_sums(ch, ch.and_rows, triples, F128::product_sums)
}

/// Verifier, field triples [K_a, K_b, K_c]: (Σ χ_i·K_a·K_b, Σ χ_i·K_c), with the powers after
/// the AND rows; the caller forms B = first + Δ·second.
pub(crate) fn verifier_product_sums(ch: &Challenge, triples: &[[F128; 3]]) -> (F128, F128) {
    par_sums(ch, ch.and_rows, triples, F128::and_sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked, parallel sum weights item i by χ^(offset+i+1), over several chunks and a
    /// nonzero offset, as a serial sum does.
    #[test]
    fn par_sums_weights_each_item_by_its_own_power() {
        let n = 2 * CHUNK + 5;
        let offset = 3;
        let ch = Challenge::new([7; 16], 0, n);
        let items: Vec<F128> = (0..n as u128)
            .map(|i| F128::from_le_bytes((i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) | 1).to_le_bytes()))
            .collect();
        let dot =
            |coeffs: &[F128], chunk: &[F128]| coeffs.iter().zip(chunk).fold(F128::ZERO, |acc, (c, x)| acc ^ (*c * *x));
        let (sum, other) = par_sums(&ch, offset, &items, |coeffs, chunk| (dot(coeffs, chunk), F128::ZERO));
        let mut expected = F128::ZERO;
        let mut power = ch.chi.pow(offset as u128 + 1);
        for x in &items {
            expected ^= power * *x;
            power *= ch.chi;
        }
        assert_eq!((sum, other), (expected, F128::ZERO));
    }
}
