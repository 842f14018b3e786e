//! The engine's benchmark (`tlsproof bench zk` natively, `benchZk` in the browser): prover and
//! verifier over an in-memory channel, COT generation included in every figure, batches
//! scheduled as in the protocol (three deferred into every fourth, checked one).
//!
//! Natively the two parties run on two OS threads (as two machines would); in the browser
//! they share the worker that calls it (joined futures), with rayon's Web Worker pool for
//! the parallel parts. Memory: both parties live in one process / one wasm instance, so the
//! figure reported is an upper bound on the prover's alone.

use crate::protocol::proof::CHECK_EVERY;
use crate::zk::channel::{memory_pair, Channel};
#[cfg(not(target_arch = "wasm32"))]
use crate::zk::channel::MemoryChannel;
use crate::zk::gadgets::aes::{encrypt, key_schedule};
use crate::zk::gadgets::aes_bool::{encrypt_bool, key_schedule_bool};
use crate::zk::gadgets::keystream::keystream_blocks;
use crate::zk::gadgets::sha256::{compress, state_from_bytes};
use crate::zk::gadgets::{commit_bytes, constant_bytes, open_bytes, open_selected_bytes};
use crate::zk::ot::kos::MAX_MESSAGE_BYTES;
use crate::zk::ot::{CotReceiver, CotSender, FerretReceiver, FerretSender, KosReceiver, KosSender};
use crate::zk::prg::PrgKind;
use crate::zk::quicksilver::{Backend, Party, PlainBackend, ProofError, Prover, Verifier, MAX_MESSAGE};

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
}

impl Section {
    /// The section of a lower-case name (as on the command line).
    pub fn from_name(name: &str) -> Option<Section> {
        [Section::Keystream, Section::Cot, Section::And, Section::Sha, Section::Aes, Section::Primitives]
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
        }
    }

    /// The COT sizes: the protocol's preprocessing demand (every session's first), then the
    /// issue's 1M and 10M.
    pub const FULL: Sizes = Sizes { cots: &[crate::protocol::proof::PREPROCESS_COTS, 1_000_000, 10_000_000], ands: 4_000_000, sha: 60, aes_field: 1024, aes_bool: 256, keystream_kib: 64, primitives: true };
    pub const QUICK: Sizes = Sizes { cots: &[1_000_000], ands: 1_000_000, sha: 20, aes_field: 256, aes_bool: 64, keystream_kib: 64, primitives: true };
}

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
}

