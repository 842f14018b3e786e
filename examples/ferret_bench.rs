//! Ferret (bootstrapped from KOS or from SoftSpokenOT) vs KOS and SoftSpokenOT alone, side by
//! side: bytes on the wire per correlation (amortized, base OTs and bootstrap included; total
//! and prover upload) and correlations per second, both parties in one process over an
//! in-memory channel. Run with `cargo run --release --example ferret_bench [quick]`.

use futures::executor::block_on;
use futures::future::join;
use std::time::Instant;
use tlsproof::channel::{memory_pair, Channel, MemoryChannel};
use tlsproof::ot::ferret::{FerretConfig, LpnParams};
use tlsproof::ot::kos::MAX_MESSAGE_BYTES;
use tlsproof::ot::softspoken::DEFAULT_K;
use tlsproof::ot::{
    CotReceiver, CotSender, FerretReceiver, FerretSender, KosReceiver, KosSender, SoftSpokenReceiver, SoftSpokenSender,
};
use tlsproof::primitives::field::F128;

/// (seconds, bytes both directions, bytes prover → verifier) of one extend call.
type Sample = (f64, u64, u64);

fn spot_check(delta: F128, keys: &[F128], bits: &[bool], macs: &[F128]) {
    assert_eq!(keys.len(), macs.len());
    for i in (0..keys.len()).step_by((keys.len() / 4096).max(1)) {
        assert_eq!(macs[i], keys[i] + delta.select(bits[i]), "broken correlation {i}");
    }
}

/// Successive `extend` calls on one pair; per call: (seconds, bytes both directions, prover
/// bytes); times and bytes include the base OTs and (for Ferret) the bootstrap in the first call.
fn run<S: CotSender, R: CotReceiver>(mut s: S, mut r: R, ns: &[usize]) -> Vec<Sample> {
    let (mut cv, mut cp): (MemoryChannel, MemoryChannel) = memory_pair(MAX_MESSAGE_BYTES);
    let mut out = vec![];
    let mut before = 0;
    let mut up_before = 0;
    for &n in ns {
        let t = Instant::now();
        let (keys, cots) = block_on(join(s.extend(&mut cv, n), r.extend(&mut cp, n)));
        let secs = t.elapsed().as_secs_f64();
        let keys = keys.expect("verifier");
        let (bits, macs) = cots.expect("prover");
        spot_check(s.delta(), &keys, &bits, &macs);
        let total = cv.bytes_sent() + cp.bytes_sent();
        out.push((secs, total - before, cp.bytes_sent() - up_before));
        before = total;
        up_before = cp.bytes_sent();
    }
    out
}

fn kos(ns: &[usize]) -> Vec<Sample> {
    run(KosSender::new(), KosReceiver::new(), ns)
}

fn softspoken(k: usize, ns: &[usize]) -> Vec<Sample> {
    run(SoftSpokenSender::new().with_k(k).unwrap(), SoftSpokenReceiver::new().with_k(k).unwrap(), ns)
}

fn ferret_kos(cfg: FerretConfig, ns: &[usize]) -> Vec<Sample> {
    run(
        FerretSender::from_kos(KosSender::new(), cfg).unwrap(),
        FerretReceiver::from_kos(KosReceiver::new(), cfg).unwrap(),
        ns,
    )
}

fn ferret_ss(k: usize, cfg: FerretConfig, ns: &[usize]) -> Vec<Sample> {
    run(
        FerretSender::from_softspoken(SoftSpokenSender::new().with_k(k).unwrap(), cfg).unwrap(),
        FerretReceiver::from_softspoken(SoftSpokenReceiver::new().with_k(k).unwrap(), cfg).unwrap(),
        ns,
    )
}

