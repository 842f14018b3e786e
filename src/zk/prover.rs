//! Prover side: authenticated values (x, M_x) and the async batch driver.

use crate::circuits::{Circuit, Gates};
use crate::zk::sbox::sbox_field;
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use super::and_rows::AndRows;
use super::check::{prover_product_sums, Challenge};
use super::reserve::Reserve;
use super::{
    cots_needed, encode_header, pack_bits, payload_len, Backend, BatchStats, PendingInverses, ProofError, ShapeCache,
    MAX_BATCH_ITEMS, MAX_MESSAGE,
};
use crate::channel::Channel;
use crate::ot::CotReceiver;
use crate::primitives::field::{Wide, F128};

/// Prover's authenticated bit: value and MAC M = K ⊕ v·Δ. Public constants carry M = 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct PBit {
    pub(crate) m: F128,
    pub(crate) v: bool,
    pub(crate) public: bool,
}

/// Prover's authenticated GF(2^128) element.
#[derive(Clone, Copy, Debug, Default)]
pub struct PElem {
    pub(crate) v: F128,
    pub(crate) m: F128,
}

/// Test-only fault injection (indices count within the real pass of one batch).
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cheat {
    /// Commit the wrong value for the k-th committed bit (AND outputs, witnesses, inputs).
    pub flip_commit: Option<usize>,
    /// Flip this committed bit as well (two false gates whose errors must not cancel).
    pub flip_commit_too: Option<usize>,
    /// Claim the wrong value for the k-th opened private bit (MAC left honest).
    pub flip_open: Option<usize>,
    /// Corrupt the MAC hashed for the k-th opened private bit (value left honest).
    pub forge_open_mac: Option<usize>,
    /// Add 1 to V in the check answer.
    pub tamper_check: bool,
}

/// The prover's gadget backend: evaluates on cleartext values while building MACs,
/// corrections and multiplication triples.
pub struct ProverBackend {
    counting: bool,
    pool_bits: Vec<bool>,
    pool_macs: Vec<F128>,
    cursor: usize,
    corrections: Vec<bool>,
    open_values: Vec<bool>,
    open_hash: Sha256,
    const_hash: Sha256,
    and_rows: AndRows,
    product_triples: Vec<[F128; 5]>,
    inverses: PendingInverses,
    stats: BatchStats,
    missing_witness: bool,
    #[cfg(test)]
    pub(crate) cheat: Cheat,
    /// [`Backend::cheat_claim_opens`]: values claimed for the next private openings.
    #[cfg(test)]
    claims: std::collections::VecDeque<bool>,
    /// [`Backend::cheat_flip_next_commit`].
    #[cfg(test)]
    flip_next_commit: bool,
}

impl ProverBackend {
    fn new() -> Self {
        ProverBackend {
            counting: true,
            pool_bits: Vec::new(),
            pool_macs: Vec::new(),
            cursor: 0,
            corrections: Vec::new(),
            open_values: Vec::new(),
            open_hash: Sha256::new(),
            const_hash: Sha256::new(),
            and_rows: AndRows::default(),
            product_triples: Vec::new(),
            inverses: PendingInverses::default(),
            stats: BatchStats::default(),
            missing_witness: false,
            #[cfg(test)]
            cheat: Cheat::default(),
            #[cfg(test)]
            claims: Default::default(),
            #[cfg(test)]
            flip_next_commit: false,
        }
    }

    /// Counters of the batch being evaluated.
    pub fn stats(&self) -> BatchStats {
        self.stats
    }

    fn reset_batch(&mut self, counting: bool) {
        self.counting = counting;
        self.corrections.zeroize();
        self.corrections.clear();
        self.open_values.zeroize();
        self.open_values.clear();
        self.open_hash = Sha256::new();
        self.const_hash = Sha256::new();
        self.stats = BatchStats::default();
        self.missing_witness = false;
        self.inverses.clear();
        // a cheat set in the counting pass takes effect where the real pass sets it again
        #[cfg(test)]
        {
            self.flip_next_commit = false;
            self.claims.clear();
        }
    }

