//! Statements about hidden values of a JSON response and a JSON request, end to end natively
//! against the fixture's `/json` (whose `account.balance.amount` is `"1234.56"`) and
//! `POST /transfer`: proxy mode over TLS 1.2 and 1.3, and MPC mode, through real WebSockets on
//! 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::session::{config, env, modes_and_versions as cases, run, Env};
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::disclose::statement::StatementError;
use tlsproof::protocol::messages::TlsVersion;
use tlsproof::protocol::prover::{ExchangePlan, ProverMode};
use tlsproof::protocol::{Direction, ProverError, Reveal, RevealConfig, Statement, VerifierOutput};

const AMOUNT: &str = "1234.56";

/// `GET /json` (keep-alive unless `last`), the response revealed but for the stated values.
fn json_request(env: &Env, statements: &[&str], last: bool) -> ExchangePlan {
    json_request_to(env, "/json", statements, last)
}

fn json_request_to(env: &Env, path: &str, statements: &[&str], last: bool) -> ExchangePlan {
    let mut request = RequestBuilder::get(&env.server, path);
    if !last {
        request = request.header("Connection", "keep-alive");
    }
    let reveal = RevealConfig {
        statements: statements.iter().map(|s| Statement::parse(s).unwrap()).collect(),
        ..RevealConfig::new(Reveal::All, Reveal::All)
    };
    ExchangePlan { request: request.build().unwrap().bytes, reveal }
}

/// A numeric comparison and a set membership are proven about hidden values, which the
/// verifier never sees: not in its verdict's text, its JSON, nor the bytes it holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_about_hidden_values_are_proven_in_both_modes_and_versions() {
    let mut env = env(None).await;
    for (mode, version) in cases(&env) {
        let what = format!("{mode:?} {version:?}");
        let stated = ["account.balance.amount >= 1000", "account.balance.currency in {\"EUR\", \"USD\"}"];
        let plans = vec![json_request(&env, &stated, true)];
        let out = match run(&env, config(&env, mode, version), plans).await {
            Ok(out) => out,
            Err(e) => panic!("{what}: {e}; verifier: {:?}", env.reports.recv().await),
        };
        let (_, report) = env.reports.recv().await.unwrap();
        let v = report.as_ref().map_err(|e| e.to_string()).unwrap();
        assert_eq!(*v, out.verified, "{what}: the prover holds the verifier's verdict");
        assert_eq!(v.statements.len(), 2, "{what}: {v}");
        let texts: Vec<String> = v.statements.iter().map(|s| s.statement.to_string()).collect();
        assert_eq!(texts, stated, "{what}");
        assert!(v.statements.iter().all(|s| s.exchange == 1), "{what}");
        let at = out.response.windows(AMOUNT.len()).position(|w| w == AMOUNT.as_bytes()).unwrap() as u64;
        let head = (out.verified.received.len - out.response.len() as u64) + at;
        assert_eq!(v.statements[0].value, vec![head..head + AMOUNT.len() as u64], "{what}");
        let text = v.to_string();
        assert!(
            text.contains("statement about response 1: account.balance.amount >= 1000: proven; the value (7 bytes"),
            "{what}: {text}"
        );
        let json = serde_json::to_string(v).unwrap();
        for shown in [text, json, String::from_utf8_lossy(&v.received.bytes).into_owned(), v.summary()] {
            assert!(!shown.contains(AMOUNT), "{what}: the verifier saw the amount: {shown}");
            assert!(!shown.contains("\"EUR\"}"), "{what}: the verifier saw the currency");
        }
        assert!(!v.received.fast_path, "{what}: a hidden value leaves the fast path");
    }
}

