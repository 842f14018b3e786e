//! End-to-end tests of the COT layer: both sides over an in-memory channel.

use super::kos::{padded_rows, prover_bytes_for, CHUNK_ROWS, MAX_MESSAGE_BYTES};
use super::test_util::{assert_correlated, run_extend};
use super::*;
use crate::channel::test_util::tampering;
use crate::channel::{memory_pair, ChannelError, MemoryChannel};
use crate::primitives::prg::PrgKind;
use futures::executor::block_on;
use futures::future::join;

fn channels() -> (MemoryChannel, MemoryChannel) {
    memory_pair(MAX_MESSAGE_BYTES)
}

/// Set up a sender/receiver pair (base OTs done) over fresh channels.
fn setup_pair() -> (KosSender, KosReceiver, MemoryChannel, MemoryChannel) {
    setup_pair_with(PrgKind::default())
}

fn setup_pair_with(prg: PrgKind) -> (KosSender, KosReceiver, MemoryChannel, MemoryChannel) {
    let (mut cv, mut cp) = channels();
    let mut s = KosSender::new().with_prg(prg);
    let mut r = KosReceiver::new().with_prg(prg);
    let (a, b) = block_on(join(s.setup(&mut cv), r.setup(&mut cp)));
    a.unwrap();
    b.unwrap();
    (s, r, cv, cp)
}

/// Index of a column j with Δ_j == want.
fn column_with_delta_bit(delta: F128, want: bool) -> usize {
    (0..128).find(|&j| ((delta.0 >> j) & 1 == 1) == want).expect("Δ is not all-0/all-1")
}

#[test]
fn extend_gives_correlations_under_one_delta_for_various_n() {
    for prg in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
        extend_gives_correlations_with(prg);
    }
}

fn extend_gives_correlations_with(prg: PrgKind) {
    let (s, r, cv, cp) = setup_pair_with(prg);
    let delta = s.delta();
    let (mut s, mut r, mut cv, mut cp) = (s, r, cv, cp);
    let mut all_keys = Vec::new();
    // 100_000 spans two matrix chunks; the repeated 1000 checks fresh output per call
    for n in [1usize, 1000, 100_000, 1000] {
        let o = run_extend(s, r, cv, cp, n);
        let keys = o.keys.unwrap();
        let (bits, macs) = o.cots.unwrap();
        assert_eq!(keys.len(), n);
        assert_correlated(delta, &keys, &bits, &macs);
        assert_eq!(o.sender.delta(), delta, "Δ must not change between calls");
        if n >= 1000 {
            let ones = bits.iter().filter(|&&b| b).count() as f64 / n as f64;
            let tol = if n >= 100_000 { 0.01 } else { 0.1 };
            assert!((ones - 0.5).abs() < tol, "n={n}: fraction of ones {ones}");
        }
        all_keys.extend(keys);
        (s, r, cv, cp) = (o.sender, o.receiver, o.cv.unwrap(), o.cp.unwrap());
    }
    // keys are fresh across calls (no repeated PRG output)
    let total = all_keys.len();
    let mut raw: Vec<u128> = all_keys.iter().map(|k| k.0).collect();
    raw.sort_unstable();
    raw.dedup();
    assert_eq!(raw.len(), total, "repeated keys across/within extend calls");
}

#[test]
fn lazy_setup_on_first_extend_and_empty_extend() {
    let (cv, cp) = channels();
    let o = run_extend(KosSender::new(), KosReceiver::new(), cv, cp, 300);
    let delta = o.sender.delta();
    let keys = o.keys.unwrap();
    let (bits, macs) = o.cots.unwrap();
    assert_correlated(delta, &keys, &bits, &macs);
    let o = run_extend(o.sender, o.receiver, o.cv.unwrap(), o.cp.unwrap(), 0);
    assert!(o.keys.unwrap().is_empty());
    let (b, m) = o.cots.unwrap();
    assert!(b.is_empty() && m.is_empty());
    assert_eq!(o.cv.unwrap().bytes_received(), 32 + 16 * padded_rows(300) as u64 + 32);
}

