//! The browser API (wasm-bindgen). Threaded code must run in a Web Worker: the main thread
//! cannot block, which rayon needs.

use crate::transport::WsStream;
use wasm_bindgen::prelude::*;

/// Starts the rayon pool on `n` Web Workers; await it once before any parallel work.
pub use wasm_bindgen_rayon::init_thread_pool;

/// Sums `0..n` in parallel on the rayon pool (a smoke test that threads work).
#[wasm_bindgen(js_name = parallelSum)]
pub fn parallel_sum(n: u32) -> f64 {
    use rayon::prelude::*;
    (0..n).into_par_iter().map(|x| x as f64).sum()
}

/// Fetches over HTTPS with tlsproof's own TLS 1.2 client, running in this browser tab: the
/// TCP bytes go through `tlsproof proxy` at `proxy_url` to `target` (`HOST:PORT`). The server
/// certificate is checked against `ca_pem` (empty: Mozilla's roots) for `server_name`.
/// Returns the HTTP response bytes (status line, headers, body).
#[wasm_bindgen(js_name = fetchHttpsViaProxy)]
pub async fn fetch_https_via_proxy(
    proxy_url: String,
    target: String,
    server_name: String,
    ca_pem: String,
    request: Vec<u8>,
) -> Result<Vec<u8>, JsError> {
    use crate::tls::{driver, unix_time, Client, ClientConfig, RootStore};
    let roots = if ca_pem.trim().is_empty() { RootStore::mozilla() } else { RootStore::from_pem(&ca_pem)? };
    let now = (js_sys::Date::now() / 1000.0) as u64;
    let mut client = Client::new(ClientConfig::new(roots), &server_name, unix_time(now))?;
    let mut stream = WsStream::connect(&format!("{proxy_url}?target={target}")).await?;
    let response = driver::http_exchange(&mut client, &mut stream, &request, Default::default()).await?;
    let _ = stream.close().await;
    Ok(response)
}

/// Notarizes one HTTPS request in proxy mode: the request goes to `server` (`HOST:PORT`)
/// through the verifier at `verifier_url`, then the prover proves the response (revealed per
/// `reveal_received`: `"all"` — the fast path —, `"body"` or `"none"`) and the request with the
/// values of `redact_headers` hidden. Resolves to the verifier's verdict as JSON.
#[wasm_bindgen(js_name = notarize)]
pub async fn notarize_js(
    verifier_url: String,
    server: String,
    server_name: String,
    ca_pem: String,
    request: Vec<u8>,
    redact_headers: Vec<String>,
    reveal_received: String,
) -> Result<String, JsError> {
    use crate::protocol::{notarize, ProverConfig, Reveal, RevealConfig};
    use crate::tls::RootStore;
    let roots = if ca_pem.trim().is_empty() { RootStore::mozilla() } else { RootStore::from_pem(&ca_pem)? };
    let received = match reveal_received.as_str() {
        "all" => Reveal::All,
        "body" => Reveal::HttpBody,
        "none" => Reveal::Nothing,
        other => return Err(JsError::new(&format!("reveal_received must be all, body or none, not {other:?}"))),
    };
    let sent = if redact_headers.is_empty() { Reveal::All } else { Reveal::AllExceptHeaders(redact_headers) };
    let config = ProverConfig {
        server,
        server_name,
        roots,
        max_sent: 16 * 1024,
        max_recv: 256 * 1024,
        now: (js_sys::Date::now() / 1000.0) as u64,
        step_timeout: crate::protocol::prover::DEFAULT_STEP_TIMEOUT,
    };
    let socket = crate::transport::WsSocket::connect(&verifier_url).await?;
    let out = notarize(socket, config, request, RevealConfig::new(sent, received)).await?;
    Ok(serde_json::json!({
        "verified": out.verified,
        "sentPrintable": out.verified.sent.printable(),
        "receivedPrintable": out.verified.received.printable(),
    })
    .to_string())
}
