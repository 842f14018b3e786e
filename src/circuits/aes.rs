//! AES-128 and AES-256 (FIPS-197) over a boolean circuit backend. The S-box is the backend's own
//! ([`Circuit::aes_sbox`]): the Boyar–Peralta circuit by default (garbled circuits, the
//! cleartext evaluator), the field-embedding inversion check in the ZK engine
//! ([`crate::zk::sbox`]). ShiftRows, MixColumns and AddRoundKey are GF(2)-linear, hence free.

use super::{Circuit, Gates};

/// A 128-bit AES block / round key: 16 bytes in FIPS-197 order, 8 bits each LSB first.
pub type Block<B> = [<B as Gates>::Bit; 128];

/// An S-box implementation over a backend (field-embedding or boolean circuit).
pub(crate) type SboxFn<B> = fn(&mut B, &[<B as Gates>::Bit; 8]) -> [<B as Gates>::Bit; 8];

/// An expanded key: 11 round keys for AES-128, 15 for AES-256.
pub struct RoundKeys<B: Circuit> {
    pub keys: Vec<Block<B>>,
}

impl<B: Circuit> Clone for RoundKeys<B> {
    fn clone(&self) -> Self {
        RoundKeys { keys: self.keys.clone() }
    }
}

/// GF(2^8) multiply modulo the AES polynomial, constant time.
pub(crate) fn gf256_mul(a: u8, b: u8) -> u8 {
    let mut r = 0u8;
    let mut a = a;
    for i in 0..8 {
        r ^= a & 0u8.wrapping_sub((b >> i) & 1);
        let hi = a >> 7;
        a = (a << 1) ^ (0x1b & 0u8.wrapping_sub(hi));
    }
    r
}

/// s^254 (= s⁻¹, 0 ↦ 0) by a fixed addition chain, constant time.
pub(crate) fn gf256_inv(s: u8) -> u8 {
    let sq = |x: u8| gf256_mul(x, x);
    let x3 = gf256_mul(sq(s), s);
    let x15 = gf256_mul(sq(sq(x3)), x3);
    let x63 = gf256_mul(sq(sq(x15)), x3);
    let x127 = gf256_mul(sq(x63), s);
    sq(x127)
}

/// The AES S-box on a plain byte (inversion + affine map), constant time.
pub(crate) fn sbox_plain(s: u8) -> u8 {
    let t = gf256_inv(s);
    t ^ t.rotate_left(1) ^ t.rotate_left(2) ^ t.rotate_left(3) ^ t.rotate_left(4) ^ 0x63
}

/// The affine output map of the S-box on bits: b_i = t_i ⊕ t_{i+4} ⊕ t_{i+5} ⊕ t_{i+6} ⊕ t_{i+7} ⊕ c_i.
pub(crate) fn sbox_affine<B: Circuit>(b: &B, t: &[B::Bit; 8]) -> [B::Bit; 8] {
    core::array::from_fn(|i| {
        let mut acc = b.constant((0x63 >> i) & 1 == 1);
        for k in [0, 4, 5, 6, 7] {
            acc = b.xor(acc, t[(i + k) % 8]);
        }
        acc
    })
}

/// Public-input shortcut shared by the S-box gadgets.
pub(crate) fn sbox_if_public<B: Circuit>(b: &B, s: &[B::Bit; 8]) -> Option<[B::Bit; 8]> {
    let mut v = 0u8;
    for (i, bit) in s.iter().enumerate() {
        v |= (b.public_value(*bit)? as u8) << i;
    }
    let out = sbox_plain(v);
    Some(core::array::from_fn(|i| b.constant((out >> i) & 1 == 1)))
}

fn byte<B: Circuit>(blk: &[B::Bit], i: usize) -> [B::Bit; 8] {
    core::array::from_fn(|k| blk[i * 8 + k])
}

fn xtime<B: Circuit>(b: &B, x: &[B::Bit; 8]) -> [B::Bit; 8] {
    // multiply by x modulo x^8 + x^4 + x^3 + x + 1
    let h = x[7];
    [x[7], b.xor(x[0], h), x[1], b.xor(x[2], h), b.xor(x[3], h), x[4], x[5], x[6]]
}

fn xor8<B: Circuit>(b: &B, x: &[B::Bit; 8], y: &[B::Bit; 8]) -> [B::Bit; 8] {
    core::array::from_fn(|i| b.xor(x[i], y[i]))
}

/// How SubBytes runs: one given S-box per byte, or the backend's own SubBytes
/// ([`Circuit::aes_sub_bytes`], which may do a call's S-boxes together).
enum SubBytes<B: Circuit> {
    Each(SboxFn<B>),
    Backend,
}