#[test]
fn session_ids_must_match() {
    let (cv, cp) = channels();
    let s = KosSender::new().with_session_id(b"session A");
    let r = KosReceiver::new().with_session_id(b"session B");
    let o = run_extend(s, r, cv, cp, 10);
    assert!(matches!(o.keys, Err(CotError::ConsistencyCheckFailed)), "{:?}", o.keys.err());
    // The same session id, not the default one, on both sides: each side keeps it.
    let (cv, cp) = channels();
    let s = KosSender::new().with_session_id(b"session A");
    let r = KosReceiver::new().with_session_id(b"session A");
    let o = run_extend(s, r, cv, cp, 10);
    o.keys.expect("the same session id");
    o.cots.expect("the same session id");
}

#[test]
fn each_side_reports_the_prg_it_was_given() {
    for prg in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
        assert_eq!((KosSender::new().with_prg(prg).prg(), KosReceiver::new().with_prg(prg).prg()), (prg, prg));
    }
}

#[test]
fn traffic_is_exactly_sixteen_bytes_per_row_plus_check() {
    let (s, r, cv, cp) = setup_pair();
    let (v0, p0) = (cv.bytes_sent(), cp.bytes_sent());
    let n = 5000;
    let o = run_extend(s, r, cv, cp, n);
    o.keys.unwrap();
    o.cots.unwrap();
    let (cv, cp) = (o.cv.unwrap(), o.cp.unwrap());
    assert_eq!(cp.bytes_sent() - p0, prover_bytes_for(n) as u64);
    assert_eq!(prover_bytes_for(n), 16 * (5000usize + 168).div_ceil(128) * 128 + 32);
    assert_eq!(cv.bytes_sent() - v0, 16);
}

#[test]
fn flipped_matrix_bit_in_a_delta_one_column_is_caught() {
    for prg in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
        flipped_matrix_bit_is_caught_with(prg);
    }
}

fn flipped_matrix_bit_is_caught_with(prg: PrgKind) {
    let (s, r, cv, cp) = setup_pair_with(prg);
    let j = column_with_delta_bit(s.delta(), true);
    let n = 1000;
    let col_len = padded_rows(n) / 8;
    let cp = tampering(cp, move |k, msg| {
        if k == 0 {
            msg[j * col_len + 3] ^= 1 << 5; // row 29 of column j
        }
    });
    let o = run_extend(s, r, cv, cp, n);
    assert!(matches!(o.keys, Err(CotError::ConsistencyCheckFailed)), "{:?}", o.keys.err());
    // the verifier refuses to continue after a failed check
    let (cv2, cp2) = channels();
    let o2 = run_extend(o.sender, KosReceiver::new(), cv2, cp2, 10);
    assert!(matches!(o2.keys, Err(CotError::Poisoned)), "{:?}", o2.keys.err());
}

#[test]
fn different_choice_bits_in_one_column_are_caught() {
    // The prover uses r' ≠ r in column j: U_j ⊕= (r ⊕ r'), here a random nonzero difference,
    // in the second chunk of a two-chunk extension.
    let (s, r, cv, cp) = setup_pair();
    let j = column_with_delta_bit(s.delta(), true);
    let n = CHUNK_ROWS + 1000;
    let second_chunk_rows = padded_rows(n) - CHUNK_ROWS;
    let col_len = second_chunk_rows / 8;
    let cp = tampering(cp, move |k, msg| {
        if k == 1 {
            use rand::Rng;
            let mut rng = rand::rng();
            for b in &mut msg[j * col_len..(j + 1) * col_len] {
                *b ^= rng.random::<u8>();
            }
            msg[j * col_len] |= 1; // make sure the difference is nonzero
        }
    });
    let o = run_extend(s, r, cv, cp, n);
    assert!(matches!(o.keys, Err(CotError::ConsistencyCheckFailed)), "{:?}", o.keys.err());
}

#[test]
fn flipped_check_response_is_caught() {
    for byte in [0usize, 16, 31] {
        let (s, r, cv, cp) = setup_pair();
        let cp = tampering(cp, move |k, msg| {
            if k == 1 {
                msg[byte] ^= 0x80;
            }
        });
        let o = run_extend(s, r, cv, cp, 500);
        assert!(matches!(o.keys, Err(CotError::ConsistencyCheckFailed)), "{:?}", o.keys.err());
    }
}

