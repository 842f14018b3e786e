//! Browser tests (headless Chrome via `wasm-pack test`), run in a dedicated worker so rayon
//! may block. `npm test` starts the servers and passes their addresses at build time.
#![cfg(target_arch = "wasm32")]

mod zk_circuits;

use std::cell::Cell;
use tlsproof::transport::{TransportError, WsStream};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

thread_local! {
    static POOL_STARTED: Cell<bool> = const { Cell::new(false) };
}

async fn ensure_pool() {
    if !POOL_STARTED.get() {
        wasm_bindgen_futures::JsFuture::from(tlsproof::wasm::init_thread_pool(2)).await.expect("init_thread_pool(2)");
        POOL_STARTED.set(true);
    }
}

fn server(var: Option<&'static str>, name: &str) -> &'static str {
    var.unwrap_or_else(|| panic!("{name} was not set at build time; run the browser tests through `npm test`"))
}

fn proxy() -> &'static str {
    server(option_env!("TLSPROOF_TEST_PROXY"), "TLSPROOF_TEST_PROXY")
}

#[wasm_bindgen_test]
async fn rayon_pool_of_two_workers_computes_in_parallel() {
    ensure_pool().await;
    assert_eq!(rayon::current_num_threads(), 2);
    let n = 1_000_000u32;
    assert_eq!(tlsproof::wasm::parallel_sum(n), (n as f64) * (n as f64 - 1.0) / 2.0);
    // Work really spreads over both workers.
    use rayon::prelude::*;
    let ids: std::collections::BTreeSet<usize> = (0..64)
        .into_par_iter()
        .map(|_| {
            let mut x = 0u64;
            for i in 0..200_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
            std::hint::black_box(x);
            rayon::current_thread_index().unwrap_or(usize::MAX)
        })
        .collect();
    assert!(ids.iter().all(|i| *i < 2), "{ids:?}");
}

/// The engine's wasm AES is its own bitsliced SIMD128 code: it must equal the `aes` crate (and
/// FIPS-197) here, where it runs, on any batch length.
#[wasm_bindgen_test]
fn bitsliced_wasm_aes_matches_fips197_and_the_aes_crate() {
    use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
    let key = [0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c];
    let pt = [0x32, 0x43, 0xf6, 0xa8, 0x88, 0x5a, 0x30, 0x8d, 0x31, 0x31, 0x98, 0xa2, 0xe0, 0x37, 0x07, 0x34];
    let ct = [0x39, 0x25, 0x84, 0x1d, 0x02, 0xdc, 0x09, 0xfb, 0xdc, 0x11, 0x85, 0x97, 0x19, 0x6a, 0x0b, 0x32];
    let mut b = GenericArray::from(pt);
    tlsproof::primitives::prp::Aes128::new(GenericArray::from_slice(&key)).encrypt_block(&mut b);
    assert_eq!(b.as_slice(), &ct);
    for (len, seed) in [(1usize, 1u8), (8, 2), (13, 3), (64, 4)] {
        let key: [u8; 16] = core::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add(i as u8 * 7));
        let mut blocks: Vec<_> = (0..len)
            .map(|j| GenericArray::from(core::array::from_fn::<u8, 16, _>(|i| (j * 16 + i) as u8 ^ seed)))
            .collect();
        let mut want = blocks.clone();
        aes::Aes128::new(GenericArray::from_slice(&key)).encrypt_blocks(&mut want);
        tlsproof::primitives::prp::Aes128::new(GenericArray::from_slice(&key)).encrypt_blocks(&mut blocks);
        assert_eq!(blocks, want, "len {len}");
    }
}

/// Without a carry-less multiply, fixed combinations of many rows (the S-box embeddings) take
/// the bit-sliced four-Russians path with SIMD128 words: it must equal the inner products.
/// The field's carry-less multiplies run on SIMD128 here.
#[wasm_bindgen_test]
fn simd128_carry_less_multiply_matches_its_definition() {
    tlsproof::primitives::field::clmul_known_answers().unwrap();
}

/// The engine's ChaCha12 runs on SIMD128 registers here: RFC 8439's vectors in every lane.
#[wasm_bindgen_test]
fn simd128_chacha_matches_rfc8439() {
    tlsproof::primitives::prg::chacha_known_answers().unwrap();
}

#[wasm_bindgen_test]
async fn bitsliced_fixed_combinations_match_inner_products() {
    use tlsproof::primitives::field::{FixedCombinations, F128};
    ensure_pool().await;
    let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835u128;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        F128(x)
    };
    let sets = [[(); 8].map(|_| next()), [(); 8].map(|_| next())];
    let rows: Vec<[F128; 8]> = (0..300).map(|_| [(); 8].map(|_| next())).collect();
    let mut got = vec![[F128::ZERO; 2]; rows.len()];
    FixedCombinations::new(sets).combine(&rows, &mut got);
    for (row, g) in rows.iter().zip(&got) {
        assert_eq!(*g, [F128::inner_product(&sets[0], row), F128::inner_product(&sets[1], row)]);
    }
}

#[wasm_bindgen_test]
async fn websocket_stream_through_proxy_to_echo() {
    let echo = server(option_env!("TLSPROOF_TEST_ECHO"), "TLSPROOF_TEST_ECHO");
    let mut s = WsStream::connect(&format!("{}?target={echo}", proxy())).await.expect("connect");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
    s.write_all(&data).await.unwrap();
    s.shutdown_write().await.unwrap();
    let back = s.read_to_end(1 << 20).await.unwrap();
    assert_eq!(back.len(), data.len());
    assert!(back == data, "echoed bytes differ");
}