    /// Turns the batch's [`Backend::assert_byte_inverse`] pairs into product triples
    /// (embedding every byte at once), in the order they were asserted.
    fn flush_inverses(&mut self) {
        let (lin, sq) = crate::zk::sbox::embedding_bases();
        let (mut macs, mut bytes) = self.inverses.take_embedded();
        let embed = |set: &[F128; 8], v: u8| {
            set.iter().enumerate().fold(F128::ZERO, |acc, (i, c)| acc ^ c.select((v >> i) & 1 == 1))
        };
        for (m, v) in macs.chunks_exact(2).zip(bytes.chunks_exact(2)) {
            let ([ms, ms2], [mt, mt2], s, t) = (m[0], m[1], v[0], v[1]);
            // s²·t = s, then s·t² = t, as [a, M_a, b, M_b, M_c].
            self.product_triples.push([embed(sq, s), ms2, embed(lin, t), mt, ms]);
            self.product_triples.push([embed(lin, s), ms, embed(sq, t), mt2, mt]);
        }
        macs.zeroize();
        bytes.zeroize();
    }

    /// Multiplication triples wait here, across deferred batches, until a checked batch.
    fn clear_triples(&mut self) {
        self.and_rows.clear();
        self.product_triples.zeroize();
        self.product_triples.clear();
    }

    /// Take the next random COT (u, M_u) from the pool.
    fn take_cot(&mut self) -> (bool, F128) {
        match (self.pool_bits.get(self.cursor), self.pool_macs.get(self.cursor)) {
            (Some(u), Some(m)) => {
                self.cursor += 1;
                (*u, *m)
            }
            // Only reachable if the closure built a bigger circuit in its second pass.
            _ => {
                self.missing_witness = true;
                (false, F128::ZERO)
            }
        }
    }

    /// Commits `v` on the next COT: the correction d = v ⊕ u goes to the verifier. Both the
    /// prover's own witnesses ([`Backend::commit`]) and AND outputs come here.
    fn commit_wire(&mut self, v: bool) -> PBit {
        #[cfg(test)]
        let v = if !self.counting
            && ([self.cheat.flip_commit, self.cheat.flip_commit_too].contains(&Some(self.stats.commits))
                || std::mem::take(&mut self.flip_next_commit))
        {
            !v
        } else {
            v
        };
        self.stats.commits += 1;
        if self.counting {
            return PBit { m: F128::ZERO, v, public: false };
        }
        let (u, m) = self.take_cot();
        self.corrections.push(v ^ u);
        PBit { m, v, public: false }
    }

    /// A random authenticated element r = Σ u_i x^i with M_r = Σ M_i x^i (the check mask).
    fn random_elem(&mut self) -> PElem {
        let mut v = 0u128;
        let mut m = Wide::ZERO;
        for i in 0..128 {
            let (u, mac) = self.take_cot();
            v |= (u as u128) << i;
            m ^= mac.mul_wide(F128::x_pow(i));
        }
        PElem { v: F128(v), m: m.reduce() }
    }

    /// Drop the consumed prefix of the pool, wiping it first. A fully consumed pool (the usual
    /// case: batches ask for exactly what they use) is just cleared, keeping its allocation;
    /// otherwise the unused tail moves to the front.
    fn compact_pool(&mut self) {
        let used = self.cursor.min(self.pool_bits.len());
        self.pool_bits[..used].zeroize();
        self.pool_macs[..used].zeroize();
        if used == self.pool_bits.len() {
            self.pool_bits.clear();
            self.pool_macs.clear();
        } else {
            self.pool_bits.drain(..used);
            self.pool_macs.drain(..used);
        }
        self.cursor = 0;
    }
}

impl Drop for ProverBackend {
    fn drop(&mut self) {
        self.pool_bits.zeroize();
        self.pool_macs.zeroize();
        self.corrections.zeroize();
        self.open_values.zeroize();
        self.product_triples.zeroize();
    }
}

impl Gates for ProverBackend {
    type Bit = PBit;

    #[inline]
    fn xor(&self, a: PBit, b: PBit) -> PBit {
        PBit { m: a.m ^ b.m, v: a.v ^ b.v, public: a.public & b.public }
    }

