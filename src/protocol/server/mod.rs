//! `tlsproof verifier` as a server: accepts sessions on a WebSocket endpoint, each in its own
//! task, so one bad session never affects another, and admits only as many as it can serve
//! ([`VerifierConfig::max_sessions`]): the rest wait in a bounded queue or are refused `BUSY`
//! with a reason, so a flood costs the verifier bounded memory and every prover an answer.
//! The same port answers plain HTTP ([`http`]): health, readiness and [`metrics`]. Asked to
//! stop ([`VerifierServer::run_until`]), it drains: refuses new sessions, reports not ready,
//! and returns once the running ones have their verdicts.

mod http;
pub mod metrics;

use super::VerifierOutput;
use crate::protocol::messages::ControlMessage;
use crate::protocol::verifier::{verify_session, VerifierConfig, VerifierError};
use crate::transport::WsSocket;
use futures::{SinkExt, StreamExt};
use metrics::ServiceMetrics;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::protocol::frame::{coding::CloseCode, CloseFrame};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// Most WebSocket handshakes in flight (before admission); a connection beyond gets a bare
/// `503 Service Unavailable` (each waiting handshake is a small task, so this is generous).
const MAX_HANDSHAKES: usize = 1024;

/// How long a client may take over its WebSocket handshake.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Messages a refused client's connection is read for after the refusal (a prover's first ones
/// are its request and the OT setup's few).
const REFUSAL_DRAIN: usize = 64;

const BUSY_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

/// Largest WebSocket message a prover may send (the multiplexer's frame limit plus its header).
const MAX_WS_MESSAGE: usize = (2 << 20) + 16;

/// One finished session, as reported to the embedding program.
pub type SessionReport = (SocketAddr, Result<VerifierOutput, VerifierError>);

pub struct VerifierServer {
    listener: TcpListener,
    config: Arc<VerifierConfig>,
    admission: Arc<Admission>,
    metrics: Arc<ServiceMetrics>,
    /// Routes served beside the operational ones on connections that are not WebSocket
    /// upgrades (e.g. a page that runs the prover).
    routes: axum::Router,
}

/// How long a client may take to send its request head before the dispatch gives up.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl VerifierServer {
    pub async fn bind(addr: SocketAddr, config: VerifierConfig) -> std::io::Result<VerifierServer> {
        let metrics = Arc::new(ServiceMetrics::default());
        let admission = Arc::new(Admission::new(&config, metrics.clone()));
        Ok(VerifierServer {
            listener: TcpListener::bind(addr).await?,
            config: Arc::new(config),
            admission,
            metrics,
            routes: axum::Router::new(),
        })
    }

    /// Serves `routes` too on the port's plain-HTTP connections, so one port serves both the
    /// sessions and a page (`tlsproof verifier --www`).
    pub fn with_routes(mut self, routes: axum::Router) -> Self {
        self.routes = self.routes.merge(routes);
        self
    }

    /// The figures `/metrics` shows.
    pub fn metrics(&self) -> Arc<ServiceMetrics> {
        self.metrics.clone()
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves forever; every finished or refused session is sent to `reports`.
    pub async fn run(self, reports: tokio::sync::mpsc::UnboundedSender<SessionReport>) {
        self.run_until(reports, std::future::pending(), std::time::Duration::ZERO).await
    }

    /// Serves until `stop` completes, then drains: new sessions are refused `BUSY`, `/readyz`
    /// answers 503, and it returns once every running or waiting session has had its verdict
    /// and closed, or after `drain` at the latest.
    pub async fn run_until(
        self,
        reports: tokio::sync::mpsc::UnboundedSender<SessionReport>,
        stop: impl std::future::Future<Output = ()>,
        drain: std::time::Duration,
    ) {
        let drained = async {
            stop.await;
            self.admission.start_draining();
            let _ = tokio::time::timeout(drain, self.admission.idle()).await;
        };
        tokio::select! {
            () = self.serve(reports) => {}
            () = drained => {}
        }
    }

    async fn serve(&self, reports: tokio::sync::mpsc::UnboundedSender<SessionReport>) {
        let (http, connections) = tokio::sync::mpsc::unbounded_channel();
        let addr = self.listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        let routes = http::service_routes(self.metrics.clone(), self.admission.clone()).merge(self.routes.clone());
        tokio::spawn(http::serve_handed_over(routes, connections, addr));
        let handshakes = Arc::new(Semaphore::new(MAX_HANDSHAKES));
        loop {
            let Ok((tcp, peer)) = self.listener.accept().await else { continue };
            let Ok(slot) = handshakes.clone().try_acquire_owned() else {
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    let mut tcp = tcp;
                    let _ = tokio::time::timeout(HANDSHAKE_TIMEOUT, tcp.write_all(BUSY_RESPONSE)).await;
                });
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let http = http.clone();
            let (config, admission, reports) = (self.config.clone(), self.admission.clone(), reports.clone());
            let metrics = self.metrics.clone();
            tokio::spawn(async move {
                if !is_websocket_upgrade(&tcp).await {
                    let _ = http.send((tcp, peer));
                    return;
                }
                let ws_config = WebSocketConfig::default()
                    .max_message_size(Some(MAX_WS_MESSAGE))
                    .max_frame_size(Some(MAX_WS_MESSAGE));
                let accepted = tokio::time::timeout(
                    HANDSHAKE_TIMEOUT,
                    tokio_tungstenite::accept_async_with_config(tcp, Some(ws_config)),
                )
                .await;
                drop(slot);
                let Ok(Ok(ws)) = accepted else { return };
                match admission.admit(peer.ip()).await {
                    Ok(ticket) => spawn_session(ws, peer, ticket, config, reports, metrics),
                    Err(busy) => {
                        refuse(ws, &busy).await;
                        let busy = Err(busy);
                        metrics.record(&busy);
                        let _ = reports.send((peer, busy));
                    }
                }
            });
        }
    }
}

