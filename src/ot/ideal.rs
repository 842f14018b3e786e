//! Trusted-dealer COT: both ends expand the same seed. **Tests and benchmarks only** — the
//! prover's side knows Δ, so this offers no security whatsoever.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes128;

use super::{CotError, CotReceiver, CotSender};
use crate::channel::Channel;
use crate::primitives::field::F128;

/// Deterministic AES-CTR expander shared by both ideal ends.
struct Dealer {
    cipher: Aes128,
    counter: u128,
    delta: F128,
}

impl Dealer {
    fn new(seed: [u8; 16]) -> Self {
        let cipher = Aes128::new(&seed.into());
        let mut d = Dealer { cipher, counter: 0, delta: F128::ZERO };
        d.delta = d.next();
        d
    }

    fn next(&mut self) -> F128 {
        let mut block = aes::Block::from(self.counter.to_le_bytes());
        self.counter += 1;
        self.cipher.encrypt_block(&mut block);
        F128(u128::from_le_bytes(block.into()))
    }

    /// n pairs (u_i, K_i): one block of choice bits per 128 COTs, one block per key.
    fn draw(&mut self, n: usize) -> (Vec<bool>, Vec<F128>) {
        let n_bit_blocks = n.div_ceil(128);
        let mut blocks: Vec<aes::Block> =
            (0..n + n_bit_blocks).map(|i| aes::Block::from((self.counter + i as u128).to_le_bytes())).collect();
        self.counter += blocks.len() as u128;
        self.cipher.encrypt_blocks(&mut blocks);
        let vals: Vec<u128> = blocks.iter().map(|b| u128::from_le_bytes((*b).into())).collect();
        let (bit_words, key_words) = vals.split_at(n_bit_blocks);
        let bits = (0..n).map(|i| (bit_words[i / 128] >> (i % 128)) & 1 == 1).collect();
        let keys = key_words.iter().map(|k| F128(*k)).collect();
        (bits, keys)
    }
}

/// Verifier end of the trusted-dealer COT (tests only).
pub(crate) struct IdealCotSender {
    dealer: Dealer,
}

impl IdealCotSender {
    pub fn new(seed: [u8; 16]) -> Self {
        IdealCotSender { dealer: Dealer::new(seed) }
    }
}

impl CotSender for IdealCotSender {
    fn delta(&self) -> F128 {
        self.dealer.delta
    }
    async fn extend<C: Channel>(&mut self, _ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        Ok(self.dealer.draw(n).1)
    }
}

/// Prover end of the trusted-dealer COT (tests only).
pub(crate) struct IdealCotReceiver {
    dealer: Dealer,
    issued: usize,
    tamper_index: Option<usize>,
}

impl IdealCotReceiver {
    pub fn new(seed: [u8; 16]) -> Self {
        IdealCotReceiver { dealer: Dealer::new(seed), issued: 0, tamper_index: None }
    }

    /// How many COTs it has issued.
    pub(crate) fn issued(&self) -> usize {
        self.issued
    }

    /// Test knob: flips one bit of the MAC of the `index`-th COT ever issued, breaking the
    /// correlation M = K ⊕ u·Δ for that one COT.
    pub(crate) fn with_tampered_index(seed: [u8; 16], index: usize) -> Self {
        IdealCotReceiver { tamper_index: Some(index), ..Self::new(seed) }
    }
}

impl CotReceiver for IdealCotReceiver {
    async fn extend<C: Channel>(&mut self, _ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        let delta = self.dealer.delta;
        let (bits, keys) = self.dealer.draw(n);
        let mut macs: Vec<F128> = bits.iter().zip(&keys).map(|(u, k)| *k ^ delta.select(*u)).collect();
        if let Some(t) = self.tamper_index {
            if t >= self.issued && t < self.issued + n {
                macs[t - self.issued].0 ^= 1;
            }
        }
        self.issued += n;
        Ok((bits, macs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::memory_pair;

    #[test]
    fn ideal_cot_satisfies_correlation() {
        let (mut a, mut b) = memory_pair(1 << 20);
        let mut s = IdealCotSender::new([7; 16]);
        let mut r = IdealCotReceiver::new([7; 16]);
        futures::executor::block_on(async {
            for n in [5usize, 300] {
                let k = s.extend(&mut a, n).await.unwrap();
                let (u, m) = r.extend(&mut b, n).await.unwrap();
                let ones = u.iter().filter(|x| **x).count();
                assert!(n < 100 || (ones > n / 4 && ones < 3 * n / 4));
                for i in 0..n {
                    assert_eq!(m[i], k[i] ^ s.delta().select(u[i]));
                }
            }
        });
    }
}
