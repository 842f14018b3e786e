//! Bit-matrix transposition (OT extension's column-to-row step, bit-sliced field tables).

/// In-place transpose of a 128×128 bit matrix: afterwards bit `c` of `a[r]` is the former bit
/// `r` of `a[c]`. Recursive block swaps (Eklundh), 7 rounds of 64 masked swaps, branch-free.
/// Each round is its own instantiation so that every shift is by a constant: wasm has no
/// 128-bit shift, and a shift by a variable amount becomes a call to a runtime helper.
pub(crate) fn transpose128(a: &mut [u128; 128]) {
    #[inline(always)]
    fn round<const W: usize>(a: &mut [u128; 128], mask: u128) {
        let mut base = 0;
        while base < 128 {
            for r in base..base + W {
                let t = ((a[r] >> W) ^ a[r + W]) & mask;
                a[r] ^= t << W;
                a[r + W] ^= t;
            }
            base += 2 * W;
        }
    }
    round::<64>(a, 0x0000_0000_0000_0000_FFFF_FFFF_FFFF_FFFF);
    round::<32>(a, 0x0000_0000_FFFF_FFFF_0000_0000_FFFF_FFFF);
    round::<16>(a, 0x0000_FFFF_0000_FFFF_0000_FFFF_0000_FFFF);
    round::<8>(a, 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF);
    round::<4>(a, 0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F);
    round::<2>(a, 0x3333_3333_3333_3333_3333_3333_3333_3333);
    round::<1>(a, 0x5555_5555_5555_5555_5555_5555_5555_5555);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn bit(x: u128, i: usize) -> bool {
        (x >> i) & 1 == 1
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn transpose128_matches_naive() {
        let mut rng = rand::rng();
        for _ in 0..20 {
            let orig: [u128; 128] = core::array::from_fn(|_| rng.random());
            let mut t = orig;
            transpose128(&mut t);
            for r in 0..128 {
                for c in 0..128 {
                    assert_eq!(bit(t[r], c), bit(orig[c], r), "r={r} c={c}");
                }
            }
            transpose128(&mut t);
            assert_eq!(t, orig, "transpose is an involution");
        }
    }
}
