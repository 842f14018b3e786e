//! Ferret silent OT extension (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast Extension for
//! coRRElated oT with small communication", CCS 2020): primal LPN with regular noise,
//! bootstrapped from a base OT extension and then from its own output. Same roles and
//! correlation as the rest of [`crate::ot`]: verifier = COT sender holding Δ, prover = COT
//! receiver, `M_i = K_i ⊕ u_i·Δ`, and Δ is the one of the wrapped base extension
//! ([`BaseCotSender`]: [`SoftSpokenSender`] by default, or [`KosSender`]), so directly served
//! and Ferret-served correlations of a session share one Δ.
//!
//! # One iteration with parameters (n, k, t), block size ℓ = n/t = 2^h
//! Consumes R = k + t·h + 128 base COTs (u, M) / K:
//! * the first k are the LPN secret,
//! * t·h feed the GGM trees of t single-point COTs ([`spcot`]), one per noise block,
//! * 128 build the check value of the malicious consistency check.
//!
//! The MPCOT gives v (verifier) and (e, w) (prover) with w = v ⊕ e·Δ and e regular (exactly one
//! 1 in each block of ℓ). Then with the local linear code A ([`lpn`], 10 nonzeros per column)
//! the outputs are K' = v ⊕ K·A, u' = e ⊕ u·A, M' = w ⊕ M·A, so M' = K' ⊕ u'·Δ.
//!
//! The LPN matrix seed is chosen by the **prover**, which sends it right after its MPCOT check
//! challenge (after all tree messages are fixed, and costing no round trip): the matrix only
//! protects the prover's bits from the verifier (LPN), and the correlation holds for every
//! matrix, so the verifier needs no say (and the prover cannot gain anything by choosing it);
//! the prover picks a fresh one every iteration. Sent then, it lets each side encode while the
//! check's last message is in flight (the prover while it waits for the verifier's hash, the
//! verifier while it waits for the prover's opening, on the thread pool, [`on_pool`]): both
//! encode after their check sums are taken, and neither uses an output before its side of the
//! check has passed.
//!
//! # Bootstrapping and buffering
//! All n outputs of an iteration go into a buffer; each later `extend(m)` serves from its front
//! while keeping `reserve` COTs for the next iteration (R of the parameter set in use).
//! The buffer's allocation is reused by every iteration (`make_room`: base COTs copied out,
//! leftovers moved to the front, the n new outputs written after them), and serving only
//! advances a cursor, so an iteration neither faults in fresh pages nor shifts the buffer; a
//! take of nearly the whole buffer hands the allocation itself to the caller (`serve`). When
//! the buffer would drop below `m + reserve`, new iterations run first (each eats R buffered
//! COTs and adds n). The very first base COTs come from the base extension: SoftSpokenOT with
//! its default k = 6 ([`super::softspoken`], 21 bits of prover upload per COT) for
//! [`FerretSender::new`] / [`FerretReceiver::new`], or KOS (128 bits per COT) via `from_kos`;
//! `from_base` takes either.
//!
//! # Small-session strategy
//! * Until the session has asked for more than [`FerretConfig::direct_limit`] correlations
//!   in total, demands are served straight from the base extension (no LPN instance at all).
//! * The demand that crosses it bootstraps the smallest of the *small* sets
//!   ([`LpnParams::SMALL_SETS`], 224k–478k net) whose one iteration covers that demand, else
//!   the *setup* set. The protocol's fast-path preprocessing (190k plus the request's
//!   keystream proof, [`crate::cost::preprocess_cots`]) thus costs one right-sized
//!   iteration; a session whose response will be partly revealed asks for about a setup
//!   iteration's output instead, so that it runs during the TLS session.
//! * Later shortfalls run, among the sets the buffer can start, the smallest of the small
//!   sets and setup whose one iteration covers the shortfall, else the largest of them (they
//!   cost about the same bytes per COT, and larger iterations amortise their fixed costs);
//!   then a *mid* set ([`LpnParams::MID_2M`]) once covering the shortfall that way would
//!   cost ≥ 25% more bytes than with it, and main once that holds against the set chosen so
//!   far. A smaller set may follow a larger one (a session's last, small shortfall).
//! * The buffer keeps in reserve the base COTs of the largest set run so far and, below the
//!   large sets, of the next set up (after setup: the 2M set's, so that a redacted response's
//!   first keystream request can start it at once). Iterations make room for the reserve; a
//!   demand may take part of it, down to the smallest set's base COTs, so that a small last
//!   demand needs no iteration.
//! * With the default sets: demand ≤ 38k ([`DEFAULT_DIRECT_LIMIT`]; 43k with
//!   [`FerretConfig::for_kos`]) → base extension only; then one small iteration if one covers
//!   the demand; setup iterations up to ≈1.2M; 2M-set iterations for later shortfalls of
//!   ≈0.5–2.5M (the ≈1M-COT requests of a redacted response's keystream proof: 180 kB per
//!   1.96M COTs, where setup iterations cost 183 kB per 0.6M); beyond → main. A shortfall that
//!   one small or setup iteration covers takes the smallest such, whatever ran before.
//!
//! Decisions depend only on the sequence of `extend` sizes, so both sides stay in step.
//!
//! # Parameters (regular noise) and their security
//! | set | n | k | t (block ℓ) | net COTs per iteration | bits | cheapest attack |
//! |---|---|---|---|---|---|---|
//! | main [`LpnParams::MAIN`] | 10,805,248 | 589,760 | 1,319 (2^13) | 10,198,213 | 149.9 | hybrid |
//! | [`LpnParams::MID_2M`] | 2,097,152 | 126,976 | 1,024 (2^11) | 1,958,784 | 128.2 | hybrid |
//! | setup [`LpnParams::SETUP`] | 649,728 | 38,400 | 1,269 (2^9) | 599,779 | 128.4 | hybrid |
//! | [`LpnParams::SMALL_512K`] | 524,288 | 36,608 | 1,024 (2^9) | 478,336 | 128.7 | hybrid |
//! | [`LpnParams::SMALL_448K`] | 458,752 | 35,328 | 896 (2^9) | 415,232 | 128.1 | hybrid |
//! | [`LpnParams::SMALL_384K`] | 393,216 | 34,304 | 768 (2^9) | 351,872 | 128.5 | hybrid |
//! | [`LpnParams::SMALL_320K`] | 327,680 | 34,048 | 640 (2^9) | 287,744 | 128.6 | ISD |
//! | [`LpnParams::SMALL_256K`] | 262,144 | 33,536 | 512 (2^9) | 223,872 | 128.3 | ISD |
//!
//! * **Where n and t come from.** Main and setup are Ferret's regular-noise sets (CCS 2020,
//!   Table 2, as quoted by a third-party design note; the paper PDF was not available to us).
//!   The setup tuple (649,728, 36,288, 1,269) also appears in an older emp-ot `constants.h`
//!   (the authors' implementation). The paper's uniform-noise sets are (10,616,092, 588,160,
//!   1,324) and (616,092, 37,248, 1,254).
//! * **How the bits were estimated.** With the LPN estimator of Yu, Yang, Wang, Wang, Wang,
//!   Liu, Hao, Dong and Li (lpnestimator.com, 2025; its code is GitHub
//!   `1234wangtr/Code_estimators`, run outside this repository, newest commits c93f87c /
//!   c7344ea; its outputs are in `benches/results/lpn_estimates.txt`). For primal LPN over
//!   GF(2) with regular noise it takes the cheapest of:
//!   - LWYY22 (eprint 2022/712): Pooled Gauss, statistical decoding 1.0/2.0, SD-ISD and
//!     BJMM-ISD after the regular-to-exact reduction, and the algebraic attack AGB;
//!   - the hybrid attack (eprint 2025/1284);
//!   - Esser–Santini's regular ISD (eprint 2023/1568);
//!   - AGB 2.0 (eprint 2025/1476). Its search did not finish in 14 minutes on the setup set;
//!     on (2^14, 3,482, 198) and (2^14, 3,482, 338) it came out 5.3 and 8.1 bits below AGB,
//!     while AGB lies 16 (setup: 144.4; mid: 144.0) and 17–22 (small sets: 145.7–150.7) bits
//!     above the cheapest attack, so AGB 2.0 should not bind. AGB was not run on main (its
//!     search takes too long at that n), whose cheapest attacks sit at ≈150.
//!     Two crashes of the estimator's newest code were patched at run time without changing
//!     its minimum: 0·log 0 in AGB at a duplicate grid point, and a float overflow in the
//!     hybrid for candidates costing over 2^1024.
//! * **The setup k.** The paper's k = 36,288 estimates at 122.1 bits and k = 37,248 at
//!   125.0, both set by the 2025 hybrid attack. k = 38,400 is the smallest
//!   multiple of 256 at ≥ 128 bits (ISD 138.2 there).
//! * **The small sets.** They are ours: n steps from 2^18 (the protocol's 190k demand in one
//!   iteration) to 2^19 so that a demand just past one set's net output still costs ≤ 7.4 bits
//!   per COT with the next; each k is the smallest multiple of 256 at ≥ 128 bits.
//!   - Blocks of 2^9 need a larger k than blocks of 2^8 (at n = 2^18: k ≥ 19,712, at 327,680:
//!     k ≥ 20,992, both hybrid-bound). But they halve the tree messages (t·h·16 B: 73.8 vs
//!     131.1 kB at 2^18) for +10k bootstrap COTs (+26 kB upload): 182.5 vs ≈208 kB per session.
//!   - Blocks of 2^10 do not pay at these sizes: at n = 2^19 (t = 512) the least k is 64,000
//!     (128.1 bits, ISD), so its 23k more bootstrap COTs (62 kB up) cancel the 66 kB of tree
//!     messages saved, and the net output drops by 27k.
//!   - The 448K set sits between 384K and 512K (a TLS 1.3 session's preprocessing with
//!     its whole HKDF chain in ZK took ≈408k): 245 kB for a fresh session (bootstrap 116 kB
//!     up, trees 129 kB down) against the 512K set's 270 kB, and 12 % fewer outputs to
//!     compute.
//! * **The mid set** is ours too: n = 2^21 with blocks of 2^11 (t = 1,024), k the smallest
//!   multiple of 256 at ≥ 128 bits (128.2 hybrid, 129.7 ISD; 126,720 gives 127.998). Blocks
//!   of 2^12 (t = 512) would halve the tree messages but need k > 224k (ISD 122.9 there),
//!   which leaves less net output and a larger reserve.
//! * emp-ot's current `ferret_b13` pair (470,016, 32,768, 918) / (10,485,760, 452,000, 1,280)
//!   estimates at 119.8 / 138.8 bits (hybrid), so it is not offered.
//!
//! # Costs (measured with `examples/ferret_bench.rs` on 2 cores shared with other jobs, both
//! parties in one process; times are noisy, bytes exact)
//! * **Per iteration.** V → P: t·h·16 B of half-tree messages + 32 B. P → V: 48 B of check
//!   and the 16 B LPN seed. Bytes per net COT:
//!   - main: 274,448 B for 10,198,213 net COTs (0.215 bit/COT);
//!   - mid (2M): 180,320 B for 1,958,784 (0.74 bit/COT);
//!   - setup: 182,832 B for 599,779 (2.44 bit/COT);
//!   - small sets: 73,824 B for 223,872 (2.64 bit/COT) … 147,552 B for 478,336 (2.47).
//!
//!   (Full GGM trees would send t·(2h+1)·16 B plus ⌈t·h/8⌉ B of choice bits.)
//! * **Fresh session**, base OTs and bootstrap included: total bytes both directions (prover
//!   upload in brackets). KOS alone costs 128 bit/COT; SoftSpokenOT k = 6 alone costs 21.
//!
//!   | demand | Ferret over KOS | Ferret over SoftSpokenOT k = 6 | vs KOS in the same run |
//!   |---|---|---|---|
//!   | 200k (about the protocol's preprocessing) | — | 182,528 B = **7.30** bit/COT (105 kB) | 17.6× fewer |
//!   | 1M | 1,172,656 B = 9.38 bit/COT (803 kB) | 504,944 B = **4.04** bit/COT (135 kB) | 31.7× fewer |
//!   | 10M | 1,264,272 B = 1.01 bit/COT (803 kB) | 596,560 B = **0.477** bit/COT (135 kB) | 268× fewer |
//!
//!   So issue #5's byte targets hold: ≤ 8 bit/COT at 1M, ≤ 1 at 10M, and ≥ 16× below KOS at
//!   every size the protocol asks for first (from 200k on). The costliest points sit just
//!   past a set's net output: 223,873 → 7.34, 287,745 → 6.32, 351,873 → 6.28, 478,337 → 5.39,
//!   599,780 → 6.74 bit/COT (17.5–23.8× below KOS; a unit test pins ≤ 8 from the formulas). At
//!   200k the setup set would have cost 322,112 B (12.9 bit/COT), and SoftSpokenOT k = 5
//!   201,664 B (8.07 bit/COT).
//! * **Time at 200k.** Both parties together take ≈38 ms with the small set against ≈68 ms
//!   with the setup set, and ≈32 ms for KOS.
//! * **Per-phase split of one iteration**: `cargo run --release --example ferret_bench phases`.
//!   2 noisy shared cores, each phase alone on touched buffers (medians of 7):
//!   - main: half trees 32 ms sender / 51 ms receiver; χ sums 30 / 33 ms; LPN encode 119 / 159
//!     ms, of which index generation ≈52 ms per side; 51.6 ns per net COT in all;
//!   - the 2M set: 43.0 ns per net COT; setup: 34.5 ns (its 600 kB LPN secret fits the 1 MB
//!     L2, where a gather costs ≈0.57 ns against ≈0.83 ns from main's 9.4 MB).
//! * **The PRG.** The session's PRG ([`crate::primitives::prg`], chosen by the prover) expands the SPCOT
//!   check's χ and the LPN matrix: AES-128-CTR with AES-NI, ChaCha12 in the browser. There
//!   ChaCha12 runs ≈7× faster than bitsliced AES (Ferret 10M COTs in Chromium: 5.2 M COT/s
//!   with it, 2.1 with bitsliced AES as the PRG). The trees' fixed-key hashes stay AES.
//! * **Speed.** Over an in-memory channel Ferret runs below KOS's rate per correlation here
//!   (18.3 against 22.9 M COT/s at 10M, the medians in `docs/benchmarks.md`), and no
//!   implementation of it reaches 2×: per correlation and side it computes ≈4.5 AES blocks,
//!   one field product and 10 random reads where KOS computes 1.5–3 AES blocks, a share of a
//!   transpose and one product (`docs/benchmarks.md`, "Ferret against KOS"). What Ferret saves
//!   is the wire: 0.48 instead of 128 bits per correlation at 10M, so over emulated links it is
//!   2.4–2.8× KOS's rate (1 Gbit/s LAN, 10M), ≈6× (100 Mbit/s, 1M) and ≈7× (20 Mbit/s, 200k):
//!   `tlsproof bench zk --only links`.
//!
//! # What leaks (malicious security)
//! See [`spcot`]: a malicious verifier learns one predicate bit of its choice about the noise
//! positions α (selective failure, then the session aborts); a malicious prover learns nothing
//! about Δ beyond the base extension's selective-failure leakage (KOS: [`crate::ot`];
//! SoftSpokenOT: [`super::softspoken`], same rate). After any error
//! the instance is poisoned ([`CotError::Poisoned`]).

