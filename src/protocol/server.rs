//! `tlsproof verifier` as a server: accepts sessions on a WebSocket endpoint, each in its own
//! task, so one bad session never affects another.

use super::verifier::{verify_session, VerifierConfig, VerifierError};
use super::VerifierOutput;
use crate::transport::WsSocket;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// Largest WebSocket message a prover may send (the multiplexer's frame limit plus its header).
const MAX_WS_MESSAGE: usize = (2 << 20) + 16;

/// One finished session, as reported to the embedding program.
pub type SessionReport = (SocketAddr, Result<VerifierOutput, VerifierError>);

pub struct VerifierServer {
    listener: TcpListener,
    config: Arc<VerifierConfig>,
}

impl VerifierServer {
    pub async fn bind(addr: SocketAddr, config: VerifierConfig) -> std::io::Result<VerifierServer> {
        Ok(VerifierServer { listener: TcpListener::bind(addr).await?, config: Arc::new(config) })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves forever; every finished session is sent to `reports`.
    pub async fn run(self, reports: tokio::sync::mpsc::UnboundedSender<SessionReport>) {
        loop {
            let Ok((tcp, peer)) = self.listener.accept().await else { continue };
            let _ = tcp.set_nodelay(true);
            let config = self.config.clone();
            let reports = reports.clone();
            // The proof futures are not `Send` (the engine is generic over `dyn FnMut` circuits)
            // and are CPU-heavy: each session runs on its own blocking thread, driven by the
            // runtime's I/O.
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
    }
}
