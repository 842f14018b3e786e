//! Several requests in one session, end to end natively: proxy mode over TLS 1.2 and 1.3 (each
//! request sent once the response before it is complete) and MPC mode (requests pipelined),
//! against the fixture through real WebSockets on 127.0.0.1.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::session::{config, modes_and_versions, run, Env};
use tlsproof::attestation::{AttestedExchange, Direction, Presentation, Scheme, SigningKey};
use tlsproof::fixture::http::JSON_BODY;
use tlsproof::http::RequestBuilder;
use tlsproof::protocol::disclose::exchange::MAX_EXCHANGES;
use tlsproof::protocol::messages::TlsVersion;
use tlsproof::protocol::prover::{ExchangePlan, ProverMode};
use tlsproof::protocol::{Reveal, RevealConfig};

/// The test bed, its verifier signing.
async fn env() -> Env {
    common::session::env(Some(std::sync::Arc::new(SigningKey::generate(Scheme::Ed25519)))).await
}

/// `POST /echo` with a JSON body (the connection kept open), then `GET /json` with a secret
/// token (and `Connection: close`).
fn two_requests(env: &Env, second: Reveal) -> Vec<ExchangePlan> {
    let host = env.server.as_str();
    let echo = RequestBuilder::new("POST", host, "/echo")
        .header("Connection", "keep-alive")
        .header("Content-Type", "application/json")
        .body(&b"{\"q\":1}"[..])
        .build()
        .unwrap()
        .bytes;
    let json = RequestBuilder::get(host, "/json").header("Authorization", "Bearer multi-secret").build().unwrap().bytes;
    vec![
        ExchangePlan { request: echo, reveal: RevealConfig::new(Reveal::All, Reveal::All) },
        ExchangePlan {
            request: json,
            reveal: RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), second),
        },
    ]
}

/// Both exchanges in the verdict, in order, each with its own reveal choices: the first whole,
/// the second's request without its token and its response with one JSON member alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_requests_in_one_session_in_both_modes_and_both_versions() {
    let mut env = env().await;
    for (mode, version) in modes_and_versions(&env) {
        let what = format!("{mode:?} {version:?}");
        let plans = two_requests(&env, Reveal::JsonFields(vec!["id".into()]));
        let out = match run(&env, config(&env, mode, version), plans.clone()).await {
            Ok(out) => out,
            Err(e) => panic!("{what}: {e}; verifier: {:?}", env.reports.recv().await),
        };
        let (_, report) = env.reports.recv().await.unwrap();
        let v = report.as_ref().map_err(|e| e.to_string()).unwrap();
        assert_eq!(*v, out.verified, "{what}: the prover holds the verifier's verdict");
        assert_eq!(v.exchanges.len(), 2, "{what}: {v}");
        let [first, second] = [&v.exchanges[0], &v.exchanges[1]];
        assert_eq!(first.request_line.as_deref(), Some("POST /echo HTTP/1.1"), "{what}");
        assert_eq!(second.request_line.as_deref(), Some("GET /json HTTP/1.1"), "{what}");
        assert_eq!((first.status, first.response_complete), (Some(200), Some(true)), "{what}");
        assert_eq!(second.status, None, "{what}: the second response's head is hidden");
        // each request and response where the prover's own bytes say
        let len0 = plans[0].request.len() as u64;
        assert_eq!((first.request.clone(), second.request.clone()), (0..len0, len0..v.sent.len), "{what}");
        let r0 = first.response.clone().unwrap();
        let body0 = &v.received.bytes[r0.start as usize..r0.end as usize];
        assert!(v.received.is_revealed(r0.clone()), "{what}: the first response whole");
        assert!(body0.ends_with(b"\r\n\r\n{\"q\":1}"), "{what}: the echo of the first body");
        let r1 = second.response.clone().unwrap();
        assert_eq!(r1.end, v.received.len, "{what}");
        let shown = String::from_utf8_lossy(&v.received.bytes[r1.start as usize..]).replace('\0', "");
        assert_eq!(shown, "\"id\":\"ACC-0042\"", "{what}: one member of the second response");
        let response = &out.response[r1.start as usize..];
        assert!(response.ends_with(JSON_BODY.as_bytes()), "{what}: the prover has it all");
        let sent = String::from_utf8_lossy(&v.sent.bytes);
        assert!(!sent.contains("multi-secret") && sent.contains("Authorization: "), "{what}: {sent}");
        let text = v.to_string();
        assert!(text.contains("request 1: POST /echo HTTP/1.1") && text.contains("request 2: GET /json"), "{text}");
        // the attestation states the exchanges, and a presentation shows the first response and
        // the member of the second that was revealed
        let session = out.attestation.expect("the verifier signs");
        let p = Presentation::build(
            &session.attestation,
            &session.secrets,
            &[(Direction::Received, r0.clone()), (Direction::Received, v.received.revealed.last().unwrap().clone())],
        )
        .unwrap();
        let shown = p.verify(&session.verifier_key).unwrap();
        let attested: Vec<AttestedExchange> = v
            .exchanges
            .iter()
            .map(|x| AttestedExchange { request: x.request.clone(), response: x.response.clone().unwrap() })
            .collect();
        assert_eq!(shown.attestation.exchanges, attested, "{what}");
        assert!(shown.disclosed[0].data.ends_with(b"{\"q\":1}"), "{what}");
        assert_eq!(shown.disclosed[1].data, b"\"id\":\"ACC-0042\"", "{what}");
        let listed = shown.to_string();
        assert!(listed.contains(&format!("exchange 2: request sent {len0}..{}", v.sent.len)), "{listed}");
    }
}

