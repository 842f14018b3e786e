//! Poly1305 on shares of its key (docs/protocol.md, "ChaCha20-Poly1305 records in two
//! parties"): a record's tag without either party learning the record's one-time key (r, s).
//! Were r known to the prover, it could tag a second ciphertext under the same nonce and send
//! the server that one while the verifier holds another.
//!
//! The one-time key block is garbled ([`super::chacha_record::one_time_key`]); the verifier
//! decodes z = r + m over the integers, m the prover's 192-bit mask, so r = z − m is shared
//! additively mod p = 2^130 − 5. An OLE turns that into multiplicative shares r = a·b (the
//! prover picks ρ, the verifier ends with b = ρ·r, the prover holds a = ρ⁻¹); then, for the
//! record's n message blocks m_0, …, m_(n−1), one OLE per block on the prover's m_i·a^(n−i)
//! and the verifier's b^(n−i) gives additive shares x + y = Σ m_i·r^(n−i) mod p: the
//! polynomial Poly1305 evaluates (RFC 8439 §2.5). The tag ((x + y) mod p + s) mod 2^128 is a garbled phase
//! ([`super::chacha_record::tag`]) over x, y and the s the key block left on wires.

use super::ecdh::{ReceiverCots, SenderCots};
use super::f1305::{F1305, F1305_BYTES};
use super::ole::{
    a2m_receiver_share, a2m_sender_share, corrections_from_bytes, elements_from_bytes, elements_to_bytes, receiver,
    receiver_corrections, sender, OleError, OleField,
};
use super::record::RecordError;
use crate::channel::{recv_chunked, send_chunked, Channel};
use crate::circuits::bits_to_bytes;
use crate::primitives::field::F128;

/// COTs per OLE over Poly1305's field, and per share input into the tag phase.
pub(crate) const OLE_COTS: usize = <F1305 as OleField>::BITS;

/// The COTs a connection keeps for its ChaCha20-Poly1305 records' tags, taken in order, each
/// once (a COT's index in the session is its OLE hash tweak).
pub(crate) struct TagCots {
    pool: CotPool,
    /// The session-wide index of the pool's first COT.
    first: u64,
    used: usize,
}

enum CotPool {
    Sender { delta: F128, keys: Vec<F128> },
    Receiver { choices: Vec<bool>, macs: Vec<F128> },
}

impl TagCots {
    pub(crate) fn sender(delta: F128, keys: Vec<F128>, first: u64) -> Self {
        TagCots { pool: CotPool::Sender { delta, keys }, first, used: 0 }
    }

    pub(crate) fn receiver(choices: Vec<bool>, macs: Vec<F128>, first: u64) -> Self {
        TagCots { pool: CotPool::Receiver { choices, macs }, first, used: 0 }
    }

    /// The next `n` COTs' range in the pool of `len`, and the session-wide index of the first.
    fn take(used: &mut usize, first: u64, n: usize, len: usize) -> Result<(core::ops::Range<usize>, u64), RecordError> {
        let range = *used..*used + n;
        if range.end > len {
            return Err(OleError::CountMismatch {
                what: "COTs left for the records' tags",
                expected: n,
                got: len - *used,
            }
            .into());
        }
        *used = range.end;
        Ok((range.clone(), first + range.start as u64))
    }

    /// The next `n` COTs, on the sender's side.
    pub(crate) fn take_sender(&mut self, n: usize) -> Result<SenderCots<'_>, RecordError> {
        let TagCots { pool: CotPool::Sender { delta, keys }, first, used } = self else {
            return Err(RecordError::Malformed("the receiver's COTs, taken as a sender's"));
        };
        let (range, first) = Self::take(used, *first, n, keys.len())?;
        Ok(SenderCots { delta: *delta, keys: &keys[range], first })
    }

    /// The next `n` COTs, on the receiver's side.
    pub(crate) fn take_receiver(&mut self, n: usize) -> Result<ReceiverCots<'_>, RecordError> {
        let TagCots { pool: CotPool::Receiver { choices, macs }, first, used } = self else {
            return Err(RecordError::Malformed("the sender's COTs, taken as a receiver's"));
        };
        let (range, first) = Self::take(used, *first, n, choices.len())?;
        Ok(ReceiverCots { choices: &choices[range.clone()], macs: &macs[range], first })
    }
}

