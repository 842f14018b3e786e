//! The engine talks through an abstract duplex message channel: an in-memory pipe in tests,
//! a multiplexed WebSocket channel in the protocol.

use futures::channel::mpsc;
use futures::StreamExt;

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("peer closed the channel")]
    Closed,
    #[error("message of {len} bytes exceeds the limit of {max}")]
    TooLarge { len: usize, max: usize },
    #[error("transport error: {0}")]
    Transport(String),
}

/// A reliable, ordered duplex channel of byte messages.
#[allow(async_fn_in_trait)]
pub trait Channel {
    async fn send(&mut self, msg: Vec<u8>) -> Result<(), ChannelError>;
    async fn recv(&mut self) -> Result<Vec<u8>, ChannelError>;
    /// Total payload bytes sent so far (for benchmarks).
    fn bytes_sent(&self) -> u64;
    /// Total payload bytes received so far.
    fn bytes_received(&self) -> u64;
}

/// The largest message [`send_chunked`] sends.
pub(crate) const CHUNK: usize = 256 * 1024;

/// Sends `data` as messages of at most [`CHUNK`] bytes (none when it is empty: a session's
/// transport refuses empty messages), to a peer that knows its length and takes it with
/// [`recv_chunked`].
pub(crate) async fn send_chunked<C: Channel>(ch: &mut C, data: &[u8]) -> Result<(), ChannelError> {
    for chunk in data.chunks(CHUNK) {
        ch.send(chunk.to_vec()).await?;
    }
    Ok(())
}

/// Takes exactly `total` bytes sent with [`send_chunked`]; refuses a message that would go
/// beyond them.
pub(crate) async fn recv_chunked<C: Channel>(ch: &mut C, total: usize) -> Result<Vec<u8>, ChannelError> {
    let mut out = Vec::with_capacity(total.min(CHUNK));
    while out.len() < total {
        let msg = ch.recv().await?;
        if out.len() + msg.len() > total || msg.len() > CHUNK {
            return Err(ChannelError::TooLarge { len: out.len() + msg.len(), max: total });
        }
        if msg.is_empty() {
            return Err(ChannelError::Transport("an empty chunk before the end".into()));
        }
        out.extend_from_slice(&msg);
    }
    Ok(out)
}

/// One end of an in-memory channel pair.
pub struct MemoryChannel {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    rx: mpsc::UnboundedReceiver<Vec<u8>>,
    max_message: usize,
    sent: u64,
    received: u64,
}

/// Two connected in-memory ends; messages above `max_message` bytes are refused.
pub fn memory_pair(max_message: usize) -> (MemoryChannel, MemoryChannel) {
    let (atx, brx) = mpsc::unbounded();
    let (btx, arx) = mpsc::unbounded();
    let mk = |tx, rx| MemoryChannel { tx, rx, max_message, sent: 0, received: 0 };
    (mk(atx, arx), mk(btx, brx))
}

impl Channel for MemoryChannel {
    async fn send(&mut self, msg: Vec<u8>) -> Result<(), ChannelError> {
        if msg.len() > self.max_message {
            return Err(ChannelError::TooLarge { len: msg.len(), max: self.max_message });
        }
        self.sent += msg.len() as u64;
        self.tx.unbounded_send(msg).map_err(|_| ChannelError::Closed)
    }

    async fn recv(&mut self) -> Result<Vec<u8>, ChannelError> {
        let msg = self.rx.next().await.ok_or(ChannelError::Closed)?;
        self.received += msg.len() as u64;
        Ok(msg)
    }

    fn bytes_sent(&self) -> u64 {
        self.sent
    }
    fn bytes_received(&self) -> u64 {
        self.received
    }
}

/// Test helpers shared by the engine's unit tests.
#[cfg(test)]
pub(crate) mod test_util {
    use super::{Channel, ChannelError, MemoryChannel};

    /// Wraps a channel and lets a test rewrite the k-th message this end sends (k counts from 0
    /// at wrapping time): a man in the middle standing in for a cheating party.
    pub(crate) struct Tampering<F: FnMut(usize, &mut Vec<u8>)> {
        inner: MemoryChannel,
        sent: usize,
        tamper: F,
    }

    impl<F: FnMut(usize, &mut Vec<u8>)> Channel for Tampering<F> {
        async fn send(&mut self, mut msg: Vec<u8>) -> Result<(), ChannelError> {
            (self.tamper)(self.sent, &mut msg);
            self.sent += 1;
            self.inner.send(msg).await
        }
        async fn recv(&mut self) -> Result<Vec<u8>, ChannelError> {
            self.inner.recv().await
        }
        fn bytes_sent(&self) -> u64 {
            self.inner.bytes_sent()
        }
        fn bytes_received(&self) -> u64 {
            self.inner.bytes_received()
        }
    }

    pub(crate) fn tampering<F: FnMut(usize, &mut Vec<u8>)>(inner: MemoryChannel, tamper: F) -> Tampering<F> {
        Tampering { inner, sent: 0, tamper }
    }
}