    fn and(&mut self, a: PBit, b: PBit) -> PBit {
        if a.public {
            return if a.v { b } else { self.constant(false) };
        }
        if b.public {
            return if b.v { a } else { self.constant(false) };
        }
        let z = self.commit_wire(a.v & b.v);
        self.stats.and_gates += 1;
        if !self.counting {
            let a1 = b.m.select(a.v) ^ a.m.select(b.v) ^ z.m;
            self.and_rows.push([a.m, b.m, a1]);
        }
        z
    }
}

impl Circuit for ProverBackend {
    #[inline]
    fn constant(&self, v: bool) -> PBit {
        PBit { m: F128::ZERO, v, public: true }
    }

    #[inline]
    fn public_value(&self, a: PBit) -> Option<bool> {
        if a.public {
            Some(a.v)
        } else {
            None
        }
    }

    fn aes_sbox(&mut self, s: &[Self::Bit; 8]) -> [Self::Bit; 8] {
        sbox_field(self, s)
    }
}

impl Backend for ProverBackend {
    type Elem = PElem;

    /// `None` while counting: the circuit's structure may not depend on private values, so
    /// gadgets skip computing witnesses (e.g. S-box inverses) in that pass.
    #[inline]
    fn value(&self, a: PBit) -> Option<bool> {
        (!self.counting).then_some(a.v)
    }

    fn commit(&mut self, v: Option<bool>) -> PBit {
        let v = match v {
            Some(v) => v,
            None => {
                self.missing_witness = true;
                false
            }
        };
        #[cfg(test)]
        let v = v ^ (!self.counting && lie::at_fresh_commit(std::panic::Location::caller()));
        self.commit_wire(v)
    }

    fn open(&mut self, bits: &[PBit]) -> Vec<bool> {
        let mut out = Vec::with_capacity(bits.len());
        for b in bits {
            if b.public {
                out.push(b.v);
                continue;
            }
            #[cfg(test)]
            let (claimed, mac) = {
                let k = self.stats.opened;
                let claimed = if !self.counting && self.cheat.flip_open == Some(k) { !b.v } else { b.v };
                let claimed = if self.counting { claimed } else { self.claims.pop_front().unwrap_or(claimed) };
                let mac = if !self.counting && self.cheat.forge_open_mac == Some(k) { b.m ^ F128::ONE } else { b.m };
                (claimed, mac)
            };
            #[cfg(not(test))]
            let (claimed, mac) = (b.v, b.m);
            self.stats.opened += 1;
            if !self.counting {
                self.open_values.push(claimed);
                self.open_hash.update(mac.to_le_bytes());
            }
            out.push(b.v);
        }
        out
    }

    fn assert_constant(&mut self, bits: &[PBit], expected: &[bool]) {
        for (b, _e) in bits.iter().zip(expected) {
            if b.public {
                continue;
            }
            self.stats.asserted += 1;
            if !self.counting {
                self.const_hash.update(b.m.to_le_bytes());
            }
        }
        // A length mismatch is rejected by the verifier (ConstantMismatch).
    }

    #[inline]
    fn elem_constant(&self, c: F128) -> PElem {
        PElem { v: c, m: F128::ZERO }
    }

    fn elem_from_bits(&self, bits: &[PBit], coeffs: &[F128]) -> PElem {
        if self.counting {
            return PElem::default();
        }
        let mut v = F128::ZERO;
        for (b, c) in bits.iter().zip(coeffs) {
            v ^= c.select(b.v);
        }
        // Public bits carry M = 0, so they drop out of the MAC sum by themselves.
        let m = with_macs(bits, |b| b.m, |macs| F128::inner_product(coeffs, macs));
        PElem { v, m }
    }

    #[inline]
    fn elem_add(&self, a: PElem, b: PElem) -> PElem {
        PElem { v: a.v ^ b.v, m: a.m ^ b.m }
    }

    fn elem_scale(&self, a: PElem, c: F128) -> PElem {
        if self.counting {
            return PElem::default();
        }
        PElem { v: a.v * c, m: a.m * c }
    }

    fn elem_value(&self, a: PElem) -> Option<F128> {
        Some(a.v)
    }

    fn assert_product(&mut self, a: PElem, b: PElem, c: PElem) {
        self.stats.products += 1;
        if !self.counting {
            self.product_triples.push([a.v, a.m, b.v, b.m, c.m]);
        }
    }

