//! Known-answer and soundness tests of the gadgets (cleartext backend and full ZK runs).

use super::aes::{encrypt, gf256_mul, key_schedule, sbox_plain};
use super::aes_bool::{encrypt_bool, key_schedule_bool};
use super::hmac_prf::{hmac, hmac_key, tls12_key_block, tls12_verify_data};
use super::keystream::{ghash_key, j0_block, keystream_blocks};
use super::sha256::{compress, initial_state, sha256};
use super::*;
use crate::primitives::field::F128;
use crate::zk::bytes::{assert_bytes_eq, commit_bytes, open_bytes, open_selected_bytes};
use crate::zk::sbox::{alpha, embedding_bases};
use crate::zk::tests::zk_run;
use crate::zk::{Cheat, PlainBackend, ProofError};
use ::aes::cipher::{BlockEncrypt, KeyInit};
use rand::Rng;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn rand_bytes(n: usize) -> Vec<u8> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random()).collect()
}

/// A digest gadget on the cleartext evaluator, the message committed.
fn plain_digest(
    hash: fn(&mut PlainBackend, &[<PlainBackend as Gates>::Bit]) -> Vec<<PlainBackend as Gates>::Bit>,
    msg: &[u8],
) -> Vec<u8> {
    let mut b = PlainBackend::new();
    let bits = commit_bytes(&mut b, Some(msg), msg.len());
    let d = hash(&mut b, &bits);
    open_bytes(&mut b, &d)
}

