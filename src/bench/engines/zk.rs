//! The engine's benchmark (`tlsproof bench zk` natively, `benchZk` in the browser): prover and
//! verifier over an in-memory channel, COT generation included in every figure, batches
//! scheduled as in the protocol (three deferred into every fourth, checked one; batches of a
//! shape seen before skip the counting pass, as the protocol's keystream batches do). Natively, the
//! `links` section also runs KOS and Ferret over emulated links ([`LINK_CASES`]).
//!
//! Natively the two parties run on two OS threads (as two machines would); in the browser
//! they share the worker that calls it (joined futures), with rayon's Web Worker pool for
//! the parallel parts. Memory: both parties live in one process / one wasm instance, so the
//! figure reported is an upper bound on the prover's alone.

use crate::channel::{memory_pair, Channel, MemoryChannel};
use crate::circuits::aes::{encrypt, key_schedule};
use crate::circuits::aes_bool::{encrypt_bool, key_schedule_bool};
use crate::circuits::constant_bytes;
use crate::circuits::keystream::keystream_blocks;
use crate::circuits::sha256::{compress, state_from_bytes};
use crate::cost::CHECK_EVERY;
use crate::ot::kos::MAX_MESSAGE_BYTES;
use crate::ot::{CotReceiver, CotSender, FerretReceiver, FerretSender, KosReceiver, KosSender};
use crate::primitives::prg::PrgKind;
use crate::zk::bytes::{commit_bytes, open_bytes, open_selected_bytes};
use crate::zk::{Backend, Party, PlainBackend, ProofError, Prover, Verifier, MAX_MESSAGE};

/// One measured figure.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// Where the bench gets the time and the memory figure from (platform-specific).
pub struct Platform {
    /// Seconds since some fixed point.
    pub now: fn() -> f64,
    /// Peak memory so far, bytes (process peak RSS natively, wasm memory size in the browser).
    pub peak_memory: fn() -> Option<u64>,
}

/// Sizes of a run; [`Sizes::QUICK`] keeps it under ~20 s on two cores.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub cots: &'static [usize],
    pub ands: usize,
    pub sha: usize,
    pub aes_field: usize,
    pub aes_bool: usize,
    pub keystream_kib: usize,
    /// The primitives' single-thread speed (AES-128, GF(2^128) products), which bounds the rest.
    pub primitives: bool,
    /// KOS against Ferret over emulated links ([`LINK_CASES`]; natively only).
    pub links: bool,
}

/// One part of the engine bench, to run alone (`tlsproof bench zk --only`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(clap::ValueEnum))]
pub enum Section {
    Keystream,
    Cot,
    And,
    Sha,
    Aes,
    Primitives,
    Links,
}

impl Section {
    /// The section of a lower-case name (as on the command line).
    // The browser's engine benchmark entry point (src/wasm/bench.rs) names its section.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn from_name(name: &str) -> Option<Section> {
        [
            Section::Keystream,
            Section::Cot,
            Section::And,
            Section::Sha,
            Section::Aes,
            Section::Primitives,
            Section::Links,
        ]
        .into_iter()
        .find(|s| format!("{s:?}").eq_ignore_ascii_case(name))
    }
}

impl Sizes {
    /// These sizes with every section but `keep` set to zero (skipped).
    pub fn only(self, keep: Section) -> Sizes {
        let on = |s: Section, n: usize| if s == keep { n } else { 0 };
        Sizes {
            cots: if keep == Section::Cot { self.cots } else { &[] },
            ands: on(Section::And, self.ands),
            sha: on(Section::Sha, self.sha),
            aes_field: on(Section::Aes, self.aes_field),
            aes_bool: on(Section::Aes, self.aes_bool),
            keystream_kib: on(Section::Keystream, self.keystream_kib),
            primitives: keep == Section::Primitives,
            links: keep == Section::Links,
        }
    }

    /// The COT sizes: the protocol's preprocessing demand (every session's first), then the
    /// issue's 1M and 10M.
    pub const FULL: Sizes = Sizes {
        cots: &[crate::cost::PREPROCESS_COTS, 1_000_000, 10_000_000],
        ands: 4_000_000,
        sha: 60,
        aes_field: 1024,
        aes_bool: 256,
        keystream_kib: 64,
        primitives: true,
        links: true,
    };
    pub const QUICK: Sizes = Sizes {
        cots: &[1_000_000],
        ands: 1_000_000,
        sha: 20,
        aes_field: 256,
        aes_bool: 64,
        keystream_kib: 64,
        primitives: true,
        links: false,
    };
}