fn line(name: &str, n: usize, (secs, bytes, up): Sample) {
    println!(
        "  {name:<34} n={n:>10}  {:>9.1} ms  {:>6.2} M COT/s  {:>10} B {:>8.3} bits/COT | upload {:>10} B {:>8.3} bits/COT",
        secs * 1e3,
        n as f64 / secs / 1e6,
        bytes,
        8.0 * bytes as f64 / n as f64,
        up,
        8.0 * up as f64 / n as f64,
    );
}

fn add(a: Sample, b: Sample) -> Sample {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2)
}

/// Per-phase split of one iteration (medians of `reps` runs) and the end-to-end time of warm
/// `extend(m)` calls on a bootstrapped pair (prover on its own thread, as in `tlsproof bench
/// zk`), split into calls that ran an LPN iteration and calls served from the buffer.
/// Native only (the profiling module and threads).
#[cfg(not(target_arch = "wasm32"))]
fn phases(reps: usize, m: usize) {
    use tlsproof::ot::ferret::profile::iteration_phases;
    for p in [LpnParams::SETUP, LpnParams::MID_2M, LpnParams::MAIN] {
        println!("phases of one iteration, n = {}, k = {}, t = {} (median of {reps}):", p.n, p.k, p.t);
        let runs: Vec<Vec<(&str, f64)>> = (0..reps).map(|_| iteration_phases(p)).collect();
        let mut total = 0.0;
        for i in 0..runs[0].len() {
            let mut xs: Vec<f64> = runs.iter().map(|r| r[i].1).collect();
            xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let med = xs[xs.len() / 2];
            if !runs[0][i].0.contains("total") {
                total += med;
            }
            println!("  {:<40} {:>8.2} ms", runs[0][i].0, med * 1e3);
        }
        println!("  {:<40} {:>8.2} ms", "sum of the separate phases", total * 1e3);
        println!("  {:<40} {:>8.2} ns", "that sum per net COT", total / p.net_output() as f64 * 1e9);
    }
    let cfg = FerretConfig { direct_limit: 0, ..FerretConfig::default() };
    let mut s = FerretSender::from_softspoken(SoftSpokenSender::new().with_k(DEFAULT_K).unwrap(), cfg).unwrap();
    let mut r = FerretReceiver::from_softspoken(SoftSpokenReceiver::new().with_k(DEFAULT_K).unwrap(), cfg).unwrap();
    let (mut cv, mut cp): (MemoryChannel, MemoryChannel) = memory_pair(MAX_MESSAGE_BYTES);
    let calls = 3 * reps.max(3);
    let handle = std::thread::spawn(move || {
        for i in 0..=calls {
            let (bits, macs) = block_on(r.extend(&mut cp, if i == 0 { 1 } else { m })).expect("prover");
            std::hint::black_box((bits, macs));
        }
    });
    block_on(s.extend(&mut cv, 1)).expect("verifier bootstrap");
    let (mut with_iter, mut served) = (vec![], vec![]);
    for _ in 0..calls {
        let before = s.iterations();
        let t = Instant::now();
        let keys = block_on(s.extend(&mut cv, m)).expect("verifier");
        let dt = t.elapsed().as_secs_f64();
        std::hint::black_box(keys);
        if s.iterations() > before {
            with_iter.push(dt)
        } else {
            served.push(dt)
        }
    }
    handle.join().unwrap();
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN) * 1e3
    };
    println!("warm extend({m}) on the verifier, setup parameters: with an iteration {:.2} ms (median of {}), from the buffer {:.2} ms (median of {})",
        med(&mut with_iter), with_iter.len(), med(&mut served), served.len());
}

