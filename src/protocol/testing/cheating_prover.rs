//! A cheating prover against the verifier's side of the proof, on real TLS sessions: the prover
//! opens a write key other than the one it derived in ZK (fast path), or claims a commitment
//! to a plaintext or with a digest other than the one the session's ciphertext and the
//! in-ZK SHA-256 give. The cheats are [`proof::ProofCheat`], test-only hooks in the prover's
//! side of `proof::run`; each test fails if the check it guards is removed.

use crate::channel::memory_pair;
use crate::fixture::KeyType;
use crate::protocol::messages::RevealPlan;
use crate::protocol::observe::tls12::tests::{run_session, Opts, Session};
use crate::protocol::observe::tls12::{self as transcript, SessionTranscript};
use crate::protocol::prove::tls12::check::{recover, recover_with, CheckError};
use crate::protocol::prove::tls12::{self as proof, Opened, OpenedDirection, ProofCheat, PublicInputs};
use crate::tls::{CipherSuite, Direction};
use crate::zk::tests::ideal_parties;
use crate::zk::{Cheat, ProofError, MAX_MESSAGE};
use sha2::{Digest, Sha256};
use std::ops::Range;

/// Both sides of the proof for `s` with `reveal` and `commit` ranges per direction, the
/// prover cheating as `cheat` says: the prover's result (the COTs it took) and the verifier's.
fn run_both(
    s: &Session,
    cheat: ProofCheat,
    reveal: &[Vec<Range<u64>>; 2],
    commit: &[Vec<Range<u64>>; 2],
    blinders: &[[u8; 16]],
) -> (Result<usize, ProofError>, Result<Opened, ProofError>) {
    let plan = RevealPlan {
        sent: reveal[0].clone(),
        received: reveal[1].clone(),
        commit_sent: commit[0].clone(),
        commit_received: commit[1].clone(),
        ..Default::default()
    };
    run_plan(s, cheat, &plan, blinders)
}

/// [`run_both`] for a whole plan.
fn run_plan(
    s: &Session,
    cheat: ProofCheat,
    plan: &RevealPlan,
    blinders: &[[u8; 16]],
) -> (Result<usize, ProofError>, Result<Opened, ProofError>) {
    let t: SessionTranscript = transcript::parse(&s.sent, &s.received).unwrap();
    let inputs = PublicInputs::new(&t, plan);
    let ms = s.client.master_secret().unwrap().0;
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    // Each side owns its channel end: one that fails drops it, and the other returns instead
    // of waiting for a message that will not come.
    let p = async {
        let mut a = a;
        let r = proof::run(&mut prover, &mut a, Some(&ms), Some(blinders), &inputs, |cvd| t.server_finished_hash(cvd))
            .await;
        r.map(|_| prover.cot().issued())
    };
    let v = async {
        let mut b = b;
        proof::run(&mut verifier, &mut b, None, None, &inputs, |cvd| t.server_finished_hash(cvd)).await
    };
    proof::with_cheat(cheat, || futures::executor::block_on(async { futures::join!(p, v) }))
}

/// [`run_both`]: the verifier's result.
fn prove(
    s: &Session,
    cheat: ProofCheat,
    reveal: &[Vec<Range<u64>>; 2],
    commit: &[Vec<Range<u64>>; 2],
    blinders: &[[u8; 16]],
) -> Result<Opened, ProofError> {
    run_both(s, cheat, reveal, commit, blinders).1
}

/// [`run_both`], honest, with the COTs the prover's side took.
fn prove_counting(
    s: &Session,
    reveal: &[Vec<Range<u64>>; 2],
    blinders: &[[u8; 16]],
    commit: &[Vec<Range<u64>>; 2],
) -> (Opened, usize) {
    let (used, opened) = run_both(s, ProofCheat::default(), reveal, commit, blinders);
    (opened.expect("an honest proof"), used.expect("an honest prover"))
}

fn all(s: &Session) -> [Vec<Range<u64>>; 2] {
    let len = |d| s.client.transcript().app_plaintext(d).len() as u64;
    [vec![0..len(Direction::Sent)], vec![0..len(Direction::Received)]]
}

