//! tlsproof's prover for Node.js: a napi-rs addon over the native prover, with the calls the
//! browser package's wasm module has (`js/node.js` gives them the package's API).
//!
//! Each session runs on an OS thread of its own, which drives it on a shared tokio runtime
//! (`block_on`, as the CLI's `main` does), so Node's event loop stays free while the prover
//! computes. Progress comes back through a thread-safe function, the outcome through the
//! call's promise. A prepared session stays on its thread until its `notarize` or `close`
//! (the prover's sessions are not `Send`: they are driven where they were made).
//!
//! Options arrive as the JSON of the options object (the callbacks and the signal stay in JS);
//! results leave as JS objects (bytes as Buffers). A failure resolves the promise with
//! `{error: {code, message, retryAfter}}`, which the JS side turns into the `TlsproofError`
//! subclass of its code: the code does not depend on how napi renders a Rust error.

use futures::future::{AbortHandle, AbortRegistration, Abortable};
use napi::bindgen_prelude::{Either, Function, Object, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, JsValue, Status};
use napi_derive::napi;
use serde::Serialize;
use std::future::Future;
use std::sync::{mpsc, LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tlsproof::protocol::prover::{Phase, PreparedSession, Progress};
use tlsproof::wasm::options::{plan_from_json, ApiError, NotarizeResult, SessionPlan};

/// The runtime every session's thread drives its session on (its workers serve the sockets
/// and timers; the prover's own parallel work runs on rayon and threads of its own).
static RUNTIME: LazyLock<std::io::Result<tokio::runtime::Runtime>> =
    LazyLock::new(|| tokio::runtime::Builder::new_multi_thread().thread_name("tlsproof-io").enable_all().build());

/// One call's cancellation, which `js/node.js` wires to the caller's `AbortSignal`:
/// `cancel()` drops the call's session, which closes its WebSocket, so the verifier ends its
/// side too.
#[napi]
pub struct Cancel {
    handle: AbortHandle,
    registration: Mutex<Option<AbortRegistration>>,
}

#[napi]
impl Cancel {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        let (handle, registration) = AbortHandle::new_pair();
        Cancel { handle, registration: Mutex::new(Some(registration)) }
    }

    /// Cancels the call this was given to (before it starts, it then does not).
    #[napi]
    pub fn cancel(&self) {
        self.handle.abort();
    }
}

impl Cancel {
    /// The registration the call's work is made abortable with: one call per `Cancel`.
    fn take(&self) -> napi::Result<AbortRegistration> {
        let taken = self.registration.lock().ok().and_then(|mut r| r.take());
        taken.ok_or_else(|| napi::Error::new(Status::InvalidArg, "a Cancel serves one call"))
    }
}

/// A progress event, as the browser package reports it.
#[napi(object)]
pub struct ProgressEvent {
    pub phase: String,
    pub fraction: f64,
    /// The place in the verifier's queue while `phase` is `"waiting"`.
    pub position: Option<u32>,
}

type ProgressCallback = ThreadsafeFunction<ProgressEvent, (), ProgressEvent, Status, false>;

/// A failure as the JS side takes it.
#[napi(object)]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorObject {
    pub code: String,
    pub message: String,
    /// For `BUSY`: the verifier's hint, in seconds.
    pub retry_after: Option<f64>,
}

impl From<&ApiError> for ErrorObject {
    fn from(e: &ApiError) -> Self {
        let retry_after = match e {
            ApiError::Prover(tlsproof::protocol::ProverError::Busy { retry_after, .. }) => Some(*retry_after as f64),
            _ => None,
        };
        ErrorObject { code: e.code().to_string(), message: e.to_string(), retry_after }
    }
}

/// How a notarization ended, as its promise resolves: `{result}` or `{error}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Outcome {
    Result(Box<NotarizeResult>),
    Error(ErrorObject),
}

impl From<Result<NotarizeResult, ApiError>> for Outcome {
    fn from(r: Result<NotarizeResult, ApiError>) -> Self {
        match r {
            Ok(result) => Outcome::Result(Box::new(result)),
            Err(e) => Outcome::Error((&e).into()),
        }
    }
}

/// An [`Outcome`] made a JS object on Node's thread (napi's serde: bytes become Buffers,
/// `None` becomes `null`).
struct AsJs(Outcome);

