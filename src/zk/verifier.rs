//! Verifier side: keys K_x (with M_x = K_x ⊕ x·Δ on the prover) and the async batch driver.

use crate::circuits::{Circuit, Gates};
use crate::zk::sbox::sbox_field;
use rand::RngCore;
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use super::and_rows::AndRows;
use super::check::{verifier_product_sums, Challenge};
use super::prover::{check_limits, with_macs};
use super::reserve::Reserve;
use super::{cots_needed, encode_header, payload_len, Backend, BatchStats, PendingInverses, ProofError, ShapeCache};
use crate::channel::Channel;
use crate::ot::CotSender;
use crate::primitives::field::{Wide, F128};

/// Verifier's authenticated bit: its key. Public constants c carry K = c·Δ.
#[derive(Clone, Copy, Debug, Default)]
pub struct VBit {
    pub(crate) k: F128,
    pub(crate) public: bool,
}

/// The verifier's gadget backend: keys, corrections consumed from the prover's batch payload.
pub struct VerifierBackend {
    delta: F128,
    counting: bool,
    pool_keys: Vec<F128>,
    cursor: usize,
    corrections: Vec<u8>,
    correction_cursor: usize,
    open_values: Vec<u8>,
    open_cursor: usize,
    open_hash: Sha256,
    const_hash: Sha256,
    and_rows: AndRows,
    product_triples: Vec<[F128; 3]>,
    inverses: PendingInverses,
    stats: BatchStats,
    overrun: bool,
    public_mismatch: bool,
}

fn bit_at(bytes: &[u8], i: usize) -> Option<bool> {
    bytes.get(i / 8).map(|b| (b >> (i % 8)) & 1 == 1)
}

impl VerifierBackend {
    fn new(delta: F128) -> Self {
        VerifierBackend {
            delta,
            counting: true,
            pool_keys: Vec::new(),
            cursor: 0,
            corrections: Vec::new(),
            correction_cursor: 0,
            open_values: Vec::new(),
            open_cursor: 0,
            open_hash: Sha256::new(),
            const_hash: Sha256::new(),
            and_rows: AndRows::default(),
            product_triples: Vec::new(),
            inverses: PendingInverses::default(),
            stats: BatchStats::default(),
            overrun: false,
            public_mismatch: false,
        }
    }

    /// Counters of the batch being evaluated.
    pub fn stats(&self) -> BatchStats {
        self.stats
    }

    fn reset_batch(&mut self, counting: bool) {
        self.counting = counting;
        self.corrections.clear();
        self.correction_cursor = 0;
        self.open_values.clear();
        self.open_cursor = 0;
        self.open_hash = Sha256::new();
        self.const_hash = Sha256::new();
        self.stats = BatchStats::default();
        self.overrun = false;
        self.public_mismatch = false;
        self.inverses.clear();
    }

    /// The verifier's side of the prover's `flush_inverses`: the same triples on keys.
    fn flush_inverses(&mut self) {
        let (mut keys, _) = self.inverses.take_embedded();
        for k in keys.chunks_exact(2) {
            let ([ks, ks2], [kt, kt2]) = (k[0], k[1]);
            self.product_triples.push([ks2, kt, ks]);
            self.product_triples.push([ks, kt2, kt]);
        }
        keys.zeroize();
    }

    fn take_key(&mut self) -> F128 {
        match self.pool_keys.get(self.cursor) {
            Some(k) => {
                self.cursor += 1;
                *k
            }
            None => {
                self.overrun = true;
                F128::ZERO
            }
        }
    }

    fn random_elem_key(&mut self) -> F128 {
        let mut k = Wide::ZERO;
        for i in 0..128 {
            let key = self.take_key();
            k ^= key.mul_wide(F128::x_pow(i));
        }
        k.reduce()
    }
}

/// Δ and the keys, with Δ, open every MAC of the session: wiped when the verifier goes.
impl Drop for VerifierBackend {
    fn drop(&mut self) {
        self.delta.zeroize();
        self.pool_keys.zeroize();
        self.product_triples.zeroize();
    }
}

impl Gates for VerifierBackend {
    type Bit = VBit;

    #[inline]
    fn xor(&self, a: VBit, b: VBit) -> VBit {
        VBit { k: a.k ^ b.k, public: a.public & b.public }
    }

