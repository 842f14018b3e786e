//! The wasm-bindgen bindings: options in and results out as plain JS objects
//! (serde-wasm-bindgen), progress through a callback, cancellation through an `AbortSignal`,
//! failures as `Error` objects with a `code`.

use super::options::{ApiError, NotarizeOptions, NotarizeResult, OptionsError, OPTION_FIELDS, REVEAL_FIELDS, TLS_FIELDS};
use crate::protocol::prover::DEFAULT_STEP_TIMEOUT;
use crate::protocol::{notarize_with_progress, Phase, Progress, ProverConfig};
use crate::transport::{WsSocket, WsStream};
use futures::FutureExt;
use js_sys::{Array, Function, Object, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

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

/// Notarizes one HTTPS request in proxy mode (see `NotarizeOptions` for `options`).
/// `on_progress({phase, fraction})` is called as the session advances; aborting `signal`
/// drops the session, which closes the WebSocket so the verifier ends its side too.
/// Resolves to a `NotarizeResult` object; rejects with an `Error` carrying a `code`.
#[wasm_bindgen(js_name = notarize)]
pub async fn notarize(options: JsValue, on_progress: Option<Function>, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
    run(options, on_progress, signal).await.map_err(|e| to_js_error(&e))
}

/// Holds default options (e.g. `verifierUrl`, `caPem`) merged under each call's options.
#[wasm_bindgen]
pub struct Prover {
    defaults: Object,
}

#[wasm_bindgen]
impl Prover {
    #[wasm_bindgen(constructor)]
    pub fn new(defaults: JsValue) -> Result<Prover, JsValue> {
        if defaults.is_undefined() || defaults.is_null() {
            return Ok(Prover { defaults: Object::new() });
        }
        match defaults.dyn_into::<Object>() {
            Ok(o) if !Array::is_array(&o) => Ok(Prover { defaults: Object::assign(&Object::new(), &o) }),
            _ => Err(to_js_error(&OptionsError::Shape("Prover defaults must be an object".into()).into())),
        }
    }

    /// Like the free `notarize`, with this prover's defaults under `options`.
    pub fn notarize(&self, options: JsValue, on_progress: Option<Function>, signal: Option<AbortSignal>) -> js_sys::Promise {
        let merged = match options.dyn_into::<Object>() {
            Ok(o) if !Array::is_array(&o) => Ok(Object::assign(&Object::assign(&Object::new(), &self.defaults), &o).into()),
            _ => Err(to_js_error(&OptionsError::Shape("notarize options must be an object".into()).into())),
        };
        wasm_bindgen_futures::future_to_promise(async move { notarize(merged?, on_progress, signal).await })
    }
}

/// An `Error` named `TlsproofError` with the stable `code`.
fn to_js_error(e: &ApiError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("TlsproofError");
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    err.into()
}

/// Resolves when `signal` fires `abort`; the listener is removed on drop.
struct AbortWatch {
    signal: AbortSignal,
    listener: Closure<dyn FnMut()>,
    fired: futures::channel::oneshot::Receiver<()>,
}

impl AbortWatch {
    fn new(signal: AbortSignal) -> Self {
        let (tx, fired) = futures::channel::oneshot::channel();
        let mut tx = Some(tx);
        let listener = Closure::<dyn FnMut()>::new(move || {
            if let Some(tx) = tx.take() {
                let _ = tx.send(());
            }
        });
        let _ = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        AbortWatch { signal, listener, fired }
    }
}

impl Drop for AbortWatch {
    fn drop(&mut self) {
        let _ = self.signal.remove_event_listener_with_callback("abort", self.listener.as_ref().unchecked_ref());
    }
}

/// Refuses keys of `obj` not in `known` (a misspelt option would otherwise be ignored).
fn check_keys(obj: &JsValue, known: &[&str], prefix: &str) -> Result<(), OptionsError> {
    for key in Object::keys(obj.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(OptionsError::Shape(format!("unknown option {prefix}{key} (known: {})", known.join(", "))));
        }
    }
    Ok(())
}