/// SHA-256 and SHA-384 against FIPS 180-4's one- and two-block examples and `sha2` on random
/// lengths around their padding boundaries.
#[test]
fn sha256_and_sha384_match_nist_vectors_and_sha2() {
    use ::sha2::Digest;
    type Gadget = fn(&mut PlainBackend, &[<PlainBackend as Gates>::Bit]) -> Vec<<PlainBackend as Gates>::Bit>;
    let cases: [(Gadget, fn(&[u8]) -> Vec<u8>, [(&[u8], &str); 2], [usize; 7]); 2] = [
        (
            super::sha256::sha256,
            |m| ::sha2::Sha256::digest(m).to_vec(),
            [
                (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
                (b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            ],
            [0, 1, 55, 56, 64, 100, 130],
        ),
        (
            super::sha384::sha384,
            |m| ::sha2::Sha384::digest(m).to_vec(),
            [
                (b"abc", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
                (
                    b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                    "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039",
                ),
            ],
            [0, 1, 111, 112, 128, 200, 300],
        ),
    ];
    for (gadget, reference, vectors, lens) in cases {
        for (message, want) in vectors {
            assert_eq!(plain_digest(gadget, message), hex(want));
        }
        for len in lens {
            let m = rand_bytes(len);
            assert_eq!(plain_digest(gadget, &m), reference(&m), "len {len}");
        }
    }
}

#[test]
fn sha256_compression_and_count() {
    // Private state and block: 64 rounds × (32 Ch + 32 Maj + 7 adders) + 48 × 3 schedule
    // adders + 8 final adders, 31 AND per adder = 22,696, minus the carries that fold when
    // adding the public K_t (the low carries stay public up to and including K_t's lowest 1).
    let mut b = PlainBackend::new();
    let st = commit_bytes(&mut b, Some(&[1u8; 32]), 32);
    let state = sha256::state_from_bytes::<PlainBackend>(&st);
    let block = commit_bytes(&mut b, Some(&[0u8; 64]), 64);
    let _ = compress(&mut b, &state, &block);
    let folded: usize = sha256::K.iter().map(|k| (k.trailing_zeros() as usize + 1).min(31)).sum();
    assert_eq!(b.stats().and_gates, 64 * 64 + (64 * 7 + 48 * 3 + 8) * 31 - folded);
    // From the public IV the first rounds partly fold.
    let mut b = PlainBackend::new();
    let block = commit_bytes(&mut b, Some(&[0u8; 64]), 64);
    let iv = initial_state(&b);
    let _ = compress(&mut b, &iv, &block);
    assert!(b.stats().and_gates < 22_573 - 300);
    // Private state, public block (HMAC's outer compression): no schedule adders, and
    // K_t + W_t folds: 64 × (64 + 6 × 31) + 8 × 31 = 16,248, minus the low carries that
    // fold below the lowest 1 of each K_t + W_t.
    let mut b = PlainBackend::new();
    let st = commit_bytes(&mut b, Some(&[1u8; 32]), 32);
    let state = sha256::state_from_bytes::<PlainBackend>(&st);
    let block = constant_bytes(&b, &[7u8; 64]);
    let _ = compress(&mut b, &state, &block);
    let n = b.stats().and_gates;
    assert!((16_248 - 64 * 4..=16_248).contains(&n), "{n} AND gates");
    // Public state and public block: everything folds.
    let mut b = PlainBackend::new();
    let block = constant_bytes(&b, &[7u8; 64]);
    let iv = initial_state(&b);
    let _ = compress(&mut b, &iv, &block);
    assert_eq!(b.stats().and_gates, 0);
}

#[test]
fn sha256_in_zk_opens_correct_digest() {
    let msg = b"abc".to_vec();
    let expected = hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    let (p, v) = zk_run(
        Cheat::default(),
        |b| {
            let m = commit_bytes(b, Some(&msg), 3);
            let d = sha256(b, &m);
            open_bytes(b, &d)
        },
        |b| {
            let m = commit_bytes(b, None, 3);
            let d = sha256(b, &m);
            open_bytes(b, &d)
        },
    );
    assert_eq!(p.unwrap(), expected);
    assert_eq!(v.unwrap(), expected);
}

#[test]
fn sha256_adder_fault_is_rejected() {
    // Commits 0..512 are the message; the first AND gates belong to the first message-schedule
    // adder (W16 = W0 + σ0(W1) …), so commit 512 + 5 is the 6th carry of that adder.
    let block = rand_bytes(64);
    let cheat = Cheat { flip_commit: Some(512 + 5), ..Default::default() };
    let (p, v) = zk_run(
        cheat,
        |b| {
            let m = commit_bytes(b, Some(&block), 64);
            let iv = initial_state(b);
            let s = compress(b, &iv, &m);
            open_bytes(b, &sha256::state_to_bytes::<crate::zk::ProverBackend>(&s))
        },
        |b| {
            let m = commit_bytes(b, None, 64);
            let iv = initial_state(b);
            let s = compress(b, &iv, &m);
            open_bytes(b, &sha256::state_to_bytes::<crate::zk::VerifierBackend>(&s))
        },
    );
    assert!(p.is_ok());
    assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
}

fn ring_hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    ring::hmac::sign(&k, msg).as_ref().to_vec()
}

fn plain_hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut b = PlainBackend::new();
    let kb = commit_bytes(&mut b, Some(key), key.len());
    let hk = hmac_key(&mut b, &kb);
    let mb = constant_bytes(&b, msg);
    let t = hmac(&mut b, &hk, &mb);
    open_bytes(&mut b, &t)
}

#[test]
fn hmac_matches_rfc4231_and_ring() {
    // RFC 4231 test case 1
    let k1 = [0x0bu8; 20];
    let e1 = hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    assert_eq!(plain_hmac(&k1, b"Hi There"), e1);
    assert_eq!(ring_hmac(&k1, b"Hi There"), e1);
    // RFC 4231 test case 2
    let e2 = hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    assert_eq!(plain_hmac(b"Jefe", b"what do ya want for nothing?"), e2);
    // …and in ZK with the key private.
    fn circuit<B: crate::zk::Backend>(b: &mut B, key: Option<&[u8]>) -> Vec<u8> {
        let kb = commit_bytes(b, key, 4);
        let hk = hmac_key(b, &kb);
        let mb = constant_bytes(b, b"what do ya want for nothing?");
        let t = hmac(b, &hk, &mb);
        open_bytes(b, &t)
    }
    let (p, v) = zk_run(Cheat::default(), |b| circuit(b, Some(b"Jefe")), |b| circuit(b, None));
    assert_eq!(p.unwrap(), e2);
    assert_eq!(v.unwrap(), e2);
    for (kl, ml) in [(48usize, 0usize), (48, 77), (64, 200), (1, 55)] {
        let k = rand_bytes(kl);
        let m = rand_bytes(ml);
        assert_eq!(plain_hmac(&k, &m), ring_hmac(&k, &m));
    }
}

/// P_SHA256 per RFC 5246 §5 with ring's HMAC.
fn ring_prf(secret: &[u8], label: &[u8], seed: &[u8], len: usize) -> Vec<u8> {
    let mut ls = label.to_vec();
    ls.extend_from_slice(seed);
    let mut a = ring_hmac(secret, &ls);
    let mut out = Vec::new();
    while out.len() < len {
        let mut m = a.clone();
        m.extend_from_slice(&ls);
        out.extend(ring_hmac(secret, &m));
        a = ring_hmac(secret, &a);
    }
    out.truncate(len);
    out
}

#[test]
fn tls12_prf_in_zk_matches_ring() {
    let ms = rand_bytes(48);
    let sr: [u8; 32] = rand::rng().random();
    let cr: [u8; 32] = rand::rng().random();
    let hc: [u8; 32] = rand::rng().random();
    let mut seed = sr.to_vec();
    seed.extend_from_slice(&cr);
    let kb_expected = ring_prf(&ms, b"key expansion", &seed, 40);
    let vd_expected = ring_prf(&ms, b"client finished", &hc, 12);
    fn circuit<B: crate::zk::Backend>(
        b: &mut B,
        ms: Option<&[u8]>,
        sr: &[u8; 32],
        cr: &[u8; 32],
        hc: &[u8; 32],
    ) -> (Vec<u8>, Vec<u8>) {
        let msb = commit_bytes(b, ms, 48);
        let key = hmac_key(b, &msb);
        let kb = tls12_key_block(b, &key, sr, cr, 40);
        let vd = tls12_verify_data(b, &key, b"client finished", hc);
        (open_bytes(b, &kb), open_bytes(b, &vd))
    }
    let (p, v) =
        zk_run(Cheat::default(), |b| circuit(b, Some(&ms), &sr, &cr, &hc), |b| circuit(b, None, &sr, &cr, &hc));
    assert_eq!(p.unwrap(), (kb_expected.clone(), vd_expected.clone()));
    assert_eq!(v.unwrap(), (kb_expected, vd_expected));
}

#[test]
fn prf_output_faults_are_rejected() {
    let ms = rand_bytes(48);
    let hs: [u8; 32] = rand::rng().random();
    let vd_expected = ring_prf(&ms, b"server finished", &hs, 12);
    fn circuit<B: crate::zk::Backend>(b: &mut B, ms: Option<&[u8]>, hs: &[u8; 32], expect: &[u8]) -> Vec<u8> {
        let msb = commit_bytes(b, ms, 48);
        let key = hmac_key(b, &msb);
        let vd = tls12_verify_data(b, &key, b"server finished", hs);
        // Bind to the public expectation and also open it.
        assert_bytes_eq(b, &vd, expect);
        open_bytes(b, &vd)
    }
    // Honest run passes.
    let (_, v) =
        zk_run(Cheat::default(), |b| circuit(b, Some(&ms), &hs, &vd_expected), |b| circuit(b, None, &hs, &vd_expected));
    assert_eq!(v.unwrap(), vd_expected);
    // Opening a wrong PRF output bit.
    let cheat = Cheat { flip_open: Some(13), ..Default::default() };
    let (_, v) = zk_run(cheat, |b| circuit(b, Some(&ms), &hs, &vd_expected), |b| circuit(b, None, &hs, &vd_expected));
    assert!(matches!(v, Err(ProofError::OpeningMacMismatch)), "{v:?}");
    // Claiming the PRF output equals a different public value.
    let mut wrong = vd_expected.clone();
    wrong[4] ^= 0x10;
    let (_, v) = zk_run(Cheat::default(), |b| circuit(b, Some(&ms), &hs, &wrong), |b| circuit(b, None, &hs, &wrong));
    assert!(matches!(v, Err(ProofError::ConstantMismatch)), "{v:?}");
}

#[test]
fn alpha_is_a_root_and_embedding_is_a_homomorphism() {
    let a = alpha();
    assert_eq!(a.pow(8) ^ a.pow(4) ^ a.pow(3) ^ a ^ F128::ONE, F128::ZERO);
    assert_eq!(a.pow(255), F128::ONE);
    let (lin, sq) = embedding_bases();
    let phi = |x: u8| (0..8).fold(F128::ZERO, |acc, i| acc ^ lin[i].select((x >> i) & 1 == 1));
    let mut rng = rand::rng();
    for _ in 0..200 {
        let (x, y): (u8, u8) = (rng.random(), rng.random());
        assert_eq!(phi(x) * phi(y), phi(gf256_mul(x, y)));
        let phi_sq = (0..8).fold(F128::ZERO, |acc, i| acc ^ sq[i].select((x >> i) & 1 == 1));
        assert_eq!(phi_sq, phi(x) * phi(x));
    }
    // The plain S-box matches FIPS-197 spot values.
    assert_eq!(sbox_plain(0x00), 0x63);
    assert_eq!(sbox_plain(0x53), 0xed);
    assert_eq!(sbox_plain(0xff), 0x16);
}

/// The `aes` crate's AES-128 or AES-256, by the key's length.
fn aes_ref(key: &[u8], block: &[u8]) -> Vec<u8> {
    let mut blk = ::aes::Block::clone_from_slice(block);
    match key.len() {
        16 => ::aes::Aes128::new_from_slice(key).unwrap().encrypt_block(&mut blk),
        _ => ::aes::Aes256::new_from_slice(key).unwrap().encrypt_block(&mut blk),
    }
    blk.to_vec()
}

#[test]
fn aes_field_and_boolean_match_fips197_and_aes_crate() {
    let key = hex("000102030405060708090a0b0c0d0e0f");
    let pt = hex("00112233445566778899aabbccddeeff");
    let ct = hex("69c4e0d86a7b0430d8cdb78070b4c55a");
    for boolean in [false, true] {
        let mut b = PlainBackend::new();
        let kb = commit_bytes(&mut b, Some(&key), 16);
        let pb = commit_bytes(&mut b, Some(&pt), 16);
        let out = if boolean {
            let rk = key_schedule_bool(&mut b, &kb);
            encrypt_bool(&mut b, &rk, &pb)
        } else {
            let rk = key_schedule(&mut b, &kb);
            encrypt(&mut b, &rk, &pb)
        };
        assert!(!b.violated);
        assert_eq!(open_bytes(&mut b, &out), ct, "boolean = {boolean}");
    }
    for _ in 0..5 {
        let k = rand_bytes(16);
        let m = rand_bytes(16);
        let mut b = PlainBackend::new();
        let kb = commit_bytes(&mut b, Some(&k), 16);
        let mb = constant_bytes(&b, &m);
        let rk = key_schedule(&mut b, &kb);
        let out = encrypt(&mut b, &rk, &mb);
        let rkb = key_schedule_bool(&mut b, &kb);
        let outb = encrypt_bool(&mut b, &rkb, &mb);
        assert!(!b.violated);
        assert_eq!(open_bytes(&mut b, &out), aes_ref(&k, &m));
        assert_eq!(open_bytes(&mut b, &outb), aes_ref(&k, &m));
    }
    // Costs: field S-box = 8 committed bits + 2 products; boolean = 32 AND per S-box (tested in aes_bool).
    let mut b = PlainBackend::new();
    let kb = commit_bytes(&mut b, Some(&key), 16);
    let rk = key_schedule(&mut b, &kb);
    let s0 = b.stats();
    assert_eq!((s0.commits - 128, s0.products), (320, 80));
    let ptb = constant_bytes(&b, &pt);
    let _ = encrypt(&mut b, &rk, &ptb);
    let s1 = b.stats();
    assert_eq!((s1.commits - s0.commits, s1.products - s0.products), (1280, 320));
}

/// AES of a public block under a committed key of `key_len` bytes, with the field S-box and the
/// boolean one: both ciphertexts, opened.
fn aes_both_sboxes<B: crate::zk::Backend>(
    b: &mut B,
    key: Option<&[u8]>,
    key_len: usize,
    pt: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let kb = commit_bytes(b, key, key_len);
    let pb = constant_bytes(b, pt);
    let rk = key_schedule(b, &kb);
    let out = encrypt(b, &rk, &pb);
    let rkb = key_schedule_bool(b, &kb);
    let outb = encrypt_bool(b, &rkb, &pb);
    (open_bytes(b, &out), open_bytes(b, &outb))
}

#[test]
fn aes_in_zk_fips197_with_both_sboxes() {
    let key = hex("000102030405060708090a0b0c0d0e0f");
    let pt = hex("00112233445566778899aabbccddeeff");
    let ct = hex("69c4e0d86a7b0430d8cdb78070b4c55a");
    let (p, v) =
        zk_run(Cheat::default(), |b| aes_both_sboxes(b, Some(&key), 16, &pt), |b| aes_both_sboxes(b, None, 16, &pt));
    assert_eq!(p.unwrap(), (ct.clone(), ct.clone()));
    assert_eq!(v.unwrap(), (ct.clone(), ct));
}

#[test]
fn sbox_witness_fault_is_rejected() {
    let key = rand_bytes(16);
    let pt = rand_bytes(16);
    fn circuit<B: crate::zk::Backend>(b: &mut B, key: Option<&[u8]>, pt: &[u8]) -> Vec<u8> {
        let kb = commit_bytes(b, key, 16);
        let pb = constant_bytes(b, pt);
        let rk = key_schedule(b, &kb);
        let out = encrypt(b, &rk, &pb);
        open_bytes(b, &out)
    }
    // Commits 0..128 = key, then S-box witnesses: 128 + 8·7 + 2 is bit 2 of the 8th S-box
    // inverse of the key schedule; 128 + 320 + 8·50 is in an encryption S-box.
    for idx in [128 + 8 * 7 + 2, 128 + 320 + 8 * 50] {
        let cheat = Cheat { flip_commit: Some(idx), ..Default::default() };
        let (_, v) = zk_run(cheat, |b| circuit(b, Some(&key), &pt), |b| circuit(b, None, &pt));
        assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
    }
}

/// Each of the two inverse equations is needed: a prover that chooses the S-box witness t
/// itself passes `s·t² = t` with t = 0 for any s (forcing every S-box output to 0x63), and
/// `s²·t = s` with any t for s = 0 (S(0) free). Only the true inverse (0 for 0) passes both.
#[test]
fn chosen_sbox_witnesses_fail_one_inverse_equation_each() {
    use super::aes::gf256_inv;
    fn circuit<B: crate::zk::Backend>(b: &mut B, st: Option<(u8, u8)>) {
        let bits = |b: &mut B, v: Option<u8>| -> [B::Bit; 8] {
            core::array::from_fn(|i| b.commit(v.map(|x| (x >> i) & 1 == 1)))
        };
        let s = bits(b, st.map(|p| p.0));
        let t = bits(b, st.map(|p| p.1));
        b.assert_byte_inverse(&s, &t);
    }
    let run = |s: u8, t: u8| zk_run(Cheat::default(), |b| circuit(b, Some((s, t))), |b| circuit(b, None)).1;
    for s in [0u8, 1, 0x53, 0xff] {
        assert!(run(s, gf256_inv(s)).is_ok(), "the true inverse of {s:#04x}");
    }
    for (s, t, fails) in
        [(0x53u8, 0u8, "s²·t = s"), (0x01, 0x00, "s²·t = s"), (0x00, 0x01, "s·t² = t"), (0x00, 0xca, "s·t² = t")]
    {
        assert!(
            matches!(run(s, t), Err(ProofError::MultiplicationCheckFailed)),
            "s = {s:#04x}, t = {t:#04x} must fail {fails}"
        );
    }
}

#[test]
fn gcm_keystream_j0_and_h_match_aes_crate_with_partial_opening() {
    let key = rand_bytes(16);
    let salt = rand_bytes(4);
    let explicit = rand_bytes(8);
    let indices = [0u32, 1, 7, 254, 253];
    let positions = [0usize, 5, 15];
    let mut iv = salt.clone();
    iv.extend_from_slice(&explicit);
    let block_for = |ctr: u32| {
        let mut cb = iv.clone();
        cb.extend_from_slice(&ctr.to_be_bytes());
        aes_ref(&key, &cb)
    };
    let mut expected_ks = Vec::new();
    for j in indices {
        let blk = block_for(j + 2);
        expected_ks.extend(positions.iter().map(|p| blk[*p]));
    }
    let expected_j0 = block_for(1);
    let expected_h = aes_ref(&key, &[0u8; 16]);
    fn circuit<B: crate::zk::Backend>(
        b: &mut B,
        key: Option<&[u8]>,
        salt: Option<&[u8]>,
        explicit: &[u8],
        indices: &[u32],
        positions: &[usize],
    ) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let kb = commit_bytes(b, key, 16);
        let mut ivb = commit_bytes(b, salt, 4);
        ivb.extend(constant_bytes(b, explicit));
        let rk = key_schedule(b, &kb);
        let ks = keystream_blocks(b, &rk, &ivb, indices);
        let mut opened = Vec::new();
        for blk in &ks {
            opened.extend(open_selected_bytes(b, blk, positions));
        }
        let j0 = j0_block(b, &rk, &ivb);
        let h = ghash_key(b, &rk);
        (opened, open_bytes(b, &j0), open_bytes(b, &h))
    }
    let (p, v) = zk_run(
        Cheat::default(),
        |b| circuit(b, Some(&key), Some(&salt), &explicit, &indices, &positions),
        |b| circuit(b, None, None, &explicit, &indices, &positions),
    );
    let expected = (expected_ks, expected_j0, expected_h);
    assert_eq!(p.unwrap(), expected);
    assert_eq!(v.unwrap(), expected);
}