async fn side<P: Party<C>, C: Channel>(party: &mut P, ch: &mut C, job: Job, witness: bool) -> Result<(), ProofError> {
    match job {
        Job::And { batches, per } => {
            for k in 0..batches {
                party.run_batch_every(ch, k, batches, CHECK_EVERY, &mut |b: &mut P::Backend| and_chain(b, per, witness)).await?;
            }
        }
        Job::Sha { batches, per } => {
            for k in 0..batches {
                party.run_batch_every(ch, k, batches, CHECK_EVERY, &mut |b: &mut P::Backend| sha_chain(b, per, witness)).await?;
            }
        }
        Job::Aes { batches, per, boolean } => {
            for k in 0..batches {
                party.run_batch_every(ch, k, batches, CHECK_EVERY, &mut |b: &mut P::Backend| aes_blocks(b, per, witness, boolean)).await?;
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
                party.run_batch_every(ch, k, total, CHECK_EVERY, &mut |b: &mut P::Backend| keystream(b, &rk, &iv, first, n)).await?;
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

/// Runs `prover` (on its own thread) and `verifier` to completion over a fresh in-memory channel.
#[cfg(not(target_arch = "wasm32"))]
fn pair<P, V>(platform: &Platform, prover: P, verifier: V) -> Result<Cost, String>
where
    P: FnOnce(&mut MemoryChannel) -> Result<(), String> + Send + 'static,
    V: FnOnce(&mut MemoryChannel) -> Result<(), String>,
{
    let (mut pc, mut vc) = memory_pair(MAX_MESSAGE.max(MAX_MESSAGE_BYTES));
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

/// A job with the given COT sources.
fn run_job<S, R>(platform: &Platform, sender: S, receiver: R, job: Job) -> Result<Cost, String>
where
    S: CotSender,
    R: CotReceiver + Send + 'static,
{
    run_parties(platform, Prover::new(receiver), Verifier::new(sender), job)
}

#[cfg(not(target_arch = "wasm32"))]
fn run_parties<S: CotSender, R: CotReceiver + Send + 'static>(platform: &Platform, mut p: Prover<R>, mut v: Verifier<S>, job: Job) -> Result<Cost, String> {
    pair(
        platform,
        move |ch| futures::executor::block_on(side(&mut p, ch, job, true)).map_err(|e| e.to_string()),
        |ch| futures::executor::block_on(side(&mut v, ch, job, false)).map_err(|e| e.to_string()),
    )
}

/// In the browser both parties share the calling worker and take turns at every message.
#[cfg(target_arch = "wasm32")]
fn run_parties<S: CotSender, R: CotReceiver + Send + 'static>(platform: &Platform, mut p: Prover<R>, mut v: Verifier<S>, job: Job) -> Result<Cost, String> {
    let (mut pc, mut vc) = memory_pair(MAX_MESSAGE.max(MAX_MESSAGE_BYTES));
    let start = (platform.now)();
    let (a, b) = futures::executor::block_on(futures::future::join(side(&mut p, &mut pc, job, true), side(&mut v, &mut vc, job, false)));
    a.map_err(|e| format!("prover: {e}"))?;
    b.map_err(|e| format!("verifier: {e}"))?;
    Ok(Cost { secs: (platform.now)() - start, up: pc.bytes_sent(), down: vc.bytes_sent() })
}

/// n correlations, fresh instances (base OTs and any bootstrap included).
fn run_cots<S, R>(platform: &Platform, mut sender: S, mut receiver: R, n: usize) -> Result<Cost, String>
where
    S: CotSender,
    R: CotReceiver + Send + 'static,
{
    #[cfg(not(target_arch = "wasm32"))]
    {
        pair(
            platform,
            move |ch| futures::executor::block_on(receiver.extend(ch, n)).map(|_| ()).map_err(|e| e.to_string()),
            |ch| futures::executor::block_on(sender.extend(ch, n)).map(|_| ()).map_err(|e| e.to_string()),
        )
    }
    #[cfg(target_arch = "wasm32")]
    {
        let (mut pc, mut vc) = memory_pair(MAX_MESSAGE.max(MAX_MESSAGE_BYTES));
        let start = (platform.now)();
        let (a, b) = futures::executor::block_on(futures::future::join(receiver.extend(&mut pc, n), sender.extend(&mut vc, n)));
        a.map_err(|e| e.to_string())?;
        b.map_err(|e| e.to_string())?;
        Ok(Cost { secs: (platform.now)() - start, up: pc.bytes_sent(), down: vc.bytes_sent() })
    }
}

/// Circuit size of `f` on the cleartext evaluator.
fn stats_of(f: impl FnOnce(&mut PlainBackend)) -> crate::zk::quicksilver::BatchStats {
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
            fig(format!("peak memory, both parties, {} KiB keystream proof{note}", sizes.keystream_kib), peak as f64 / 1e6, "MB", log);
        }
    }

    for &n in sizes.cots {
        let kos = run_cots(platform, KosSender::new().with_prg(PrgKind::fastest_here()), KosReceiver::new().with_prg(PrgKind::fastest_here()), n)?;
        let ferret = run_cots(platform, ferret_sender(), ferret_receiver(), n)?;
        for (name, c) in [("KOS", kos), ("Ferret", ferret)] {
            fig(format!("COT {name}, {n} fresh: rate"), n as f64 / c.secs / 1e6, "M COT/s", log);
            fig(format!("COT {name}, {n} fresh: traffic (both ways)"), (c.up + c.down) as f64 * 8.0 / n as f64, "bits/COT", log);
        }
    }

    if sizes.ands > 0 {
        let per = 250_000;
        let batches = sizes.ands.div_ceil(per);
        let n = (batches * per) as f64;
        let job = Job::And { batches, per };
        let kos = run_job(platform, KosSender::new().with_prg(PrgKind::fastest_here()), KosReceiver::new().with_prg(PrgKind::fastest_here()), job)?;
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
        fig("SHA-256 compressions (private state and block)".into(), (sizes.sha.div_ceil(per) * per) as f64 / c.secs, "/s", log);
    }

    for (boolean, count, label) in [(false, sizes.aes_field, "S-box constraints"), (true, sizes.aes_bool, "boolean S-box")] {
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
        fig("ChaCha12 (the PRG where AES is software), 16-byte blocks, one thread".into(), p.chacha / 1e6, "M blocks/s", log);
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

/// Single-thread rates (per second) of bulk AES-128 under one key ([`crate::zk::prp`]), the
/// ChaCha12 PRG ([`crate::zk::prg`]), GF(2^128) products and inner-product terms: what every
/// COT, gate and check is made of. Natively AES-NI and PCLMULQDQ run when the CPU has them;
/// the browser runs the bitsliced SIMD128 AES, the SIMD128 ChaCha and the portable field code.
fn primitive_rates(platform: &Platform) -> Primitives {
    use crate::zk::field::F128;
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
    let cipher = crate::zk::prp::Aes128::new(GenericArray::from_slice(&[7u8; 16]));
    let mut blocks = vec![GenericArray::from([0u8; 16]); N];
    let aes = rate(platform, || cipher.encrypt_blocks(core::hint::black_box(&mut blocks)));
    let chacha_prg = PrgKind::ChaCha12.keyed(&[7u8; 16]);
    let mut stream = vec![0u8; 16 * N];
    let chacha = rate(platform, || chacha_prg.fill(0, core::hint::black_box(&mut stream)));
    let a: Vec<F128> = (0..N as u128).map(|i| F128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ i)).collect();
    let b: Vec<F128> = a.iter().map(|x| F128(x.0.rotate_left(61) ^ 0x87)).collect();
    let mut out = vec![F128::ZERO; N];
    let mul = rate(platform, || F128::mul_slices(core::hint::black_box(&a), &b, &mut out));
    let mut acc = F128::ZERO;
    let ip = rate(platform, || acc ^= F128::inner_product(core::hint::black_box(&a), &b));
    let weighted = rate(platform, || {
        let mut sum = crate::zk::field::PublicWeightedSum::new();
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
fn keystream<B: Backend>(b: &mut B, key: &crate::zk::gadgets::aes::RoundKeys<B>, iv: &[B::Bit], first: u32, n: u32) {
    let idx: Vec<u32> = (first..first + n).collect();
    for ks in keystream_blocks(b, key, iv, &idx) {
        open_selected_bytes(b, &ks, &(0..16).collect::<Vec<_>>());
    }
}
