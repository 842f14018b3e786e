//! Several logical channels over one WebSocket between prover and verifier.
//!
//! Each WebSocket message is one frame: `[channel id][payload]`. The driver future owns the
//! socket; it sends frames queued by the channel handles (a bounded queue per channel, so a
//! fast producer waits for the socket) and routes received frames to per-channel inboxes.
//! Inboxes are bounded in *bytes*, each frame charged [`FRAME_COST`] beyond its payload, so a
//! peer that floods a channel nobody reads (even with empty or one-byte frames) fails the
//! session instead of growing memory without limit. Empty payloads are refused, but for the
//! one that half-closes the TLS channel, and so are frames on a channel its owner
//! [refused](MuxChannel::refuse) (one the session's mode does not use).
//!
//! **Flow control.** A channel's small message must not wait behind megabytes of another's:
//! MPC mode streams garbled tables on one channel while Ferret runs on another, and every
//! buffer between the two drivers (the sender's TCP buffer, a router's queue, a browser's
//! WebSocket) would otherwise hold the tables ahead of it. So each driver keeps at most
//! [`MuxLimits::window`] bytes of frames unacknowledged, the peer's driver acknowledges every
//! [`ACK_EVERY`] bytes it receives with an [`ACK`] frame, and the frames waiting are sent
//! round-robin by channel. A message then waits for at most one window (plus one frame of each
//! other channel) in the network; the window is well above the bandwidth-delay products of the
//! links we measure, so bulk transfers are not slowed.

use crate::channel::{Channel, ChannelError};
use crate::transport::{MessageSocket, TransportError};
use futures::channel::mpsc;
use futures::{FutureExt, SinkExt, StreamExt};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;

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
    /// COTs made beside MPC mode's connection (see `crate::mpc::cots_beside`).
    Cot = 3,
}

const CHANNELS: usize = 4;
const IDS: [ChannelId; CHANNELS] = [ChannelId::Control, ChannelId::Tls, ChannelId::Zk, ChannelId::Cot];

/// The id of an acknowledgement frame: its payload is the sender's count of frame bytes (ids
/// included) received on channels so far, as a little-endian u64.
pub(crate) const ACK: u8 = 0xff;

/// Received bytes between acknowledgements.
pub(crate) const ACK_EVERY: u64 = 64 << 10;

/// Frames queued per channel before its sender waits.
const QUEUE: usize = 8;

/// Frames the driver routes before it lets the protocol beside it run.
const ROUTE_BEFORE_YIELD: u64 = 64;

/// What a received frame is charged against its inbox's limit beyond its payload: at least
/// what a queued frame costs in memory besides it (its node in the queue and the payload's
/// allocation, ≈ 80 bytes on 64-bit targets).
pub(crate) const FRAME_COST: usize = 128;

/// Limits of a multiplexed session.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MuxLimits {
    /// Largest payload of one frame (either direction).
    pub max_frame: usize,
    /// Most bytes waiting unread in one channel's inbox (payloads and [`FRAME_COST`] each),
    /// but control's.
    pub max_buffered: usize,
    /// The same for the control channel.
    pub max_control_buffered: usize,
    /// Most bytes sent and not yet acknowledged (at least `2 · ACK_EVERY`; a frame starts
    /// while fewer are outstanding).
    pub window: usize,
}

impl Default for MuxLimits {
    fn default() -> Self {
        MuxLimits { max_frame: 2 << 20, max_buffered: 64 << 20, max_control_buffered: 64 << 20, window: 1 << 20 }
    }
}

impl MuxLimits {
    /// The verifier's: what a prover sends on control (the request, the byte counts, the
    /// reveal plan, TLS 1.3's record shapes) is each well under 1 MiB, read as it comes, so its
    /// inbox holds at most that. A prover's control inbox takes the verdict, which carries the
    /// revealed transcript. The other inboxes hold 64 KiB until the session is admitted (an
    /// honest proxy-mode prover's first OT messages, sent as it asks for the session), so that
    /// a session waiting for its turn costs little whatever its peer sends; the verifier raises
    /// them then ([`MuxChannel::set_inbox_limit`]).
    pub(crate) fn verifier() -> Self {
        MuxLimits { max_control_buffered: 1 << 20, max_buffered: 64 << 10, ..MuxLimits::default() }
    }

