//! The AES S-box as a boolean circuit of 127 gates, 32 of them AND. It is the forward circuit
//! of Boyar and Peralta, "A depth-16 circuit for the AES S-box" (IFIP SEC 2012, eprint
//! 2011/332, Figures 5, 7 and 8): a linear top layer of 27 XOR, a non-linear middle, a linear
//! bottom layer of 38 XOR/XNOR. The middle's GF(2^4) inversion is the one of their smaller
//! 32-AND circuit (Boyar and Peralta, "A new combinational logic minimization technique with
//! applications to cryptology", SEA 2010): 5 AND and 11 XOR instead of 7 AND and 10 XOR, on
//! the same four wires. It is deeper, which costs a garbled circuit nothing; every AND costs
//! a garbled circuit 32 bytes. The middle is then 32 AND and 30 XOR.
//!
//! The four XNOR gates of the bottom layer add exactly the affine constant 0x63 (outputs S1,
//! S2, S6, S7, with S0 the most significant bit), so they are XORs here and the constant is
//! added by the callers: a NOT per set bit in a circuit (free), and folded into the next round
//! key by the bitsliced AES. `circuits::aes_bool` checks the circuit against the S-box table
//! on all 256 inputs.

/// XOR and AND: all the S-box circuit is built from. Every circuit backend implements them
/// ([`crate::circuits::Circuit`] extends this), and so does the bitsliced software AES of
/// [`crate::primitives::prp`], which evaluates the same circuit on whole registers.
pub trait Gates {
    type Bit: Copy;
    fn xor(&self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
    fn and(&mut self, a: Self::Bit, b: Self::Bit) -> Self::Bit;
}

/// The AES S-box up to its additive constant 0x63 (Boyar–Peralta, see the module doc). Bit i
/// of `s` is the coefficient of x^i; the paper's U0 is the most significant bit.
#[inline(always)]
pub(crate) fn sbox_without_constant<G: Gates>(g: &mut G, s: &[G::Bit; 8]) -> [G::Bit; 8] {
    let u: [G::Bit; 8] = core::array::from_fn(|i| s[7 - i]);
    // top linear layer (Figure 5)
    let t1 = g.xor(u[0], u[3]);
    let t2 = g.xor(u[0], u[5]);
    let t3 = g.xor(u[0], u[6]);
    let t4 = g.xor(u[3], u[5]);
    let t5 = g.xor(u[4], u[6]);
    let t6 = g.xor(t1, t5);
    let t7 = g.xor(u[1], u[2]);
    let t8 = g.xor(u[7], t6);
    let t9 = g.xor(u[7], t7);
    let t10 = g.xor(t6, t7);
    let t11 = g.xor(u[1], u[5]);
    let t12 = g.xor(u[2], u[5]);
    let t13 = g.xor(t3, t4);
    let t14 = g.xor(t6, t11);
    let t15 = g.xor(t5, t11);
    let t16 = g.xor(t5, t12);
    let t17 = g.xor(t9, t16);
    let t18 = g.xor(u[3], u[7]);
    let t19 = g.xor(t7, t18);
    let t20 = g.xor(t1, t19);
    let t21 = g.xor(u[6], u[7]);
    let t22 = g.xor(t7, t21);
    let t23 = g.xor(t2, t22);
    let t24 = g.xor(t2, t10);
    let t25 = g.xor(t20, t17);
    let t26 = g.xor(t3, t16);
    let t27 = g.xor(t1, t12);
    // shared non-linear middle (Figure 7, D = U7 in the forward direction)
    let m1 = g.and(t13, t6);
    let m2 = g.and(t23, t8);
    let m3 = g.xor(t14, m1);
    let m4 = g.and(t19, u[7]);
    let m5 = g.xor(m4, m1);
    let m6 = g.and(t3, t16);
    let m7 = g.and(t22, t9);
    let m8 = g.xor(t26, m6);
    let m9 = g.and(t20, t17);
    let m10 = g.xor(m9, m6);
    let m11 = g.and(t1, t15);
    let m12 = g.and(t4, t27);
    let m13 = g.xor(m12, m11);
    let m14 = g.and(t2, t10);
    let m15 = g.xor(m14, m11);
    let m16 = g.xor(m3, m2);
    let m17 = g.xor(m5, t24);
    let m18 = g.xor(m8, m7);
    let m19 = g.xor(m10, m15);
    let m20 = g.xor(m16, m13);
    let m21 = g.xor(m17, m15);
    let m22 = g.xor(m18, m13);
    let m23 = g.xor(m19, t25);
    // GF(2^4) inversion of (m20, m21, m22, m23) with 5 AND instead of Figure 7's 7: the
    // inversion of Boyar and Peralta's 32-AND circuit (see the module doc), which maps these
    // four wires to the same four outputs (checked on all 16 inputs by the S-box test).
    let v1 = g.xor(m20, m21);
    let v2 = g.and(m20, m22);
    let v3 = g.xor(m23, v2);
    let v4 = g.and(v1, v3);
    let m37 = g.xor(v4, m21);
    let v5 = g.xor(m22, m23);
    let v6 = g.xor(m21, v2);
    let v7 = g.and(v6, v5);
    let m39 = g.xor(v7, m23);
    let v8 = g.xor(m22, m39);
    let v9 = g.xor(v3, m39);
    let v10 = g.and(m23, v9);
    let m40 = g.xor(v10, v8);
    let v11 = g.xor(v3, v10);
    let v12 = g.and(m37, v11);
    let m38 = g.xor(v1, v12);
    let m41 = g.xor(m38, m40);
    let m42 = g.xor(m37, m39);
    let m43 = g.xor(m37, m38);
    let m44 = g.xor(m39, m40);
    let m45 = g.xor(m42, m41);
    let m46 = g.and(m44, t6);
    let m47 = g.and(m40, t8);
    let m48 = g.and(m39, u[7]);
    let m49 = g.and(m43, t16);
    let m50 = g.and(m38, t9);
    let m51 = g.and(m37, t17);
    let m52 = g.and(m42, t15);
    let m53 = g.and(m45, t27);
    let m54 = g.and(m41, t10);
    let m55 = g.and(m44, t13);
    let m56 = g.and(m40, t23);
    let m57 = g.and(m39, t19);
    let m58 = g.and(m43, t3);
    let m59 = g.and(m38, t22);
    let m60 = g.and(m37, t20);
    let m61 = g.and(m42, t1);
    let m62 = g.and(m45, t4);
    let m63 = g.and(m41, t2);
    // bottom linear layer (Figure 8; its XNORs as XORs)
    let l0 = g.xor(m61, m62);
    let l1 = g.xor(m50, m56);
    let l2 = g.xor(m46, m48);
    let l3 = g.xor(m47, m55);
    let l4 = g.xor(m54, m58);
    let l5 = g.xor(m49, m61);
    let l6 = g.xor(m62, l5);
    let l7 = g.xor(m46, l3);
    let l8 = g.xor(m51, m59);
    let l9 = g.xor(m52, m53);
    let l10 = g.xor(m53, l4);
    let l11 = g.xor(m60, l2);
    let l12 = g.xor(m48, m51);
    let l13 = g.xor(m50, l0);
    let l14 = g.xor(m52, m61);
    let l15 = g.xor(m55, l1);
    let l16 = g.xor(m56, l0);
    let l17 = g.xor(m57, l1);
    let l18 = g.xor(m58, l8);
    let l19 = g.xor(m63, l4);
    let l20 = g.xor(l0, l1);
    let l21 = g.xor(l1, l7);
    let l22 = g.xor(l3, l12);
    let l23 = g.xor(l18, l2);
    let l24 = g.xor(l15, l9);
    let l25 = g.xor(l6, l10);
    let l26 = g.xor(l7, l9);
    let l27 = g.xor(l8, l10);
    let l28 = g.xor(l11, l14);
    let l29 = g.xor(l11, l17);
    let s0 = g.xor(l6, l24);
    let s1 = g.xor(l16, l26);
    let s2 = g.xor(l19, l28);
    let s3 = g.xor(l6, l21);
    let s4 = g.xor(l20, l22);
    let s5 = g.xor(l25, l29);
    let s6 = g.xor(l13, l27);
    let s7 = g.xor(l6, l23);
    [s7, s6, s5, s4, s3, s2, s1, s0]
}
