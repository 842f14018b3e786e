//! QuickSilver (Yang–Sarkar–Weng–Wang, CCS 2021) over GF(2) bits and GF(2^128) elements.
//!
//! Gadgets are written once against the [`Backend`] trait and run in lockstep on the prover
//! ([`ProverBackend`]), the verifier ([`VerifierBackend`]) and a cleartext reference evaluator
//! ([`PlainBackend`]). Gadget code is synchronous; the async drivers [`Prover::run`] and
//! [`Verifier::run`] wrap one *batch*:
//!
//! 1. both sides run the gadget closure once in *counting mode* (no MACs, nothing sent) to learn
//!    how many COTs the batch needs, then extend their COT pools by the same amount (a batch
//!    whose shape the caller named and ran before skips this pass: [`Party::expect_shape`]);
//! 2. the prover runs the closure for real, buffering correction bits d = w ⊕ u for every
//!    committed bit, claimed values of opened bits and hashes of their MACs, and the
//!    multiplication triples to check; it sends the buffer;
//! 3. the verifier runs the same closure, consuming the corrections (K_w = K_u ⊕ d·Δ) and
//!    claimed opened values;
//! 4. the verifier sends a fresh uniform challenge χ ∈ GF(2^128); multiplication i gets the
//!    coefficient χ^(i+1); the prover answers with (U, V) =
//!    (Σ χ_i·A0_i + M_r, Σ χ_i·A1_i + r) where r is a fresh random authenticated element built
//!    from 128 COTs (it masks V); the verifier checks Σ χ_i·B_i + K_r = U + V·Δ and the
//!    opening hashes.
//!
//! A *deferred* batch ([`Prover::run_deferred`]) stops after step 3 (the verifier checks its
//! opening hashes on arrival) and its multiplications join the next checked batch's sum, whose
//! χ is drawn after all of them were sent: still one polynomial of degree ≤ n in χ per false
//! constraint, so the same bound holds, and a chain of batches that feed each other opened
//! values (the PRF's A(i) chain) costs one round trip instead of one per batch.
//!
//! The closure therefore must build the same circuit structure in both passes and on both
//! sides (structure must not depend on private values or on opened values). Wires returned by
//! one batch stay valid in later batches (same Δ), and are only trustworthy once the batch that
//! produced them has been accepted. The verifier's closure sees the prover's *claimed* opened
//! values during its pass; they are checked before `run` returns, and `run` returns them only
//! on success. Any error leaves both sides out of step: abort the session.
//!
//! Messages per batch (prover → verifier unless noted): whatever the COT source exchanges,
//! a 32-byte header (counts of commits / openings / assertions and the payload length, which
//! the verifier compares with its own circuit), the payload (correction bits ‖ claimed opened
//! bits ‖ SHA-256 of the opened bits' MACs ‖ SHA-256 of the asserted bits' MACs) in chunks,
//! verifier → prover: 16-byte challenge χ, then the 32-byte answer (U, V).

mod and_rows;
pub mod bytes;
mod check;
mod plain;
mod prover;
mod reserve;
pub(crate) mod sbox;
mod verifier;

#[cfg(test)]
pub(crate) mod tests;
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) use prover::lie;
#[cfg(test)]
pub(crate) use prover::Cheat;

pub(crate) use plain::PlainBackend;
pub use prover::{PBit, PElem, Prover, ProverBackend};
pub use verifier::{VBit, Verifier, VerifierBackend};

use crate::channel::{Channel, ChannelError};
use crate::circuits::Circuit;
use crate::ot::{CotError, CotReceiver, CotSender};
use crate::primitives::field::{FixedCombinations, F128};
use zeroize::Zeroize;

/// Largest single message the engine sends; bigger batch payloads are split.
pub const MAX_MESSAGE: usize = 1 << 20;

/// Largest number of committed bits / opened bits / multiplications in one batch
/// (bounds the verifier's allocations; the caller splits larger work into several batches).
pub(crate) const MAX_BATCH_ITEMS: usize = 1 << 26;

