//! SubBytes for garbled circuits: a call's S-boxes (16 for a round, 4 for the key schedule)
//! evaluated side by side, the Boyar–Peralta circuit run once on lanes of wires, so that each
//! of its AND layers is one batch of independent gates whose hashes go to AES together
//! (AES-NI pipelines them; the bit-sliced AES in wasm fills its 8-block passes).

use super::Wire;
use crate::circuits::{Circuit, Gates};
use crate::primitives::sbox_circuit::sbox_without_constant;

/// Lanes per S-box batch: one AES round's bytes.
const LANES: usize = 16;

/// A garbled-circuit party (garbler or evaluator): its gates on [`Wire`]s, and AND on
/// independent pairs in one batch, with the same tables and gate numbering as ANDing them one
/// after another. Every such party is a [`Circuit`] the same way (below).
pub(crate) trait AndBatch: Gates<Bit = Wire> {
    /// `out[k] = a_k ∧ b_k`; `out` is overwritten.
    fn and_batch(&mut self, pairs: &[(Wire, Wire)], out: &mut Vec<Wire>);
    /// Two AND gates of two labels each, in this order, hashed in one call (no allocation);
    /// returns the output labels.
    fn and_two_labels(&mut self, pairs: [(u128, u128); 2]) -> [u128; 2];
}

impl<T: AndBatch> Circuit for T {
    #[inline]
    fn constant(&self, v: bool) -> Wire {
        Wire::Public(v)
    }

    #[inline]
    fn public_value(&self, a: Wire) -> Option<bool> {
        match a {
            Wire::Public(v) => Some(v),
            Wire::Label(_) => None,
        }
    }

    #[inline]
    fn and_pair(&mut self, [p, q]: [(Wire, Wire); 2]) -> [Wire; 2] {
        match (super::public_and(p.0, p.1), super::public_and(q.0, q.1)) {
            (Err(x), Err(y)) => self.and_two_labels([x, y]).map(Wire::Label),
            _ => {
                let c0 = self.and(p.0, p.1);
                [c0, self.and(q.0, q.1)]
            }
        }
    }

    /// Side by side, on every platform: the order of the AND gates fixes the tables and their
    /// tweaks, so garbler and evaluator must run the same form whatever their AES (a native
    /// garbler with AES-NI and a wasm evaluator included). The batches fill the bit-sliced
    /// AES's passes; AES-NI pipelines them as well.
    fn aes_sub_bytes(&mut self, bytes: &mut [[Wire; 8]]) {
        sub_bytes(self, bytes);
    }
}

/// The backend seen as gates on [`LANES`] wires at once (`n` of them in use; the rest are public
/// zeros, which cost nothing).
struct Lockstep<'a, B> {
    b: &'a mut B,
    n: usize,
    pairs: Vec<(Wire, Wire)>,
    out: Vec<Wire>,
}

impl<B: AndBatch> Gates for Lockstep<'_, B> {
    type Bit = [Wire; LANES];

    fn xor(&self, x: Self::Bit, y: Self::Bit) -> Self::Bit {
        core::array::from_fn(|i| if i < self.n { self.b.xor(x[i], y[i]) } else { Wire::Public(false) })
    }

    fn and(&mut self, x: Self::Bit, y: Self::Bit) -> Self::Bit {
        self.pairs.clear();
        self.pairs.extend((0..self.n).map(|i| (x[i], y[i])));
        self.b.and_batch(&self.pairs, &mut self.out);
        core::array::from_fn(|i| if i < self.n { self.out[i] } else { Wire::Public(false) })
    }
}

/// The AES S-box on every byte, [`LANES`] at a time.
pub(crate) fn sub_bytes<B: AndBatch>(b: &mut B, bytes: &mut [[Wire; 8]]) {
    for chunk in bytes.chunks_mut(LANES) {
        let n = chunk.len();
        let s: [[Wire; LANES]; 8] =
            core::array::from_fn(|bit| core::array::from_fn(|lane| if lane < n { chunk[lane][bit] } else { Wire::Public(false) }));
        let mut lanes = Lockstep { b: &mut *b, n, pairs: Vec::with_capacity(LANES), out: Vec::with_capacity(LANES) };
        let out = sbox_without_constant(&mut lanes, &s);
        for (lane, byte) in chunk.iter_mut().enumerate() {
            for (bit, w) in byte.iter_mut().enumerate() {
                let v = out[bit][lane];
                *w = if (0x63 >> bit) & 1 == 1 { b.not(v) } else { v };
            }
        }
    }
}
