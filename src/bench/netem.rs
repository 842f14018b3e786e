//! Network emulation for the benchmarks: a TCP relay on 127.0.0.1 that delays and rate-limits
//! each direction, so any client (the native prover, a browser) can be put behind it.
//!
//! Each direction is a first-in-first-out link: a segment of at most [`SEGMENT`] bytes leaves
//! when the link has finished sending the previous ones (a token bucket of one segment, i.e.
//! serialisation delay `len · 8 / bandwidth`) and arrives a one-way delay later. The queue is
//! unbounded, like a link with a large buffer, so the sender never blocks; memory is bounded by
//! what the sender writes in one propagation window, a few MB at most in the benchmarks.
//! (`tc netem` is not available on these machines' kernels.)

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Bytes per emulated packet (a TCP payload on a 1500-byte MTU).
pub(crate) const SEGMENT: usize = 1448;

/// One direction of a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkShape {
    pub delay: Duration,
    /// Bits per second; `None` is unlimited.
    pub bandwidth: Option<f64>,
}

impl LinkShape {
    /// A link with round trip `rtt_ms` (half each way) and `mbps` each direction (0: unlimited).
    pub fn from_rtt(rtt_ms: f64, mbps: f64) -> LinkShape {
        LinkShape {
            delay: Duration::from_secs_f64(rtt_ms.max(0.0) / 2e3),
            bandwidth: (mbps > 0.0).then_some(mbps * 1e6),
        }
    }
}

/// Bytes that crossed a relay, per direction, over all its connections.
#[derive(Debug, Default)]
pub struct Traffic {
    /// Client → upstream.
    pub up: AtomicU64,
    /// Upstream → client.
    pub down: AtomicU64,
}

/// A shaping relay: connections to [`ShapedRelay::local_addr`] are forwarded to `upstream`.
///
/// It runs on plain OS threads with blocking sockets, not on the async runtime: delivery times
/// need sub-millisecond sleeps, and tokio's timer rounds every sleep up to a 1 ms tick (which
/// showed as +1–2 ms per hop in calibration). Threads sleep, so they cost the measured parties
/// no CPU.
pub(crate) struct ShapedRelay {
    addr: SocketAddr,
    traffic: Arc<Traffic>,
    stop: Arc<AtomicBool>,
}

impl ShapedRelay {
    /// Listens on an ephemeral 127.0.0.1 port and serves in the background until dropped;
    /// `up` shapes client → upstream, `down` the reverse.
    pub(crate) fn start(upstream: SocketAddr, up: LinkShape, down: LinkShape) -> std::io::Result<ShapedRelay> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let traffic = Arc::new(Traffic::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (traffic.clone(), stop.clone());
        std::thread::Builder::new().name("netem-accept".into()).spawn(move || {
            for client in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(client) = client else { continue };
                let t = t.clone();
                let _ = std::thread::Builder::new().name("netem-conn".into()).spawn(move || {
                    if let Ok(server) = TcpStream::connect(upstream) {
                        relay(client, server, up, down, &t);
                    }
                });
            }
        })?;
        Ok(ShapedRelay { addr, traffic, stop })
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub(crate) fn traffic(&self) -> Arc<Traffic> {
        self.traffic.clone()
    }
}

impl Drop for ShapedRelay {
    /// Stops accepting (connections already relayed run until their peers close them).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

fn relay(client: TcpStream, server: TcpStream, up: LinkShape, down: LinkShape, traffic: &Traffic) {
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else { return };
    std::thread::scope(|scope| {
        scope.spawn(|| pump(client, server2, up, &traffic.up));
        pump(server, client2, down, &traffic.down);
    });
}

/// Copies `from` to `to` through the emulated link, then half-closes `to`. A delivery thread
/// writes each segment when it is due, so reading never waits for the link.
fn pump(mut from: TcpStream, mut to: TcpStream, shape: LinkShape, counter: &AtomicU64) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::scope(|scope| {
        scope.spawn(move || deliver(rx, &mut to));
        let mut buf = vec![0u8; 64 * 1024];
        let mut link_free = Instant::now();
        while let Ok(n @ 1..) = from.read(&mut buf) {
            counter.fetch_add(n as u64, Ordering::Relaxed);
            let now = Instant::now();
            for seg in buf[..n].chunks(SEGMENT) {
                let serialise =
                    shape.bandwidth.map_or(Duration::ZERO, |bps| Duration::from_secs_f64(seg.len() as f64 * 8.0 / bps));
                link_free = link_free.max(now) + serialise;
                if tx.send((link_free + shape.delay, seg.to_vec())).is_err() {
                    return;
                }
            }
        }
        drop(tx);
    });
    let _ = from.shutdown(Shutdown::Read);
}

