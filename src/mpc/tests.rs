//! The phased two-party computation: the TLS 1.2 key derivation garbled over a channel equals
//! the native key schedule, its re-proof in ZK accepts an honest garbler, and catches a
//! garbler that corrupts a table, a decoding bit, an input label or its own input.

use super::fp::Fp;
use super::garbled::{label_digest, EvaluatorParty, GarblerCheat, GarblerParty, MAX_PHASE_TABLES};
use super::kdf::{derive, KdfInputs, SessionKeys};
use super::phases::{Input, PeerMisbehaved, PhaseError, Phases, ZkPhases};
use crate::channel::{memory_pair, Channel};
use crate::circuits::{bits_to_bytes, bytes_to_bits, Gates};
use crate::gc::{Evaluator, Garbler, Table, Wire};
use crate::tls::keys::{extended_master_secret, key_block, master_secret, verify_data, PreMasterSecret};
use crate::zk::bytes::commit_bytes;
use crate::zk::{Party, MAX_MESSAGE};
use futures::executor::block_on;
use futures::future::join;
use rand::Rng;

fn random_inputs(ems: bool) -> KdfInputs {
    let mut rng = rand::rng();
    KdfInputs {
        group: super::shared_secret::SharedGroup::P256,
        client_random: rng.random(),
        server_random: rng.random(),
        session_hash: ems.then(|| rng.random()),
        client_finished_hash: rng.random(),
    }
}

type GarbledKeys = SessionKeys<Garbler<Vec<Table>>>;
type EvaluatedKeys = SessionKeys<Evaluator<std::vec::IntoIter<Table>>>;
type Outcome<K, P> = Result<(K, P), PhaseError>;

/// Both parties of the garbled key derivation over an in-memory channel, the verifier's input
/// through simulated random COTs under the garbler's Δ.
fn garbled_kdf(
    p_share: &Fp,
    v_share: &Fp,
    inputs: &KdfInputs,
    cheat: GarblerCheat,
) -> (Outcome<GarbledKeys, GarblerParty>, Outcome<EvaluatedKeys, EvaluatorParty>) {
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    gp.cheat = cheat;
    let (keys, choices, macs) =
        crate::ot::test_util::random_cots(crate::primitives::field::F128(gp.garbler().delta()), 256);
    let keys: Vec<u128> = keys.iter().map(|k| k.0).collect();
    let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (pb, vb) = (bytes_to_bits(&p_share.to_be_bytes()), bytes_to_bits(&v_share.to_be_bytes()));
    block_on(join(
        async move {
            let mine = gp.own_inputs(&mut a, &pb).await?;
            let theirs = gp.peer_inputs(&mut a, &keys).await?;
            let k = derive(&mut gp, &mut a, Input::Wires(&mine), Input::Wires(&theirs), inputs).await?;
            Ok((k, gp))
        },
        async move {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, 256).await?;
            let mine = ep.own_inputs(&mut b, &vb, &choices, &macs).await?;
            let k = derive(&mut ep, &mut b, Input::Wires(&theirs), Input::Wires(&mine), inputs).await?;
            Ok((k, ep))
        },
    ))
}

/// The value of a wire from the garbler's zero label and the evaluator's active one.
pub(super) fn value_of(zero: &[Wire], active: &[Wire]) -> Vec<u8> {
    let v: Vec<bool> = zero
        .iter()
        .zip(active)
        .map(|(z, a)| match (*z, *a) {
            (Wire::Label(z), Wire::Label(a)) => (z ^ a) & 1 == 1,
            (Wire::Public(v), _) => v,
            _ => panic!("the parties disagree on which wires are public"),
        })
        .collect();
    bits_to_bytes(&v)
}

fn pms_of(p: &Fp, v: &Fp) -> PreMasterSecret {
    PreMasterSecret::new((*p + *v).to_be_bytes().to_vec())
}