pub(crate) mod ggm;
pub(crate) mod lpn;
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub mod profile;
pub(crate) mod spcot;

#[cfg(test)]
mod tests;

use super::bits::check_n;
use super::softspoken::{SoftSpokenReceiver, SoftSpokenSender};
use super::{CotError, CotReceiver, CotSender, KosReceiver, KosSender};
use crate::channel::Channel;
use crate::primitives::field::F128;
use crate::primitives::pool::on_pool;
use crate::primitives::prg::PrgKind;
use ggm::FixedKeyAes;
use zeroize::{Zeroize, Zeroizing};

pub(crate) use spcot::CHECK_COTS;

/// Most correlations one `extend` call may produce (same limit as KOS).
pub(crate) const MAX_EXTEND: usize = super::kos::MAX_EXTEND;

/// The OT extension that bootstraps Ferret and serves small demands directly (verifier side).
/// Its Δ is Ferret's Δ.
pub enum BaseCotSender {
    Kos(KosSender),
    SoftSpoken(SoftSpokenSender),
}

/// Prover side of [`BaseCotSender`]; must be the same kind (and, for SoftSpoken, the same k).
pub enum BaseCotReceiver {
    Kos(KosReceiver),
    SoftSpoken(SoftSpokenReceiver),
}

impl From<KosSender> for BaseCotSender {
    fn from(s: KosSender) -> Self {
        BaseCotSender::Kos(s)
    }
}
impl From<SoftSpokenSender> for BaseCotSender {
    fn from(s: SoftSpokenSender) -> Self {
        BaseCotSender::SoftSpoken(s)
    }
}
impl From<KosReceiver> for BaseCotReceiver {
    fn from(r: KosReceiver) -> Self {
        BaseCotReceiver::Kos(r)
    }
}
impl From<SoftSpokenReceiver> for BaseCotReceiver {
    fn from(r: SoftSpokenReceiver) -> Self {
        BaseCotReceiver::SoftSpoken(r)
    }
}