#[test]
fn hmac_pad_states_are_reused_across_batches() {
    use crate::channel::memory_pair;
    use crate::ot::ideal::{IdealCotReceiver, IdealCotSender};
    use crate::zk::{Prover, Verifier, MAX_MESSAGE};
    let ms = rand_bytes(48);
    let sr: [u8; 32] = rand::rng().random();
    let cr: [u8; 32] = rand::rng().random();
    let hc: [u8; 32] = rand::rng().random();
    let mut seed = sr.to_vec();
    seed.extend_from_slice(&cr);
    let kb_expected = ring_prf(&ms, b"key expansion", &seed, 40);
    let vd_expected = ring_prf(&ms, b"client finished", &hc, 12);
    let cot_seed: [u8; 16] = rand::rng().random();
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let mut prover = Prover::new(IdealCotReceiver::new(cot_seed));
    let mut verifier = Verifier::new(IdealCotSender::new(cot_seed));
    let (ms2, kb2) = (ms.clone(), kb_expected.clone());
    let (p, v) = futures::executor::block_on(async move {
        let p = async move {
            let key = prover
                .run(&mut a, |b| {
                    let m = commit_bytes(b, Some(&ms2), 48);
                    hmac_key(b, &m)
                })
                .await?;
            let pad_ands = prover.last_stats().and_gates;
            prover
                .run(&mut a, |b| {
                    let kb = tls12_key_block(b, &key, &sr, &cr, 40);
                    assert_bytes_eq(b, &kb, &kb2);
                })
                .await?;
            let key_block_ands = prover.last_stats().and_gates;
            let vd = prover
                .run(&mut a, |b| {
                    let vd = tls12_verify_data(b, &key, b"client finished", &hc);
                    open_bytes(b, &vd)
                })
                .await?;
            Ok::<_, ProofError>((pad_ands, key_block_ands, vd))
        };
        let v = async move {
            let key = verifier
                .run(&mut b, |b| {
                    let m = commit_bytes(b, None, 48);
                    hmac_key(b, &m)
                })
                .await?;
            verifier
                .run(&mut b, |b| {
                    let kb = tls12_key_block(b, &key, &sr, &cr, 40);
                    assert_bytes_eq(b, &kb, &kb_expected);
                })
                .await?;
            let vd = verifier
                .run(&mut b, |b| {
                    let vd = tls12_verify_data(b, &key, b"client finished", &hc);
                    open_bytes(b, &vd)
                })
                .await?;
            Ok::<_, ProofError>(vd)
        };
        futures::future::join(p, v).await
    });
    let (pad_ands, key_block_ands, pvd) = p.unwrap();
    assert_eq!(v.unwrap(), vd_expected);
    assert_eq!(pvd, vd_expected);
    // Pads: two compressions from the public IV. Key block: 11 compressions that all start
    // from a private pad state, so none of them re-does the pad work.
    let mut pb = PlainBackend::new();
    let m = commit_bytes(&mut pb, Some(&ms), 48);
    let _ = hmac_key(&mut pb, &m);
    assert_eq!(pad_ands, pb.stats().and_gates);
    assert!(key_block_ands < 11 * 22_696, "{key_block_ands}");
    assert!(key_block_ands > 9 * 20_000, "{key_block_ands}");
}