#[test]
fn garbled_key_derivation_equals_the_tls12_key_schedule() {
    for ems in [false, true] {
        let (p, v) = (Fp::random(), Fp::random());
        let inputs = random_inputs(ems);
        let (g, e) = garbled_kdf(&p, &v, &inputs, GarblerCheat::default());
        let ((gk, gp), (ek, ep)) = (g.expect("garbler"), e.expect("evaluator"));
        let pms = pms_of(&p, &v);
        let ms = match inputs.session_hash {
            Some(h) => extended_master_secret(&pms, &h),
            None => master_secret(&pms, &inputs.client_random, &inputs.server_random),
        };
        let kb = key_block(&ms, &inputs.client_random, &inputs.server_random);
        assert_eq!(value_of(&gk.client_write_key, &ek.client_write_key), kb.client_write_key);
        assert_eq!(value_of(&gk.server_write_key, &ek.server_write_key), kb.server_write_key);
        assert_eq!(value_of(&gk.client_write_iv, &ek.client_write_iv), kb.client_write_iv);
        assert_eq!(value_of(&gk.server_write_iv, &ek.server_write_iv), kb.server_write_iv);
        let cvd = verify_data(&ms, b"client finished", &inputs.client_finished_hash);
        assert_eq!((gk.client_verify_data, ek.client_verify_data), (cvd, cvd));
        assert_eq!(gp.revealed(), ep.revealed(), "both parties saw the same revealed values");
        assert_eq!(gp.revealed().len(), 7, "seven phases");
        // ≈ 250k AND gates of 197 bits each, as the module says
        let mib = gp.bytes_of_tables() as f64 / (1 << 20) as f64;
        assert!((5.4..6.6).contains(&mib), "{mib} MiB of tables");
    }
}

#[test]
fn premaster_shares_that_wrap_around_the_prime_still_add_mod_p() {
    // p − 1 + 2 = 1 (mod p): the sum's carry and the reduction both happen.
    let minus_one = -Fp::ONE;
    let two = Fp::ONE + Fp::ONE;
    let inputs = random_inputs(true);
    let (g, e) = garbled_kdf(&minus_one, &two, &inputs, GarblerCheat::default());
    let (gk, _) = g.expect("garbler");
    let (ek, _) = e.expect("evaluator");
    let mut one = [0u8; 32];
    one[31] = 1;
    let ms = extended_master_secret(&PreMasterSecret::new(one.to_vec()), &inputs.session_hash.unwrap_or_default());
    let kb = key_block(&ms, &inputs.client_random, &inputs.server_random);
    assert_eq!(value_of(&gk.server_write_key, &ek.server_write_key), kb.server_write_key);
}

/// The re-proof after the session: the prover commits its share, then proves the same phases
/// in ZK with the verifier's share public; the verifier compares every opened value with what
/// it revealed during the garbled run.
fn reproof(p_share: &Fp, v_share: &Fp, inputs: &KdfInputs, during_session: &[Vec<u8>]) -> Result<(), PhaseError> {
    reproof_with(crate::zk::Cheat::default(), p_share, v_share, inputs, during_session)
}

/// [`reproof`] with a prover that also cheats in the proof.
fn reproof_with(
    cheat: crate::zk::Cheat,
    p_share: &Fp,
    v_share: &Fp,
    inputs: &KdfInputs,
    during_session: &[Vec<u8>],
) -> Result<(), PhaseError> {
    let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(cheat);
    // Each side owns its channel end, so one that fails drops it and the other returns.
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (pv, vv) = (p_share.to_be_bytes(), v_share.to_be_bytes());
    let (p, v) = block_on(join(
        async move {
            let mine = prover.run_batch_deferred(&mut a, &mut |b| commit_bytes(b, Some(&pv), 32)).await?;
            let mut zp = ZkPhases::new(&mut prover);
            derive(&mut zp, &mut a, Input::Wires(&mine), Input::Public(&vv), inputs).await?;
            zp.finish(&mut a, during_session, &[]).await
        },
        async move {
            let theirs = verifier.run_batch_deferred(&mut b, &mut |b| commit_bytes(b, None, 32)).await?;
            let mut zv = ZkPhases::new(&mut verifier);
            derive(&mut zv, &mut b, Input::Wires(&theirs), Input::Public(&vv), inputs).await?;
            zv.finish(&mut b, during_session, &[]).await
        },
    ));
    // the verifier's verdict first: a prover it refused only sees the channel close
    v.and(p)
}