#[wasm_bindgen_test]
async fn proxy_refusal_reason_reaches_the_browser() {
    let mut s = WsStream::connect(&format!("{}?target=127.0.0.1:1", proxy())).await.expect("connect");
    let mut buf = [0u8; 8];
    match s.read(&mut buf).await {
        Err(TransportError::Closed { code, reason }) => {
            assert_eq!(code, 1008);
            assert!(reason.contains("the proxy refused: target 127.0.0.1:1 is not on the allow-list"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn exchange_with_the_fixture_gets_a_tls_server_hello() {
    // A minimal TLS 1.2 ClientHello; the fixture (rustls) must answer with a handshake record.
    let fixture = server(option_env!("TLSPROOF_TEST_FIXTURE"), "TLSPROOF_TEST_FIXTURE");
    let mut s = WsStream::connect(&format!("{}?target={fixture}", proxy())).await.expect("connect");
    s.write_all(&minimal_client_hello()).await.unwrap();
    let mut head = [0u8; 5];
    let mut got = 0;
    while got < 5 {
        let n = s.read(&mut head[got..]).await.unwrap();
        assert!(n > 0, "fixture closed before answering");
        got += n;
    }
    assert_eq!(head[0], 22, "expected a handshake record, got {head:?}");
    assert_eq!(&head[1..3], &[3, 3]);
}

#[wasm_bindgen_test]
async fn our_tls_client_in_wasm_fetches_json_through_proxy() {
    let fixture = server(option_env!("TLSPROOF_TEST_FIXTURE"), "TLSPROOF_TEST_FIXTURE");
    let ca = server(option_env!("TLSPROOF_TEST_CA"), "TLSPROOF_TEST_CA");
    let request = tlsproof::http::RequestBuilder::get("localhost", "/json").build().unwrap();
    let resp = tlsproof::wasm::fetch_https_via_proxy(
        proxy().into(),
        fixture.into(),
        "localhost".into(),
        ca.into(),
        request.bytes,
    )
    .await
    .unwrap_or_else(|e| panic!("fetch failed: {:?}", wasm_bindgen::JsValue::from(e)));
    let text = String::from_utf8(resp).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(text.contains(r#""owner":"Alice Example""#), "{text}");
}

#[wasm_bindgen_test]
async fn wasm_tls_client_rejects_a_wrong_server_name() {
    let fixture = server(option_env!("TLSPROOF_TEST_FIXTURE"), "TLSPROOF_TEST_FIXTURE");
    let ca = server(option_env!("TLSPROOF_TEST_CA"), "TLSPROOF_TEST_CA");
    let request = tlsproof::http::RequestBuilder::get("bank.example", "/json").build().unwrap();
    let err = tlsproof::wasm::fetch_https_via_proxy(
        proxy().into(),
        fixture.into(),
        "bank.example".into(),
        ca.into(),
        request.bytes,
    )
    .await
    .expect_err("a certificate for localhost must not pass for bank.example");
    let msg = format!("{:?}", wasm_bindgen::JsValue::from(err));
    assert!(msg.to_lowercase().contains("certificate"), "{msg}");
}

fn minimal_client_hello() -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend_from_slice(&[7u8; 32]); // random
    body.push(0); // session id
    body.extend_from_slice(&[0, 2, 0xc0, 0x2b]); // ECDHE-ECDSA-AES128-GCM-SHA256
    body.extend_from_slice(&[1, 0]); // null compression
    let ext: Vec<u8> = [
        &[0x00, 0x0a, 0, 4, 0, 2, 0, 23][..], // supported_groups: secp256r1
        &[0x00, 0x0b, 0, 2, 1, 0][..],        // ec_point_formats
        &[0x00, 0x0d, 0, 4, 0, 2, 4, 3][..],  // signature_algorithms: ecdsa_secp256r1_sha256
        &[0xff, 0x01, 0, 1, 0][..],           // renegotiation_info
    ]
    .concat();
    body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    body.extend_from_slice(&ext);
    let mut hs = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
    hs.extend_from_slice(&body);
    let mut rec = vec![22, 3, 1, (hs.len() >> 8) as u8, hs.len() as u8];
    rec.extend_from_slice(&hs);
    rec
}

#[wasm_bindgen_test]
async fn zk_keystream_and_prf_proofs_pass_in_the_browser() {
    ensure_pool().await;
    let key: [u8; 16] = *b"0123456789abcdef";
    let (salt, explicit) = ([1u8, 2, 3, 4], [9u8; 8]);
    let (indices, positions) = ([0u32, 5], [0usize, 7, 15]);
    let (p, v) = zk_circuits::prove(
        |b| zk_circuits::keystream_circuit(b, Some(&key), Some(&salt), &explicit, &indices, &positions),
        |b| zk_circuits::keystream_circuit(b, None, None, &explicit, &indices, &positions),
    )
    .await;
    let expected = zk_circuits::reference_keystream(&key, &salt, &explicit, &indices, &positions);
    assert_eq!(v.expect("verifier accepts the keystream proof"), expected);
    assert_eq!(p.unwrap(), expected);

    let ms = [7u8; 48];
    let (cr, sr, hc) = ([1u8; 32], [2u8; 32], [3u8; 32]);
    let (p, v) = zk_circuits::prove(
        |b| zk_circuits::prf_circuit(b, Some(&ms), &cr, &sr, &hc),
        |b| zk_circuits::prf_circuit(b, None, &cr, &sr, &hc),
    )
    .await;
    let (kb, vd) = v.expect("verifier accepts the PRF proof");
    assert_eq!(p.unwrap(), (kb.clone(), vd.clone()));
    let ms = tlsproof::tls::keys::MasterSecret(ms);
    let reference = tlsproof::tls::keys::key_block(&ms, &cr, &sr);
    assert_eq!(&kb[16..32], &reference.server_write_key);
    assert_eq!(vd, tlsproof::tls::keys::verify_data(&ms, b"client finished", &hc));
}

fn verifier() -> &'static str {
    server(option_env!("TLSPROOF_TEST_VERIFIER"), "TLSPROOF_TEST_VERIFIER")
}

/// Options for the local fixture's `path`, plus `extra` fields, as the plain JS object a page
/// would pass.
fn options(path: &str, extra: serde_json::Value) -> wasm_bindgen::JsValue {
    let fixture = server(option_env!("TLSPROOF_TEST_FIXTURE"), "TLSPROOF_TEST_FIXTURE");
    let ca = server(option_env!("TLSPROOF_TEST_CA"), "TLSPROOF_TEST_CA");
    let mut o = serde_json::json!({
        "verifierUrl": verifier(),
        "url": format!("https://{fixture}{path}"),
        "caPem": ca,
        "headers": {"Authorization": "Bearer browser-secret", "Accept": "*/*"},
    });
    for (k, v) in extra.as_object().expect("extra options are an object") {
        o[k] = v.clone();
    }
    js_sys::JSON::parse(&o.to_string()).expect("options are JSON")
}

/// The result object as JSON (its Uint8Arrays become index maps, which these tests ignore).
fn as_json(v: &wasm_bindgen::JsValue) -> serde_json::Value {
    serde_json::from_str(&String::from(js_sys::JSON::stringify(v).expect("stringify"))).expect("result is JSON")
}

fn error_code(e: &wasm_bindgen::JsValue) -> String {
    let code = js_sys::Reflect::get(e, &"code".into()).ok().and_then(|c| c.as_string());
    let message = js_sys::Reflect::get(e, &"message".into()).ok().and_then(|c| c.as_string());
    format!("{}: {}", code.unwrap_or_default(), message.unwrap_or_default())
}

async fn notarize(options: wasm_bindgen::JsValue) -> Result<serde_json::Value, String> {
    tlsproof::wasm::notarize(options, None, None).await.map(|v| as_json(&v)).map_err(|e| error_code(&e))
}

#[wasm_bindgen_test]
async fn notarize_api_fast_path_redacted_and_json_fields() {
    ensure_pool().await;
    // Everything revealed: both directions take the fast path.
    let all = serde_json::json!({"reveal": {"sent": "all", "recv": "all"}});
    let v = notarize(options("/bytes?n=2048", all)).await.unwrap_or_else(|e| panic!("fast path: {e}"));
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("fast"), Some("fast")), "{v}");
    assert_eq!(v["sent"]["hidden"], serde_json::json!([]));
    assert!(v["sent"]["printable"].as_str().unwrap().contains("Bearer browser-secret"));
    assert!(v["recv"]["printable"].as_str().unwrap().contains("abcdefghijklmnopqrstuvwxyz"));
    assert!(v["timings"]["totalMs"].as_f64().unwrap() > 0.0 && v["bytes"]["proverToVerifier"].as_u64().unwrap() > 0);

    // The default reveal hides Authorization; the body alone takes the ZK path.
    let body = serde_json::json!({"reveal": {"recv": "body"}});
    let v = notarize(options("/bytes?n=2048", body)).await.unwrap_or_else(|e| panic!("redacted: {e}"));
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("zk")), "{v}");
    let sent = v["sent"]["printable"].as_str().unwrap();
    assert!(sent.contains("Authorization: █") && !sent.contains("browser-secret"), "{sent}");
    assert_eq!(v["sent"]["hidden"].as_array().unwrap().len(), 1);
    let recv = v["recv"]["printable"].as_str().unwrap();
    assert!(recv.starts_with('█') && recv.contains("abcdefghijklmnopqrstuvwxyz"), "{recv}");

    // JSON fields, through a Prover with defaults, reporting progress.
    let prover = tlsproof::wasm::Prover::new(options("/json", serde_json::json!({}))).expect("prover");
    let phases = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let seen = phases.clone();
    let on_progress =
        wasm_bindgen::closure::Closure::<dyn Fn(wasm_bindgen::JsValue)>::new(move |p: wasm_bindgen::JsValue| {
            let phase = js_sys::Reflect::get(&p, &"phase".into()).unwrap().as_string().unwrap();
            let fraction = js_sys::Reflect::get(&p, &"fraction".into()).unwrap().as_f64().unwrap();
            assert!((0.0..=1.0).contains(&fraction));
            seen.borrow_mut().push(phase);
        });
    use wasm_bindgen::JsCast;
    let json = js_sys::JSON::parse(r#"{"reveal": {"recv": {"jsonFields": ["owner"]}}}"#).unwrap();
    let promise = prover.notarize(json, Some(on_progress.as_ref().unchecked_ref::<js_sys::Function>().clone()), None);
    let v = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|v| as_json(&v))
        .unwrap_or_else(|e| panic!("json fields: {}", error_code(&e)));
    let recv = v["recv"]["printable"].as_str().unwrap();
    assert!(
        recv.contains(r#""owner":"Alice Example""#) && !recv.contains("ACC-0042") && !recv.contains("1234.56"),
        "{recv}"
    );
    assert_eq!(v["recv"]["revealed"].as_array().unwrap().len(), 1);
    let phases = phases.borrow().clone();
    assert_eq!(phases.first().map(String::as_str), Some("connect"), "{phases:?}");
    assert_eq!(phases.last().map(String::as_str), Some("done"), "{phases:?}");
    for p in ["preprocess", "request", "prove"] {
        assert!(phases.iter().any(|x| x == p), "{p} missing from {phases:?}");
    }
}

#[wasm_bindgen_test]
async fn notarize_api_over_tls13_with_the_fast_path_redacted_and_aes256() {
    ensure_pool().await;
    // The default reveal: the token hidden (ZK path), the response whole (the fast path).
    let tls13 = serde_json::json!({"tls": {"versions": ["1.3"]}});
    let v =
        notarize(options("/bytes?n=2048", tls13.clone())).await.unwrap_or_else(|e| panic!("TLS 1.3 fast path: {e}"));
    assert_eq!(
        v["tls"],
        serde_json::json!({"version": "1.3", "cipherSuite": "TLS_AES_128_GCM_SHA256", "group": "x25519"}),
        "{v}"
    );
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("fast")), "{v}");
    let sent = v["sent"]["printable"].as_str().unwrap();
    assert!(sent.contains("Authorization: █") && !sent.contains("browser-secret"), "{sent}");
    assert!(v["recv"]["printable"].as_str().unwrap().contains("abcdefghijklmnopqrstuvwxyz"));
    assert_eq!(
        (v["sent"]["ending"].as_str(), v["recv"]["ending"].as_str()),
        (Some("close_notify"), Some("close_notify"))
    );
    assert_eq!(v["exchanges"][0]["status"].as_u64(), Some(200));

    // The body alone: the response by the ZK path; both versions offered, the server chooses 1.3.
    let mut body = tls13;
    body["reveal"] = serde_json::json!({"recv": "body"});
    body["tls"] = serde_json::json!({"versions": ["1.2", "1.3"]});
    let v = notarize(options("/bytes?n=2048", body)).await.unwrap_or_else(|e| panic!("TLS 1.3 redacted: {e}"));
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("zk")), "{v}");
    let recv = v["recv"]["printable"].as_str().unwrap();
    assert!(recv.starts_with('█') && recv.contains("abcdefghijklmnopqrstuvwxyz"), "{recv}");
    assert_eq!(v["tls"]["version"].as_str(), Some("1.3"));

    // TLS_AES_256_GCM_SHA384 alone offered: the derivation on SHA-384, both directions over
    // AES-256 blocks in ZK.
    let aes256 = serde_json::json!({"tls": {"versions": ["1.3"], "cipherSuites": ["TLS_AES_256_GCM_SHA384"]}, "reveal": {"recv": "body"}});
    let v = notarize(options("/bytes?n=2048", aes256)).await.unwrap_or_else(|e| panic!("TLS 1.3 AES-256: {e}"));
    assert_eq!(v["tls"]["cipherSuite"].as_str(), Some("TLS_AES_256_GCM_SHA384"), "{v}");
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("zk")), "{v}");
    let recv = v["recv"]["printable"].as_str().unwrap();
    assert!(recv.starts_with('█') && recv.contains("abcdefghijklmnopqrstuvwxyz"), "{recv}");
}

