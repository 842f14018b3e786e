//! Carry-less multiplication, the field's one costly step, with a backend per platform:
//! PCLMULQDQ on x86-64, 64-bit software multiplies, and wasm32's 32-bit ones (SIMD128 where
//! built with it), with known answers checked against a bit-by-bit reference.

/// Whether the PCLMULQDQ kernels may run. Building with `--cfg tlsproof_portable` turns them
/// off (and uses wasm32's 32-bit multiplies), so the browser's arithmetic can be profiled
/// natively, e.g. with `perf` (`crate::primitives::prp` then runs its bit-sliced AES too).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(in crate::primitives::field) fn has_pclmul() -> bool {
    !cfg!(tlsproof_portable) && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// 128×128 → 256-bit carry-less multiply: hardware on x86_64 with PCLMULQDQ, else portable.
#[inline]
pub(in crate::primitives::field) fn clmul(a: u128, b: u128) -> (u128, u128) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_pclmul() {
            // SAFETY: the CPU supports pclmulqdq (checked just above).
            return unsafe { clmul128_pclmul(a, b) };
        }
    }
    clmul128(a, b)
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(in crate::primitives::field) unsafe fn clmul128_pclmul(a: u128, b: u128) -> (u128, u128) {
    use core::arch::x86_64::*;
    let av = _mm_set_epi64x((a >> 64) as i64, a as i64);
    let bv = _mm_set_epi64x((b >> 64) as i64, b as i64);
    let z0 = _mm_clmulepi64_si128(av, bv, 0x00);
    let z2 = _mm_clmulepi64_si128(av, bv, 0x11);
    let m1 = _mm_clmulepi64_si128(av, bv, 0x10);
    let m2 = _mm_clmulepi64_si128(av, bv, 0x01);
    let z1 = _mm_xor_si128(m1, m2);
    let to_u128 = |v: __m128i| -> u128 {
        let mut out = [0u8; 16];
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, v);
        u128::from_le_bytes(out)
    };
    let z0 = to_u128(z0);
    let z1 = to_u128(z1);
    let z2 = to_u128(z2);
    (z0 ^ (z1 << 64), z2 ^ (z1 >> 64))
}

/// 128×128 → 256-bit carry-less multiply, portable and branch-free.
pub(in crate::primitives::field) fn clmul128(a: u128, b: u128) -> (u128, u128) {
    let a0 = a as u64;
    let a1 = (a >> 64) as u64;
    let b0 = b as u64;
    let b1 = (b >> 64) as u64;
    let z0 = clmul64(a0, b0);
    let z2 = clmul64(a1, b1);
    let z1 = clmul64(a0 ^ a1, b0 ^ b1) ^ z0 ^ z2;
    let lo = z0 ^ (z1 << 64);
    let hi = z2 ^ (z1 >> 64);
    (lo, hi)
}

/// 64×64 → 128-bit carry-less multiply: on 32-bit targets (wasm32, where u128 products are
/// emulated) by Karatsuba over 32-bit pieces, elsewhere with native 64×64 → 128 products.
#[inline]
pub(in crate::primitives::field) fn clmul64(a: u64, b: u64) -> u128 {
    #[cfg(all(target_pointer_width = "64", not(tlsproof_portable)))]
    {
        clmul64_wide(a, b)
    }
    #[cfg(any(not(target_pointer_width = "64"), tlsproof_portable))]
    {
        clmul64_via32(a, b)
    }
}

/// 32×32 → 64-bit carry-less multiply: on SIMD128 in wasm (1.4× the products per second
/// of the scalar form in Chromium), scalar elsewhere.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(in crate::primitives::field) fn clmul32(a: u32, b: u32) -> u64 {
    clmul32_simd128(a, b)
}

/// [`clmul32_scalar`] on SIMD128: the four classes of `a` sit in the four 32-bit lanes, and
/// for class c of the product the lanes of `b` are rotated so that lane i holds class c − i;
/// two widening multiplies (lanes 0–1, 2–3 → 64-bit) then give the four integer products.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(in crate::primitives::field) fn clmul32_simd128(a: u32, b: u32) -> u64 {
    use core::arch::wasm32::*;
    let m32 = u32x4(0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888);
    let x = v128_and(u32x4_splat(a), m32);
    let y = v128_and(u32x4_splat(b), m32);
    #[inline(always)]
    fn class(x: v128, yc: v128, mask: u64) -> v128 {
        let p = v128_xor(u64x2_extmul_low_u32x4(x, yc), u64x2_extmul_high_u32x4(x, yc));
        v128_and(p, u64x2_splat(mask))
    }
    let z = v128_xor(
        v128_xor(
            class(x, i32x4_shuffle::<0, 3, 2, 1>(y, y), 0x1111_1111_1111_1111),
            class(x, i32x4_shuffle::<1, 0, 3, 2>(y, y), 0x2222_2222_2222_2222),
        ),
        v128_xor(
            class(x, i32x4_shuffle::<2, 1, 0, 3>(y, y), 0x4444_4444_4444_4444),
            class(x, i32x4_shuffle::<3, 2, 1, 0>(y, y), 0x8888_8888_8888_8888),
        ),
    );
    u64x2_extract_lane::<0>(z) ^ u64x2_extract_lane::<1>(z)
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[cfg_attr(all(target_pointer_width = "64", not(tlsproof_portable)), allow(dead_code))]
#[inline(always)]
pub(in crate::primitives::field) fn clmul32(a: u32, b: u32) -> u64 {
    clmul32_scalar(a, b)
}

