//! `tlsproof verifier` as a server: accepts sessions on a WebSocket endpoint, each in its own
//! task, so one bad session never affects another.

use super::verifier::{verify_session, VerifierConfig, VerifierError};
use super::VerifierOutput;
use crate::transport::WsSocket;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// Largest WebSocket message a prover may send (the multiplexer's frame limit plus its header).
const MAX_WS_MESSAGE: usize = (2 << 20) + 16;

/// One finished session, as reported to the embedding program.
pub type SessionReport = (SocketAddr, Result<VerifierOutput, VerifierError>);

pub struct VerifierServer {
    listener: TcpListener,
    config: Arc<VerifierConfig>,
    /// Where connections that are not WebSocket upgrades go (e.g. a web server for a page
    /// that runs the prover); `None`: they fail the WebSocket handshake.
    http: Option<tokio::sync::mpsc::UnboundedSender<(TcpStream, SocketAddr)>>,
}

/// How long a client may take to send its request head before the dispatch gives up.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl VerifierServer {
    pub async fn bind(addr: SocketAddr, config: VerifierConfig) -> std::io::Result<VerifierServer> {
        Ok(VerifierServer { listener: TcpListener::bind(addr).await?, config: Arc::new(config), http: None })
    }

    /// Hands connections that are not WebSocket upgrades to `http` instead of failing them, so
    /// one port serves both the sessions and a page (`tlsproof verifier --www`).
    pub fn with_http(mut self, http: tokio::sync::mpsc::UnboundedSender<(TcpStream, SocketAddr)>) -> Self {
        self.http = Some(http);
        self
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves forever; every finished session is sent to `reports`.
    pub async fn run(self, reports: tokio::sync::mpsc::UnboundedSender<SessionReport>) {
        loop {
            let Ok((tcp, peer)) = self.listener.accept().await else { continue };
            let _ = tcp.set_nodelay(true);
            if let Some(http) = &self.http {
                let http = http.clone();
                let config = self.config.clone();
                let reports = reports.clone();
                tokio::spawn(async move {
                    if is_websocket_upgrade(&tcp).await {
                        spawn_session(tcp, peer, config, reports);
                    } else {
                        let _ = http.send((tcp, peer));
                    }
                });
                continue;
            }
            spawn_session(tcp, peer, self.config.clone(), reports.clone());
        }
    }
}

/// Runs one session on its own blocking thread, driven by the runtime's I/O: the proof
/// futures are not `Send` (the engine is generic over `dyn FnMut` circuits) and CPU-heavy.
fn spawn_session(tcp: TcpStream, peer: SocketAddr, config: Arc<VerifierConfig>, reports: tokio::sync::mpsc::UnboundedSender<SessionReport>) {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(async move {
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(MAX_WS_MESSAGE))
            .max_frame_size(Some(MAX_WS_MESSAGE));
        let accepted = tokio::time::timeout(config.step_timeout, tokio_tungstenite::accept_async_with_config(tcp, Some(ws_config))).await;
        let Ok(Ok(ws)) = accepted else { return };
        let result = verify_session(WsSocket::from_stream(ws), &config).await;
        let _ = reports.send((peer, result));
    }));
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