impl ToNapiValue for AsJs {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(Env::from_raw(env).to_js_value(&val.0)?.raw())
    }
}

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// `on_progress` as the sessions' progress callback (a throwing callback does not reach the
/// session: the call is non-blocking and its result ignored).
fn progress_reporter(on_progress: Option<ProgressCallback>) -> impl Fn(Progress) {
    move |p: Progress| {
        if let Some(f) = &on_progress {
            let position = match p.phase {
                Phase::Waiting { position } => Some(position),
                _ => None,
            };
            let event = ProgressEvent { phase: p.phase.as_str().to_string(), fraction: p.fraction, position };
            f.call(event, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// What a call takes to its thread: its cancellation's registration (one call per `Cancel`)
/// and its progress callback made callable from there.
fn call_parts(
    on_progress: Option<Function<'_, ProgressEvent, ()>>,
    cancel: &Cancel,
) -> napi::Result<(AbortRegistration, Option<ProgressCallback>)> {
    Ok((cancel.take()?, on_progress.map(|f| f.build_threadsafe_function().build()).transpose()?))
}

/// Runs `work` until it ends, the plan's `timeoutMs` passes (TIMEOUT) or the call is
/// cancelled (ABORTED). Dropping the work drops its WebSocket, which closes it.
async fn cancellable<T>(
    work: impl Future<Output = Result<T, ApiError>>,
    deadline: Option<Duration>,
    registration: AbortRegistration,
) -> Result<T, ApiError> {
    let timed = async {
        match deadline {
            Some(d) => tokio::time::timeout(d, work).await.unwrap_or(Err(ApiError::Timeout(d.as_secs_f64() * 1e3))),
            None => work.await,
        }
    };
    Abortable::new(timed, registration).await.unwrap_or(Err(ApiError::Aborted))
}

/// `work` driven on `runtime`; a panic in it is an `INTERNAL` failure, so the call's promise
/// still settles (and the session's socket, dropped in the unwinding, still closes).
fn drive<T>(runtime: &tokio::runtime::Runtime, work: impl Future<Output = Result<T, ApiError>>) -> Result<T, ApiError> {
    let driven = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(work)));
    driven.unwrap_or_else(|_| Err(ApiError::Internal("the prover stopped on an internal error (a panic)".into())))
}

/// Starts `body` on a thread of its own, which drives it on [`RUNTIME`].
fn on_session_thread(body: impl FnOnce(&tokio::runtime::Runtime) + Send + 'static) -> napi::Result<()> {
    let runtime = RUNTIME.as_ref().map_err(|e| napi::Error::from_reason(format!("no tokio runtime: {e}")))?;
    std::thread::Builder::new()
        .name("tlsproof-session".into())
        .spawn(move || body(runtime))
        .map(drop)
        .map_err(|e| napi::Error::from_reason(format!("cannot start a session thread: {e}")))
}

/// Notarizes as `notarize(options)` in index.d.ts: `options` is the JSON of the options
/// object without `onProgress` and `signal`. Resolves to `{result}` or `{error}`.
#[napi(ts_return_type = "Promise<{ result?: unknown; error?: ErrorObject }>")]
pub fn notarize<'env>(
    env: &'env Env,
    options: String,
    on_progress: Option<Function<'env, ProgressEvent, ()>>,
    cancel: &Cancel,
) -> napi::Result<Object<'env>> {
    let (registration, on_progress) = call_parts(on_progress, cancel)?;
    let (deferred, promise) = env.create_deferred()?;
    on_session_thread(move |runtime| {
        let started = now_ms();
        let outcome = drive(runtime, async {
            let plan = plan_from_json(&options)?;
            let progress = progress_reporter(on_progress);
            let out = cancellable(plan.notarize(started, &progress), plan.timeout, registration).await?;
            plan.result(&out, now_ms() - started)
        });
        let outcome = AsJs(outcome.into());
        deferred.resolve(move |_| Ok(outcome));
    })?;
    Ok(promise)
}

/// What a prepared session's thread is asked to do: its one notarization (dropping the
/// sender instead, `close`, ends the session).
struct Notarize {
    plan: SessionPlan,
    on_progress: Option<ProgressCallback>,
    registration: AbortRegistration,
    reply: Reply,
}

type Reply = napi::JsDeferred<AsJs, Box<dyn FnOnce(Env) -> napi::Result<AsJs> + Send>>;

/// A session `prepare` opened, held by its thread: notarizes once, then is used up.
#[napi]
pub struct PreparedNative {
    plan: SessionPlan,
    commands: Mutex<Option<mpsc::Sender<Notarize>>>,
}