/// Poly1305's message blocks for an AEAD record (RFC 8439 §2.8): the AAD and the ciphertext
/// each zero-padded to 16 bytes, then their lengths as two 64-bit little-endian numbers; each
/// 16-byte block read little-endian with 2^128 added.
pub(crate) fn message_blocks(aad: &[u8], ciphertext: &[u8]) -> Vec<F1305> {
    let lengths = [(aad.len() as u64).to_le_bytes(), (ciphertext.len() as u64).to_le_bytes()].concat();
    aad.chunks(16)
        .chain(ciphertext.chunks(16))
        .chain([&lengths[..]])
        .map(|chunk| {
            let mut block = [0u8; 17];
            block[..chunk.len()].copy_from_slice(chunk);
            block[16] = 1;
            F1305::reduce_le(&block)
        })
        .collect()
}

/// Message blocks of a record with `aad` and `ciphertext` bytes.
pub(crate) fn block_count(aad: usize, ciphertext: usize) -> usize {
    aad.div_ceil(16) + ciphertext.div_ceil(16) + 1
}

/// COTs the tag of a record of `blocks` message blocks takes: the conversion's OLE, one OLE
/// per block, and the verifier's share into the tag phase.
pub(crate) fn cots_for_tag(blocks: usize) -> usize {
    OLE_COTS * (blocks + 2)
}

/// Powers p^n, …, p^2, p^1 of `p`: the exponent of each of n blocks in turn.
fn descending_powers(p: F1305, n: usize) -> Vec<F1305> {
    let mut powers = Vec::with_capacity(n);
    let mut x = p;
    for _ in 0..n {
        powers.push(x);
        x = x * p;
    }
    powers.reverse();
    powers
}

fn sum(values: &[F1305]) -> F1305 {
    values.iter().fold(F1305::ZERO, |a, &v| a + v)
}

fn check_cots(expected: usize, got: usize) -> Result<(), RecordError> {
    if expected != got {
        return Err(OleError::CountMismatch { what: "COTs for a Poly1305 tag", expected, got }.into());
    }
    Ok(())
}

/// The prover's share x of the record's Poly1305 polynomial, from its mask of r (24 bytes,
/// little-endian), the record's message `blocks` and `OLE_COTS · (blocks + 1)` random COTs
/// under its Δ. The prover is the OLE sender throughout.
pub(crate) async fn tag_share_prover<C: Channel>(
    ch: &mut C,
    r_mask: &[u8; 24],
    blocks: &[F1305],
    cots: SenderCots<'_>,
) -> Result<[u8; F1305_BYTES], RecordError> {
    let n = blocks.len();
    check_cots(OLE_COTS * (n + 1), cots.keys.len())?;
    let (first, rest) = cots.keys.split_at(OLE_COTS);
    // r = z − m: the prover's additive share is −m
    let share = -F1305::reduce_le(r_mask);
    let rho = F1305::random_nonzero();
    let corrections = corrections_from_bytes(&ch.recv().await?, OLE_COTS)?;
    let (alpha, msg) = sender(&[rho], cots.delta, first, cots.first, &corrections)?;
    let (sigma, a) = a2m_sender_share(rho, share, alpha[0]);
    let mut out = elements_to_bytes(&msg);
    sigma.write(&mut out);
    ch.send(out).await?;

    let terms: Vec<F1305> = blocks.iter().zip(descending_powers(a, n)).map(|(&m, p)| m * p).collect();
    let corrections = corrections_from_bytes(&recv_chunked(ch, rest.len() / 8).await?, rest.len())?;
    let (x, msg) = sender(&terms, cots.delta, rest, cots.first + OLE_COTS as u64, &corrections)?;
    send_chunked(ch, &elements_to_bytes(&msg)).await?;
    Ok(sum(&x).to_le_bytes())
}

