//! Soundness of the proxy-mode proof on real TLS sessions: the prover and the verifier run the
//! shared proof over an in-memory channel (real KOS correlated OT), and a cheating prover or a
//! tampered record is rejected with a specific error.
#![cfg(not(target_arch = "wasm32"))]

use std::ops::Range;
use tlsproof::channel::memory_pair;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::ot::{KosReceiver, KosSender};
use tlsproof::protocol::observe::tls12::{self as transcript, EncryptedRecord};
use tlsproof::protocol::prove::tls12::check::{recover, CheckError};
use tlsproof::protocol::prove::tls12::{self as proof, Opened, PublicInputs};
use tlsproof::tls::{driver, unix_time, Client, ClientConfig, Direction, RootStore};
use tlsproof::zk::{ProofError, Prover, Verifier, MAX_MESSAGE};
use tokio_util::compat::TokioAsyncReadCompatExt;

struct Session {
    sent_raw: Vec<u8>,
    received_raw: Vec<u8>,
    ms: [u8; 48],
    sent_plain: Vec<u8>,
    received_plain: Vec<u8>,
}

async fn real_session(path: &str) -> Session {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let addr = fixture.local_addr().unwrap();
    let roots = RootStore::from_pem(&fixture.certs.ca_pem).unwrap();
    tokio::spawn(fixture.run());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut client = Client::new(ClientConfig::new(roots), "localhost", unix_time(now)).unwrap();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap().compat();
    let request = tlsproof::http::RequestBuilder::get("localhost", path)
        .header("Authorization", "Bearer s3cret")
        .build()
        .unwrap();
    driver::http_exchange(&mut client, &mut tcp, &request.bytes, Default::default()).await.unwrap();
    let t = client.transcript();
    Session {
        sent_raw: t.raw_bytes(Direction::Sent),
        received_raw: t.raw_bytes(Direction::Received),
        ms: client.master_secret().unwrap().0,
        sent_plain: t.app_plaintext(Direction::Sent),
        received_plain: t.app_plaintext(Direction::Received),
    }
}

/// What each side sees; the verifier's records and plan may differ from the prover's.
struct Views {
    prover_ms: [u8; 48],
    prover_records: [Vec<EncryptedRecord>; 2],
    prover_plan: [Vec<Range<u64>>; 2],
    verifier_records: [Vec<EncryptedRecord>; 2],
    verifier_plan: [Vec<Range<u64>>; 2],
}

impl Views {
    fn honest(s: &Session, plan: [Vec<Range<u64>>; 2]) -> Views {
        let t = transcript::parse(&s.sent_raw, &s.received_raw).unwrap();
        let records =
            [t.encrypted_records(Direction::Sent).to_vec(), t.encrypted_records(Direction::Received).to_vec()];
        Views {
            prover_ms: s.ms,
            prover_records: records.clone(),
            prover_plan: plan.clone(),
            verifier_records: records,
            verifier_plan: plan,
        }
    }
}

/// Runs both sides; returns the verifier's result (openings, then the checks' result).
fn prove(s: &Session, v: &Views) -> Result<(Opened, Result<[Vec<u8>; 2], CheckError>), ProofError> {
    let t = transcript::parse(&s.sent_raw, &s.received_raw).unwrap();
    let inputs = |records: &'_ [Vec<EncryptedRecord>; 2], plan: &'_ [Vec<Range<u64>>; 2]| -> PublicInputs<'static> {
        // Leak the small test vectors to get 'static borrows for the two futures.
        let records: &'static [Vec<EncryptedRecord>; 2] = Box::leak(Box::new(records.clone()));
        let plan: &'static [Vec<Range<u64>>; 2] = Box::leak(Box::new(plan.clone()));
        PublicInputs {
            suite: t.cipher_suite(),
            client_random: *t.client_random(),
            server_random: *t.server_random(),
            client_finished_hash: t.client_finished_hash(),
            sent: &records[0],
            received: &records[1],
            reveal_sent: &plan[0],
            reveal_received: &plan[1],
            commit_sent: &[],
            commit_received: &[],
            statements: Default::default(),
        }
    };
    let (pi, vi) = (inputs(&v.prover_records, &v.prover_plan), inputs(&v.verifier_records, &v.verifier_plan));
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let ms = v.prover_ms;
    let p = async move {
        let mut prover = Prover::new(KosReceiver::new());
        proof::run(&mut prover, &mut a, Some(&ms), Some(&[]), &pi, |cvd| t_hash(s, cvd)).await
    };
    let vf = async move {
        let mut verifier = Verifier::new(KosSender::new());
        proof::run(&mut verifier, &mut b, None, None, &vi, |cvd| t_hash(s, cvd)).await
    };
    let (_, opened) = futures::executor::block_on(async { futures::join!(p, vf) });
    let opened = opened?;
    let check = (|| {
        let sent = recover("sent", &v.verifier_records[0], &opened.sent, &v.verifier_plan[0])?;
        let received = recover("received", &v.verifier_records[1], &opened.received, &v.verifier_plan[1])?;
        Ok([sent.bytes, received.bytes])
    })();
    Ok((opened, check))
}