impl BaseCotSender {
    /// Run the base OTs (and SoftSpoken's GGM setup) now; no-op if done.
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        match self {
            BaseCotSender::Kos(s) => s.setup(ch).await,
            BaseCotSender::SoftSpoken(s) => s.setup(ch).await,
        }
    }

    /// The session's PRG, which Ferret's check and LPN matrix use too.
    pub fn prg(&self) -> PrgKind {
        match self {
            BaseCotSender::Kos(s) => s.prg(),
            BaseCotSender::SoftSpoken(s) => s.prg(),
        }
    }
}

impl CotSender for BaseCotSender {
    fn delta(&self) -> F128 {
        match self {
            BaseCotSender::Kos(s) => s.delta(),
            BaseCotSender::SoftSpoken(s) => s.delta(),
        }
    }
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        match self {
            BaseCotSender::Kos(s) => s.extend(ch, n).await,
            BaseCotSender::SoftSpoken(s) => s.extend(ch, n).await,
        }
    }
}

impl BaseCotReceiver {
    /// Run the base OTs (and SoftSpoken's GGM setup) now; no-op if done.
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        match self {
            BaseCotReceiver::Kos(r) => r.setup(ch).await,
            BaseCotReceiver::SoftSpoken(r) => r.setup(ch).await,
        }
    }

    /// The session's PRG, which Ferret's check and LPN matrix use too.
    pub fn prg(&self) -> PrgKind {
        match self {
            BaseCotReceiver::Kos(r) => r.prg(),
            BaseCotReceiver::SoftSpoken(r) => r.prg(),
        }
    }
}

