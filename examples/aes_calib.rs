//! Calibration: raw fixed-key AES-128 throughput of the `aes` crate on this machine.
use aes::cipher::{consts::U16, generic_array::GenericArray, BlockEncrypt, KeyInit};
use std::time::Instant;
fn main() {
    let aes = aes::Aes128::new(GenericArray::from_slice(&[7u8; 16]));
    for batch in [1usize, 8, 64, 512] {
        let mut blocks = vec![GenericArray::<u8, U16>::default(); batch];
        let total = 4_000_000usize;
        let t = Instant::now();
        for _ in 0..total / batch {
            aes.encrypt_blocks(&mut blocks);
        }
        let dt = t.elapsed().as_secs_f64();
        println!("batch {batch:>4}: {:.2} ns/block", dt * 1e9 / total as f64);
        std::hint::black_box(&blocks);
    }
}