#[test]
fn finished_record_decrypts_to_private_verify_data() {
    use crate::zk::bytes::assert_decrypts_to;
    let key = rand_bytes(16);
    let salt = rand_bytes(4);
    let explicit = rand_bytes(8);
    let verify_data = rand_bytes(12);
    let mut pt = vec![0x14, 0x00, 0x00, 0x0c];
    pt.extend_from_slice(&verify_data);
    let mut cb = salt.clone();
    cb.extend_from_slice(&explicit);
    cb.extend_from_slice(&2u32.to_be_bytes());
    let ks = aes_ref(&key, &cb);
    let ct: Vec<u8> = ks.iter().zip(&pt).map(|(k, p)| k ^ p).collect();
    fn circuit<B: crate::zk::Backend>(b: &mut B, secrets: Option<(&[u8], &[u8], &[u8])>, explicit: &[u8], ct: &[u8]) {
        let kb = commit_bytes(b, secrets.map(|s| s.0), 16);
        let mut iv = commit_bytes(b, secrets.map(|s| s.1), 4);
        iv.extend(constant_bytes(b, explicit));
        let vd = commit_bytes(b, secrets.map(|s| s.2), 12);
        let mut pt = constant_bytes(b, &[0x14, 0, 0, 0x0c]);
        pt.extend(vd);
        let rk = key_schedule(b, &kb);
        let ks = keystream_blocks(b, &rk, &iv, &[0]);
        assert_decrypts_to(b, &ks[0], ct, &pt);
    }
    let secrets = (&key[..], &salt[..], &verify_data[..]);
    let (p, v) =
        zk_run(Cheat::default(), |b| circuit(b, Some(secrets), &explicit, &ct), |b| circuit(b, None, &explicit, &ct));
    assert!(p.is_ok() && v.is_ok(), "{p:?} {v:?}");
    // A different record (one flipped ciphertext bit) is rejected.
    let mut bad = ct.clone();
    bad[9] ^= 0x40;
    let (_, v) =
        zk_run(Cheat::default(), |b| circuit(b, Some(secrets), &explicit, &bad), |b| circuit(b, None, &explicit, &bad));
    assert!(matches!(v, Err(ProofError::ConstantMismatch)), "{v:?}");
    // A truncated record is rejected, not a panic.
    let (_, v) = zk_run(
        Cheat::default(),
        |b| circuit(b, Some(secrets), &explicit, &ct[..15]),
        |b| circuit(b, None, &explicit, &ct[..15]),
    );
    assert!(matches!(v, Err(ProofError::ConstantMismatch)), "{v:?}");
}