impl CotReceiver for BaseCotReceiver {
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        match self {
            BaseCotReceiver::Kos(r) => r.extend(ch, n).await,
            BaseCotReceiver::SoftSpoken(r) => r.extend(ch, n).await,
        }
    }
}

/// One regular-noise LPN parameter set: n outputs, secret length k, t noise blocks of
/// 2^`log_block` each (n = t·2^log_block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LpnParams {
    pub n: usize,
    pub k: usize,
    pub t: usize,
    pub log_block: usize,
}

impl LpnParams {
    /// Ferret's main regular-noise set (≥128-bit LPN security per the paper).
    pub const MAIN: LpnParams = LpnParams { n: 10_805_248, k: 589_760, t: 1_319, log_block: 13 };
    /// Ferret's setup regular-noise set, with k raised to 38,400 for 128 bits against the
    /// hybrid attack (see the module docs).
    pub const SETUP: LpnParams = LpnParams { n: 649_728, k: 38_400, t: 1_269, log_block: 9 };
    /// The smallest set: n = 2^18, for first demands up to its net output of 223,872 such as
    /// the protocol's preprocessing when the request is revealed whole (200,000). k is the
    /// smallest multiple of 256 at ≥ 128 bits per the LPN estimator of Yu, Yang, Wang et al.
    /// (see the module docs), as for the other small sets.
    pub const SMALL_256K: LpnParams = LpnParams { n: 262_144, k: 33_536, t: 512, log_block: 9 };
    /// n = 327,680 (net 287,744): preprocessing with a request of up to ≈1 KB proven.
    pub const SMALL_320K: LpnParams = LpnParams { n: 327_680, k: 34_048, t: 640, log_block: 9 };
    /// n = 393,216 (net 351,872).
    pub const SMALL_384K: LpnParams = LpnParams { n: 393_216, k: 34_304, t: 768, log_block: 9 };
    /// n = 458,752 (net 412,800 with the next set's base COTs kept): a TLS 1.3 session's
    /// preprocessing (its HKDF chain with the request's key hidden, and a 1 KB request's
    /// keystream proof, [`crate::cost::derivation_cots`]).
    pub const SMALL_448K: LpnParams = LpnParams { n: 458_752, k: 35_328, t: 896, log_block: 9 };
    /// n = 524,288 (net 478,336); larger first demands bootstrap [`LpnParams::SETUP`].
    pub const SMALL_512K: LpnParams = LpnParams { n: 524_288, k: 36_608, t: 1_024, log_block: 9 };
    /// n = 2^21 (net 1,958,784), between setup and main: ≈0.74 bits per net COT where setup
    /// costs 2.4, for the ≈1M-COT demands of a proof of a redacted response that main would
    /// overshoot tenfold. k is the smallest multiple of 256 at ≥ 128 bits, as for the small sets.
    pub const MID_2M: LpnParams = LpnParams { n: 2_097_152, k: 126_976, t: 1_024, log_block: 11 };
    /// The small sets, smallest first ([`FerretConfig::small`]): together with the setup set
    /// they keep a fresh session of any size within ≈7.4 bits per COT.
    pub const SMALL_SETS: &'static [LpnParams] = &[
        LpnParams::SMALL_256K,
        LpnParams::SMALL_320K,
        LpnParams::SMALL_384K,
        LpnParams::SMALL_448K,
        LpnParams::SMALL_512K,
    ];

    /// Base COTs one iteration consumes: k + t·h + 128.
    pub const fn base_cots(&self) -> usize {
        self.k + self.t * self.log_block + CHECK_COTS
    }

    /// Net new correlations per iteration when its base COTs are reserved for the next one.
    pub const fn net_output(&self) -> usize {
        self.n.saturating_sub(self.base_cots())
    }

    /// Bytes on the wire for one iteration (both directions).
    pub const fn iteration_bytes(&self) -> usize {
        let h = self.log_block;
        16 // LPN seed
            + self.t * h * 16 // half trees
            + 32 + 32 + 16 // check
    }

    fn validate(&self) -> Result<(), FerretConfigError> {
        let bad = |why| Err(FerretConfigError::InvalidParams { params: *self, why });
        if self.log_block == 0 || self.log_block > 24 {
            return bad("block size must be 2^1 ..= 2^24");
        }
        if self.t == 0 || self.t.checked_shl(self.log_block as u32) != Some(self.n) || self.t > (1 << 20) {
            return bad("n must equal t·2^log_block (t ≤ 2^20)");
        }
        if self.k < lpn::D || self.k > u32::MAX as usize {
            return bad("k must be at least the column weight 10");
        }
        if self.n > MAX_EXTEND || self.n <= 2 * self.base_cots() {
            return bad("n must exceed twice the base COTs and be ≤ MAX_EXTEND");
        }
        Ok(())
    }
}

