//! Engine tests: completeness, soundness (fault injection), zero-knowledge sanity.

use super::prover::Cheat;
use super::*;
use crate::channel::test_util::tampering;
use crate::channel::{memory_pair, Channel, ChannelError, MemoryChannel};
use crate::circuits::{Circuit, Gates};
use crate::ot::ideal::{IdealCotReceiver, IdealCotSender};
use rand::Rng;

/// A prover and verifier over one ideal COT (fresh seed); `cheat` sets the prover's faults.
pub(crate) fn ideal_parties(cheat: Cheat) -> (Prover<IdealCotReceiver>, Verifier<IdealCotSender>) {
    let seed: [u8; 16] = rand::rng().random();
    let mut prover = Prover::new(IdealCotReceiver::new(seed));
    *prover.cheat_mut() = cheat;
    (prover, Verifier::new(IdealCotSender::new(seed)))
}

/// Run one batch on both sides with an ideal COT; `cheat` configures the prover's faults.
pub(crate) fn zk_run<T, U>(
    cheat: Cheat,
    pf: impl FnMut(&mut ProverBackend) -> T,
    vf: impl FnMut(&mut VerifierBackend) -> U,
) -> (Result<T, ProofError>, Result<U, ProofError>) {
    let seed: [u8; 16] = rand::rng().random();
    zk_run_with(IdealCotReceiver::new(seed), IdealCotSender::new(seed), cheat, pf, vf)
}

pub(crate) fn zk_run_with<T, U>(
    recv: IdealCotReceiver,
    send: IdealCotSender,
    cheat: Cheat,
    pf: impl FnMut(&mut ProverBackend) -> T,
    vf: impl FnMut(&mut VerifierBackend) -> U,
) -> (Result<T, ProofError>, Result<U, ProofError>) {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let mut prover = Prover::new(recv);
    // Small messages so that multi-chunk payloads are exercised too.
    prover.set_max_message(4096);
    *prover.cheat_mut() = cheat;
    let mut verifier = Verifier::new(send);
    futures::executor::block_on(async move {
        let p = async move { prover.run(&mut a, pf).await };
        let v = async move { verifier.run(&mut b, vf).await };
        futures::future::join(p, v).await
    })
}

/// Records every message the prover sends (the verifier's view).
struct Tap {
    inner: MemoryChannel,
    log: Vec<Vec<u8>>,
}

impl Channel for Tap {
    async fn send(&mut self, msg: Vec<u8>) -> Result<(), ChannelError> {
        self.log.push(msg.clone());
        self.inner.send(msg).await
    }
    async fn recv(&mut self) -> Result<Vec<u8>, ChannelError> {
        self.inner.recv().await
    }
    fn bytes_sent(&self) -> u64 {
        self.inner.bytes_sent()
    }
    fn bytes_received(&self) -> u64 {
        self.inner.bytes_received()
    }
}

fn random_bits(n: usize) -> Vec<bool> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random()).collect()
}

/// Circuit: commit xs, ys; z_i = x_i ∧ y_i; w = ⊕ of z with a NOT; open all z and w.
fn and_circuit<B: Backend>(b: &mut B, xs: Option<&[bool]>, ys: Option<&[bool]>, n: usize) -> Vec<bool> {
    let x: Vec<B::Bit> = (0..n).map(|i| b.commit(xs.map(|v| v[i]))).collect();
    let y: Vec<B::Bit> = (0..n).map(|i| b.commit(ys.map(|v| v[i]))).collect();
    let mut zs = Vec::with_capacity(n + 1);
    let mut acc = b.constant(false);
    for i in 0..n {
        let z = b.and(x[i], y[i]);
        acc = b.xor(acc, z);
        zs.push(z);
    }
    let nacc = b.not(acc);
    zs.push(nacc);
    b.open(&zs)
}

