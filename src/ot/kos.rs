//! IKNP OT extension with the KOS15 consistency check, producing random correlated OTs.
//! See the [module documentation of `ot`](crate::ot) for the protocol, parameters and the
//! leakage a malicious prover is allowed.
//!
//! Per `extend(n)` (m = [`padded_rows`]`(n)` rows, sent in chunks of ≤ [`CHUNK_ROWS`] rows):
//! 1. prover: picks random bits r ∈ {0,1}^m; for every column j, T0_j = PRG(k_j^0),
//!    T1_j = PRG(k_j^1), and sends U_j = T0_j ⊕ T1_j ⊕ r (chunk by chunk, 16 bytes per row).
//! 2. verifier: Q_j = PRG(k_j^{Δ_j}) ⊕ Δ_j·U_j = T0_j ⊕ Δ_j·r, so row i is q_i = t_i ⊕ r_i·Δ.
//! 3. verifier → prover: a fresh 16-byte seed; χ_i = PRG_seed(i) (block i of [`crate::primitives::prg`]).
//! 4. prover → verifier: x = Σ χ_i·r_i and t = Σ χ_i·t_i (32 bytes); the verifier checks
//!    Σ χ_i·q_i = t ⊕ x·Δ.
//! 5. outputs for i < n: verifier K_i = q_i; prover u_i = r_i, M_i = t_i.

use super::base;
use super::bits::{check_as_receiver, check_as_sender, check_n, chunk_lengths, columns_to_rows, ColumnPrg};
use super::{CotError, CotReceiver, CotSender};
use crate::channel::Channel;
use crate::primitives::field::F128;
use crate::primitives::prg::PrgKind;
use rand::RngCore;
use rayon::prelude::*;
use zeroize::{Zeroize, Zeroizing};

/// Computational security parameter κ: number of base OTs / bits of Δ.
pub(crate) const KAPPA: usize = 128;
/// Statistical security parameter s of the KOS check.
pub(crate) const STAT_SECURITY: usize = 40;
/// Extra rows sacrificed per `extend` call to mask the check (κ + s).
pub(crate) const CHECK_ROWS: usize = KAPPA + STAT_SECURITY;
pub(crate) use super::bits::{CHUNK_ROWS, MAX_EXTEND};
/// Largest message either side sends (one chunk of the extension matrix: 1 MiB).
pub const MAX_MESSAGE_BYTES: usize = CHUNK_ROWS * 16;

const DEFAULT_SESSION_ID: &[u8] = b"tlsproof/zk/ot/kos/default-session";

/// Rows of the extension matrix used for `n` correlations: n + κ + s, rounded up to a
/// multiple of 128 (whole 128×128 transpose blocks). All rows ≥ n are discarded.
pub(crate) fn padded_rows(n: usize) -> usize {
    (n + CHECK_ROWS).div_ceil(128) * 128
}

/// Bytes the prover sends for `extend(n)` (matrix plus the check message); the verifier sends
/// 16 bytes. Useful for sizing transports and for benchmarks.
#[cfg(test)]
pub(crate) fn prover_bytes_for(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        16 * padded_rows(n) + 32
    }
}

/// Verifier side of KOS: COT sender holding Δ.
pub struct KosSender {
    delta: F128,
    session_id: Vec<u8>,
    /// The PRG that expands the base-OT seeds and the check's coefficients.
    prg: PrgKind,
    /// PRGs seeded with k_j^{Δ_j}, one per column; `None` until the base OTs ran.
    prgs: Option<Vec<ColumnPrg>>,
    poisoned: bool,
}

impl Default for KosSender {
    fn default() -> Self {
        Self::new()
    }
}

impl KosSender {
    /// A sender with a fresh uniformly random Δ. Base OTs run on the first `extend` (or `setup`).
    pub fn new() -> Self {
        let mut b = [0u8; 16];
        rand::rng().fill_bytes(&mut b);
        let delta = F128::from_le_bytes(b);
        b.zeroize();
        Self::with_delta(delta)
    }

    /// A sender with a caller-chosen Δ (which must be uniformly random and secret; e.g. a
    /// protocol that needs a fixed bit of Δ sets it here, accepting one bit less security).
    pub(crate) fn with_delta(delta: F128) -> Self {
        KosSender {
            delta,
            session_id: DEFAULT_SESSION_ID.to_vec(),
            prg: PrgKind::default(),
            prgs: None,
            poisoned: false,
        }
    }

    /// Bind the base OTs to a session identifier (must equal the prover's).
    #[cfg(test)]
    pub(crate) fn with_session_id(mut self, session_id: &[u8]) -> Self {
        self.session_id = session_id.to_vec();
        self
    }

    /// Expand with `prg` (must equal the prover's; default AES-128-CTR). Before `setup` only.
    pub fn with_prg(mut self, prg: PrgKind) -> Self {
        debug_assert!(self.prgs.is_none(), "with_prg after setup");
        self.prg = prg;
        self
    }

    /// The PRG this sender expands with.
    pub fn prg(&self) -> PrgKind {
        self.prg
    }

