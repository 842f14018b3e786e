//! Two-party GHASH for MPC mode's AES-GCM records (NIST SP 800-38D): the parties hold
//! additive shares of the GHASH key H (out of the garbled AES, H = E_K(0^128)) and turn them
//! into additive shares of every power H, H², …, H^n a record needs. GHASH is linear in the
//! powers once the record's blocks are public, so each party then computes its share of a
//! record's GHASH alone, and with shares of E_K(J0) its share of the tag.
//!
//! The powers, with the prover A always the OLE sender and the verifier B the receiver:
//! 1. additive to multiplicative: A picks a random nonzero r; one OLE of r against B's share
//!    h_B gives α + β = r·h_B; A sends s = r·h_A + α, so B holds r·H and A holds r⁻¹;
//! 2. each party raises its multiplicative share to the odd powers it needs, and one OLE per odd
//!    power turns r⁻ᵏ and (r·H)ᵏ back into additive shares of Hᵏ;
//! 3. even powers need nothing: squaring is linear in characteristic 2, so (x + y)² = x² + y²
//!    and each party squares its share of H^(k/2).
//!
//! A receives nothing but B's OLE corrections; B sees r·H, uniform. For a server record A
//! sends its tag share first and B answers only accept or reject (docs/protocol.md): a B that
//! sent its share would let an A that used inconsistent OLE inputs read B's bits from the
//! difference to the tag the server sent.

use super::ole::{
    a2m_receiver_share, a2m_sender_share, corrections_from_bytes, elements_from_bytes, elements_to_bytes, receiver,
    receiver_corrections, sender, OleError, COTS_PER_OLE,
};
use crate::channel::{Channel, ChannelError};
use crate::circuits::bits_to_bytes;
use crate::primitives::field::F128;

/// The most blocks one record's GHASH absorbs: a 2^14-byte TLS 1.2 record, its 13-byte
/// additional data and the lengths block.
pub(crate) const MAX_POWER: usize = 1 + (1 << 14) / 16 + 1;

/// Why the conversion or a share was refused.
#[derive(Debug, thiserror::Error)]
pub enum GhashError {
    #[error(transparent)]
    Ole(#[from] OleError),
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error("the peer sent a malformed GHASH message: {0}")]
    Malformed(&'static str),
    #[error("a GHASH of {blocks} blocks needs powers of H up to {blocks}, but only {max} were converted")]
    TooManyBlocks { blocks: usize, max: usize },
}

/// A 16-byte GCM block as a field element: GCM numbers a block's bits from the most
/// significant bit of its first byte, which is the coefficient of x⁰.
pub(crate) fn block_to_field(b: [u8; 16]) -> F128 {
    F128(u128::from_be_bytes(b).reverse_bits())
}

/// The inverse of [`block_to_field`].
pub(crate) fn field_to_block(f: F128) -> [u8; 16] {
    f.0.reverse_bits().to_be_bytes()
}

/// The blocks GHASH absorbs for a record: the additional data and the ciphertext, each
/// zero-padded to whole blocks, then their bit lengths (64 bits each, big-endian).
fn ghash_blocks(aad: &[u8], ciphertext: &[u8]) -> Vec<F128> {
    let mut blocks = Vec::with_capacity(aad.len().div_ceil(16) + ciphertext.len().div_ceil(16) + 1);
    for part in [aad, ciphertext] {
        for chunk in part.chunks(16) {
            let mut b = [0u8; 16];
            b[..chunk.len()].copy_from_slice(chunk);
            blocks.push(block_to_field(b));
        }
    }
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad.len() as u64 * 8).to_be_bytes());
    lengths[8..].copy_from_slice(&(ciphertext.len() as u64 * 8).to_be_bytes());
    blocks.push(block_to_field(lengths));
    blocks
}

/// Odd powers 1, 3, 5, … up to `max_power`.
fn odd_powers(max_power: usize) -> usize {
    max_power.div_ceil(2)
}