/// A statement false for the server's value is refused by the prover before the proof, with
/// its own code; the verifier learns why (the path, not the value).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_false_statement_is_refused_by_the_prover_and_the_verifier_is_told() {
    let mut env = env(None).await;
    for (mode, version) in cases(&env) {
        let what = format!("{mode:?} {version:?}");
        let plans = vec![json_request(&env, &["account.balance.amount >= 2000"], true)];
        let e = run(&env, config(&env, mode, version), plans).await.err().expect("refused");
        assert!(matches!(e, ProverError::Statement(StatementError::False { .. })), "{what}: {e}");
        assert_eq!(e.code(), "STATEMENT_FALSE", "{what}");
        assert_eq!(
            e.to_string(),
            "statement: account.balance.amount: the statement is false for the value the server sent"
        );
        let (_, report) = env.reports.recv().await.unwrap();
        let refused = report.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.contains("the statement is false"), "{what}: {refused}");
        assert!(!refused.contains(AMOUNT), "{what}: {refused}");
    }
    // a path to no value, and a value of another form, are refused alike (BAD_OPTIONS)
    for (statement, error) in [("account.nothing >= 1", "no such member"), ("account.owner >= 1", "is not a number")] {
        let plans = vec![json_request(&env, &[statement], true)];
        let e = run(&env, config(&env, ProverMode::Proxy, TlsVersion::Tls13), plans).await.err().expect("refused");
        assert_eq!(e.code(), "BAD_OPTIONS", "{statement}: {e}");
        assert!(e.to_string().contains(error), "{statement}: {e}");
        assert!(!e.to_string().contains("Alice"), "{statement}: the error shows the hidden value: {e}");
        assert!(env.reports.recv().await.unwrap().1.is_err(), "{statement}: the verifier was told");
    }
}

/// With two exchanges, each statement names the response it was proven in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_statement_names_its_exchange() {
    let mut env = env(None).await;
    for (mode, version) in cases(&env) {
        let what = format!("{mode:?} {version:?}");
        let plans = vec![
            json_request(&env, &["account.id == \"ACC-0042\""], false),
            json_request(&env, &["account.balance.amount < 1234.57"], true),
        ];
        let out = match run(&env, config(&env, mode, version), plans).await {
            Ok(out) => out,
            Err(e) => panic!("{what}: {e}; verifier: {:?}", env.reports.recv().await),
        };
        env.reports.recv().await.unwrap().1.unwrap();
        let v = &out.verified;
        let exchanges: Vec<u64> = v.statements.iter().map(|s| s.exchange).collect();
        assert_eq!(exchanges, [1, 2], "{what}");
        for (s, x) in v.statements.iter().zip(&v.exchanges) {
            let response = x.response.clone().unwrap();
            assert!(s.value.iter().all(|r| response.start <= r.start && r.end <= response.end), "{what}");
        }
    }
}

/// A chunked body whose chunks split the value: the value's bytes are where the chunks' data
/// put them (two ranges around a chunk's framing), and the statement is proven over them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_split_by_chunked_framing_is_read_from_the_chunks_data() {
    let mut env = env(None).await;
    for (mode, version) in cases(&env) {
        let what = format!("{mode:?} {version:?}");
        let plans =
            vec![json_request_to(&env, "/json?chunk=7", &["account.balance.amount in [1234.5, 1234.56]"], true)];
        let out = match run(&env, config(&env, mode, version), plans).await {
            Ok(out) => out,
            Err(e) => panic!("{what}: {e}; verifier: {:?}", env.reports.recv().await),
        };
        env.reports.recv().await.unwrap().1.unwrap();
        let value = &out.verified.statements[0].value;
        assert_eq!(value.len(), 2, "{what}: {value:?}");
        assert_eq!(out.verified.statements[0].value_len(), 7, "{what}");
        let shown = out.verified.received.printable();
        assert!(
            !shown.contains("1234") && !shown.contains(".56") && shown.matches('█').count() == 7,
            "{what}: {shown}"
        );
    }
}