async fn run(options: JsValue, on_progress: Option<Function>, signal: Option<AbortSignal>) -> Result<JsValue, ApiError> {
    if !options.is_object() || Array::is_array(&options) {
        return Err(OptionsError::Shape("notarize options must be an object".into()).into());
    }
    check_keys(&options, OPTION_FIELDS, "")?;
    for (field, fields, prefix) in [("reveal", REVEAL_FIELDS, "reveal."), ("tls", TLS_FIELDS, "tls.")] {
        if let Ok(inner) = Reflect::get(&options, &field.into()) {
            if inner.is_object() && !Array::is_array(&inner) {
                check_keys(&inner, fields, prefix)?;
            }
        }
    }
    let opts: NotarizeOptions = serde_wasm_bindgen::from_value(options).map_err(|e| OptionsError::Shape(e.to_string()))?;
    let plan = opts.plan()?;
    if signal.as_ref().is_some_and(|s| s.aborted()) {
        return Err(ApiError::Aborted);
    }
    let started = js_sys::Date::now();
    let progress = |p: Progress| {
        if let Some(f) = &on_progress {
            let o = Object::new();
            let _ = Reflect::set(&o, &"phase".into(), &p.phase.as_str().into());
            let _ = Reflect::set(&o, &"fraction".into(), &p.fraction.into());
            // A throwing callback must not break the session.
            let _ = f.call1(&JsValue::UNDEFINED, &o);
        }
    };
    let roots = match &plan.ca_pem {
        Some(pem) => crate::tls::RootStore::from_pem(pem).map_err(|e| OptionsError::CaPem(e.to_string()))?,
        None => crate::tls::RootStore::mozilla(),
    };
    let config = ProverConfig {
        server: plan.server,
        server_name: plan.server_name,
        roots,
        max_sent: plan.max_sent,
        max_recv: plan.max_recv,
        now: (started / 1000.0) as u64,
        step_timeout: plan.timeout.map_or(DEFAULT_STEP_TIMEOUT, |t| t.min(DEFAULT_STEP_TIMEOUT)),
        prg: crate::primitives::prg::PrgKind::fastest_here(),
        mode: plan.mode,
        tls_versions: plan.tls_versions,
    };
    let (verifier_url, request, reveal, deadline, pinned) = (plan.verifier_url, plan.request, plan.reveal, plan.timeout, plan.verifier_key);
    let session = async {
        progress(Progress { phase: Phase::Connect, fraction: 0.0 });
        let socket = WsSocket::connect(&verifier_url).await.map_err(ApiError::VerifierUnreachable)?;
        let out = notarize_with_progress(socket, config, request, reveal, &progress).await?;
        if let Some(key) = &pinned {
            crate::protocol::attest::require_key(out.attestation.as_ref(), key).map_err(crate::protocol::ProverError::from)?;
        }
        Ok::<_, ApiError>(out)
    };
    let timed = async {
        match deadline {
            Some(d) => crate::transport::timeout(d, session).await.unwrap_or(Err(ApiError::Timeout(d.as_secs_f64() * 1e3))),
            None => session.await,
        }
    }
    .fuse();
    let mut watch = signal.map(AbortWatch::new);
    let aborted = async {
        match watch.as_mut() {
            Some(w) => {
                let _ = (&mut w.fired).await;
            }
            None => futures::future::pending::<()>().await,
        }
    }
    .fuse();
    futures::pin_mut!(timed, aborted);
    // Dropping the session future (on abort or timeout) drops its WebSocket, which closes it.
    let out = futures::select! {
        r = timed => r?,
        _ = aborted => return Err(ApiError::Aborted),
    };
    let result = NotarizeResult::new(&out, js_sys::Date::now() - started);
    // `null`, not `undefined`, for what is absent, as index.d.ts declares
    result.serialize(&serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true)).map_err(|e| ApiError::Internal(e.to_string()))
}