/// The verifier of `npm test` signs: the result carries its attestation, which presents a
/// committed JSON field the verifier never saw, checked in wasm against its published key.
#[wasm_bindgen_test]
async fn notarize_api_returns_an_attestation_that_opens_a_committed_field() {
    use tlsproof::attestation::{Attestation, Direction, Presentation, VerifyingKey};
    ensure_pool().await;
    let key: VerifyingKey = server(option_env!("TLSPROOF_TEST_VERIFIER_KEY"), "TLSPROOF_TEST_VERIFIER_KEY")
        .parse()
        .expect("a verifier key");
    let pinned = server(option_env!("TLSPROOF_TEST_VERIFIER_KEY"), "TLSPROOF_TEST_VERIFIER_KEY");
    let reveal = serde_json::json!({"reveal": {"recv": {"jsonFields": ["owner"]}, "commitRecv": {"jsonFields": ["balance"]}}, "verifierKey": pinned});
    let v = notarize(options("/json", reveal)).await.unwrap_or_else(|e| panic!("committed field: {e}"));
    let recv = v["recv"]["printable"].as_str().unwrap();
    assert!(recv.contains(r#""owner":"Alice Example""#) && !recv.contains("1234.56"), "{recv}");
    assert_eq!(v["commitments"].as_array().map(Vec::len), Some(1), "{v}");
    let session: tlsproof::protocol::disclose::attest::AttestedSession =
        serde_json::from_value(v["attestation"].clone()).expect("result.attestation");
    assert_eq!(session.verifier_key, key);
    let (_, attested) = Attestation::decode(&session.attestation.data).unwrap();
    let balance = attested.received.committed[0].range.clone();
    let p = Presentation::build(&session.attestation, &session.secrets, &[(Direction::Received, balance)]).unwrap();
    let shown = p.verify(&key).expect("the presentation verifies");
    let field = String::from_utf8(shown.disclosed[0].data.clone()).unwrap();
    assert!(field.contains("1234.56") && !shown.disclosed[0].revealed_to_verifier, "{field}");
    // pinned to another verifier key, the same session fails
    let other = serde_json::json!({"verifierKey": "secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf"});
    let e = notarize(options("/json", other)).await.expect_err("another verifier key");
    assert!(e.starts_with("BAD_ATTESTATION: the verifier signed with"), "{e}");
}

#[wasm_bindgen_test]
async fn notarize_api_in_mpc_mode_through_the_proxy_with_the_fast_path_and_redacted() {
    ensure_pool().await;
    let proxy = proxy();
    // The default reveal: the token hidden, the response whole (the fast path).
    let mpc = serde_json::json!({"mode": "mpc", "proxyUrl": proxy});
    let v = notarize(options("/bytes?n=1024", mpc.clone())).await.unwrap_or_else(|e| panic!("mpc fast path: {e}"));
    assert_eq!(v["mode"].as_str(), Some("mpc"), "{v}");
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("fast")), "{v}");
    let sent = v["sent"]["printable"].as_str().unwrap();
    assert!(sent.contains("Authorization: █") && !sent.contains("browser-secret"), "{sent}");
    assert!(v["recv"]["printable"].as_str().unwrap().contains("abcdefghijklmnopqrstuvwxyz"));
    assert_eq!(
        (v["sent"]["ending"].as_str(), v["recv"]["ending"].as_str()),
        (Some("close_notify"), Some("close_notify"))
    );

    // The body alone: the response by the ZK path, from a server that keeps the connection
    // open after it (the prover ends it once the server has been silent).
    let mut body = mpc;
    body["reveal"] = serde_json::json!({"recv": "body"});
    let v = notarize(options("/bytes?n=1024&end=hold", body)).await.unwrap_or_else(|e| panic!("mpc redacted: {e}"));
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("zk")), "{v}");
    assert!(v["recv"]["printable"].as_str().unwrap().starts_with('█'));
    assert_eq!(v["recv"]["ending"].as_str(), Some("open"), "{v}");
}