    #[cfg(test)]
    fn cheat_claim_opens(&mut self, values: &[bool]) {
        self.claims = values.iter().copied().collect();
    }

    #[cfg(test)]
    fn cheat_flip_next_commit(&mut self) {
        self.flip_next_commit = true;
    }

    fn assert_byte_inverse(&mut self, s: &[PBit; 8], t: &[PBit; 8]) {
        self.stats.products += 2;
        if !self.counting {
            let byte = |x: &[PBit; 8]| x.iter().enumerate().fold(0u8, |acc, (i, b)| acc | ((b.v as u8) << i));
            self.inverses.push(s.map(|b| b.m), t.map(|b| b.m), Some((byte(s), byte(t))));
            if self.inverses.is_full() {
                self.flush_inverses();
            }
        }
    }
}

/// The QuickSilver prover: a COT source plus the backend state (COT pool) across batches.
pub struct Prover<R: CotReceiver> {
    /// `None` while lent out ([`Prover::lend_source`]).
    cot: Option<R>,
    /// COTs the source made while lent, which the pool takes before asking it for more.
    reserve: (Reserve<bool>, Reserve<F128>),
    backend: ProverBackend,
    last_stats: BatchStats,
    max_message: usize,
    shapes: ShapeCache,
}

impl<R: CotReceiver> Prover<R> {
    pub fn new(cot: R) -> Self {
        Prover {
            cot: Some(cot),
            reserve: Default::default(),
            backend: ProverBackend::new(),
            last_stats: BatchStats::default(),
            max_message: MAX_MESSAGE,
            shapes: ShapeCache::default(),
        }
    }

    /// Split batch payloads into messages of at most `n` bytes (default [`MAX_MESSAGE`]).
    /// The verifier accepts any split.
    #[cfg(test)]
    pub(crate) fn set_max_message(&mut self, n: usize) {
        self.max_message = n.max(64);
    }

    /// Circuit counters of the last completed batch.
    #[cfg(test)]
    pub(crate) fn last_stats(&self) -> BatchStats {
        self.last_stats
    }

    /// Lends the COT source out, to make COTs beside other work that uses the pool only
    /// (`crate::mpc::cots_beside`). Until [`Prover::give_back`], a batch that needs more COTs than
    /// the pool holds fails with [`ProofError::SourceLent`]. `None` if it is already out.
    pub(crate) fn lend_source(&mut self) -> Option<R> {
        self.cot.take()
    }

    /// Takes the COT source back with the COTs it made while lent, in the chunks it made
    /// them in (bits and MACs): batches take them, a chunk at a time, after the pool's and
    /// before asking the source for more, as on the verifier.
    pub(crate) fn give_back(&mut self, source: R, made: Vec<(Vec<bool>, Vec<F128>)>) {
        self.cot = Some(source);
        // `beside::make` checked each chunk's bits and MACs against the step's count
        let (bits, macs): (Vec<_>, Vec<_>) = made.into_iter().unzip();
        self.reserve.0.append(bits);
        self.reserve.1.append(macs);
    }

    /// Test access to the fault-injection knobs.
    #[cfg(test)]
    pub(crate) fn cheat_mut(&mut self) -> &mut Cheat {
        &mut self.backend.cheat
    }

    /// Test access to the COT source (e.g. how many COTs it issued).
    #[cfg(test)]
    pub(crate) fn cot(&self) -> &R {
        self.cot.as_ref().expect("the COT source is not lent out")
    }

