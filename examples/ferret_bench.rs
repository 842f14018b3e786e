//! Ferret (bootstrapped from KOS or from SoftSpokenOT) vs KOS and SoftSpokenOT alone, side by
//! side: bytes on the wire per correlation (amortized, base OTs and bootstrap included; total
//! and prover upload) and correlations per second, both parties in one process over an
//! in-memory channel. Run with `cargo run --release --example ferret_bench [quick]`.

use futures::executor::block_on;
use futures::future::join;
use std::time::Instant;
use tlsproof::zk::channel::{memory_pair, Channel, MemoryChannel};
use tlsproof::zk::field::F128;
use tlsproof::zk::ot::ferret::{FerretConfig, LpnParams};
use tlsproof::zk::ot::kos::MAX_MESSAGE_BYTES;
use tlsproof::zk::ot::softspoken::DEFAULT_K;
use tlsproof::zk::ot::{
    CotReceiver, CotSender, FerretReceiver, FerretSender, KosReceiver, KosSender,
    SoftSpokenReceiver, SoftSpokenSender,
};

/// (seconds, bytes both directions, bytes prover → verifier) of one extend call.
type Sample = (f64, u64, u64);

fn spot_check(delta: F128, keys: &[F128], bits: &[bool], macs: &[F128]) {
    assert_eq!(keys.len(), macs.len());
    for i in (0..keys.len()).step_by((keys.len() / 4096).max(1)) {
        assert_eq!(
            macs[i],
            keys[i] + delta.select(bits[i]),
            "broken correlation {i}"
        );
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
    run(
        SoftSpokenSender::new().with_k(k).unwrap(),
        SoftSpokenReceiver::new().with_k(k).unwrap(),
        ns,
    )
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

fn main() {
    let quick = std::env::args().nth(1).as_deref() == Some("quick");
    println!("threads: {}", rayon::current_num_threads());
    for p in [
        LpnParams::SETUP,
        LpnParams::MAIN,
        LpnParams::EMP_B13_SETUP,
        LpnParams::EMP_B13_MAIN,
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
    for n in [1_000_000usize, 10_000_000] {
        println!("fresh session, one extend({n}) (base OT + bootstrap included):");
        line("KOS", n, kos(&[n])[0]);
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
            let emp = FerretConfig {
                setup: LpnParams::EMP_B13_SETUP,
                main: Some(LpnParams::EMP_B13_MAIN),
                ..FerretConfig::default()
            };
            line(&format!("{fss_name} (emp-ot b13 params)"), n, ferret_ss(DEFAULT_K, emp, &[n])[0]);
        }
    }

    println!("small sessions: direct KOS / SoftSpoken vs Ferret forced to bootstrap (direct_limit = 0):");
    let forced = FerretConfig {
        direct_limit: 0,
        ..FerretConfig::default()
    };
    let sizes: &[usize] = if quick {
        &[65_536, 262_144]
    } else {
        &[16_384, 65_536, 131_072, 262_144, 400_000, 600_000]
    };
    for &n in sizes {
        line("KOS", n, kos(&[n])[0]);
        line(&ss_name, n, softspoken(DEFAULT_K, &[n])[0]);
        line("Ferret/KOS (forced bootstrap)", n, ferret_kos(forced, &[n])[0]);
        line(&format!("{fss_name} (forced bootstrap)"), n, ferret_ss(DEFAULT_K, forced, &[n])[0]);
    }
}