/// The proxy-mode prove phase (DESIGN "Proxy mode, step by step", 6.) as one generic function
/// run by both parties over several batches: PRF → keys, opened client verify_data, both
/// Finished records bound to the session, H and E_K(J0) opened, keystream partially opened.
#[test]
fn proxy_mode_prove_phase_end_to_end() {
    use super::hmac_prf::HmacKey;
    use crate::channel::{memory_pair, Channel};
    use crate::ot::ideal::{IdealCotReceiver, IdealCotSender};
    use crate::zk::bytes::assert_decrypts_to;
    use crate::zk::{Party, Prover, Verifier, MAX_MESSAGE};

    struct Public {
        sr: [u8; 32],
        cr: [u8; 32],
        hc: [u8; 32],
        hs: [u8; 32],
        client_fin: (Vec<u8>, Vec<u8>), // (explicit nonce, ciphertext)
        server_fin: (Vec<u8>, Vec<u8>),
        server_data_nonce: Vec<u8>,
    }
    #[derive(Debug, PartialEq)]
    struct Revealed {
        client_vd: Vec<u8>,
        h: [Vec<u8>; 2],
        j0: [Vec<u8>; 2],
        server_bytes: Vec<u8>,
    }

    // Cleartext session.
    let ms = rand_bytes(48);
    let mut rng = rand::rng();
    let (sr, cr, hc, hs): ([u8; 32], [u8; 32], [u8; 32], [u8; 32]) =
        (rng.random(), rng.random(), rng.random(), rng.random());
    let mut seed = sr.to_vec();
    seed.extend_from_slice(&cr);
    let kb = ring_prf(&ms, b"key expansion", &seed, 40);
    let (ck, sk, civ, siv) = (&kb[0..16], &kb[16..32], &kb[32..36], &kb[36..40]);
    let cvd = ring_prf(&ms, b"client finished", &hc, 12);
    let svd = ring_prf(&ms, b"server finished", &hs, 12);
    let gcm_block = |key: &[u8], salt: &[u8], nonce: &[u8], ctr: u32| {
        let mut cb = salt.to_vec();
        cb.extend_from_slice(nonce);
        cb.extend_from_slice(&ctr.to_be_bytes());
        aes_ref(key, &cb)
    };
    let finished = |key: &[u8], salt: &[u8], vd: &[u8]| {
        let nonce = rand_bytes(8);
        let ks = gcm_block(key, salt, &nonce, 2);
        let mut pt = vec![0x14, 0, 0, 0x0c];
        pt.extend_from_slice(vd);
        let ct: Vec<u8> = ks.iter().zip(&pt).map(|(k, p)| k ^ p).collect();
        (nonce, ct)
    };
    let public = Public {
        sr,
        cr,
        hc,
        hs,
        client_fin: finished(ck, civ, &cvd),
        server_fin: finished(sk, siv, &svd),
        server_data_nonce: rand_bytes(8),
    };
    let reveal_blocks = [0u32, 3];
    let reveal_pos = [1usize, 2, 14];
    let mut expected_bytes = Vec::new();
    for j in reveal_blocks {
        let blk = gcm_block(sk, siv, &public.server_data_nonce, j + 2);
        expected_bytes.extend(reveal_pos.iter().map(|p| blk[*p]));
    }
    let expected = Revealed {
        client_vd: cvd.clone(),
        h: [aes_ref(ck, &[0; 16]), aes_ref(sk, &[0; 16])],
        j0: [gcm_block(ck, civ, &public.client_fin.0, 1), gcm_block(sk, siv, &public.server_fin.0, 1)],
        server_bytes: expected_bytes,
    };

    // The gadget code, written once. `ms` is Some on the prover only.
    async fn session<P: Party<C>, C: Channel>(
        ch: &mut C,
        run: &mut P,
        ms: Option<&[u8]>,
        p: &Public,
        blocks: &[u32],
        pos: &[usize],
    ) -> Result<Revealed, ProofError> {
        let key: HmacKey<P::Backend> = run
            .run_batch(ch, &mut |b: &mut P::Backend| {
                let m = commit_bytes(b, ms, 48);
                hmac_key(b, &m)
            })
            .await?;
        let (kb, client_vd) = run
            .run_batch(ch, &mut |b: &mut P::Backend| {
                let kb = tls12_key_block(b, &key, &p.sr, &p.cr, 40);
                let cvd = tls12_verify_data(b, &key, b"client finished", &p.hc);
                let opened = open_bytes(b, &cvd);
                let svd = tls12_verify_data(b, &key, b"server finished", &p.hs);
                (kb, opened, cvd, svd)
            })
            .await
            .map(|(kb, o, cvd, svd)| ((kb, cvd, svd), o))?;
        let (kb, cvd, svd) = kb;
        let (h, j0, server_bytes) = run
            .run_batch(ch, &mut |b: &mut P::Backend| {
                let mut h = Vec::new();
                let mut j0 = Vec::new();
                let mut server_bytes = Vec::new();
                for (side, vd, fin) in [(0usize, &cvd, &p.client_fin), (1, &svd, &p.server_fin)] {
                    let key = &kb[side * 128..side * 128 + 128];
                    let mut iv = kb[256 + side * 32..256 + side * 32 + 32].to_vec();
                    iv.extend(constant_bytes(b, &fin.0));
                    let rk = key_schedule(b, key);
                    let ks = keystream_blocks(b, &rk, &iv, &[0]);
                    let mut pt = constant_bytes(b, &[0x14, 0, 0, 0x0c]);
                    pt.extend_from_slice(vd);
                    assert_decrypts_to(b, &ks[0], &fin.1, &pt);
                    let hb = ghash_key(b, &rk);
                    h.push(open_bytes(b, &hb));
                    let jb = j0_block(b, &rk, &iv);
                    j0.push(open_bytes(b, &jb));
                    if side == 1 {
                        let mut iv = kb[288..320].to_vec();
                        iv.extend(constant_bytes(b, &p.server_data_nonce));
                        for blk in keystream_blocks(b, &rk, &iv, blocks) {
                            server_bytes.extend(open_selected_bytes(b, &blk, pos));
                        }
                    }
                }
                (h, j0, server_bytes)
            })
            .await?;
        Ok(Revealed { client_vd, h: [h[0].clone(), h[1].clone()], j0: [j0[0].clone(), j0[1].clone()], server_bytes })
    }

    let cot_seed: [u8; 16] = rng.random();
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let mut prover = Prover::new(IdealCotReceiver::new(cot_seed));
    let mut verifier = Verifier::new(IdealCotSender::new(cot_seed));
    let (p, v) = futures::executor::block_on(async {
        let pf = session(&mut a, &mut prover, Some(&ms), &public, &reveal_blocks, &reveal_pos);
        let vf = session(&mut b, &mut verifier, None, &public, &reveal_blocks, &reveal_pos);
        futures::future::join(pf, vf).await
    });
    assert_eq!(p.unwrap(), expected);
    assert_eq!(v.unwrap(), expected);
}