/// A verifier that signs attests the statements it verified: a presentation that discloses no
/// byte shows them, and one of the response's revealed ranges does not hold the value.
/// Runs `plans` in proxy mode over TLS 1.3 against `env`'s verifier, which signs with `key`:
/// the verdict, the prover's attested session and the attestation, verified under the
/// verifier's key.
async fn attested(
    env: &mut Env,
    plans: Vec<ExchangePlan>,
    key: &tlsproof::attestation::SigningKey,
) -> (VerifierOutput, tlsproof::protocol::disclose::attest::AttestedSession, tlsproof::attestation::Attestation) {
    let out = match run(env, config(env, ProverMode::Proxy, TlsVersion::Tls13), plans).await {
        Ok(out) => out,
        Err(e) => panic!("{e}; verifier: {:?}", env.reports.recv().await),
    };
    env.reports.recv().await.unwrap().1.unwrap();
    let session = out.attestation.expect("the verifier signs");
    let a = session.attestation.verify(&key.verifying_key()).unwrap();
    (out.verified, session, a)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_attestation_carries_the_statements_with_their_values_hidden() {
    use tlsproof::attestation::{Presentation, Scheme, SigningKey};
    let key = std::sync::Arc::new(SigningKey::generate(Scheme::Secp256k1));
    let mut env = env(Some(key.clone())).await;
    let stated = ["account.balance.amount >= 1000", "account.balance.currency in {\"EUR\", \"USD\"}"];
    let plans = vec![json_request(&env, &stated, true)];
    let (verified, session, a) = attested(&mut env, plans, &key).await;
    type Attested = (u8, Direction, String, Vec<std::ops::Range<u64>>);
    let attested: Vec<Attested> =
        a.statements.iter().map(|s| (s.exchange, s.direction, s.statement.to_string(), s.value.clone())).collect();
    let verdict: Vec<Attested> = verified
        .statements
        .iter()
        .map(|s| (s.exchange as u8, s.direction, s.statement.to_string(), s.value.clone()))
        .collect();
    assert_eq!(attested, verdict);
    assert_eq!(attested.iter().map(|s| s.2.as_str()).collect::<Vec<_>>(), stated);
    assert!(attested.iter().all(|s| s.1 == Direction::Received));
    let bare = Presentation::build(&session.attestation, &session.secrets, &[]).unwrap();
    let text = bare.verify(&key.verifying_key()).unwrap().to_string();
    assert!(
        text.contains("statement about response 1: account.balance.amount >= 1000: proven (value hidden, 7 bytes)"),
        "{text}"
    );
    // every revealed range of the response, disclosed: the values are not among them
    let revealed: Vec<_> = a.received.revealed.iter().map(|r| (Direction::Received, r.range.clone())).collect();
    let p = Presentation::build(&session.attestation, &session.secrets, &revealed).unwrap();
    let shown = p.verify(&key.verifying_key()).unwrap();
    assert!(shown.disclosed.iter().all(|d| !d.data.windows(AMOUNT.len()).any(|w| w == AMOUNT.as_bytes())));
}

/// The transfer a request states facts about: its amount `250.00`, its account number.
const TRANSFER: &str = r#"{"transfer":{"amount":"250.00","to":"DE89370400440532013000"}}"#;
const COOKIE: &str = "session=s3cr3t";

/// `POST /transfer` of [`TRANSFER`] with a cookie, which stays hidden, and statements about
/// the request's and the response's bodies.
fn transfer(env: &Env, request: &[&str], response: &[&str]) -> ExchangePlan {
    let parse = |s: &[&str]| s.iter().map(|s| Statement::parse(s).unwrap()).collect();
    let request_bytes = RequestBuilder::new("POST", &env.server, "/transfer")
        .header("Cookie", COOKIE)
        .header("Content-Type", "application/json")
        .body(TRANSFER)
        .build()
        .unwrap()
        .bytes;
    let reveal = RevealConfig {
        statements: parse(response),
        request_statements: parse(request),
        ..RevealConfig::new(Reveal::AllExceptHeaders(vec!["cookie".into()]), Reveal::All)
    };
    ExchangePlan { request: request_bytes, reveal }
}

/// Statements about the request's JSON body are proven beside one about the response's, the
/// request's values and cookie hidden from the verifier: its verdict names each statement's
/// message; a false one about the request is refused before the proof.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_about_a_request_body_are_proven_in_both_modes_and_versions() {
    let mut env = env(None).await;
    for (mode, version) in cases(&env) {
        let what = format!("{mode:?} {version:?}");
        let stated = ["transfer.amount <= 500", "transfer.to != \"DE00000000000000000000\""];
        let plans = vec![transfer(&env, &stated, &["status == \"accepted\""])];
        let out = match run(&env, config(&env, mode.clone(), version), plans).await {
            Ok(out) => out,
            Err(e) => panic!("{what}: {e}; verifier: {:?}", env.reports.recv().await),
        };
        let (_, report) = env.reports.recv().await.unwrap();
        let v = report.as_ref().map_err(|e| e.to_string()).unwrap();
        assert_eq!(*v, out.verified, "{what}");
        let seen: Vec<(Direction, String)> =
            v.statements.iter().map(|s| (s.direction, s.statement.to_string())).collect();
        assert_eq!(
            seen,
            [
                (Direction::Sent, stated[0].to_string()),
                (Direction::Sent, stated[1].to_string()),
                (Direction::Received, "status == \"accepted\"".to_string())
            ],
            "{what}"
        );
        let sent = String::from_utf8_lossy(&v.sent.bytes).into_owned();
        let at = sent.find("\"amount\":\"").unwrap() as u64 + 10;
        assert_eq!(v.statements[0].value, vec![at..at + 6], "{what}: the amount's place in the request");
        let text = v.to_string();
        assert!(
            text.contains(&format!(
                "statement about request 1: transfer.amount <= 500: proven; the value (6 bytes, sent bytes {at}..{})",
                at + 6
            )),
            "{what}: {text}"
        );
        assert!(text.contains("statement about response 1: status == \"accepted\": proven"), "{what}: {text}");
        let json = serde_json::to_string(v).unwrap();
        for shown in [text, json, sent, v.summary()] {
            for secret in ["250.00", "DE8937", "s3cr3t"] {
                assert!(!shown.contains(secret), "{what}: the verifier saw {secret}: {shown}");
            }
        }
        assert!(!v.sent.fast_path, "{what}");

        let plans = vec![transfer(&env, &["transfer.amount <= 100"], &[])];
        let e = run(&env, config(&env, mode, version), plans).await.err().expect("refused");
        assert_eq!(e.code(), "STATEMENT_FALSE", "{what}: {e}");
        assert_eq!(e.to_string(), "statement: transfer.amount: the statement is false for the value the request holds");
        assert!(env.reports.recv().await.unwrap().1.is_err(), "{what}: the verifier was told");
    }
}

