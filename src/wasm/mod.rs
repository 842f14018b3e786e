//! The browser API (wasm-bindgen). Threaded code must run in a Web Worker: the main thread
//! cannot block, which rayon needs.

use crate::transport::WsStream;
use wasm_bindgen::prelude::*;

/// Starts the rayon pool on `n` Web Workers; await it once before any parallel work.
pub use wasm_bindgen_rayon::init_thread_pool;

/// Opens a stream to `target` (`HOST:PORT`) through `tlsproof proxy` at `proxy_url`, sends
/// `request`, half-closes, and returns every byte the target sent until it closed.
/// At most `limit` bytes are accepted.
#[wasm_bindgen(js_name = exchangeViaProxy)]
pub async fn exchange_via_proxy(proxy_url: String, target: String, request: Vec<u8>, limit: usize) -> Result<Vec<u8>, JsError> {
    let url = format!("{}?target={}", proxy_url, target);
    let mut stream = WsStream::connect(&url).await?;
    stream.write_all(&request).await?;
    stream.shutdown_write().await?;
    let reply = stream.read_to_end(limit).await?;
    let _ = stream.close().await;
    Ok(reply)
}

/// Sums `0..n` in parallel on the rayon pool (a smoke test that threads work).
#[wasm_bindgen(js_name = parallelSum)]
pub fn parallel_sum(n: u32) -> f64 {
    use rayon::prelude::*;
    (0..n).into_par_iter().map(|x| x as f64).sum()
}