/// TLS 1.3 in MPC mode from the browser: the token hidden, the response by the fast path under
/// the suite offered first (ChaCha20-Poly1305), then with TLS_AES_128_GCM_SHA256 alone and the
/// response's body alone revealed (the ZK path); the verdict names TLS 1.3 and the suite.
#[wasm_bindgen_test]
async fn notarize_api_in_mpc_mode_over_tls13() {
    ensure_pool().await;
    let mut mpc = serde_json::json!({"mode": "mpc", "proxyUrl": proxy(), "tls": {"versions": ["1.3"]}});
    let v = notarize(options("/bytes?n=1024", mpc.clone())).await.unwrap_or_else(|e| panic!("mpc 1.3: {e}"));
    assert_eq!((v["mode"].as_str(), v["tls"]["version"].as_str()), (Some("mpc"), Some("1.3")), "{v}");
    assert_eq!(v["tls"]["cipherSuite"].as_str(), Some("TLS_CHACHA20_POLY1305_SHA256"), "{v}");
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("fast")), "{v}");
    let sent = v["sent"]["printable"].as_str().unwrap();
    assert!(sent.contains("Authorization: █") && !sent.contains("browser-secret"), "{sent}");
    mpc["reveal"] = serde_json::json!({"recv": "body"});
    mpc["tls"]["cipherSuites"] = serde_json::json!(["TLS_AES_128_GCM_SHA256"]);
    let v = notarize(options("/bytes?n=1024", mpc)).await.unwrap_or_else(|e| panic!("mpc 1.3 redacted: {e}"));
    assert_eq!(v["tls"]["cipherSuite"].as_str(), Some("TLS_AES_128_GCM_SHA256"), "{v}");
    assert_eq!((v["sent"]["path"].as_str(), v["recv"]["path"].as_str()), (Some("zk"), Some("zk")), "{v}");
    assert!(v["recv"]["printable"].as_str().unwrap().starts_with('█'));
}