#[test]
fn the_reproof_accepts_an_honest_garbler() {
    let (p, v) = (Fp::random(), Fp::random());
    let inputs = random_inputs(true);
    let (_, e) = garbled_kdf(&p, &v, &inputs, GarblerCheat::default());
    let (_, ep) = e.expect("evaluator");
    reproof(&p, &v, &inputs, ep.revealed()).expect("an honest garbler passes");
}

/// Runs a cheating garbler and then the re-proof; also says whether the cheat changed any
/// value the verifier saw revealed (against an honest run on the same inputs).
fn caught(cheat: GarblerCheat) -> (Result<(), PhaseError>, bool) {
    let (p, v) = (Fp::random(), Fp::random());
    let inputs = random_inputs(false);
    let (_, e) = garbled_kdf(&p, &v, &inputs, cheat);
    let (_, ep) = e.expect("the evaluator finishes whatever the tables say");
    let (_, honest) = garbled_kdf(&p, &v, &inputs, GarblerCheat::default());
    let changed = honest.expect("honest run").1.revealed() != ep.revealed();
    (reproof(&p, &v, &inputs, ep.revealed()), changed)
}

fn assert_reveal_differs(r: Result<(), PhaseError>, what: &str) {
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. }))), "{what}: {r:?}");
}

#[test]
fn the_reproof_catches_a_flipped_decoding_bit_or_input_label() {
    for i in [0, 100, 255, 256 + 17, 7 * 256] {
        let (r, changed) = caught(GarblerCheat { flip_decoding: Some(i), ..Default::default() });
        assert!(changed);
        assert_reveal_differs(r, &format!("decoding bit {i}"));
    }
    for i in [0, 131, 255] {
        let (r, changed) = caught(GarblerCheat { flip_own_label: Some(i), ..Default::default() });
        assert!(changed);
        assert_reveal_differs(r, &format!("input label {i}"));
    }
}

#[test]
fn the_reproof_catches_a_corrupted_gate_table_whenever_it_changes_a_revealed_value() {
    // The evaluator reads a table's first ciphertext only if its first input's select bit is
    // set, the second likewise, and a wrong label may still carry the right select bit to
    // where it is revealed: a corrupted table need not change anything the verifier sees. It
    // is caught exactly when it does.
    let mut changed_count = 0;
    for gate in [5u64, 1_000, 20_000, 30_000, 45_000, 60_000, 80_000, 100_000, 130_000, 150_000, 180_000, 230_000] {
        let (r, changed) = caught(GarblerCheat { flip_table: Some(gate), ..Default::default() });
        if changed {
            assert_reveal_differs(r, &format!("gate {gate}"));
            changed_count += 1;
        } else {
            assert!(r.is_ok(), "gate {gate}: nothing revealed changed, yet {r:?}");
        }
    }
    assert!(changed_count >= 1, "none of 12 corrupted tables changed a revealed value");
}

#[test]
fn a_prover_that_opens_false_values_to_match_its_garbled_cheat_is_caught_by_the_proof() {
    // The garbler flips decoding bit 100 (in the premaster's inner pad state, the first value
    // the proof opens); in the proof the prover then claims that bit flipped too, so the
    // opened values equal what the verifier saw. The MAC check refuses the claim.
    let (p, v) = (Fp::random(), Fp::random());
    let inputs = random_inputs(false);
    let (_, e) = garbled_kdf(&p, &v, &inputs, GarblerCheat { flip_decoding: Some(100), ..Default::default() });
    let (_, ep) = e.expect("evaluator");
    let cheat = crate::zk::Cheat { flip_open: Some(100), ..Default::default() };
    let r = reproof_with(cheat, &p, &v, &inputs, ep.revealed());
    assert!(matches!(r, Err(PhaseError::Proof(crate::zk::ProofError::OpeningMacMismatch))), "{r:?}");
    // Without the false claim the values differ, as the other tests show; with it and no
    // garbled cheat, the claim alone is refused too.
    let (_, e) = garbled_kdf(&p, &v, &inputs, GarblerCheat::default());
    let cheat = crate::zk::Cheat { flip_open: Some(100), ..Default::default() };
    let r = reproof_with(cheat, &p, &v, &inputs, e.expect("evaluator").1.revealed());
    assert!(
        matches!(r, Err(PhaseError::Proof(_)) | Err(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. }))),
        "{r:?}"
    );
}