/// Which parameter sets to use and when to bypass LPN entirely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FerretConfig {
    /// Parameter sets, smallest first, bootstrapped from the base extension instead of
    /// `setup` when one iteration of one of them covers the demand that starts LPN (the
    /// smallest such).
    pub small: &'static [LpnParams],
    /// Parameter set bootstrapped from the base extension and used for moderate demand.
    pub setup: LpnParams,
    /// Parameter sets between setup and main, smallest first: each is used for a shortfall it
    /// covers with ≥ 25% fewer bytes than the smaller sets (module docs, "Small-session
    /// strategy").
    pub mid: &'static [LpnParams],
    /// Large parameter set used once a demand exceeds one setup iteration (None: never).
    pub main: Option<LpnParams>,
    /// Serve demands straight from the base extension (SoftSpokenOT or KOS) while the
    /// session's total stays at or below this.
    pub direct_limit: usize,
}

/// Direct-serving threshold for a KOS bootstrap, just below the measured byte crossover
/// (`examples/ferret_bench.rs`): bootstrapping the small set costs 694,448 B (KOS for its
/// 38,272 base COTs + one 73,824 B iteration), KOS ≈16.2 B per COT, so KOS is cheaper on the
/// wire up to ≈43k COTs.
pub(crate) const DEFAULT_KOS_DIRECT_LIMIT: usize = 43_000;

/// Direct-serving threshold for the default SoftSpokenOT (k = 6) bootstrap, at the measured
/// upload crossover (`examples/ferret_bench.rs`): bootstrapping the small set uploads
/// 104,656 B (182,528 B both ways), direct SoftSpokenOT ≈2.65 B per COT (all upload), so up to
/// ≈38k direct serving uploads no more and is cheaper in total bytes and time; beyond it the
/// bootstrap wins on upload (the scarce direction for a prover), from ≈67k on total bytes.
pub(crate) const DEFAULT_DIRECT_LIMIT: usize = 38_000;

impl Default for FerretConfig {
    /// Parameters for the default SoftSpokenOT bootstrap.
    fn default() -> Self {
        FerretConfig {
            small: LpnParams::SMALL_SETS,
            setup: LpnParams::SETUP,
            mid: &[LpnParams::MID_2M],
            main: Some(LpnParams::MAIN),
            direct_limit: DEFAULT_DIRECT_LIMIT,
        }
    }
}

impl FerretConfig {
    /// Parameters tuned for a KOS bootstrap (only the direct-serving threshold differs).
    pub fn for_kos() -> Self {
        FerretConfig { direct_limit: DEFAULT_KOS_DIRECT_LIMIT, ..Self::default() }
    }
}

impl FerretConfig {
    pub(crate) fn validate(&self) -> Result<(), FerretConfigError> {
        for p in self.ladder() {
            p.validate()?;
        }
        Ok(())
    }

    /// The parameter sets from small to large.
    fn ladder(&self) -> Vec<LpnParams> {
        let mut sets = self.small.to_vec();
        sets.push(self.setup);
        sets.extend_from_slice(self.mid);
        sets.extend(self.main);
        sets
    }

    /// The mid sets and main: the sets a shortfall moves up to only for fewer bytes.
    fn is_large(&self, p: &LpnParams) -> bool {
        self.mid.contains(p) || self.main == Some(*p)
    }
}

/// A parameter set that the implementation cannot run.
#[derive(Debug, thiserror::Error)]
pub enum FerretConfigError {
    #[error("invalid LPN parameters {params:?}: {why}")]
    InvalidParams { params: LpnParams, why: &'static str },
}

/// What to do next for a demand of `n` (identical on both sides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Direct,
    /// Fetch the base COTs of this set's first iteration from the base extension.
    Bootstrap(LpnParams),
    Iterate(LpnParams),
    Serve,
}

/// Shared deterministic bookkeeping of both sides.
#[derive(Clone, Debug)]
struct Planner {
    config: FerretConfig,
    bootstrapped: bool,
    /// Position in [`FerretConfig::ladder`] of the largest set run so far: no decision reads
    /// it (the planner may step back down to smaller sets), only the tests that check which
    /// sets a session climbed to.
    #[cfg(test)]
    active: usize,
    reserve: usize,
    direct_used: usize,
    iterations: u64,
}

impl Planner {
    fn new(config: FerretConfig) -> Self {
        Planner {
            config,
            bootstrapped: false,
            #[cfg(test)]
            active: 0,
            reserve: 0,
            direct_used: 0,
            iterations: 0,
        }
    }

    fn next(&self, available: usize, n: usize) -> Step {
        let cfg = &self.config;
        if !self.bootstrapped {
            if self.direct_used + n <= cfg.direct_limit {
                return Step::Direct;
            }
            // the small set only when one iteration of it covers this demand: otherwise its
            // iterations would cost more bytes per COT than the setup set's
            let first =
                cfg.small.iter().find(|s| s.n.saturating_sub(self.keeps(**s)) >= n).copied().unwrap_or(cfg.setup);
            return Step::Bootstrap(first);
        }
        // The reserve is what iterations make room for; a demand may take part of it as long
        // as the smallest set can still start (a small last demand then needs no iteration,
        // and a larger one after it starts the smaller sets first).
        if available >= n + self.floor() {
            return Step::Serve;
        }
        // Among the sets the buffer can start: the smallest of the small sets and setup whose
        // one iteration covers the shortfall (a session's last shortfall should not make a
        // large overshoot), else the largest of them, which cost about the same bytes per COT,
        // so fewer, larger iterations win (less per-iteration work and fewer round trips).
        // Then each larger set (the mid sets, then main) in turn instead, when covering the
        // shortfall with the set chosen so far would cost ≥ 25% more bytes than with it (a
        // larger set overshoots the demand more, and its base COTs become the reserve). With
        // the default sets: setup iterations up to ≈1.2M in one demand; 2M-set iterations for
        // shortfalls of ≈0.5–2.5M when the buffer holds their base COTs; main beyond.
        let short = |p: &LpnParams| (n + self.reserve.max(p.base_cots())).saturating_sub(available);
        let bytes = |p: LpnParams| short(&p).div_ceil(p.net_output().max(1)).saturating_mul(p.iteration_bytes());
        let ladder = cfg.ladder();
        let startable = |p: &&LpnParams| available >= p.base_cots();
        let small: Vec<LpnParams> = ladder.iter().filter(|p| !cfg.is_large(p)).filter(startable).copied().collect();
        let mut set = small.iter().find(|p| short(p) <= p.net_output()).or(small.last()).copied();
        for &p in ladder.iter().filter(|p| cfg.is_large(p)).filter(startable) {
            set = match set {
                Some(c) if bytes(c).saturating_mul(4) <= bytes(p).saturating_mul(5) => Some(c),
                _ => Some(p),
            };
        }
        // `None` is unreachable: the buffer always holds the smallest set's base COTs (a serve
        // leaves them, an iteration adds to them); iterating setup then fails cleanly
        Step::Iterate(set.unwrap_or(cfg.setup))
    }