/// A response's extent is what pairs it with its request: a prover that hides the head of a
/// response that is not the last (so that bytes after it could pass for its answer) is refused
/// by the verifier, naming the exchange.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_before_the_last_with_its_head_hidden_is_refused() {
    let env = env().await;
    let mut plans = two_requests(&env, Reveal::All);
    plans[0].reveal.received = Reveal::HttpBody;
    let err = run(&env, config(&env, ProverMode::Proxy, TlsVersion::Tls12), plans).await.map(|_| ()).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.code(), "VERIFIER_REJECTED", "{text}");
    assert!(text.contains("HTTP exchange 1: its response's end is not shown"), "{text}");
}

/// A request with a line break in a hidden byte (a third request slipped into a header value)
/// is refused before the session; requests pipelined inside one plan are each counted, and
/// more than the verifier takes are refused by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slipped_and_surplus_requests_are_refused() {
    let env = env().await;
    let cfg = || config(&env, ProverMode::Proxy, TlsVersion::Tls12);
    let host = env.server.as_str();
    let slipped = format!(
        "GET /json HTTP/1.1\r\nHost: {host}\r\nX-Note: a\r\n\r\nGET /bytes?n=3 HTTP/1.1\r\nHost: {host}\r\n\r\n"
    );
    let note = slipped.find("a\r\n\r\nGET /bytes").unwrap();
    let hidden = Reveal::Ranges(vec![0..note, slipped.len() - 4..slipped.len()]);
    let plans = vec![ExchangePlan { request: slipped.into_bytes(), reveal: RevealConfig::new(hidden, Reveal::All) }];
    let err = run(&env, cfg(), plans).await.map(|_| ()).unwrap_err();
    assert_eq!(err.code(), "BAD_OPTIONS", "{err}");
    assert!(err.to_string().contains("is a line break"), "{err}");

    let get = RequestBuilder::get(host, "/bytes?n=3").header("Connection", "keep-alive").build().unwrap().bytes;
    let one = ExchangePlan { request: get.clone(), reveal: RevealConfig::new(Reveal::All, Reveal::All) };
    let err = run(&env, cfg(), vec![one.clone(); MAX_EXCHANGES + 1]).await.map(|_| ()).unwrap_err();
    assert_eq!(err.code(), "BAD_OPTIONS", "{err}");
    let err = run(&env, cfg(), vec![]).await.map(|_| ()).unwrap_err();
    assert_eq!(err.code(), "BAD_OPTIONS", "{err}");
    // 17 requests in one plan's bytes (pipelined): the verifier counts them itself
    let mut many = get.repeat(MAX_EXCHANGES);
    many.extend_from_slice(&RequestBuilder::get(host, "/bytes?n=3").build().unwrap().bytes);
    let plans = vec![ExchangePlan { request: many, reveal: RevealConfig::new(Reveal::All, Reveal::All) }];
    let err = run(&env, cfg(), plans).await.map(|_| ()).unwrap_err();
    assert!(err.to_string().contains(&format!("more than {MAX_EXCHANGES} requests in one session")), "{err}");
}