/// x, x³, x⁵, … up to x^max_power: a party's multiplicative shares of the odd powers.
fn odd_powers_of(x: F128, max_power: usize) -> Vec<F128> {
    let x_sq = x * x;
    let mut odd = Vec::with_capacity(odd_powers(max_power));
    let mut p = x;
    for _ in 0..odd_powers(max_power) {
        odd.push(p);
        p *= x_sq;
    }
    odd
}

/// COTs (A the sender) that [`powers_a`]/[`powers_b`] take for powers up to `max_power`.
pub(crate) fn cots_for_powers(max_power: usize) -> usize {
    (1 + odd_powers(max_power)) * COTS_PER_OLE
}

/// A party's additive shares of H, H², …, H^max_power.
pub(crate) struct PowerShares(Vec<F128>);

impl Drop for PowerShares {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        for x in &mut self.0 {
            x.0.zeroize();
        }
    }
}

impl PowerShares {
    /// From the shares of the odd powers, the even ones by squaring.
    fn from_odd(odd: &[F128], max_power: usize) -> PowerShares {
        let mut all = vec![F128::ZERO; max_power];
        for k in 1..=max_power {
            all[k - 1] = if k % 2 == 1 { odd[k / 2] } else { all[k / 2 - 1] * all[k / 2 - 1] };
        }
        PowerShares(all)
    }

    /// This party's share of H^k (1 ≤ k ≤ max_power).
    pub(crate) fn power(&self, k: usize) -> Option<F128> {
        k.checked_sub(1).and_then(|i| self.0.get(i)).copied()
    }

    /// This party's share of GHASH_H(aad, ciphertext): Σ X_i · H^(m−i+1) over the m blocks X_i,
    /// with the party's share of each power. The shares of the two parties add up to GHASH.
    pub(crate) fn ghash_share(&self, aad: &[u8], ciphertext: &[u8]) -> Result<F128, GhashError> {
        let blocks = ghash_blocks(aad, ciphertext);
        let m = blocks.len();
        if m > self.0.len() {
            return Err(GhashError::TooManyBlocks { blocks: m, max: self.0.len() });
        }
        Ok(blocks.iter().enumerate().fold(F128::ZERO, |acc, (i, x)| acc + *x * self.0[m - 1 - i]))
    }

    /// This party's share of a record's tag, from its share of E_K(J0) for the record's nonce.
    pub(crate) fn tag_share(&self, aad: &[u8], ciphertext: &[u8], j0_share: [u8; 16]) -> Result<[u8; 16], GhashError> {
        Ok(field_to_block(self.ghash_share(aad, ciphertext)? + block_to_field(j0_share)))
    }
}

fn elements_from(msg: &[u8], n: usize) -> Result<Vec<F128>, GhashError> {
    elements_from_bytes(msg, n).map_err(GhashError::Malformed)
}

fn check_bound(max_power: usize) -> Result<(), GhashError> {
    if max_power == 0 || max_power > MAX_POWER {
        return Err(GhashError::TooManyBlocks { blocks: max_power, max: MAX_POWER });
    }
    Ok(())
}

/// A nonzero random element.
fn nonzero() -> F128 {
    loop {
        let r = F128(rand::random());
        if r != F128::ZERO {
            return r;
        }
    }
}

/// Party A's side (the prover, OLE sender): from its additive share of H and
/// [`cots_for_powers`] COT keys under `delta` (the first with session-wide index `first`), its
/// shares of H, …, H^max_power.
pub(crate) async fn powers_a<C: Channel>(
    ch: &mut C,
    h_share: F128,
    max_power: usize,
    delta: F128,
    keys: &[F128],
    first: u64,
) -> Result<PowerShares, GhashError> {
    powers_a_inner(ch, h_share, max_power, delta, keys, first, None).await
}

