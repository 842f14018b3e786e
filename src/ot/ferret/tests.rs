//! End-to-end tests of Ferret over in-memory channels.

use super::spcot;
use super::*;
use crate::channel::memory_pair;
use crate::channel::test_util::tampering;
use crate::ot::kos::MAX_MESSAGE_BYTES;
use crate::ot::softspoken;
use crate::ot::test_util::{assert_correlated, extend_both};
use futures::executor::block_on;
use futures::future::join;
use rand::Rng;

/// Insecure toy sizes so tests run fast; structure identical to the real sets.
const TEST_SETUP: LpnParams = LpnParams { n: 4096, k: 512, t: 32, log_block: 7 };
const TEST_SMALL: LpnParams = LpnParams { n: 2048, k: 256, t: 32, log_block: 6 };
const TEST_MID: LpnParams = LpnParams { n: 8192, k: 768, t: 32, log_block: 8 };
const TEST_MAIN: LpnParams = LpnParams { n: 32768, k: 2048, t: 64, log_block: 9 };

fn test_config() -> FerretConfig {
    FerretConfig { small: &[], setup: TEST_SETUP, mid: &[], main: Some(TEST_MAIN), direct_limit: 1000 }
}

fn pair(config: FerretConfig) -> (FerretSender, FerretReceiver) {
    (
        FerretSender::from_kos(KosSender::new(), config).unwrap(),
        FerretReceiver::from_kos(KosReceiver::new(), config).unwrap(),
    )
}

fn pair_ss(config: FerretConfig, delta: F128, k: usize) -> (FerretSender, FerretReceiver) {
    pair_ss_with(config, delta, k, PrgKind::default())
}

fn pair_ss_with(config: FerretConfig, delta: F128, k: usize, prg: PrgKind) -> (FerretSender, FerretReceiver) {
    let s = SoftSpokenSender::with_delta(delta).with_k(k).unwrap().with_prg(prg).unwrap();
    let r = SoftSpokenReceiver::new().with_k(k).unwrap().with_prg(prg).unwrap();
    (FerretSender::from_softspoken(s, config).unwrap(), FerretReceiver::from_softspoken(r, config).unwrap())
}

/// A Δ with every 8-bit block nonzero (so any SoftSpoken syndrome flip must be caught).
const DELTA_ALL_BLOCKS_NONZERO: F128 = F128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3211);

#[test]
fn correlations_hold_across_kos_direct_bootstrap_setup_and_main_iterations() {
    let (mut s, mut r) = pair(test_config());
    let (mut cv, mut cp) = memory_pair(MAX_MESSAGE_BYTES);
    let delta = s.delta();
    let mut seen_iterations = vec![];
    let mut all_keys = vec![];
    for n in [100usize, 900, 3000, 1, 2500, 20_000, 40_000, 77_777, 5] {
        let ((v, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, n);
        let keys = keys.unwrap();
        let (bits, macs) = cots.unwrap();
        assert_eq!(keys.len(), n);
        assert_correlated(delta, &keys, &bits, &macs);
        assert_eq!(s.iterations(), r.iterations());
        assert_eq!(s.buffered(), r.buffered());
        seen_iterations.push(s.iterations());
        all_keys.extend(keys);
        (cv, cp) = (v.unwrap(), p.unwrap());
    }
    // first 1000 straight from KOS, then bootstrapped iterations keep running
    assert_eq!(seen_iterations[..2], [0, 0]);
    assert!(seen_iterations[2] >= 1);
    assert!(seen_iterations[5] > seen_iterations[4] && seen_iterations[7] > seen_iterations[6]);
    // no key is ever handed out twice (base COTs are not reused as outputs)
    let mut sorted: Vec<u128> = all_keys.iter().map(|k| k.0).collect();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), all_keys.len());
    assert_eq!(s.delta(), delta);
    // the large demands switched both sides to the main parameter set
    assert!(active_set(&s.planner) == TEST_MAIN && active_set(&r.planner) == TEST_MAIN);
}