/// TLS 1.3 in MPC mode from the browser through `tlsproof proxy` to OpenSSL's s_server, which
/// takes ChaCha20-Poly1305 and P-256 only: the prover's X25519 share gets a HelloRetryRequest,
/// the parties' P-256 share goes in the second ClientHello, and the verdict names both.
#[wasm_bindgen_test]
async fn notarize_api_in_mpc_mode_against_openssl_over_tls13() {
    ensure_pool().await;
    let openssl = server(option_env!("TLSPROOF_TEST_OPENSSL"), "TLSPROOF_TEST_OPENSSL");
    let ca = server(option_env!("TLSPROOF_TEST_OPENSSL_CA"), "TLSPROOF_TEST_OPENSSL_CA");
    let o = serde_json::json!({
        "verifierUrl": verifier(),
        "url": format!("https://{openssl}/"),
        "caPem": ca,
        "headers": {"Authorization": "Bearer browser-secret"},
        "mode": "mpc",
        "proxyUrl": proxy(),
        "tls": {"versions": ["1.3"]},
    });
    let o = js_sys::JSON::parse(&o.to_string()).expect("options are JSON");
    let v = notarize(o).await.unwrap_or_else(|e| panic!("mpc 1.3 against openssl: {e}"));
    assert_eq!((v["tls"]["version"].as_str(), v["tls"]["group"].as_str()), (Some("1.3"), Some("secp256r1")), "{v}");
    assert_eq!(v["tls"]["cipherSuite"].as_str(), Some("TLS_CHACHA20_POLY1305_SHA256"), "{v}");
    assert_eq!(v["exchanges"][0]["status"].as_u64(), Some(200), "{v}");
    let sent = v["sent"]["printable"].as_str().unwrap();
    assert!(sent.contains("Authorization: █") && !sent.contains("browser-secret"), "{sent}");
}

