//! A byte stream over one WebSocket, the same API natively (tokio-tungstenite) and in the
//! browser (web-sys `WebSocket`).
//!
//! Framing convention shared with `tlsproof proxy`: every binary message carries stream bytes;
//! an **empty** binary message means "no more bytes in this direction" (a TCP half-close);
//! a close frame ends both directions and carries the reason (e.g. why the proxy refused).

#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(target_arch = "wasm32")]
mod web;

/// One WebSocket carrying binary messages (native: tokio-tungstenite; browser: web-sys).
#[cfg(not(target_arch = "wasm32"))]
pub use native::WsSocket;
#[cfg(target_arch = "wasm32")]
pub use web::WsSocket;

/// Close codes the proxy uses (RFC 6455 §7.4; the 4xxx ones are ours: 1014 "bad gateway"
/// is registered but many WebSocket stacks reject it, so a private code stands in).
pub mod close_code {
    pub(crate) const NORMAL: u16 = 1000;
    pub(crate) const UNSUPPORTED_DATA: u16 = 1003;
    pub const POLICY: u16 = 1008;
    pub const TOO_BIG: u16 = 1009;
    pub const TRY_AGAIN_LATER: u16 = 1013;
    pub const BAD_GATEWAY: u16 = 4502;
    pub const IDLE_TIMEOUT: u16 = 4000;
}

/// Largest payload we put in one WebSocket message (the proxy's default limit is larger).
pub(crate) const MAX_CHUNK: usize = 16 * 1024;

/// Largest WebSocket message a client accepts (the session multiplexer's frames are at most
/// 2 MiB; the proxy's chunks far less). Bigger ones end the connection with
/// [`TransportError::MessageTooBig`] before they are copied anywhere.
pub(crate) const MAX_INCOMING_MESSAGE: usize = 4 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("could not open WebSocket to {url}: {reason}")]
    Connect { url: String, reason: String },
    /// The server (or a load balancer before it) answered the WebSocket handshake with `503
    /// Service Unavailable`, with a `Retry-After` in seconds if it gave one. Browsers do not
    /// show a failed handshake's status, so only native clients see this.
    #[error("{url} is busy (HTTP 503){}", .retry_after.map(|s| format!("; try again in {s} s")).unwrap_or_default())]
    Busy { url: String, retry_after: Option<u32> },
    /// The peer closed the WebSocket; `code` and `reason` are what it said (RFC 6455 §7.4).
    #[error("connection closed by peer (code {code}): {reason}")]
    Closed { code: u16, reason: String },
    #[error("peer sent a non-binary message")]
    UnexpectedMessage,
    #[error("stream exceeded the limit of {limit} bytes")]
    LimitExceeded { limit: usize },
    #[error("peer sent a WebSocket message of {len} bytes, more than the limit of {max}")]
    MessageTooBig { len: usize, max: usize },
    #[error("write after shutdown_write")]
    WriteAfterShutdown,
    #[error("transport error: {0}")]
    Io(String),
}

/// A duplex byte stream carried in binary WebSocket messages.
pub struct WsStream {
    socket: WsSocket,
    /// Bytes received but not yet handed to `read`.
    pending: Vec<u8>,
    pending_pos: usize,
    /// The peer half-closed (sent an empty message).
    read_eof: bool,
    write_shut: bool,
}

impl WsStream {
    /// Opens a WebSocket to `url` (for the proxy: `ws://HOST:PORT/?target=HOST:PORT`).
    pub async fn connect(url: &str) -> Result<WsStream, TransportError> {
        let socket = WsSocket::connect(url).await?;
        Ok(WsStream { socket, pending: Vec::new(), pending_pos: 0, read_eof: false, write_shut: false })
    }