/// Runs one admitted session on its own blocking thread, driven by the runtime's I/O: the
/// proof futures are not `Send` (the engine is generic over `dyn FnMut` circuits) and
/// CPU-heavy. The ticket is held until the verdict is sent.
fn spawn_session(
    ws: WebSocketStream<TcpStream>,
    peer: SocketAddr,
    ticket: Ticket,
    config: Arc<VerifierConfig>,
    reports: tokio::sync::mpsc::UnboundedSender<SessionReport>,
    metrics: Arc<ServiceMetrics>,
) {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        handle.block_on(async move {
            // The slot is free and the result reported once the verdict is sent; the socket stays
            // open until the prover has read it (at most 2 s), which costs no work. The ticket's
            // hold on the session's socket ends only then: a drain waits for it.
            let Ticket { permit, ip, open } = ticket;
            verify_session(WsSocket::from_stream(ws), &config, |result| {
                drop((permit, ip));
                metrics.record(&result);
                let _ = reports.send((peer, result));
            })
            .await;
            drop(open);
        })
    });
}

/// Tells a prover it was not admitted: an `Abort` with the reason on the control channel (which
/// the prover reports as code `BUSY`), then a close with 1013 "try again later", then reads on
/// until the prover closes too (at most [`REFUSAL_DRAIN`] messages, for at most 1 s): closing
/// under a prover still sending its first messages would reset the connection, and the reset
/// can discard the reason unread. A client that floods gets no more of the verifier's time.
async fn refuse(mut ws: WebSocketStream<TcpStream>, busy: &VerifierError) {
    let reason = busy.to_string();
    let abort = [&[0u8][..], &ControlMessage::Abort { reason: reason.clone() }.encode()].concat();
    let close = CloseFrame { code: CloseCode::Again, reason: reason.chars().take(120).collect::<String>().into() };
    let _ = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
        ws.send(Message::binary(abort)).await?;
        ws.close(Some(close)).await
    })
    .await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        for _ in 0..REFUSAL_DRAIN {
            if !matches!(ws.next().await, Some(Ok(_))) {
                break;
            }
        }
    })
    .await;
}

/// Who may start a session now: a semaphore of `max_sessions` permits, a count of those
/// waiting for one, and a count per client IP of those running or waiting; none once the
/// server drains.
struct Admission {
    running: Arc<Semaphore>,
    max_sessions: usize,
    max_queued: usize,
    max_per_ip: usize,
    queue_timeout: std::time::Duration,
    state: Arc<Mutex<AdmissionState>>,
    draining: AtomicBool,
    /// Sessions admitted or waiting whose socket is still open.
    open: Arc<AtomicUsize>,
    metrics: Arc<ServiceMetrics>,
}

