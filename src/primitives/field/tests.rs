use super::sums::*;
use super::*;

#[test]
fn x_times_x127_wraps_to_modulus_tail() {
    // x * x^127 = x^128 = x^7 + x^2 + x + 1
    assert_eq!(F128(2) * F128(1 << 127), F128(0x87));
}

#[test]
fn portable_and_hardware_multiplies_agree() {
    use rand::Rng;
    let mut rng = rand::rng();
    for _ in 0..2000 {
        let (a, b): (u64, u64) = (rng.random(), rng.random());
        assert_eq!(clmul64_wide(a, b), clmul64_reference(a, b));
        assert_eq!(clmul64_via32(a, b), clmul64_reference(a, b));
        let (x, y): (u128, u128) = (rng.random(), rng.random());
        assert_eq!(clmul(x, y), clmul128(x, y));
    }
    for (a, b) in [(u64::MAX, u64::MAX), (u64::MAX, 1), (0, u64::MAX)] {
        assert_eq!(clmul64_wide(a, b), clmul64_reference(a, b));
        assert_eq!(clmul64_via32(a, b), clmul64_reference(a, b));
    }
    super::clmul_known_answers().unwrap();
}

#[test]
fn fused_check_sums_match_the_definition() {
    use rand::Rng;
    let mut rng = rand::rng();
    let r = |rng: &mut rand::rngs::ThreadRng| F128(rng.random());
    let n = 137; // crosses the portable kernels' 64-item stages
    let coeffs: Vec<F128> = (0..n).map(|_| r(&mut rng)).collect();
    let and: Vec<[F128; 3]> = (0..n).map(|_| [r(&mut rng), r(&mut rng), r(&mut rng)]).collect();
    let prod: Vec<[F128; 5]> = (0..n).map(|_| [0; 5].map(|_: i32| r(&mut rng))).collect();
    let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
    for (c, t) in coeffs.iter().zip(&and) {
        e0 += *c * t[0] * t[1];
        e1 += *c * t[2];
    }
    assert_eq!(F128::and_sums(&coeffs, &and), (e0, e1));
    assert_eq!(and_sums_portable(&coeffs, &and), (e0, e1));
    let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
    for (c, [a, ma, b, mb, mc]) in coeffs.iter().zip(&prod) {
        e0 += *c * *ma * *mb;
        e1 += *c * (*a * *mb + *b * *ma + *mc);
    }
    assert_eq!(F128::product_sums(&coeffs, &prod), (e0, e1));
    assert_eq!(product_sums_portable(&coeffs, &prod), (e0, e1));
}

#[test]
fn and_row_sums_weight_the_row_by_descending_powers_of_x() {
    use rand::Rng;
    let mut rng = rand::rng();
    let r = |rng: &mut rand::rngs::ThreadRng| F128(rng.random());
    for len in [0, 1, 2, 77, 128] {
        let mut row: Vec<[F128; 3]> = (0..len).map(|_| [r(&mut rng), r(&mut rng), r(&mut rng)]).collect();
        if let Some(t) = row.first_mut() {
            // Top bits set, so the Horner steps fold through the modulus.
            *t = [F128(u128::MAX), F128(1 << 127), F128(u128::MAX)];
        }
        let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
        for (j, t) in row.iter().enumerate() {
            let w = F128::x_pow(1).pow((len - 1 - j) as u128);
            e0 += w * t[0] * t[1];
            e1 += w * t[2];
        }
        assert_eq!(F128::and_row_sums(&row), (e0, e1), "len {len}");
        assert_eq!(and_row_sums_portable(&row), (e0, e1), "len {len}");
    }
    assert_eq!(F128(1 << 127).mul_x(), F128(0x87));
}

