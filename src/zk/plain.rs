//! Cleartext reference evaluator: runs gadgets on plain values (no MACs, no channel) and
//! records whether any constraint or assertion failed. Used for gadget tests and cost counts.

use super::{Backend, BatchStats};
use crate::circuits::{Circuit, Gates};
use crate::primitives::field::F128;
use crate::zk::sbox::sbox_field;

/// Cleartext bit: value plus whether it is a public constant (mirrors the real backends).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PlainBit {
    pub v: bool,
    pub public: bool,
}

/// The cleartext backend.
#[derive(Default)]
pub(crate) struct PlainBackend {
    stats: BatchStats,
    /// Set if an `assert_product` or `assert_constant` did not hold.
    pub violated: bool,
}

impl PlainBackend {
    pub(crate) fn new() -> Self {
        Self::default()
    }
    pub(crate) fn stats(&self) -> BatchStats {
        self.stats
    }
}

impl Gates for PlainBackend {
    type Bit = PlainBit;

    fn xor(&self, a: PlainBit, b: PlainBit) -> PlainBit {
        PlainBit { v: a.v ^ b.v, public: a.public & b.public }
    }

    fn and(&mut self, a: PlainBit, b: PlainBit) -> PlainBit {
        if a.public {
            return if a.v { b } else { self.constant(false) };
        }
        if b.public {
            return if b.v { a } else { self.constant(false) };
        }
        self.stats.and_gates += 1;
        self.commit(Some(a.v & b.v))
    }
}

impl Circuit for PlainBackend {
    fn constant(&self, v: bool) -> PlainBit {
        PlainBit { v, public: true }
    }

    fn public_value(&self, a: PlainBit) -> Option<bool> {
        if a.public {
            Some(a.v)
        } else {
            None
        }
    }

    fn aes_sbox(&mut self, s: &[Self::Bit; 8]) -> [Self::Bit; 8] {
        sbox_field(self, s)
    }
}

impl Backend for PlainBackend {
    type Elem = F128;

    fn value(&self, a: PlainBit) -> Option<bool> {
        Some(a.v)
    }
    fn commit(&mut self, v: Option<bool>) -> PlainBit {
        self.stats.commits += 1;
        PlainBit { v: v.unwrap_or(false), public: false }
    }
    fn open(&mut self, bits: &[PlainBit]) -> Vec<bool> {
        self.stats.opened += bits.iter().filter(|b| !b.public).count();
        bits.iter().map(|b| b.v).collect()
    }
    fn assert_constant(&mut self, bits: &[PlainBit], expected: &[bool]) {
        if bits.len() != expected.len() {
            self.violated = true;
        }
        for (b, e) in bits.iter().zip(expected) {
            if !b.public {
                self.stats.asserted += 1;
            }
            if b.v != *e {
                self.violated = true;
            }
        }
    }
    fn elem_constant(&self, c: F128) -> F128 {
        c
    }
    fn elem_from_bits(&self, bits: &[PlainBit], coeffs: &[F128]) -> F128 {
        bits.iter().zip(coeffs).fold(F128::ZERO, |acc, (b, c)| acc ^ c.select(b.v))
    }
    fn elem_add(&self, a: F128, b: F128) -> F128 {
        a ^ b
    }
    fn elem_scale(&self, a: F128, c: F128) -> F128 {
        a * c
    }
    fn elem_value(&self, a: F128) -> Option<F128> {
        Some(a)
    }
    fn assert_product(&mut self, a: F128, b: F128, c: F128) {
        self.stats.products += 1;
        if a * b != c {
            self.violated = true;
        }
    }
}