/// Documents the KOS leakage: a deviation in a column where Δ_j = 0 is invisible (the
/// verifier never uses U_j there), so passing/failing tells a cheater the bit Δ_j.
#[test]
fn deviation_in_a_delta_zero_column_passes_selective_failure_leak() {
    let (s, r, cv, cp) = setup_pair();
    let delta = s.delta();
    let j = column_with_delta_bit(delta, false);
    let n = 1000;
    let col_len = padded_rows(n) / 8;
    let cp = tampering(cp, move |k, msg| {
        if k == 0 {
            msg[j * col_len + 7] ^= 0xFF;
        }
    });
    let o = run_extend(s, r, cv, cp, n);
    let keys = o.keys.unwrap();
    let (bits, macs) = o.cots.unwrap();
    assert_correlated(delta, &keys, &bits, &macs);
}

#[test]
fn wrong_size_matrix_chunks_are_malformed() {
    for delta_len in [-1isize, 1, -16] {
        let (s, r, cv, cp) = setup_pair();
        let cp = tampering(cp, move |k, msg| {
            if k == 0 {
                let new_len = (msg.len() as isize + delta_len) as usize;
                msg.resize(new_len, 0);
            }
        });
        let n = 777;
        let o = run_extend(s, r, cv, cp, n);
        let expected = 16 * padded_rows(n);
        match o.keys {
            Err(CotError::Malformed { expected: e, got, .. }) => {
                assert_eq!(e, expected);
                assert_eq!(got as isize, expected as isize + delta_len);
            }
            other => panic!("expected Malformed, got {:?}", other.err()),
        }
        // the prover sees the verifier hang up
        assert!(matches!(o.cots, Err(CotError::Channel(ChannelError::Closed))), "{:?}", o.cots.err());
    }
}

#[test]
fn wrong_size_check_response_is_malformed() {
    for new_len in [0usize, 31, 33] {
        let (s, r, cv, cp) = setup_pair();
        let cp = tampering(cp, move |k, msg| {
            if k == 1 {
                msg.resize(new_len, 0);
            }
        });
        let o = run_extend(s, r, cv, cp, 64);
        assert!(
            matches!(o.keys, Err(CotError::Malformed { expected: 32, got, .. }) if got == new_len),
            "{:?}",
            o.keys.err()
        );
    }
}

#[test]
fn wrong_size_seed_is_malformed_at_prover() {
    for new_len in [0usize, 15, 17] {
        let (s, r, cv, cp) = setup_pair();
        let cv = tampering(cv, move |k, msg| {
            if k == 0 {
                msg.resize(new_len, 0);
            }
        });
        let o = run_extend(s, r, cv, cp, 64);
        assert!(
            matches!(o.cots, Err(CotError::Malformed { expected: 16, got, .. }) if got == new_len),
            "{:?}",
            o.cots.err()
        );
        // a receiver that failed is poisoned too
        let (cv2, cp2) = channels();
        let o2 = run_extend(KosSender::new(), o.receiver, cv2, cp2, 10);
        assert!(matches!(o2.cots, Err(CotError::Poisoned)), "{:?}", o2.cots.err());
    }
}

#[test]
fn too_many_is_refused_before_allocating() {
    let (mut cv, _cp) = channels();
    let mut s = KosSender::new();
    let res = block_on(s.extend(&mut cv, kos::MAX_EXTEND + 1));
    assert!(matches!(res, Err(CotError::TooMany { .. })), "{:?}", res.err());
}

#[test]
fn chosen_delta_is_used_for_every_correlation() {
    let delta = F128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3211);
    let (cv, cp) = channels();
    let o = run_extend(KosSender::with_delta(delta), KosReceiver::new(), cv, cp, 2000);
    assert_eq!(o.sender.delta(), delta);
    let keys = o.keys.unwrap();
    let (bits, macs) = o.cots.unwrap();
    assert_correlated(delta, &keys, &bits, &macs);
    // a wrong Δ does not explain the MACs (so the check above is meaningful)
    let wrong = delta + F128(1 << 77);
    assert!((0..2000).any(|i| macs[i] != keys[i] + wrong.select(bits[i])));
}
