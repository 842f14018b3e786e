//! AES-128 with the S-box as the Boyar–Peralta boolean circuit
//! ([`crate::primitives::sbox_circuit`]): 32 AND per S-box, 5,120 per block plus 1,280 for the
//! key schedule. The default S-box of [`Circuit`]; in the ZK engine a baseline and cross-check
//! for the field-embedding S-box.

use super::aes::{encrypt_with, key_schedule_with, sbox_if_public, Block, RoundKeys};
use super::Circuit;
use crate::primitives::sbox_circuit::sbox_without_constant;

/// The AES S-box as a boolean circuit (32 AND).
pub(crate) fn sbox_bool<B: Circuit>(b: &mut B, s: &[B::Bit; 8]) -> [B::Bit; 8] {
    if let Some(out) = sbox_if_public(b, s) {
        return out;
    }
    let out = sbox_without_constant(b, s);
    core::array::from_fn(|i| if (0x63 >> i) & 1 == 1 { b.not(out[i]) } else { out[i] })
}

/// AES-128 key schedule as a boolean circuit.
pub(crate) fn key_schedule_bool<B: Circuit>(b: &mut B, key: &[B::Bit]) -> RoundKeys<B> {
    key_schedule_with(b, key, sbox_bool::<B>)
}

/// AES-128 block encryption as a boolean circuit.
pub(crate) fn encrypt_bool<B: Circuit>(b: &mut B, rk: &RoundKeys<B>, block: &[B::Bit]) -> Block<B> {
    encrypt_with(b, rk, block, sbox_bool::<B>)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::aes::sbox_plain;
    use crate::zk::{Backend, PlainBackend};

    #[test]
    fn sbox_circuit_matches_table_on_all_inputs_with_32_and() {
        for s in 0..=255u8 {
            let mut b = PlainBackend::new();
            let bits: [_; 8] = core::array::from_fn(|i| b.commit(Some((s >> i) & 1 == 1)));
            let out = sbox_bool(&mut b, &bits);
            let v = out.iter().enumerate().fold(0u8, |acc, (i, x)| acc | ((x.v as u8) << i));
            assert_eq!(v, sbox_plain(s), "s = {s:#04x}");
            assert_eq!(b.stats().and_gates, 32);
        }
    }
}