/// The links of the [`Section::Links`] figures: (name, round trip in ms, Mbit/s each way, COTs).
/// KOS needs 128 bits per COT on the wire, so each case's KOS run takes ≈1.3 s of link time.
pub(crate) const LINK_CASES: &[(&str, f64, f64, usize)] = &[
    ("LAN 1 Gbit/s, 0.2 ms RTT", 0.2, 1000.0, 10_000_000),
    ("fiber 100 Mbit/s, 15 ms RTT", 15.0, 100.0, 1_000_000),
    ("cable 20 Mbit/s, 20 ms RTT", 20.0, 20.0, 200_000),
];

/// A workload both parties run in lockstep.
#[derive(Clone, Copy, Debug)]
enum Job {
    /// `batches` batches of `per` AND gates.
    And { batches: usize, per: usize },
    /// `batches` batches of `per` SHA-256 compressions.
    Sha { batches: usize, per: usize },
    /// `batches` batches of `per` AES-128 blocks (field or boolean S-box).
    Aes { batches: usize, per: usize, boolean: bool },
    /// A GCM keystream proof of `blocks` blocks in batches of 256, under one committed key.
    Keystream { blocks: u32 },
    /// A ChaCha20 keystream proof of `blocks` 64-byte blocks in batches of 32, under one
    /// committed key and nonce (TLS 1.3's ChaCha20-Poly1305 ZK path).
    ChaChaKeystream { blocks: u32 },
}

async fn side<P: Party<C>, C: Channel>(party: &mut P, ch: &mut C, job: Job, witness: bool) -> Result<(), ProofError> {
    match job {
        Job::And { batches, per } => {
            for k in 0..batches {
                party.expect_shape(per as u64);
                party
                    .run_batch_every(ch, k, batches, CHECK_EVERY, &mut |b: &mut P::Backend| and_chain(b, per, witness))
                    .await?;
            }
        }
        Job::Sha { batches, per } => {
            for k in 0..batches {
                party.expect_shape(per as u64);
                party
                    .run_batch_every(ch, k, batches, CHECK_EVERY, &mut |b: &mut P::Backend| sha_chain(b, per, witness))
                    .await?;
            }
        }
        Job::Aes { batches, per, boolean } => {
            for k in 0..batches {
                party.expect_shape(per as u64);
                party
                    .run_batch_every(ch, k, batches, CHECK_EVERY, &mut |b: &mut P::Backend| {
                        aes_blocks(b, per, witness, boolean)
                    })
                    .await?;
            }
        }
        Job::Keystream { blocks } => {
            let (rk, iv) = party
                .run_batch(ch, &mut |b: &mut P::Backend| {
                    let kb = commit_bytes(b, witness.then_some(&[9u8; 16][..]), 16);
                    let mut iv = commit_bytes(b, witness.then_some(&[1u8; 4][..]), 4);
                    iv.extend(constant_bytes(b, &[2u8; 8]));
                    (key_schedule(b, &kb), iv)
                })
                .await?;
            let total = blocks.div_ceil(256) as usize;
            for (k, first) in (0..blocks).step_by(256).enumerate() {
                let n = 256.min(blocks - first);
                party.expect_shape(n as u64);
                party
                    .run_batch_every(ch, k, total, CHECK_EVERY, &mut |b: &mut P::Backend| {
                        keystream(b, &rk, &iv, first, n)
                    })
                    .await?;
            }
        }
        Job::ChaChaKeystream { blocks } => {
            let (key, nonce) = party
                .run_batch(ch, &mut |b: &mut P::Backend| {
                    (
                        commit_bytes(b, witness.then_some(&[9u8; 32][..]), 32),
                        commit_bytes(b, witness.then_some(&[1u8; 12][..]), 12),
                    )
                })
                .await?;
            let total = blocks.div_ceil(32) as usize;
            for (k, first) in (0..blocks).step_by(32).enumerate() {
                let n = 32.min(blocks - first);
                // the counters' folds vary, so each batch is counted (no shape key)
                party
                    .run_batch_every(ch, k, total, CHECK_EVERY, &mut |b: &mut P::Backend| {
                        for blk in first..first + n {
                            crate::circuits::chacha20::block(b, &key, &nonce, blk + 1);
                        }
                    })
                    .await?;
            }
        }
    }
    Ok(())
}

