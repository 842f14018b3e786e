//! Byte strings in and out of the ZK engine: committed by the prover, opened, asserted.

use super::Backend;
use crate::circuits::{bits_to_bytes, bytes_to_bits};

/// Commit `len` private bytes: the prover passes `Some(bytes)` (exactly `len` of them),
/// the verifier `None`.
pub fn commit_bytes<B: Backend>(b: &mut B, bytes: Option<&[u8]>, len: usize) -> Vec<B::Bit> {
    let mut out = Vec::with_capacity(len * 8);
    for j in 0..len {
        let byte = bytes.and_then(|v| v.get(j).copied());
        for i in 0..8 {
            out.push(b.commit(byte.map(|x| (x >> i) & 1 == 1)));
        }
    }
    out
}

/// Open byte-aligned bits and return the bytes.
pub fn open_bytes<B: Backend>(b: &mut B, bits: &[B::Bit]) -> Vec<u8> {
    let v = b.open(bits);
    bits_to_bytes(&v)
}

/// Assert that byte-aligned bits equal public bytes.
pub fn assert_bytes_eq<B: Backend>(b: &mut B, bits: &[B::Bit], bytes: &[u8]) {
    b.assert_constant(bits, &bytes_to_bits(bytes));
}

/// Open only the bytes at `positions` of a byte string (partial opening); returns them in
/// the order given. Out-of-range positions yield nothing.
pub fn open_selected_bytes<B: Backend>(
    b: &mut B,
    bits: &[B::Bit],
    positions: &[usize],
) -> Vec<u8> {
    let mut sel = Vec::with_capacity(positions.len() * 8);
    for p in positions {
        if let Some(byte) = bits.get(p * 8..p * 8 + 8) {
            sel.extend_from_slice(byte);
        }
    }
    open_bytes(b, &sel)
}

/// Assert that public `ciphertext` decrypts under `keystream` (bits of consecutive keystream
/// bytes, aligned with the ciphertext) to `plaintext` (bits, private or public), i.e.
/// keystream ⊕ plaintext = ciphertext. Used to bind the Finished records to the session:
/// plaintext = 14 00 00 0c ‖ verify_data. A length mismatch makes the batch fail
/// (ConstantMismatch on the verifier) instead of panicking.
pub fn assert_decrypts_to<B: Backend>(
    b: &mut B,
    keystream: &[B::Bit],
    ciphertext: &[u8],
    plaintext: &[B::Bit],
) {
    let n = ciphertext.len() * 8;
    let mut bits = Vec::with_capacity(n);
    for (k, p) in keystream.iter().zip(plaintext).take(n) {
        bits.push(b.xor(*k, *p));
    }
    let mut expected = bytes_to_bits(ciphertext);
    if keystream.len() < n || plaintext.len() != n {
        // Keep lengths unequal so the backend records a failed assertion.
        expected.push(false);
    }
    b.assert_constant(&bits, &expected);
}