/// Why a proof batch was rejected or could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error("COT error: {0}")]
    Cot(#[from] CotError),
    #[error("malformed proof message: {0}")]
    Malformed(&'static str),
    #[error("batch exceeds the engine limit of {MAX_BATCH_ITEMS} items")]
    BatchTooLarge,
    #[error("QuickSilver multiplication check failed (an AND gate or field constraint is false)")]
    MultiplicationCheckFailed,
    #[error("an opened value does not match its MAC")]
    OpeningMacMismatch,
    #[error("a value asserted equal to a public constant differs from it")]
    ConstantMismatch,
    #[error("the gadget closure built a different circuit in its two passes")]
    NonDeterministicCircuit,
    #[error("the prover had no witness value for a committed bit")]
    MissingWitness,
    #[error("the batch needs more COTs than the pool holds while the COT source is lent out")]
    SourceLent,
    /// The transcript proof's: a hidden byte of the request is CR or LF (the proof of
    /// [`bytes::assert_no_line_breaks`] failed).
    #[error("a hidden byte of the request is a line break (CR or LF)")]
    HiddenLineBreak,
    /// The statements' proof: statement N (from 1) of the plan does not hold for its value
    /// (an output of its claim circuit is 0).
    #[error("statement {0} of the plan does not hold for the hidden value, or the value is not of its form")]
    StatementNotProven(usize),
    /// The statements' proof: a hidden byte inside a string of a stated response's body is a
    /// quote, a backslash or a control byte.
    #[error("a hidden byte inside a string of the stated response's body is a quote, a backslash or a control byte")]
    HiddenNotContent,
}

/// One party's view of the authenticated-value machinery. Implemented by the prover
/// (values + MACs), the verifier (keys) and a cleartext evaluator.
pub trait Backend: Circuit {
    /// An authenticated GF(2^128) element (a GF(2^128)-linear combination of bits).
    type Elem: Copy;

    /// The prover's cleartext value of a bit (`None` on the verifier).
    fn value(&self, a: Self::Bit) -> Option<bool>;
    /// Commit a private bit chosen by the prover (`Some` on the prover, `None` on the verifier).
    /// (Tests name each call's site: the lying prover of `prover::lie` counts them.)
    #[cfg_attr(test, track_caller)]
    fn commit(&mut self, v: Option<bool>) -> Self::Bit;
    /// Open bits: the verifier learns the values (checked against MACs at the end of the batch).
    fn open(&mut self, bits: &[Self::Bit]) -> Vec<bool>;
    /// Assert that bits equal public values (nothing is sent but a MAC hash).
    fn assert_constant(&mut self, bits: &[Self::Bit], expected: &[bool]);

    /// A public GF(2^128) constant.
    fn elem_constant(&self, c: F128) -> Self::Elem;
    /// Σ coeffs_i · bits_i (free).
    fn elem_from_bits(&self, bits: &[Self::Bit], coeffs: &[F128]) -> Self::Elem;
    /// a + b (free).
    fn elem_add(&self, a: Self::Elem, b: Self::Elem) -> Self::Elem;
    /// c · a for public c (free).
    fn elem_scale(&self, a: Self::Elem, c: F128) -> Self::Elem;
    /// The prover's cleartext value (`None` on the verifier).
    fn elem_value(&self, a: Self::Elem) -> Option<F128>;
    /// Constrain a · b = c (one multiplication check).
    fn assert_product(&mut self, a: Self::Elem, b: Self::Elem, c: Self::Elem);

    /// Test-only cheating (a no-op but on the prover): the next private bits opened are
    /// claimed to be `values` (their MACs left honest). Replaces any earlier claim, so a batch
    /// closure may call it in both of its passes.
    #[cfg(test)]
    fn cheat_claim_opens(&mut self, _values: &[bool]) {}
    /// Test-only cheating (a no-op but on the prover): the next committed bit of the real
    /// pass is committed with the wrong value (a false witness).
    #[cfg(test)]
    fn cheat_flip_next_commit(&mut self) {}
    /// Constrain t = s^254 in the AES field (the S-box's inversion, 0 ↦ 0) for bytes given as
    /// bits (bit i = coefficient of x^i): with both embedded in GF(2^128)
    /// ([`crate::zk::sbox::embedding_bases`]), s²·t = s and s·t² = t, two
    /// multiplication checks. The prover and verifier collect the bytes and embed all of a
    /// batch's at once ([`FixedCombinations`]), which is several times cheaper without
    /// a carry-less multiply instruction (wasm).
    fn assert_byte_inverse(&mut self, s: &[Self::Bit; 8], t: &[Self::Bit; 8]) {
        let (lin, sq) = crate::zk::sbox::embedding_bases();
        let es = self.elem_from_bits(s, lin);
        let es2 = self.elem_from_bits(s, sq);
        let et = self.elem_from_bits(t, lin);
        let et2 = self.elem_from_bits(t, sq);
        self.assert_product(es2, et, es);
        self.assert_product(es, et2, et);
    }
}

/// Bytes of [`Backend::assert_byte_inverse`] awaiting their embeddings, as (s, t) pairs of
/// per-bit MACs (prover) or keys (verifier), with the prover's byte values.
#[derive(Default)]
pub(crate) struct PendingInverses {
    /// [s row, t row] per constraint pair: the 8 bits' MACs or keys.
    rows: Vec<[F128; 8]>,
    /// [s, t] per pair (prover only).
    bytes: Vec<u8>,
}

impl PendingInverses {
    /// Pairs embedded together: enough for the bit-sliced path to fill its 128-row blocks on
    /// every thread, few enough (1 MiB of rows) that the buffer is reused, not regrown, batch
    /// after batch (wasm memory never shrinks, so regrown buffers fragment it). Both sides
    /// flush at the same points, so their product triples stay in the same order.
    const FLUSH_PAIRS: usize = 4096;

    /// Room for up to `pairs` more pairs (the batch's counted products / 2).
    pub(crate) fn reserve(&mut self, pairs: usize, with_bytes: bool) {
        let rows = 2 * pairs.min(Self::FLUSH_PAIRS);
        self.rows.reserve_exact(rows.saturating_sub(self.rows.len()));
        if with_bytes {
            self.bytes.reserve_exact(rows.saturating_sub(self.bytes.len()));
        }
    }

    /// Whether it is time to embed the pending pairs.
    pub(crate) fn is_full(&self) -> bool {
        self.rows.len() >= 2 * Self::FLUSH_PAIRS
    }

    pub(crate) fn push(&mut self, s: [F128; 8], t: [F128; 8], bytes: Option<(u8, u8)>) {
        self.rows.push(s);
        self.rows.push(t);
        if let Some((s, t)) = bytes {
            self.bytes.push(s);
            self.bytes.push(t);
        }
    }

    /// The embeddings of every pending pair, [[s, s²], [t, t²]] (MACs or keys), and the byte
    /// values; then empty (wiped, capacity kept). The caller wipes the results.
    pub(crate) fn take_embedded(&mut self) -> (Vec<[F128; 2]>, Vec<u8>) {
        static EMBED: std::sync::OnceLock<FixedCombinations<2>> = std::sync::OnceLock::new();
        let embed = EMBED.get_or_init(|| {
            let (lin, sq) = crate::zk::sbox::embedding_bases();
            FixedCombinations::new([*lin, *sq])
        });
        let mut out = vec![[F128::ZERO; 2]; self.rows.len()];
        embed.combine(&self.rows, &mut out);
        let bytes = self.bytes.clone();
        self.clear();
        (out, bytes)
    }

    pub(crate) fn clear(&mut self) {
        self.rows.zeroize();
        self.rows.clear();
        self.bytes.zeroize();
        self.bytes.clear();
    }
}

impl Drop for PendingInverses {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Either side's batch driver ([`Prover`] or [`Verifier`]), so that protocol code can be
/// written once over both parties: `async fn f<P: Party<C>, C: Channel>(party: &mut P, …)`.
#[allow(async_fn_in_trait)]
pub trait Party<C: Channel> {
    type Backend: Backend;
    /// Same as [`Prover::run`] / [`Verifier::run`].
    async fn run_batch<T>(&mut self, ch: &mut C, f: &mut dyn FnMut(&mut Self::Backend) -> T) -> Result<T, ProofError>;
    /// Same as [`Prover::run_deferred`] / [`Verifier::run_deferred`].
    async fn run_batch_deferred<T>(
        &mut self,
        ch: &mut C,
        f: &mut dyn FnMut(&mut Self::Backend) -> T,
    ) -> Result<T, ProofError>;
    /// Whether a deferred batch still waits for a checked one.
    fn check_pending(&self) -> bool;
    /// Same as [`Prover::preprocess`] / [`Verifier::preprocess`].
    async fn preprocess(&mut self, ch: &mut C, n: usize) -> Result<(), ProofError>;
    /// Same as [`Prover::expect_shape`] / [`Verifier::expect_shape`].
    fn expect_shape(&mut self, key: u64);
    /// A batch that is checked only if nothing follows it (`more` false): batches of the same
    /// proof that follow it end with a checked one, whose check covers this batch too, so the
    /// prover goes on without waiting for a challenge.
    async fn run_batch_unless_more<T>(
        &mut self,
        ch: &mut C,
        more: bool,
        f: &mut dyn FnMut(&mut Self::Backend) -> T,
    ) -> Result<T, ProofError> {
        if more {
            self.run_batch_deferred(ch, f).await
        } else {
            self.run_batch(ch, f).await
        }
    }
    /// Batch `k` (from 0) of a run of `total` in which only every `every`-th batch and the last
    /// wait for their multiplication check and the others are deferred into it, so the prover
    /// runs ahead of the verifier for up to `every` batches.
    async fn run_batch_every<T>(
        &mut self,
        ch: &mut C,
        k: usize,
        total: usize,
        every: usize,
        f: &mut dyn FnMut(&mut Self::Backend) -> T,
    ) -> Result<T, ProofError> {
        if (k + 1).is_multiple_of(every.max(1)) || k + 1 >= total {
            self.run_batch(ch, f).await
        } else {
            self.run_batch_deferred(ch, f).await
        }
    }
}

impl<R: CotReceiver, C: Channel> Party<C> for Prover<R> {
    type Backend = ProverBackend;
    async fn run_batch<T>(&mut self, ch: &mut C, f: &mut dyn FnMut(&mut ProverBackend) -> T) -> Result<T, ProofError> {
        self.run(ch, f).await
    }
    async fn run_batch_deferred<T>(
        &mut self,
        ch: &mut C,
        f: &mut dyn FnMut(&mut ProverBackend) -> T,
    ) -> Result<T, ProofError> {
        self.run_deferred(ch, f).await
    }
    fn check_pending(&self) -> bool {
        Prover::check_pending(self)
    }
    async fn preprocess(&mut self, ch: &mut C, n: usize) -> Result<(), ProofError> {
        Prover::preprocess(self, ch, n).await
    }
    fn expect_shape(&mut self, key: u64) {
        Prover::expect_shape(self, key)
    }
}

impl<S: CotSender, C: Channel> Party<C> for Verifier<S> {
    type Backend = VerifierBackend;
    async fn run_batch<T>(
        &mut self,
        ch: &mut C,
        f: &mut dyn FnMut(&mut VerifierBackend) -> T,
    ) -> Result<T, ProofError> {
        self.run(ch, f).await
    }
    async fn run_batch_deferred<T>(
        &mut self,
        ch: &mut C,
        f: &mut dyn FnMut(&mut VerifierBackend) -> T,
    ) -> Result<T, ProofError> {
        self.run_deferred(ch, f).await
    }
    fn check_pending(&self) -> bool {
        Verifier::check_pending(self)
    }
    async fn preprocess(&mut self, ch: &mut C, n: usize) -> Result<(), ProofError> {
        Verifier::preprocess(self, ch, n).await
    }
    fn expect_shape(&mut self, key: u64) {
        Verifier::expect_shape(self, key)
    }
}

/// The counts of batch shapes the caller named ([`Party::expect_shape`]), so that a batch of a
/// shape run before skips its counting pass, which costs about what evaluating the circuit
/// without MACs costs (≈15% of a keystream proof). Both sides name the same shapes at the same
/// batches. The real pass's counts are still compared with the cached ones, so a key reused
/// for a circuit of another shape fails the batch ([`ProofError::NonDeterministicCircuit`], or
/// a header mismatch on the verifier); it cannot make anything pass.
#[derive(Default)]
pub(crate) struct ShapeCache {
    next: Option<u64>,
    known: Vec<(u64, BatchStats)>,
}

impl ShapeCache {
    /// Shapes remembered at most (forgotten all at once beyond it).
    const MAX: usize = 64;

    /// The next batch has the shape `key`.
    pub(crate) fn expect(&mut self, key: u64) {
        self.next = Some(key);
    }

    /// The next batch's shape key and counts: remembered ones if that shape ran before, else
    /// those of `count` (the counting pass).
    pub(crate) fn counts(&mut self, count: impl FnOnce() -> BatchStats) -> (Option<u64>, BatchStats) {
        let key = self.next.take();
        let known = key.and_then(|k| self.known.iter().find(|(x, _)| *x == k).map(|(_, s)| *s));
        (key, known.unwrap_or_else(count))
    }

    /// Remember a batch's counts under its key (after its real pass matched them).
    pub(crate) fn remember(&mut self, key: Option<u64>, stats: BatchStats) {
        let Some(key) = key else { return };
        if self.known.iter().any(|(x, _)| *x == key) {
            return;
        }
        if self.known.len() >= Self::MAX {
            self.known.clear();
        }
        self.known.push((key, stats));
    }
}

/// Circuit size counters of one batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Committed bits (AND outputs + witnesses + inputs).
    pub commits: usize,
    /// AND gates with two private inputs.
    pub and_gates: usize,
    /// GF(2^128) product constraints.
    pub products: usize,
    /// Opened private bits.
    pub opened: usize,
    /// Private bits asserted equal to constants.
    pub asserted: usize,
}

/// Number of COTs a batch consumes: its commitments plus 128 for the check mask.
pub(crate) fn cots_needed(stats: &BatchStats) -> usize {
    stats.commits + 128
}

/// Pack bits LSB-first into bytes.
pub(crate) fn pack_bits(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, b) in bits.iter().enumerate() {
        out[i / 8] |= (*b as u8) << (i % 8);
    }
    out
}

/// Shape header of a batch payload: three u64 counts, little endian.
pub(crate) fn encode_header(stats: &BatchStats, total_len: usize) -> Vec<u8> {
    let mut h = Vec::with_capacity(32);
    for v in [stats.commits, stats.opened, stats.asserted, total_len] {
        h.extend_from_slice(&(v as u64).to_le_bytes());
    }
    h
}

/// Payload length: corrections, opened values, two 32-byte MAC hashes.
pub(crate) fn payload_len(stats: &BatchStats) -> usize {
    stats.commits.div_ceil(8) + stats.opened.div_ceil(8) + 64
}