/// The fast path's key is the derived key: a prover that opens another one is refused by the
/// opening check, before any record is decrypted with it.
#[test]
fn a_fast_path_key_other_than_the_derived_one_is_refused() {
    let s = run_session(Opts { response_len: 3000, ..Opts::default() });
    let honest = prove(&s, ProofCheat::default(), &all(&s), &[vec![], vec![]], &[]).expect("honest prover");
    let t = transcript::parse(&s.sent, &s.received).unwrap();
    for (side, d, name, opened) in
        [(0, Direction::Sent, "sent", &honest.sent), (1, Direction::Received, "received", &honest.received)]
    {
        assert!(matches!(opened, OpenedDirection::Key { .. }), "{name} takes the fast path");
        recover(name, t.encrypted_records(d), opened, &all(&s)[side]).expect("the honest key opens every record");
        let cheat = ProofCheat { fast_key: Some(side), ..Default::default() };
        let r = prove(&s, cheat, &all(&s), &[vec![], vec![]], &[]);
        assert!(matches!(r, Err(ProofError::OpeningMacMismatch)), "{name}: {:?}", r.map(|_| ()));
    }
}

/// A commitment is to the session's plaintext (ciphertext ⊕ the proven keystream) and its
/// digest is the in-ZK SHA-256 of it: a prover that claims another plaintext or another digest
/// is refused.
#[test]
fn commitments_to_another_plaintext_or_digest_are_refused() {
    let s = run_session(Opts { response_len: 3000, ..Opts::default() });
    let plain = s.client.transcript().app_plaintext(Direction::Received);
    let reveal = [all(&s)[0].clone(), vec![0..100]]; // the response on the ZK path
    let commit = [vec![], vec![1000..1040]];
    let blinder = [7u8; 16];
    // the honest proof: the revealed bytes, and each commitment's digest under its own blinder
    let ranges = [1000..1040, 2000..2010];
    let honest = prove(&s, ProofCheat::default(), &reveal, &[vec![], ranges.to_vec()], &[blinder, [8; 16]])
        .expect("honest prover");
    let t = transcript::parse(&s.sent, &s.received).unwrap();
    let received = recover("received", t.encrypted_records(Direction::Received), &honest.received, &reveal[1])
        .expect("the revealed keystream");
    assert_eq!((received.fast_path, &received.bytes[..100]), (false, &plain[..100]));
    for (k, range) in ranges.into_iter().enumerate() {
        let mut h = Sha256::new();
        h.update(&plain[range.start as usize..range.end as usize]);
        h.update([7 + k as u8; 16]);
        assert_eq!(
            honest.commitments[k].digest,
            h.finalize().as_slice(),
            "commitment {k} opens to its plaintext and blinder"
        );
    }
    let r = prove(&s, ProofCheat { commit_plaintext: true, ..Default::default() }, &reveal, &commit, &[blinder]);
    assert!(matches!(r, Err(ProofError::MultiplicationCheckFailed)), "another plaintext: {:?}", r.map(|_| ()));
    let r = prove(&s, ProofCheat { commit_digest: true, ..Default::default() }, &reveal, &commit, &[blinder]);
    assert!(matches!(r, Err(ProofError::OpeningMacMismatch)), "another digest: {:?}", r.map(|_| ()));
}

/// No hidden byte of the request is a line break: a prover that hides one (here a CRLF, as a
/// cookie carrying `x\r\n\r\nGET /b …` would) is refused with its own error, on the ZK path of
/// the request; hiding a header value without one proves as before.
#[test]
fn a_hidden_line_break_in_the_request_is_refused() {
    let s = run_session(Opts::default());
    let request = s.client.transcript().app_plaintext(Direction::Sent);
    let len = request.len() as u64;
    let at = |needle: &[u8]| request.windows(needle.len()).position(|w| w == needle).unwrap() as u64;
    let host = at(b"localhost");
    let received = all(&s)[1].clone();
    let value_hidden = [vec![0..host, host + 9..len], received.clone()];
    prove(&s, ProofCheat::default(), &value_hidden, &[vec![], vec![]], &[])
        .expect("a hidden value without a line break");
    // the CRLF after the host hidden with it, and one alone in the middle of a hidden run
    for hidden in [host..host + 11, host + 9..host + 10, len - 2..len] {
        let reveal: Vec<_> = [0..hidden.start, hidden.end..len].into_iter().filter(|r| r.start < r.end).collect();
        let r = prove(&s, ProofCheat::default(), &[reveal, received.clone()], &[vec![], vec![]], &[]);
        assert!(matches!(r, Err(ProofError::HiddenLineBreak)), "{hidden:?} hidden: {:?}", r.map(|_| ()));
    }
}

