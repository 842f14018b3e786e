//! The wasm-bindgen bindings: options in and results out as plain JS objects
//! (serde-wasm-bindgen), progress through a callback, cancellation through an `AbortSignal`,
//! failures as `Error` objects with a `code`.

use super::options::{
    ApiError, NotarizeOptions, OptionsError, SessionPlan, OPTION_FIELDS, REQUEST_FIELDS, REVEAL_FIELDS, TLS_FIELDS,
};
use crate::protocol::{Phase, Progress};
use crate::transport::WsStream;
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
pub async fn notarize(
    options: JsValue,
    on_progress: Option<Function>,
    signal: Option<AbortSignal>,
) -> Result<JsValue, JsValue> {
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
    pub fn notarize(
        &self,
        options: JsValue,
        on_progress: Option<Function>,
        signal: Option<AbortSignal>,
    ) -> js_sys::Promise {
        let merged = match options.dyn_into::<Object>() {
            Ok(o) if !Array::is_array(&o) => {
                Ok(Object::assign(&Object::assign(&Object::new(), &self.defaults), &o).into())
            }
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
    if let ApiError::Prover(crate::protocol::ProverError::Busy { retry_after, .. }) = e {
        let _ = Reflect::set(&err, &"retryAfter".into(), &(*retry_after).into());
    }
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

/// Refuses keys of `obj` not in `known` ([`super::options::check_keys`]).
fn check_keys(obj: &JsValue, known: &[&str], prefix: &str) -> Result<(), OptionsError> {
    let keys = Object::keys(obj.unchecked_ref::<Object>());
    super::options::check_keys(keys.iter().map(|k| k.as_string().unwrap_or_default()), known, prefix)
}

/// The options object as a plan, its keys checked first (serde-wasm-bindgen would ignore a
/// misspelt one).
fn parse_plan(options: JsValue) -> Result<SessionPlan, ApiError> {
    if !options.is_object() || Array::is_array(&options) {
        return Err(OptionsError::Shape("notarize options must be an object".into()).into());
    }
    check_keys(&options, OPTION_FIELDS, "")?;
    let inner = |object: &JsValue, field: &str| {
        Reflect::get(object, &field.into()).ok().filter(|v| v.is_object() && !Array::is_array(v))
    };
    for (field, fields, prefix) in [("reveal", REVEAL_FIELDS, "reveal."), ("tls", TLS_FIELDS, "tls.")] {
        if let Some(value) = inner(&options, field) {
            check_keys(&value, fields, prefix)?;
        }
    }
    if let Some(list) = Reflect::get(&options, &"requests".into()).ok().filter(Array::is_array) {
        for (i, request) in Array::from(&list).iter().enumerate() {
            if request.is_object() && !Array::is_array(&request) {
                check_keys(&request, REQUEST_FIELDS, &format!("requests[{i}]."))?;
                if let Some(reveal) = inner(&request, "reveal") {
                    check_keys(&reveal, REVEAL_FIELDS, &format!("requests[{i}].reveal."))?;
                }
            }
        }
    }
    let opts: NotarizeOptions =
        serde_wasm_bindgen::from_value(options).map_err(|e| OptionsError::Shape(e.to_string()))?;
    Ok(opts.plan()?)
}

/// `on_progress` as the sessions' progress callback: `{phase, fraction}` objects.
fn progress_callback(on_progress: Option<Function>) -> impl Fn(Progress) {
    move |p: Progress| {
        if let Some(f) = &on_progress {
            let o = Object::new();
            let _ = Reflect::set(&o, &"phase".into(), &p.phase.as_str().into());
            let _ = Reflect::set(&o, &"fraction".into(), &p.fraction.into());
            if let Phase::Waiting { position } = p.phase {
                let _ = Reflect::set(&o, &"position".into(), &position.into());
            }
            // A throwing callback must not break the session.
            let _ = f.call1(&JsValue::UNDEFINED, &o);
        }
    }
}

/// Runs `work` until it ends, `deadline` passes (TIMEOUT) or `signal` fires (ABORTED).
/// Dropping the work (on abort or timeout) drops its WebSocket, which closes it, so the
/// verifier ends its side too.
async fn cancellable<T>(
    work: impl std::future::Future<Output = Result<T, ApiError>>,
    deadline: Option<std::time::Duration>,
    signal: Option<AbortSignal>,
) -> Result<T, ApiError> {
    if signal.as_ref().is_some_and(|s| s.aborted()) {
        return Err(ApiError::Aborted);
    }
    let timed = async {
        match deadline {
            Some(d) => {
                crate::transport::timeout(d, work).await.unwrap_or(Err(ApiError::Timeout(d.as_secs_f64() * 1e3)))
            }
            None => work.await,
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
    futures::select! {
        r = timed => r,
        _ = aborted => Err(ApiError::Aborted),
    }
}

/// The verdict as the JS result object, the attestation checked against a pinned key first.
fn js_result(plan: &SessionPlan, out: &crate::protocol::ProverOutput, started: f64) -> Result<JsValue, ApiError> {
    let result = plan.result(out, js_sys::Date::now() - started)?;
    // `null`, not `undefined`, for what is absent, as index.d.ts declares
    result
        .serialize(&serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true))
        .map_err(|e| ApiError::Internal(e.to_string()))
}

async fn run(
    options: JsValue,
    on_progress: Option<Function>,
    signal: Option<AbortSignal>,
) -> Result<JsValue, ApiError> {
    let plan = parse_plan(options)?;
    let started = js_sys::Date::now();
    let progress = progress_callback(on_progress);
    let out = cancellable(plan.notarize(started, &progress), plan.timeout, signal).await?;
    js_result(&plan, &out, started)
}

/// Opens and prepares a session before its request is known (`prepare(options)` in
/// index.d.ts): in MPC mode the OT and a request of up to `maxSentBytes` garbled ahead. The
/// options are `notarize`'s; those naming the session are fixed, the others are defaults
/// for the session's `notarize`.
#[wasm_bindgen(js_name = prepare)]
pub async fn prepare(
    options: JsValue,
    on_progress: Option<Function>,
    signal: Option<AbortSignal>,
) -> Result<PreparedSession, JsValue> {
    prepare_session(options, on_progress, signal).await.map_err(|e| to_js_error(&e))
}

async fn prepare_session(
    options: JsValue,
    on_progress: Option<Function>,
    signal: Option<AbortSignal>,
) -> Result<PreparedSession, ApiError> {
    let defaults = match options.dyn_ref::<Object>() {
        Some(o) if !Array::is_array(o) => Object::assign(&Object::new(), o),
        _ => return Err(OptionsError::Shape("prepare options must be an object".into()).into()),
    };
    let plan = parse_plan(options)?;
    let progress = progress_callback(on_progress);
    let session = cancellable(plan.prepare(js_sys::Date::now(), &progress), plan.timeout, signal).await?;
    Ok(PreparedSession { defaults, plan, session: std::cell::RefCell::new(Some(session)) })
}

/// A session `prepare` opened: notarizes once, then is used up.
#[wasm_bindgen]
pub struct PreparedSession {
    defaults: Object,
    plan: SessionPlan,
    /// Taken out by the one `notarize` (or `close`).
    session: std::cell::RefCell<Option<crate::protocol::prover::PreparedSession>>,
}

#[wasm_bindgen]
impl PreparedSession {
    /// The longest request the session takes, in bytes.
    #[wasm_bindgen(getter, js_name = maxSentBytes)]
    pub fn max_sent_bytes(&self) -> u32 {
        self.plan.max_sent
    }

    /// Sends the request and proves what to reveal: `options` as `notarize`'s, over the ones
    /// given to `prepare`; changing one that names the session is refused (BAD_OPTIONS).
    pub fn notarize(
        &self,
        options: JsValue,
        on_progress: Option<Function>,
        signal: Option<AbortSignal>,
    ) -> js_sys::Promise {
        let options = if options.is_undefined() { Object::new().into() } else { options };
        let merged = match options.dyn_into::<Object>() {
            Ok(o) if !Array::is_array(&o) => Ok(Object::assign(&Object::assign(&Object::new(), &self.defaults), &o)),
            _ => Err(OptionsError::Shape("notarize options must be an object".into())),
        };
        let checked = merged.map_err(ApiError::from).and_then(|o| {
            let plan = parse_plan(o.into())?;
            plan.check_same_session(&self.plan)?;
            Ok(plan)
        });
        // Taken now, even if the options are refused: a session notarizes once.
        let session = self.session.borrow_mut().take();
        wasm_bindgen_futures::future_to_promise(async move {
            let plan = checked.map_err(|e| to_js_error(&e))?;
            let session = session.ok_or_else(|| to_js_error(&ApiError::SessionClosed))?;
            let started = js_sys::Date::now();
            let progress = progress_callback(on_progress);
            let work = async {
                Ok::<_, ApiError>(
                    session.notarize_exchanges(plan.exchanges.clone(), (started / 1000.0) as u64, &progress).await?,
                )
            };
            let out = cancellable(work, plan.timeout, signal).await.map_err(|e| to_js_error(&e))?;
            js_result(&plan, &out, started).map_err(|e| to_js_error(&e))
        })
    }

    /// Ends the session without notarizing: closes its WebSocket, so the verifier frees what
    /// it holds for it. A later `notarize` rejects with SESSION_CLOSED.
    pub fn close(&self) {
        self.session.borrow_mut().take();
    }
}