#[test]
fn the_reproof_catches_a_garbler_that_used_another_share_than_it_committed() {
    let (p, v) = (Fp::random(), Fp::random());
    let inputs = random_inputs(true);
    let (_, e) = garbled_kdf(&(p + Fp::ONE), &v, &inputs, GarblerCheat::default());
    let (_, ep) = e.expect("evaluator");
    assert_reveal_differs(reproof(&p, &v, &inputs, ep.revealed()), "another share");
}

#[test]
fn a_lying_evaluator_is_caught_by_the_garbler_at_once() {
    // The evaluator claims a flipped bit, with the digest of the labels it really holds: it
    // cannot hold the label that goes with the flipped value.
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (g, e) = block_on(join(
        async {
            let w = gp.own_inputs(&mut a, &bytes_to_bits(&[0x5a])).await?;
            Phases::phase(&mut gp, &mut a, &mut |_| ((), w.clone())).await
        },
        async {
            let mut ep = EvaluatorParty::new();
            let w = ep.peer_inputs(&mut b, 8).await?;
            b.recv().await?; // the phase header: no tables, 8 decoding bits
            let mut answer = vec![8, 0, 0, 0, 0x5b];
            answer.extend_from_slice(&label_digest(w.iter().map(|w| match *w {
                Wire::Label(l) => l,
                Wire::Public(_) => unreachable!("input wires are labels"),
            })));
            b.send(answer).await?;
            Ok::<_, PhaseError>(())
        },
    ));
    e.expect("the lie is sent");
    assert!(matches!(g, Err(PhaseError::Peer(PeerMisbehaved::RevealNotAuthentic))), "{g:?}");
}

#[test]
fn a_phase_with_too_many_or_too_few_tables_is_refused() {
    // The evaluator's phase has two AND gates.
    let run_chunk = |first_gate: u64, announced: u64, chunk: Vec<u8>| {
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        block_on(join(
            async {
                let mut header = first_gate.to_le_bytes().to_vec();
                header.extend_from_slice(&announced.to_le_bytes());
                header.extend_from_slice(&0u32.to_le_bytes());
                a.send(header).await.ok();
                if !chunk.is_empty() {
                    a.send(chunk).await.ok();
                }
            },
            async {
                let mut ep = EvaluatorParty::new();
                Phases::phase(&mut ep, &mut b, &mut |ev| {
                    let x = ev.and(Wire::Label(1), Wire::Label(2));
                    ev.and(x, Wire::Label(3));
                    ((), Vec::new())
                })
                .await
            },
        ))
        .1
    };
    let run_from = |first_gate: u64, announced: u64, sent: usize| {
        run_chunk(first_gate, announced, vec![0u8; crate::gc::three_halves::encoded_len(sent)])
    };
    let run = |announced: u64, sent: usize| run_from(0, announced, sent);
    assert!(run(2, 2).is_ok());
    assert!(run_from(super::garbled::AHEAD_GATES, 2, 2).is_ok(), "a phase may start at any gate the garbler names");
    for first_gate in [(1 << 63) - 1, u64::MAX - 1, u64::MAX] {
        let r = run_from(first_gate, 2, 2);
        assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::Malformed(_)))), "first gate {first_gate}: {r:?}");
    }
    let r = run(MAX_PHASE_TABLES + 1, 0);
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::TooManyTables { .. }))), "{r:?}");
    let r = run(3, 3);
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::TableCountMismatch { sent: 3, used: 2 }))), "{r:?}");
    let r = run(1, 1);
    assert!(matches!(r, Err(PhaseError::Garbled(crate::gc::GcError::MissingTables))), "{r:?}");
    let r = run(2, 3);
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::Malformed(_)))), "{r:?}");
    // a chunk no count of tables has, and two tables with a padding bit set
    let r = run_chunk(0, 2, vec![0u8; 50 - 1]);
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::Malformed(_)))), "{r:?}");
    let mut padded = vec![0u8; 50];
    padded[49] = 0x80;
    let r = run_chunk(0, 2, padded);
    assert!(matches!(r, Err(PhaseError::Garbled(crate::gc::GcError::MalformedTables(_)))), "{r:?}");
}

