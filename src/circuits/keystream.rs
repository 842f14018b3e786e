//! AES-GCM counter-mode blocks for TLS records (NIST SP 800-38D): J0 = IV ‖ 0x00000001
//! for a 96-bit IV, keystream block j uses counter j + 2, and H = AES_K(0^128).

use super::aes::{encrypt, Block, RoundKeys};
use super::Circuit;

/// The 128-bit counter block IV ‖ BE32(counter). `iv` is 96 bits (12 bytes), possibly mixed
/// private (implicit salt) and public (explicit nonce).
pub fn counter_block<B: Circuit>(b: &B, iv: &[B::Bit], counter: u32) -> Vec<B::Bit> {
    assert_eq!(iv.len(), 96, "GCM IV must be 96 bits");
    let mut blk = iv.to_vec();
    for byte in counter.to_be_bytes() {
        for i in 0..8 {
            blk.push(b.constant((byte >> i) & 1 == 1));
        }
    }
    blk
}

/// Keystream blocks AES_K(IV ‖ BE32(j + 2)) for the given block indices j, with the backend's
/// S-box.
pub fn keystream_blocks<B: Circuit>(
    b: &mut B,
    rk: &RoundKeys<B>,
    iv: &[B::Bit],
    block_indices: &[u32],
) -> Vec<Block<B>> {
    block_indices
        .iter()
        .map(|j| {
            let cb = counter_block(b, iv, j.wrapping_add(2));
            encrypt(b, rk, &cb)
        })
        .collect()
}

/// E_K(J0), the block that masks the GHASH output in the tag.
pub fn j0_block<B: Circuit>(b: &mut B, rk: &RoundKeys<B>, iv: &[B::Bit]) -> Block<B> {
    let cb = counter_block(b, iv, 1);
    encrypt(b, rk, &cb)
}

/// The GHASH key H = AES_K(0^128).
pub fn ghash_key<B: Circuit>(b: &mut B, rk: &RoundKeys<B>) -> Block<B> {
    let zero: Vec<B::Bit> = (0..128).map(|_| b.constant(false)).collect();
    encrypt(b, rk, &zero)
}
