//! Ferret vs KOS, side by side: bytes on the wire per correlation (amortized, base OTs and
//! bootstrap included) and correlations per second, both parties in one process over an
//! in-memory channel. Run with `cargo run --release --example ferret_bench`.

use futures::executor::block_on;
use futures::future::join;
use std::time::Instant;
use tlsproof::zk::channel::{memory_pair, Channel, MemoryChannel};
use tlsproof::zk::field::F128;
use tlsproof::zk::ot::ferret::{FerretConfig, LpnParams};
use tlsproof::zk::ot::kos::MAX_MESSAGE_BYTES;
use tlsproof::zk::ot::{
    CotReceiver, CotSender, FerretReceiver, FerretSender, KosReceiver, KosSender,
};

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

/// Successive `extend` calls on one pair; per call: (seconds, bytes both directions), times and
/// bytes include the base OTs and (for Ferret) the KOS bootstrap in the first call.
fn run<S: CotSender, R: CotReceiver>(mut s: S, mut r: R, ns: &[usize]) -> Vec<(f64, u64)> {
    let (mut cv, mut cp): (MemoryChannel, MemoryChannel) = memory_pair(MAX_MESSAGE_BYTES);
    let mut out = vec![];
    let mut before = 0;
    for &n in ns {
        let t = Instant::now();
        let (keys, cots) = block_on(join(s.extend(&mut cv, n), r.extend(&mut cp, n)));
        let secs = t.elapsed().as_secs_f64();
        let keys = keys.expect("verifier");
        let (bits, macs) = cots.expect("prover");
        spot_check(s.delta(), &keys, &bits, &macs);
        let total = cv.bytes_sent() + cp.bytes_sent();
        out.push((secs, total - before));
        before = total;
    }
    out
}

fn kos(ns: &[usize]) -> Vec<(f64, u64)> {
    run(KosSender::new(), KosReceiver::new(), ns)
}

fn ferret(cfg: FerretConfig, ns: &[usize]) -> Vec<(f64, u64)> {
    run(
        FerretSender::from_kos(KosSender::new(), cfg).unwrap(),
        FerretReceiver::from_kos(KosReceiver::new(), cfg).unwrap(),
        ns,
    )
}

fn line(name: &str, n: usize, (secs, bytes): (f64, u64)) {
    println!(
        "  {name:<28} n={n:>10}  {:>9.1} ms  {:>6.2} M COT/s  {:>11} B  {:>8.3} bits/COT",
        secs * 1e3,
        n as f64 / secs / 1e6,
        bytes,
        8.0 * bytes as f64 / n as f64
    );
}

fn main() {
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

    for n in [1_000_000usize, 10_000_000] {
        println!("fresh session, one extend({n}) (base OT + bootstrap included):");
        line("KOS", n, kos(&[n])[0]);
        let f = ferret(FerretConfig::default(), &[n, n]);
        line("Ferret (default config)", n, f[0]);
        line("Ferret, next extend (warm)", n, f[1]);
        let both = (f[0].0 + f[1].0, f[0].1 + f[1].1);
        line("Ferret, both calls", 2 * n, both);
        let emp = FerretConfig {
            setup: LpnParams::EMP_B13_SETUP,
            main: Some(LpnParams::EMP_B13_MAIN),
            ..FerretConfig::default()
        };
        line("Ferret (emp-ot b13 params)", n, ferret(emp, &[n])[0]);
    }

    println!("small sessions: KOS vs Ferret forced to bootstrap (direct_limit = 0):");
    let forced = FerretConfig {
        direct_limit: 0,
        ..FerretConfig::default()
    };
    for n in [16_384usize, 65_536, 131_072, 262_144, 600_000] {
        line("KOS", n, kos(&[n])[0]);
        line("Ferret (forced bootstrap)", n, ferret(forced, &[n])[0]);
    }
}
