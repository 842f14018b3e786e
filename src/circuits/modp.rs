//! Addition modulo a public 256-bit prime, for turning two parties' additive shares of the
//! P-256 premaster secret into its bytes inside a circuit (≈ 770 AND gates).

use super::Circuit;

/// The P-256 base field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1, big-endian.
pub(crate) const P256_PRIME: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
];

/// Bit i (value 2^i) of a 32-byte big-endian integer given as bytes of bits (LSB first).
fn integer_bit(i: usize) -> usize {
    (31 - i / 8) * 8 + i % 8
}

/// x + y over equal-length little-endian bit strings, one AND per bit, with the carry out.
pub(crate) fn ripple_add<B: Circuit>(b: &mut B, x: &[B::Bit], y: &[B::Bit]) -> (Vec<B::Bit>, B::Bit) {
    let mut c = b.constant(false);
    let mut out = Vec::with_capacity(x.len());
    for (&xi, &yi) in x.iter().zip(y) {
        let xc = b.xor(xi, c);
        out.push(b.xor(xc, yi));
        // carry' = c ⊕ ((x ⊕ c) ∧ (y ⊕ c)) = maj(x, y, c)
        let yc = b.xor(yi, c);
        let t = b.and(xc, yc);
        c = b.xor(c, t);
    }
    (out, c)
}

/// (x + y) mod m for 32-byte big-endian x, y < m (byte strings of bits, as everywhere in
/// [`crate::circuits`]); the result in the same encoding. Inputs ≥ m give a result that is
/// still a fixed function of them (both engines compute the same one).
pub(crate) fn add_mod<B: Circuit>(b: &mut B, x: &[B::Bit], y: &[B::Bit], m: &[u8; 32]) -> Vec<B::Bit> {
    assert!(x.len() == 256 && y.len() == 256, "add_mod takes two 256-bit integers");
    let le = |v: &[B::Bit]| -> Vec<B::Bit> { (0..256).map(|i| v[integer_bit(i)]).collect() };
    let mut m_le = *m;
    m_le.reverse();
    let sum = add_mod_le(b, &le(x), &le(y), &m_le);
    let mut out = vec![b.constant(false); 256];
    for (i, bit) in sum.into_iter().enumerate() {
        out[integer_bit(i)] = bit;
    }
    out
}

/// (x + y) mod m for little-endian integers of 8·`m.len()` bits each (bit i of the slice is
/// 2^i), x, y < m; the result likewise. About three AND gates per bit.
pub(crate) fn add_mod_le<B: Circuit>(b: &mut B, x: &[B::Bit], y: &[B::Bit], m: &[u8]) -> Vec<B::Bit> {
    let n = 8 * m.len();
    assert!(x.len() == n && y.len() == n, "add_mod_le takes two integers of the modulus's width");
    let (mut s, carry) = ripple_add(b, x, y);
    s.push(carry);
    // u = s + (2^(n+1) − m): its carry out of bit n is [s ≥ m], and then u mod 2^n = s − m.
    let mut k = vec![0u8; m.len() + 1];
    let mut borrow = 0i16;
    for (i, ki) in k.iter_mut().enumerate() {
        let top = if i == m.len() { 2 } else { 0 };
        let mut d = top - i16::from(m.get(i).copied().unwrap_or(0)) - borrow;
        borrow = i16::from(d < 0);
        if d < 0 {
            d += 256;
        }
        *ki = d as u8;
    }
    let k_bits: Vec<B::Bit> = (0..=n).map(|i| b.constant((k[i / 8] >> (i % 8)) & 1 == 1)).collect();
    let (u, ge) = ripple_add(b, &s, &k_bits);
    // r = ge ? u : s, bit by bit: s ⊕ (ge ∧ (s ⊕ u))
    (0..n)
        .map(|i| {
            let d = b.xor(s[i], u[i]);
            let pick = b.and(ge, d);
            b.xor(s[i], pick)
        })
        .collect()
}
