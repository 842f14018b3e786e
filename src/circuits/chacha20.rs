//! The ChaCha20 block function (RFC 8439 §2.3) as a boolean circuit: 20 rounds of 32-bit
//! additions, XORs and rotations, 336 additions in all, so 10.4k AND gates per 64-byte block
//! with a private key and nonce (XOR and rotation are free). It is the keystream of TLS's
//! ChaCha20-Poly1305 records: block 0 gives the record's Poly1305 key, blocks 1.. encrypt it
//! (RFC 8439 §2.8).

use super::{add, constant_word, Circuit, Word};

/// "expand 32-byte k", the first four state words.
const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Rotation left by `n`: bit i of the result is bit i − n.
fn rotl<B: Circuit>(w: &Word<B>, n: usize) -> Word<B> {
    core::array::from_fn(|i| w[(i + 32 - n) % 32])
}

fn xor_words<B: Circuit>(b: &B, x: &Word<B>, y: &Word<B>) -> Word<B> {
    core::array::from_fn(|i| b.xor(x[i], y[i]))
}

/// A little-endian word from 4 bytes of bits (each byte least significant bit first): the
/// bits in order.
fn word_le<B: Circuit>(bits: &[B::Bit]) -> Word<B> {
    core::array::from_fn(|i| bits[i])
}

fn quarter_round<B: Circuit>(b: &mut B, s: &mut [Word<B>; 16], [ia, ib, ic, id]: [usize; 4]) {
    s[ia] = add(b, &s[ia], &s[ib]);
    s[id] = rotl::<B>(&xor_words(b, &s[id], &s[ia]), 16);
    s[ic] = add(b, &s[ic], &s[id]);
    s[ib] = rotl::<B>(&xor_words(b, &s[ib], &s[ic]), 12);
    s[ia] = add(b, &s[ia], &s[ib]);
    s[id] = rotl::<B>(&xor_words(b, &s[id], &s[ia]), 8);
    s[ic] = add(b, &s[ic], &s[id]);
    s[ib] = rotl::<B>(&xor_words(b, &s[ib], &s[ic]), 7);
}

/// The 64-byte block for `key` (256 bits), `nonce` (96 bits) and the public block `counter`,
/// as bits in byte order (RFC 8439's serialized block).
pub(crate) fn block<B: Circuit>(b: &mut B, key: &[B::Bit], nonce: &[B::Bit], counter: u32) -> Vec<B::Bit> {
    assert_eq!((key.len(), nonce.len()), (256, 96), "ChaCha20 takes a 256-bit key and a 96-bit nonce");
    let input: [Word<B>; 16] = core::array::from_fn(|i| match i {
        0..4 => constant_word(b, CONSTANTS[i].into()),
        4..12 => word_le::<B>(&key[(i - 4) * 32..]),
        12 => constant_word(b, counter.into()),
        _ => word_le::<B>(&nonce[(i - 13) * 32..]),
    });
    let mut s = input;
    for _ in 0..10 {
        for qr in [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]] {
            quarter_round(b, &mut s, qr);
        }
        for qr in [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]] {
            quarter_round(b, &mut s, qr);
        }
    }
    let mut out = Vec::with_capacity(512);
    for (w, x) in s.iter().zip(&input) {
        out.extend_from_slice(&add(b, w, x));
    }
    out
}