    /// Sends all of `data`, in messages of at most [`MAX_CHUNK`] bytes. Waits while the
    /// socket's send buffer is full (backpressure).
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), TransportError> {
        if self.write_shut {
            return Err(TransportError::WriteAfterShutdown);
        }
        for chunk in data.chunks(MAX_CHUNK) {
            self.socket.send(chunk).await?;
        }
        Ok(())
    }

    /// Half-closes: tells the peer no more bytes follow from us. Reading still works.
    pub async fn shutdown_write(&mut self) -> Result<(), TransportError> {
        if !self.write_shut {
            self.write_shut = true;
            self.socket.send(&[]).await?;
        }
        Ok(())
    }

    /// Reads some bytes into `buf`; `Ok(0)` means the peer half-closed.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize, TransportError> {
        while self.pending_pos == self.pending.len() {
            if self.read_eof {
                return Ok(0);
            }
            match self.socket.recv().await? {
                Some(msg) if msg.is_empty() => self.read_eof = true,
                Some(msg) => {
                    self.pending = msg;
                    self.pending_pos = 0;
                }
                None => return Err(TransportError::Closed { code: 1006, reason: "connection dropped".into() }),
            }
        }
        let n = buf.len().min(self.pending.len() - self.pending_pos);
        buf[..n].copy_from_slice(&self.pending[self.pending_pos..self.pending_pos + n]);
        self.pending_pos += n;
        Ok(n)
    }

    /// Reads until the peer half-closes or closes normally, refusing more than `limit` bytes.
    pub async fn read_to_end(&mut self, limit: usize) -> Result<Vec<u8>, TransportError> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; MAX_CHUNK];
        loop {
            let n = match self.read(&mut buf).await {
                Ok(n) => n,
                // A normal close after the data counts as end of stream.
                Err(TransportError::Closed { code: 1000, .. }) => 0,
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok(out);
            }
            if out.len() + n > limit {
                return Err(TransportError::LimitExceeded { limit });
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    /// Closes the WebSocket normally.
    pub async fn close(mut self) -> Result<(), TransportError> {
        self.socket.close().await
    }
}

/// TLS runs over the WebSocket stream unchanged (the proxy and the browser demo use this).
impl crate::tls::driver::ByteIo for WsStream {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, crate::tls::Error> {
        WsStream::read(self, buf).await.map_err(|e| crate::tls::Error::Io(e.to_string()))
    }
    async fn write_all(&mut self, data: &[u8]) -> Result<(), crate::tls::Error> {
        WsStream::write_all(self, data).await.map_err(|e| crate::tls::Error::Io(e.to_string()))
    }
}

/// A reliable, ordered channel of binary messages: what the session multiplexer runs on.
/// Implemented by [`WsSocket`] on both platforms (client and, natively, server side).
#[allow(async_fn_in_trait)]
pub trait MessageSocket {
    async fn send(&mut self, msg: &[u8]) -> Result<(), TransportError>;
    /// `None` when the connection ended without a close frame.
    async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError>;
    async fn close(&mut self) -> Result<(), TransportError>;
}

#[cfg(target_arch = "wasm32")]
impl MessageSocket for WsSocket {
    async fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        WsSocket::send(self, msg).await
    }
    async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        WsSocket::recv(self).await
    }
    async fn close(&mut self) -> Result<(), TransportError> {
        WsSocket::close(self).await
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> MessageSocket for WsSocket<S> {
    async fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        WsSocket::send(self, msg).await
    }
    async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        WsSocket::recv(self).await
    }
    async fn close(&mut self) -> Result<(), TransportError> {
        WsSocket::close(self).await
    }
}

/// Sleeps without blocking the thread, natively (tokio) and in the browser (setTimeout).
pub async fn sleep(d: std::time::Duration) {
    #[cfg(not(target_arch = "wasm32"))]
    tokio::time::sleep(d).await;
    #[cfg(target_arch = "wasm32")]
    web::sleep_ms(d.as_millis().min(i32::MAX as u128) as i32).await;
}

/// Runs `f`, or gives up with `None` after `d`.
pub async fn timeout<T>(d: std::time::Duration, f: impl std::future::Future<Output = T>) -> Option<T> {
    use futures::FutureExt;
    let f = f.fuse();
    let t = sleep(d).fuse();
    futures::pin_mut!(f, t);
    futures::select! {
        v = f => Some(v),
        _ = t => None,
    }
}

/// Test-only: a connected pair of in-memory sockets (a session's two ends without a network).
#[cfg(test)]
pub(crate) mod memory {
    use super::{MessageSocket, TransportError};
    use futures::channel::mpsc;
    use futures::StreamExt;

    pub(crate) struct MemSocket {
        tx: mpsc::UnboundedSender<Vec<u8>>,
        pub(crate) rx: mpsc::UnboundedReceiver<Vec<u8>>,
    }

    impl MessageSocket for MemSocket {
        async fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
            self.tx
                .unbounded_send(msg.to_vec())
                .map_err(|_| TransportError::Closed { code: 1006, reason: String::new() })
        }
        async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
            Ok(self.rx.next().await)
        }
        async fn close(&mut self) -> Result<(), TransportError> {
            self.tx.close_channel();
            Ok(())
        }
    }

    pub(crate) fn pair() -> (MemSocket, MemSocket) {
        let (a_tx, b_rx) = mpsc::unbounded();
        let (b_tx, a_rx) = mpsc::unbounded();
        (MemSocket { tx: a_tx, rx: a_rx }, MemSocket { tx: b_tx, rx: b_rx })
    }
}
