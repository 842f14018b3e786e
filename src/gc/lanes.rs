//! SubBytes for garbled circuits: a call's S-boxes (16 for a round, 4 for the key schedule)
//! evaluated side by side, the Boyar–Peralta circuit run once on lanes of wires, so that each
//! of its AND layers is one batch of independent gates whose hashes go to AES together
//! (AES-NI pipelines them; the bit-sliced AES in wasm fills its 8-block passes).

use super::Wire;
use crate::circuits::{Circuit, Gates};
use crate::primitives::sbox_circuit::sbox_without_constant;

/// Lanes per S-box batch: one AES round's bytes.
pub(crate) const LANES: usize = 16;

/// A garbled-circuit party (garbler or evaluator): its gates on [`Wire`]s, and AND on
/// independent pairs of labels in one batch, with the same tables and gate numbering as ANDing
/// them one after another. Every such party is a [`Circuit`] the same way (below).
pub(crate) trait AndBatch: Gates<Bit = Wire> {
    /// AND gates of two labels each, in this order, hashed together: `out[k]` gets the output
    /// label of `pairs[k]` (at most [`LANES`] pairs).
    fn and_labels(&mut self, pairs: &[(u128, u128)], out: &mut [u128]);
    /// Two AND gates of two labels each, in this order, hashed in one call (no allocation);
    /// returns the output labels.
    fn and_two_labels(&mut self, pairs: [(u128, u128); 2]) -> [u128; 2];
    /// The label a public wire of value `v` acts as under XOR: v·Δ for the garbler (XOR with a
    /// public 1 flips the zero label), 0 for the evaluator (its label stays).
    fn public_label(&self, v: bool) -> u128;
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

/// [`LANES`] wires side by side: each lane's label, and which lanes are public with their
/// values. A public lane's label is the one XOR gives it ([`AndBatch::public_label`]), so XOR
/// is a plain XOR of every lane, without looking at which are public.
#[derive(Clone, Copy)]
struct Lanes {
    labels: [u128; LANES],
    public: u16,
    values: u16,
}

impl Lanes {
    fn wire(&self, lane: usize) -> Wire {
        if self.public >> lane & 1 == 1 {
            Wire::Public(self.values >> lane & 1 == 1)
        } else {
            Wire::Label(self.labels[lane])
        }
    }

    /// Every lane a public zero, which costs nothing.
    const ZEROS: Lanes = Lanes { labels: [0; LANES], public: !0, values: 0 };

    /// Puts `w` in `lane`, which held a public zero.
    fn set<B: AndBatch>(&mut self, b: &B, lane: usize, w: Wire) {
        match w {
            Wire::Label(l) => {
                self.labels[lane] = l;
                self.public &= !(1 << lane);
            }
            Wire::Public(v) => {
                self.labels[lane] = b.public_label(v);
                self.values |= u16::from(v) << lane;
            }
        }
    }

    /// Lanes `..n` from `wire`, the rest public zeros.
    fn from_wires<B: AndBatch>(b: &B, n: usize, wire: impl Fn(usize) -> Wire) -> Lanes {
        let mut lanes = Lanes::ZEROS;
        for lane in 0..n {
            lanes.set(b, lane, wire(lane));
        }
        lanes
    }
}

/// The backend seen as gates on [`LANES`] wires at once (`n` of them in use).
struct Lockstep<'a, B> {
    b: &'a mut B,
    n: usize,
}

impl<B: AndBatch> Gates for Lockstep<'_, B> {
    type Bit = Lanes;

    #[inline]
    fn xor(&self, x: Lanes, y: Lanes) -> Lanes {
        Lanes {
            labels: core::array::from_fn(|i| x.labels[i] ^ y.labels[i]),
            public: x.public & y.public,
            values: x.values ^ y.values,
        }
    }

    /// A lane with a public input costs nothing; the others are one batch of tables.
    fn and(&mut self, x: Lanes, y: Lanes) -> Lanes {
        let mut out = Lanes::ZEROS;
        let mut pairs = [(0u128, 0u128); LANES];
        let mut at = [0usize; LANES];
        let mut k = 0;
        for lane in 0..self.n {
            match super::public_and(x.wire(lane), y.wire(lane)) {
                Ok(w) => out.set(self.b, lane, w),
                Err(labels) => {
                    (pairs[k], at[k]) = (labels, lane);
                    k += 1;
                }
            }
        }
        let mut labels = [0u128; LANES];
        self.b.and_labels(&pairs[..k], &mut labels[..k]);
        for (&lane, &l) in at[..k].iter().zip(&labels[..k]) {
            out.set(self.b, lane, Wire::Label(l));
        }
        out
    }
}

/// The AES S-box on every byte, [`LANES`] at a time.
pub(crate) fn sub_bytes<B: AndBatch>(b: &mut B, bytes: &mut [[Wire; 8]]) {
    let mut lanes = Lockstep { b, n: 0 };
    for chunk in bytes.chunks_mut(LANES) {
        lanes.n = chunk.len();
        let s: [Lanes; 8] =
            core::array::from_fn(|bit| Lanes::from_wires(lanes.b, chunk.len(), |lane| chunk[lane][bit]));
        let out = sbox_without_constant(&mut lanes, &s);
        for (lane, byte) in chunk.iter_mut().enumerate() {
            for (bit, w) in byte.iter_mut().enumerate() {
                let v = out[bit].wire(lane);
                *w = if (0x63 >> bit) & 1 == 1 { lanes.b.not(v) } else { v };
            }
        }
    }
}
