//! Constant-time masks for selecting by a secret (Δ's bits, the punctured point α): the
//! OT code picks tree slots with these instead of branching on or indexing by the secret.

/// All-ones if `a == b`, else zero, computed without branching.
#[inline]
pub(crate) fn eq_mask(a: usize, b: usize) -> u128 {
    let x = (a ^ b) as u64;
    let nonzero = (x | x.wrapping_neg()) >> 63; // 1 iff x != 0
    (nonzero as u128).wrapping_sub(1)
}

/// All-ones if `bit`, else zero.
#[inline]
pub(crate) fn bit_mask(bit: bool) -> u128 {
    0u128.wrapping_sub(bit as u128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_match_their_definitions() {
        for (a, b) in [(0, 0), (0, 1), (5, 5), (usize::MAX, usize::MAX), (usize::MAX, 0), (1 << (usize::BITS - 1), 0)] {
            assert_eq!(eq_mask(a, b), if a == b { u128::MAX } else { 0 }, "{a} {b}");
        }
        assert_eq!((bit_mask(true), bit_mask(false)), (u128::MAX, 0));
    }
}