/// A statement about the request's JSON body is attested with its direction: its value lies
/// in the request's bytes, and a presentation names it a statement about the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_attestation_names_a_request_statement_by_its_direction() {
    use tlsproof::attestation::{Presentation, Scheme, SigningKey};
    let key = std::sync::Arc::new(SigningKey::generate(Scheme::Ed25519));
    let mut env = env(Some(key.clone())).await;
    let request = RequestBuilder::new("POST", &env.server, "/echo")
        .header("Content-Type", "application/json")
        .body(&b"{\"q\":12}"[..]);
    // the echo would show the value: the response stays hidden
    let reveal = RevealConfig {
        request_statements: vec![Statement::parse("q <= 100").unwrap()],
        ..RevealConfig::new(Reveal::All, Reveal::Nothing)
    };
    let plans = vec![ExchangePlan { request: request.build().unwrap().bytes, reveal }];
    let (_, session, a) = attested(&mut env, plans, &key).await;
    assert_eq!(a.statements.len(), 1);
    let s = &a.statements[0];
    assert_eq!((s.exchange, s.direction, s.statement.to_string()), (1, Direction::Sent, "q <= 100".to_string()));
    let request = &a.exchanges[0].request;
    assert!(s.value.iter().all(|r| request.start <= r.start && r.end <= request.end), "{:?}", s.value);
    let value: Vec<u8> =
        s.value.iter().flat_map(|r| &session.secrets.sent[r.start as usize..r.end as usize]).copied().collect();
    assert_eq!(value, b"12");
    let bare = Presentation::build(&session.attestation, &session.secrets, &[]).unwrap();
    let text = bare.verify(&key.verifying_key()).unwrap().to_string();
    assert!(text.contains("statement about request 1: q <= 100: proven (value hidden, 2 bytes)\n"), "{text}");
}
