//! `tlsproof proxy`: a WebSocket-to-TCP bridge, because browsers cannot open TCP sockets.
//!
//! A client opens `ws://PROXY/?target=HOST:PORT`; binary messages carry the TCP bytes both
//! ways, an empty binary message is a half-close (see [`crate::transport`]), and every refusal
//! or failure ends the WebSocket with a close code and a readable reason.

mod policy;

pub use policy::{AllowList, AllowListError, Refusal};

use futures::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

pub use crate::transport::close_code;

/// Proxy limits and policy. The defaults are safe: nothing is allowed.
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    pub allow: AllowList,
    /// Concurrent client connections; further clients are closed with 1013.
    pub max_connections: usize,
    /// A connection with no traffic in either direction for this long is closed with 4000.
    pub idle_timeout: Duration,
    /// Largest WebSocket message accepted from a client; larger ones are closed with 1009.
    pub max_message: usize,
    /// Time allowed for resolving and connecting to the target.
    pub connect_timeout: Duration,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            allow: AllowList::default(),
            max_connections: 256,
            idle_timeout: Duration::from_secs(60),
            max_message: 64 * 1024,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// A bound proxy, ready to [`run`](ProxyServer::run).
pub struct ProxyServer {
    listener: TcpListener,
    config: Arc<ProxyConfig>,
    slots: Arc<Semaphore>,
}

impl ProxyServer {
    pub async fn bind(addr: SocketAddr, config: ProxyConfig) -> std::io::Result<ProxyServer> {
        let listener = TcpListener::bind(addr).await?;
        let slots = Arc::new(Semaphore::new(config.max_connections));
        Ok(ProxyServer { listener, config: Arc::new(config), slots })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves clients forever; each runs in its own task, so one bad client affects no other.
    pub async fn run(self) {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let config = self.config.clone();
            let slots = self.slots.clone();
            tokio::spawn(async move {
                if let Err(e) = serve_client(stream, config, slots).await {
                    tracing::debug!(%peer, "client ended: {e}");
                }
            });
        }
    }
}

// The handshake callback's error type is tungstenite's (an HTTP response), not ours to shrink.
#[allow(clippy::result_large_err)]
async fn serve_client(stream: TcpStream, config: Arc<ProxyConfig>, slots: Arc<Semaphore>) -> Result<(), WsError> {
    let _ = stream.set_nodelay(true);
    let ws_config =
        WebSocketConfig::default().max_message_size(Some(config.max_message)).max_frame_size(Some(config.max_message));
    let mut query = None;
    let capture = |req: &Request, resp: Response| {
        query = req.uri().query().map(str::to_string);
        Ok(resp)
    };
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(stream, capture, Some(ws_config));
    let mut ws = tokio::time::timeout(config.connect_timeout, handshake)
        .await
        .map_err(|_| WsError::Io(std::io::ErrorKind::TimedOut.into()))??;

    let Ok(_slot) = slots.try_acquire_owned() else {
        let reason = format!("too many connections (limit {})", config.max_connections);
        return close(&mut ws, close_code::TRY_AGAIN_LATER, &reason).await;
    };
    let target = query.as_deref().and_then(target_param);
    let Some(target) = target else {
        return close(&mut ws, close_code::POLICY, &Refusal::BadTarget.to_string()).await;
    };
    let addrs = match tokio::time::timeout(config.connect_timeout, config.allow.resolve(&target)).await {
        Ok(Ok(addrs)) => addrs,
        Ok(Err(refusal)) => return close(&mut ws, close_code::POLICY, &format!("the proxy refused: {refusal}")).await,
        Err(_) => return close(&mut ws, close_code::BAD_GATEWAY, &format!("resolving {target} timed out")).await,
    };
    let tcp = match tokio::time::timeout(config.connect_timeout, TcpStream::connect(&addrs[..])).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(e)) => {
            return close(&mut ws, close_code::BAD_GATEWAY, &format!("cannot connect to {target}: {e}")).await
        }
        Err(_) => return close(&mut ws, close_code::BAD_GATEWAY, &format!("connecting to {target} timed out")).await,
    };
    let _ = tcp.set_nodelay(true);
    relay(ws, tcp, &config).await
}

/// The value of `target=` in a query string (no percent-decoding needed for HOST:PORT,
/// but `%3A` is accepted for clients that encode the colon).
fn target_param(query: &str) -> Option<String> {
    query.split('&').find_map(|kv| kv.strip_prefix("target=")).map(|v| v.replace("%3A", ":").replace("%3a", ":"))
}

async fn relay(mut ws: WebSocketStream<TcpStream>, tcp: TcpStream, config: &ProxyConfig) -> Result<(), WsError> {
    let (mut tcp_r, mut tcp_w) = tcp.into_split();
    let mut buf = vec![0u8; config.max_message.clamp(1, 16 * 1024)];
    let (mut client_done, mut target_done) = (false, false);
    loop {
        if client_done && target_done {
            return close(&mut ws, close_code::NORMAL, "stream finished").await;
        }
        tokio::select! {
            msg = ws.next() => match msg {
                None | Some(Ok(Message::Close(_))) => return Ok(()),
                Some(Err(WsError::Capacity(e))) => {
                    let reason = format!("message too big (limit {} bytes): {e}", config.max_message);
                    return close(&mut ws, close_code::TOO_BIG, &reason).await;
                }
                Some(Err(e)) => return Err(e),
                Some(Ok(Message::Binary(b))) if b.is_empty() => {
                    client_done = true;
                    let _ = tcp_w.shutdown().await;
                }
                Some(Ok(Message::Binary(b))) => {
                    if client_done {
                        return close(&mut ws, close_code::POLICY, "data after half-close").await;
                    }
                    if let Err(e) = tcp_w.write_all(&b).await {
                        return close(&mut ws, close_code::BAD_GATEWAY, &format!("write to target failed: {e}")).await;
                    }
                }
                Some(Ok(Message::Text(_))) => {
                    return close(&mut ws, close_code::UNSUPPORTED_DATA, "binary messages only").await;
                }
                Some(Ok(_)) => {} // ping/pong
            },
            n = tcp_r.read(&mut buf), if !target_done => match n {
                Ok(0) => {
                    target_done = true;
                    ws.send(Message::binary(Vec::new())).await?;
                }
                Ok(n) => ws.send(Message::binary(buf[..n].to_vec())).await?,
                Err(e) => return close(&mut ws, close_code::BAD_GATEWAY, &format!("read from target failed: {e}")).await,
            },
            _ = tokio::time::sleep(config.idle_timeout) => {
                let reason = format!("idle timeout after {} s", config.idle_timeout.as_secs_f32());
                return close(&mut ws, close_code::IDLE_TIMEOUT, &reason).await;
            }
        }
    }
}

/// Sends a close frame with `reason` (cut to the 123 bytes a close frame allows) and waits
/// briefly for the client's reply so the reason is delivered.
async fn close(ws: &mut WebSocketStream<TcpStream>, code: u16, reason: &str) -> Result<(), WsError> {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame { code: CloseCode::from(code), reason: reason[..end].to_string().into() };
    ws.close(Some(frame)).await?;
    let drain = async { while let Some(Ok(_)) = ws.next().await {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    Ok(())
}
