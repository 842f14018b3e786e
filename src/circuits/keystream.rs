//! AES-GCM counter-mode blocks for TLS records (NIST SP 800-38D): J0 = IV ‖ 0x00000001
//! for a 96-bit IV, keystream block j uses counter j + 2, and H = AES_K(0^128).

use super::aes::{encrypt, encrypt_sharing_prefix, Block, RoundKeys};
use super::Circuit;

/// The 128-bit counter block IV ‖ BE32(counter). `iv` is 96 bits (12 bytes), possibly mixed
/// private (implicit salt) and public (explicit nonce).
pub(crate) fn counter_block<B: Circuit>(b: &B, iv: &[B::Bit], counter: u32) -> Vec<B::Bit> {
    assert_eq!(iv.len(), 96, "GCM IV must be 96 bits");
    let mut blk = iv.to_vec();
    for byte in counter.to_be_bytes() {
        for i in 0..8 {
            blk.push(b.constant((byte >> i) & 1 == 1));
        }
    }
    blk
}

/// Keystream blocks AES_K(IV ‖ BE32(j + 2)) for the given block indices j, in their order,
/// with the backend's S-box. Counter blocks that agree on their first 15 bytes (up to 256
/// consecutive blocks) share their first two rounds' common S-boxes
/// ([`encrypt_sharing_prefix`]), so a call with many blocks of one record costs 133 S-boxes a
/// block; a call with one block costs what [`encrypt`] does.
pub fn keystream_blocks<B: Circuit>(
    b: &mut B,
    rk: &RoundKeys<B>,
    iv: &[B::Bit],
    block_indices: &[u32],
) -> Vec<Block<B>> {
    // Blocks by the counter's upper 24 bits, in order of first appearance.
    let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
    for (k, j) in block_indices.iter().enumerate() {
        let upper = j.wrapping_add(2) >> 8;
        match groups.iter_mut().find(|(u, _)| *u == upper) {
            Some((_, members)) => members.push(k),
            None => groups.push((upper, vec![k])),
        }
    }
    let mut out: Vec<Option<Block<B>>> = vec![None; block_indices.len()];
    for (_, members) in groups {
        let blocks: Vec<Vec<B::Bit>> =
            members.iter().map(|&k| counter_block(b, iv, block_indices[k].wrapping_add(2))).collect();
        let lasts: Vec<[B::Bit; 8]> = blocks.iter().map(|cb| core::array::from_fn(|i| cb[120 + i])).collect();
        for (k, enc) in members.into_iter().zip(encrypt_sharing_prefix(b, rk, &blocks[0][..120], &lasts)) {
            out[k] = Some(enc);
        }
    }
    out.into_iter().flatten().collect()
}

/// E_K(J0), the block that masks the GHASH output in the tag.
pub(crate) fn j0_block<B: Circuit>(b: &mut B, rk: &RoundKeys<B>, iv: &[B::Bit]) -> Block<B> {
    let cb = counter_block(b, iv, 1);
    encrypt(b, rk, &cb)
}

/// The GHASH key H = AES_K(0^128).
pub(crate) fn ghash_key<B: Circuit>(b: &mut B, rk: &RoundKeys<B>) -> Block<B> {
    let zero: Vec<B::Bit> = (0..128).map(|_| b.constant(false)).collect();
    encrypt(b, rk, &zero)
}