/// Writes each segment at its arrival time, coalescing segments that are due together.
fn deliver(rx: mpsc::Receiver<(Instant, Vec<u8>)>, to: &mut TcpStream) {
    let mut out = Vec::new();
    let mut next = rx.recv().ok();
    while let Some((due, seg)) = next.take() {
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        out.clear();
        out.extend_from_slice(&seg);
        loop {
            match rx.try_recv() {
                Ok((d, s)) if d <= Instant::now() => out.extend_from_slice(&s),
                Ok(later) => {
                    next = Some(later);
                    break;
                }
                Err(_) => break,
            }
        }
        if to.write_all(&out).is_err() {
            return;
        }
        if next.is_none() {
            next = rx.recv().ok();
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// What [`calibrate`] measured against what the shape promises.
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    pub transfer_bytes: usize,
    pub transfer_expected: Duration,
    pub transfer_measured: Duration,
    pub rtt_expected: Duration,
    /// Median of the ping-pong round trips.
    pub rtt_measured: Duration,
}

impl Calibration {
    /// The larger of the two relative errors.
    pub fn worst_error(&self) -> f64 {
        let rel =
            |m: Duration, e: Duration| if e.is_zero() { 0.0 } else { (m.as_secs_f64() / e.as_secs_f64() - 1.0).abs() };
        rel(self.transfer_measured, self.transfer_expected).max(rel(self.rtt_measured, self.rtt_expected))
    }
}

/// Measures a relay with `shape` in both directions: one `transfer_bytes` upload (timed until
/// the far side has everything, acknowledged by one byte back) and `pings` one-byte ping-pongs.
/// Blocking (it times real sockets); call it from a blocking thread.
pub fn calibrate(shape: LinkShape, transfer_bytes: usize, pings: usize) -> std::io::Result<Calibration> {
    let sink = TcpListener::bind("127.0.0.1:0")?;
    let relay = ShapedRelay::start(sink.local_addr()?, shape, shape)?;
    let server = std::thread::spawn(move || {
        let (mut s, _) = sink.accept()?;
        s.set_nodelay(true)?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = 0;
        while got < transfer_bytes {
            match s.read(&mut buf)? {
                0 => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
                n => got += n,
            }
        }
        s.write_all(&[1])?;
        let mut b = [0u8; 1];
        for _ in 0..pings {
            s.read_exact(&mut b)?;
            s.write_all(&b)?;
        }
        Ok::<_, std::io::Error>(())
    });
    let mut c = TcpStream::connect(relay.local_addr())?;
    c.set_nodelay(true)?;
    let mut b = [0u8; 1];
    let data = vec![0x5a; transfer_bytes];
    let t = Instant::now();
    c.write_all(&data)?;
    c.read_exact(&mut b)?;
    let transfer_measured = t.elapsed();
    let mut rtts = Vec::with_capacity(pings);
    for _ in 0..pings {
        let t = Instant::now();
        c.write_all(&[7])?;
        c.read_exact(&mut b)?;
        rtts.push(t.elapsed());
    }
    server.join().map_err(|_| std::io::Error::other("calibration peer panicked"))??;
    rtts.sort();
    let serialise = shape.bandwidth.map_or(0.0, |bps| transfer_bytes as f64 * 8.0 / bps);
    // The upload arrives one delay after its last bit leaves; the ack takes one more delay back.
    let transfer_expected = Duration::from_secs_f64(serialise) + 2 * shape.delay;
    Ok(Calibration {
        transfer_bytes,
        transfer_expected,
        transfer_measured,
        rtt_expected: 2 * shape.delay,
        rtt_measured: rtts.get(rtts.len() / 2).copied().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Timing upper bounds would be flaky on a loaded machine, so these tests only check what
    // load cannot break: the relay forwards every byte, and it never beats the link.
    #[test]
    fn shaped_link_is_never_faster_than_configured() {
        let c = calibrate(LinkShape::from_rtt(20.0, 20.0), 256 * 1024, 5).unwrap();
        assert!(c.transfer_measured >= c.transfer_expected, "{c:?}");
        assert!(c.rtt_measured >= c.rtt_expected, "{c:?}");
        // 256 KiB at 20 Mbit/s is ~105 ms of serialisation: the shaping is really there.
        assert!(c.transfer_expected > Duration::from_millis(120));
    }

    #[test]
    fn relay_forwards_everything_both_ways_and_half_closes() {
        let echo = TcpListener::bind("127.0.0.1:0").unwrap();
        let echo_addr = echo.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = echo.accept().unwrap();
            let mut all = Vec::new();
            s.read_to_end(&mut all).unwrap();
            s.write_all(&all).unwrap();
            s.shutdown(Shutdown::Write).unwrap();
        });
        let relay =
            ShapedRelay::start(echo_addr, LinkShape::from_rtt(2.0, 100.0), LinkShape::from_rtt(2.0, 50.0)).unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut c = TcpStream::connect(relay.local_addr()).unwrap();
        let writer = {
            let mut c = c.try_clone().unwrap();
            let data = data.clone();
            std::thread::spawn(move || {
                c.write_all(&data).unwrap();
                c.shutdown(Shutdown::Write).unwrap();
            })
        };
        let mut back = Vec::new();
        c.read_to_end(&mut back).unwrap();
        writer.join().unwrap();
        assert_eq!(back, data);
        let traffic = relay.traffic();
        assert_eq!(traffic.up.load(Ordering::Relaxed), data.len() as u64);
        assert_eq!(traffic.down.load(Ordering::Relaxed), data.len() as u64);
    }
}
