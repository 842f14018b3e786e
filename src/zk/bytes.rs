//! Byte strings in and out of the ZK engine: committed by the prover, opened, asserted.

use super::Backend;
use crate::circuits::{bits_to_bytes, bytes_to_bits};

/// Commit `len` private bytes: the prover passes `Some(bytes)` (exactly `len` of them),
/// the verifier `None`.
#[cfg_attr(test, track_caller)]
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
#[cfg(test)]
pub(crate) fn assert_bytes_eq<B: Backend>(b: &mut B, bits: &[B::Bit], bytes: &[u8]) {
    b.assert_constant(bits, &bytes_to_bits(bytes));
}

/// Open only the bytes at `positions` of a byte string (partial opening); returns them in
/// the order given. Out-of-range positions yield nothing.
pub fn open_selected_bytes<B: Backend>(b: &mut B, bits: &[B::Bit], positions: &[usize]) -> Vec<u8> {
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
pub(crate) fn assert_decrypts_to<B: Backend>(b: &mut B, keystream: &[B::Bit], ciphertext: &[u8], plaintext: &[B::Bit]) {
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

/// Asserts that no byte of `bits` (byte-aligned) is a line break, CR (0x0d) or LF (0x0a), so
/// that a hidden byte of an HTTP request cannot start a header line or another request. A
/// byte is one iff its top four bits are 0, bit 3 is 1 and its low three bits are 010 or 101
/// (bit 2 = bit 0 ≠ bit 1): six AND gates a byte, one assertion for all.
pub(crate) fn assert_no_line_breaks<B: Backend>(b: &mut B, bits: &[B::Bit]) {
    let flags: Vec<B::Bit> = bits.chunks_exact(8).map(|x| is_line_break(b, x)).collect();
    let mut expected = vec![false; flags.len()];
    if bits.len() % 8 != 0 {
        // a partial byte: keep the lengths unequal, so the batch fails rather than passes it
        expected.push(false);
    }
    b.assert_constant(&flags, &expected);
}

/// 1 iff the byte `x` (8 bits, LSB first) is CR or LF.
fn is_line_break<B: Backend>(b: &mut B, x: &[B::Bit]) -> B::Bit {
    let low = b.xor(x[2], x[0]);
    let terms = [b.not(x[6]), b.not(x[5]), b.not(x[4]), x[3], b.not(low), b.xor(x[1], x[0])];
    terms.into_iter().fold(b.not(x[7]), |acc, t| b.and(acc, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::tests::zk_run;
    use crate::zk::{PlainBackend, ProofError};

    /// Every byte value: the flag is set for CR and LF alone, at six AND gates a byte.
    #[test]
    fn the_line_break_flag_is_set_for_cr_and_lf_alone() {
        for v in 0..=255u8 {
            let mut b = PlainBackend::new();
            let x = commit_bytes(&mut b, Some(&[v]), 1);
            let flag = is_line_break(&mut b, &x);
            assert_eq!(flag.v, v == b'\r' || v == b'\n', "{v:#04x}");
            assert_eq!(b.stats().and_gates, 6);
        }
    }

    /// In the engine: a committed string without CR or LF passes; one CR or LF anywhere in it
    /// fails the batch on the verifier's side, whatever the prover claims.
    #[test]
    fn a_hidden_line_break_fails_the_proof() {
        let run = |text: &'static [u8]| {
            let prove = move |b: &mut crate::zk::ProverBackend| {
                let x = commit_bytes(b, Some(text), text.len());
                assert_no_line_breaks(b, &x)
            };
            let verify = move |b: &mut crate::zk::VerifierBackend| {
                let x = commit_bytes(b, None, text.len());
                assert_no_line_breaks(b, &x)
            };
            zk_run(Default::default(), prove, verify).1
        };
        assert!(run(b"session=0123456789abcdef; theme=dark\t\x0b\x0c\x8a\x8d").is_ok());
        for bad in [&b"x\r\nGET /b HTTP/1.1"[..], b"abc\n", b"\rabc"] {
            assert!(matches!(run(bad), Err(ProofError::ConstantMismatch)), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