fn main() {
    let arg = std::env::args().nth(1);
    #[cfg(not(target_arch = "wasm32"))]
    if arg.as_deref() == Some("phases") {
        let reps = std::env::args().nth(2).and_then(|x| x.parse().ok()).unwrap_or(5);
        phases(reps, 328_000);
        return;
    }
    let quick = arg.as_deref() == Some("quick");
    println!("threads: {}", rayon::current_num_threads());
    for p in [
        LpnParams::SMALL_256K,
        LpnParams::SMALL_320K,
        LpnParams::SMALL_384K,
        LpnParams::SMALL_448K,
        LpnParams::SMALL_512K,
        LpnParams::SETUP,
        LpnParams::MAIN,
    ] {
        println!(
            "params {p:?}: base COTs {}, net output {}, iteration bytes {} ({:.3} bits per net COT)",
            p.base_cots(),
            p.net_output(),
            p.iteration_bytes(),
            8.0 * p.iteration_bytes() as f64 / p.net_output() as f64
        );
    }

    let ss_name = format!("SoftSpoken k={DEFAULT_K}");
    let fss_name = format!("Ferret/SoftSpoken k={DEFAULT_K}");
    let n = tlsproof::cost::PREPROCESS_COTS;
    println!("the protocol's preprocessing, one extend({n}) in a fresh session:");
    line("KOS", n, kos(&[n])[0]);
    line(&ss_name, n, softspoken(DEFAULT_K, &[n])[0]);
    let no_small = FerretConfig { small: &[], ..FerretConfig::default() };
    for k in [5, DEFAULT_K] {
        line(&format!("Ferret/SoftSpoken k={k}, small set"), n, ferret_ss(k, FerretConfig::default(), &[n])[0]);
        line(&format!("Ferret/SoftSpoken k={k}, setup set"), n, ferret_ss(k, no_small, &[n])[0]);
    }
    println!(
        "fresh sessions of the default Ferret (SoftSpoken k={DEFAULT_K}) just past each set's net output, against KOS:"
    );
    let sets = [LpnParams::SMALL_SETS, &[LpnParams::SETUP]].concat();
    for n in sets.iter().map(|p| p.net_output() + 1) {
        let (f, k) = (ferret_ss(DEFAULT_K, FerretConfig::default(), &[n])[0], kos(&[n])[0]);
        line(&fss_name, n, f);
        println!("    KOS {:.3} bits/COT: {:.1}× fewer", 8.0 * k.1 as f64 / n as f64, k.1 as f64 / f.1 as f64);
    }
    if arg.as_deref() == Some("preprocess") {
        return;
    }
    for n in [1_000_000usize, 10_000_000] {
        println!("fresh session, one extend({n}) (base OT + bootstrap included):");
        let k = kos(&[n, n]);
        line("KOS", n, k[0]);
        line("KOS, next extend (warm)", n, k[1]);
        line(&ss_name, n, softspoken(DEFAULT_K, &[n])[0]);
        let f = ferret_kos(FerretConfig::for_kos(), &[n, n]);
        line("Ferret/KOS", n, f[0]);
        line("Ferret/KOS, next extend (warm)", n, f[1]);
        let f = ferret_ss(DEFAULT_K, FerretConfig::default(), &[n, n]);
        line(&fss_name, n, f[0]);
        line(&format!("{fss_name}, warm"), n, f[1]);
        line(&format!("{fss_name}, both calls"), 2 * n, add(f[0], f[1]));
        if !quick {
            for k in [4usize, 5] {
                line(&format!("Ferret/SoftSpoken k={k}"), n, ferret_ss(k, FerretConfig::default(), &[n])[0]);
            }
        }
    }

    println!("small sessions: direct KOS / SoftSpoken vs Ferret forced to bootstrap (direct_limit = 0):");
    let forced = FerretConfig { direct_limit: 0, ..FerretConfig::default() };
    let sizes: &[usize] =
        if quick { &[65_536, 262_144] } else { &[16_384, 40_000, 45_000, 65_536, 131_072, 262_144, 400_000, 600_000] };
    for &n in sizes {
        line("KOS", n, kos(&[n])[0]);
        line(&ss_name, n, softspoken(DEFAULT_K, &[n])[0]);
        line("Ferret/KOS (forced bootstrap)", n, ferret_kos(forced, &[n])[0]);
        line(&format!("{fss_name} (forced bootstrap)"), n, ferret_ss(DEFAULT_K, forced, &[n])[0]);
    }
}