    /// Prove one batch: `f` is run twice (count, then real) and must build the same circuit
    /// as the verifier's closure. Returns `f`'s output of the real pass.
    pub async fn run<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: impl FnMut(&mut ProverBackend) -> T,
    ) -> Result<T, ProofError> {
        self.run_batch(ch, f, true).await
    }

    /// Like [`run`](Self::run), but without the multiplication check: the batch's triples join
    /// the next checked batch's check (one round trip for several batches). Openings are still
    /// checked by the verifier on arrival; values this batch opens may feed later batches as
    /// public constants, and the proof is only accepted once a checked batch has run.
    pub(crate) async fn run_deferred<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: impl FnMut(&mut ProverBackend) -> T,
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
        mut f: impl FnMut(&mut ProverBackend) -> T,
        check: bool,
    ) -> Result<T, ProofError> {
        // Pass 1: count (unless this shape ran before).
        let backend = &mut self.backend;
        let (shape, counted) = self.shapes.counts(|| {
            backend.reset_batch(true);
            drop(f(&mut *backend));
            backend.stats
        });
        check_limits(&counted)?;
        self.ensure_pool(ch, cots_needed(&counted)).await?;

        // Pass 2: evaluate with MACs.
        self.backend.reset_batch(false);
        self.backend.corrections.reserve(counted.commits);
        self.backend.open_values.reserve(counted.opened);
        self.backend.product_triples.reserve(counted.products);
        self.backend.inverses.reserve(counted.products / 2, true);
        let out = f(&mut self.backend);
        if self.backend.stats != counted {
            return Err(ProofError::NonDeterministicCircuit);
        }
        self.shapes.remember(shape, counted);
        if self.backend.missing_witness {
            return Err(ProofError::MissingWitness);
        }

        // Send corrections, opened values and MAC hashes.
        let mut payload = pack_bits(&self.backend.corrections);
        payload.extend_from_slice(&pack_bits(&self.backend.open_values));
        let oh = std::mem::replace(&mut self.backend.open_hash, Sha256::new()).finalize();
        let chh = std::mem::replace(&mut self.backend.const_hash, Sha256::new()).finalize();
        payload.extend_from_slice(&oh);
        payload.extend_from_slice(&chh);
        debug_assert_eq!(payload.len(), payload_len(&counted));
        ch.send(encode_header(&counted, payload.len())).await?;
        for chunk in payload.chunks(self.max_message) {
            ch.send(chunk.to_vec()).await?;
        }
        self.backend.flush_inverses();
        if !check {
            self.last_stats = counted;
            self.backend.reset_batch(true);
            return Ok(out);
        }

        // Challenge, then the masked answer (over this batch's triples and any deferred ones).
        let seed_msg = ch.recv().await?;
        let seed: [u8; 16] = seed_msg.as_slice().try_into().map_err(|_| ProofError::Malformed("challenge length"))?;
        let challenge = Challenge::new(seed, self.backend.and_rows.gates(), self.backend.product_triples.len());
        let mask = self.backend.random_elem();
        let (u0, v0) = self.backend.and_rows.take_sum(&challenge);
        let (u1, v1) = prover_product_sums(&challenge, &self.backend.product_triples);
        let u = u0 ^ u1 ^ mask.m;
        #[allow(unused_mut)]
        let mut v = v0 ^ v1 ^ mask.v;
        #[cfg(test)]
        if self.backend.cheat.tamper_check {
            v ^= F128::ONE;
        }
        let mut answer = Vec::with_capacity(32);
        answer.extend_from_slice(&u.to_le_bytes());
        answer.extend_from_slice(&v.to_le_bytes());
        ch.send(answer).await?;
        self.last_stats = counted;
        self.backend.reset_batch(true);
        self.backend.clear_triples();
        Ok(out)
    }

    /// The next batch has the shape named `key` (a caller's choice, e.g. "256 keystream blocks,
    /// 4,096 bytes opened"): when a batch of that key ran before, its counting pass is skipped
    /// and its counts reused (a key reused for a circuit of another shape fails the batch). The
    /// verifier must name the same keys.
    pub(crate) fn expect_shape(&mut self, key: u64) {
        self.shapes.expect(key);
    }

    /// Generates COTs ahead of the proof (e.g. while the TLS session runs) so the first
    /// batches find them in the pool. The verifier must call its `preprocess` with the same `n`.
    pub async fn preprocess<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(), ProofError> {
        self.ensure_pool(ch, n).await
    }

    /// Make at least `need` unused COTs available. The consumed prefix is only dropped when
    /// the pool has to grow (so a large preprocessed pool is not shifted at every batch), and
    /// an empty pool adopts the source's vectors instead of copying them.
    async fn ensure_pool<C: Channel>(&mut self, ch: &mut C, need: usize) -> Result<(), ProofError> {
        let mut have = self.backend.pool_bits.len().saturating_sub(self.backend.cursor);
        while have < need {
            let (Some(bits), Some(macs)) = (self.reserve.0.next(), self.reserve.1.next()) else { break };
            have += bits.len();
            self.add_to_pool(bits, macs);
        }
        if have >= need {
            return Ok(());
        }
        let cot = self.cot.as_mut().ok_or(ProofError::SourceLent)?;
        let (bits, macs) = cot.extend(ch, need - have).await?;
        if bits.len() != need - have || macs.len() != need - have {
            return Err(ProofError::Malformed("COT source returned a wrong count"));
        }
        self.add_to_pool(bits, macs);
        Ok(())
    }

    /// Appends COTs to the pool; its consumed prefix is dropped first, and an empty pool
    /// adopts the vectors instead of copying them.
    fn add_to_pool(&mut self, bits: Vec<bool>, macs: Vec<F128>) {
        self.backend.compact_pool();
        let b = &mut self.backend;
        if b.pool_bits.is_empty() && b.pool_macs.is_empty() {
            b.pool_bits = bits;
            b.pool_macs = macs;
        } else {
            b.pool_bits.extend(bits);
            b.pool_macs.extend(macs);
        }
    }
}