/// What one run of both parties cost.
#[derive(Clone, Copy, Debug)]
struct Cost {
    secs: f64,
    /// Bytes prover → verifier and verifier → prover.
    up: u64,
    down: u64,
}

/// Runs `prover` (on its own thread) and `verifier` to completion over the channel pair
/// `(prover's end, verifier's end)`.
#[cfg(not(target_arch = "wasm32"))]
fn pair<Ch, P, V>(platform: &Platform, (mut pc, mut vc): (Ch, Ch), prover: P, verifier: V) -> Result<Cost, String>
where
    Ch: Channel + Send + 'static,
    P: FnOnce(&mut Ch) -> Result<(), String> + Send + 'static,
    V: FnOnce(&mut Ch) -> Result<(), String>,
{
    let start = (platform.now)();
    let handle = std::thread::spawn(move || {
        let r = prover(&mut pc);
        (r, pc.bytes_sent())
    });
    let v = verifier(&mut vc);
    let (p, up) = handle.join().map_err(|_| "prover thread panicked".to_string())?;
    p.map_err(|e| format!("prover: {e}"))?;
    v.map_err(|e| format!("verifier: {e}"))?;
    Ok(Cost { secs: (platform.now)() - start, up, down: vc.bytes_sent() })
}

/// A fresh in-memory channel pair (prover's end first).
fn memory_channels() -> (MemoryChannel, MemoryChannel) {
    memory_pair(MAX_MESSAGE.max(MAX_MESSAGE_BYTES))
}

/// A job with the given COT sources.
fn run_job<S, R>(platform: &Platform, sender: S, receiver: R, job: Job) -> Result<Cost, String>
where
    S: CotSender,
    R: CotReceiver + Send + 'static,
{
    run_parties(platform, Prover::new(receiver), Verifier::new(sender), job)
}

#[cfg(not(target_arch = "wasm32"))]
fn run_parties<S: CotSender, R: CotReceiver + Send + 'static>(
    platform: &Platform,
    mut p: Prover<R>,
    mut v: Verifier<S>,
    job: Job,
) -> Result<Cost, String> {
    pair(
        platform,
        memory_channels(),
        move |ch| futures::executor::block_on(side(&mut p, ch, job, true)).map_err(|e| e.to_string()),
        |ch| futures::executor::block_on(side(&mut v, ch, job, false)).map_err(|e| e.to_string()),
    )
}

/// In the browser both parties share the calling worker and take turns at every message.
#[cfg(target_arch = "wasm32")]
fn run_parties<S: CotSender, R: CotReceiver + Send + 'static>(
    platform: &Platform,
    mut p: Prover<R>,
    mut v: Verifier<S>,
    job: Job,
) -> Result<Cost, String> {
    let (mut pc, mut vc) = memory_channels();
    let start = (platform.now)();
    let (a, b) = futures::executor::block_on(futures::future::join(
        side(&mut p, &mut pc, job, true),
        side(&mut v, &mut vc, job, false),
    ));
    a.map_err(|e| format!("prover: {e}"))?;
    b.map_err(|e| format!("verifier: {e}"))?;
    Ok(Cost { secs: (platform.now)() - start, up: pc.bytes_sent(), down: vc.bytes_sent() })
}

/// n correlations, fresh instances (base OTs and any bootstrap included).
fn run_cots<S, R>(platform: &Platform, sender: S, receiver: R, n: usize) -> Result<Cost, String>
where
    S: CotSender,
    R: CotReceiver + Send + 'static,
{
    #[cfg(not(target_arch = "wasm32"))]
    {
        run_cots_over(platform, memory_channels(), sender, receiver, n)
    }
    #[cfg(target_arch = "wasm32")]
    {
        let (mut sender, mut receiver) = (sender, receiver);
        let (mut pc, mut vc) = memory_channels();
        let start = (platform.now)();
        let (a, b) =
            futures::executor::block_on(futures::future::join(receiver.extend(&mut pc, n), sender.extend(&mut vc, n)));
        a.map_err(|e| e.to_string())?;
        b.map_err(|e| e.to_string())?;
        Ok(Cost { secs: (platform.now)() - start, up: pc.bytes_sent(), down: vc.bytes_sent() })
    }
}