#[test]
fn the_verifiers_input_reaches_the_garbler_only_masked_by_its_cot_choices() {
    // What the garbler receives for the verifier's input bits is x ⊕ c for the COT choices c,
    // which it never sees: balanced whatever x is, and equal to x only through c.
    for x in [false, true] {
        let values = vec![x; 256];
        let (_, choices, macs) =
            crate::ot::test_util::random_cots(crate::primitives::field::F128(rand::random::<u128>() | 1), 256);
        let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let (seen, wires) = block_on(join(
            async {
                let msg = a.recv().await.expect("corrections");
                a.send(vec![0u8; 16 * 256]).await.expect("answers");
                msg
            },
            async { EvaluatorParty::new().own_inputs(&mut b, &values, &choices, &macs).await },
        ));
        wires.expect("labels");
        assert_eq!(seen.len(), 4 + 32, "a count and 256 bits, nothing else");
        let corrections = &seen[4..];
        let ones: u32 = corrections.iter().map(|c| c.count_ones()).sum();
        assert!((80..=176).contains(&ones), "x = {x}: {ones} of 256 correction bits set");
        let unmasked: Vec<bool> = (0..256).map(|i| ((corrections[i / 8] >> (i % 8)) & 1 == 1) ^ choices[i]).collect();
        assert!(unmasked.iter().all(|&u| u == x));
    }
}

#[test]
fn reveals_of_another_count_or_value_than_the_proofs_are_refused() {
    use super::phases::compare_reveals;
    let session = vec![vec![1, 2], vec![3]];
    assert!(compare_reveals(&session, &session.clone()).is_ok());
    let r = compare_reveals(&session, &[vec![1, 2]]);
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::RevealCountDiffers { expected: 2, got: 1 }))), "{r:?}");
    let r = compare_reveals(&session, &[vec![1, 2], vec![4]]);
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::RevealDiffers { index: 1 }))), "{r:?}");
}

#[test]
fn an_evaluator_that_misstates_a_public_wire_is_refused() {
    // A revealed public constant carries no label: the garbler compares the claimed value
    // with the constant itself.
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (g, e) = block_on(join(
        async move { Phases::phase(&mut gp, &mut a, &mut |_| ((), vec![Wire::Public(true); 8])).await },
        async move {
            b.recv().await?; // the phase header: no tables, 8 decoding bits
            let mut answer = vec![8, 0, 0, 0, 0xfe];
            answer.extend_from_slice(&label_digest(std::iter::empty()));
            b.send(answer).await?;
            Ok::<_, PhaseError>(())
        },
    ));
    e.expect("the lie is sent");
    assert!(matches!(g, Err(PhaseError::Peer(PeerMisbehaved::RevealNotAuthentic))), "{g:?}");
}

#[test]
fn decoding_bits_for_another_number_of_wires_are_refused() {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let r = block_on(join(
        async move {
            // from gate 0, no tables, 3 decoding bits, for a phase that reveals 8 wires
            let mut header = [0u64.to_le_bytes(), 0u64.to_le_bytes()].concat();
            header.extend_from_slice(&[3, 0, 0, 0, 0b101]);
            a.send(header).await.ok();
        },
        async move {
            let mut ep = EvaluatorParty::new();
            Phases::phase(&mut ep, &mut b, &mut |_| ((), vec![Wire::Label(7); 8])).await
        },
    ))
    .1;
    assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::DecodingCountMismatch { expected: 8, got: 3 }))), "{r:?}");
}

/// A phase the verifier alone decodes: additive shares of the GHASH key H = AES_K(0^128) for
/// K = k_P ⊕ k_V, the verifier's H ⊕ m under the prover's mask m.
fn ghash_key_shares<B: crate::circuits::Circuit>(
    b: &mut B,
    k_p: &[B::Bit],
    mask: &[B::Bit],
    k_v: &[B::Bit],
) -> ((), Vec<B::Bit>) {
    let key = crate::circuits::xor_bits(b, k_p, k_v);
    let rk = crate::circuits::aes::key_schedule(b, &key);
    let h = crate::circuits::keystream::ghash_key(b, &rk);
    ((), crate::circuits::xor_bits(b, &h, mask))
}