    fn inbox_limit(&self, channel: ChannelId) -> usize {
        match channel {
            ChannelId::Control => self.max_control_buffered,
            _ => self.max_buffered,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MuxError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("peer sent an empty frame")]
    EmptyFrame,
    #[error("peer sent an empty payload on channel {0:?}")]
    EmptyPayload(ChannelId),
    #[error("peer sent a frame on channel {0:?}, which this session does not use")]
    UnusedChannel(ChannelId),
    #[error("peer sent on the TLS channel after closing it")]
    AfterHalfClose,
    #[error("peer used unknown channel {0}")]
    UnknownChannel(u8),
    #[error("peer sent a frame of {len} bytes on channel {channel:?} (limit {max})")]
    FrameTooLarge { channel: ChannelId, len: usize, max: usize },
    #[error("peer sent more than {max} unread bytes on channel {channel:?}")]
    InboxOverflow { channel: ChannelId, max: usize },
    #[error("peer acknowledged {acked} bytes, of {sent} sent (after acknowledging {before})")]
    BadAck { acked: u64, sent: u64, before: u64 },
    #[error("peer closed the session")]
    PeerClosed,
}

/// One logical channel. Implements the ZK engine's [`Channel`] trait.
pub(crate) struct MuxChannel {
    id: ChannelId,
    out: mpsc::Sender<Vec<u8>>,
    inbox: mpsc::UnboundedReceiver<Vec<u8>>,
    buffered: Arc<AtomicUsize>,
    refused: Arc<AtomicBool>,
    limit: Arc<AtomicUsize>,
    max_frame: usize,
    sent: u64,
    received: u64,
}

impl MuxChannel {
    #[cfg(test)]
    pub(crate) fn id(&self) -> ChannelId {
        self.id
    }

    /// Gives the channel up as one the session does not use: from now on a frame the peer
    /// sends on it fails the session ([`MuxError::UnusedChannel`]), and what it had sent is
    /// dropped. (A handle merely dropped discards what comes, as at a session's end.)
    pub(crate) fn refuse(self) {
        self.refused.store(true, Ordering::Relaxed);
    }

    /// Bounds the bytes waiting unread in this channel's inbox from now on (its
    /// [`MuxLimits`] at first): a frame beyond fails the session ([`MuxError::InboxOverflow`]).
    pub(crate) fn set_inbox_limit(&self, max: usize) {
        self.limit.store(max, Ordering::Relaxed);
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
        self.out.send(frame).await.map_err(|_| ChannelError::Closed)?;
        // The driver shares the caller's task: let it write the frame now, before the caller
        // goes on computing (a proof batch held back the Ferret check's last message 20 ms).
        yield_once().await;
        Ok(())
    }