/// [`run_cots`] over a given channel pair (prover's end first).
#[cfg(not(target_arch = "wasm32"))]
fn run_cots_over<Ch, S, R>(
    platform: &Platform,
    channels: (Ch, Ch),
    mut sender: S,
    mut receiver: R,
    n: usize,
) -> Result<Cost, String>
where
    Ch: Channel + Send + 'static,
    S: CotSender,
    R: CotReceiver + Send + 'static,
{
    pair(
        platform,
        channels,
        move |ch| futures::executor::block_on(receiver.extend(ch, n)).map(|_| ()).map_err(|e| e.to_string()),
        |ch| futures::executor::block_on(sender.extend(ch, n)).map(|_| ()).map_err(|e| e.to_string()),
    )
}

/// An in-memory channel pair behind an emulated link, for the [`Section::Links`] figures: each
/// direction is first in, first out, a message leaves when the link has sent the previous ones
/// (serialisation delay len·8/bandwidth) and arrives a one-way delay later, as in
/// [`crate::bench::netem`] (which shapes TCP for the end-to-end runs). The messages go through
/// a [`MemoryChannel`](crate::channel::MemoryChannel) (its size limit and byte counts), their
/// arrival times through a queue beside it; the receiver sleeps until a message's arrival: each
/// party runs on a thread of its own here.
pub(crate) mod link {
    use crate::channel::{memory_pair, Channel, ChannelError, MemoryChannel};
    use futures::channel::mpsc;
    use futures::StreamExt;
    use std::time::Duration;

    pub(crate) struct LinkChannel {
        inner: MemoryChannel,
        /// The arrival time of every message this end sent, in order, and of the peer's.
        arrivals_out: mpsc::UnboundedSender<f64>,
        arrivals_in: mpsc::UnboundedReceiver<f64>,
        /// One-way delay, seconds.
        delay: f64,
        /// Bits per second; `None` is unlimited.
        bandwidth: Option<f64>,
        /// Seconds since some fixed point (the platform's clock: `Instant` has none in wasm).
        now: fn() -> f64,
        /// When this end's outgoing link has sent everything queued so far.
        free_at: f64,
    }

    /// Two connected ends with round trip `rtt_ms` (half each way) and `mbps` each direction
    /// (0: unlimited), as [`crate::bench::netem`]'s profiles, timed by `now`.
    pub(crate) fn pair(rtt_ms: f64, mbps: f64, max_message: usize, now: fn() -> f64) -> (LinkChannel, LinkChannel) {
        let (a, b) = memory_pair(max_message);
        let (atx, brx) = mpsc::unbounded();
        let (btx, arx) = mpsc::unbounded();
        let t = now();
        let (delay, bandwidth) = (rtt_ms.max(0.0) / 2e3, (mbps > 0.0).then_some(mbps * 1e6));
        let end = |inner, arrivals_out, arrivals_in| LinkChannel {
            inner,
            arrivals_out,
            arrivals_in,
            delay,
            bandwidth,
            now,
            free_at: t,
        };
        (end(a, atx, arx), end(b, btx, brx))
    }

    impl Channel for LinkChannel {
        async fn send(&mut self, msg: Vec<u8>) -> Result<(), ChannelError> {
            let len = msg.len();
            self.inner.send(msg).await?;
            let serialise = self.bandwidth.map_or(0.0, |bps| len as f64 * 8.0 / bps);
            self.free_at = self.free_at.max((self.now)()) + serialise;
            self.arrivals_out.unbounded_send(self.free_at + self.delay).map_err(|_| ChannelError::Closed)
        }

        /// Blocks the thread until the message's arrival (natively, and on a Web Worker, where
        /// `thread::sleep` is an atomic wait).
        async fn recv(&mut self) -> Result<Vec<u8>, ChannelError> {
            let msg = self.inner.recv().await?;
            let arrival = self.arrivals_in.next().await.ok_or(ChannelError::Closed)?;
            let wait = arrival - (self.now)();
            if wait > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(wait));
            }
            Ok(msg)
        }

        fn bytes_sent(&self) -> u64 {
            self.inner.bytes_sent()
        }
        fn bytes_received(&self) -> u64 {
            self.inner.bytes_received()
        }
    }
}