/// The suites beside AES-128-GCM: SHA-384's PRF with AES-256-GCM records, and ChaCha20-Poly1305
/// records (no explicit nonce, Poly1305 tags), each with an ECDSA and an RSA server.
const NEW_SUITES: [(CipherSuite, KeyType); 4] = [
    (CipherSuite::EcdheEcdsaAes256GcmSha384, KeyType::EcdsaP256),
    (CipherSuite::EcdheRsaAes256GcmSha384, KeyType::Rsa2048),
    (CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256, KeyType::EcdsaP256),
    (CipherSuite::EcdheRsaChaCha20Poly1305Sha256, KeyType::Rsa2048),
];

/// Every suite proves both paths: the fast path (key and IV opened, the verifier decrypts and
/// checks every tag itself) and the ZK path (one byte of each direction hidden, the tags
/// checked from the opened GCM or Poly1305 material, the revealed bytes from the opened
/// keystream), with a commitment; the COTs a session takes stay within what the prover asks
/// both sides to preprocess for its suite and what the verifier allows.
#[test]
fn each_suite_proves_its_fast_and_zk_paths() {
    use crate::cost::{derivation_cots_12, MOST_DERIVATION_COTS};
    let all_suites = [(CipherSuite::EcdheEcdsaAes128GcmSha256, KeyType::EcdsaP256)].into_iter().chain(NEW_SUITES);
    for (suite, key) in all_suites {
        let s = run_session(Opts { response_len: 1500, key, suite: Some(suite), ..Opts::default() });
        let t = transcript::parse(&s.sent, &s.received).unwrap();
        assert_eq!(t.cipher_suite(), suite);
        let plain = [Direction::Sent, Direction::Received].map(|d| s.client.transcript().app_plaintext(d));
        let (opened, fast_cots) = prove_counting(&s, &all(&s), &[], &[vec![], vec![]]);
        for (side, d, name) in [(0, Direction::Sent, "sent"), (1, Direction::Received, "received")] {
            let opened = if side == 0 { &opened.sent } else { &opened.received };
            assert!(matches!(opened, OpenedDirection::Key { .. }), "{suite:?} {name}: the fast path");
            let r = recover_with(name, suite, t.encrypted_records(d), opened, &all(&s)[side]).expect("every record");
            assert_eq!(r.bytes, plain[side], "{suite:?} {name}");
        }
        // what the prover asks both sides to preprocess covers the fast path, within 10%
        let asked = derivation_cots_12(suite);
        assert!(fast_cots <= asked && fast_cots * 10 >= asked * 9, "{suite:?}: {fast_cots} COTs used, {asked} asked");
        assert!(derivation_cots_12(suite) <= MOST_DERIVATION_COTS, "{suite:?}: the verifier's limit");
        // one byte hidden in each direction (the request's first, no line break), and a
        // commitment to a range of the response
        let lens = plain.each_ref().map(|p| p.len() as u64);
        let reveal = [vec![1..lens[0]], vec![0..700, 701..lens[1]]];
        let commit = [vec![], vec![100..150]];
        let (opened, zk_cots) = prove_counting(&s, &reveal, &[[5; 16]], &commit);
        for (side, d, name) in [(0, Direction::Sent, "sent"), (1, Direction::Received, "received")] {
            let o = if side == 0 { &opened.sent } else { &opened.received };
            let r = recover_with(name, suite, t.encrypted_records(d), o, &reveal[side]).expect("the revealed bytes");
            assert!(!r.fast_path, "{suite:?} {name}");
            let mut expected = plain[side].clone();
            expected[if side == 0 { 0 } else { 700 }] = 0;
            assert_eq!(r.bytes, expected, "{suite:?} {name}: all but the hidden byte");
            // tag material of the other kind of AEAD than the suite's is refused
            let other = match suite.aead() {
                crate::tls::Aead12::ChaCha20Poly1305 => CipherSuite::EcdheEcdsaAes128GcmSha256,
                _ => CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256,
            };
            let refused = recover_with(name, other, t.encrypted_records(d), o, &reveal[side]).err();
            assert!(matches!(refused, Some(CheckError::WrongCipher { .. })), "{suite:?} {name}: {refused:?}");
        }
        let digest: [u8; 32] = Sha256::new().chain_update(&plain[1][100..150]).chain_update([5; 16]).finalize().into();
        assert_eq!(opened.commitments[0].digest, digest, "{suite:?}: the commitment");
        eprintln!("{suite:?}: {fast_cots} COTs on the fast path, {zk_cots} with a byte hidden each way");
    }
}