    /// Run the 128 base OTs now (no-op if already done).
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        if self.prgs.is_some() {
            return Ok(());
        }
        self.poisoned = true;
        let choices: Vec<bool> = (0..KAPPA).map(|j| (self.delta.0 >> j) & 1 == 1).collect();
        let mut keys = base::receive(ch, &self.session_id, &choices).await?;
        self.prgs = Some(keys.iter().map(|k| ColumnPrg::new(self.prg, k)).collect());
        keys.iter_mut().for_each(|k| k.zeroize());
        self.poisoned = false;
        Ok(())
    }

    async fn extend_inner<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        let delta = self.delta.0;
        let prgs = self.prgs.as_mut().ok_or(CotError::Poisoned)?;
        let m = padded_rows(n);
        // wiped on every exit path; the n outputs are copied out on success
        let mut rows = Zeroizing::new(vec![0u128; m]);
        for (start, len) in chunk_lengths(m) {
            let col_len = len / 8;
            let msg = ch.recv().await?;
            CotError::expect_len("OT extension matrix chunk", &msg, 128 * col_len)?;
            let mut q = Zeroizing::new(vec![0u8; 128 * col_len]);
            prgs.par_iter_mut().zip(q.par_chunks_mut(col_len)).zip(msg.par_chunks(col_len)).enumerate().for_each(
                |(j, ((prg, qc), uc))| {
                    prg.fill(qc);
                    let mask = 0u8.wrapping_sub(((delta >> j) & 1) as u8);
                    qc.iter_mut().zip(uc).for_each(|(a, &u)| *a ^= u & mask);
                },
            );
            columns_to_rows(&q, col_len, &mut rows[start..start + len]);
        }

        check_as_sender(ch, self.prg, &rows, self.delta, "KOS check response", CotError::ConsistencyCheckFailed)
            .await?;
        Ok(rows[..n].iter().map(|&k| F128(k)).collect())
    }
}

impl CotSender for KosSender {
    fn delta(&self) -> F128 {
        self.delta
    }

    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        check_n(n)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        self.setup(ch).await?;
        self.poisoned = true;
        let out = self.extend_inner(ch, n).await?;
        self.poisoned = false;
        Ok(out)
    }
}

impl Drop for KosSender {
    fn drop(&mut self) {
        self.delta.0.zeroize();
    }
}

/// Prover side of KOS: COT receiver getting random bits and MACs.
pub struct KosReceiver {
    session_id: Vec<u8>,
    /// The PRG that expands the base-OT seeds and the check's coefficients.
    prg: PrgKind,
    /// PRGs seeded with (k_j^0, k_j^1), one pair per column; `None` until the base OTs ran.
    prgs: Option<Vec<(ColumnPrg, ColumnPrg)>>,
    poisoned: bool,
}

impl Default for KosReceiver {
    fn default() -> Self {
        Self::new()
    }
}

impl KosReceiver {
    /// A receiver whose base OTs run on the first `extend` (or `setup`).
    pub fn new() -> Self {
        KosReceiver { session_id: DEFAULT_SESSION_ID.to_vec(), prg: PrgKind::default(), prgs: None, poisoned: false }
    }

    /// Bind the base OTs to a session identifier (must equal the verifier's).
    #[cfg(test)]
    pub(crate) fn with_session_id(mut self, session_id: &[u8]) -> Self {
        self.session_id = session_id.to_vec();
        self
    }

    /// Expand with `prg` (must equal the verifier's; default AES-128-CTR). Before `setup` only.
    pub fn with_prg(mut self, prg: PrgKind) -> Self {
        debug_assert!(self.prgs.is_none(), "with_prg after setup");
        self.prg = prg;
        self
    }

    /// The PRG this receiver expands with.
    pub fn prg(&self) -> PrgKind {
        self.prg
    }

    /// Run the 128 base OTs now (no-op if already done).
    pub async fn setup<C: Channel>(&mut self, ch: &mut C) -> Result<(), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        if self.prgs.is_some() {
            return Ok(());
        }
        self.poisoned = true;
        let mut keys = base::send(ch, &self.session_id, KAPPA).await?;
        self.prgs =
            Some(keys.iter().map(|(k0, k1)| (ColumnPrg::new(self.prg, k0), ColumnPrg::new(self.prg, k1))).collect());
        keys.iter_mut().for_each(|(k0, k1)| {
            k0.zeroize();
            k1.zeroize();
        });
        self.poisoned = false;
        Ok(())
    }

    async fn extend_inner<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        let prgs = self.prgs.as_mut().ok_or(CotError::Poisoned)?;
        let m = padded_rows(n);
        let mut bits = Zeroizing::new(vec![0u8; m / 8]);
        rand::rng().fill_bytes(&mut bits);
        // wiped on every exit path; the n outputs are copied out on success
        let mut rows = Zeroizing::new(vec![0u128; m]);
        for (start, len) in chunk_lengths(m) {
            let col_len = len / 8;
            let r = &bits[start / 8..(start + len) / 8];
            let mut t0 = Zeroizing::new(vec![0u8; 128 * col_len]);
            let mut msg = vec![0u8; 128 * col_len];
            prgs.par_iter_mut().zip(t0.par_chunks_mut(col_len)).zip(msg.par_chunks_mut(col_len)).for_each(
                |(((p0, p1), t0c), uc)| {
                    p0.fill(t0c);
                    p1.fill(uc);
                    for ((u, &a), &rb) in uc.iter_mut().zip(t0c.iter()).zip(r) {
                        *u ^= a ^ rb;
                    }
                },
            );
            columns_to_rows(&t0, col_len, &mut rows[start..start + len]);
            ch.send(msg).await?;
        }

        check_as_receiver(ch, self.prg, &rows, &bits, "KOS check seed").await?;

        let choice: Vec<bool> = (0..n).map(|i| (bits[i / 8] >> (i % 8)) & 1 == 1).collect();
        Ok((choice, rows[..n].iter().map(|&t| F128(t)).collect()))
    }
}

impl CotReceiver for KosReceiver {
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError> {
        if self.poisoned {
            return Err(CotError::Poisoned);
        }
        check_n(n)?;
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        self.setup(ch).await?;
        self.poisoned = true;
        let out = self.extend_inner(ch, n).await?;
        self.poisoned = false;
        Ok(out)
    }
}