#[test]
fn fixed_combinations_match_inner_products_on_both_paths() {
    use rand::Rng;
    let mut rng = rand::rng();
    let r = |rng: &mut rand::rngs::ThreadRng| F128(rng.random());
    let sets: [[F128; 8]; 2] = [[0; 8].map(|_: i32| r(&mut rng)), [0; 8].map(|_: i32| r(&mut rng))];
    for n in [0usize, 1, 5, 128, 129, 300] {
        let mut rows: Vec<[F128; 8]> = (0..n).map(|_| [0; 8].map(|_: i32| r(&mut rng))).collect();
        if let Some(row) = rows.first_mut() {
            *row = [F128(u128::MAX); 8];
        }
        let want: Vec<[F128; 2]> =
            rows.iter().map(|row| [F128::inner_product(&sets[0], row), F128::inner_product(&sets[1], row)]).collect();
        let mut got = vec![[F128::ZERO; 2]; n];
        FixedCombinations::new(sets).combine(&rows, &mut got);
        assert_eq!(got, want, "n = {n}");
        let mut sliced = vec![[F128::ZERO; 2]; n];
        let tables = bitsliced::Tables::new(&sets);
        for (rows, out) in rows.chunks(128).zip(sliced.chunks_mut(128)) {
            tables.combine(rows, out);
        }
        assert_eq!(sliced, want, "bit-sliced, n = {n}");
    }
}

#[test]
fn public_weighted_sums_match_the_naive_sum_on_both_paths() {
    use rand::Rng;
    let mut rng = rand::rng();
    let naive = |c: &[F128], v: &[F128]| c.iter().zip(v).fold(F128::ZERO, |acc, (c, v)| acc + c.mul(*v));
    for n in [0usize, 1, 7, 8, 9, 64, 100, 1000] {
        let mut c: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
        let mut v: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
        if n > 2 {
            // extreme words: every coefficient bit selects, every bit of the value is set
            c[0] = F128(u128::MAX);
            v[1] = F128(u128::MAX);
            c[2] = F128(1 << 127);
        }
        let want = naive(&c, &v);
        // fed in uneven pieces, so short (padded) groups of eight occur mid-stream
        for path in [PublicWeightedSum::new(), PublicWeightedSum::sliced()] {
            let mut sum = path;
            let mut at = 0;
            for step in [3usize, 8, 13, 1, 64].iter().cycle() {
                if at >= n {
                    break;
                }
                let end = (at + step).min(n);
                sum.add(&c[at..end], &v[at..end]);
                at = end;
            }
            assert_eq!(sum.finish(), want, "n = {n}");
        }
    }
    // the extra elements of the longer slice are ignored
    let mut sum = PublicWeightedSum::sliced();
    sum.add(&[F128::ONE; 3], &[F128(5), F128(6)]);
    assert_eq!(sum.finish(), F128(3));
}

#[test]
fn inner_product_matches_naive_sum() {
    use rand::Rng;
    let mut rng = rand::rng();
    let a: Vec<F128> = (0..50).map(|_| F128(rng.random())).collect();
    let b: Vec<F128> = (0..50).map(|_| F128(rng.random())).collect();
    let naive = a.iter().zip(&b).fold(F128::ZERO, |acc, (x, y)| acc + *x * *y);
    assert_eq!(F128::inner_product(&a, &b), naive);
    let mut prods = vec![F128::ZERO; 50];
    F128::mul_slices(&a, &b, &mut prods);
    assert!(prods.iter().zip(a.iter().zip(&b)).all(|(p, (x, y))| *p == *x * *y));
    // Multiplicative group order is 2^128 - 1.
    assert_eq!(a[0].pow(u128::MAX), F128::ONE);
    // extremes for the folds of the reduction (top bits set, all ones)
    let ext = [u128::MAX, 1 << 127, (1 << 127) | 1, u64::MAX as u128, !(u64::MAX as u128), 0x87 << 120];
    for &x in &ext {
        for &y in &ext {
            let (x, y) = (F128(x), F128(y));
            let (lo, hi) = clmul128(x.0, y.0);
            let expect = F128(reduce(lo, hi));
            let mut p = [F128::ZERO];
            F128::mul_slices(&[x], &[y], &mut p);
            assert_eq!(p[0], expect);
            assert_eq!(F128::inner_product(&[x], &[y]), expect);
            assert_eq!(F128::inner_product(&[x, y], &[y, x]), F128::ZERO);
        }
    }
}

#[test]
fn field_laws_on_random_elements() {
    use rand::Rng;
    let mut rng = rand::rng();
    for _ in 0..200 {
        let (a, b, c) = (F128(rng.random()), F128(rng.random()), F128(rng.random()));
        assert_eq!(a * b, b * a);
        assert_eq!((a * b) * c, a * (b * c));
        assert_eq!(a * (b + c), a * b + a * c);
        assert_eq!(a * F128::ONE, a);
    }
}