/// A record altered on the way is refused in every new suite, on the fast path (its tag under
/// the opened key) and on the ZK path (its tag from the opened GCM or Poly1305 material).
#[test]
fn a_tampered_record_is_refused_in_each_new_suite() {
    for (suite, key) in NEW_SUITES {
        let s = run_session(Opts { response_len: 400, key, suite: Some(suite), ..Opts::default() });
        let t = transcript::parse(&s.sent, &s.received).unwrap();
        let len = s.client.transcript().app_plaintext(Direction::Received).len() as u64;
        for reveal in [all(&s), [all(&s)[0].clone(), vec![0..10, 11..len]]] {
            let opened = prove(&s, ProofCheat::default(), &reveal, &[vec![], vec![]], &[]).expect("an honest prover");
            let mut records = t.encrypted_records(Direction::Received).to_vec();
            recover_with("received", suite, &records, &opened.received, &reveal[1]).expect("as relayed");
            records[1].ciphertext[3] ^= 0x20;
            assert_eq!(
                recover_with("received", suite, &records, &opened.received, &reveal[1]).err(),
                Some(CheckError::BadTag { direction: "received", index: 1 }),
                "{suite:?}, {} path",
                if reveal[1].len() == 1 { "fast" } else { "ZK" }
            );
        }
    }
}

/// In every new suite, a fast-path key other than the derived one is refused by its opening,
/// and a commitment to a plaintext other than the session's by the multiplication check.
#[test]
fn a_lying_prover_is_refused_in_each_new_suite() {
    for (suite, key) in NEW_SUITES {
        let s = run_session(Opts { response_len: 400, key, suite: Some(suite), ..Opts::default() });
        for side in 0..2 {
            let cheat = ProofCheat { fast_key: Some(side), ..Default::default() };
            let r = prove(&s, cheat, &all(&s), &[vec![], vec![]], &[]);
            assert!(matches!(r, Err(ProofError::OpeningMacMismatch)), "{suite:?}, side {side}: {:?}", r.map(|_| ()));
        }
        let reveal = [all(&s)[0].clone(), vec![0..100]];
        let commit = [vec![], vec![200..240]];
        let r = prove(&s, ProofCheat { commit_plaintext: true, ..Default::default() }, &reveal, &commit, &[[1; 16]]);
        assert!(matches!(r, Err(ProofError::MultiplicationCheckFailed)), "{suite:?}: {:?}", r.map(|_| ()));
    }
}