/// [`powers_a`] by a cheating A, for tests: its input to odd-power OLE `ole` is off by `error`
/// for bit `bit` only.
#[cfg(test)]
async fn powers_a_inconsistent<C: Channel>(
    ch: &mut C,
    h_share: F128,
    max_power: usize,
    delta: F128,
    keys: &[F128],
    cheat: (usize, usize, F128),
) -> Result<PowerShares, GhashError> {
    powers_a_inner(ch, h_share, max_power, delta, keys, 0, Some(cheat)).await
}

async fn powers_a_inner<C: Channel>(
    ch: &mut C,
    h_share: F128,
    max_power: usize,
    delta: F128,
    keys: &[F128],
    first: u64,
    #[allow(unused_variables)] cheat: Option<(usize, usize, F128)>,
) -> Result<PowerShares, GhashError> {
    check_bound(max_power)?;
    let n = cots_for_powers(max_power);
    if keys.len() != n {
        return Err(OleError::CountMismatch { what: "COTs for the GHASH powers", expected: n, got: keys.len() }.into());
    }
    let (k1, k2) = keys.split_at(COTS_PER_OLE);
    let r = nonzero();
    let e = corrections_from_bytes(&ch.recv().await?, COTS_PER_OLE)?;
    let (alpha, msg) = sender(&[r], delta, k1, first, &e)?;
    let (s, r_inv) = a2m_sender_share(r, h_share, alpha[0]);
    let mut out = elements_to_bytes(&msg);
    super::ole::OleField::write(s, &mut out);
    ch.send(out).await?;

    let odd = odd_powers_of(r_inv, max_power);
    let e = corrections_from_bytes(&ch.recv().await?, k2.len())?;
    let second = first + COTS_PER_OLE as u64;
    #[cfg(test)]
    let (shares, msg) = match cheat {
        Some(c) => super::ole::sender_with_error(&odd, delta, k2, second, &e, c)?,
        None => sender(&odd, delta, k2, second, &e)?,
    };
    #[cfg(not(test))]
    let (shares, msg) = sender(&odd, delta, k2, second, &e)?;
    // 16 bytes per COT: over a megabyte for a full-size record's powers.
    crate::channel::send_chunked(ch, &elements_to_bytes(&msg)).await?;
    Ok(PowerShares::from_odd(&shares, max_power))
}

