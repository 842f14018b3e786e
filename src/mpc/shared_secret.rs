//! The key exchange's secret in two parties: each party holds an additive share of it in its
//! group's field and encoding, in TLS 1.2 (the premaster secret, RFC 8422 §5.10–5.11) and in
//! TLS 1.3 (the (EC)DHE secret, RFC 8446 §7.4) alike; the secret is their sum, in a circuit
//! while the connection runs and natively once the verifier has published its share.

use super::f25519::F25519;
use super::fp::Fp;
use crate::circuits::modp::{add_mod, P256_PRIME};
use crate::circuits::Circuit;
use zeroize::Zeroizing;

/// The key-exchange group whose secret the shares add up to, which fixes their field and
/// encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedGroup {
    /// Shares of the x-coordinate mod the P-256 prime, 32 bytes big-endian each (SEC 1).
    P256,
    /// Shares of the u-coordinate mod 2^255 − 19, 32 bytes little-endian each (RFC 7748).
    X25519,
}

/// 2^255 − 19, big-endian.
const P25519_PRIME: [u8; 32] = {
    let mut p = [0xff; 32];
    p[0] = 0x7f;
    p[31] = 0xed;
    p
};

impl SharedGroup {
    /// Whether `share` is the canonical encoding of an element of the group's field.
    pub(crate) fn is_canonical(self, share: &[u8; 32]) -> bool {
        match self {
            SharedGroup::P256 => Fp::from_be_bytes(share).is_some(),
            SharedGroup::X25519 => F25519::from_le_bytes(share).is_some(),
        }
    }

    /// The secret from both shares, natively; `None` unless both are canonical.
    pub(crate) fn add(self, a: &[u8; 32], b: &[u8; 32]) -> Option<Zeroizing<[u8; 32]>> {
        Some(Zeroizing::new(match self {
            SharedGroup::P256 => (Fp::from_be_bytes(a)? + Fp::from_be_bytes(b)?).to_be_bytes(),
            SharedGroup::X25519 => (F25519::from_le_bytes(a)? + F25519::from_le_bytes(b)?).to_le_bytes(),
        }))
    }

    /// The secret in the circuit, from the wires of both shares (256 each, in the encoding).
    pub(crate) fn add_in_circuit<B: Circuit>(self, b: &mut B, p: &[B::Bit], v: &[B::Bit]) -> Vec<B::Bit> {
        match self {
            SharedGroup::P256 => add_mod(b, p, v, &P256_PRIME),
            SharedGroup::X25519 => {
                let sum = add_mod(b, &reversed_bytes::<B>(p), &reversed_bytes::<B>(v), &P25519_PRIME);
                reversed_bytes::<B>(&sum)
            }
        }
    }
}

/// The 32 bytes of bits `x` with their byte order reversed (a rewiring: free).
fn reversed_bytes<B: Circuit>(x: &[B::Bit]) -> Vec<B::Bit> {
    x.chunks(8).rev().flatten().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::bytes_to_bits;
    use crate::zk::{Backend, PlainBackend};

    /// The circuit's sum is the native one, for both groups, also where it wraps around p.
    #[test]
    fn the_sum_in_the_circuit_is_the_native_sum() {
        let cases = [
            (SharedGroup::P256, (-Fp::ONE).to_be_bytes(), (Fp::ONE + Fp::ONE).to_be_bytes()),
            (SharedGroup::P256, Fp::random().to_be_bytes(), Fp::random().to_be_bytes()),
            (SharedGroup::X25519, (-F25519::ONE).to_le_bytes(), F25519::from_u64(7).to_le_bytes()),
            (SharedGroup::X25519, F25519::random().to_le_bytes(), F25519::random().to_le_bytes()),
        ];
        for (group, a, b) in cases {
            let native = group.add(&a, &b).expect("canonical shares");
            let mut c = PlainBackend::new();
            let [a, b] = [a, b].map(|x| bytes_to_bits(&x).into_iter().map(|v| c.commit(Some(v))).collect::<Vec<_>>());
            let bits: Vec<bool> = group.add_in_circuit(&mut c, &a, &b).iter().map(|bit| bit.v).collect();
            assert_eq!(crate::circuits::bits_to_bytes(&bits), native.to_vec(), "{group:?}");
        }
        assert!(SharedGroup::P256.add(&[0xff; 32], &[0; 32]).is_none(), "above p");
        assert!(!SharedGroup::X25519.is_canonical(&[0xff; 32]));
    }
}