fn t_hash(s: &Session, cvd: &[u8; 12]) -> tlsproof::tls::HandshakeHash {
    transcript::parse(&s.sent_raw, &s.received_raw).unwrap().server_finished_hash(cvd)
}

fn hide_token(s: &Session) -> Vec<Range<u64>> {
    let at = s.sent_plain.windows(6).position(|w| w == b"s3cret").unwrap() as u64;
    vec![0..at, at + 6..s.sent_plain.len() as u64]
}

#[tokio::test]
async fn honest_prover_is_accepted_on_both_paths() {
    let s = real_session("/bytes?n=3000").await;
    let all_recv = vec![0..s.received_plain.len() as u64];
    let (opened, check) = prove(&s, &Views::honest(&s, [hide_token(&s), all_recv])).unwrap();
    let [sent, received] = check.unwrap();
    assert_eq!(received, s.received_plain, "fast path: everything");
    assert!(matches!(opened.received, proof::OpenedDirection::Key { .. }));
    let at = s.sent_plain.windows(6).position(|w| w == b"s3cret").unwrap();
    assert_eq!(&sent[..at], &s.sent_plain[..at]);
    assert_eq!(&sent[at..at + 6], &[0u8; 6], "hidden bytes stay hidden");
    assert_eq!(&sent[at + 6..], &s.sent_plain[at + 6..]);

    // ZK path for the response too, with a hole in the middle of a record.
    let (_, check) = prove(&s, &Views::honest(&s, [hide_token(&s), vec![0..100, 2000..2500]])).unwrap();
    let [_, received] = check.unwrap();
    assert_eq!(&received[..100], &s.received_plain[..100]);
    assert_eq!(&received[2000..2500], &s.received_plain[2000..2500]);
    assert!(received[100..2000].iter().all(|b| *b == 0));
}

#[tokio::test]
async fn wrong_master_secret_is_rejected() {
    let s = real_session("/json").await;
    let mut v = Views::honest(&s, [vec![0..s.sent_plain.len() as u64], vec![0..s.received_plain.len() as u64]]);
    v.prover_ms[7] ^= 1;
    let err = prove(&s, &v).expect_err("a wrong master secret must fail");
    assert!(matches!(err, ProofError::ConstantMismatch), "{err:?}");
}

#[tokio::test]
async fn altered_finished_record_is_rejected() {
    let s = real_session("/json").await;
    let mut v = Views::honest(&s, [vec![0..s.sent_plain.len() as u64], vec![0..s.received_plain.len() as u64]]);
    for records in [&mut v.prover_records[1], &mut v.verifier_records[1]] {
        records[0].ciphertext[5] ^= 0x40;
    }
    let err = prove(&s, &v).expect_err("an altered server Finished must fail");
    assert!(matches!(err, ProofError::ConstantMismatch), "{err:?}");
}

#[tokio::test]
async fn altered_ciphertext_or_tag_fails_the_tag_check() {
    let s = real_session("/bytes?n=2000").await;
    // Fast path (key opened): a flipped ciphertext byte in the verifier's record.
    let mut v = Views::honest(&s, [hide_token(&s), vec![0..s.received_plain.len() as u64]]);
    v.verifier_records[1][1].ciphertext[10] ^= 1;
    let (_, check) = prove(&s, &v).unwrap();
    assert_eq!(check.err(), Some(CheckError::BadTag { direction: "received", index: 1 }));
    // ZK path (H and E_K(J0) opened): a flipped tag byte in the verifier's request record.
    let mut v = Views::honest(&s, [hide_token(&s), vec![0..10]]);
    v.verifier_records[0][1].tag[0] ^= 0x80;
    let (_, check) = prove(&s, &v).unwrap();
    assert_eq!(check.err(), Some(CheckError::BadTag { direction: "sent", index: 1 }));
    // ZK path: a flipped ciphertext byte of the response.
    let mut v = Views::honest(&s, [hide_token(&s), vec![0..10]]);
    v.verifier_records[1][1].ciphertext[3] ^= 4;
    let (_, check) = prove(&s, &v).unwrap();
    assert_eq!(check.err(), Some(CheckError::BadTag { direction: "received", index: 1 }));
}

#[tokio::test]
async fn prover_opening_other_positions_is_rejected() {
    let s = real_session("/json").await;
    // The prover proves keystream for other bytes than the plan the verifier holds: its
    // openings cannot match the verifier's keys.
    let mut v = Views::honest(&s, [hide_token(&s), vec![0..40]]);
    v.prover_plan[1] = vec![1..41];
    let err = prove(&s, &v).expect_err("mismatched openings must fail");
    assert!(
        matches!(err, ProofError::OpeningMacMismatch | ProofError::ConstantMismatch | ProofError::Malformed(_)),
        "{err:?}"
    );
}