/// Prepares as `prepare(options)` in index.d.ts. Resolves to a `PreparedNative` or `{error}`.
#[napi(ts_return_type = "Promise<PreparedNative | { error: ErrorObject }>")]
pub fn prepare<'env>(
    env: &'env Env,
    options: String,
    on_progress: Option<Function<'env, ProgressEvent, ()>>,
    cancel: &Cancel,
) -> napi::Result<Object<'env>> {
    let (registration, on_progress) = call_parts(on_progress, cancel)?;
    let (deferred, promise) = env.create_deferred::<Either<PreparedNative, ErrorObject>, _>()?;
    on_session_thread(move |runtime| {
        let prepared = drive(runtime, async {
            let plan = plan_from_json(&options)?;
            let progress = progress_reporter(on_progress);
            let session = cancellable(plan.prepare(now_ms(), &progress), plan.timeout, registration).await?;
            Ok::<_, ApiError>((plan, session))
        });
        let (value, kept) = match prepared {
            Ok((plan, session)) => {
                let (commands, inbox) = mpsc::channel();
                (Either::A(PreparedNative { plan, commands: Mutex::new(Some(commands)) }), Some((session, inbox)))
            }
            Err(e) => (Either::B(ErrorObject::from(&e)), None),
        };
        deferred.resolve(move |_| Ok(value));
        if let Some((session, inbox)) = kept {
            serve_prepared(runtime, session, inbox);
        }
    })?;
    Ok(promise)
}

/// A prepared session's thread after `prepare`: waits for its notarization (a closed channel,
/// from `close` or the JS object's collection, ends the session).
fn serve_prepared(runtime: &tokio::runtime::Runtime, session: PreparedSession, inbox: mpsc::Receiver<Notarize>) {
    let Ok(Notarize { plan, on_progress, registration, reply }) = inbox.recv() else {
        drop(session);
        return;
    };
    let started = now_ms();
    let outcome = drive(runtime, async {
        let progress = progress_reporter(on_progress);
        let now = (started / 1000.0) as u64;
        let work = async { Ok(session.notarize_exchanges(plan.exchanges.clone(), now, &progress).await?) };
        let out = cancellable(work, plan.timeout, registration).await?;
        plan.result(&out, now_ms() - started)
    });
    let outcome = AsJs(outcome.into());
    reply.resolve(Box::new(move |_| Ok(outcome)));
}

#[napi]
impl PreparedNative {
    /// The longest request the session takes, in bytes.
    #[napi(getter)]
    pub fn max_sent_bytes(&self) -> u32 {
        self.plan.max_sent
    }

    /// Sends the request: `options` is the JSON of `prepare`'s options with this call's over
    /// them (merged by the caller); one naming another session is refused (BAD_OPTIONS).
    /// Resolves to `{result}` or `{error}`; a second call to `SESSION_CLOSED`.
    #[napi(ts_return_type = "Promise<{ result?: unknown; error?: ErrorObject }>")]
    pub fn notarize<'env>(
        &self,
        env: &'env Env,
        options: String,
        on_progress: Option<Function<'env, ProgressEvent, ()>>,
        cancel: &Cancel,
    ) -> napi::Result<Object<'env>> {
        let (registration, on_progress) = call_parts(on_progress, cancel)?;
        let (reply, promise): (Reply, _) = env.create_deferred()?;
        // Taken now, even if the options are refused: a session notarizes once.
        let commands = self.commands.lock().ok().and_then(|mut c| c.take());
        let checked = plan_from_json(&options).and_then(|plan| {
            plan.check_same_session(&self.plan)?;
            Ok(plan)
        });
        let failed = |e: ApiError| AsJs(Outcome::Error((&e).into()));
        match (checked, commands) {
            (Err(e), _) => reply.resolve(Box::new(move |_| Ok(failed(e)))),
            (Ok(_), None) => reply.resolve(Box::new(move |_| Ok(failed(ApiError::SessionClosed)))),
            (Ok(plan), Some(commands)) => {
                if let Err(mpsc::SendError(Notarize { reply, .. })) =
                    commands.send(Notarize { plan, on_progress, registration, reply })
                {
                    reply.resolve(Box::new(move |_| Ok(failed(ApiError::SessionClosed))));
                }
            }
        }
        Ok(promise)
    }

    /// Ends the session without notarizing: its thread drops it, which closes its WebSocket,
    /// so the verifier frees what it holds for it.
    #[napi]
    pub fn close(&self) {
        drop(self.commands.lock().ok().and_then(|mut c| c.take()));
    }
}
