//! A cheating prover against the verifier's side of the proof, on real TLS sessions: the prover
//! opens a write key other than the one it derived in ZK (fast path), or claims a commitment
//! to a plaintext or with a digest other than the one the session's ciphertext and the
//! in-ZK SHA-256 give. The cheats are [`proof::ProofCheat`], test-only hooks in the prover's
//! side of `proof::run`; each test fails if the check it guards is removed.

use crate::channel::memory_pair;
use crate::protocol::messages::RevealPlan;
use crate::protocol::observe::tls12::tests::{run_session, Opts, Session};
use crate::protocol::observe::tls12::{self as transcript, SessionTranscript};
use crate::protocol::prove::tls12::check::recover;
use crate::protocol::prove::tls12::{self as proof, Opened, OpenedDirection, ProofCheat, PublicInputs};
use crate::tls::Direction;
use crate::zk::tests::ideal_parties;
use crate::zk::{Cheat, ProofError, MAX_MESSAGE};
use sha2::{Digest, Sha256};
use std::ops::Range;

/// Both sides of the proof for `s` with `reveal` and `commit` ranges per direction, the
/// prover cheating as `cheat` says; returns the verifier's result.
fn prove(
    s: &Session,
    cheat: ProofCheat,
    reveal: &[Vec<Range<u64>>; 2],
    commit: &[Vec<Range<u64>>; 2],
    blinders: &[[u8; 16]],
) -> Result<Opened, ProofError> {
    let t: SessionTranscript = transcript::parse(&s.sent, &s.received).unwrap();
    let plan = RevealPlan {
        sent: reveal[0].clone(),
        received: reveal[1].clone(),
        commit_sent: commit[0].clone(),
        commit_received: commit[1].clone(),
    };
    let inputs = PublicInputs::new(&t, &plan);
    let ms = s.client.master_secret().unwrap().0;
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    // Each side owns its channel end: one that fails drops it, and the other returns instead
    // of waiting for a message that will not come.
    let p = async {
        let mut a = a;
        proof::run(&mut prover, &mut a, Some(&ms), Some(blinders), &inputs, |cvd| t.server_finished_hash(cvd)).await
    };
    let v = async {
        let mut b = b;
        proof::run(&mut verifier, &mut b, None, None, &inputs, |cvd| t.server_finished_hash(cvd)).await
    };
    let (_, verified) = proof::with_cheat(cheat, || futures::executor::block_on(async { futures::join!(p, v) }));
    verified
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