    fn and(&mut self, a: VBit, b: VBit) -> VBit {
        if let Some(av) = self.public_value(a) {
            return if av { b } else { self.constant(false) };
        }
        if let Some(bv) = self.public_value(b) {
            return if bv { a } else { self.constant(false) };
        }
        let z = self.commit(None);
        self.stats.and_gates += 1;
        if !self.counting {
            self.and_rows.push([a.k, b.k, z.k]);
        }
        z
    }
}

impl Circuit for VerifierBackend {
    #[inline]
    fn constant(&self, v: bool) -> VBit {
        VBit { k: self.delta.select(v), public: true }
    }

    #[inline]
    fn public_value(&self, a: VBit) -> Option<bool> {
        if a.public {
            Some(a.k == self.delta)
        } else {
            None
        }
    }

    fn aes_sbox(&mut self, s: &[Self::Bit; 8]) -> [Self::Bit; 8] {
        sbox_field(self, s)
    }
}

impl Backend for VerifierBackend {
    type Elem = F128;

    #[inline]
    fn value(&self, _a: VBit) -> Option<bool> {
        None
    }

    fn commit(&mut self, _v: Option<bool>) -> VBit {
        self.stats.commits += 1;
        if self.counting {
            return VBit { k: F128::ZERO, public: false };
        }
        let k = self.take_key();
        let d = match bit_at(&self.corrections, self.correction_cursor) {
            Some(d) => d,
            None => {
                self.overrun = true;
                false
            }
        };
        self.correction_cursor += 1;
        VBit { k: k ^ self.delta.select(d), public: false }
    }

    fn open(&mut self, bits: &[VBit]) -> Vec<bool> {
        let mut out = Vec::with_capacity(bits.len());
        for b in bits {
            if let Some(v) = self.public_value(*b) {
                out.push(v);
                continue;
            }
            self.stats.opened += 1;
            if self.counting {
                out.push(false);
                continue;
            }
            let v = match bit_at(&self.open_values, self.open_cursor) {
                Some(v) => v,
                None => {
                    self.overrun = true;
                    false
                }
            };
            self.open_cursor += 1;
            let expected_mac = b.k ^ self.delta.select(v);
            self.open_hash.update(expected_mac.to_le_bytes());
            out.push(v);
        }
        out
    }

    fn assert_constant(&mut self, bits: &[VBit], expected: &[bool]) {
        if bits.len() != expected.len() {
            self.public_mismatch = true;
        }
        for (b, e) in bits.iter().zip(expected) {
            if let Some(v) = self.public_value(*b) {
                if v != *e {
                    self.public_mismatch = true;
                }
                continue;
            }
            self.stats.asserted += 1;
            if !self.counting {
                let expected_mac = b.k ^ self.delta.select(*e);
                self.const_hash.update(expected_mac.to_le_bytes());
            }
        }
    }

    #[inline]
    fn elem_constant(&self, c: F128) -> F128 {
        c * self.delta
    }

    fn elem_from_bits(&self, bits: &[VBit], coeffs: &[F128]) -> F128 {
        if self.counting {
            return F128::ZERO;
        }
        with_macs(bits, |b| b.k, |keys| F128::inner_product(coeffs, keys))
    }

    #[inline]
    fn elem_add(&self, a: F128, b: F128) -> F128 {
        a ^ b
    }

    fn elem_scale(&self, a: F128, c: F128) -> F128 {
        if self.counting {
            return F128::ZERO;
        }
        a * c
    }

    fn elem_value(&self, _a: F128) -> Option<F128> {
        None
    }

    fn assert_product(&mut self, a: F128, b: F128, c: F128) {
        self.stats.products += 1;
        if !self.counting {
            self.product_triples.push([a, b, c]);
        }
    }

    fn assert_byte_inverse(&mut self, s: &[VBit; 8], t: &[VBit; 8]) {
        self.stats.products += 2;
        if !self.counting {
            self.inverses.push(s.map(|b| b.k), t.map(|b| b.k), None);
            if self.inverses.is_full() {
                self.flush_inverses();
            }
        }
    }
}

/// The QuickSilver verifier: a COT source (holding Δ) plus the key pool across batches.
pub struct Verifier<S: CotSender> {
    /// `None` while lent out ([`Verifier::lend_source`]).
    cot: Option<S>,
    /// Keys the source made while lent, which the pool takes before asking it for more.
    reserve: Reserve<F128>,
    backend: VerifierBackend,
    shapes: ShapeCache,
}