/// HMAC with the inner state opened equals ring's HMAC, and costs one outer compression with
/// a public message block (no message-schedule ANDs) per call. The inner state is opened in a
/// deferred batch and used as a constant in the next one (opened values must never change the
/// structure of the batch that opens them).
#[test]
fn hmac_with_public_inner_state_matches_ring_and_is_cheaper() {
    use super::hmac_prf::{hmac_public_inner, HmacKey, PublicInner};
    use super::sha256::{state_to_bytes, State};
    use crate::channel::memory_pair;
    use crate::zk::{Backend, MAX_MESSAGE};
    fn pads<B: Backend>(b: &mut B, key: Option<&[u8]>) -> (State<B>, [u8; 32]) {
        let kb = commit_bytes(b, key, 48);
        let hk: HmacKey<B> = hmac_key(b, &kb);
        (hk.outer, open_bytes(b, &state_to_bytes::<B>(&hk.inner)).try_into().unwrap())
    }
    fn macs<B: Backend>(b: &mut B, outer: &State<B>, inner: &PublicInner, msgs: &[Vec<u8>]) -> Vec<Vec<u8>> {
        msgs.iter()
            .map(|m| {
                let t = hmac_public_inner(b, outer, inner, m);
                open_bytes(b, &t)
            })
            .collect()
    }
    // RFC 4231 test case 2 through the public-inner path, on the cleartext evaluator.
    let mut b = PlainBackend::new();
    let kb = commit_bytes(&mut b, Some(b"Jefe"), 4);
    let hk = hmac_key(&mut b, &kb);
    let inner: [u8; 32] = open_bytes(&mut b, &state_to_bytes::<PlainBackend>(&hk.inner)).try_into().unwrap();
    let t = hmac_public_inner(&mut b, &hk.outer, &PublicInner::from_bytes(&inner), b"what do ya want for nothing?");
    assert_eq!(open_bytes(&mut b, &t), hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));

    let key = rand_bytes(48);
    let msgs: Vec<Vec<u8>> = [0usize, 32, 55, 56, 77, 109, 200].iter().map(|n| rand_bytes(*n)).collect();
    let run = |cheat: crate::zk::Cheat| {
        let (mut a, mut c) = memory_pair(MAX_MESSAGE);
        let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(cheat);
        let (k, m) = (&key, &msgs);
        futures::executor::block_on(futures::future::join(
            async move {
                let (outer, inner) = prover.run_deferred(&mut a, |b| pads(b, Some(k))).await?;
                let inner = PublicInner::from_bytes(&inner);
                prover.run(&mut a, |b| (macs(b, &outer, &inner, m), b.stats())).await
            },
            async move {
                let (outer, inner) = verifier.run_deferred(&mut c, |b| pads(b, None)).await?;
                let inner = PublicInner::from_bytes(&inner);
                verifier.run(&mut c, |b| macs(b, &outer, &inner, m)).await
            },
        ))
    };
    let (p, v) = run(Default::default());
    let (outs, stats): (Vec<Vec<u8>>, _) = p.unwrap();
    for (m, out) in msgs.iter().zip(&outs) {
        assert_eq!(*out, ring_hmac(&key, m));
    }
    assert_eq!(v.unwrap(), outs);
    // 7 outer compressions, none with message-schedule ANDs (a full one has 22,573).
    assert!(stats.and_gates <= 7 * 18_300, "{} AND gates", stats.and_gates);

    // A prover that opens a false inner-state bit is rejected when the opening arrives.
    let (_, v) = run(crate::zk::Cheat { flip_open: Some(100), ..Default::default() });
    assert!(matches!(v, Err(crate::zk::ProofError::OpeningMacMismatch)), "{v:?}");
}

/// The pad states computed in the clear equal the circuit's, for SHA-256 and SHA-384, and an
/// HMAC continued from them in the clear equals ring's (RFC 4231 test case 2 and random keys
/// of every length up to a block).
#[test]
fn native_pad_states_equal_the_circuits_and_give_rings_hmac() {
    use super::hmac_prf::{hmac_pad_states, native_pad_states, PublicInner, Sha2};
    let hmac_from = |hash: Sha2, key: &[u8], msg: &[u8]| {
        let [inner, outer] = native_pad_states(hash, key);
        let ih = PublicInner::from_state(hash, &inner).unwrap().inner_hash(msg);
        PublicInner::from_state(hash, &outer).unwrap().inner_hash(&ih)
    };
    assert_eq!(
        hmac_from(Sha2::Sha256, b"Jefe", b"what do ya want for nothing?"),
        hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    );
    assert_eq!(
        hmac_from(Sha2::Sha384, b"Jefe", b"what do ya want for nothing?"),
        hex("af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649")
    );
    for (hash, alg) in [(Sha2::Sha256, ring::hmac::HMAC_SHA256), (Sha2::Sha384, ring::hmac::HMAC_SHA384)] {
        for len in [0, 1, 32, 48, hash.block_len()] {
            let (key, msg) = (rand_bytes(len), rand_bytes(77));
            assert_eq!(
                hmac_from(hash, &key, &msg),
                ring::hmac::sign(&ring::hmac::Key::new(alg, &key), &msg).as_ref(),
                "{hash:?}, {len}-byte key"
            );
            let mut b = PlainBackend::new();
            let kb = commit_bytes(&mut b, Some(&key), len);
            let (inner, outer) = hmac_pad_states(&mut b, hash, &kb);
            let [ni, no] = native_pad_states(hash, &key);
            assert_eq!(
                (open_bytes(&mut b, &inner), open_bytes(&mut b, &outer)),
                (ni.to_vec(), no.to_vec()),
                "{hash:?}, {len}-byte key"
            );
        }
    }
}

/// S-box constraints are collected per batch and embedded together at its end. In a deferred
/// batch that also has direct product constraints before and after them, an honest proof
/// passes and one flipped S-box witness bit is caught by the next checked batch.
#[test]
fn sbox_constraints_of_a_deferred_batch_are_checked_by_the_next_batch() {
    use crate::channel::memory_pair;
    use crate::zk::{Backend, MAX_MESSAGE};
    fn deferred<B: Backend>(b: &mut B, key: Option<&[u8]>) {
        let kb = commit_bytes(b, key, 16);
        let (lin, _) = embedding_bases();
        let one = b.elem_constant(F128::ONE);
        let e0 = b.elem_from_bits(&kb[..8], lin);
        b.assert_product(e0, one, e0);
        drop(key_schedule(b, &kb));
        let e1 = b.elem_from_bits(&kb[8..16], lin);
        b.assert_product(one, e1, e1);
    }
    let key = rand_bytes(16);
    // Commits 0..128 = key; 128 + 8·3 + 5 is bit 5 of the 4th key-schedule S-box witness.
    for (cheat, honest) in
        [(Cheat::default(), true), (Cheat { flip_commit: Some(128 + 8 * 3 + 5), ..Default::default() }, false)]
    {
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(cheat);
        let key = key.clone();
        let (p, v) = futures::executor::block_on(async move {
            let p = async move {
                prover.run_deferred(&mut a, |b| deferred(b, Some(&key))).await?;
                prover.run(&mut a, |b| b.commit(Some(true)).m).await.map(|_| ())
            };
            let v = async move {
                verifier.run_deferred(&mut b, |b| deferred(b, None)).await?;
                verifier.run(&mut b, |b| b.commit(None).k).await.map(|_| ())
            };
            futures::future::join(p, v).await
        });
        if honest {
            assert!(p.is_ok() && v.is_ok(), "{p:?} {v:?}");
        } else {
            assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "{v:?}");
        }
    }
}