impl<B: Circuit> SubBytes<B> {
    fn apply(&self, b: &mut B, bytes: &mut [[B::Bit; 8]]) {
        match self {
            SubBytes::Each(sbox) => {
                for x in bytes.iter_mut() {
                    *x = sbox(b, x);
                }
            }
            SubBytes::Backend => b.aes_sub_bytes(bytes),
        }
    }
}

/// SubBytes on the state in place (it commutes with ShiftRows, which [`shift_mix_add`]
/// applies by indexing).
fn sub_bytes<B: Circuit>(b: &mut B, st: &mut Block<B>, how: &SubBytes<B>) {
    let mut bytes: [[B::Bit; 8]; 16] = core::array::from_fn(|i| byte::<B>(st, i));
    how.apply(b, &mut bytes);
    for (i, x) in bytes.iter().enumerate() {
        st[i * 8..i * 8 + 8].copy_from_slice(x);
    }
}

/// ShiftRows, then MixColumns unless `last`, then AddRoundKey, into one new state (the 128
/// bits are 4 KiB of MACs on the prover: one pass instead of a copy per step).
fn shift_mix_add<B: Circuit>(b: &B, st: &Block<B>, key: &Block<B>, last: bool) -> Block<B> {
    let mut out = *key;
    for c in 0..4 {
        // ShiftRows: new (r, c) takes old (r, c + r).
        let a: [[B::Bit; 8]; 4] = core::array::from_fn(|r| byte::<B>(st, r + 4 * ((c + r) % 4)));
        for r in 0..4 {
            let v = if last {
                a[r]
            } else {
                // 2·a_r ⊕ 3·a_{r+1} ⊕ a_{r+2} ⊕ a_{r+3}
                let two_a0 = xtime(b, &a[r]);
                let a1 = &a[(r + 1) % 4];
                let three_a1 = xor8(b, &xtime(b, a1), a1);
                let v = xor8(b, &two_a0, &three_a1);
                xor8(b, &xor8(b, &v, &a[(r + 2) % 4]), &a[(r + 3) % 4])
            };
            for (o, x) in out[(r + 4 * c) * 8..(r + 4 * c) * 8 + 8].iter_mut().zip(v) {
                *o = b.xor(*o, x);
            }
        }
    }
    out
}

/// AES key expansion with a given S-box (40 S-boxes for AES-128, 52 for AES-256).
pub(crate) fn key_schedule_with<B: Circuit>(b: &mut B, key: &[B::Bit], sbox: SboxFn<B>) -> RoundKeys<B> {
    expand_key(b, key, &SubBytes::Each(sbox))
}

/// AES encryption of one block with a given S-box (160 S-boxes for AES-128, 224 for
/// AES-256).
pub(crate) fn encrypt_with<B: Circuit>(b: &mut B, rk: &RoundKeys<B>, block: &[B::Bit], sbox: SboxFn<B>) -> Block<B> {
    encrypt_rounds(b, rk, block, &SubBytes::Each(sbox))
}

/// AES key schedule (a 128- or 256-bit key) with the backend's S-box.
pub fn key_schedule<B: Circuit>(b: &mut B, key: &[B::Bit]) -> RoundKeys<B> {
    expand_key(b, key, &SubBytes::Backend)
}

/// AES encryption with the backend's S-box.
pub(crate) fn encrypt<B: Circuit>(b: &mut B, rk: &RoundKeys<B>, block: &[B::Bit]) -> Block<B> {
    encrypt_rounds(b, rk, block, &SubBytes::Backend)
}

