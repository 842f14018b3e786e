//! Correlated oblivious transfer (COT): the source of random authenticated bits for the
//! VOLE-based ZK engine.
//!
//! # Roles and correlation
//! The **verifier** is the COT *sender* ([`CotSender`]): it holds one global secret
//! Δ ∈ GF(2^128) for the whole session and gets keys `K_i`. The **prover** is the COT
//! *receiver* ([`CotReceiver`]): it gets random bits `u_i` and MACs `M_i` with
//!
//! ```text
//!     M_i = K_i ⊕ u_i·Δ
//! ```
//!
//! Every `extend` call on the same pair of objects yields fresh correlations under the same Δ.
//! Both sides must call `extend` with the same `n`, in the same order, on the same channel.
//!
//! # Construction
//! 1. **Base OT** ([`base`]): 128 Chou–Orlandi "simplest OT"s over Ristretto255, run once per
//!    session (lazily on the first `extend`, or explicitly via `setup`). Roles are reversed as
//!    in IKNP: the verifier is the base-OT *receiver* with the bits of Δ as choices, the prover
//!    the base-OT *sender* of 128 random seed pairs. Keys are SHA-256 of the session id, the
//!    OT index, both transcript points and the shared point.
//! 2. **OT extension**, two implementations with the same interface and Δ semantics:
//!    [`softspoken`] (SoftSpokenOT, Roy CRYPTO 2022: ≈128/k bits per COT, k = 8 by default,
//!    the default bootstrap of [`ferret`]; see its module docs) and, described below,
//!    [`kos`]: IKNP, with every base seed expanded by the session's PRG ([`crate::primitives::prg`]:
//!    AES-128-CTR, or ChaCha12 where AES is software; one stream per seed, positions continue
//!    across `extend` calls), and the outputs left
//!    *correlated* (no hashing), followed by the KOS15 consistency check (Keller–Orsini–Scholl,
//!    "Actively Secure OT Extension with Optimal Overhead", CRYPTO 2015).
//!
//! # Parameters
//! * κ = 128 base OTs (computational security 128 bits; Δ has 128 bits).
//! * Each `extend(n)` runs the extension on `m = round_up(n + 128 + 40, 128)` rows; the
//!   `m − n ≥ 168 = κ + s` extra rows (s = 40 statistical security) are random masks that hide
//!   the prover's bits in the check and are discarded afterwards.
//! * Check: the verifier picks a fresh 128-bit seed *after* receiving the whole matrix; both
//!   sides derive χ_i = PRG_seed(i) ∈ GF(2^128); the prover sends x = Σ χ_i·u_i and
//!   t = Σ χ_i·M_i; the verifier accepts iff Σ χ_i·K_i = t ⊕ x·Δ.
//! * Traffic: 16·m bytes prover → verifier (≈ 128 bits per COT) in messages of at most
//!   [`kos::MAX_MESSAGE_BYTES`], plus 16 bytes and 32 bytes for the check.
//!
//! # What a malicious prover can still do (KOS leakage)
//! The check does not stop a prover from using *different* choice vectors in different
//! columns; it only makes that detectable unless the prover guesses the corresponding bits of
//! Δ. Concretely, a prover that deviates in column j passes the check iff it guessed Δ_j (it can
//! fold its guess into `x`, `t`), so it learns Δ_j with the abort as a one-bit oracle: learning
//! c bits of Δ succeeds with probability 2^-c and otherwise aborts the session. This is the
//! "selective failure on Δ" leakage that the KOS proof allows (the ideal functionality lets the
//! adversary guess bits of Δ and aborts on a wrong guess). It costs the ZK engine at most what
//! the prover gambles: forging a MAC still needs the remaining unknown bits of Δ, so soundness
//! error stays ≤ 2^-(128-c) while the cheating only survives with probability 2^-c.
//! The verifier (COT sender) cannot cheat the prover in IKNP beyond aborting; the prover's bits
//! stay hidden by the base OTs and the κ+s masking rows.
//!
//! After any error an instance is *poisoned* (its PRG counters may be out of step with the
//! peer) and further `extend` calls return [`CotError::Poisoned`].
//!
//! The COT source is behind the [`CotSender`]/[`CotReceiver`] traits; Ferret (LPN,
//! [`ferret`]) is the engine's default source and bootstraps itself from SoftSpokenOT (or KOS)
//! correlations.