/// The garbled run of [`ghash_key_shares`]: what the garbler got (nothing, if it is right) and
/// what the verifier decoded.
fn garbled_ghash_key_shares(
    k_p: [u8; 16],
    mask: [u8; 16],
    k_v: [u8; 16],
    cheat: GarblerCheat,
) -> (Option<Vec<u8>>, Vec<u8>) {
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    gp.cheat = cheat;
    let (keys, choices, macs) =
        crate::ot::test_util::random_cots(crate::primitives::field::F128(gp.garbler().delta()), 128);
    let keys: Vec<u128> = keys.iter().map(|k| k.0).collect();
    let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (g, e) = block_on(join(
        async move {
            let mine = gp.own_inputs(&mut a, &bytes_to_bits(&[k_p, mask].concat())).await?;
            let theirs = gp.peer_inputs(&mut a, &keys).await?;
            let ((), got) = gp
                .phase_for_verifier(&mut a, &mut |b| ghash_key_shares(b, &mine[..128], &mine[128..], &theirs))
                .await?;
            assert!(gp.revealed().is_empty(), "nothing was revealed to both");
            Ok::<_, PhaseError>(got)
        },
        async move {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, 256).await?;
            let mine = ep.own_inputs(&mut b, &bytes_to_bits(&k_v), &choices, &macs).await?;
            let ((), got) = ep
                .phase_for_verifier(&mut b, &mut |b| ghash_key_shares(b, &theirs[..128], &theirs[128..], &mine))
                .await?;
            assert_eq!(ep.for_verifier(), [got.clone().expect("the verifier decodes")]);
            Ok::<_, PhaseError>(got.expect("the verifier decodes"))
        },
    ));
    (g.expect("garbler"), e.expect("evaluator"))
}

/// The re-proof of [`ghash_key_shares`] after the session, with the verifier's key share and
/// decoded value published.
fn reproof_ghash_key_shares(
    k_p: [u8; 16],
    mask: [u8; 16],
    k_v: [u8; 16],
    published: Vec<u8>,
) -> Result<(), PhaseError> {
    let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let witness = [k_p, mask].concat();
    let published = [published];
    let p_published = published.clone();
    let (p, v) = block_on(join(
        async move {
            let mine = prover.run_batch_deferred(&mut a, &mut |b| commit_bytes(b, Some(&witness), 32)).await?;
            let mut zp = ZkPhases::new(&mut prover);
            zp.phase_for_verifier(&mut a, &mut |b| {
                let kv = crate::circuits::constant_bytes(b, &k_v);
                ghash_key_shares(b, &mine[..128], &mine[128..], &kv)
            })
            .await?;
            zp.finish(&mut a, &[], &p_published).await
        },
        async move {
            let theirs = verifier.run_batch_deferred(&mut b, &mut |b| commit_bytes(b, None, 32)).await?;
            let mut zv = ZkPhases::new(&mut verifier);
            zv.phase_for_verifier(&mut b, &mut |b| {
                let kv = crate::circuits::constant_bytes(b, &k_v);
                ghash_key_shares(b, &theirs[..128], &theirs[128..], &kv)
            })
            .await?;
            zv.finish(&mut b, &[], &published).await
        },
    ));
    v.and(p)
}

#[test]
fn a_phase_for_the_verifier_alone_gives_it_a_share_of_the_ghash_key_and_the_prover_nothing() {
    use aes::cipher::{BlockEncrypt, KeyInit};
    let mut rng = rand::rng();
    let (k_p, mask, k_v): ([u8; 16], [u8; 16], [u8; 16]) = (rng.random(), rng.random(), rng.random());
    let (garbler_got, v_share) = garbled_ghash_key_shares(k_p, mask, k_v, GarblerCheat::default());
    assert_eq!(garbler_got, None, "the garbler learns nothing of the value");
    let key: [u8; 16] = core::array::from_fn(|i| k_p[i] ^ k_v[i]);
    let mut h = [0u8; 16].into();
    aes::Aes128::new(&key.into()).encrypt_block(&mut h);
    let joint: Vec<u8> = v_share.iter().zip(&mask).map(|(x, m)| x ^ m).collect();
    assert_eq!(joint, h.to_vec(), "the two shares add up to H = AES_K(0)");
    reproof_ghash_key_shares(k_p, mask, k_v, v_share).expect("an honest garbler passes the re-proof");
}