    fn done(&mut self, step: Step, n: usize) {
        match step {
            Step::Direct => self.direct_used += n,
            Step::Bootstrap(p) => {
                self.bootstrapped = true;
                self.reserve = self.keeps(p);
                #[cfg(test)]
                {
                    self.active = self.position(p);
                }
            }
            Step::Iterate(p) => {
                self.iterations += 1;
                #[cfg(test)]
                {
                    self.active = self.active.max(self.position(p));
                }
                self.reserve = self.reserve.max(self.keeps(p));
            }
            Step::Serve => {}
        }
    }

    /// What the buffer keeps back once `p` has run: the base COTs of `p` and, below the large
    /// sets, of the next set up the ladder, so that a later shortfall can start either (a
    /// session that has needed setup can step up to the 2M set without more setup iterations
    /// first). Main is started only when the buffer happens to hold its base COTs.
    fn keeps(&self, p: LpnParams) -> usize {
        if self.config.is_large(&p) {
            return p.base_cots();
        }
        let ladder = self.config.ladder();
        let next = ladder.get(self.position(p) + 1).filter(|q| Some(**q) != self.config.main);
        p.base_cots().max(next.map_or(0, LpnParams::base_cots))
    }

    /// The fewest base COTs any set needs to start.
    fn floor(&self) -> usize {
        self.config.ladder().iter().map(LpnParams::base_cots).min().unwrap_or(0)
    }

    fn position(&self, p: LpnParams) -> usize {
        let ladder = self.config.ladder();
        ladder.iter().rposition(|&q| q == p).unwrap_or(self.config.small.len())
    }

    /// Tweak prefix unique to this iteration within the session.
    fn tweak_base(&self) -> u128 {
        ((self.iterations + 1) as u128) << 64
    }
}

/// Start an iteration in the buffer `buf` (unused part `buf[pos..]`): copy the next `r`
/// entries (the iteration's base COTs) into `base` and wipe them there, move the `left`
/// leftovers after them to the front, and size `buf` to `left + n` so that `buf[left..]` takes
/// the n new outputs. The allocation is reused across iterations (no fresh pages to fault in,
/// no n-sized copy); `buf[left..]` holds stale data that the iteration overwrites completely,
/// and anything cut off by the resize is wiped first. When the allocation is too small (the
/// first iteration of a larger set, or after [`serve`] handed the buffer out), a fresh zeroed
/// one is taken instead of growing it: its pages are then faulted in by the iteration's own
/// writes rather than written once more by the resize. Returns `left`.
fn make_room<T: Copy + Default + Zeroize>(buf: &mut Vec<T>, pos: usize, r: usize, n: usize, base: &mut Vec<T>) -> usize
where
    [T]: Zeroize,
{
    base.zeroize();
    base.clear();
    base.extend_from_slice(&buf[pos..pos + r]);
    buf[pos..pos + r].zeroize();
    let left = buf.len() - pos - r;
    let new_len = left + n;
    if new_len > buf.capacity() {
        let mut grown = vec![T::default(); new_len];
        grown[..left].copy_from_slice(&buf[pos + r..]);
        buf.zeroize();
        *buf = grown;
        return left;
    }
    buf.copy_within(pos + r.., 0);
    if buf.len() > new_len {
        buf[new_len..].zeroize();
    }
    buf.resize(new_len, T::default());
    left
}

/// Serve the `n` entries `buf[pos..pos + n]` and return them with the buffer's new cursor.
/// A take is copied out and wiped in place, unless it is nearly the whole buffer (everything
/// else, served or not, at most n/8): then the allocation itself goes to the caller (at most
/// 12.5% larger than its contents) and a copy of the small rest stays, which spares copying,
/// wiping and faulting in n entries. Not for takes of a mere half: the next iteration would
/// then need a fresh allocation instead of reusing this one.
fn serve<T: Copy + Zeroize>(buf: &mut Vec<T>, pos: usize, n: usize) -> (Vec<T>, usize)
where
    [T]: Zeroize,
{
    let end = pos + n;
    if 8 * (buf.len() - n) > n {
        let out = buf[pos..end].to_vec();
        buf[pos..end].zeroize();
        return (out, end);
    }
    let rest = buf[end..].to_vec();
    buf[end..].zeroize();
    let mut out = core::mem::replace(buf, rest);
    out.truncate(end);
    // `out[..pos]` was served before and is wiped already
    out.drain(..pos);
    (out, 0)
}

/// Verifier side of Ferret: COT sender holding Δ.
pub struct FerretSender {
    base: BaseCotSender,
    planner: Planner,
    prg: FixedKeyAes,
    /// Buffered keys; `keys[pos..]` are unused, `keys[..pos]` are wiped. The allocation is
    /// kept across iterations (see [`make_room`]) unless a take of nearly all of it hands it
    /// out ([`serve`]).
    keys: Vec<u128>,
    pos: usize,
    /// The current iteration's base keys (reused allocation, wiped after use).
    base_keys: Vec<u128>,
    poisoned: bool,
}

impl Default for FerretSender {
    fn default() -> Self {
        Self::new()
    }
}

impl FerretSender {
    /// Fresh random Δ, default parameters, bootstrapped from SoftSpokenOT with its default k.
    pub fn new() -> Self {
        Self::with_prg(PrgKind::default())
    }