pub(crate) mod base;
pub(crate) mod bits;
pub(crate) mod ct;
pub mod ferret;
/// Trusted-dealer COT for unit tests only: never compiled into the library.
#[cfg(test)]
pub(crate) mod ideal;
pub mod kos;
pub mod softspoken;

#[cfg(test)]
mod softspoken_tests;
#[cfg(test)]
pub(crate) mod test_util;
#[cfg(test)]
mod tests;

use crate::channel::{Channel, ChannelError};
use crate::primitives::field::F128;

pub use ferret::{BaseCotReceiver, BaseCotSender, FerretReceiver, FerretSender};
pub use kos::{KosReceiver, KosSender};
pub use softspoken::{SoftSpokenReceiver, SoftSpokenSender};

/// Failures of the base OT and of the OT extension.
#[derive(Debug, thiserror::Error)]
pub enum CotError {
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    /// A peer message had the wrong size (checked before anything is allocated for it).
    #[error("malformed {what}: expected {expected} bytes, got {got}")]
    Malformed { what: &'static str, expected: usize, got: usize },
    /// A base-OT message held bytes that are not a canonical Ristretto255 encoding, or an
    /// identity point where a non-identity one is required.
    #[error("base OT: invalid Ristretto255 point in {what}")]
    BaseOtInvalidPoint { what: &'static str },
    /// The prover's extension matrix is inconsistent: it cheated (or the data was corrupted).
    #[error("KOS consistency check failed: the prover's OT extension matrix is inconsistent")]
    ConsistencyCheckFailed,
    /// `extend` was asked for more correlations than one call supports.
    #[error("requested {requested} correlations in one call, the limit is {max}")]
    TooMany { requested: usize, max: usize },
    /// A previous call on this instance failed; its state can no longer be trusted.
    #[error("this COT instance failed earlier and can no longer be used")]
    Poisoned,
    /// Ferret (prover side): the verifier's half-tree messages are inconsistent (its check value
    /// does not match); the verifier cheated or the data was corrupted.
    #[error("Ferret SPCOT consistency check failed: the verifier's tree messages are inconsistent")]
    SpcotCheckFailed,
    /// Ferret (verifier side): the prover's check opening does not match the verifier's check
    /// value; the prover deviated (e.g. an inconsistent x' in the check).
    #[error("Ferret SPCOT consistency check failed: the prover's check opening is wrong")]
    SpcotProverInconsistent,
    /// SoftSpokenOT (verifier side): the prover's syndrome / GGM messages are inconsistent with
    /// its check response: it cheated (or the data was corrupted).
    #[error("SoftSpokenOT consistency check failed: the prover's OT extension messages are inconsistent")]
    SoftSpokenCheckFailed,
}

impl CotError {
    /// `Ok` if the peer's message `msg` is exactly `expected` bytes, else [`CotError::Malformed`].
    pub(crate) fn expect_len(what: &'static str, msg: &[u8], expected: usize) -> Result<(), CotError> {
        if msg.len() == expected {
            Ok(())
        } else {
            Err(CotError::Malformed { what, expected, got: msg.len() })
        }
    }
}

/// Verifier side of random correlated OT: holds Δ and gets keys.
#[allow(async_fn_in_trait)]
pub trait CotSender {
    /// The global correlation Δ, fixed for the lifetime of this instance.
    fn delta(&self) -> F128;
    /// n fresh random correlations: returns keys K_i.
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<F128>, CotError>;
}

/// Prover side of random correlated OT: gets random bits and their MACs.
#[allow(async_fn_in_trait)]
pub trait CotReceiver {
    /// n fresh random correlations: returns (u_i, M_i).
    async fn extend<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<(Vec<bool>, Vec<F128>), CotError>;
}