fn expand_key<B: Circuit>(b: &mut B, key: &[B::Bit], how: &SubBytes<B>) -> RoundKeys<B> {
    assert!(key.len() == 128 || key.len() == 256, "an AES key is 128 or 256 bits");
    let nk = key.len() / 32;
    let rounds = nk + 6;
    let mut w: Vec<[B::Bit; 32]> = (0..nk).map(|i| core::array::from_fn(|k| key[i * 32 + k])).collect();
    let rcon = [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    for i in nk..4 * (rounds + 1) {
        let mut temp = w[i - 1];
        if i % nk == 0 || (nk == 8 && i % nk == 4) {
            // RotWord (not for AES-256's middle word), then SubWord, then Rcon.
            let rot = if i % nk == 0 { 8 } else { 0 };
            let mut bytes: [[B::Bit; 8]; 4] =
                core::array::from_fn(|j| core::array::from_fn(|k| temp[(j * 8 + k + rot) % 32]));
            how.apply(b, &mut bytes);
            let mut sub: [B::Bit; 32] = core::array::from_fn(|k| bytes[k / 8][k % 8]);
            if i % nk == 0 {
                for (k, bit) in sub.iter_mut().take(8).enumerate() {
                    let rc = b.constant((rcon[i / nk - 1] >> k) & 1 == 1);
                    *bit = b.xor(*bit, rc);
                }
            }
            temp = sub;
        }
        let prev = w[i - nk];
        w.push(core::array::from_fn(|k| b.xor(prev[k], temp[k])));
    }
    let keys = (0..=rounds).map(|r| core::array::from_fn(|k| w[4 * r + k / 32][k % 32])).collect();
    RoundKeys { keys }
}

fn encrypt_rounds<B: Circuit>(b: &mut B, rk: &RoundKeys<B>, block: &[B::Bit], how: &SubBytes<B>) -> Block<B> {
    assert_eq!(block.len(), 128, "AES block must be 128 bits");
    let st: Block<B> = core::array::from_fn(|i| b.xor(block[i], rk.keys[0][i]));
    rounds_from(b, rk, st, 1, how)
}

/// Rounds `first..` (to 10 for AES-128, 14 for AES-256) on the state after round `first - 1`.
fn rounds_from<B: Circuit>(
    b: &mut B,
    rk: &RoundKeys<B>,
    mut st: Block<B>,
    first: usize,
    how: &SubBytes<B>,
) -> Block<B> {
    let last = rk.keys.len() - 1;
    for round in first..=last {
        sub_bytes(b, &mut st, how);
        st = shift_mix_add(b, &st, &rk.keys[round], round == last);
    }
    st
}

/// AES encryptions, with the backend's S-box, of blocks that agree on their first 15
/// bytes (`prefix`, 120 bits) and differ only in the last (`last_bytes`, one per block), as
/// the counter blocks of one GCM record do. The 27 S-boxes that do not see the last byte are
/// done once for all: round 1's on the 15 shared bytes, and round 2's on columns 1–3, which
/// ShiftRows and MixColumns fill from those bytes alone (the last byte, row 3 of column 3,
/// moves to column 0). Each block then costs 133 S-boxes instead of 160 (197 instead of 224
/// for AES-256). The outputs are the wires a block-by-block [`encrypt`] gives.
pub(crate) fn encrypt_sharing_prefix<B: Circuit>(
    b: &mut B,
    rk: &RoundKeys<B>,
    prefix: &[B::Bit],
    last_bytes: &[[B::Bit; 8]],
) -> Vec<Block<B>> {
    assert_eq!(prefix.len(), 120, "the shared prefix is 15 bytes");
    if last_bytes.is_empty() {
        return Vec::new();
    }
    let how = SubBytes::Backend;
    let k0 = &rk.keys[0];
    let mut shared: [[B::Bit; 8]; 15] =
        core::array::from_fn(|i| core::array::from_fn(|k| b.xor(prefix[i * 8 + k], k0[i * 8 + k])));
    how.apply(b, &mut shared);
    let mut lasts: Vec<[B::Bit; 8]> =
        last_bytes.iter().map(|x| core::array::from_fn(|k| b.xor(x[k], k0[120 + k]))).collect();
    how.apply(b, &mut lasts);
    let after_round1: Vec<Block<B>> = lasts
        .iter()
        .map(|last| {
            let st: Block<B> = core::array::from_fn(|i| if i < 120 { shared[i / 8][i % 8] } else { last[i - 120] });
            shift_mix_add(b, &st, &rk.keys[1], false)
        })
        .collect();
    // Round 2's SubBytes: columns 1–3 (bytes 4..16) are the same wires in every state.
    let mut columns: [[B::Bit; 8]; 12] = core::array::from_fn(|i| byte::<B>(&after_round1[0], 4 + i));
    how.apply(b, &mut columns);
    let mut column0: Vec<[B::Bit; 8]> = after_round1.iter().flat_map(|st| (0..4).map(|i| byte::<B>(st, i))).collect();
    how.apply(b, &mut column0);
    column0
        .chunks_exact(4)
        .map(|c0| {
            let st: Block<B> =
                core::array::from_fn(|i| if i < 32 { c0[i / 8][i % 8] } else { columns[i / 8 - 4][i % 8] });
            let st = shift_mix_add(b, &st, &rk.keys[2], false);
            rounds_from(b, rk, st, 3, &how)
        })
        .collect()
}