    async fn recv(&mut self) -> Result<Vec<u8>, ChannelError> {
        let msg = self.inbox.next().await.ok_or(ChannelError::Closed)?;
        self.buffered.fetch_sub(msg.len() + FRAME_COST, Ordering::Relaxed);
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

/// Returns `Pending` once (waking its task at once), so that the futures polled beside the
/// caller's in the same task run before it goes on.
fn yield_once() -> impl std::future::Future<Output = ()> {
    let mut yielded = false;
    futures::future::poll_fn(move |cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}

/// The channel handles of one session, by purpose. The driver ends once all are dropped.
pub(crate) struct SessionChannels {
    pub control: MuxChannel,
    pub tls: MuxChannel,
    pub zk: MuxChannel,
    pub cot: MuxChannel,
}

/// Splits `socket` into channels. The returned driver must be polled (spawned, or joined with
/// the protocol future, polled before it so that a frame sent goes out before the protocol
/// computes on) for any channel to make progress; it ends when every handle is dropped
/// (closing the socket), or with an error when the peer misbehaves or disconnects.
pub(crate) fn multiplex<S: MessageSocket>(
    mut socket: S,
    limits: MuxLimits,
) -> (impl std::future::Future<Output = Result<(), MuxError>>, SessionChannels) {
    let mut inboxes = Vec::with_capacity(CHANNELS);
    let mut queues = Vec::with_capacity(CHANNELS);
    let mut handles = Vec::with_capacity(CHANNELS);
    for id in IDS {
        let (tx, rx) = mpsc::unbounded();
        let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(QUEUE);
        let buffered = Arc::new(AtomicUsize::new(0));
        let refused = Arc::new(AtomicBool::new(false));
        let limit = Arc::new(AtomicUsize::new(limits.inbox_limit(id)));
        inboxes.push(Inbox { id, tx, buffered: buffered.clone(), refused: refused.clone(), limit: limit.clone() });
        queues.push(out_rx);
        handles.push(MuxChannel {
            id,
            out: out_tx,
            inbox: rx,
            buffered,
            refused,
            limit,
            max_frame: limits.max_frame,
            sent: 0,
            received: 0,
        });
    }
    let mut handles = handles.into_iter();
    let mut next = || handles.next().expect("a handle per channel");
    let channels = SessionChannels { control: next(), tls: next(), zk: next(), cot: next() };

    let driver = async move {
        let mut outgoing = Outgoing::new(queues, limits.window);
        let result = drive(&mut socket, &mut outgoing, &inboxes, limits).await;
        // Wake every reader and writer: frames already routed stay readable, then the channels
        // report closed instead of waiting forever.
        drop(inboxes);
        drop(outgoing);
        result
    };
    (driver, channels)
}

/// The driver's end of a channel's inbox.
struct Inbox {
    id: ChannelId,
    tx: mpsc::UnboundedSender<Vec<u8>>,
    /// Bytes charged for the frames waiting ([`FRAME_COST`] each beyond the payload).
    buffered: Arc<AtomicUsize>,
    /// Set by [`MuxChannel::refuse`].
    refused: Arc<AtomicBool>,
    /// Most bytes charged at once ([`MuxChannel::set_inbox_limit`]).
    limit: Arc<AtomicUsize>,
}

/// The sending half of the driver: each channel's queue, the frame taken from it and waiting
/// for the window, and the bytes outstanding.
struct Outgoing {
    queues: Vec<mpsc::Receiver<Vec<u8>>>,
    waiting: Vec<Option<Vec<u8>>>,
    open: Vec<bool>,
    /// The channel served first next time (round-robin).
    next: usize,
    sent: u64,
    acked: u64,
    window: u64,
}

impl Outgoing {
    fn new(queues: Vec<mpsc::Receiver<Vec<u8>>>, window: usize) -> Self {
        let n = queues.len();
        Outgoing {
            queues,
            waiting: vec![None; n],
            open: vec![true; n],
            next: 0,
            sent: 0,
            acked: 0,
            window: (window as u64).max(2 * ACK_EVERY),
        }
    }

    /// The next frame to send: `Ready(None)` once every handle is dropped and its queue drained;
    /// `Pending` while nothing waits, or while the window is full (the acknowledgement that
    /// opens it arrives on the socket, which wakes the driver).
    fn poll_frame(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Option<Vec<u8>>> {
        for i in 0..self.queues.len() {
            if self.waiting[i].is_none() && self.open[i] {
                match self.queues[i].poll_next_unpin(cx) {
                    Poll::Ready(Some(frame)) => self.waiting[i] = Some(frame),
                    Poll::Ready(None) => self.open[i] = false,
                    Poll::Pending => {}
                }
            }
        }
        if self.waiting.iter().all(Option::is_none) {
            return if self.open.contains(&true) { Poll::Pending } else { Poll::Ready(None) };
        }
        if self.sent - self.acked >= self.window {
            return Poll::Pending;
        }
        let n = self.queues.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            if let Some(frame) = self.waiting[i].take() {
                self.next = (i + 1) % n;
                self.sent += frame.len() as u64;
                return Poll::Ready(Some(frame));
            }
        }
        Poll::Pending
    }

    fn acknowledged(&mut self, payload: &[u8]) -> Result<(), MuxError> {
        let acked = <[u8; 8]>::try_from(payload).map(u64::from_le_bytes).map_err(|_| MuxError::BadAck {
            acked: u64::MAX,
            sent: self.sent,
            before: self.acked,
        })?;
        if acked < self.acked || acked > self.sent {
            return Err(MuxError::BadAck { acked, sent: self.sent, before: self.acked });
        }
        self.acked = acked;
        Ok(())
    }
}

async fn drive<S: MessageSocket>(
    socket: &mut S,
    outgoing: &mut Outgoing,
    inboxes: &[Inbox],
    limits: MuxLimits,
) -> Result<(), MuxError> {
    let (mut received, mut unacked) = (0u64, 0u64);
    let mut tls_closed = false;
    let mut routed = 0u64;
    loop {
        let event = {
            let frame = futures::future::poll_fn(|cx| outgoing.poll_frame(cx)).fuse();
            let incoming = socket.recv().fuse();
            futures::pin_mut!(frame, incoming);
            futures::select_biased! {
                frame = incoming => Err(frame),
                frame = frame => Ok(frame),
            }
        };
        match event {
            Ok(Some(frame)) => socket.send(&frame).await?,
            Ok(None) => {
                let _ = socket.close().await;
                // Read on until the peer closes too: a peer still sending (acknowledgements,
                // the rest of a session it has not seen refused yet) would otherwise be reset,
                // and lose the frames that explain the end (an Abort) before reading them.
                // The caller bounds how long (the verifier: `LINGER`).
                while let Ok(Some(_)) = socket.recv().await {}
                return Ok(());
            }
            Err(incoming) => {
                let frame = incoming?.ok_or(MuxError::PeerClosed)?;
                let (&id, payload) = frame.split_first().ok_or(MuxError::EmptyFrame)?;
                if id == ACK {
                    outgoing.acknowledged(payload)?;
                    continue;
                }
                let inbox = inboxes.get(id as usize).ok_or(MuxError::UnknownChannel(id))?;
                let channel = inbox.id;
                if inbox.refused.load(Ordering::Relaxed) {
                    return Err(MuxError::UnusedChannel(channel));
                }
                if payload.len() > limits.max_frame {
                    return Err(MuxError::FrameTooLarge { channel, len: payload.len(), max: limits.max_frame });
                }
                // The TLS channel's one empty payload is its half-close; nothing follows it.
                match (channel, payload.is_empty()) {
                    (ChannelId::Tls, _) if tls_closed => return Err(MuxError::AfterHalfClose),
                    (ChannelId::Tls, true) => tls_closed = true,
                    (_, true) => return Err(MuxError::EmptyPayload(channel)),
                    _ => {}
                }
                let cost = payload.len() + FRAME_COST;
                let max = inbox.limit.load(Ordering::Relaxed);
                if inbox.buffered.fetch_add(cost, Ordering::Relaxed) + cost > max {
                    return Err(MuxError::InboxOverflow { channel, max });
                }
                // A handle that was dropped no longer wants its messages; that is fine.
                let _ = inbox.tx.unbounded_send(payload.to_vec());
                // Let the protocol beside the driver run now and then: a peer whose frames are
                // all ready at once would otherwise have every one routed (up to an inbox's
                // limit) before the session reads the first, e.g. before it refuses a channel.
                routed += 1;
                if routed.is_multiple_of(ROUTE_BEFORE_YIELD) {
                    yield_once().await;
                }
                received += frame.len() as u64;
                unacked += frame.len() as u64;
                if unacked >= ACK_EVERY {
                    let mut ack = vec![ACK];
                    ack.extend_from_slice(&received.to_le_bytes());
                    socket.send(&ack).await?;
                    unacked = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::memory::pair;
    use futures::executor::block_on;

    /// Runs `work` while both drivers move its frames; a driver that ends first fails the test.
    fn run_with_drivers(
        work: impl std::future::Future<Output = ()>,
        drive_a: impl std::future::Future<Output = Result<(), MuxError>>,
        drive_b: impl std::future::Future<Output = Result<(), MuxError>>,
    ) {
        block_on(async {
            let drivers = futures::future::select(Box::pin(drive_a), Box::pin(drive_b));
            futures::pin_mut!(work);
            match futures::future::select(work, drivers).await {
                futures::future::Either::Left(_) => {}
                futures::future::Either::Right(_) => panic!("a driver ended before the work"),
            }
        });
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
        run_with_drivers(work, drive_a, drive_b);
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
        let small = MuxLimits { max_frame: 8, max_buffered: 2 * FRAME_COST + 20, ..MuxLimits::default() };
        assert!(matches!(drive_raw(vec![vec![]], small), MuxError::EmptyFrame));
        assert!(matches!(drive_raw(vec![vec![9, 1]], small), MuxError::UnknownChannel(9)));
        assert!(matches!(
            drive_raw(vec![vec![2; 10]], small),
            MuxError::FrameTooLarge { channel: ChannelId::Zk, len: 9, max: 8 }
        ));
        let flood = vec![vec![1, 0, 0, 0, 0, 0, 0, 0]; 3];
        assert!(
            matches!(drive_raw(flood, small), MuxError::InboxOverflow { channel: ChannelId::Tls, max } if max == small.max_buffered)
        );
        // The peer going away mid-session is an error, not a hang.
        assert!(matches!(drive_raw(vec![], small), MuxError::PeerClosed));
    }

    /// The limits take what reaches them exactly: a frame of `max_frame` bytes, and an inbox
    /// filled to `max_buffered`; a byte more of either is refused.
    #[test]
    fn limits_take_what_reaches_them_exactly() {
        let small = MuxLimits { max_frame: 8, max_buffered: 2 * (8 + FRAME_COST), ..MuxLimits::default() };
        let full = vec![[vec![ChannelId::Zk as u8], vec![7; 8]].concat(); 2];
        assert!(matches!(drive_raw(full.clone(), small), MuxError::PeerClosed));
        let tighter = MuxLimits { max_buffered: small.max_buffered - 1, ..small };
        assert!(matches!(drive_raw(full.clone(), tighter), MuxError::InboxOverflow { channel: ChannelId::Zk, .. }));
        let narrower = MuxLimits { max_frame: 7, ..small };
        assert!(matches!(
            drive_raw(full, narrower),
            MuxError::FrameTooLarge { channel: ChannelId::Zk, len: 8, max: 7 }
        ));
    }

    /// However many of a peer's frames are ready at once, the driver lets the session run after
    /// every [`ROUTE_BEFORE_YIELD`] it routes, so a refusal takes effect at once rather than
    /// after a whole flood: a task beside the driver sees the inbox grow by at most that many
    /// frames between two of its turns.
    #[test]
    fn the_driver_lets_the_session_run_between_routed_frames() {
        let (mut raw, b) = pair();
        let (drive_b, cb) = multiplex(b, MuxLimits::default());
        let n = 5 * ROUTE_BEFORE_YIELD as usize;
        let seen = block_on(async move {
            for _ in 0..n {
                MessageSocket::send(&mut raw, &[ChannelId::Zk as u8, 7]).await.unwrap();
            }
            let buffered = cb.zk.buffered.clone();
            let mut seen = vec![0];
            let watch = async {
                while *seen.last().unwrap() < n {
                    yield_once().await;
                    seen.push(buffered.load(Ordering::Relaxed) / (1 + FRAME_COST));
                }
            };
            futures::future::select(Box::pin(watch), Box::pin(drive_b)).await;
            drop(raw);
            seen
        });
        assert_eq!(seen.last(), Some(&n));
        assert!(seen.windows(2).all(|w| w[1] - w[0] <= ROUTE_BEFORE_YIELD as usize), "{seen:?}");
    }

    /// Frames the driver of `channels` writes to a raw peer that never acknowledges, after
    /// `sends` ran on them (each channel's sends on its own task, so that a full queue blocks
    /// only its own).
    fn frames_without_acks(limits: MuxLimits, sends: Vec<(ChannelId, Vec<Vec<u8>>)>) -> Vec<Vec<u8>> {
        let (a, mut raw) = pair();
        let (driver, channels) = multiplex(a, limits);
        let SessionChannels { control, tls, zk, cot } = channels;
        let mut handles = vec![control, tls, zk, cot];
        let mut pool = futures::executor::LocalPool::new();
        use futures::task::LocalSpawnExt;
        for (id, msgs) in sends {
            let mut ch = handles.remove(handles.iter().position(|h| h.id() == id).expect("a channel"));
            pool.spawner()
                .spawn_local(async move {
                    for m in msgs {
                        let _ = ch.send(m).await;
                    }
                    std::future::pending::<()>().await;
                })
                .unwrap();
        }
        pool.spawner()
            .spawn_local(async move {
                let _ = driver.await;
            })
            .unwrap();
        pool.run_until_stalled();
        let mut frames = Vec::new();
        while let Ok(f) = raw.rx.try_recv() {
            frames.push(f);
        }
        frames
    }

    /// Without acknowledgements a driver stops once a window of bytes is out.
    #[test]
    fn a_driver_sends_at_most_a_window_ahead_of_the_acknowledgements() {
        let limits = MuxLimits { window: 256 << 10, ..MuxLimits::default() };
        let frames = frames_without_acks(limits, vec![(ChannelId::Zk, vec![vec![7; 10_000]; 100])]);
        let sent: usize = frames.iter().map(Vec::len).sum();
        // 26 frames of 10,001 bytes reach 256 KiB; the next may not start
        assert_eq!(frames.len(), 27, "{sent} bytes sent");
    }

    /// A small message on one channel overtakes the backlog of another: frames go out
    /// round-robin by channel.
    #[test]
    fn a_small_message_does_not_wait_behind_another_channels_backlog() {
        let limits = MuxLimits { window: 256 << 10, ..MuxLimits::default() };
        let frames = frames_without_acks(
            limits,
            vec![(ChannelId::Zk, vec![vec![7; 50_000]; 8]), (ChannelId::Cot, vec![vec![1; 4]])],
        );
        let at = frames.iter().position(|f| f[0] == ChannelId::Cot as u8).expect("the small message went out");
        assert!(at <= 1, "the small message was frame {at}");
    }

    /// Acknowledgements keep a transfer far larger than the window going, in order.
    #[test]
    fn acknowledgements_open_the_window() {
        let (a, b) = pair();
        let limits = MuxLimits { window: 256 << 10, ..MuxLimits::default() };
        let (drive_a, mut ca) = multiplex(a, limits);
        let (drive_b, mut cb) = multiplex(b, limits);
        let work = async move {
            let send = async {
                for i in 0..200u8 {
                    ca.zk.send(vec![i; 20_000]).await.unwrap();
                }
            };
            let recv = async {
                for i in 0..200u8 {
                    assert_eq!(cb.zk.recv().await.unwrap(), vec![i; 20_000]);
                }
            };
            futures::join!(send, recv);
        };
        run_with_drivers(work, drive_a, drive_b);
    }

    /// An acknowledgement of bytes never sent, of fewer than before, or of the wrong size
    /// fails the session.
    #[test]
    fn a_false_acknowledgement_is_refused() {
        let ack = |n: u64| [vec![ACK], n.to_le_bytes().to_vec()].concat();
        let limits = MuxLimits::default();
        assert!(matches!(drive_raw(vec![ack(1)], limits), MuxError::BadAck { acked: 1, sent: 0, before: 0 }));
        assert!(matches!(drive_raw(vec![ack(0)[..5].to_vec()], limits), MuxError::BadAck { .. }));
        assert!(matches!(drive_raw(vec![ack(0), ack(0)], limits), MuxError::PeerClosed));
    }

    /// Frames nobody reads cost their inbox at least [`FRAME_COST`] each, so a flood of the
    /// smallest frames is refused once they would hold the inbox's bytes: of 1,000,000
    /// one-byte frames, fewer than 1 MiB ÷ 129 B are ever queued. Empty payloads (but the TLS
    /// half-close) and frames on a refused channel are refused at once.
    #[test]
    fn a_flood_of_tiny_frames_is_refused_within_the_inbox_limit() {
        for channel in [ChannelId::Control, ChannelId::Zk, ChannelId::Cot] {
            let (mut raw, b) = pair();
            let (drive_b, cb) = multiplex(b, MuxLimits { max_buffered: 1 << 20, ..MuxLimits::verifier() });
            let mut ch = match channel {
                ChannelId::Control => cb.control,
                ChannelId::Zk => cb.zk,
                _ => cb.cot,
            };
            let (err, queued) = block_on(async move {
                for _ in 0..1_000_000 {
                    MessageSocket::send(&mut raw, &[channel as u8, 7]).await.unwrap();
                }
                let err = drive_b.await.unwrap_err();
                let mut queued = 0usize;
                while ch.recv().await.is_ok() {
                    queued += 1;
                }
                (err, queued)
            });
            assert!(matches!(err, MuxError::InboxOverflow { channel: c, max: 1048576 } if c == channel), "{err:?}");
            assert_eq!(queued, (1 << 20) / (1 + FRAME_COST), "frames queued on {channel:?}");
        }
        let limits = MuxLimits::default();
        assert!(matches!(drive_raw(vec![vec![ChannelId::Zk as u8]], limits), MuxError::EmptyPayload(ChannelId::Zk)));
        assert!(matches!(
            drive_raw(vec![vec![ChannelId::Control as u8]], limits),
            MuxError::EmptyPayload(ChannelId::Control)
        ));
        assert!(matches!(drive_raw(vec![vec![ChannelId::Tls as u8]], limits), MuxError::PeerClosed), "the half-close");
        assert!(matches!(
            drive_raw(vec![vec![ChannelId::Tls as u8], vec![ChannelId::Tls as u8, 1]], limits),
            MuxError::AfterHalfClose
        ));
        // a refused channel: the first frame on it ends the session
        let (mut raw, b) = pair();
        let (drive_b, cb) = multiplex(b, limits);
        cb.cot.refuse();
        let err = block_on(async move {
            MessageSocket::send(&mut raw, &[ChannelId::Zk as u8, 1]).await.unwrap();
            MessageSocket::send(&mut raw, &[ChannelId::Cot as u8, 1]).await.unwrap();
            drive_b.await.unwrap_err()
        });
        assert!(matches!(err, MuxError::UnusedChannel(ChannelId::Cot)), "{err:?}");
        // the verifier's control inbox is 1 MiB, a prover's takes a verdict of any size
        assert_eq!(
            (MuxLimits::verifier().max_control_buffered, MuxLimits::default().max_control_buffered),
            (1 << 20, 64 << 20)
        );
    }

    #[test]
    fn oversized_send_is_refused_locally() {
        let (a, _b) = pair();
        let (_drive, mut ca) = multiplex(a, MuxLimits { max_frame: 4, max_buffered: 100, ..MuxLimits::default() });
        let err = block_on(ca.zk.send(vec![0; 5])).unwrap_err();
        assert!(matches!(err, ChannelError::TooLarge { len: 5, max: 4 }));
    }
}