    /// As [`FerretSender::new`], with the session's PRG (must equal the prover's).
    pub fn with_prg(prg: PrgKind) -> Self {
        let base = SoftSpokenSender::new().with_prg(prg).expect("not set up yet");
        Self::from_base(base, FerretConfig::default()).expect("default config is valid")
    }

    /// Wrap a KOS sender (its Δ and session id are used) with the given parameters.
    pub fn from_kos(kos: KosSender, config: FerretConfig) -> Result<Self, FerretConfigError> {
        Self::from_base(kos, config)
    }

    /// Wrap a SoftSpokenOT sender (its Δ, k and session id are used).
    pub fn from_softspoken(ss: SoftSpokenSender, config: FerretConfig) -> Result<Self, FerretConfigError> {
        Self::from_base(ss, config)
    }

    /// Wrap any base extension (its Δ and session id are used) with the given parameters.
    pub(crate) fn from_base(base: impl Into<BaseCotSender>, config: FerretConfig) -> Result<Self, FerretConfigError> {
        config.validate()?;
        Ok(FerretSender {
            base: base.into(),
            planner: Planner::new(config),
            prg: FixedKeyAes::new(),
            keys: Vec::new(),
            pos: 0,
            base_keys: Vec::new(),
            poisoned: false,
        })
    }

    /// Run the base extension's base OTs now (no-op if already done).
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        self.base.setup(ch).await
    }

    /// The bootstrap source.
    pub fn base(&self) -> &BaseCotSender {
        &self.base
    }

    pub fn config(&self) -> &FerretConfig {
        &self.planner.config
    }

    /// LPN iterations run so far.
    pub fn iterations(&self) -> u64 {
        self.planner.iterations
    }

    /// Correlations currently buffered (including the reserve for the next iteration).
    pub(crate) fn buffered(&self) -> usize {
        self.keys.len() - self.pos
    }

    async fn iterate<C: Channel>(&mut self, ch: &mut C, p: LpnParams) -> Result<(), CotError> {
        let r = p.base_cots();
        if self.buffered() < r {
            return Err(CotError::Poisoned);
        }
        let left = make_room(&mut self.keys, self.pos, r, p.n, &mut self.base_keys);
        self.pos = 0;
        // layout from here on: the older leftovers first, then the new outputs (the order only
        // has to match the peer's); until the iteration completes, the instance is poisoned
        let base = &self.base_keys;
        let v = &mut self.keys[left..];

        let (k, th) = (p.k, p.t * p.log_block);
        let delta = self.base.delta().0;
        let tweak = self.planner.tweak_base();
        let check = spcot::send(
            ch,
            &self.prg,
            self.base.prg(),
            delta,
            p.t,
            p.log_block,
            &base[k..k + th],
            &base[k + th..],
            tweak,
            v,
        )
        .await?;
        let seed_msg = ch.recv().await?;
        CotError::expect_len("LPN seed", &seed_msg, 16)?;
        let mut lpn_seed = [0u8; 16];
        lpn_seed.copy_from_slice(&seed_msg);

        // The LPN encoding runs while the prover's check opening travels: it needs nothing
        // from it, and the outputs wait for it.
        let (mut keys, base) = (std::mem::take(&mut self.keys), std::mem::take(&mut self.base_keys));
        let prg = self.base.prg();
        let encoding = on_pool(move || {
            lpn::encode_keys(prg, &lpn_seed, &base[..k], &mut keys[left..]);
            // wiped if nobody takes them (the iteration was dropped meanwhile)
            (Zeroizing::new(keys), Zeroizing::new(base))
        });
        let opened = check.finish(ch).await;
        let (mut keys, mut base) = encoding.await.ok_or(CotError::Poisoned)?;
        base.zeroize();
        (self.keys, self.base_keys) = (std::mem::take(&mut *keys), std::mem::take(&mut *base));
        opened
    }

    /// The next `n` buffered keys ([`serve`]).
    fn take(&mut self, n: usize) -> Vec<F128> {
        let (out, pos) = serve(&mut self.keys, self.pos, n);
        self.pos = pos;
        // same layout: collected in place
        out.into_iter().map(F128).collect()
    }

    async fn extend_inner<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        loop {
            let step = self.planner.next(self.buffered(), n);
            match step {
                Step::Direct => {
                    let out = self.base.extend(ch, n).await?;
                    self.planner.done(step, n);
                    return Ok(out);
                }
                Step::Bootstrap(p) => {
                    self.keys = self.base.extend(ch, p.base_cots()).await?.into_iter().map(|k| k.0).collect();
                    self.pos = 0;
                }
                Step::Iterate(p) => self.iterate(ch, p).await?,
                Step::Serve => return Ok(self.take(n)),
            }
            self.planner.done(step, n);
        }
    }
}

impl CotSender for FerretSender {
    fn delta(&self) -> F128 {
        self.base.delta()
    }

    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        check_n(n)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        self.poisoned = true;
        let out = self.extend_inner(ch, n).await?;
        self.poisoned = false;
        Ok(out)
    }
}

impl Drop for FerretSender {
    fn drop(&mut self) {
        self.keys[self.pos..].zeroize();
        self.base_keys.zeroize();
    }
}

/// Prover side of Ferret: COT receiver getting random bits and MACs.
pub struct FerretReceiver {
    base: BaseCotReceiver,
    planner: Planner,
    prg: FixedKeyAes,
    /// Buffered correlations (bits as 0/1 bytes); `bits[pos..]`, `macs[pos..]` are unused,
    /// everything before `pos` is wiped. Allocations are kept across iterations unless a
    /// take of nearly all of them hands them out ([`serve`]).
    bits: Vec<u8>,
    macs: Vec<u128>,
    pos: usize,
    /// The current iteration's base COTs (reused allocations, wiped after use).
    base_bits: Vec<u8>,
    base_macs: Vec<u128>,
    poisoned: bool,
}

impl Default for FerretReceiver {
    fn default() -> Self {
        Self::new()
    }
}

impl FerretReceiver {
    /// Default parameters, bootstrapped from SoftSpokenOT with its default k.
    pub fn new() -> Self {
        Self::with_prg(PrgKind::default())
    }