/// 32×32 → 64-bit carry-less multiply with 16 integer products on operands split into the
/// four residue classes mod 4 (at most 8 ones summed per position: no carry into the class).
pub(in crate::primitives::field) fn clmul32_scalar(a: u32, b: u32) -> u64 {
    const M32: [u32; 4] = [0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888];
    const M64: [u64; 4] = [0x1111_1111_1111_1111, 0x2222_2222_2222_2222, 0x4444_4444_4444_4444, 0x8888_8888_8888_8888];
    let x = [a & M32[0], a & M32[1], a & M32[2], a & M32[3]];
    let y = [b & M32[0], b & M32[1], b & M32[2], b & M32[3]];
    let mut r = 0u64;
    for c in 0..4 {
        let mut z = 0u64;
        for i in 0..4 {
            z ^= (x[i] as u64).wrapping_mul(y[(c + 4 - i) % 4] as u64);
        }
        r |= z & M64[c];
    }
    r
}

#[cfg_attr(all(target_pointer_width = "64", not(tlsproof_portable)), allow(dead_code))]
pub(in crate::primitives::field) fn clmul64_via32(a: u64, b: u64) -> u128 {
    let (a0, a1, b0, b1) = (a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32);
    let z0 = clmul32(a0, b0) as u128;
    let z2 = clmul32(a1, b1) as u128;
    let z1 = clmul32(a0 ^ a1, b0 ^ b1) as u128 ^ z0 ^ z2;
    z0 ^ (z1 << 32) ^ (z2 << 64)
}

/// 64×64 → 128-bit carry-less multiply with integer multiplies on "holey" operands:
/// the bits are split into five residue classes mod 5, so each integer product has at most
/// 13 ones summed per position, which never carries into a position of the same class.
#[cfg_attr(any(not(target_pointer_width = "64"), tlsproof_portable), allow(dead_code))]
pub(in crate::primitives::field) fn clmul64_wide(a: u64, b: u64) -> u128 {
    const M64: [u64; 5] = {
        let mut m = [0u64; 5];
        let mut i = 0;
        while i < 64 {
            m[i % 5] |= 1u64 << i;
            i += 1;
        }
        m
    };
    const M128: [u128; 5] = {
        let mut m = [0u128; 5];
        let mut i = 0;
        while i < 128 {
            m[i % 5] |= 1u128 << i;
            i += 1;
        }
        m
    };
    let xa = [a & M64[0], a & M64[1], a & M64[2], a & M64[3], a & M64[4]];
    let yb = [b & M64[0], b & M64[1], b & M64[2], b & M64[3], b & M64[4]];
    let mut r = 0u128;
    for c in 0..5 {
        let mut z = 0u128;
        for i in 0..5 {
            let j = (c + 5 - i) % 5;
            z ^= (xa[i] as u128).wrapping_mul(yb[j] as u128);
        }
        r |= z & M128[c];
    }
    r
}

/// The target's 32- and 64-bit carry-less multiplies against the bit-by-bit definition on
/// edge and pseudo-random operands (the browser tests run this on the SIMD128 form).
#[doc(hidden)]
pub fn clmul_known_answers() -> Result<(), String> {
    let reference = clmul64_reference;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cases =
        vec![(0, 0), (u64::MAX, u64::MAX), (1, u64::MAX), (0x8000_0000_0000_0000, 3), (0xffff_ffff, 0xffff_ffff)];
    cases.extend((0..2000).map(|_| (next(), next())));
    for (a, b) in cases {
        let (a32, b32) = (a as u32, b as u32);
        if clmul32(a32, b32) as u128 != reference(a32 as u64, b32 as u64)
            || clmul32(a32, b32) != clmul32_scalar(a32, b32)
        {
            return Err(format!("clmul32({a32:#x}, {b32:#x})"));
        }
        if clmul64_via32(a, b) != reference(a, b) {
            return Err(format!("clmul64_via32({a:#x}, {b:#x})"));
        }
    }
    Ok(())
}

/// The carry-less product by its definition, bit by bit (the reference of the known answers).
pub(in crate::primitives::field) fn clmul64_reference(a: u64, b: u64) -> u128 {
    let mut r: u128 = 0;
    let a = a as u128;
    for i in 0..64 {
        let mask = 0u128.wrapping_sub(((b >> i) & 1) as u128);
        r ^= (a << i) & mask;
    }
    r
}