#[test]
fn small_demand_is_served_by_kos_only() {
    let (mut s, mut r) = pair(FerretConfig::default());
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((v, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, 5000);
    let (bits, macs) = cots.unwrap();
    assert_correlated(s.delta(), &keys.unwrap(), &bits, &macs);
    assert_eq!(s.iterations(), 0);
    let (v, p) = (v.unwrap(), p.unwrap());
    // prover traffic is exactly that of one KOS extend (plus base OTs): no LPN instance ran
    let kos_bytes = crate::ot::kos::prover_bytes_for(5000) as u64;
    assert!(p.bytes_sent() >= kos_bytes && p.bytes_sent() < kos_bytes + 20_000);
    assert!(v.bytes_sent() < 20_000);
}

#[test]
fn outputs_are_not_trivially_biased() {
    let (mut s, mut r) = pair(test_config());
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let n = 60_000;
    let ((_, keys), (_, cots)) = extend_both(&mut s, &mut r, cv, cp, n);
    let keys = keys.unwrap();
    let (bits, macs) = cots.unwrap();
    assert!(s.iterations() >= 2);
    let ones = bits.iter().filter(|&&b| b).count() as f64 / n as f64;
    assert!((0.47..0.53).contains(&ones), "fraction of ones {ones}");
    // every key bit position is balanced too
    for j in [0usize, 1, 63, 64, 127] {
        let c = keys.iter().filter(|k| (k.0 >> j) & 1 == 1).count() as f64 / n as f64;
        assert!((0.47..0.53).contains(&c), "key bit {j}: {c}");
    }
    // consecutive choice bits are not correlated
    let same = bits.windows(2).filter(|w| w[0] == w[1]).count() as f64 / (n - 1) as f64;
    assert!((0.47..0.53).contains(&same));
    assert_correlated(s.delta(), &keys, &bits, &macs);
}

#[test]
fn real_setup_parameter_set_runs_and_is_correct() {
    let cfg = FerretConfig { small: &[], setup: LpnParams::SETUP, mid: &[], main: None, direct_limit: 0 };
    let (mut s, mut r) = pair(cfg);
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let n = LpnParams::SETUP.net_output();
    let ((v, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, n);
    let (bits, macs) = cots.unwrap();
    assert_correlated(s.delta(), &keys.unwrap(), &bits, &macs);
    assert_eq!(s.iterations(), 1);
    assert_eq!(s.buffered(), LpnParams::SETUP.base_cots());
    // traffic: KOS bootstrap + exactly one setup iteration
    let (v, p) = (v.unwrap(), p.unwrap());
    let total = v.bytes_sent() + p.bytes_sent();
    let kos = crate::ot::kos::prover_bytes_for(LpnParams::SETUP.base_cots()) + 16;
    let expect = kos + LpnParams::SETUP.iteration_bytes();
    assert!(total as usize >= expect && (total as usize) < expect + 20_000, "{total} vs {expect}");
}

// ---- MPCOT / SPCOT level tests on locally dealt base COTs ----

struct Base {
    delta: u128,
    keys: Vec<u128>,
    bits: Vec<u8>,
    macs: Vec<u128>,
}

fn deal(n: usize) -> Base {
    let mut rng = rand::rng();
    let delta: u128 = rng.random();
    let keys: Vec<u128> = (0..n).map(|_| rng.random()).collect();
    let bits: Vec<u8> = (0..n).map(|_| rng.random::<bool>() as u8).collect();
    let macs = keys.iter().zip(&bits).map(|(&k, &b)| k ^ (delta * b as u128)).collect();
    Base { delta, keys, bits, macs }
}

type MpcotOut = (Result<Vec<u128>, CotError>, Result<(Vec<u8>, Vec<u128>), CotError>);

fn run_mpcot<A: Channel, B: Channel>(base: &Base, t: usize, h: usize, cv: A, cp: B) -> MpcotOut {
    let prg = FixedKeyAes::new();
    let th = t * h;
    let n = t << h;
    let fv = async {
        let mut cv = cv;
        let mut v = vec![0u128; n];
        let res = spcot::send(
            &mut cv,
            &prg,
            PrgKind::ChaCha12,
            base.delta,
            t,
            h,
            &base.keys[..th],
            &base.keys[th..th + 128],
            7 << 64,
            &mut v,
        )
        .await;
        let res = match res {
            Ok(check) => check.finish(&mut cv).await,
            Err(e) => Err(e),
        };
        drop(cv);
        res.map(|_| v)
    };
    let fp = async {
        let mut cp = cp;
        let mut w = vec![0u128; n];
        let mut e = vec![0u8; n];
        let res = spcot::receive(
            &mut cp,
            &prg,
            PrgKind::ChaCha12,
            t,
            h,
            &base.bits[..th],
            &base.macs[..th],
            &base.bits[th..th + 128],
            &base.macs[th..th + 128],
            7 << 64,
            &mut w,
            &mut e,
        )
        .await;
        let res = match res {
            Ok(check) => check.finish(&mut cp).await,
            Err(e) => Err(e),
        };
        drop(cp);
        res.map(|_| (e, w))
    };
    block_on(join(fv, fp))
}

const T: usize = 16;
const H: usize = 6;

#[test]
fn mpcot_noise_is_regular_and_correlated() {
    let mut positions = vec![];
    for _ in 0..4 {
        let base = deal(T * H + 128);
        let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
        let (v, pw) = run_mpcot(&base, T, H, cv, cp);
        let v = v.unwrap();
        let (e, w) = pw.unwrap();
        for b in 0..T {
            let block = &e[b << H..(b + 1) << H];
            assert_eq!(block.iter().filter(|&&x| x == 1).count(), 1, "block {b} not regular");
            assert!(block.iter().all(|&x| x <= 1));
            positions.push(block.iter().position(|&x| x == 1).unwrap());
        }
        for j in 0..T << H {
            assert_eq!(w[j], v[j] ^ (base.delta * e[j] as u128), "position {j}");
        }
    }
    // noise positions vary (not all zero / not constant)
    positions.sort_unstable();
    positions.dedup();
    assert!(positions.len() > 20, "noise positions look fixed: {positions:?}");
}

#[test]
fn flipped_level_sums_are_caught_by_prover_whatever_alpha() {
    // Each level has one message, and the prover always uses it: a flip makes the sibling
    // subtree (and w at α) wrong for every α, so the check fails every time. (With GGM's two
    // messages per level a one-sided flip was caught only for half of the α.)
    let per_tree = spcot::tree_message_bytes(H);
    for (tree, level, byte, bit) in [(0, 0, 0, 1u8), (3, H - 1, 5, 1), (5, 2, 15, 0x80), (T - 1, 4, 7, 2)] {
        for _ in 0..3 {
            let base = deal(T * H + 128);
            let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
            let cv = tampering(cv, move |k, m| {
                if k == 0 {
                    m[tree * per_tree + level * 16 + byte] ^= bit;
                }
            });
            let (_, p) = run_mpcot(&base, T, H, cv, cp);
            assert!(matches!(p, Err(CotError::SpcotCheckFailed)), "tree {tree} level {level}: {p:?}");
        }
    }
}

#[test]
fn noise_position_is_the_negated_base_choice_bits() {
    let base = deal(T * H + 128);
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let (_, p) = run_mpcot(&base, T, H, cv, cp);
    let (e, _) = p.unwrap();
    for b in 0..T {
        let alpha = e[b << H..(b + 1) << H].iter().position(|&x| x == 1).unwrap();
        let expect = (0..H).fold(0, |a, l| (a << 1) | (1 - base.bits[b * H + l] as usize));
        assert_eq!(alpha, expect, "tree {b}");
    }
}

#[test]
fn inconsistent_prover_opening_is_caught_by_verifier() {
    let base = deal(T * H + 128);
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    // prover messages: 0 = χ seed ‖ x', 1 = opening Z
    let cp = tampering(cp, |k, m| {
        if k == 1 {
            m[0] ^= 1;
        }
    });
    let (v, _) = run_mpcot(&base, T, H, cv, cp);
    assert!(matches!(v, Err(CotError::SpcotProverInconsistent)), "{v:?}");
}

#[test]
fn prover_lying_in_x_prime_cannot_pass() {
    let base = deal(T * H + 128);
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let cp = tampering(cp, |k, m| {
        if k == 0 {
            m[20] ^= 4;
        }
    });
    let (v, p) = run_mpcot(&base, T, H, cv, cp);
    // the prover cannot match the verifier's hashed check value (it would need Δ) and the
    // verifier never gets a valid opening
    assert!(matches!(p, Err(CotError::SpcotCheckFailed)), "{p:?}");
    assert!(v.is_err());
}

#[test]
fn wrong_size_messages_are_malformed_not_panics() {
    // (sender end tampered?, message index, new length, expected side)
    let cases: [(bool, usize, usize); 4] = [
        (true, 0, 100), // tree messages wrong size -> prover
        (false, 0, 31), // check challenge -> verifier
        (true, 1, 0),   // check hash -> prover
        (false, 1, 17), // opening -> verifier
    ];
    for (tamper_verifier, idx, len) in cases {
        let base = deal(T * H + 128);
        let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
        let f = move |k: usize, m: &mut Vec<u8>| {
            if k == idx {
                m.resize(len, 0);
            }
        };
        let (v, p) = if tamper_verifier {
            let (v, p) = run_mpcot(&base, T, H, tampering(cv, f), cp);
            (v.map(|_| ()), p.map(|_| ()))
        } else {
            let (v, p) = run_mpcot(&base, T, H, cv, tampering(cp, f));
            (v.map(|_| ()), p.map(|_| ()))
        };
        let victim = if tamper_verifier { p } else { v };
        assert!(matches!(victim, Err(CotError::Malformed { .. })), "case {idx}/{len}: {victim:?}");
    }
}

#[test]
fn malformed_lpn_seed_and_poisoning() {
    let (mut s, mut r) = pair(FerretConfig { direct_limit: 0, ..test_config() });
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    // the prover's 16-byte messages after the KOS bootstrap: the LPN seed (sent after the check
    // challenge, so that both sides encode while the check ends), then the check opening Z;
    // lengthen the first
    let mut seen = 0;
    let cp = tampering(cp, move |_, m| {
        if m.len() == 16 {
            seen += 1;
            if seen == 1 {
                m.push(0);
            }
        }
    });
    // run the base OTs first so that the 16-byte count only sees the iteration's messages
    let ((_, keys), (_, _)) = {
        let (mut cv, mut cp) = (cv, cp);
        let (a, b) = block_on(join(s.setup(&mut cv), r.setup(&mut cp)));
        a.unwrap();
        b.unwrap();
        extend_both(&mut s, &mut r, cv, cp, 10)
    };
    assert!(matches!(keys, Err(CotError::Malformed { what: "LPN seed", .. })), "{keys:?}");
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((_, again), _) = extend_both(&mut s, &mut r, cv, cp, 10);
    assert!(matches!(again, Err(CotError::Poisoned)));
}

#[test]
fn too_many_and_zero_and_bad_configs() {
    let (mut s, mut r) = pair(test_config());
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((cv, z), (cp, zr)) = extend_both(&mut s, &mut r, cv, cp, 0);
    assert!(z.unwrap().is_empty() && zr.unwrap().0.is_empty());
    let ((_, big), _) = extend_both(&mut s, &mut r, cv.unwrap(), cp.unwrap(), MAX_EXTEND + 1);
    assert!(matches!(big, Err(CotError::TooMany { .. })));
    for bad in [
        LpnParams { n: 4097, ..TEST_SETUP },
        LpnParams { k: 5, ..TEST_SETUP },
        LpnParams { log_block: 0, n: 32, ..TEST_SETUP },
        LpnParams { n: 1024, k: 900, t: 8, log_block: 7 },
    ] {
        let cfg = FerretConfig { setup: bad, ..test_config() };
        assert!(FerretSender::from_kos(KosSender::new(), cfg).is_err(), "{bad:?}");
    }
    assert!(FerretConfig::default().validate().is_ok());
}

/// The parameter set the planner last climbed to.
fn active_set(p: &Planner) -> LpnParams {
    p.config.ladder()[p.active]
}

/// Replays the planner for one demand from a given state; returns the steps taken.
fn plan(p: &mut Planner, available: &mut usize, n: usize) -> Vec<Step> {
    let mut steps = vec![];
    loop {
        let step = p.next(*available, n);
        steps.push(step);
        match step {
            Step::Direct => {
                p.done(step, n);
                return steps;
            }
            Step::Bootstrap(q) => *available = q.base_cots(),
            Step::Iterate(q) => *available = *available - q.base_cots() + q.n,
            Step::Serve => {
                *available -= n;
                return steps;
            }
        }
        p.done(step, n);
    }
}

#[test]
fn planner_picks_kos_then_setup_then_main_by_demand() {
    let (setup, main) = (Step::Iterate(LpnParams::SETUP), Step::Iterate(LpnParams::MAIN));
    // tiny sessions never touch LPN
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    assert_eq!(plan(&mut p, &mut avail, 30_000), [Step::Direct]);
    assert_eq!(plan(&mut p, &mut avail, 8_000), [Step::Direct]);
    // crossing the limit with more than a small iteration makes bootstraps the setup set; 1M
    // is covered by setup iterations only
    let steps = plan(&mut p, &mut avail, 1_000_000);
    assert_eq!(steps[0], Step::Bootstrap(LpnParams::SETUP));
    assert_eq!(steps[1..], [setup, setup, Step::Serve]);
    // a big demand switches to the main set (through one 2M iteration, since the buffer
    // cannot start main yet), which then stays
    let steps = plan(&mut p, &mut avail, 5_000_000);
    assert_eq!(steps, [Step::Iterate(LpnParams::MID_2M), main, Step::Serve]);
    assert!(active_set(&p) == LpnParams::MAIN && p.reserve == LpnParams::MAIN.base_cots());
    let steps = plan(&mut p, &mut avail, 9_000_000);
    assert_eq!(steps, [main, Step::Serve]);
    assert!(avail >= LpnParams::MAIN.base_cots());
    // the protocol's preprocessing: one small iteration
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    let pre = crate::protocol::prove::tls12::PREPROCESS_COTS;
    assert_eq!(
        plan(&mut p, &mut avail, pre),
        [Step::Bootstrap(LpnParams::SMALL_256K), Step::Iterate(LpnParams::SMALL_256K), Step::Serve]
    );
    assert!(avail >= LpnParams::SMALL_256K.base_cots());
    // with a 1 KB request proven too: one medium iteration
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    let pre = crate::protocol::prove::tls12::preprocess_cots(
        crate::protocol::prove::tls12::PREPROCESS_COTS,
        crate::protocol::prove::tls12::keystream_cots(1024),
        false,
    );
    assert!(pre > LpnParams::SMALL_256K.net_output() && pre <= LpnParams::SMALL_320K.net_output());
    assert_eq!(
        plan(&mut p, &mut avail, pre),
        [Step::Bootstrap(LpnParams::SMALL_320K), Step::Iterate(LpnParams::SMALL_320K), Step::Serve]
    );
    // a TLS 1.3 session's (its request's key hidden, 1 KB of it proven): the same set
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    let suite = crate::tls::tls13::Suite13::Aes128GcmSha256;
    let pre13 = crate::protocol::prove::tls12::preprocess_cots(
        crate::protocol::prove::tls12::derivation_cots(suite, 1),
        crate::protocol::prove::tls12::keystream_cots_of(suite, 1024),
        false,
    );
    assert!(pre13 > LpnParams::SMALL_256K.net_output() && pre13 <= LpnParams::SMALL_320K.net_output());
    assert_eq!(
        plan(&mut p, &mut avail, pre13),
        [Step::Bootstrap(LpnParams::SMALL_320K), Step::Iterate(LpnParams::SMALL_320K), Step::Serve]
    );
    // between 384K and 512K, the 448K set's fresh session costs fewer bytes than the 512K set's
    let fresh = |q: LpnParams| softspoken::prover_bytes_for(softspoken::DEFAULT_K, q.base_cots()) + q.iteration_bytes();
    assert!(fresh(LpnParams::SMALL_448K) + 20_000 < fresh(LpnParams::SMALL_512K));
    // and with a partly revealed response to come: one setup iteration
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    let pre = crate::protocol::prove::tls12::preprocess_cots(
        crate::protocol::prove::tls12::PREPROCESS_COTS,
        crate::protocol::prove::tls12::keystream_cots(1024),
        true,
    );
    assert_eq!(
        plan(&mut p, &mut avail, pre),
        [Step::Bootstrap(LpnParams::SETUP), Step::Iterate(LpnParams::SETUP), Step::Serve]
    );
    // an MPC-mode session's (a 1 KB request with its token hidden, the response by the fast
    // path: the transcript proof's and the proof of the garbling's): one setup iteration
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    let pre = crate::protocol::prove::tls12::preprocess_cots(
        crate::protocol::prove::tls12::PREPROCESS_COTS,
        crate::protocol::prove::tls12::keystream_cots(1024),
        false,
    ) + crate::mpc::reproof::preprocess_cots(1024, false);
    assert_eq!(
        plan(&mut p, &mut avail, pre),
        [Step::Bootstrap(LpnParams::SETUP), Step::Iterate(LpnParams::SETUP), Step::Serve]
    );
    // a fresh 10M session: bootstrap, one setup (to afford the main base), one main
    let mut p = Planner::new(FerretConfig::default());
    let mut avail = 0;
    let steps = plan(&mut p, &mut avail, 10_000_000);
    assert_eq!(steps, [Step::Bootstrap(LpnParams::SETUP), setup, main, Step::Serve]);
}

/// The `extend` sizes of a 51 KB response proven all but its last record, with a 1 KB request
/// whose token is hidden (recorded from `tlsproof bench run`, proxy mode): the preprocessing
/// during TLS, what the key derivation left short of the first keystream request, then the
/// keystream batches in requests of at most `KEYSTREAM_PREPROCESS`. TLS 1.3's derivation takes
/// more of the preprocessed COTs (both traffic secrets stay hidden), so its first shortfall is
/// larger.
const REDACTED_51KB_DEMANDS_TLS12: [usize; 6] = [511_360, 415_786, 983_040, 983_168, 983_168, 583_680];
const REDACTED_51KB_DEMANDS_TLS13: [usize; 6] = [511_360, 944_525, 983_040, 983_168, 983_168, 259_712];

/// (steps, LPN bytes) of a fresh session's demands under `cfg`.
fn replay(cfg: FerretConfig, demands: &[usize]) -> (Vec<Step>, usize) {
    let (mut p, mut avail) = (Planner::new(cfg), 0);
    let steps: Vec<Step> = demands.iter().flat_map(|&n| plan(&mut p, &mut avail, n)).collect();
    let bytes = steps.iter().map(|s| if let Step::Iterate(q) = s { q.iteration_bytes() } else { 0 }).sum();
    (steps, bytes)
}

fn iterations(steps: &[Step]) -> Vec<Step> {
    steps.iter().copied().filter(|s| matches!(s, Step::Iterate(_))).collect()
}

#[test]
fn planner_covers_a_redacted_responses_keystream_with_mid_set_iterations() {
    let (setup, mid) = (Step::Iterate(LpnParams::SETUP), Step::Iterate(LpnParams::MID_2M));
    assert_eq!(REDACTED_51KB_DEMANDS_TLS12[0], crate::protocol::prove::tls12::PARTLY_REVEALED_PREPROCESS);
    // one setup iteration during TLS, which leaves the 2M set's base COTs in the buffer; then
    // one 2M iteration per two keystream requests, and the smallest set that covers a
    // shortfall one iteration of it can
    let (steps, bytes) = replay(FerretConfig::default(), &REDACTED_51KB_DEMANDS_TLS12);
    assert_eq!(iterations(&steps), [setup, Step::Iterate(LpnParams::SMALL_512K), mid, mid], "{steps:?}");
    let (steps13, bytes13) = replay(FerretConfig::default(), &REDACTED_51KB_DEMANDS_TLS13);
    assert_eq!(iterations(&steps13), [setup, mid, mid, Step::Iterate(LpnParams::SMALL_320K)], "{steps13:?}");
    // against setup iterations alone: at least 1.5× fewer bytes (≈0.7 MB less down the wire)
    for (demands, bytes) in [(&REDACTED_51KB_DEMANDS_TLS12, bytes), (&REDACTED_51KB_DEMANDS_TLS13, bytes13)] {
        let (_, without) = replay(FerretConfig { mid: &[], ..FerretConfig::default() }, demands);
        assert!(bytes * 3 < without * 2 && without - bytes > 600_000, "{bytes} {without}");
    }
    // a shortfall the 2M set does not cover with ≥ 25% fewer bytes stays on setup (1M fresh),
    // and a 10M one still goes to main, straight past it
    let (steps, _) = replay(FerretConfig::default(), &[1_000_000]);
    assert!(!steps.contains(&mid), "{steps:?}");
    let (steps, _) = replay(FerretConfig::default(), &[10_000_000]);
    assert_eq!(steps[1..], [setup, Step::Iterate(LpnParams::MAIN), Step::Serve]);
    // after the 2M set, a shortfall that one setup iteration covers takes setup
    let (steps, _) = replay(FerretConfig::default(), &[511_360, 944_525, 983_040, 10, 700_000, 300_000, 1_500_000]);
    assert_eq!(iterations(&steps), [setup, mid, mid, setup], "{steps:?}");
}

/// Fresh SoftSpokenOT-bootstrapped sessions under `cfg` serve `demands` in turn: every extend
/// is correlated under one Δ, both sides stay in step, and no COT is handed out twice. Returns
/// the active set after each demand.
fn serve_demands(cfg: FerretConfig, demands: &[usize]) -> Vec<LpnParams> {
    let (mut s, mut r) = pair_ss(cfg, DELTA_ALL_BLOCKS_NONZERO, 5);
    let (mut cv, mut cp) = memory_pair(MAX_MESSAGE_BYTES);
    let (mut all, mut sets) = (vec![], vec![]);
    for &n in demands {
        let ((v, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, n);
        let keys = keys.unwrap();
        let (bits, macs) = cots.unwrap();
        assert_correlated(DELTA_ALL_BLOCKS_NONZERO, &keys, &bits, &macs);
        assert_eq!((s.buffered(), s.planner.active), (r.buffered(), r.planner.active));
        sets.push(active_set(&s.planner));
        all.extend(keys.into_iter().map(|k| k.0));
        (cv, cp) = (v.unwrap(), p.unwrap());
    }
    let len = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), len, "no correlation is handed out twice");
    sets
}

#[test]
fn correlations_hold_across_the_setup_mid_and_main_sets() {
    let cfg = FerretConfig { mid: &[TEST_MID], direct_limit: 0, ..test_config() };
    let sets = serve_demands(cfg, &[TEST_SETUP.net_output(), 4000, 5000, 9000, 100, 60_000, 7]);
    assert!(sets.contains(&TEST_MID), "{sets:?}");
    assert_eq!(sets.last(), Some(&TEST_MAIN));
}

#[test]
fn planner_bootstraps_the_small_set_only_when_one_iteration_covers_the_demand() {
    let cfg = FerretConfig { small: &[TEST_SMALL], direct_limit: 0, ..test_config() };
    // one small iteration, keeping the setup set's base COTs back
    let fits = TEST_SMALL.n - TEST_SETUP.base_cots();
    let mut p = Planner::new(cfg);
    let mut avail = 0;
    assert_eq!(plan(&mut p, &mut avail, fits), [Step::Bootstrap(TEST_SMALL), Step::Iterate(TEST_SMALL), Step::Serve]);
    assert_eq!((active_set(&p), p.reserve, avail), (TEST_SMALL, TEST_SETUP.base_cots(), TEST_SETUP.base_cots()));
    // a later big demand steps up to the setup set at once (the buffer kept its base COTs),
    // then to main
    let steps = plan(&mut p, &mut avail, 40_000);
    assert_eq!(steps[0], Step::Iterate(TEST_SETUP));
    assert!(steps.contains(&Step::Iterate(TEST_MAIN)), "{steps:?}");
    assert_eq!((active_set(&p), p.reserve), (TEST_MAIN, TEST_MAIN.base_cots()));
    // its last serve took the buffer below main's base COTs, down to the smallest set's: a
    // demand may take part of the reserve as long as some set can still start
    let floor = TEST_SMALL.base_cots();
    assert_eq!(avail, floor);
    assert!(floor < p.reserve);
    // from there only the small set can start: a shortfall runs it, not main, and the reserve
    // stays main's base COTs
    assert_eq!(plan(&mut p, &mut avail, 1000), [Step::Iterate(TEST_SMALL), Step::Serve]);
    assert_eq!((active_set(&p), p.reserve), (TEST_MAIN, TEST_MAIN.base_cots()));

    // one more than a small iteration makes: bootstrap the setup set as before
    let mut p = Planner::new(cfg);
    let mut avail = 0;
    let steps = plan(&mut p, &mut avail, fits + 1);
    assert_eq!(steps[0], Step::Bootstrap(TEST_SETUP));
    assert_eq!(steps.last(), Some(&Step::Serve));
    assert_eq!(active_set(&p), TEST_SETUP);
}

#[test]
fn correlations_hold_across_the_small_setup_and_main_sets() {
    let cfg = FerretConfig { small: &[TEST_SMALL], direct_limit: 0, ..test_config() };
    let sets = serve_demands(cfg, &[TEST_SMALL.net_output(), 3000, 40_000, 5]);
    assert_eq!(sets.last(), Some(&TEST_MAIN));
}

#[test]
fn every_first_demand_from_the_protocols_least_costs_at_most_8_bits_per_cot() {
    // exact wire bytes of a fresh session (base OTs, SoftSpokenOT setup and bootstrap, LPN
    // iterations) at the protocol's least demand and just past each set's net output, where a
    // session pays the most per COT: ≤ 8 bits is 16× below KOS's 128
    let cfg = FerretConfig::default();
    let mut demands = vec![crate::protocol::prove::tls12::PREPROCESS_COTS];
    demands.extend(cfg.ladder().iter().map(|p| p.net_output() + 1));
    let k = softspoken::DEFAULT_K;
    for n in demands {
        let mut p = Planner::new(cfg);
        let mut avail = 0;
        let steps = plan(&mut p, &mut avail, n);
        let Step::Bootstrap(first) = steps[0] else { panic!("{n}: {steps:?}") };
        let lpn: usize = steps.iter().map(|s| if let Step::Iterate(q) = s { q.iteration_bytes() } else { 0 }).sum();
        let bootstrap = 32
            + 128 * 32
            + softspoken::setup_message_bytes(k)
            + softspoken::prover_bytes_for(k, first.base_cots())
            + 16;
        let bits = 8.0 * (bootstrap + lpn) as f64 / n as f64;
        assert!(bits <= 8.0, "demand {n}: {bits:.2} bits per COT via {steps:?}");
    }
}

// ---- Ferret over a SoftSpokenOT bootstrap ----

#[test]
fn correlations_hold_over_a_softspoken_bootstrap_for_several_k_and_both_prgs() {
    for (k, prg) in [
        (8usize, PrgKind::Aes128Ctr),
        (5, PrgKind::Aes128Ctr),
        (2, PrgKind::Aes128Ctr),
        (5, PrgKind::ChaCha12),
        (8, PrgKind::ChaCha12),
    ] {
        let (mut s, mut r) = pair_ss_with(test_config(), DELTA_ALL_BLOCKS_NONZERO, k, prg);
        assert_eq!((s.base().prg(), r.base().prg()), (prg, prg));
        assert_eq!(s.delta(), DELTA_ALL_BLOCKS_NONZERO, "Δ comes from the base source");
        let (mut cv, mut cp) = memory_pair(MAX_MESSAGE_BYTES);
        let mut all_keys = vec![];
        let mut iters = vec![];
        for n in [100usize, 900, 3000, 1, 20_000, 40_000, 77_777] {
            let ((v, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, n);
            let keys = keys.unwrap();
            let (bits, macs) = cots.unwrap();
            assert_correlated(DELTA_ALL_BLOCKS_NONZERO, &keys, &bits, &macs);
            assert_eq!(s.buffered(), r.buffered());
            iters.push(s.iterations());
            all_keys.extend(keys);
            (cv, cp) = (v.unwrap(), p.unwrap());
        }
        assert_eq!(iters[..2], [0, 0], "first 1000 served directly by SoftSpoken");
        assert!(iters[2] >= 1 && active_set(&s.planner) == TEST_MAIN);
        let mut sorted: Vec<u128> = all_keys.iter().map(|k| k.0).collect();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all_keys.len());
    }
}

#[test]
fn default_constructors_bootstrap_from_softspoken() {
    let (mut s, mut r) = (FerretSender::new(), FerretReceiver::new());
    assert!(matches!(s.base(), BaseCotSender::SoftSpoken(x) if x.k() == softspoken::DEFAULT_K));
    assert!(matches!(r.base(), BaseCotReceiver::SoftSpoken(x) if x.k() == softspoken::DEFAULT_K));
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((_, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, 5000);
    let (bits, macs) = cots.unwrap();
    assert_correlated(s.delta(), &keys.unwrap(), &bits, &macs);
    // served directly: base OT + GGM setup + one SoftSpoken extend
    let expect = 32
        + softspoken::setup_message_bytes(softspoken::DEFAULT_K)
        + softspoken::prover_bytes_for(softspoken::DEFAULT_K, 5000);
    assert_eq!(p.unwrap().bytes_sent(), expect as u64);
}

#[test]
fn real_setup_parameter_set_over_softspoken_and_its_traffic() {
    let cfg = FerretConfig { small: &[], setup: LpnParams::SETUP, mid: &[], main: None, direct_limit: 0 };
    let (mut s, mut r) = pair_ss(cfg, DELTA_ALL_BLOCKS_NONZERO, 8);
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let n = LpnParams::SETUP.net_output();
    let ((v, keys), (p, cots)) = extend_both(&mut s, &mut r, cv, cp, n);
    let (bits, macs) = cots.unwrap();
    assert_correlated(s.delta(), &keys.unwrap(), &bits, &macs);
    assert_eq!(s.iterations(), 1);
    let (v, p) = (v.unwrap(), p.unwrap());
    let total = (v.bytes_sent() + p.bytes_sent()) as usize;
    let base_ot = 32 + 128 * 32;
    let ss = softspoken::setup_message_bytes(8) + softspoken::prover_bytes_for(8, LpnParams::SETUP.base_cots()) + 16;
    assert_eq!(total, base_ot + ss + LpnParams::SETUP.iteration_bytes());
    // the bootstrap upload is 15 bits per base COT instead of KOS's 128
    assert!(ss * 8 < 16 * LpnParams::SETUP.base_cots() + 8 * 4096);
}

#[test]
fn tampered_softspoken_bootstrap_is_caught_through_ferret() {
    let cfg = FerretConfig { direct_limit: 0, ..test_config() };
    let (mut s, mut r) = pair_ss(cfg, DELTA_ALL_BLOCKS_NONZERO, 8);
    let (mut cv, mut cp) = memory_pair(MAX_MESSAGE_BYTES);
    let (a, b) = block_on(join(s.setup(&mut cv), r.setup(&mut cp)));
    a.unwrap();
    b.unwrap();
    // the prover's first message after the setup is the bootstrap's syndrome chunk
    let cp = tampering(cp, |i, m| {
        if i == 0 {
            let mid = m.len() / 2;
            m[mid] ^= 0x40;
        }
    });
    let ((_, keys), _) = extend_both(&mut s, &mut r, cv, cp, 10);
    assert!(matches!(keys, Err(CotError::SoftSpokenCheckFailed)), "{keys:?}");
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((_, again), _) = extend_both(&mut s, &mut r, cv, cp, 10);
    assert!(matches!(again, Err(CotError::Poisoned)));
}

#[test]
fn mismatched_prgs_fail_the_bootstrap_check() {
    // the verifier expands with AES, the prover with ChaCha12: the leaf streams differ, so the
    // SoftSpokenOT check (whose χ differ too) fails on the verifier's side
    let cfg = FerretConfig { direct_limit: 0, ..test_config() };
    let (mut s, _) = pair_ss_with(cfg, DELTA_ALL_BLOCKS_NONZERO, 5, PrgKind::Aes128Ctr);
    let (_, mut r) = pair_ss_with(cfg, DELTA_ALL_BLOCKS_NONZERO, 5, PrgKind::ChaCha12);
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((_, keys), _) = extend_both(&mut s, &mut r, cv, cp, 10);
    assert!(matches!(keys, Err(CotError::SoftSpokenCheckFailed)), "{keys:?}");
}

#[test]
fn mismatched_bootstrap_sources_fail_cleanly() {
    let mut s = FerretSender::from_kos(KosSender::new(), test_config()).unwrap();
    let mut r = FerretReceiver::from_softspoken(SoftSpokenReceiver::new(), test_config()).unwrap();
    let (cv, cp) = memory_pair(MAX_MESSAGE_BYTES);
    let ((_, keys), (_, cots)) = extend_both(&mut s, &mut r, cv, cp, 100);
    assert!(keys.is_err() || cots.is_err());
}

#[test]
fn serve_copies_takes_and_hands_nearly_whole_buffers_out_without_losing_or_repeating_entries() {
    let mut buf: Vec<u128> = (1..=100).collect();
    // a take from the front: copied, wiped in place, cursor advances
    let (a, pos) = serve(&mut buf, 0, 5);
    assert_eq!((a, pos, buf.len()), ((1..=5).collect::<Vec<_>>(), 5, 100));
    assert!(buf[..5].iter().all(|&x| x == 0));
    // half of what is left is still copied (the allocation stays for the next iteration)
    let mut half: Vec<u128> = (1..=100).collect();
    let (h, hpos) = serve(&mut half, 50, 50);
    assert_eq!((h, hpos, half.len()), ((51..=100).collect::<Vec<_>>(), 100, 100));
    // 90 of the 95 left, with the 5 served before: 10 ≤ 90/8 others, so the allocation goes
    // to the caller and the rest stays
    let ptr = buf.as_ptr();
    let (b, pos) = serve(&mut buf, pos, 90);
    assert_eq!(b, (6..=95).collect::<Vec<_>>());
    assert_eq!(b.as_ptr(), ptr, "handed out, not copied");
    assert_eq!((pos, buf.clone()), (0, (96..=100).collect::<Vec<_>>()));
    // and the remaining buffer keeps serving in order, down to the last entry
    let (c, pos) = serve(&mut buf, pos, 4);
    assert_eq!((c, pos), ((96..=99).collect::<Vec<_>>(), 4));
    let (d, pos) = serve(&mut buf, pos, 1);
    assert_eq!((d, pos), (vec![100], 5));
}
