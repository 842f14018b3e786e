//! GF(2^128) slice kernels against the scalar PCLMULQDQ path they replaced (native; `cargo run
//! --release --example field_kernels`): the XMM-resident kernels measured ≈2× faster here.
use std::time::Instant;
use tlsproof::primitives::field::{Wide, F128};
fn main() {
    let n = 1 << 16;
    let a: Vec<F128> = (0..n).map(|i| F128((i as u128).wrapping_mul(0x9e3779b97f4a7c15f39cc0605cedc835))).collect();
    let b: Vec<F128> = a.iter().map(|x| F128(x.0.rotate_left(17) ^ 0x1234)).collect();
    let t3: Vec<[F128; 3]> = (0..n).map(|i| [a[i], b[i], a[(i + 1) % n]]).collect();
    for _ in 0..3 {
        let reps = 200;
        let t = Instant::now();
        let mut x = F128::ZERO;
        for _ in 0..reps {
            x += F128::inner_product(&a, &b);
        }
        let simd = t.elapsed().as_secs_f64() / (reps * n) as f64 * 1e9;
        let t = Instant::now();
        let mut y = F128::ZERO;
        for _ in 0..reps {
            y += a.iter().zip(&b).fold(Wide::ZERO, |acc, (p, q)| acc ^ p.mul_wide(*q)).reduce();
        }
        let scalar = t.elapsed().as_secs_f64() / (reps * n) as f64 * 1e9;
        assert_eq!(x, y);
        let t = Instant::now();
        let mut z = (F128::ZERO, F128::ZERO);
        for _ in 0..reps {
            let r = F128::and_sums(&a, &t3);
            z.0 += r.0;
            z.1 += r.1;
        }
        let and_simd = t.elapsed().as_secs_f64() / (reps * n) as f64 * 1e9;
        let t = Instant::now();
        let mut w = (F128::ZERO, F128::ZERO);
        for _ in 0..reps {
            let (mut s0, mut s1) = (Wide::ZERO, Wide::ZERO);
            for (c, t) in a.iter().zip(&t3) {
                s0 ^= c.mul_wide(t[0] * t[1]);
                s1 ^= c.mul_wide(t[2]);
            }
            w.0 += s0.reduce();
            w.1 += s1.reduce();
        }
        let and_scalar = t.elapsed().as_secs_f64() / (reps * n) as f64 * 1e9;
        assert_eq!(z, w);
        println!("inner product: simd {simd:.2} ns/elem, scalar {scalar:.2}; and sums: simd {and_simd:.2}, scalar {and_scalar:.2}");
    }
}
