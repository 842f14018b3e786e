//! The garbling hash H(x, i) = π(σ(x) ⊕ i) ⊕ σ(x), with π AES-128 under a fixed public key
//! and σ(x_L ‖ x_R) = (x_L ⊕ x_R) ‖ x_L: the tweakable circular correlation-robust hash of
//! Guo–Katz–Wang–Yu ("Efficient and secure multiparty computation from fixed-key block
//! ciphers", IEEE S&P 2020, §7), which garbling with free-XOR labels needs.

use crate::ot::bits::as_blocks;
use crate::primitives::prp::{sigma, Aes128, Block};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The fixed-key hash, one per party (the key is public; building it expands the key once),
/// with the buffer its batched calls encrypt in: it holds π's inputs σ(x) ⊕ i, from which
/// anyone recovers x, so it lives as long as the party and is wiped on drop rather than
/// zeroed and wiped on every call.
pub struct GateHash {
    pi: Aes128,
    buf: Zeroizing<[u128; BATCH]>,
}

impl Default for GateHash {
    fn default() -> Self {
        Self::new()
    }
}

impl GateHash {
    pub fn new() -> Self {
        let key = Sha256::digest(b"tlsproof/gc/half-gates/fixed-key-hash/v1");
        GateHash { pi: Aes128::new(Block::from_slice(&key[..16])), buf: Zeroizing::new([0; BATCH]) }
    }

    /// H(x_k, tweak(k)) for each k, in one batched AES call (so AES-NI pipelines them).
    #[inline]
    pub fn hash<const N: usize>(&self, x: [u128; N], tweak: impl Fn(usize) -> u128) -> [u128; N] {
        let s: [u128; N] = core::array::from_fn(|k| sigma(x[k]));
        let mut buf: [u128; N] = core::array::from_fn(|k| (s[k] ^ tweak(k)).to_le());
        self.pi.encrypt_blocks(as_blocks(&mut buf));
        core::array::from_fn(|k| u128::from_le(buf[k]) ^ s[k])
    }

    /// H(x_k, tweak(k)) in place for every k, in batched AES calls of [`BATCH`] blocks.
    #[inline]
    pub(crate) fn hash_in_place(&mut self, xs: &mut [u128], tweak: impl Fn(usize) -> u128) {
        for (c, xc) in xs.chunks_mut(BATCH).enumerate() {
            let buf = &mut self.buf[..xc.len()];
            // π encrypts σ(x_k) ⊕ tweak_k; H is that block's image ⊕ σ(x_k)
            for (k, (b, x)) in buf.iter_mut().zip(xc.iter_mut()).enumerate() {
                *x = sigma(*x);
                *b = (*x ^ tweak(c * BATCH + k)).to_le();
            }
            self.pi.encrypt_blocks(as_blocks(buf));
            for (x, b) in xc.iter_mut().zip(buf.iter()) {
                *x ^= u128::from_le(*b);
            }
        }
    }
}

/// AES blocks per batched call of [`GateHash::hash_in_place`] (16 garbled AND gates, an AES
/// round's S-box layer).
pub(crate) const BATCH: usize = 96;

/// Two gates' hash inputs (or tweaks) as one call's: `M` = 2`N`.
#[inline(always)]
pub(super) fn concat<const N: usize, const M: usize>(x: [u128; N], y: [u128; N]) -> [u128; M] {
    debug_assert_eq!(M, 2 * N);
    core::array::from_fn(|k| if k < N { x[k] } else { y[k - N] })
}

/// `h[at..at + N]` as an array.
#[inline(always)]
pub(super) fn part<const N: usize>(h: &[u128], at: usize) -> [u128; N] {
    core::array::from_fn(|k| h[at + k])
}