/// A statement about a hidden value from the browser, in both modes: the fixture's amount is
/// proven at least 1000 and never reaches the verifier; a false statement rejects with
/// `STATEMENT_FALSE`; a statement about the request's JSON body (`POST /transfer`) is proven
/// with the request's amount hidden.
#[wasm_bindgen_test]
async fn a_statement_about_a_hidden_value_is_proven_in_both_modes() {
    ensure_pool().await;
    for mode in [serde_json::json!({}), serde_json::json!({"mode": "mpc", "proxyUrl": proxy()})] {
        let mut o = mode.clone();
        o["reveal"] = serde_json::json!({"prove": ["account.balance.amount >= 1000"]});
        let v = notarize(options("/json", o.clone())).await.unwrap_or_else(|e| panic!("{mode}: {e}"));
        let s = v["statements"].as_array().unwrap_or_else(|| panic!("{v}"));
        assert_eq!(s.len(), 1, "{v}");
        assert_eq!(s[0]["statement"].as_str(), Some("account.balance.amount >= 1000"), "{v}");
        assert_eq!(s[0]["exchange"].as_u64(), Some(1), "{v}");
        let value = &s[0]["value"][0];
        assert_eq!(value["end"].as_u64().unwrap() - value["start"].as_u64().unwrap(), 7, "{v}");
        let recv = v["recv"]["printable"].as_str().unwrap();
        assert!(recv.contains(r#""amount":"███████""#) && !recv.contains("1234.56"), "{recv}");
        assert_eq!(v["recv"]["path"].as_str(), Some("zk"), "{v}");
        o["reveal"] = serde_json::json!({"prove": ["account.balance.amount >= 2000"]});
        let e = notarize(options("/json", o)).await.expect_err("a false statement");
        assert!(
            e.starts_with("STATEMENT_FALSE: statement: account.balance.amount: the statement is false"),
            "{mode}: {e}"
        );
        let mut o = mode.clone();
        o["method"] = "POST".into();
        o["body"] = r#"{"transfer":{"amount":"250.00","to":"DE89"}}"#.into();
        o["reveal"] = serde_json::json!({"proveRequest": ["transfer.amount <= 500"]});
        let v = notarize(options("/transfer", o)).await.unwrap_or_else(|e| panic!("{mode}: {e}"));
        let s = &v["statements"][0];
        assert_eq!((s["direction"].as_str(), s["statement"].as_str()), (Some("sent"), Some("transfer.amount <= 500")));
        let sent = v["sent"]["printable"].as_str().unwrap();
        assert!(sent.contains(r#""amount":"██████""#) && !sent.contains("250.00"), "{sent}");
    }
}

/// Two requests in one session from the browser, in both modes: `POST /echo` revealed whole,
/// then `GET /json` with its token and all but one member of its response hidden; the result
/// lists both exchanges where they are in each direction.
#[wasm_bindgen_test]
async fn two_requests_in_one_session_in_both_modes() {
    ensure_pool().await;
    let fixture = server(option_env!("TLSPROOF_TEST_FIXTURE"), "TLSPROOF_TEST_FIXTURE");
    let ca = server(option_env!("TLSPROOF_TEST_CA"), "TLSPROOF_TEST_CA");
    for mode in [serde_json::json!({}), serde_json::json!({"mode": "mpc", "proxyUrl": proxy()})] {
        let mut o = serde_json::json!({
            "verifierUrl": verifier(),
            "caPem": ca,
            "requests": [
                {"url": format!("https://{fixture}/echo"), "method": "POST", "body": "{\"q\":1}",
                 "reveal": {"sent": "all", "recv": "all"}},
                {"path": "/json", "headers": {"Authorization": "Bearer browser-secret"},
                 "reveal": {"recv": {"jsonFields": ["id"]}}},
            ],
        });
        for (k, v) in mode.as_object().unwrap() {
            o[k] = v.clone();
        }
        let options = js_sys::JSON::parse(&o.to_string()).unwrap();
        let v = notarize(options).await.unwrap_or_else(|e| panic!("{mode}: {e}"));
        let x = v["exchanges"].as_array().unwrap_or_else(|| panic!("{v}"));
        assert_eq!(x.len(), 2, "{v}");
        assert_eq!(x[0]["requestLine"].as_str(), Some("POST /echo HTTP/1.1"), "{v}");
        assert_eq!(x[1]["requestLine"].as_str(), Some("GET /json HTTP/1.1"), "{v}");
        assert_eq!((x[0]["status"].as_u64(), x[0]["responseComplete"].as_bool()), (Some(200), Some(true)), "{v}");
        assert_eq!(x[1]["status"], serde_json::Value::Null, "{v}");
        assert_eq!(x[0]["request"]["end"], x[1]["request"]["start"], "{v}");
        assert_eq!(x[0]["response"]["end"], x[1]["response"]["start"], "{v}");
        let sent = v["sent"]["printable"].as_str().unwrap();
        assert!(sent.contains("Connection: keep-alive") && !sent.contains("browser-secret"), "{sent}");
        let recv = v["recv"]["printable"].as_str().unwrap();
        assert!(recv.contains("{\"q\":1}") && recv.contains("█\"id\":\"ACC-0042\"█"), "{recv}");
        assert!(!recv.contains("Alice") && recv.ends_with('█'), "{recv}");
    }
    // top-level request options beside `requests` are refused
    let both = serde_json::json!({"verifierUrl": verifier(), "url": format!("https://{fixture}/json"),
        "requests": [{"path": "/json"}]});
    let e = notarize(js_sys::JSON::parse(&both.to_string()).unwrap()).await.expect_err("url beside requests");
    assert!(e.starts_with("BAD_OPTIONS: with requests, give url per request"), "{e}");
}

/// On the fast path the response's size stops mattering in the browser too: 16 MB in proxy
/// and in MPC mode (the test verifier allows `--max-recv 16 MiB`). The result is read field
/// by field: as JSON its bytes would be an index map of 16 million entries.
#[wasm_bindgen_test]
async fn a_16_mb_response_on_the_fast_path_is_verified_in_both_modes() {
    ensure_pool().await;
    let get = |v: &wasm_bindgen::JsValue, path: &[&str]| {
        path.iter().fold(v.clone(), |o, k| js_sys::Reflect::get(&o, &(*k).into()).expect("a field"))
    };
    for extra in [serde_json::json!({}), serde_json::json!({"mode": "mpc", "proxyUrl": proxy()})] {
        let mut o = extra.clone();
        o["maxRecvBytes"] = serde_json::json!(16 << 20);
        let v = tlsproof::wasm::notarize(options("/bytes?n=16000000", o), None, None)
            .await
            .unwrap_or_else(|e| panic!("16 MB, {extra}: {}", error_code(&e)));
        assert_eq!(get(&v, &["recv", "path"]).as_string().as_deref(), Some("fast"), "{extra}");
        let len = get(&v, &["recv", "length"]).as_f64().unwrap();
        assert!(len > 16e6 && get(&v, &["recv", "bytes", "length"]).as_f64() == Some(len), "{extra}: {len}");
        let bytes = js_sys::Uint8Array::from(get(&v, &["recv", "bytes"]));
        let tail = bytes.subarray(len as u32 - 26, len as u32).to_vec();
        assert!(tail.iter().all(|b| b.is_ascii_graphic()), "{extra}: the body's last bytes: {tail:?}");
    }
}

/// A session prepared in MPC mode before the request's token is known: the OT and 1 KB of
/// request garbled ahead, then the request with its token; a second notarize, another
/// server, and a closed session are refused with their codes.
#[wasm_bindgen_test]
async fn a_session_prepared_in_mpc_mode_notarizes_a_request_given_later() {
    ensure_pool().await;
    let proxy = proxy();
    let prepare = |extra: serde_json::Value| {
        let mut o = serde_json::json!({"mode": "mpc", "proxyUrl": proxy, "maxSentBytes": 1024, "headers": {}});
        o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        tlsproof::wasm::prepare(options("/json", o), None, None)
    };
    let session = prepare(serde_json::json!({})).await.unwrap_or_else(|e| panic!("prepare: {}", error_code(&e)));
    assert_eq!(session.max_sent_bytes(), 1024);
    let later = js_sys::JSON::parse(
        &serde_json::json!({"headers": {"Authorization": "Bearer later-secret"}, "reveal": {"recv": "all"}})
            .to_string(),
    )
    .unwrap();
    let done = wasm_bindgen_futures::JsFuture::from(session.notarize(later.clone(), None, None)).await;
    let v = as_json(&done.unwrap_or_else(|e| panic!("prepared notarize: {}", error_code(&e))));
    assert_eq!(
        (v["mode"].as_str(), v["sent"]["path"].as_str(), v["recv"]["path"].as_str()),
        (Some("mpc"), Some("zk"), Some("fast")),
        "{v}"
    );
    let sent = v["sent"]["printable"].as_str().unwrap();
    assert!(
        sent.starts_with("GET /json HTTP/1.1") && sent.contains("Authorization: █") && !sent.contains("later-secret"),
        "{sent}"
    );
    let again =
        wasm_bindgen_futures::JsFuture::from(session.notarize(later, None, None)).await.expect_err("notarizes once");
    assert!(error_code(&again).starts_with("SESSION_CLOSED"), "{}", error_code(&again));

    let session = prepare(serde_json::json!({})).await.unwrap_or_else(|e| panic!("prepare: {}", error_code(&e)));
    let elsewhere = js_sys::JSON::parse(&serde_json::json!({"url": "https://127.0.0.1:1/json"}).to_string()).unwrap();
    let e = wasm_bindgen_futures::JsFuture::from(session.notarize(elsewhere, None, None))
        .await
        .expect_err("another server");
    assert!(error_code(&e).starts_with("BAD_OPTIONS"), "{}", error_code(&e));
    let session = prepare(serde_json::json!({})).await.unwrap_or_else(|e| panic!("prepare: {}", error_code(&e)));
    session.close();
    let e = wasm_bindgen_futures::JsFuture::from(session.notarize(wasm_bindgen::JsValue::UNDEFINED, None, None))
        .await
        .expect_err("closed");
    assert!(error_code(&e).starts_with("SESSION_CLOSED"), "{}", error_code(&e));
}

#[wasm_bindgen_test]
async fn notarize_api_rejects_bad_options_with_codes() {
    ensure_pool().await;
    let fixture = server(option_env!("TLSPROOF_TEST_FIXTURE"), "TLSPROOF_TEST_FIXTURE");
    let bad = |code: &str, r: Result<serde_json::Value, String>, what: &str| match r {
        Err(e) => assert!(e.starts_with(&format!("{code}:")), "{what}: expected {code}, got {e}"),
        Ok(v) => panic!("{what}: expected {code}, got a verdict {v}"),
    };
    bad("BAD_OPTIONS", notarize(wasm_bindgen::JsValue::from_str("https://x/")).await, "a string");
    bad("BAD_OPTIONS", notarize(js_sys::JSON::parse(r#"{"url":"https://x/"}"#).unwrap()).await, "no verifierUrl");
    bad("BAD_OPTIONS", notarize(options("/json", serde_json::json!({"revael": {}}))).await, "unknown field");
    bad(
        "BAD_OPTIONS",
        notarize(options("/json", serde_json::json!({"reveal": {"rcv": "all"}}))).await,
        "unknown reveal field",
    );
    bad(
        "BAD_OPTIONS",
        notarize(options("/json", serde_json::json!({"reveal": {"recv": "everything"}}))).await,
        "reveal word",
    );
    bad(
        "BAD_OPTIONS",
        notarize(options("/json", serde_json::json!({"tls": {"versions": ["1.1"]}}))).await,
        "TLS version",
    );
    bad(
        "BAD_OPTIONS",
        notarize(options("/json", serde_json::json!({"tls": {"version": "1.3"}}))).await,
        "unknown tls field",
    );
    bad("BAD_OPTIONS", notarize(options("/json", serde_json::json!({"url": "http://x/"}))).await, "http URL");
    bad(
        "BAD_OPTIONS",
        notarize(options("/json", serde_json::json!({"reveal": {"recv": [{"start": 0, "end": 100000}]}}))).await,
        "range past the end",
    );
    bad(
        "LIMIT_EXCEEDED",
        notarize(options("/json", serde_json::json!({"maxSentBytes": 10}))).await,
        "request over maxSentBytes",
    );
    bad(
        "LIMIT_EXCEEDED",
        notarize(options("/json", serde_json::json!({"maxRecvBytes": 64 << 20}))).await,
        "more than the verifier allows",
    );
    bad(
        "LIMIT_EXCEEDED",
        notarize(options("/bytes?n=9000", serde_json::json!({"maxRecvBytes": 4096}))).await,
        "response over maxRecvBytes",
    );
    bad(
        "SERVER_NOT_ALLOWED",
        notarize(options("/json", serde_json::json!({"url": "https://127.0.0.1:1/json"}))).await,
        "not on the allow-list",
    );
    bad(
        "VERIFIER_UNREACHABLE",
        notarize(options("/json", serde_json::json!({"verifierUrl": "ws://127.0.0.1:1/"}))).await,
        "no verifier",
    );
    bad(
        "SERVER_NAME_MISMATCH",
        notarize(options("/json", serde_json::json!({"serverName": "bank.example"}))).await,
        "a name other than the host dialed",
    );
    let aborted = web_sys::AbortController::new().unwrap();
    aborted.abort();
    let r = tlsproof::wasm::notarize(options("/json", serde_json::json!({})), None, Some(aborted.signal())).await;
    bad("ABORTED", r.map(|v| as_json(&v)).map_err(|e| error_code(&e)), "already aborted");
    let _ = fixture;
}

#[wasm_bindgen_test]
async fn abort_mid_session_leaves_both_sides_clean() {
    ensure_pool().await;
    use wasm_bindgen::JsCast;
    let controller = web_sys::AbortController::new().unwrap();
    let c = controller.clone();
    // Abort once the proof starts: the verifier is then deep in the session.
    let on_progress =
        wasm_bindgen::closure::Closure::<dyn Fn(wasm_bindgen::JsValue)>::new(move |p: wasm_bindgen::JsValue| {
            if js_sys::Reflect::get(&p, &"phase".into()).unwrap().as_string().as_deref() == Some("prove") {
                c.abort();
            }
        });
    let started = js_sys::Date::now();
    let r = tlsproof::wasm::notarize(
        options("/bytes?n=4096", serde_json::json!({"reveal": {"recv": "body"}})),
        Some(on_progress.as_ref().unchecked_ref::<js_sys::Function>().clone()),
        Some(controller.signal()),
    )
    .await;
    let e = r.map(|v| as_json(&v)).expect_err("the session was aborted");
    assert!(error_code(&e).starts_with("ABORTED:"), "{}", error_code(&e));
    assert!(js_sys::Date::now() - started < 60_000.0);
    // The verifier ended that session (scripts/test.sh checks its log) and still serves.
    let v = notarize(options("/json", serde_json::json!({}))).await.unwrap_or_else(|e| panic!("after abort: {e}"));
    assert!(v["recv"]["printable"].as_str().unwrap().contains("Alice Example"));
}

#[wasm_bindgen_test]
async fn garbled_aes_and_sha256_stream_between_two_pool_workers_and_the_key_exchange_runs() {
    ensure_pool().await;
    // The bench garbles on one worker and evaluates on the other, and checks the decoded AES
    // ciphertexts and SHA-256 state against the `aes` and `sha2` crates; then MPC mode's key
    // exchange (KOS, the 2PC ECDH, the garbled key derivation), checked against `p256` and
    // the native key schedule.
    let platform = tlsproof::bench::engines::zk::Platform { now: || js_sys::Date::now() / 1e3, peak_memory: || None };
    let figures = tlsproof::bench::engines::gc::run(&platform, tlsproof::bench::engines::gc::Sizes::QUICK, &mut |_| {})
        .expect("garbled AES and SHA-256 decode to the right outputs");
    assert!(figures.iter().any(|f| f.name.starts_with("GC AND gates garbled+evaluated") && f.value > 0.0));
    assert!(figures.iter().any(|f| f.name.starts_with("MPC whole key exchange") && f.value > 0.0));
}

#[wasm_bindgen_test]
fn ole_shares_add_up_to_the_product_in_the_browser() {
    use tlsproof::mpc::ole::{receiver, receiver_corrections, sender, COTS_PER_OLE};
    use tlsproof::primitives::field::F128;
    let delta = F128(rand::random());
    let n = 4;
    let keys: Vec<F128> = (0..n * COTS_PER_OLE).map(|_| F128(rand::random())).collect();
    let choices: Vec<bool> = (0..n * COTS_PER_OLE).map(|_| rand::random()).collect();
    let macs: Vec<F128> = keys.iter().zip(&choices).map(|(k, &c)| *k + delta.select(c)).collect();
    let a: Vec<F128> = (0..n).map(|_| F128(rand::random())).collect();
    let b: Vec<F128> = (0..n).map(|_| F128(rand::random())).collect();
    let d = receiver_corrections(&b, &choices).expect("one COT per bit");
    let (x, u) = sender(&a, delta, &keys, 0, &d).expect("sizes");
    let y = receiver(&b, &macs, 0, &u).expect("sizes");
    assert!((0..n).all(|i| x[i] + y[i] == a[i] * b[i]));
}