    /// As [`FerretReceiver::new`], with the session's PRG (must equal the verifier's).
    pub fn with_prg(prg: PrgKind) -> Self {
        let base = SoftSpokenReceiver::new().with_prg(prg).expect("not set up yet");
        Self::from_base(base, FerretConfig::default()).expect("default config is valid")
    }

    /// Wrap a KOS receiver (its session id is used) with the given parameters (must equal the
    /// verifier's).
    pub fn from_kos(kos: KosReceiver, config: FerretConfig) -> Result<Self, FerretConfigError> {
        Self::from_base(kos, config)
    }

    /// Wrap a SoftSpokenOT receiver (its k and session id are used).
    pub fn from_softspoken(ss: SoftSpokenReceiver, config: FerretConfig) -> Result<Self, FerretConfigError> {
        Self::from_base(ss, config)
    }

    /// Wrap any base extension (of the same kind as the verifier's) with the given parameters
    /// (must equal the verifier's).
    pub(crate) fn from_base(base: impl Into<BaseCotReceiver>, config: FerretConfig) -> Result<Self, FerretConfigError> {
        config.validate()?;
        Ok(FerretReceiver {
            base: base.into(),
            planner: Planner::new(config),
            prg: FixedKeyAes::new(),
            bits: Vec::new(),
            macs: Vec::new(),
            pos: 0,
            base_bits: Vec::new(),
            base_macs: Vec::new(),
            poisoned: false,
        })
    }

    /// Run the base extension's base OTs now (no-op if already done).
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        self.base.setup(ch).await
    }

    /// The bootstrap source.
    pub fn base(&self) -> &BaseCotReceiver {
        &self.base
    }

    pub fn config(&self) -> &FerretConfig {
        &self.planner.config
    }

    /// LPN iterations run so far.
    pub fn iterations(&self) -> u64 {
        self.planner.iterations
    }

    /// Correlations currently buffered (including the reserve for the next iteration).
    pub(crate) fn buffered(&self) -> usize {
        self.macs.len() - self.pos
    }

    async fn iterate<C: Channel>(&mut self, ch: &mut C, p: LpnParams) -> Result<(), CotError> {
        let r = p.base_cots();
        if self.buffered() < r {
            return Err(CotError::Poisoned);
        }
        let left = make_room(&mut self.bits, self.pos, r, p.n, &mut self.base_bits);
        let left_m = make_room(&mut self.macs, self.pos, r, p.n, &mut self.base_macs);
        debug_assert_eq!(left, left_m);
        self.pos = 0;
        // leftovers first, then the new outputs (same order as the verifier)
        let (base_u, base_m) = (&self.base_bits, &self.base_macs);
        let e = &mut self.bits[left..];
        let w = &mut self.macs[left..];

        let (k, th) = (p.k, p.t * p.log_block);
        let tweak = self.planner.tweak_base();
        let check = spcot::receive(
            ch,
            &self.prg,
            self.base.prg(),
            p.t,
            p.log_block,
            &base_u[k..k + th],
            &base_m[k..k + th],
            &base_u[k + th..],
            &base_m[k + th..],
            tweak,
            w,
            e,
        )
        .await?;
        let mut lpn_seed = [0u8; 16];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut lpn_seed);
        ch.send(lpn_seed.to_vec()).await?;

        // The LPN encoding runs while the verifier's check hash travels (see the sender's).
        let (mut bits, mut macs) = (std::mem::take(&mut self.bits), std::mem::take(&mut self.macs));
        let (base_u, base_m) = (std::mem::take(&mut self.base_bits), std::mem::take(&mut self.base_macs));
        let prg = self.base.prg();
        let encoding = on_pool(move || {
            lpn::encode_cots(prg, &lpn_seed, &base_u[..k], &base_m[..k], &mut bits[left..], &mut macs[left..]);
            // wiped if nobody takes them (the iteration was dropped meanwhile)
            (Zeroizing::new(bits), Zeroizing::new(macs), Zeroizing::new(base_u), Zeroizing::new(base_m))
        });
        let checked = check.finish(ch).await;
        let (mut bits, mut macs, mut base_u, mut base_m) = encoding.await.ok_or(CotError::Poisoned)?;
        base_u.zeroize();
        base_m.zeroize();
        (self.bits, self.macs) = (std::mem::take(&mut *bits), std::mem::take(&mut *macs));
        (self.base_bits, self.base_macs) = (std::mem::take(&mut *base_u), std::mem::take(&mut *base_m));
        checked
    }

    /// The next `n` buffered COTs ([`serve`]).
    fn take(&mut self, n: usize) -> (Vec<bool>, Vec<F128>) {
        let (bits, pos) = serve(&mut self.bits, self.pos, n);
        let (macs, _) = serve(&mut self.macs, self.pos, n);
        self.pos = pos;
        // same layouts: collected in place
        (bits.into_iter().map(|b| b == 1).collect(), macs.into_iter().map(F128).collect())
    }

    async fn extend_inner<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        loop {
            let step = self.planner.next(self.buffered(), n);
            match step {
                Step::Direct => {
                    let out = self.base.extend(ch, n).await?;
                    self.planner.done(step, n);
                    return Ok(out);
                }
                Step::Bootstrap(p) => {
                    let (b, m) = self.base.extend(ch, p.base_cots()).await?;
                    self.bits = b.into_iter().map(|x| x as u8).collect();
                    self.macs = m.into_iter().map(|x| x.0).collect();
                    self.pos = 0;
                }
                Step::Iterate(p) => self.iterate(ch, p).await?,
                Step::Serve => return Ok(self.take(n)),
            }
            self.planner.done(step, n);
        }
    }
}

impl CotReceiver for FerretReceiver {
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        check_n(n)?;
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        self.poisoned = true;
        let out = self.extend_inner(ch, n).await?;
        self.poisoned = false;
        Ok(out)
    }
}

impl Drop for FerretReceiver {
    fn drop(&mut self) {
        self.bits[self.pos..].zeroize();
        self.macs[self.pos..].zeroize();
        self.base_bits.zeroize();
        self.base_macs.zeroize();
    }
}
