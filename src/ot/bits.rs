//! Bit-matrix helpers for IKNP: per-column PRG streams and the 128×128 bit transpose.
//!
//! Bit order everywhere: bit `i` of a column byte string is bit `i % 8` of byte `i / 8`
//! (LSB first), and bit `j` of a row `u128` is column `j`.

use crate::primitives::prg::{Prg, PrgKind};
use crate::primitives::transpose::transpose128;
use aes::cipher::generic_array::GenericArray;
use rayon::prelude::*;

/// Rows per extension-matrix message (KOS and SoftSpokenOT alike).
pub(crate) const CHUNK_ROWS: usize = 1 << 16;
/// Most correlations one `extend` call may produce (every COT source refuses more).
pub(crate) const MAX_EXTEND: usize = 1 << 26;

/// Expands one base-OT seed into an unbounded bit stream: the session's PRG keyed by the seed.
/// The position persists so successive `extend` calls use fresh output.
pub(crate) struct ColumnPrg {
    prg: Prg,
    counter: u128,
}

impl ColumnPrg {
    pub(crate) fn new(kind: PrgKind, seed: &[u8; 16]) -> Self {
        ColumnPrg { prg: kind.keyed(seed), counter: 0 }
    }

    /// Fill `out` (a multiple of 16 bytes) with the next PRG output.
    pub(crate) fn fill(&mut self, out: &mut [u8]) {
        debug_assert_eq!(out.len() % 16, 0);
        self.prg.fill(self.counter, out);
        self.counter += (out.len() / 16) as u128;
    }
}

