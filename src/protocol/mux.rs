//! Several logical channels over one WebSocket between prover and verifier.
//!
//! Each WebSocket message is one frame: `[channel id][payload]`. The driver future owns the
//! socket; it sends frames queued by the channel handles (bounded queue, so a fast producer
//! waits for the socket) and routes received frames to per-channel inboxes. Inboxes are bounded
//! in *bytes*: a peer that floods a channel nobody reads fails the session instead of growing
//! memory without limit.

use crate::transport::{MessageSocket, TransportError};
use crate::channel::{Channel, ChannelError};
use futures::channel::mpsc;
use futures::{FutureExt, SinkExt, StreamExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The logical channels of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ChannelId {
    /// Session setup, reveal plan, verdict.
    Control = 0,
    /// Relayed TLS bytes (proxy mode); an empty payload is a half-close.
    Tls = 1,
    /// The ZK engine's traffic.
    Zk = 2,
}

const CHANNELS: usize = 3;

/// Limits of a multiplexed session.
#[derive(Clone, Copy, Debug)]
pub struct MuxLimits {
    /// Largest payload of one frame (either direction).
    pub max_frame: usize,
    /// Most bytes waiting unread in one channel's inbox.
    pub max_buffered: usize,
}

impl Default for MuxLimits {
    fn default() -> Self {
        MuxLimits { max_frame: 2 << 20, max_buffered: 64 << 20 }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MuxError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("peer sent an empty frame")]
    EmptyFrame,
    #[error("peer used unknown channel {0}")]
    UnknownChannel(u8),
    #[error("peer sent a frame of {len} bytes on channel {channel:?} (limit {max})")]
    FrameTooLarge { channel: ChannelId, len: usize, max: usize },
    #[error("peer sent more than {max} unread bytes on channel {channel:?}")]
    InboxOverflow { channel: ChannelId, max: usize },
    #[error("peer closed the session")]
    PeerClosed,
}

/// One logical channel. Implements the ZK engine's [`Channel`] trait.
pub struct MuxChannel {
    id: ChannelId,
    out: mpsc::Sender<Vec<u8>>,
    inbox: mpsc::UnboundedReceiver<Vec<u8>>,
    buffered: Arc<AtomicUsize>,
    max_frame: usize,
    sent: u64,
    received: u64,
}

impl MuxChannel {
    pub fn id(&self) -> ChannelId {
        self.id
    }
}

impl Channel for MuxChannel {
    async fn send(&mut self, msg: Vec<u8>) -> Result<(), ChannelError> {
        if msg.len() > self.max_frame {
            return Err(ChannelError::TooLarge { len: msg.len(), max: self.max_frame });
        }
        self.sent += msg.len() as u64;
        let mut frame = Vec::with_capacity(msg.len() + 1);
        frame.push(self.id as u8);
        frame.extend_from_slice(&msg);
        self.out.send(frame).await.map_err(|_| ChannelError::Closed)
    }

    async fn recv(&mut self) -> Result<Vec<u8>, ChannelError> {
        let msg = self.inbox.next().await.ok_or(ChannelError::Closed)?;
        self.buffered.fetch_sub(msg.len(), Ordering::Relaxed);
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

/// The channel handles of one session, by purpose.
pub struct SessionChannels {
    pub control: MuxChannel,
    pub tls: MuxChannel,
    pub zk: MuxChannel,
}

/// Splits `socket` into channels. The returned driver must be polled (spawned, or joined with
/// the protocol future) for any channel to make progress; it ends when every handle is dropped
/// (closing the socket), or with an error when the peer misbehaves or disconnects.
pub fn multiplex<S: MessageSocket>(
    mut socket: S,
    limits: MuxLimits,
) -> (impl std::future::Future<Output = Result<(), MuxError>>, SessionChannels) {
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(16);
    let mut inboxes = Vec::with_capacity(CHANNELS);
    let mut handles = Vec::with_capacity(CHANNELS);
    for id in [ChannelId::Control, ChannelId::Tls, ChannelId::Zk] {
        let (tx, rx) = mpsc::unbounded();
        let buffered = Arc::new(AtomicUsize::new(0));
        inboxes.push((id, tx, buffered.clone()));
        handles.push(MuxChannel {
            id,
            out: out_tx.clone(),
            inbox: rx,
            buffered,
            max_frame: limits.max_frame,
            sent: 0,
            received: 0,
        });
    }
    drop(out_tx);
    let mut handles = handles.into_iter();
    let channels = SessionChannels {
        control: handles.next().expect("three channels"),
        tls: handles.next().expect("three channels"),
        zk: handles.next().expect("three channels"),
    };

    let driver = async move {
        let result = drive(&mut socket, &mut out_rx, &inboxes, limits).await;
        // Wake every reader and writer: frames already routed stay readable, then the channels
        // report closed instead of waiting forever.
        drop(inboxes);
        drop(out_rx);
        result
    };
    (driver, channels)
}

type Inbox = (ChannelId, mpsc::UnboundedSender<Vec<u8>>, Arc<AtomicUsize>);

async fn drive<S: MessageSocket>(
    socket: &mut S,
    out_rx: &mut mpsc::Receiver<Vec<u8>>,
    inboxes: &[Inbox],
    limits: MuxLimits,
) -> Result<(), MuxError> {
    loop {
        let event = {
            let outgoing = out_rx.next().fuse();
            let incoming = socket.recv().fuse();
            futures::pin_mut!(outgoing, incoming);
            futures::select_biased! {
                frame = incoming => Err(frame),
                frame = outgoing => Ok(frame),
            }
        };
        match event {
            Ok(Some(frame)) => socket.send(&frame).await?,
            Ok(None) => {
                let _ = socket.close().await;
                return Ok(());
            }
            Err(incoming) => {
                let frame = incoming?.ok_or(MuxError::PeerClosed)?;
                let (&id, payload) = frame.split_first().ok_or(MuxError::EmptyFrame)?;
                let (channel, tx, buffered) = inboxes.get(id as usize).ok_or(MuxError::UnknownChannel(id))?;
                if payload.len() > limits.max_frame {
                    return Err(MuxError::FrameTooLarge { channel: *channel, len: payload.len(), max: limits.max_frame });
                }
                let now = buffered.fetch_add(payload.len(), Ordering::Relaxed) + payload.len();
                if now > limits.max_buffered {
                    return Err(MuxError::InboxOverflow { channel: *channel, max: limits.max_buffered });
                }
                // A handle that was dropped no longer wants its messages; that is fine.
                let _ = tx.unbounded_send(payload.to_vec());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    /// An in-memory MessageSocket pair.
    struct MemSocket {
        tx: mpsc::UnboundedSender<Vec<u8>>,
        rx: mpsc::UnboundedReceiver<Vec<u8>>,
    }

    impl MessageSocket for MemSocket {
        async fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
            self.tx.unbounded_send(msg.to_vec()).map_err(|_| TransportError::Closed { code: 1006, reason: String::new() })
        }
        async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
            Ok(self.rx.next().await)
        }
        async fn close(&mut self) -> Result<(), TransportError> {
            self.tx.close_channel();
            Ok(())
        }
    }

    fn pair() -> (MemSocket, MemSocket) {
        let (a_tx, b_rx) = mpsc::unbounded();
        let (b_tx, a_rx) = mpsc::unbounded();
        (MemSocket { tx: a_tx, rx: a_rx }, MemSocket { tx: b_tx, rx: b_rx })
    }

    #[test]
    fn channels_are_independent_and_ordered() {
        let (a, b) = pair();
        let (drive_a, mut ca) = multiplex(a, MuxLimits::default());
        let (drive_b, mut cb) = multiplex(b, MuxLimits::default());
        let work = async move {
            for i in 0..100u8 {
                ca.zk.send(vec![i; 1000]).await.unwrap();
                ca.tls.send(vec![i]).await.unwrap();
            }
            ca.control.send(b"done".to_vec()).await.unwrap();
            // Reading control first: the other channels' frames wait in their inboxes.
            assert_eq!(cb.control.recv().await.unwrap(), b"done");
            for i in 0..100u8 {
                assert_eq!(cb.tls.recv().await.unwrap(), vec![i]);
            }
            for i in 0..100u8 {
                assert_eq!(cb.zk.recv().await.unwrap(), vec![i; 1000]);
            }
            cb.zk.send(b"back".to_vec()).await.unwrap();
            assert_eq!(ca.zk.recv().await.unwrap(), b"back");
            assert_eq!(ca.zk.bytes_sent(), 100_000);
            assert_eq!(cb.zk.bytes_received(), 100_000);
        };
        block_on(async {
            let drivers = futures::future::select(Box::pin(drive_a), Box::pin(drive_b));
            futures::pin_mut!(work);
            match futures::future::select(work, drivers).await {
                futures::future::Either::Left(_) => {}
                futures::future::Either::Right(_) => panic!("a driver ended before the work"),
            }
        });
    }

    fn drive_raw(frames: Vec<Vec<u8>>, limits: MuxLimits) -> MuxError {
        let (mut raw, b) = pair();
        let (drive_b, _cb) = multiplex(b, limits);
        block_on(async move {
            for f in frames {
                MessageSocket::send(&mut raw, &f).await.unwrap();
            }
            drop(raw);
            drive_b.await.unwrap_err()
        })
    }

    #[test]
    fn misbehaving_peer_is_rejected() {
        let small = MuxLimits { max_frame: 8, max_buffered: 20 };
        assert!(matches!(drive_raw(vec![vec![]], small), MuxError::EmptyFrame));
        assert!(matches!(drive_raw(vec![vec![9, 1]], small), MuxError::UnknownChannel(9)));
        assert!(matches!(drive_raw(vec![vec![2; 10]], small), MuxError::FrameTooLarge { channel: ChannelId::Zk, len: 9, max: 8 }));
        let flood = vec![vec![1, 0, 0, 0, 0, 0, 0, 0]; 4];
        assert!(matches!(drive_raw(flood, small), MuxError::InboxOverflow { channel: ChannelId::Tls, max: 20 }));
        // The peer going away mid-session is an error, not a hang.
        assert!(matches!(drive_raw(vec![], small), MuxError::PeerClosed));
    }

    #[test]
    fn oversized_send_is_refused_locally() {
        let (a, _b) = pair();
        let (_drive, mut ca) = multiplex(a, MuxLimits { max_frame: 4, max_buffered: 100 });
        let err = block_on(ca.zk.send(vec![0; 5])).unwrap_err();
        assert!(matches!(err, ChannelError::TooLarge { len: 5, max: 4 }));
    }
}