/// Enough S-boxes in one batch that their embeddings are flushed mid-batch (every 4,096
/// pairs): the ciphertexts still open correctly, and a fault in an S-box of the first flush or
/// of the batch's final one is rejected.
#[test]
fn many_sbox_constraints_across_embedding_flushes() {
    let key = rand_bytes(16);
    let blocks: Vec<Vec<u8>> = (0..30).map(|_| rand_bytes(16)).collect();
    let want: Vec<Vec<u8>> = blocks.iter().map(|pt| aes_ref(&key, pt)).collect();
    fn circuit<B: crate::zk::Backend>(b: &mut B, key: Option<&[u8]>, pts: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let kb = commit_bytes(b, key, 16);
        let rk = key_schedule(b, &kb);
        pts.iter()
            .map(|pt| {
                let pb = constant_bytes(b, pt);
                let out = encrypt(b, &rk, &pb);
                open_bytes(b, &out)
            })
            .collect()
    }
    let (p, v) = zk_run(Cheat::default(), |b| circuit(b, Some(&key), &blocks), |b| circuit(b, None, &blocks));
    assert_eq!(p.unwrap(), want);
    assert_eq!(v.unwrap(), want);
    // 40 + 30·160 = 4,840 S-boxes; S-box k's witness bits are commits 128 + 8k ..
    for sbox in [100, 4500] {
        let cheat = Cheat { flip_commit: Some(128 + 8 * sbox + 1), ..Default::default() };
        let (_, v) = zk_run(cheat, |b| circuit(b, Some(&key), &blocks), |b| circuit(b, None, &blocks));
        assert!(matches!(v, Err(ProofError::MultiplicationCheckFailed)), "S-box {sbox}: {v:?}");
    }
}

fn plain_chacha20(key: &[u8; 32], nonce: &[u8; 12], counter: u32) -> (Vec<u8>, usize) {
    let mut b = PlainBackend::new();
    let k = commit_bytes(&mut b, Some(key), 32);
    let n = commit_bytes(&mut b, Some(nonce), 12);
    let ands = b.stats().and_gates;
    let out = chacha20::block(&mut b, &k, &n, counter);
    let ands = b.stats().and_gates - ands;
    (open_bytes(&mut b, &out), ands)
}