/// Party B's side (the verifier, OLE receiver): its COT choices and MACs, as many as A's keys.
pub(crate) async fn powers_b<C: Channel>(
    ch: &mut C,
    h_share: F128,
    max_power: usize,
    choices: &[bool],
    macs: &[F128],
    first: u64,
) -> Result<PowerShares, GhashError> {
    check_bound(max_power)?;
    let n = cots_for_powers(max_power);
    for got in [choices.len(), macs.len()] {
        if got != n {
            return Err(OleError::CountMismatch { what: "COTs for the GHASH powers", expected: n, got }.into());
        }
    }
    let ((c1, c2), (m1, m2)) = (choices.split_at(COTS_PER_OLE), macs.split_at(COTS_PER_OLE));
    ch.send(bits_to_bytes(&receiver_corrections(&[h_share], c1)?)).await?;
    let msg = ch.recv().await?;
    let (ole_msg, s) = msg
        .split_at_checked(16 * COTS_PER_OLE)
        .ok_or(GhashError::Malformed("the conversion's first message is short"))?;
    let s = elements_from(s, 1)?[0];
    let beta = receiver(&[h_share], m1, first, &elements_from(ole_msg, COTS_PER_OLE)?)?[0];
    let rh = a2m_receiver_share(s, beta);

    let odd = odd_powers_of(rh, max_power);
    ch.send(bits_to_bytes(&receiver_corrections(&odd, c2)?)).await?;
    let msg = crate::channel::recv_chunked(ch, c2.len() * <F128 as super::ole::OleField>::BYTES).await?;
    let shares = receiver(&odd, m2, first + COTS_PER_OLE as u64, &elements_from(&msg, c2.len())?)?;
    Ok(PowerShares::from_odd(&shares, max_power))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::ot::test_util::random_cots;
    use aes::cipher::{BlockEncrypt, KeyInit};
    use futures::executor::block_on;
    use futures::future::join;

    /// Both parties' power shares from additive shares of `h`.
    fn power_shares(h: F128, max_power: usize) -> (PowerShares, PowerShares) {
        let delta = F128(rand::random());
        let (keys, choices, macs) = random_cots(delta, cots_for_powers(max_power));
        let h_a = F128(rand::random());
        let (mut ca, mut cb) = memory_pair(1 << 24);
        let (a, b) = block_on(join(
            powers_a(&mut ca, h_a, max_power, delta, &keys, 40),
            powers_b(&mut cb, h + h_a, max_power, &choices, &macs, 40),
        ));
        (a.expect("A's side"), b.expect("B's side"))
    }

    fn aes_block(key: &[u8; 16], block: [u8; 16]) -> [u8; 16] {
        let mut b = block.into();
        aes::Aes128::new(key.into()).encrypt_block(&mut b);
        b.into()
    }

    #[test]
    fn the_shares_of_every_power_add_up_to_it() {
        let h = F128(rand::random());
        let (a, b) = power_shares(h, 9);
        let mut hk = F128::ONE;
        for k in 1..=9 {
            hk *= h;
            let (x, y) = (a.power(k).expect("in range"), b.power(k).expect("in range"));
            assert_eq!(x + y, hk, "H^{k}");
            assert_ne!(x, hk, "A's share of H^{k} is not the power itself");
        }
        assert_eq!(a.power(0), None);
        assert_eq!(a.power(10), None);
    }

    #[test]
    fn tag_shares_add_up_to_the_tag_ring_computes() {
        // A real AES-128-GCM record (ring seals it): key, nonce, 13 bytes of TLS additional
        // data, a ciphertext of a few blocks and a partial one.
        let key: [u8; 16] = rand::random();
        let nonce: [u8; 12] = rand::random();
        let aad: [u8; 13] = rand::random();
        let mut data: Vec<u8> = (0..100u8).collect();
        let sealing =
            ring::aead::LessSafeKey::new(ring::aead::UnboundKey::new(&ring::aead::AES_128_GCM, &key).expect("key"));
        let tag = sealing
            .seal_in_place_separate_tag(
                ring::aead::Nonce::assume_unique_for_key(nonce),
                ring::aead::Aad::from(aad),
                &mut data,
            )
            .expect("seal");

        let h = block_to_field(aes_block(&key, [0; 16]));
        let blocks = 1 + data.len().div_ceil(16) + 1;
        let (a, b) = power_shares(h, blocks);
        let mut j0 = [0u8; 16];
        j0[..12].copy_from_slice(&nonce);
        j0[15] = 1;
        let ej0 = aes_block(&key, j0);
        let mask: [u8; 16] = rand::random();
        let ta = a.tag_share(&aad, &data, mask).expect("enough powers");
        let tb = b.tag_share(&aad, &data, core::array::from_fn(|i| ej0[i] ^ mask[i])).expect("enough powers");
        let joint: [u8; 16] = core::array::from_fn(|i| ta[i] ^ tb[i]);
        assert_eq!(joint, tag.as_ref(), "the two tag shares add up to the GCM tag");

        // One ciphertext byte changed: the joint tag no longer matches the server's.
        data[7] ^= 1;
        let ta = a.tag_share(&aad, &data, mask).expect("enough powers");
        let tb = b.tag_share(&aad, &data, core::array::from_fn(|i| ej0[i] ^ mask[i])).expect("enough powers");
        assert_ne!(core::array::from_fn::<u8, 16, _>(|i| ta[i] ^ tb[i]), tag.as_ref());
    }

    #[test]
    fn an_inconsistent_ole_input_makes_the_tag_wrong_exactly_when_the_receivers_bit_is_set() {
        // A cheats in the OLE for H³ (odd power 1), bit 5: B's share of H³ is off by
        // error·x⁵ when bit 5 of B's input (r·H)³ is set, and then so is the joint GHASH of a
        // record of three or more blocks, hence its tag, which the server refuses. Either way
        // A received only B's masked corrections.
        let (mut wrong, mut right) = (false, false);
        for _ in 0..64 {
            let h = F128(rand::random());
            let delta = F128(rand::random());
            let (keys, choices, macs) = random_cots(delta, cots_for_powers(4));
            let h_a = F128(rand::random());
            let (mut ca, mut cb) = memory_pair(1 << 20);
            let (a, b) = block_on(join(
                powers_a_inconsistent(&mut ca, h_a, 4, delta, &keys, (1, 5, F128(rand::random::<u128>() | 1))),
                powers_b(&mut cb, h + h_a, 4, &choices, &macs, 0),
            ));
            let (a, b) = (a.expect("A's side"), b.expect("B's side"));
            let h3_ok = a.power(3).zip(b.power(3)).map(|(x, y)| x + y) == Some(h * h * h);
            // The joint GHASH of 4 blocks against the honest one from the true powers.
            let blocks = ghash_blocks(&[1; 13], &[2; 20]);
            let honest =
                blocks.iter().enumerate().fold(F128::ZERO, |acc, (i, x)| acc + *x * h.pow((blocks.len() - i) as u128));
            let joint = a.ghash_share(&[1; 13], &[2; 20]).expect("4 powers")
                + b.ghash_share(&[1; 13], &[2; 20]).expect("4 powers");
            assert_eq!(joint == honest, h3_ok, "the tag is wrong exactly when H³'s shares are");
            wrong |= !h3_ok;
            right |= h3_ok;
            if wrong && right {
                return;
            }
        }
        panic!("64 random bits of B were all equal");
    }

    #[test]
    fn a_record_longer_than_the_converted_powers_is_an_error() {
        let (a, _) = power_shares(F128(rand::random()), 3);
        assert!(a.ghash_share(&[0; 13], &[0; 16]).is_ok(), "AAD, one block, lengths: 3 powers");
        assert!(matches!(a.ghash_share(&[0; 13], &[0; 17]), Err(GhashError::TooManyBlocks { blocks: 4, max: 3 })));
    }

    #[test]
    fn bounds_and_malformed_messages_are_refused() {
        let delta = F128(rand::random());
        let (mut ca, _cb) = memory_pair(1 << 20);
        let too_many = block_on(powers_a(&mut ca, F128::ONE, MAX_POWER + 1, delta, &[], 0));
        assert!(matches!(too_many, Err(GhashError::TooManyBlocks { .. })));
        let (keys, choices, macs) = random_cots(delta, cots_for_powers(4));
        let wrong_count = block_on(powers_a(&mut ca, F128::ONE, 5, delta, &keys, 0));
        assert!(matches!(wrong_count, Err(GhashError::Ole(_))));
        // B against a peer whose first answer is short.
        let (mut ours, mut peer) = memory_pair(1 << 20);
        let peer_side = async {
            let _ = peer.recv().await;
            peer.send(vec![0; 100]).await.expect("open");
        };
        let (r, ()) = block_on(join(powers_b(&mut ours, F128::ONE, 4, &choices, &macs, 0), peer_side));
        assert!(matches!(r, Err(GhashError::Malformed(_))), "{:?}", r.err());
    }

    #[test]
    fn gcm_blocks_map_to_field_elements_as_the_ghash_crate_multiplies() {
        use ghash::universal_hash::{KeyInit as _, UniversalHash};
        let (h, x): ([u8; 16], [u8; 16]) = (rand::random(), rand::random());
        // GHASH of one block is X·H.
        let mut g = ghash::GHash::new(&h.into());
        g.update(&[x.into()]);
        let expect: [u8; 16] = g.finalize().into();
        assert_eq!(field_to_block(block_to_field(x) * block_to_field(h)), expect);
        assert_eq!(field_to_block(block_to_field(x)), x);
    }
}
