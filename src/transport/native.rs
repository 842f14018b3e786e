//! Native WebSocket client (tokio-tungstenite).

use super::TransportError;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::error::CapacityError;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A WebSocket, client or server side (`S` is the underlying byte stream).
pub struct WsSocket<S = MaybeTlsStream<TcpStream>> {
    ws: WebSocketStream<S>,
}

impl WsSocket {
    /// Opens a WebSocket to `url` and waits until it is open.
    pub async fn connect(url: &str) -> Result<WsSocket, TransportError> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(super::MAX_INCOMING_MESSAGE))
            .max_frame_size(Some(super::MAX_INCOMING_MESSAGE));
        // Nagle off (`disable_nagle`), as browsers do for their WebSockets and the verifier for
        // its side: the protocol's small messages (a TLS record, a challenge) must not wait for
        // the acknowledgement of the one before.
        let (ws, _resp) =
            tokio_tungstenite::connect_async_with_config(url, Some(config), true).await.map_err(|e| match e {
                tokio_tungstenite::tungstenite::Error::Http(response) if response.status() == 503 => {
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse().ok());
                    TransportError::Busy { url: url.to_string(), retry_after }
                }
                e => TransportError::Connect { url: url.to_string(), reason: e.to_string() },
            })?;
        Ok(WsSocket { ws })
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> WsSocket<S> {
    /// Wraps an accepted (server-side) or otherwise established WebSocket.
    pub(crate) fn from_stream(ws: WebSocketStream<S>) -> Self {
        WsSocket { ws }
    }

    /// Sends one binary message, waiting while the send buffer is full.
    pub async fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
        // `send` flushes, so a slow peer applies backpressure through TCP.
        self.ws.send(Message::binary(data.to_vec())).await.map_err(io)
    }

    /// Next binary payload; `None` if the connection ended without a close frame.
    pub async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        loop {
            match self.ws.next().await {
                None => return Ok(None),
                Some(Err(e)) => return Err(io(e)),
                Some(Ok(Message::Binary(b))) => return Ok(Some(b.to_vec())),
                Some(Ok(Message::Close(frame))) => return Err(closed(frame)),
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Text(_))) => return Err(TransportError::UnexpectedMessage),
            }
        }
    }

    /// Starts the closing handshake.
    pub async fn close(&mut self) -> Result<(), TransportError> {
        match self.ws.close(None).await {
            Ok(()) => Ok(()),
            Err(tokio_tungstenite::tungstenite::Error::ConnectionClosed) => Ok(()),
            Err(e) => Err(io(e)),
        }
    }
}

fn io(e: tokio_tungstenite::tungstenite::Error) -> TransportError {
    match e {
        tokio_tungstenite::tungstenite::Error::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            TransportError::MessageTooBig { len: size, max: max_size }
        }
        e => TransportError::Io(e.to_string()),
    }
}

fn closed(frame: Option<CloseFrame>) -> TransportError {
    match frame {
        Some(f) => TransportError::Closed { code: f.code.into(), reason: f.reason.to_string() },
        None => TransportError::Closed { code: 1005, reason: String::new() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer's oversized message ends the connection with a specific error, and messages up
    /// to the limit still arrive.
    #[tokio::test]
    async fn oversized_incoming_message_is_refused() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            ws.send(Message::binary(vec![1u8; super::super::MAX_INCOMING_MESSAGE])).await.unwrap();
            let _ = ws.send(Message::binary(vec![2u8; super::super::MAX_INCOMING_MESSAGE + 1])).await;
        });
        let mut client = WsSocket::connect(&format!("ws://{addr}/")).await.unwrap();
        assert_eq!(client.recv().await.unwrap().map(|m| m.len()), Some(super::super::MAX_INCOMING_MESSAGE));
        match client.recv().await {
            Err(TransportError::MessageTooBig { len, max }) => assert!(len > max, "{len} {max}"),
            other => panic!("expected MessageTooBig, got {other:?}"),
        }
    }
}