impl<S: CotSender> Verifier<S> {
    pub fn new(cot: S) -> Self {
        let delta = cot.delta();
        Verifier {
            cot: Some(cot),
            reserve: Reserve::default(),
            backend: VerifierBackend::new(delta),
            shapes: ShapeCache::default(),
        }
    }

    /// Lends the COT source out, as [`Prover::lend_source`](super::Prover::lend_source) does.
    pub(crate) fn lend_source(&mut self) -> Option<S> {
        self.cot.take()
    }

    /// Takes the COT source back with the keys it made while lent, in the chunks it made
    /// them in: batches take them, a chunk at a time, after the pool's and before asking the
    /// source for more.
    pub(crate) fn give_back(&mut self, source: S, made: Vec<Vec<F128>>) {
        self.cot = Some(source);
        self.reserve.append(made);
    }

    /// Verify one batch built by `f` (the same circuit as the prover's closure). Returns `f`'s
    /// output (e.g. opened values) only if every check of the batch passed.
    pub async fn run<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: impl FnMut(&mut VerifierBackend) -> T,
    ) -> Result<T, ProofError> {
        self.run_batch(ch, f, true).await
    }

    /// In lockstep with [`Prover::run_deferred`](super::Prover::run_deferred): checks the
    /// batch's openings and constants now and its multiplications with the next checked batch.
    /// What it returns is only trustworthy once a later [`run`](Self::run) has succeeded.
    pub(crate) async fn run_deferred<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: impl FnMut(&mut VerifierBackend) -> T,
    ) -> Result<T, ProofError> {
        self.run_batch(ch, f, false).await
    }

    /// Whether a deferred batch still waits for its multiplication check.
    pub(crate) fn check_pending(&self) -> bool {
        !self.backend.and_rows.is_empty() || !self.backend.product_triples.is_empty()
    }

    async fn run_batch<C: Channel, T>(
        &mut self,
        ch: &mut C,
        mut f: impl FnMut(&mut VerifierBackend) -> T,
        check: bool,
    ) -> Result<T, ProofError> {
        // Pass 1: count (unless this shape ran before), then extend the pool in lockstep with
        // the prover.
        let backend = &mut self.backend;
        let (shape, counted) = self.shapes.counts(|| {
            backend.reset_batch(true);
            drop(f(&mut *backend));
            backend.stats
        });
        check_limits(&counted)?;
        self.ensure_pool(ch, cots_needed(&counted)).await?;

        // Receive the batch payload; its shape must be exactly what our circuit needs.
        let expected_len = payload_len(&counted);
        let header = ch.recv().await?;
        if header != encode_header(&counted, expected_len) {
            return Err(ProofError::Malformed("batch shape differs from the verifier's circuit"));
        }
        let mut payload = Vec::with_capacity(expected_len);
        while payload.len() < expected_len {
            let chunk = ch.recv().await?;
            if chunk.is_empty() || chunk.len() > expected_len - payload.len() {
                return Err(ProofError::Malformed("batch payload length"));
            }
            payload.extend_from_slice(&chunk);
        }
        let corr_len = counted.commits.div_ceil(8);
        let open_len = counted.opened.div_ceil(8);
        let claimed_open_hash: [u8; 32] = payload[corr_len + open_len..corr_len + open_len + 32]
            .try_into()
            .map_err(|_| ProofError::Malformed("open hash"))?;
        let claimed_const_hash: [u8; 32] =
            payload[corr_len + open_len + 32..].try_into().map_err(|_| ProofError::Malformed("constant hash"))?;

        // Pass 2: evaluate on keys.
        self.backend.reset_batch(false);
        self.backend.corrections = payload[..corr_len].to_vec();
        self.backend.open_values = payload[corr_len..corr_len + open_len].to_vec();
        self.backend.product_triples.reserve(counted.products);
        self.backend.inverses.reserve(counted.products / 2, false);
        let out = f(&mut self.backend);
        if self.backend.stats != counted || self.backend.overrun {
            return Err(ProofError::NonDeterministicCircuit);
        }
        self.shapes.remember(shape, counted);
        self.backend.flush_inverses();
        if !check {
            self.check_openings(&claimed_open_hash, &claimed_const_hash)?;
            self.backend.reset_batch(true);
            return Ok(out);
        }

        // Fresh challenge only now that the prover is bound to the batch (and every deferred one).
        let mut seed = [0u8; 16];
        rand::rng().fill_bytes(&mut seed);
        ch.send(seed.to_vec()).await?;
        let challenge = Challenge::new(seed, self.backend.and_rows.gates(), self.backend.product_triples.len());
        let mask_key = self.backend.random_elem_key();
        if self.backend.overrun {
            return Err(ProofError::NonDeterministicCircuit);
        }
        let (a0, c0) = self.backend.and_rows.take_sum(&challenge);
        let (a1, c1) = verifier_product_sums(&challenge, &self.backend.product_triples);
        let delta = self.backend.delta;
        let w = a0 ^ a1 ^ (delta * (c0 ^ c1)) ^ mask_key;

        let answer = ch.recv().await?;
        if answer.len() != 32 {
            return Err(ProofError::Malformed("check answer length"));
        }
        let mut ub = [0u8; 16];
        let mut vb = [0u8; 16];
        ub.copy_from_slice(&answer[..16]);
        vb.copy_from_slice(&answer[16..]);
        let (u, v) = (F128::from_le_bytes(ub), F128::from_le_bytes(vb));
        let mult_ok = w == u ^ (v * delta);
        self.backend.product_triples.zeroize();
        self.backend.product_triples.clear();
        if !mult_ok {
            self.backend.reset_batch(true);
            return Err(ProofError::MultiplicationCheckFailed);
        }
        self.check_openings(&claimed_open_hash, &claimed_const_hash)?;
        self.backend.reset_batch(true);
        Ok(out)
    }

    /// The batch's opened values and asserted constants against the prover's MAC hashes.
    fn check_openings(
        &mut self,
        claimed_open_hash: &[u8; 32],
        claimed_const_hash: &[u8; 32],
    ) -> Result<(), ProofError> {
        let open_ok = self.backend.open_hash.clone().finalize().as_slice() == claimed_open_hash;
        let const_ok = self.backend.const_hash.clone().finalize().as_slice() == claimed_const_hash
            && !self.backend.public_mismatch;
        if !open_ok {
            self.backend.reset_batch(true);
            return Err(ProofError::OpeningMacMismatch);
        }
        if !const_ok {
            self.backend.reset_batch(true);
            return Err(ProofError::ConstantMismatch);
        }
        Ok(())
    }

    /// The next batch has the shape named `key`, as on the prover
    /// ([`Prover::expect_shape`](super::Prover::expect_shape)): a shape run before skips the
    /// counting pass.
    pub(crate) fn expect_shape(&mut self, key: u64) {
        self.shapes.expect(key);
    }

    /// Generates COTs ahead of the proof, in lockstep with [`Prover::preprocess`](super::Prover::preprocess).
    pub async fn preprocess<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(), ProofError> {
        self.ensure_pool(ch, n).await
    }

    /// Make at least `need` unused keys available. The consumed prefix is only dropped when
    /// the pool has to grow (no shifting of a large preprocessed pool at every batch), a fully
    /// consumed pool is cleared without a memmove, and an empty pool adopts the source's vector.
    async fn ensure_pool<C: Channel>(&mut self, ch: &mut C, need: usize) -> Result<(), ProofError> {
        let mut have = self.backend.pool_keys.len().saturating_sub(self.backend.cursor);
        while have < need {
            let Some(keys) = self.reserve.next() else { break };
            have += keys.len();
            self.add_to_pool(keys);
        }
        if have >= need {
            return Ok(());
        }
        let cot = self.cot.as_mut().ok_or(ProofError::SourceLent)?;
        let keys = cot.extend(ch, need - have).await?;
        if keys.len() != need - have {
            return Err(ProofError::Malformed("COT source returned a wrong count"));
        }
        self.add_to_pool(keys);
        Ok(())
    }

    /// Appends keys to the pool; its consumed prefix is dropped first, and an empty pool
    /// adopts the vector instead of copying it.
    fn add_to_pool(&mut self, keys: Vec<F128>) {
        let b = &mut self.backend;
        let used = b.cursor.min(b.pool_keys.len());
        if used == b.pool_keys.len() {
            b.pool_keys.clear();
        } else {
            b.pool_keys.drain(..used);
        }
        b.cursor = 0;
        if b.pool_keys.is_empty() {
            b.pool_keys = keys;
        } else {
            b.pool_keys.extend(keys);
        }
    }
}