#[test]
fn the_reproof_catches_a_garbler_that_corrupted_a_value_only_the_verifier_decoded() {
    let mut rng = rand::rng();
    let (k_p, mask, k_v): ([u8; 16], [u8; 16], [u8; 16]) = (rng.random(), rng.random(), rng.random());
    let (_, honest) = garbled_ghash_key_shares(k_p, mask, k_v, GarblerCheat::default());
    let (_, cheated) =
        garbled_ghash_key_shares(k_p, mask, k_v, GarblerCheat { flip_decoding: Some(37), ..Default::default() });
    assert_eq!(honest[4] ^ cheated[4], 1 << 5, "the flipped decoding bit changed the verifier's share");
    let r = reproof_ghash_key_shares(k_p, mask, k_v, cheated);
    assert_reveal_differs(r, "a corrupted share of the GHASH key");
}

/// The end of a TLS 1.2 handshake in two parties ([`super::handshake`]) from premaster
/// shares, over simulated COTs: the client Finished record (the prover's) and the ciphertext
/// the verifier saw.
fn two_party_handshake_end(p_share: Fp, v_share: Fp, inputs: &KdfInputs) -> (Vec<u8>, Vec<u8>) {
    use super::ecdh::{ReceiverCots, SenderCots};
    use super::handshake::*;
    let powers = powers_for_records(16);
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    let (keys, choices, macs) =
        crate::ot::test_util::random_cots(crate::primitives::field::F128(gp.garbler().delta()), INPUT_COTS);
    let keys: Vec<u128> = keys.iter().map(|k| k.0).collect();
    let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
    let delta = crate::primitives::field::F128(rand::random());
    let (ole_keys, ole_choices, ole_macs) =
        crate::ot::test_util::random_cots(delta, super::ghash::cots_for_powers(powers));
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let p_inputs = HandshakeInputs::new(zeroize::Zeroizing::new(p_share.to_be_bytes()));
    let v_share = v_share.to_be_bytes();
    let prover = client_finished_prover(
        &mut gp,
        &mut a,
        &p_inputs,
        &keys,
        SenderCots { delta, keys: &ole_keys, first: 0 },
        inputs,
        powers,
    );
    let mut ep = EvaluatorParty::new();
    let verifier = client_finished_verifier(
        &mut ep,
        &mut b,
        &v_share,
        (&choices, &macs),
        ReceiverCots { choices: &ole_choices, macs: &ole_macs, first: 0 },
        inputs,
        powers,
    );
    let (p, v) = block_on(join(prover, verifier));
    (p.expect("prover").0, v.expect("verifier").0)
}

/// The client Finished record opened with the client key, as the server opens it.
fn open_client_finished(kb: &crate::tls::keys::KeyBlock, body: &[u8]) -> Vec<u8> {
    use crate::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
    let mut server = AesGcmRecordCrypto::new(&kb.client_write_key, &kb.client_write_iv).expect("16-byte key");
    server.open(0, 22, crate::tls::codec::TLS12, body).expect("the server's key opens the record: the tag is right")
}

#[test]
fn the_client_finished_record_of_a_two_party_handshake_is_the_servers() {
    let (p, v) = (Fp::random(), Fp::random());
    let inputs = random_inputs(true);
    // The server's side, from the premaster secret neither party held.
    let ms = extended_master_secret(&pms_of(&p, &v), &inputs.session_hash.expect("EMS"));
    let kb = key_block(&ms, &inputs.client_random, &inputs.server_random);
    let (body, seen_by_verifier) = two_party_handshake_end(p, v, &inputs);
    assert_eq!(&body[..8], &[0; 8], "explicit nonce 0: the first record under the new keys");
    assert_eq!(seen_by_verifier, body[8..24], "the verifier saw the ciphertext the server gets");
    let expect = [&[20u8, 0, 0, 12][..], &verify_data(&ms, b"client finished", &inputs.client_finished_hash)].concat();
    assert_eq!(open_client_finished(&kb, &body), expect, "it holds the client Finished with the right verify_data");
}
