//! A two-party computation written once as a sequence of phases, run by either engine: during
//! the TLS session in a garbled circuit ([`super::garbled`]), and after it, over the same
//! inputs, as a ZK proof ([`ZkPhases`]). That second run is the check of docs/protocol.md
//! ("How a cheating garbler is caught"): every value revealed during the session must equal
//! what the proof opens, or the verifier rejects the session.
//!
//! A phase builds gates and names byte-aligned bits to reveal to both parties; the next phase
//! may use the revealed bytes as public constants (inner HMAC states, the PRF's A(i) chain),
//! which is what keeps the garbled key derivation small. A phase may instead reveal to the
//! verifier alone: values masked by the prover's input (y ⊕ m for a mask m the prover chose),
//! which makes them additive shares, the verifier's y ⊕ m and the prover's m (the GHASH key,
//! E_K(J0)). The verifier publishes those after the session, and the proof opens them too.

use crate::channel::{Channel, ChannelError};
use crate::circuits::{Circuit, Gates};
use crate::gc::GcError;
use crate::zk::bytes::open_bytes;
use crate::zk::{Party, ProofError};

/// The bits a phase reveals to both parties, in order.
pub(crate) type Revealed<B> = Vec<<B as Gates>::Bit>;

/// A phase's circuit: builds gates, returns what to keep and what to reveal.
pub(crate) type PhaseFn<'f, B, T> = dyn FnMut(&mut B) -> (T, Revealed<B>) + 'f;

/// An input of a phased computation: wires (a party's input during the session, a committed
/// value in the proof) or public bytes (the verifier's inputs in the proof after the session).
pub(crate) enum Input<'a, B: Gates> {
    Wires(&'a [B::Bit]),
    Public(&'a [u8]),
}

impl<B: Circuit> Input<'_, B> {
    /// The input as wires of `b` (public bytes become constants, which cost nothing).
    pub(crate) fn wires(&self, b: &B) -> Vec<B::Bit> {
        match self {
            Input::Wires(w) => w.to_vec(),
            Input::Public(bytes) => crate::circuits::constant_bytes(b, bytes),
        }
    }
}

/// One party of a phased two-party computation.
#[allow(async_fn_in_trait)]
pub(crate) trait Phases<C: Channel> {
    type Backend: Circuit;
    /// Runs one phase: `f` builds its gates and returns what to keep and the (byte-aligned)
    /// bits to reveal; the result is what `f` kept and the revealed bytes.
    async fn phase<T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Self::Backend, T>)
        -> Result<(T, Vec<u8>), PhaseError>;

    /// Runs one phase whose bits only the verifier decodes: the verifier gets the bytes, the
    /// garbler `None` (in the proof after the session, both: the verifier has published them).
    async fn phase_for_verifier<T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Self::Backend, T>,
    ) -> Result<(T, Option<Vec<u8>>), PhaseError>;
}

/// What went wrong in a phase.
#[derive(Debug, thiserror::Error)]
pub enum PhaseError {
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error("garbled circuit: {0}")]
    Garbled(#[from] GcError),
    #[error("proof: {0}")]
    Proof(#[from] ProofError),
    #[error("the peer misbehaved: {0}")]
    Peer(#[from] PeerMisbehaved),
}

/// What the other party did wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerMisbehaved {
    #[error("malformed message: {0}")]
    Malformed(&'static str),
    #[error("the garbler announced {got} gate tables for a phase, more than the limit of {max}")]
    TooManyTables { got: u64, max: u64 },
    #[error("the garbler sent {sent} gate tables for a phase whose circuit has {used} AND gates")]
    TableCountMismatch { sent: u64, used: u64 },
    #[error("the garbler's decoding covers {got} wires, the phase reveals {expected}")]
    DecodingCountMismatch { expected: usize, got: usize },
    #[error("the garbler sent {got} phases ahead, where the evaluator's plan has {expected}")]
    AheadPhaseCount { expected: usize, got: usize },
    #[error("the garbler sent a phase ahead without gate tables")]
    EmptyAheadPhase,
    #[error("the evaluator's revealed values do not match the output labels it holds")]
    RevealNotAuthentic,
    #[error("revealed value {index} of the two-party computation differs from what the proof opens")]
    RevealDiffers { index: usize },
    #[error("the proof opened {got} values, the two-party computation revealed {expected}")]
    RevealCountDiffers { expected: usize, got: usize },
}

/// The ZK engine running the phases: each phase one batch, deferred, so the whole
/// computation costs one round trip per phase and one multiplication check at
/// [`ZkPhases::finish`]. Opened values are only trustworthy after that check.
pub(crate) struct ZkPhases<'a, P> {
    party: &'a mut P,
    opened: Vec<Vec<u8>>,
    opened_for_verifier: Vec<Vec<u8>>,
}

impl<'a, P> ZkPhases<'a, P> {
    pub(crate) fn new(party: &'a mut P) -> Self {
        ZkPhases { party, opened: Vec::new(), opened_for_verifier: Vec::new() }
    }

    /// Runs the multiplication check over every phase and compares the values the proof
    /// opened, phase by phase, with those the garbled run revealed (`during_session`) and
    /// those the verifier alone decoded (`for_verifier`, which it has published).
    pub(crate) async fn finish<C: Channel>(
        self,
        ch: &mut C,
        during_session: &[Vec<u8>],
        for_verifier: &[Vec<u8>],
    ) -> Result<(), PhaseError>
    where
        P: Party<C>,
    {
        if self.party.check_pending() {
            self.party.run_batch(ch, &mut |_| ()).await?;
        }
        compare_reveals(during_session, &self.opened)?;
        compare_reveals(for_verifier, &self.opened_for_verifier)
    }

    /// One phase as a deferred batch: what `f` kept and the bytes the proof opens.
    async fn prove<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, P::Backend, T>,
    ) -> Result<(T, Vec<u8>), PhaseError>
    where
        P: Party<C>,
    {
        Ok(self
            .party
            .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
                let (t, bits) = f(b);
                let bytes = open_bytes(b, &bits);
                (t, bytes)
            })
            .await?)
    }
}

/// Phase by phase, the values revealed during the session against those opened by the proof.
pub(crate) fn compare_reveals(during_session: &[Vec<u8>], proven: &[Vec<u8>]) -> Result<(), PhaseError> {
    if during_session.len() != proven.len() {
        return Err(PeerMisbehaved::RevealCountDiffers { expected: during_session.len(), got: proven.len() }.into());
    }
    match during_session.iter().zip(proven).position(|(a, b)| a != b) {
        Some(index) => Err(PeerMisbehaved::RevealDiffers { index }.into()),
        None => Ok(()),
    }
}

impl<P: Party<C>, C: Channel> Phases<C> for ZkPhases<'_, P> {
    type Backend = P::Backend;

    async fn phase<T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, P::Backend, T>) -> Result<(T, Vec<u8>), PhaseError> {
        let (t, bytes) = self.prove(ch, f).await?;
        self.opened.push(bytes.clone());
        Ok((t, bytes))
    }

    async fn phase_for_verifier<T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, P::Backend, T>,
    ) -> Result<(T, Option<Vec<u8>>), PhaseError> {
        let (t, bytes) = self.prove(ch, f).await?;
        self.opened_for_verifier.push(bytes.clone());
        Ok((t, Some(bytes)))
    }
}