/// The verifier's share y of the record's Poly1305 polynomial, from z = r + m as it decoded
/// it (25 bytes, little-endian), the record's number of message blocks and as many random
/// COTs as the prover's.
pub(crate) async fn tag_share_verifier<C: Channel>(
    ch: &mut C,
    masked_r: &[u8; 25],
    n: usize,
    cots: ReceiverCots<'_>,
) -> Result<[u8; F1305_BYTES], RecordError> {
    check_cots(OLE_COTS * (n + 1), cots.choices.len())?;
    check_cots(OLE_COTS * (n + 1), cots.macs.len())?;
    let ((c1, c2), (m1, m2)) = (cots.choices.split_at(OLE_COTS), cots.macs.split_at(OLE_COTS));
    let z = F1305::reduce_le(masked_r);
    ch.send(bits_to_bytes(&receiver_corrections(&[z], c1)?)).await?;
    let msg = ch.recv().await?;
    let malformed = || RecordError::Malformed("the Poly1305 conversion's message");
    let (ole_msg, sigma) = msg.split_at_checked(OLE_COTS * F1305_BYTES).ok_or_else(malformed)?;
    let sigma = F1305::read(sigma).ok_or_else(malformed)?;
    let ole_msg = elements_from_bytes(ole_msg, OLE_COTS).map_err(RecordError::Malformed)?;
    let beta = receiver(&[z], m1, cots.first, &ole_msg)?[0];
    let b = a2m_receiver_share(sigma, beta);

    let powers = descending_powers(b, n);
    send_chunked(ch, &bits_to_bytes(&receiver_corrections(&powers, c2)?)).await?;
    let msg = recv_chunked(ch, c2.len() * F1305_BYTES).await?;
    let msg = elements_from_bytes(&msg, c2.len()).map_err(RecordError::Malformed)?;
    let y = receiver(&powers, m2, cots.first + OLE_COTS as u64, &msg)?;
    Ok(sum(&y).to_le_bytes())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::ot::test_util::random_cots;
    use crate::protocol::prove::tls12::check::poly1305_tag;
    use futures::executor::block_on;
    use futures::future::join;

    /// The tag from (r, s) and the record's blocks, by the polynomial and the final addition.
    fn tag_of(r: F1305, s: &[u8; 16], blocks: &[F1305]) -> [u8; 16] {
        let acc = blocks.iter().fold(F1305::ZERO, |acc, &m| (acc + m) * r);
        let acc = u128::from_le_bytes(acc.to_le_bytes()[..16].try_into().expect("16 bytes"));
        acc.wrapping_add(u128::from_le_bytes(*s)).to_le_bytes()
    }

    fn clamped_r(key: &[u8; 32]) -> u128 {
        u128::from_le_bytes(key[..16].try_into().expect("16 bytes")) & 0x0ffffffc0ffffffc0ffffffc0fffffff
    }

    /// The blocks as RFC 8439 §2.8 lays them out, checked through the polynomial against the
    /// RFC's own vector (§2.8.2) computed by [`poly1305_tag`], and for random lengths.
    #[test]
    fn message_blocks_are_poly1305s() {
        for (aad_len, ct_len) in [(5, 0), (5, 1), (12, 114), (5, 16), (13, 17), (5, 1025), (0, 33)] {
            let key: [u8; 32] = rand::random();
            let aad: Vec<u8> = (0..aad_len).map(|_| rand::random()).collect();
            let ct: Vec<u8> = (0..ct_len).map(|_| rand::random()).collect();
            let blocks = message_blocks(&aad, &ct);
            assert_eq!(blocks.len(), block_count(aad_len, ct_len));
            let r = F1305::reduce_le(&clamped_r(&key).to_le_bytes());
            let s: [u8; 16] = key[16..].try_into().expect("16 bytes");
            assert_eq!(tag_of(r, &s, &blocks), poly1305_tag(&key, &aad, &ct), "{aad_len} + {ct_len}");
        }
    }

    /// Shares from the OLEs: x + y is the polynomial at r = z − m for random r and m, and
    /// neither share alone is (nor z − m's residue itself a share).
    #[test]
    fn the_shares_add_up_to_the_polynomial_at_r() {
        let delta = F128(rand::random());
        for n in [1usize, 3, 66] {
            let r = clamped_r(&rand::random());
            let m: [u8; 24] = rand::random();
            let z = {
                let (lo, hi) =
                    (u128::from_le_bytes(m[..16].try_into().unwrap()), u64::from_le_bytes(m[16..].try_into().unwrap()));
                let (lo, carry) = lo.overflowing_add(r);
                let (hi, top) = hi.overflowing_add(carry as u64);
                let mut z = [0u8; 25];
                z[..16].copy_from_slice(&lo.to_le_bytes());
                z[16..24].copy_from_slice(&hi.to_le_bytes());
                z[24] = top as u8;
                z
            };
            let blocks: Vec<F1305> = (0..n).map(|_| F1305::random_nonzero()).collect();
            let (keys, choices, macs) = random_cots(delta, OLE_COTS * (n + 1));
            let (mut a, mut b) = memory_pair(crate::zk::MAX_MESSAGE);
            let bl = blocks.clone();
            let (x, y) = block_on(join(
                async move { tag_share_prover(&mut a, &m, &bl, SenderCots { delta, keys: &keys, first: 7 }).await },
                async move {
                    tag_share_verifier(&mut b, &z, n, ReceiverCots { choices: &choices, macs: &macs, first: 7 }).await
                },
            ));
            let [x, y] =
                [x.expect("prover"), y.expect("verifier")].map(|v| F1305::from_le_bytes(&v).expect("canonical"));
            let r = F1305::reduce_le(&r.to_le_bytes());
            let poly = blocks.iter().fold(F1305::ZERO, |acc, &m| (acc + m) * r);
            assert_eq!(x + y, poly, "{n} blocks");
            assert_ne!(x, poly);
            assert_ne!(y, poly);
        }
    }

    /// The tag COTs are handed out in order, each once, with their session-wide indices, and
    /// a record that would take more than are left is refused (a prover splitting its request
    /// into more records than max_sent allows runs out here, not past the pool).
    #[test]
    fn tag_cots_are_taken_once_in_order_and_run_out_with_an_error() {
        let delta = F128(rand::random());
        let (keys, choices, macs) = random_cots(delta, 300);
        let mut sender = TagCots::sender(delta, keys, 1000);
        assert_eq!(sender.take_sender(136).expect("first").first, 1000);
        assert_eq!(sender.take_sender(136).expect("second").first, 1136);
        assert!(matches!(sender.take_sender(136), Err(RecordError::Ole(OleError::CountMismatch { got: 28, .. }))));
        assert!(matches!(sender.take_receiver(1), Err(RecordError::Malformed(_))));
        let mut receiver = TagCots::receiver(choices, macs, 0);
        assert_eq!(receiver.take_receiver(300).expect("all").choices.len(), 300);
        assert!(matches!(receiver.take_receiver(1), Err(RecordError::Ole(_))));
    }

    /// The verifier refuses the prover's conversion message when it is cut short or its σ is
    /// not an element below p (p itself), before using it.
    #[test]
    fn a_malformed_conversion_message_is_refused() {
        let delta = F128(rand::random());
        let (_, choices, macs) = random_cots(delta, OLE_COTS * 2);
        let p: [u8; F1305_BYTES] =
            [0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03];
        let valid = elements_to_bytes(&vec![F1305::ONE; OLE_COTS]);
        for msg in [valid[..100].to_vec(), [&valid[..], &p].concat()] {
            let (mut a, mut b) = memory_pair(crate::zk::MAX_MESSAGE);
            let (c, m) = (choices.clone(), macs.clone());
            let (_, got) = block_on(join(
                async move {
                    a.recv().await.expect("corrections");
                    a.send(msg).await.expect("send");
                },
                async move {
                    tag_share_verifier(&mut b, &[1; 25], 1, ReceiverCots { choices: &c, macs: &m, first: 0 }).await
                },
            ));
            assert!(matches!(got, Err(RecordError::Malformed(_))), "{got:?}");
        }
    }

    /// A COT count other than the record's takes is refused before anything is sent.
    #[test]
    fn the_wrong_count_of_cots_is_refused() {
        let delta = F128(rand::random());
        let (keys, _, _) = random_cots(delta, OLE_COTS * 3);
        let (mut a, _b) = memory_pair(crate::zk::MAX_MESSAGE);
        let blocks = vec![F1305::ONE; 3];
        let got = block_on(tag_share_prover(&mut a, &[0; 24], &blocks, SenderCots { delta, keys: &keys, first: 0 }));
        assert!(
            matches!(got, Err(RecordError::Ole(OleError::CountMismatch { expected: 544, got: 408, .. }))),
            "{got:?}"
        );
    }
}