#[test]
fn and_gates_prove_and_open_correctly() {
    let n = 300;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let (p, v) =
        zk_run(Cheat::default(), |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
    let expected: Vec<bool> = {
        let mut e: Vec<bool> = xs.iter().zip(&ys).map(|(x, y)| x & y).collect();
        let par = e.iter().fold(false, |a, b| a ^ b);
        e.push(!par);
        e
    };
    assert_eq!(p.unwrap(), expected);
    assert_eq!(v.unwrap(), expected);
}

#[test]
fn wires_carry_over_between_batches_and_public_constants_fold() {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let xs = random_bits(64);
    let xs2 = xs.clone();
    let (pr, vr) = futures::executor::block_on(async move {
        let p = async move {
            let w = prover.run(&mut a, |b| xs2.iter().map(|x| b.commit(Some(*x))).collect::<Vec<_>>()).await?;
            prover
                .run(&mut a, |b| {
                    let one = b.constant(true);
                    let zero = b.constant(false);
                    let mut out: Vec<PBit> = w.windows(2).map(|p| b.and(p[0], p[1])).collect();
                    out.push(b.and(w[0], one));
                    out.push(b.and(zero, w[1]));
                    out.push(b.xor(one, one));
                    let opened = b.open(&out);
                    (opened, b.stats())
                })
                .await
        };
        let v = async move {
            let w = verifier.run(&mut b, |b| (0..64).map(|_| b.commit(None)).collect::<Vec<_>>()).await?;
            verifier
                .run(&mut b, |b| {
                    let one = b.constant(true);
                    let zero = b.constant(false);
                    let mut out: Vec<VBit> = w.windows(2).map(|p| b.and(p[0], p[1])).collect();
                    out.push(b.and(w[0], one));
                    out.push(b.and(zero, w[1]));
                    out.push(b.xor(one, one));
                    b.open(&out)
                })
                .await
        };
        futures::future::join(p, v).await
    });
    let (popened, stats) = pr.unwrap();
    let vopened = vr.unwrap();
    let mut expected: Vec<bool> = xs.windows(2).map(|p| p[0] & p[1]).collect();
    expected.extend([xs[0], false, false]);
    assert_eq!(popened, expected);
    assert_eq!(vopened, expected);
    // ANDs with a public input cost nothing; the public XOR is not opened.
    assert_eq!(stats.and_gates, 63);
    assert_eq!(stats.opened, 64);
}

#[test]
fn flipped_and_output_is_rejected() {
    let n = 50;
    let xs = random_bits(n);
    let ys = random_bits(n);
    // Commit indices: 0..50 = xs, 50..100 = ys, 100.. = AND outputs.
    let cheat = Cheat { flip_commit: Some(2 * n + 7), ..Default::default() };
    let (p, v) = zk_run(cheat, |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
    assert!(p.is_ok());
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

/// The AND check packs 128 gates per row into one field element; false gates in one row, in
/// different rows, or in the last, partial row must never cancel.
#[test]
fn two_flipped_and_outputs_are_rejected_in_one_row_or_across_rows() {
    let n = 300;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let gate = |i: usize| Some(2 * n + i);
    for (a, b) in [(0, 127), (5, 6), (127, 128), (3, 131), (130, 299), (299, 298)] {
        let cheat = Cheat { flip_commit: gate(a), flip_commit_too: gate(b), ..Default::default() };
        let (p, v) = zk_run(cheat, |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
        assert!(p.is_ok());
        assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "gates {a}, {b}: {v:?}");
    }
}

/// Both sides sum full chunks of 2,048 gates on the pool while the circuit runs: a batch of
/// two such chunks and a staged tail proves honestly, and a false gate in either chunk or in
/// the tail fails the check.
#[test]
fn false_gates_in_chunks_summed_on_the_pool_are_rejected() {
    let n = 4500;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let (p, v) =
        zk_run(Cheat::default(), |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
    assert_eq!(p.unwrap(), v.unwrap());
    for gate in [3, 2047, 2048, 4095, 4096, 4499] {
        let cheat = Cheat { flip_commit: Some(2 * n + gate), ..Default::default() };
        let (p, v) = zk_run(cheat, |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
        assert!(p.is_ok());
        assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "gate {gate}: {v:?}");
    }
}

#[test]
fn flipped_opened_value_is_rejected() {
    let n = 20;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let cheat = Cheat { flip_open: Some(3), ..Default::default() };
    let (_, v) = zk_run(cheat, |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
    assert!(matches!(v, Err(ProofError::OpeningMacMismatch)), "{v:?}");
}

#[test]
fn forged_opening_mac_is_rejected() {
    let n = 20;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let cheat = Cheat { forge_open_mac: Some(0), ..Default::default() };
    let (_, v) = zk_run(cheat, |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
    assert!(matches!(v, Err(ProofError::OpeningMacMismatch)), "{v:?}");
}

#[test]
fn tampered_check_answer_is_rejected() {
    let n = 20;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let cheat = Cheat { tamper_check: true, ..Default::default() };
    let (_, v) = zk_run(cheat, |b| and_circuit(b, Some(&xs), Some(&ys), n), |b| and_circuit(b, None, None, n));
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

#[test]
fn tampered_cot_correlation_is_rejected() {
    let n = 20;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let seed: [u8; 16] = rand::rng().random();
    // COT 2n + 1 backs the second AND output: its MAC no longer matches the key.
    let (_, v) = zk_run_with(
        IdealCotReceiver::with_tampered_index(seed, 2 * n + 1),
        IdealCotSender::new(seed),
        Cheat::default(),
        |b| and_circuit(b, Some(&xs), Some(&ys), n),
        |b| and_circuit(b, None, None, n),
    );
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
    // COT 0 backs input x_0, which is opened directly.
    let xs2 = xs.clone();
    let (_, v) = zk_run_with(
        IdealCotReceiver::with_tampered_index(seed, 0),
        IdealCotSender::new(seed),
        Cheat::default(),
        |b| {
            let x = b.commit(Some(xs2[0]));
            b.open(&[x])
        },
        |b| {
            let x = b.commit(None);
            b.open(&[x])
        },
    );
    assert!(matches!(v, Err(ProofError::OpeningMacMismatch)), "{v:?}");
}

#[test]
fn wrong_constant_assertion_is_rejected() {
    let bits = random_bits(16);
    let claimed: Vec<bool> = bits.iter().enumerate().map(|(i, b)| if i == 5 { !b } else { *b }).collect();
    let (_, ok) = zk_run(
        Cheat::default(),
        |b| {
            let w: Vec<PBit> = bits.iter().map(|x| b.commit(Some(*x))).collect();
            b.assert_constant(&w, &bits)
        },
        |b| {
            let w: Vec<VBit> = (0..16).map(|_| b.commit(None)).collect();
            b.assert_constant(&w, &bits)
        },
    );
    assert!(ok.is_ok());
    let (_, v) = zk_run(
        Cheat::default(),
        |b| {
            let w: Vec<PBit> = bits.iter().map(|x| b.commit(Some(*x))).collect();
            b.assert_constant(&w, &claimed)
        },
        |b| {
            let w: Vec<VBit> = (0..16).map(|_| b.commit(None)).collect();
            b.assert_constant(&w, &claimed)
        },
    );
    assert!(matches!(v, Err(ProofError::ConstantMismatch)), "{v:?}");
}

#[test]
fn field_product_constraints_check_and_reject() {
    let mut rng = rand::rng();
    let (x, y): (u128, u128) = (rng.random(), rng.random());
    let z = (crate::primitives::field::F128(x) * crate::primitives::field::F128(y)).0;
    let basis: Vec<crate::primitives::field::F128> = (0..128).map(crate::primitives::field::F128::x_pow).collect();
    fn circuit<B: Backend>(b: &mut B, vals: Option<[u128; 4]>, basis: &[crate::primitives::field::F128]) {
        let mut es = Vec::new();
        for k in 0..4 {
            let bits: Vec<B::Bit> = (0..128).map(|i| b.commit(vals.map(|v| (v[k] >> i) & 1 == 1))).collect();
            es.push(b.elem_from_bits(&bits, basis));
        }
        b.assert_product(es[0], es[1], es[2]);
        // (c·x + y)·y = c·z + y², with the element sum and scaling
        let c = crate::primitives::field::F128(0x1234_5678_9abc_def0_0fed_cba9_8765_4321);
        let lhs = b.elem_add(b.elem_scale(es[0], c), es[1]);
        let rhs = b.elem_add(b.elem_scale(es[2], c), es[3]);
        b.assert_product(lhs, es[1], rhs);
    }
    let y2 = (crate::primitives::field::F128(y) * crate::primitives::field::F128(y)).0;
    let (p, v) = zk_run(Cheat::default(), |b| circuit(b, Some([x, y, z, y2]), &basis), |b| circuit(b, None, &basis));
    assert!(p.is_ok() && v.is_ok(), "{v:?}");
    let cheat = Cheat { flip_commit: Some(256 + 77), ..Default::default() };
    let (_, v) = zk_run(cheat, |b| circuit(b, Some([x, y, z, y2]), &basis), |b| circuit(b, None, &basis));
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

/// A constant asserted on public bits is checked by value: equal passes, different is
/// refused, on the verifier as on the prover.
#[test]
fn constants_asserted_on_public_bits_are_checked() {
    let bits = [true, false, false, true, true];
    for (expected, ok) in [(bits, true), ([true, false, true, true, true], false)] {
        let (_, v) = zk_run(
            Cheat::default(),
            |b| {
                let w: Vec<PBit> = bits.iter().map(|x| b.constant(*x)).collect();
                b.assert_constant(&w, &expected)
            },
            |b| {
                let w: Vec<VBit> = bits.iter().map(|x| b.constant(*x)).collect();
                b.assert_constant(&w, &expected)
            },
        );
        assert_eq!(v.is_ok(), ok, "{expected:?}: {v:?}");
        if !ok {
            assert!(matches!(v, Err(ProofError::ConstantMismatch)), "{v:?}");
        }
    }
}

/// The batch payload arrives in chunks no longer than what is left of it, none empty: a
/// prover that sends more, or an empty chunk, is refused before anything is read from it.
#[test]
fn a_payload_chunk_past_the_announced_length_or_empty_is_refused() {
    // 8 committed bits: 1 byte of corrections and the two 32-byte hashes
    let stats = BatchStats { commits: 8, ..Default::default() };
    let len = payload_len(&stats);
    for chunks in [vec![vec![0u8; len + 1]], vec![vec![0u8; len - 5], vec![0u8; 10]], vec![vec![]]] {
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let (_, mut verifier) = ideal_parties(Cheat::default());
        let v = futures::executor::block_on(async move {
            let p = async move {
                a.send(encode_header(&stats, len)).await.unwrap();
                for c in chunks {
                    a.send(c).await.unwrap();
                }
                a
            };
            let v = verifier.run(&mut b, |b| {
                for _ in 0..8 {
                    b.commit(None);
                }
            });
            futures::future::join(p, v).await.1
        });
        assert!(matches!(v, Err(ProofError::Malformed("batch payload length"))), "{v:?}");
    }
}

/// The verifier's circuit must come out the same in its counting and its real pass: one that
/// commits less the second time is refused, as one that commits more.
#[test]
fn a_verifier_circuit_that_changes_between_its_passes_is_refused() {
    for second in [0, 2] {
        let mut calls = 0;
        let (_, v) = zk_run(
            Cheat::default(),
            |b| {
                b.commit(Some(true));
            },
            |b| {
                calls += 1;
                for _ in 0..if calls == 1 { 1 } else { second } {
                    b.commit(None);
                }
            },
        );
        assert!(matches!(v, Err(ProofError::NonDeterministicCircuit)), "{second}: {v:?}");
    }
}

/// COTs preprocessed on both sides are consumed in lockstep by a later batch that needs more
/// than were made: the verifier's preprocessing draws them as the prover's does.
#[test]
fn preprocessed_cots_stay_in_lockstep() {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let n = 1500;
    let (xs, ys) = (random_bits(n), random_bits(n));
    let (p, v) = futures::executor::block_on(async move {
        let p = async move {
            prover.preprocess(&mut a, 1000).await?;
            prover.run(&mut a, |b| and_circuit(b, Some(&xs), Some(&ys), n)).await
        };
        let v = async move {
            verifier.preprocess(&mut b, 1000).await?;
            verifier.run(&mut b, |b| and_circuit(b, None, None, n)).await
        };
        futures::future::join(p, v).await
    });
    assert!(p.is_ok() && v.is_ok(), "{v:?}");
}

#[test]
fn verifier_rejects_batch_of_wrong_shape() {
    // The prover's circuit commits one more bit than the verifier's.
    let (_, v) = zk_run(
        Cheat::default(),
        |b| {
            b.commit(Some(true));
            b.commit(Some(false));
        },
        |b| {
            b.commit(None);
        },
    );
    assert!(matches!(v, Err(ProofError::Malformed(_)) | Err(ProofError::Cot(_))), "{v:?}");
}

#[test]
fn corrections_of_fixed_witness_look_uniform() {
    // ZK sanity: the verifier's view of committed-but-unopened bits (the corrections d = w ⊕ u)
    // is independent of w: for an all-zero witness, about half the corrections are 1 and two
    // runs with fresh COTs give unrelated corrections.
    let n = 8192;
    let mut views = Vec::new();
    for _ in 0..2 {
        let seed: [u8; 16] = rand::rng().random();
        let (a, mut b) = memory_pair(MAX_MESSAGE);
        let mut tap = Tap { inner: a, log: Vec::new() };
        let mut prover = Prover::new(IdealCotReceiver::new(seed));
        let mut verifier = Verifier::new(IdealCotSender::new(seed));
        let (p, v) = futures::executor::block_on(async {
            let p = prover.run(&mut tap, |b| {
                for _ in 0..n {
                    b.commit(Some(false));
                }
            });
            let v = verifier.run(&mut b, |b| {
                for _ in 0..n {
                    b.commit(None);
                }
            });
            futures::future::join(p, v).await
        });
        p.unwrap();
        v.unwrap();
        // log[0] = header, log[1] = payload (corrections first).
        let corr = tap.log[1][..n / 8].to_vec();
        views.push(corr);
    }
    for view in &views {
        let ones: u32 = view.iter().map(|b| b.count_ones()).sum();
        assert!((3700..4500).contains(&ones), "ones = {ones}");
    }
    let differing: u32 = views[0].iter().zip(&views[1]).map(|(a, b)| (a ^ b).count_ones()).sum();
    assert!((3700..4500).contains(&differing), "differing = {differing}");
}

fn run_tampered(msg_index: usize, byte: usize, truncate: bool) -> Result<Vec<bool>, ProofError> {
    let n = 40;
    let xs = random_bits(n);
    let ys = random_bits(n);
    let seed: [u8; 16] = rand::rng().random();
    let (a, mut b) = memory_pair(MAX_MESSAGE);
    // Flips one bit of the `msg_index`-th message the prover sends (or drops its last byte).
    let mut ch = tampering(a, move |k, msg: &mut Vec<u8>| {
        if k == msg_index {
            if truncate {
                msg.pop();
            } else if let Some(b) = msg.get_mut(byte) {
                *b ^= 1;
            }
        }
    });
    let mut prover = Prover::new(IdealCotReceiver::new(seed));
    let mut verifier = Verifier::new(IdealCotSender::new(seed));
    let (_, v) = futures::executor::block_on(async move {
        let p = async move { prover.run(&mut ch, |b| and_circuit(b, Some(&xs), Some(&ys), n)).await };
        let v = async move { verifier.run(&mut b, |b| and_circuit(b, None, None, n)).await };
        futures::future::join(p, v).await
    });
    v
}

#[test]
fn tampered_wire_messages_are_rejected() {
    // Messages: 0 = header, 1 = payload, 2 = check answer.
    // Payload bytes: 120 commits → 15 correction bytes, 41 opened bits → 6 bytes, 2 hashes.
    assert!(run_tampered(99, 0, false).is_ok());
    // A correction bit of an AND output (commit 80 + 3 → byte 10).
    assert!(matches!(run_tampered(1, 10, false), Err(ProofError::MultiplicationCheckFailed)));
    // A claimed opened value.
    assert!(matches!(run_tampered(1, 15, false), Err(ProofError::OpeningMacMismatch)));
    // The opening MAC hash.
    assert!(matches!(run_tampered(1, 21 + 3, false), Err(ProofError::OpeningMacMismatch)));
    // The constant-assertion hash (no assertions in this circuit, still checked).
    assert!(matches!(run_tampered(1, 21 + 40, false), Err(ProofError::ConstantMismatch)));
    // The check answer.
    assert!(matches!(run_tampered(2, 20, false), Err(ProofError::MultiplicationCheckFailed)));
    assert!(matches!(run_tampered(2, 0, true), Err(ProofError::Malformed(_))));
    // A header that does not match the verifier's circuit.
    assert!(matches!(run_tampered(0, 0, false), Err(ProofError::Malformed(_))));
}

/// A deferred AND batch, then a small checked batch; returns both sides' results and whether
/// a check was still pending after the deferred batch.
fn deferred_then_checked(cheat: Cheat) -> (Result<Vec<bool>, ProofError>, Result<Vec<bool>, ProofError>, bool) {
    first_then_checked(true, cheat)
}

/// An AND batch run with `run_batch_unless_more(more)`, then a small checked batch; returns
/// both sides' results and whether a check was still pending after the first batch.
fn first_then_checked(
    more: bool,
    cheat: Cheat,
) -> (Result<Vec<bool>, ProofError>, Result<Vec<bool>, ProofError>, bool) {
    let n = 40;
    let (xs, ys) = (random_bits(n), random_bits(n));
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut prover, mut verifier) = ideal_parties(cheat);
    futures::executor::block_on(async move {
        let p = async move {
            prover
                .run_batch_unless_more(&mut a, more, &mut |b: &mut ProverBackend| {
                    and_circuit(b, Some(&xs), Some(&ys), n)
                })
                .await?;
            let pending = prover.check_pending();
            let last = prover.run(&mut a, |b| {
                let w = b.commit(Some(true));
                b.open(&[w])
            });
            last.await.map(|v| (v, pending))
        };
        let v = async move {
            let first = verifier.run_batch_unless_more(&mut b, more, &mut |b| and_circuit(b, None, None, n)).await?;
            // AND rows alone wait for the check (the batch has no field products)
            assert_eq!(verifier.check_pending(), more, "the verifier knows whether the first batch is unchecked");
            verifier
                .run(&mut b, |b| {
                    let w = b.commit(None);
                    b.open(&[w])
                })
                .await?;
            assert!(!verifier.check_pending());
            Ok(first)
        };
        let (p, v) = futures::future::join(p, v).await;
        let pending = p.as_ref().map(|x| x.1).unwrap_or(false);
        (p.map(|x| x.0), v, pending)
    })
}

#[test]
fn deferred_batches_are_checked_by_the_next_checked_batch() {
    let (p, v, pending) = deferred_then_checked(Cheat::default());
    assert_eq!(p.unwrap(), vec![true]);
    assert_eq!(v.unwrap().len(), 41);
    assert!(pending, "the deferred batch's triples wait for the checked batch");
}

#[test]
fn a_false_and_in_a_deferred_batch_fails_the_later_check() {
    // Commit indices of the deferred batch: 0..40 xs, 40..80 ys, 80.. AND outputs.
    let (_, v, _) = deferred_then_checked(Cheat { flip_commit: Some(85), ..Default::default() });
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

#[test]
fn a_forged_opening_in_a_deferred_batch_is_rejected_on_arrival() {
    for cheat in
        [Cheat { flip_open: Some(1), ..Default::default() }, Cheat { forge_open_mac: Some(0), ..Default::default() }]
    {
        let (_, v, _) = deferred_then_checked(cheat);
        assert!(matches!(v, Err(ProofError::OpeningMacMismatch)), "{v:?}");
    }
}

/// Three AND batches scheduled with `run_batch_every(.., every = 4)`: the first two are
/// deferred, the last (the run's end) is checked. Returns the verifier's result and, per batch,
/// whether the prover still had a check pending after it.
fn scheduled_batches(cheat: Cheat) -> (Result<(), ProofError>, Vec<bool>) {
    let n = 40;
    let (xs, ys) = (random_bits(n), random_bits(n));
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut prover, mut verifier) = ideal_parties(cheat);
    futures::executor::block_on(async move {
        let p = async move {
            let mut pending = Vec::new();
            for k in 0..3 {
                let f = &mut |b: &mut ProverBackend| and_circuit(b, Some(&xs), Some(&ys), n);
                if prover.run_batch_every(&mut a, k, 3, 4, f).await.is_err() {
                    break;
                }
                pending.push(prover.check_pending());
            }
            pending
        };
        let v = async move {
            for k in 0..3 {
                verifier.run_batch_every(&mut b, k, 3, 4, &mut |b| and_circuit(b, None, None, n)).await?;
            }
            Ok(())
        };
        futures::future::join(v, p).await
    })
}

#[test]
fn run_batch_every_defers_until_the_kth_or_last_batch_and_that_check_covers_them() {
    let (v, pending) = scheduled_batches(Cheat::default());
    v.unwrap();
    assert_eq!(pending, [true, true, false]);
    // a false AND output in the deferred batches is caught by the last batch's check
    let (v, _) = scheduled_batches(Cheat { flip_commit: Some(85), ..Default::default() });
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

#[test]
fn a_batch_with_more_to_come_is_deferred_into_their_check_and_a_last_one_is_checked() {
    let (_, v, pending) = first_then_checked(true, Cheat::default());
    v.unwrap();
    assert!(pending, "with more batches to come the first waits for their check");
    let (_, v, pending) = first_then_checked(false, Cheat::default());
    v.unwrap();
    assert!(!pending, "with none to come it is checked on its own");
    // a false AND output in the deferred batch fails the next batch's check
    let (_, v, _) = first_then_checked(true, Cheat { flip_commit: Some(85), ..Default::default() });
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

/// Three batches of `and_circuit` over one prover/verifier pair, each named `shape` if given;
/// `cheat` applies to the prover from the third batch on. The verifier's results and the
/// prover's bytes sent.
fn three_batches(shape: Option<u64>, cheat_third: Cheat) -> (Vec<Result<Vec<bool>, ProofError>>, u64) {
    let n = 300;
    let (xs, ys) = (random_bits(n), random_bits(n));
    let (mut p, mut v) = ideal_parties(Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let mut results = vec![];
    for k in 0..3 {
        if let Some(key) = shape {
            p.expect_shape(key);
            v.expect_shape(key);
        }
        if k == 2 {
            *p.cheat_mut() = cheat_third;
        }
        let (rp, rv) = futures::executor::block_on(futures::future::join(
            p.run(&mut a, |bk| and_circuit(bk, Some(&xs), Some(&ys), n)),
            v.run(&mut b, |bk| and_circuit(bk, None, None, n)),
        ));
        if let (Ok(po), Ok(vo)) = (&rp, &rv) {
            assert_eq!(po, vo);
        }
        results.push(rv);
    }
    (results, a.bytes_sent())
}

#[test]
fn named_shapes_skip_counting_without_changing_results_traffic_or_soundness() {
    let (named, named_bytes) = three_batches(Some(7), Cheat::default());
    let (plain, plain_bytes) = three_batches(None, Cheat::default());
    assert!(named.iter().chain(&plain).all(|r| r.is_ok()));
    assert_eq!(named_bytes, plain_bytes, "the same messages either way");
    // a false AND output in a batch whose counting pass was skipped is still caught
    let cheat = Cheat { flip_commit: Some(2 * 300 + 7), ..Default::default() };
    let (results, _) = three_batches(Some(7), cheat);
    assert!(results[0].is_ok() && results[1].is_ok());
    assert!(matches!(results[2], Err(ProofError::MultiplicationCheckFailed)), "{:?}", results[2]);
}

#[test]
fn a_shape_name_reused_for_another_circuit_fails_the_batch() {
    let (mut p, mut v) = ideal_parties(Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let circuit = |n: usize, xs: &[bool]| {
        let xs = xs.to_vec();
        move |bk: &mut ProverBackend| and_circuit(bk, Some(&xs), Some(&xs), n)
    };
    let xs = random_bits(300);
    for (k, n) in [(0, 300usize), (1, 200)] {
        p.expect_shape(7);
        v.expect_shape(7);
        let prover = async {
            let r = p.run(&mut a, circuit(n, &xs)).await;
            (r, k)
        };
        if k == 0 {
            let ((rp, _), rv) = futures::executor::block_on(futures::future::join(
                prover,
                v.run(&mut b, |bk| and_circuit(bk, None, None, n)),
            ));
            assert!(rp.is_ok() && rv.is_ok());
        } else {
            // the second batch is smaller than its name says: the prover's real pass disagrees
            // with the cached counts and it stops; the verifier never accepts
            let (rp, _) = futures::executor::block_on(prover);
            assert!(matches!(rp, Err(ProofError::NonDeterministicCircuit)), "{rp:?}");
            drop(a);
            let rv = futures::executor::block_on(v.run(&mut b, |bk| and_circuit(bk, None, None, n)));
            assert!(rv.is_err(), "{rv:?}");
            break;
        }
    }
}