#[test]
fn chacha20_block_matches_rfc8439_and_rand_chacha() {
    // RFC 8439 §2.3.2
    let key: [u8; 32] = core::array::from_fn(|i| i as u8);
    let nonce: [u8; 12] = hex("000000090000004a00000000").try_into().unwrap();
    let (out, ands) = plain_chacha20(&key, &nonce, 1);
    assert_eq!(
        out,
        hex(concat!(
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e",
            "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        ))
    );
    // 20 rounds of 16 additions and the final 16, 31 AND each (a carry into bit 32 is
    // dropped), but for the low carries that fold where a public word is added: each constant
    // word in the first round and at the end, the counter (1) at the end, up to and including
    // their lowest 1 bit (1 + 2 + 2 + 3 twice, and 1).
    assert_eq!(ands, 336 * 31 - 17);
    // Random keys, nonces and counters against rand_chacha: its 64-bit block counter is the
    // IETF counter with the nonce's first word above it, its stream the other two words.
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    for _ in 0..8 {
        let key: [u8; 32] = rand_bytes(32).try_into().unwrap();
        let nonce: [u8; 12] = rand_bytes(12).try_into().unwrap();
        let counter: u32 = rand::rng().random();
        let mut rng = rand_chacha::ChaCha20Rng::from_seed(key);
        let word = |i: usize| u32::from_le_bytes(nonce[4 * i..4 * i + 4].try_into().unwrap()) as u64;
        rng.set_stream(word(1) | word(2) << 32);
        rng.set_word_pos(((counter as u128) | (word(0) as u128) << 32) * 16);
        let mut expected = [0u8; 64];
        rng.fill_bytes(&mut expected);
        assert_eq!(plain_chacha20(&key, &nonce, counter).0, expected);
    }
}

#[test]
fn chacha20_keystream_in_zk_opens_what_ring_encrypts_with() {
    // ring's ChaCha20-Poly1305 encrypts with blocks 1.. of the same key and nonce: sealing
    // zeros gives the keystream.
    let key: [u8; 32] = rand_bytes(32).try_into().unwrap();
    let nonce: [u8; 12] = rand_bytes(12).try_into().unwrap();
    let sealing =
        ring::aead::LessSafeKey::new(ring::aead::UnboundKey::new(&ring::aead::CHACHA20_POLY1305, &key).unwrap());
    let mut keystream = vec![0u8; 128];
    let _tag = sealing
        .seal_in_place_separate_tag(
            ring::aead::Nonce::assume_unique_for_key(nonce),
            ring::aead::Aad::empty(),
            &mut keystream,
        )
        .unwrap();
    fn circuit<B: crate::zk::Backend>(b: &mut B, key: Option<&[u8]>, nonce: Option<&[u8]>) -> Vec<u8> {
        let k = commit_bytes(b, key, 32);
        let n = commit_bytes(b, nonce, 12);
        let mut out = chacha20::block(b, &k, &n, 1);
        out.extend(chacha20::block(b, &k, &n, 2));
        open_bytes(b, &out)
    }
    let (p, v) = zk_run(Cheat::default(), |b| circuit(b, Some(&key), Some(&nonce)), |b| circuit(b, None, None));
    assert_eq!((p.expect("the prover"), v.expect("the verifier")), (keystream.clone(), keystream));
}

#[test]
fn sha384_compression_count() {
    // Private state and block: 80 rounds × (64 Ch + 64 Maj + 7 adders) + 64 × 3 schedule
    // adders + 8 final adders, 63 AND per adder, minus the carries that fold when adding the
    // public K_t (up to and including its lowest 1).
    let mut b = PlainBackend::new();
    let st = commit_bytes(&mut b, Some(&[1u8; 64]), 64);
    let state = super::sha384::state_from_bytes::<PlainBackend>(&st);
    let block = commit_bytes(&mut b, Some(&[0u8; 128]), 128);
    let _ = super::sha384::compress(&mut b, &state, &block);
    let folded: usize = super::sha384::K.iter().map(|k| (k.trailing_zeros() as usize + 1).min(63)).sum();
    assert_eq!(b.stats().and_gates, 80 * 128 + (80 * 7 + 64 * 3 + 8) * 63 - folded);
}

#[test]
fn aes256_matches_fips197_and_aes_crate_in_zk_and_both_sboxes() {
    // FIPS-197 appendix C.3.
    let key = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    let pt = hex("00112233445566778899aabbccddeeff");
    let ct = hex("8ea2b7ca516745bfeafc49904b496089");
    let (p, v) =
        zk_run(Cheat::default(), |b| aes_both_sboxes(b, Some(&key), 32, &pt), |b| aes_both_sboxes(b, None, 32, &pt));
    assert_eq!(p.unwrap(), (ct.clone(), ct.clone()));
    assert_eq!(v.unwrap(), (ct.clone(), ct.clone()));
    for _ in 0..5 {
        let (k, m) = (rand_bytes(32), rand_bytes(16));
        let mut b = PlainBackend::new();
        let (out, outb) = aes_both_sboxes(&mut b, Some(&k), 32, &m);
        assert!(!b.violated);
        assert_eq!((out, outb), (aes_ref(&k, &m), aes_ref(&k, &m)));
    }
    // Costs: 52 S-boxes in the key schedule (13 SubWords), 224 per block (14 rounds), each
    // 8 committed bits and 2 products.
    let mut b = PlainBackend::new();
    let kb = commit_bytes(&mut b, Some(&key), 32);
    let rk = key_schedule(&mut b, &kb);
    assert_eq!(rk.keys.len(), 15);
    let s0 = b.stats();
    assert_eq!((s0.commits - 256, s0.products), (52 * 8, 52 * 2));
    let ptb = constant_bytes(&b, &pt);
    let _ = encrypt(&mut b, &rk, &ptb);
    let s1 = b.stats();
    assert_eq!((s1.commits - s0.commits, s1.products - s0.products), (224 * 8, 224 * 2));
    // The blocks of one GCM record share their first rounds' S-boxes with AES-256 too.
    let prefix = rand_bytes(15);
    let lasts = [1u8, 2, 200];
    let mut b = PlainBackend::new();
    let kb = commit_bytes(&mut b, Some(&key), 32);
    let rk = key_schedule(&mut b, &kb);
    let pb = constant_bytes(&b, &prefix);
    let last_bits: Vec<[bool; 8]> = lasts.iter().map(|x| core::array::from_fn(|i| (x >> i) & 1 == 1)).collect();
    let last_bits: Vec<[_; 8]> = last_bits.iter().map(|l| core::array::from_fn(|i| b.constant(l[i]))).collect();
    let shared = super::aes::encrypt_sharing_prefix(&mut b, &rk, &pb, &last_bits);
    for (out, last) in shared.iter().zip(lasts) {
        assert_eq!(open_bytes(&mut b, out), aes_ref(&key, &[&prefix[..], &[last]].concat()));
    }
}

/// HMAC-SHA384 and HMAC-SHA256 with the key's inner state opened: RFC 4231 and ring, on the
/// cleartext evaluator and in ZK, where a false opened inner-state bit is refused.
#[test]
fn hmac_sha384_with_public_inner_state_matches_rfc4231_and_ring() {
    use super::hmac_prf::{hmac_pad_states, hmac_public_inner_with, PublicInner, Sha2};
    use crate::zk::Backend;
    fn pads<B: Backend>(b: &mut B, hash: Sha2, key: Option<&[u8]>, len: usize) -> (Vec<B::Bit>, Vec<u8>) {
        let kb = commit_bytes(b, key, len);
        let (inner, outer) = hmac_pad_states(b, hash, &kb);
        (outer, open_bytes(b, &inner))
    }
    fn mac<B: Backend>(b: &mut B, outer: &[B::Bit], inner: &[u8], hash: Sha2, msg: &[u8]) -> Vec<u8> {
        let inner = PublicInner::from_state(hash, inner).expect("a state of the hash's size");
        let t = hmac_public_inner_with(b, outer, &inner, msg);
        open_bytes(b, &t)
    }
    // RFC 4231 test case 2, both hashes.
    for (hash, want) in [
        (
            Sha2::Sha384,
            "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649",
        ),
        (Sha2::Sha256, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    ] {
        let mut b = PlainBackend::new();
        let (outer, inner) = pads(&mut b, hash, Some(b"Jefe"), 4);
        assert_eq!(inner.len(), hash.state_len());
        assert_eq!(mac(&mut b, &outer, &inner, hash, b"what do ya want for nothing?"), hex(want), "{hash:?}");
    }
    assert_eq!(PublicInner::from_state(Sha2::Sha384, &[0; 32]), None);
    // Random 48-byte keys (TLS 1.3 secrets) and messages around the block boundary, in ZK:
    // the pads in one batch, the inner state opened, the MACs in the next.
    let key = rand_bytes(48);
    let msgs: Vec<Vec<u8>> = [0usize, 64, 111, 112, 130].iter().map(|n| rand_bytes(*n)).collect();
    let run = |cheat: Cheat| {
        let (mut a, mut c) = crate::channel::memory_pair(crate::zk::MAX_MESSAGE);
        let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(cheat);
        let (k, m) = (&key, &msgs);
        futures::executor::block_on(futures::future::join(
            async move {
                let (outer, inner) = prover.run_deferred(&mut a, |b| pads(b, Sha2::Sha384, Some(k), 48)).await?;
                prover
                    .run(&mut a, |b| m.iter().map(|m| mac(b, &outer, &inner, Sha2::Sha384, m)).collect::<Vec<_>>())
                    .await
            },
            async move {
                let (outer, inner) = verifier.run_deferred(&mut c, |b| pads(b, Sha2::Sha384, None, 48)).await?;
                verifier
                    .run(&mut c, |b| m.iter().map(|m| mac(b, &outer, &inner, Sha2::Sha384, m)).collect::<Vec<_>>())
                    .await
            },
        ))
    };
    let (p, v) = run(Cheat::default());
    let want: Vec<Vec<u8>> = msgs
        .iter()
        .map(|m| ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA384, &key), m).as_ref().to_vec())
        .collect();
    assert_eq!(p.unwrap(), want);
    assert_eq!(v.unwrap(), want);
    let (_, v) = run(Cheat { flip_open: Some(100), ..Default::default() });
    assert!(matches!(v, Err(ProofError::OpeningMacMismatch)), "{v:?}");
}

/// The TLS 1.2 PRF over SHA-384 as the proof computes it (MS's pad states, the inner one
/// opened, one outer compression per HMAC, the A(i) chain opened) equals `tls::keys`' P_SHA384:
/// the AES-256-GCM suites' 72-byte key block and a verify_data over a 48-byte hash.
#[test]
fn tls12_prf_sha384_with_public_inner_state_matches_the_native_prf() {
    use super::hmac_prf::{hmac_pad_states, hmac_public_inner_with, PublicInner, Sha2};
    let ms = rand_bytes(48);
    let (sr, cr, hash) = (rand_bytes(32), rand_bytes(32), rand_bytes(48));
    let mut b = PlainBackend::new();
    let m = commit_bytes(&mut b, Some(&ms), 48);
    let (inner, outer) = hmac_pad_states(&mut b, Sha2::Sha384, &m);
    let inner = PublicInner::from_state(Sha2::Sha384, &open_bytes(&mut b, &inner)).expect("a SHA-384 state");
    let mut prf = |label_seed: &[u8], n: usize| {
        let (mut a, mut out) = (label_seed.to_vec(), Vec::new());
        while out.len() < n {
            let next = hmac_public_inner_with(&mut b, &outer, &inner, &a);
            a = open_bytes(&mut b, &next);
            let block = hmac_public_inner_with(&mut b, &outer, &inner, &[&a[..], label_seed].concat());
            out.extend(open_bytes(&mut b, &block));
        }
        out.truncate(n);
        out
    };
    let key_block = prf(&[&b"key expansion"[..], &sr, &cr].concat(), 72);
    let verify_data = prf(&[&b"server finished"[..], &hash].concat(), 12);
    let native = |label: &[u8], seed: &[u8], n: usize| {
        let mut out = vec![0u8; n];
        crate::tls::keys::prf_with(crate::tls::PrfHash::Sha384, &ms, label, seed, &mut out);
        out
    };
    assert_eq!(key_block, native(b"key expansion", &[&sr[..], &cr].concat(), 72));
    assert_eq!(verify_data, native(b"server finished", &hash, 12));
}