/// Turn a column-major 128 × (8·col_len) bit matrix (column `j` = `cols[j*col_len..][..col_len]`)
/// into its rows. `col_len` must be a multiple of 16; `rows.len() == 8 * col_len`.
pub(crate) fn columns_to_rows(cols: &[u8], col_len: usize, rows: &mut [u128]) {
    debug_assert_eq!(col_len % 16, 0);
    debug_assert_eq!(cols.len(), 128 * col_len);
    debug_assert_eq!(rows.len(), 8 * col_len);
    rows.par_chunks_mut(128).enumerate().for_each(|(blk, out)| {
        let mut m = [0u128; 128];
        for (j, mj) in m.iter_mut().enumerate() {
            let off = j * col_len + 16 * blk;
            let mut b = [0u8; 16];
            b.copy_from_slice(&cols[off..off + 16]);
            *mj = u128::from_le_bytes(b);
        }
        transpose128(&mut m);
        out.copy_from_slice(&m);
        m.iter_mut().for_each(|x| *x = 0);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    // Known answers come from the `aes` crate, the reference for `prp::Aes128`.
    use aes::cipher::{BlockEncrypt, KeyInit};
    use aes::Aes128;
    use rand::Rng;

    fn bit(x: u128, i: usize) -> bool {
        (x >> i) & 1 == 1
    }

    #[test]
    fn columns_to_rows_matches_naive() {
        let mut rng = rand::rng();
        let col_len = 48; // 384 rows
        let cols: Vec<u8> = (0..128 * col_len).map(|_| rng.random()).collect();
        let mut rows = vec![0u128; 8 * col_len];
        columns_to_rows(&cols, col_len, &mut rows);
        for (i, row) in rows.iter().enumerate() {
            for j in 0..128 {
                let b = (cols[j * col_len + i / 8] >> (i % 8)) & 1 == 1;
                assert_eq!(bit(*row, j), b, "row {i} col {j}");
            }
        }
    }

    #[test]
    fn column_prg_continues_its_stream_and_matches_aes_ctr() {
        let seed = [7u8; 16];
        let mut whole = vec![0u8; 160];
        ColumnPrg::new(PrgKind::Aes128Ctr, &seed).fill(&mut whole);
        let mut p = ColumnPrg::new(PrgKind::Aes128Ctr, &seed);
        let mut a = vec![0u8; 48];
        let mut b = vec![0u8; 112];
        p.fill(&mut a);
        p.fill(&mut b);
        assert_eq!([a, b].concat(), whole);
        // block 3 is AES_seed(3)
        let cipher = Aes128::new(GenericArray::from_slice(&seed));
        let mut blk = GenericArray::clone_from_slice(&3u128.to_le_bytes());
        cipher.encrypt_block(&mut blk);
        assert_eq!(&whole[48..64], blk.as_slice());
        // different seeds give different streams
        let mut other = vec![0u8; 160];
        ColumnPrg::new(PrgKind::Aes128Ctr, &[8u8; 16]).fill(&mut other);
        assert_ne!(other, whole);
    }

    /// Exactly the bound is allowed, one more refused with the numbers.
    #[test]
    fn check_n_allows_the_bound_and_refuses_one_more() {
        assert!(check_n(MAX_EXTEND).is_ok());
        assert!(
            matches!(check_n(MAX_EXTEND + 1), Err(super::super::CotError::TooMany { requested, max }) if requested == MAX_EXTEND + 1 && max == MAX_EXTEND)
        );
    }
}

/// The selection bits of [`chi_sums`]' second sum.
#[derive(Clone, Copy)]
pub(crate) enum CheckBits<'a> {
    /// No second sum (it is 0).
    None,
    /// Bit i is bit `i % 8` of byte `i / 8`.
    Packed(&'a [u8]),
    /// Bit i is byte i (0 or 1).
    Bytes(&'a [u8]),
}

impl CheckBits<'_> {
    /// All-ones if bit `i` is set, else zero (branch-free; out-of-range bits read as 0).
    #[inline(always)]
    fn mask(&self, i: usize) -> u128 {
        let b = match *self {
            CheckBits::None => 0,
            CheckBits::Packed(p) => p.get(i / 8).map_or(0, |x| (x >> (i % 8)) & 1),
            CheckBits::Bytes(b) => b.get(i).map_or(0, |x| x & 1),
        };
        0u128.wrapping_sub(b as u128)
    }
}

/// View `u128`s as AES blocks in place; the block of `x` holds `x.to_le()`'s memory bytes, so
/// callers convert with `to_le` / `from_le` (no-ops on little-endian targets) around AES.
pub(crate) fn as_blocks(x: &mut [u128]) -> &mut [GenericArray<u8, aes::cipher::consts::U16>] {
    // SAFETY: `GenericArray<u8, U16>` is a `#[repr(transparent)]` wrapper of `[u8; 16]`: same
    // size as `u128`, alignment 1 ≤ 16, and every bit pattern is valid for both types; the
    // returned slice borrows `x` mutably, so there is no aliasing.
    unsafe { core::slice::from_raw_parts_mut(x.as_mut_ptr().cast(), x.len()) }
}

/// The random linear combination both OT consistency checks use (KOS, SoftSpokenOT, Ferret's
/// SPCOT): `(Σ χ_i·vals_i, Σ_{bit(i)} χ_i)` over GF(2^128), with χ_i block i of the PRG stream
/// under the check's seed. Without bits the second sum is 0. Parallel over pieces of
/// `piece_len` values; branch-free in the bits. The χ are public (the seed is sent), so their
/// buffers need no wiping; the values are read in place (no copy, so no secret copies to wipe).
pub(crate) fn chi_sums(chi: &Prg, vals: &[u128], piece_len: usize, bits: CheckBits<'_>) -> (u128, u128) {
    use crate::primitives::field::{PublicWeightedSum, F128};
    /// Values per inner product (stack buffers).
    const SUB: usize = 64;
    let piece_len = piece_len.max(1);
    vals.par_chunks(piece_len)
        .enumerate()
        .map(|(p, piece)| {
            let first = p * piece_len;
            let mut sum = PublicWeightedSum::new();
            let mut x = 0u128;
            let mut words = [0u128; SUB];
            let mut chis = [F128::ZERO; SUB];
            for (s, sub) in piece.chunks(SUB).enumerate() {
                let start = first + s * SUB;
                let m = sub.len();
                chi.fill_u128(start as u128, &mut words[..m]);
                for (i, (ch, &c)) in chis.iter_mut().zip(words.iter()).enumerate().take(m) {
                    *ch = F128(c);
                    x ^= ch.0 & bits.mask(start + i);
                }
                sum.add(&chis[..m], F128::from_u128_slice(sub));
            }
            (sum.finish().0, x)
        })
        .reduce(|| (0, 0), |a, b| (a.0 ^ b.0, a.1 ^ b.1))
}

/// Rows per rayon task in the consistency check.
const CHECK_PIECE_ROWS: usize = 4096;

/// (Σ χ_i·rows_i, Σ χ_i·bit_i) over GF(2^128) with χ_i from the PRG under `seed`; without
/// `bits` the second sum is 0. Parallel over pieces of rows.
fn check_sums(prg: PrgKind, seed: &[u8; 16], rows: &[u128], bits: Option<&[u8]>) -> (u128, u128) {
    let bits = bits.map_or(CheckBits::None, CheckBits::Packed);
    chi_sums(&prg.keyed(seed), rows, CHECK_PIECE_ROWS, bits)
}

/// The COT sender's (verifier's) side of the KOS-form consistency check, shared by KOS and
/// SoftSpokenOT: a fresh seed for χ, then the receiver's (x, t) must satisfy
/// Σ χ_i·q_i = t ⊕ x·Δ over the sender's rows q_i.
pub(crate) async fn check_as_sender<C: crate::channel::Channel>(
    ch: &mut C,
    prg: PrgKind,
    rows: &[u128],
    delta: crate::primitives::field::F128,
    what: &'static str,
    failed: super::CotError,
) -> Result<(), super::CotError> {
    use crate::primitives::field::F128;
    use rand::RngCore;
    let mut seed = [0u8; 16];
    rand::rng().fill_bytes(&mut seed);
    ch.send(seed.to_vec()).await?;
    let resp = ch.recv().await?;
    super::CotError::expect_len(what, &resp, 32)?;
    let (mut x, mut t) = ([0u8; 16], [0u8; 16]);
    x.copy_from_slice(&resp[..16]);
    t.copy_from_slice(&resp[16..]);
    let (q, _) = check_sums(prg, &seed, rows, None);
    if F128(q) != F128::from_le_bytes(t) + F128::from_le_bytes(x) * delta {
        return Err(failed);
    }
    Ok(())
}

/// The COT receiver's (prover's) side: answers the sender's seed with x = Σ χ_i·r_i and
/// t = Σ χ_i·t_i over its rows t_i and packed choice bits r.
pub(crate) async fn check_as_receiver<C: crate::channel::Channel>(
    ch: &mut C,
    prg: PrgKind,
    rows: &[u128],
    bits: &[u8],
    what: &'static str,
) -> Result<(), super::CotError> {
    let seed_msg = ch.recv().await?;
    super::CotError::expect_len(what, &seed_msg, 16)?;
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&seed_msg);
    let (t, x) = check_sums(prg, &seed, rows, Some(bits));
    let mut resp = Vec::with_capacity(32);
    resp.extend_from_slice(&x.to_le_bytes());
    resp.extend_from_slice(&t.to_le_bytes());
    ch.send(resp).await?;
    Ok(())
}

/// Refuses an `extend` of more than [`MAX_EXTEND`] correlations (every COT source
/// shares the bound), before anything is allocated for it.
pub(crate) fn check_n(n: usize) -> Result<(), super::CotError> {
    if n > MAX_EXTEND {
        return Err(super::CotError::TooMany { requested: n, max: MAX_EXTEND });
    }
    Ok(())
}

/// (start, length) of each extension-matrix chunk of at most [`CHUNK_ROWS`] rows
/// (KOS and SoftSpokenOT send their matrices in these chunks).
pub(crate) fn chunk_lengths(m: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..m).step_by(CHUNK_ROWS).map(move |start| (start, CHUNK_ROWS.min(m - start)))
}
