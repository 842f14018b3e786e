//! Throughput of the KOS correlated-OT extension over an in-memory channel.
//! Run with `cargo run --release --example cot_bench [n]` (default n = 1,000,000).

use futures::executor::block_on;
use futures::future::join;
use std::time::Instant;
use tlsproof::zk::channel::{memory_pair, Channel};
use tlsproof::zk::ot::kos::MAX_MESSAGE_BYTES;
use tlsproof::zk::ot::{CotReceiver, CotSender, KosReceiver, KosSender};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let (mut cv, mut cp) = memory_pair(MAX_MESSAGE_BYTES);
    let mut sender = KosSender::new();
    let mut receiver = KosReceiver::new();

    let t0 = Instant::now();
    let (a, b) = block_on(join(sender.setup(&mut cv), receiver.setup(&mut cp)));
    a.expect("base OT (verifier)");
    b.expect("base OT (prover)");
    let setup = t0.elapsed();
    let setup_bytes = cv.bytes_sent() + cp.bytes_sent();

    let t1 = Instant::now();
    let (keys, cots) = block_on(join(sender.extend(&mut cv, n), receiver.extend(&mut cp, n)));
    let ext = t1.elapsed();
    let keys = keys.expect("extend (verifier)");
    let (bits, macs) = cots.expect("extend (prover)");
    let ext_bytes = cv.bytes_sent() + cp.bytes_sent() - setup_bytes;

    // spot-check the correlation so the numbers are for working output
    let delta = sender.delta();
    for i in (0..n).step_by((n / 1000).max(1)) {
        assert_eq!(macs[i], keys[i] + delta.select(bits[i]));
    }

    println!("threads: {}", rayon::current_num_threads());
    println!(
        "base OT setup: {:.1} ms, {} bytes",
        setup.as_secs_f64() * 1e3,
        setup_bytes
    );
    println!(
        "extend({n}): {:.1} ms (both parties in one process) = {:.2} M COT/s",
        ext.as_secs_f64() * 1e3,
        n as f64 / ext.as_secs_f64() / 1e6
    );
    println!(
        "traffic: {} bytes = {:.2} bytes/COT ({:.1} bits/COT)",
        ext_bytes,
        ext_bytes as f64 / n as f64,
        8.0 * ext_bytes as f64 / n as f64
    );
}