/// A JSON response whose amount a statement is about.
const JSON_RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n{\"amount\":\"1234.56\",\"note\":\"\\\"hi\\\" there\"}";

/// A statement is proven over the value's plaintext in ZK: the honest plan passes; a prover
/// that states a false claim about the same bytes, places the value on other bytes, or
/// claims hidden string bytes that hold a quote are content, is refused by the proof with
/// the statement's own error.
#[test]
fn a_statement_false_for_the_value_or_about_other_bytes_is_refused() {
    use crate::protocol::disclose::placement::place;
    use crate::protocol::disclose::statement::{Direction as DirectionOf, Statement};
    let s = run_session(Opts { response: Some(JSON_RESPONSE), ..Opts::default() });
    let plain = s.client.transcript().app_plaintext(Direction::Received);
    assert_eq!(plain, JSON_RESPONSE);
    let mut reveal = [all(&s)[0].clone(), vec![0..plain.len() as u64]];
    let stated = [Statement::parse("amount >= 1000").unwrap()];
    let (statements, [_, string_content_received]) =
        place([&[], &plain], &mut reveal, &[(DirectionOf::Received, 1, 0..plain.len(), &stated)]).unwrap();
    let [sent, received] = reveal;
    let plan = RevealPlan { sent, received, statements, string_content_received, ..Default::default() };
    let (used, honest) = run_plan(&s, ProofCheat::default(), &plan, &[]);
    honest.expect("the honest verifier");
    // what the statement costs: the same reveal without it, in committed bits (COTs)
    let unstated = RevealPlan { statements: vec![], string_content_received: vec![], ..plan.clone() };
    let (baseline, _) = run_plan(&s, ProofCheat::default(), &unstated, &[]);
    let cost = used.expect("the honest prover") - baseline.expect("the prover without the statement");
    println!("`amount >= 1000` on a 7-byte value: {cost} committed bits");
    assert!((1_770..8_000).contains(&cost), "{cost}");

    let mut false_claim = plan.clone();
    false_claim.statements[0].statement = Statement::parse("amount >= 2000").unwrap();
    let r = run_plan(&s, ProofCheat::default(), &false_claim, &[]).1;
    assert!(matches!(r, Err(ProofError::StatementNotProven(1))), "a false claim: {:?}", r.map(|_| ()));

    // the value placed one byte on, over its closing quote: not a number
    let mut moved = plan.clone();
    let v = moved.statements[0].value[0].clone();
    moved.statements[0].value = vec![v.start + 1..v.end + 1];
    let r = run_plan(&s, ProofCheat::default(), &moved, &[]).1;
    assert!(matches!(r, Err(ProofError::StatementNotProven(1))), "another place: {:?}", r.map(|_| ()));

    // the note's escaped quote hidden and claimed content
    let quote = plain.windows(2).position(|w| w == b"\\\"").unwrap() as u64 + 1;
    let mut smuggled = plan.clone();
    smuggled.string_content_received = [plan.string_content_received.clone(), vec![quote..quote + 1]].concat();
    smuggled.received = plan
        .received
        .iter()
        .flat_map(|r| if r.contains(&quote) { vec![r.start..quote, quote + 1..r.end] } else { vec![r.clone()] })
        .collect();
    let r = run_plan(&s, ProofCheat::default(), &smuggled, &[]).1;
    assert!(matches!(r, Err(ProofError::HiddenNotContent)), "a hidden quote: {:?}", r.map(|_| ()));
}

/// A JSON request whose transfer amount a statement is about.
const JSON_REQUEST: &[u8] =
    b"POST /transfer HTTP/1.1\r\nHost: localhost\r\nContent-Length: 35\r\n\r\n{\"transfer\":{\"amount\":250,\"to\":\"x\"}}";

/// A statement about the request is proven over the sent direction's plaintext in ZK, under
/// the client's write key, beside one about the response: the honest plan passes; a false
/// claim about either, or the request's value placed on other bytes, is refused with the
/// statement's place in the plan.
#[test]
fn a_statement_about_the_request_is_proven_under_the_clients_key() {
    use crate::protocol::disclose::placement::place;
    use crate::protocol::disclose::statement::{Direction as DirectionOf, Statement};
    let s = run_session(Opts { request: Some(JSON_REQUEST), response: Some(JSON_RESPONSE), ..Opts::default() });
    let sent = s.client.transcript().app_plaintext(Direction::Sent);
    let received = s.client.transcript().app_plaintext(Direction::Received);
    assert_eq!(sent, JSON_REQUEST);
    let mut reveal = [vec![0..sent.len() as u64], vec![0..received.len() as u64]];
    let request = [Statement::parse("transfer.amount <= 500").unwrap()];
    let response = [Statement::parse("amount >= 1000").unwrap()];
    let stated = [
        (DirectionOf::Sent, 1, 0..sent.len(), &request[..]),
        (DirectionOf::Received, 1, 0..received.len(), &response[..]),
    ];
    let (statements, [string_content_sent, string_content_received]) =
        place([&sent, &received], &mut reveal, &stated).unwrap();
    let [sent_reveal, received_reveal] = reveal;
    assert_eq!(sent_reveal.len(), 2, "the request's value is hidden: {sent_reveal:?}");
    let plan = RevealPlan {
        sent: sent_reveal,
        received: received_reveal,
        statements,
        string_content_sent,
        string_content_received,
        ..Default::default()
    };
    run_plan(&s, ProofCheat::default(), &plan, &[]).1.expect("the honest verifier");

    for (n, text) in [(1, "transfer.amount <= 100"), (2, "amount >= 2000")] {
        let mut false_claim = plan.clone();
        false_claim.statements[n - 1].statement = Statement::parse(text).unwrap();
        let r = run_plan(&s, ProofCheat::default(), &false_claim, &[]).1;
        assert!(matches!(r, Err(ProofError::StatementNotProven(k)) if k == n), "{text}: {:?}", r.map(|_| ()));
    }
    // the request's value placed one byte back, over the colon before it: not a number
    let mut moved = plan.clone();
    let v = moved.statements[0].value[0].clone();
    moved.statements[0].value = vec![v.start - 1..v.end - 1];
    moved.sent = vec![0..v.start - 1, v.end - 1..sent.len() as u64];
    let r = run_plan(&s, ProofCheat::default(), &moved, &[]).1;
    assert!(matches!(r, Err(ProofError::StatementNotProven(1))), "another place: {:?}", r.map(|_| ()));
}
