//! `tlsproof verifier` as a server: accepts sessions on a WebSocket endpoint, each on its own
//! thread, so one bad session never affects another, and admits them by what they cost
//! ([`admission`](crate::protocol::admission)): the rest wait in a bounded queue, told their
//! place, or are refused `BUSY` with a reason and a retry hint, so a flood costs the verifier
//! bounded memory and every prover an answer.
//! The same port answers plain HTTP ([`http`]): health, readiness and [`metrics`]. Asked to
//! stop ([`VerifierServer::run_until`]), it drains: refuses new sessions, reports not ready,
//! and returns once the running ones have their verdicts.

mod http;
pub mod metrics;

use super::VerifierOutput;
use crate::protocol::admission::budget::Budget;
use crate::protocol::admission::Gate;
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

const BUSY_RESPONSE: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

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
                tokio::spawn(refuse_handshake(tcp));
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
                // Draining: refused before the upgrade, so a load balancer in front tries
                // another verifier (nginx: `proxy_next_upstream http_503`).
                if admission.is_draining() {
                    refuse_handshake(tcp).await;
                    let busy = Err(admission.busy("this verifier is shutting down".into()));
                    metrics.record(&busy);
                    let _ = reports.send((peer, busy));
                    return;
                }
                let ws_config = WebSocketConfig::default()
                    .max_message_size(Some(MAX_WS_MESSAGE))
                    .max_frame_size(Some(MAX_WS_MESSAGE));
                let mut forwarded = None;
                // (the callback's error type is tungstenite's, a whole HTTP response)
                #[allow(clippy::result_large_err)]
                let read_forwarded = |request: &tokio_tungstenite::tungstenite::handshake::server::Request,
                                      response| {
                    forwarded =
                        request.headers().get("x-forwarded-for").and_then(|v| v.to_str().ok()).map(String::from);
                    Ok(response)
                };
                let accepted = tokio::time::timeout(
                    HANDSHAKE_TIMEOUT,
                    tokio_tungstenite::accept_hdr_async_with_config(tcp, read_forwarded, Some(ws_config)),
                )
                .await;
                drop(slot);
                let Ok(Ok(ws)) = accepted else { return };
                let peer = client_address(peer, forwarded.as_deref(), &config.trusted_proxies);
                match admission.arrive(peer.ip()) {
                    Ok(ticket) => spawn_session(ws, peer, ticket, config, admission.gate.clone(), reports, metrics),
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

/// Runs one session on a thread of its own, driven by the runtime's I/O: the proof futures
/// are not `Send` (the engine is generic over `dyn FnMut` circuits) and CPU-heavy. The session
/// waits for its turn there ([`Gate`]); its ticket is held until the verdict is sent.
fn spawn_session(
    ws: WebSocketStream<TcpStream>,
    peer: SocketAddr,
    ticket: Ticket,
    config: Arc<VerifierConfig>,
    gate: Arc<Gate>,
    reports: tokio::sync::mpsc::UnboundedSender<SessionReport>,
    metrics: Arc<ServiceMetrics>,
) {
    let handle = tokio::runtime::Handle::current();
    let run = move || {
        handle.block_on(async move {
            // The ticket's share of the client's IP ends with the verdict; its hold on the
            // session's socket ends once the socket closes (at most 2 s later), which a drain
            // waits for.
            let Ticket { ip, open } = ticket;
            verify_session(WsSocket::from_stream(ws), &config, Some(&gate), |result| {
                drop(ip);
                metrics.record(&result);
                let _ = reports.send((peer, result));
            })
            .await;
            drop(open);
        })
    };
    if let Err(e) = std::thread::Builder::new().name("tlsproof-session".into()).spawn(run) {
        tracing::warn!("cannot start a session's thread: {e}");
    }
}

/// Answers a connection `503 Service Unavailable` with `Retry-After`, before any WebSocket.
async fn refuse_handshake(mut tcp: TcpStream) {
    use tokio::io::AsyncWriteExt;
    let _ = tokio::time::timeout(HANDSHAKE_TIMEOUT, tcp.write_all(BUSY_RESPONSE)).await;
}

/// Tells a prover it was not admitted: `Busy` with the reason and a retry hint on the control
/// channel (which the prover reports as code `BUSY`), then a close with 1013 "try again later", then reads on
/// until the prover closes too (at most [`REFUSAL_DRAIN`] messages, for at most 1 s): closing
/// under a prover still sending its first messages would reset the connection, and the reset
/// can discard the reason unread. A client that floods gets no more of the verifier's time.
async fn refuse(mut ws: WebSocketStream<TcpStream>, busy: &VerifierError) {
    let reason = busy.to_string();
    let message = match busy {
        VerifierError::Busy { reason, retry_after } => {
            ControlMessage::Busy { reason: reason.clone(), retry_after: *retry_after }
        }
        other => ControlMessage::Abort { reason: other.to_string() },
    };
    let abort = [&[0u8][..], &message.encode()].concat();
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

/// Who may open a session: none once the server drains, at most `max_per_ip` open sessions
/// per client IP, and at most the budget's sessions plus the queue's open in all (each holds
/// a thread). What a session costs is the [`Gate`]'s to admit.
struct Admission {
    gate: Arc<Gate>,
    max_per_ip: usize,
    max_open: usize,
    per_ip: Arc<Mutex<HashMap<IpAddr, usize>>>,
    draining: AtomicBool,
    /// Sessions open: waiting, running, or lingering for the prover to read the verdict.
    open: Arc<AtomicUsize>,
}

/// A session's place: its share of its IP's count, and its count among the open sessions a
/// drain waits for; each given back on drop.
struct Ticket {
    ip: IpShare,
    open: OpenSession,
}

/// A session counted as open until dropped.
struct OpenSession(Arc<AtomicUsize>);

impl Drop for OpenSession {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct IpShare {
    ip: IpAddr,
    per_ip: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for IpShare {
    fn drop(&mut self) {
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per_ip.remove(&self.ip);
            }
        }
    }
}

impl Admission {
    fn new(config: &VerifierConfig, metrics: Arc<ServiceMetrics>) -> Self {
        let gauges = metrics.clone();
        let budget = Budget::new(config.budget, move |usage| gauges.usage(usage));
        let limits = budget.limits();
        let gate = Gate {
            budget,
            max_queued: config.max_queued,
            max_wait: config.queue_timeout,
            waited: Box::new(move |d| metrics.queue_wait.observe(d.as_secs_f64())),
        };
        Admission {
            gate: Arc::new(gate),
            max_per_ip: config.max_per_ip.max(1),
            max_open: limits.max_sessions + config.max_queued,
            per_ip: Arc::default(),
            draining: AtomicBool::new(false),
            open: Arc::default(),
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

    fn busy(&self, reason: String) -> VerifierError {
        self.gate.busy(reason).into()
    }

    /// A ticket to open a session; `VerifierError::Busy` if the server drains, the client's IP
    /// has too many sessions open, or too many are open in all.
    fn arrive(&self, ip: IpAddr) -> Result<Ticket, VerifierError> {
        if self.is_draining() {
            return Err(self.busy("this verifier is shutting down".into()));
        }
        if self.open.fetch_add(1, Ordering::SeqCst) >= self.max_open {
            self.open.fetch_sub(1, Ordering::SeqCst);
            return Err(self.busy(format!("{} sessions open", self.max_open)));
        }
        let open = OpenSession(self.open.clone());
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        let n = per_ip.entry(ip).or_insert(0);
        if *n >= self.max_per_ip {
            return Err(self.busy(format!("{} sessions from {ip} already", self.max_per_ip)));
        }
        *n += 1;
        Ok(Ticket { ip: IpShare { ip, per_ip: self.per_ip.clone() }, open })
    }
}

/// The prover's address: the connection's, or, when it comes from a trusted proxy (a load
/// balancer in front), the last address of its `X-Forwarded-For` (the one that proxy appended).
/// Anyone else's header is ignored: a client could name any address there.
fn client_address(peer: SocketAddr, forwarded: Option<&str>, trusted: &[IpAddr]) -> SocketAddr {
    let from_proxy = forwarded
        .filter(|_| trusted.contains(&peer.ip()))
        .and_then(|f| f.rsplit(',').next())
        .and_then(|last| last.trim().parse::<IpAddr>().ok());
    from_proxy.map_or(peer, |ip| SocketAddr::new(ip, peer.port()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_trusted_proxy_names_the_client_address() {
        let proxy: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let trusted = ["127.0.0.1".parse().unwrap()];
        let named = |peer, header| client_address(peer, header, &trusted).ip().to_string();
        // the last address is the one the proxy appended; those before it the client's own claim
        assert_eq!(named(proxy, Some("10.9.9.9, 203.0.113.7")), "203.0.113.7");
        assert_eq!(named(proxy, Some(" 2001:db8::1 ")), "2001:db8::1");
        // no header, or one that is not an address: the connection's
        assert_eq!(named(proxy, None), "127.0.0.1");
        assert_eq!(named(proxy, Some("unknown")), "127.0.0.1");
        // a client that is not a trusted proxy cannot choose its address
        let client: SocketAddr = "198.51.100.4:6000".parse().unwrap();
        assert_eq!(named(client, Some("203.0.113.7")), "198.51.100.4");
        assert_eq!(client_address(proxy, Some("203.0.113.7"), &[]).ip().to_string(), "127.0.0.1");
    }
}