#[derive(Default)]
struct AdmissionState {
    queued: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// A session's place: its permit to run, its share of its IP's count, and its count among
/// the open sessions a drain waits for; each given back on drop.
struct Ticket {
    permit: Running,
    ip: IpShare,
    open: OpenSession,
}

/// A permit to run, counted in the `sessions_running` gauge while held.
struct Running {
    _permit: tokio::sync::OwnedSemaphorePermit,
    metrics: Arc<ServiceMetrics>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.metrics.running.dec();
    }
}

/// A session counted as open (waiting, running, or lingering for its prover to read the
/// verdict) until dropped.
struct OpenSession(Arc<AtomicUsize>);

impl OpenSession {
    fn new(open: &Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        OpenSession(open.clone())
    }
}

impl Drop for OpenSession {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct IpShare {
    ip: IpAddr,
    state: Arc<Mutex<AdmissionState>>,
}

impl Drop for IpShare {
    fn drop(&mut self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = s.per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                s.per_ip.remove(&self.ip);
            }
        }
    }
}

impl Admission {
    fn new(config: &VerifierConfig, metrics: Arc<ServiceMetrics>) -> Self {
        Admission {
            running: Arc::new(Semaphore::new(config.max_sessions.max(1))),
            max_sessions: config.max_sessions.max(1),
            max_queued: config.max_queued,
            max_per_ip: config.max_per_ip.max(1),
            queue_timeout: config.queue_timeout,
            state: Arc::default(),
            draining: AtomicBool::new(false),
            open: Arc::default(),
            metrics,
        }
    }

    fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Completes once no session is open.
    async fn idle(&self) {
        while self.open.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    fn ticket(&self, permit: tokio::sync::OwnedSemaphorePermit, ip: IpShare, open: OpenSession) -> Ticket {
        self.metrics.running.inc();
        Ticket { permit: Running { _permit: permit, metrics: self.metrics.clone() }, ip, open }
    }

    /// A ticket to run now or after a wait in the queue; `VerifierError::Busy` if the server
    /// drains, the client's IP has too many sessions, the queue is full, or the wait ran out.
    async fn admit(&self, ip: IpAddr) -> Result<Ticket, VerifierError> {
        if self.is_draining() {
            return Err(VerifierError::Busy("this verifier is shutting down".into()));
        }
        let open = OpenSession::new(&self.open);
        let share = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let n = s.per_ip.entry(ip).or_insert(0);
            if *n >= self.max_per_ip {
                return Err(VerifierError::Busy(format!("{} sessions from {ip} already", self.max_per_ip)));
            }
            *n += 1;
            IpShare { ip, state: self.state.clone() }
        };
        if let Ok(permit) = self.running.clone().try_acquire_owned() {
            self.metrics.queue_wait.observe(0.0);
            return Ok(self.ticket(permit, share, open));
        }
        {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.queued >= self.max_queued {
                return Err(VerifierError::Busy(format!(
                    "{} sessions running and {} waiting",
                    self.max_sessions, self.max_queued
                )));
            }
            s.queued += 1;
        }
        self.metrics.queued.inc();
        let since = std::time::Instant::now();
        let waited = tokio::time::timeout(self.queue_timeout, self.running.clone().acquire_owned()).await;
        self.state.lock().unwrap_or_else(|e| e.into_inner()).queued -= 1;
        self.metrics.queued.dec();
        match waited {
            Ok(Ok(permit)) => {
                self.metrics.queue_wait.observe(since.elapsed().as_secs_f64());
                Ok(self.ticket(permit, share, open))
            }
            _ => Err(VerifierError::Busy(format!("no turn within {} s", self.queue_timeout.as_secs()))),
        }
    }
}

/// Whether the request head waiting on `tcp` asks for a WebSocket upgrade. Peeks (reads
/// nothing), so whichever server takes the connection sees the whole request. A head that
/// does not arrive in time, or is larger than the peek buffer, goes to the WebSocket side,
/// whose handshake then fails with its own limits.
async fn is_websocket_upgrade(tcp: &TcpStream) -> bool {
    let mut buf = vec![0u8; 8192];
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    loop {
        let n = match tokio::time::timeout_at(deadline, tcp.peek(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => return true,
        };
        let head = &buf[..n];
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
            return head
                .split("\r\n")
                .any(|line| line.strip_prefix("upgrade:").is_some_and(|v| v.contains("websocket")));
        }
        if n == buf.len() || tokio::time::Instant::now() >= deadline {
            return true;
        }
        // peek returns at once while the same bytes wait: give the rest of the head time.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
