//! The engines alone, for `tlsproof bench zk|mpc` natively and `benchZk`/`benchMpc` in the
//! browser: the ZK engine ([`zk`], which also holds the figures' shape and the emulated links
//! the others use), the garbled-circuit engine ([`gc`]) and MPC mode's key exchange and whole
//! session ([`mpc`]).

pub mod gc;
pub(crate) mod mpc;
pub mod zk;

/// Runs the two parties at once, each on its own thread.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn both<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    std::thread::scope(|s| {
        let ha = s.spawn(a);
        let rb = b();
        (ha.join().expect("the garbler thread panicked"), rb)
    })
}

/// Runs the two parties at once on two of rayon's Web Workers (the caller checked that the
/// pool has two: with one, the garbler would wait for an evaluator that never runs).
#[cfg(target_arch = "wasm32")]
pub(crate) fn both<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    rayon::join(a, b)
}
