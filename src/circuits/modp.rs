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
fn ripple_add<B: Circuit>(b: &mut B, x: &[B::Bit], y: &[B::Bit]) -> (Vec<B::Bit>, B::Bit) {
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
    let (mut s, carry) = ripple_add(b, &le(x), &le(y));
    s.push(carry);
    // u = s + (2^257 − m): its carry out of bit 256 is [s ≥ m], and then u mod 2^256 = s − m.
    let mut k = [0u8; 33];
    k[0] = 2;
    let mut borrow = 0i16;
    for i in (0..33).rev() {
        let mi = if i == 0 { 0 } else { i16::from(m[i - 1]) };
        let mut d = i16::from(k[i]) - mi - borrow;
        borrow = i16::from(d < 0);
        if d < 0 {
            d += 256;
        }
        k[i] = d as u8;
    }
    let k_bits: Vec<B::Bit> = (0..257).map(|i| b.constant((k[32 - i / 8] >> (i % 8)) & 1 == 1)).collect();
    let (u, ge) = ripple_add(b, &s, &k_bits);
    // r = ge ? u : s, bit by bit: s ⊕ (ge ∧ (s ⊕ u))
    let mut out = vec![b.constant(false); 256];
    for i in 0..256 {
        let d = b.xor(s[i], u[i]);
        let pick = b.and(ge, d);
        out[integer_bit(i)] = b.xor(s[i], pick);
    }
    out
}
