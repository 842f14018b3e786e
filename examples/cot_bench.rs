//! Throughput and traffic of the OT extensions (KOS and SoftSpokenOT for several k) over an
//! in-memory channel, both parties in one process.
//! Run with `cargo run --release --example cot_bench [n] [k,k,...]`
//! (default n = 1,000,000, k = 1,2,4,5,8).

use futures::executor::block_on;
use futures::future::join;
use std::time::Instant;
use tlsproof::channel::{memory_pair, Channel, MemoryChannel};
use tlsproof::ot::kos::MAX_MESSAGE_BYTES;
use tlsproof::ot::{CotReceiver, CotSender, KosReceiver, KosSender, SoftSpokenReceiver, SoftSpokenSender};

/// Base OTs (setup) then one extend(n), timed separately; returns nothing, prints one line.
async fn setup_kos(s: &mut KosSender, r: &mut KosReceiver, cv: &mut MemoryChannel, cp: &mut MemoryChannel) {
    let (a, b) = join(s.setup(cv), r.setup(cp)).await;
    a.expect("setup (verifier)");
    b.expect("setup (prover)");
}

async fn setup_ss(
    s: &mut SoftSpokenSender,
    r: &mut SoftSpokenReceiver,
    cv: &mut MemoryChannel,
    cp: &mut MemoryChannel,
) {
    let (a, b) = join(s.setup(cv), r.setup(cp)).await;
    a.expect("setup (verifier)");
    b.expect("setup (prover)");
}

fn measure<S: CotSender, R: CotReceiver>(
    name: &str,
    n: usize,
    mut s: S,
    mut r: R,
    setup: impl FnOnce(&mut S, &mut R, &mut MemoryChannel, &mut MemoryChannel) -> f64,
) {
    let (mut cv, mut cp) = memory_pair(MAX_MESSAGE_BYTES);
    let setup_secs = setup(&mut s, &mut r, &mut cv, &mut cp);
    let setup_up = cp.bytes_sent();
    let setup_bytes = cv.bytes_sent() + cp.bytes_sent();
    let t = Instant::now();
    let (keys, cots) = block_on(join(s.extend(&mut cv, n), r.extend(&mut cp, n)));
    let secs = t.elapsed().as_secs_f64();
    let keys = keys.expect("extend (verifier)");
    let (bits, macs) = cots.expect("extend (prover)");
    let delta = s.delta();
    for i in (0..n).step_by((n / 1000).max(1)) {
        assert_eq!(macs[i], keys[i] + delta.select(bits[i]));
    }
    let up = cp.bytes_sent() - setup_up;
    let total = cv.bytes_sent() + cp.bytes_sent() - setup_bytes;
    println!(
        "  {name:<16} setup {:>6.1} ms {:>6} B | extend({n}) {:>8.1} ms = {:>6.2} M COT/s, {:>6.1} ns/COT | upload {:>10} B = {:>6.2} bits/COT (both dirs {:.2})",
        setup_secs * 1e3,
        setup_bytes,
        secs * 1e3,
        n as f64 / secs / 1e6,
        secs * 1e9 / n as f64,
        up,
        8.0 * up as f64 / n as f64,
        8.0 * total as f64 / n as f64,
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let ks: Vec<usize> = args
        .next()
        .map(|a| a.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 5, 8]);
    println!("threads: {}", rayon::current_num_threads());
    measure("KOS", n, KosSender::new(), KosReceiver::new(), |s, r, cv, cp| {
        let t = Instant::now();
        block_on(setup_kos(s, r, cv, cp));
        t.elapsed().as_secs_f64()
    });
    for k in ks {
        measure(
            &format!("SoftSpoken k={k}"),
            n,
            SoftSpokenSender::new().with_k(k).expect("k"),
            SoftSpokenReceiver::new().with_k(k).expect("k"),
            |s, r, cv, cp| {
                let t = Instant::now();
                block_on(setup_ss(s, r, cv, cp));
                t.elapsed().as_secs_f64()
            },
        );
    }
}