/// Circuit size of `f` on the cleartext evaluator.
fn stats_of(f: impl FnOnce(&mut PlainBackend)) -> crate::zk::BatchStats {
    let mut b = PlainBackend::new();
    f(&mut b);
    b.stats()
}

/// The engine figures. `log` gets each line as it is measured.
pub fn run(platform: &Platform, sizes: Sizes, log: &mut dyn FnMut(&str)) -> Result<Vec<Figure>, String> {
    let mut out = Vec::new();
    let mut fig = |name: String, value: f64, unit: &str, log: &mut dyn FnMut(&str)| {
        log(&format!("{name:<58} {value:>14.2} {unit}"));
        out.push(Figure { name, value, unit: unit.to_string() });
    };
    log(&format!("rayon threads: {}", rayon::current_num_threads()));

    // First, while the process's peak memory is still this proof's own.
    if sizes.keystream_kib > 0 {
        let blocks = (sizes.keystream_kib * 1024 / 16) as u32;
        let before = (platform.peak_memory)();
        let c = run_job(platform, ferret_sender(), ferret_receiver(), Job::Keystream { blocks })?;
        fig(format!("{} KiB GCM keystream proof", sizes.keystream_kib), c.secs, "s", log);
        if let Some(peak) = (platform.peak_memory)() {
            let note = if before.is_some_and(|b| b >= peak) { " (reached before it)" } else { "" };
            fig(
                format!("peak memory, both parties, {} KiB keystream proof{note}", sizes.keystream_kib),
                peak as f64 / 1e6,
                "MB",
                log,
            );
        }
        let c = run_job(platform, ferret_sender(), ferret_receiver(), Job::ChaChaKeystream { blocks: blocks / 4 })?;
        fig(format!("{} KiB ChaCha20 keystream proof", sizes.keystream_kib), c.secs, "s", log);
    }

    for &n in sizes.cots {
        let kos = run_cots(
            platform,
            KosSender::new().with_prg(PrgKind::fastest_here()),
            KosReceiver::new().with_prg(PrgKind::fastest_here()),
            n,
        )?;
        let ferret = run_cots(platform, ferret_sender(), ferret_receiver(), n)?;
        for (name, c) in [("KOS", kos), ("Ferret", ferret)] {
            fig(format!("COT {name}, {n} fresh: rate"), n as f64 / c.secs / 1e6, "M COT/s", log);
            fig(
                format!("COT {name}, {n} fresh: traffic (both ways)"),
                (c.up + c.down) as f64 * 8.0 / n as f64,
                "bits/COT",
                log,
            );
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    if sizes.links {
        for &(name, rtt_ms, mbps, n) in LINK_CASES {
            let channels = || link::pair(rtt_ms, mbps, MAX_MESSAGE.max(MAX_MESSAGE_BYTES), platform.now);
            let kos = run_cots_over(
                platform,
                channels(),
                KosSender::new().with_prg(PrgKind::fastest_here()),
                KosReceiver::new().with_prg(PrgKind::fastest_here()),
                n,
            )?;
            let ferret = run_cots_over(platform, channels(), ferret_sender(), ferret_receiver(), n)?;
            for (src, c) in [("KOS", kos), ("Ferret", ferret)] {
                fig(format!("COT {src}, {n} fresh over {name}: rate"), n as f64 / c.secs / 1e6, "M COT/s", log);
            }
            fig(format!("COT Ferret / KOS rate over {name}"), kos.secs / ferret.secs, "x", log);
        }
    }

    if sizes.ands > 0 {
        let per = 250_000;
        let batches = sizes.ands.div_ceil(per);
        let n = (batches * per) as f64;
        let job = Job::And { batches, per };
        let kos = run_job(
            platform,
            KosSender::new().with_prg(PrgKind::fastest_here()),
            KosReceiver::new().with_prg(PrgKind::fastest_here()),
            job,
        )?;
        let ferret = run_job(platform, ferret_sender(), ferret_receiver(), job)?;
        for (name, c) in [("KOS", kos), ("Ferret", ferret)] {
            fig(format!("AND gates end to end ({name} COTs)"), n / c.secs / 1e6, "M AND/s", log);
            fig(format!("AND gates, prover -> verifier ({name} COTs)"), c.up as f64 * 8.0 / n, "bits/AND", log);
        }
    }

    if sizes.sha > 0 {
        let per = 10;
        let job = Job::Sha { batches: sizes.sha.div_ceil(per), per };
        let c = run_job(platform, ferret_sender(), ferret_receiver(), job)?;
        fig(
            "SHA-256 compressions (private state and block)".into(),
            (sizes.sha.div_ceil(per) * per) as f64 / c.secs,
            "/s",
            log,
        );
    }

    for (boolean, count, label) in
        [(false, sizes.aes_field, "S-box constraints"), (true, sizes.aes_bool, "boolean S-box")]
    {
        if count == 0 {
            continue;
        }
        let per = 64.min(count);
        let batches = count.div_ceil(per);
        let c = run_job(platform, ferret_sender(), ferret_receiver(), Job::Aes { batches, per, boolean })?;
        let blocks = (batches * per) as f64;
        let one = stats_of(|b| aes_blocks(b, 1, true, boolean));
        let two = stats_of(|b| aes_blocks(b, 2, true, boolean));
        fig(format!("AES-128 ({label}): blocks"), blocks / c.secs, "blocks/s", log);
        fig(format!("AES-128 ({label}): committed bits per block"), (two.commits - one.commits) as f64, "bits", log);
        fig(format!("AES-128 ({label}): prover -> verifier per block"), c.up as f64 * 8.0 / blocks, "bits", log);
    }

    if sizes.primitives {
        let p = primitive_rates(platform);
        fig("AES-128 (the engine's PRP), one key, one thread".into(), p.aes / 1e6, "M blocks/s", log);
        fig(
            "ChaCha12 (the PRG where AES is software), 16-byte blocks, one thread".into(),
            p.chacha / 1e6,
            "M blocks/s",
            log,
        );
        fig("GF(2^128) products, one thread".into(), p.mul / 1e6, "M/s", log);
        fig("GF(2^128) inner-product terms, one thread".into(), p.ip / 1e6, "M/s", log);
        fig("GF(2^128) public-coefficient sum terms (OT checks), one thread".into(), p.weighted / 1e6, "M/s", log);
    }

    Ok(out)
}

/// The engine as a session here runs it: with this platform's PRG (ChaCha12 in the browser).
fn ferret_sender() -> FerretSender {
    FerretSender::with_prg(PrgKind::fastest_here())
}

fn ferret_receiver() -> FerretReceiver {
    FerretReceiver::with_prg(PrgKind::fastest_here())
}

/// Single-thread rates (per second) of bulk AES-128 under one key ([`crate::primitives::prp`]), the
/// ChaCha12 PRG ([`crate::primitives::prg`]), GF(2^128) products and inner-product terms: what every
/// COT, gate and check is made of. Natively AES-NI and PCLMULQDQ run when the CPU has them;
/// the browser runs the bitsliced SIMD128 AES, the SIMD128 ChaCha and the portable field code.
fn primitive_rates(platform: &Platform) -> Primitives {
    use crate::primitives::field::F128;
    use aes::cipher::generic_array::GenericArray;
    const N: usize = 4096;
    /// Repeats `f` (which does N operations) for about 0.3 s; returns operations per second.
    fn rate(platform: &Platform, mut f: impl FnMut()) -> f64 {
        let start = (platform.now)();
        let mut reps = 0usize;
        while (platform.now)() - start < 0.3 {
            f();
            reps += 1;
        }
        (reps * N) as f64 / ((platform.now)() - start)
    }
    let cipher = crate::primitives::prp::Aes128::new(GenericArray::from_slice(&[7u8; 16]));
    let mut blocks = vec![GenericArray::from([0u8; 16]); N];
    let aes = rate(platform, || cipher.encrypt_blocks(core::hint::black_box(&mut blocks)));
    let chacha_prg = PrgKind::ChaCha12.keyed(&[7u8; 16]);
    let mut stream = vec![0u8; 16 * N];
    let chacha = rate(platform, || chacha_prg.fill(0, core::hint::black_box(&mut stream)));
    let a: Vec<F128> =
        (0..N as u128).map(|i| F128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ i)).collect();
    let b: Vec<F128> = a.iter().map(|x| F128(x.0.rotate_left(61) ^ 0x87)).collect();
    let mut out = vec![F128::ZERO; N];
    let mul = rate(platform, || F128::mul_slices(core::hint::black_box(&a), &b, &mut out));
    let mut acc = F128::ZERO;
    let ip = rate(platform, || acc ^= F128::inner_product(core::hint::black_box(&a), &b));
    let weighted = rate(platform, || {
        let mut sum = crate::primitives::field::PublicWeightedSum::new();
        sum.add(core::hint::black_box(&a), &b);
        acc ^= sum.finish();
    });
    core::hint::black_box((out, acc));
    Primitives { aes, chacha, mul, ip, weighted }
}

/// Single-thread rates of [`primitive_rates`], per second.
struct Primitives {
    aes: f64,
    chacha: f64,
    mul: f64,
    ip: f64,
    weighted: f64,
}

/// n AND gates, each on fresh committed inputs' chain.
fn and_chain<B: Backend>(b: &mut B, n: usize, witness: bool) {
    let mut x = b.commit(witness.then_some(true));
    let y = b.commit(witness.then_some(true));
    for _ in 0..n {
        x = b.and(x, y);
    }
    b.open(&[x]);
}

/// n SHA-256 compressions with a private state and block.
fn sha_chain<B: Backend>(b: &mut B, n: usize, witness: bool) {
    let st = commit_bytes(b, witness.then_some(&[3u8; 32][..]), 32);
    let mut state = state_from_bytes::<B>(&st);
    let block = commit_bytes(b, witness.then_some(&[5u8; 64][..]), 64);
    for _ in 0..n {
        state = compress(b, &state, &block);
    }
    let out: Vec<B::Bit> = state.iter().flatten().copied().collect();
    open_bytes(b, &out);
}

/// n AES-128 CTR blocks under one private key (key schedule once).
fn aes_blocks<B: Backend>(b: &mut B, n: usize, witness: bool, boolean: bool) {
    let kb = commit_bytes(b, witness.then_some(&[9u8; 16][..]), 16);
    let mut iv = commit_bytes(b, witness.then_some(&[1u8; 4][..]), 4);
    iv.extend(constant_bytes(b, &[2u8; 8]));
    let rk = if boolean { key_schedule_bool(b, &kb) } else { key_schedule(b, &kb) };
    for i in 0..n as u32 {
        let mut blk = iv.clone();
        blk.extend(constant_bytes(b, &(i + 2).to_be_bytes()));
        let out = if boolean { encrypt_bool(b, &rk, &blk) } else { encrypt(b, &rk, &blk) };
        open_bytes(b, &out[..8]);
    }
}

/// GCM keystream blocks `first..first + n` under a committed key, every byte opened (as for
/// a revealed response on the ZK path).
fn keystream<B: Backend>(b: &mut B, key: &crate::circuits::aes::RoundKeys<B>, iv: &[B::Bit], first: u32, n: u32) {
    let idx: Vec<u32> = (first..first + n).collect();
    for ks in keystream_blocks(b, key, iv, &idx) {
        open_selected_bytes(b, &ks, &(0..16).collect::<Vec<_>>());
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::link;
    use crate::channel::Channel;
    use futures::executor::block_on;
    use std::time::Instant;

    #[test]
    fn emulated_link_delays_by_serialisation_then_propagation_in_order() {
        // 10 Mbit/s, 10 ms one way: 12,500 B take 10 ms to send, so the second of two such
        // messages sent at once arrives 20 + 10 ms after them, the first 10 + 10 ms
        let seconds =
            || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let (mut a, mut b) = link::pair(20.0, 10.0, 1 << 20, seconds);
        let start = Instant::now();
        block_on(a.send(vec![1; 12_500])).unwrap();
        block_on(a.send(vec![2; 12_500])).unwrap();
        let first = block_on(b.recv()).unwrap();
        let t1 = start.elapsed().as_secs_f64();
        let second = block_on(b.recv()).unwrap();
        let t2 = start.elapsed().as_secs_f64();
        assert_eq!((first[0], second[0]), (1, 2));
        // lower bounds exact (the second queues behind the first: without queueing it would
        // arrive at 20 ms too); upper ones loose, for a loaded machine's oversleeping. The gap
        // t2 - t1 has no exact bound: the first receive may oversleep into it.
        assert!((0.020..0.5).contains(&t1), "first arrived after {t1} s");
        assert!((0.030..0.5).contains(&t2), "second arrived after {t2} s");
        assert_eq!((a.bytes_sent(), b.bytes_received()), (25_000, 25_000));
    }
}