/// Run `f` on the MACs (or keys) of `bits`, on the stack for short inputs.
pub(crate) fn with_macs<T: Copy>(bits: &[T], get: impl Fn(&T) -> F128, f: impl FnOnce(&[F128]) -> F128) -> F128 {
    if bits.len() <= 16 {
        let mut buf = [F128::ZERO; 16];
        for (o, b) in buf.iter_mut().zip(bits) {
            *o = get(b);
        }
        f(&buf[..bits.len()])
    } else {
        let v: Vec<F128> = bits.iter().map(get).collect();
        f(&v)
    }
}

pub(crate) fn check_limits(s: &BatchStats) -> Result<(), ProofError> {
    if s.commits > MAX_BATCH_ITEMS
        || s.opened > MAX_BATCH_ITEMS
        || s.asserted > MAX_BATCH_ITEMS
        || s.products > MAX_BATCH_ITEMS
    {
        return Err(ProofError::BatchTooLarge);
    }
    Ok(())
}

/// Test-only: a prover whose witness lies. Every value the prover commits of its own
/// ([`Backend::commit`]: secrets, S-box inverses, blinders; not AND outputs, which the
/// multiplication check binds to their inputs) is a *fresh commitment*, numbered in order over
/// the real passes of a whole session. With a lie set at `k`, the k-th fresh commitment holds
/// the other value of its bit, and the prover goes on computing with what it committed (its
/// MACs stay consistent), as a prover with another witness would: only the circuit's
/// constraints can refuse it. The calls are those of the thread the session's proof runs on.
#[cfg(test)]
pub(crate) mod lie {
    use std::cell::RefCell;
    use std::panic::Location;

    /// Where a fresh commitment was made: the gadget's call of [`Backend::commit`] or
    /// [`crate::zk::bytes::commit_bytes`].
    pub(crate) type Site = &'static Location<'static>;

    #[derive(Default)]
    struct State {
        active: bool,
        at: Option<usize>,
        sites: Vec<Site>,
    }

    thread_local! {
        static STATE: RefCell<State> = RefCell::default();
    }

    /// Runs `f` (a whole session, on this thread) with the prover lying in its fresh
    /// commitment number `at` (none: honest); returns `f`'s output and the site of every fresh
    /// commitment the prover made, in order.
    pub(crate) async fn lying<F: std::future::Future>(at: Option<usize>, f: F) -> (F::Output, Vec<Site>) {
        STATE.with(|s| *s.borrow_mut() = State { active: true, at, sites: Vec::new() });
        let out = f.await;
        let sites = STATE.with(|s| std::mem::take(&mut *s.borrow_mut()).sites);
        (out, sites)
    }

    /// A fresh commitment made at `site` in a real pass: whether its bit is the lie.
    pub(super) fn at_fresh_commit(site: Site) -> bool {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if !s.active {
                return false;
            }
            let k = s.sites.len();
            s.sites.push(site);
            s.at == Some(k)
        })
    }
}
