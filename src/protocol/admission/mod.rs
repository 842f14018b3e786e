//! Admission by what sessions cost ([`cost`]) against the verifier's budget ([`budget`]): a
//! session waits for its turn when its request arrives, told its place in the queue, and
//! again before its proof; it is refused `BUSY`, with a hint of when to try again, only when
//! the queue is full or the wait runs past its bound.

pub mod budget;
pub mod cost;

use crate::channel::{Channel, ChannelError};
use crate::protocol::messages::ControlMessage;
use crate::wire::mux::MuxChannel;
use budget::{Budget, Queued, Reservation};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting session is told its place even if it has not changed, so the prover's
/// wait for each message stays well within its step timeout.
const WAITING_EVERY: Duration = Duration::from_secs(5);

/// How often a waiting session looks whether its place changed.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Why a session did not get its turn.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdmissionError {
    /// Refused for load; try again after about `retry_after` seconds.
    #[error("{reason}")]
    Busy { reason: String, retry_after: u32 },
    /// The prover could not be told its place.
    #[error(transparent)]
    Channel(#[from] ChannelError),
}

/// A verifier's admission: the budget its sessions share, and how long and how many of them
/// may wait.
pub(crate) struct Gate {
    pub budget: Arc<Budget>,
    /// Sessions waiting for their online reservation at most; beyond, refused at once.
    pub max_queued: usize,
    /// The longest a session waits for either reservation.
    pub max_wait: Duration,
    /// Told how long each admitted session waited for its online reservation.
    pub waited: Box<dyn Fn(Duration) + Send + Sync>,
}

impl Gate {
    /// A refusal for load, with the budget's retry hint.
    pub(crate) fn busy(&self, reason: String) -> AdmissionError {
        AdmissionError::Busy { reason, retry_after: self.budget.retry_after() }
    }

    /// The online reservation of a session whose request asks `amount`: waits for it in the
    /// queue, telling the prover its place on `control`.
    pub(crate) async fn online(&self, amount: u64, control: &mut MuxChannel) -> Result<Reservation, AdmissionError> {
        let Some(mut queued) = self.budget.ask_online(amount, self.max_queued) else {
            return Err(self.busy(format!("the queue is full ({} waiting)", self.max_queued)));
        };
        let since = tokio::time::Instant::now();
        let deadline = since + self.max_wait;
        // (place told, when)
        let mut told: Option<(usize, tokio::time::Instant)> = None;
        while let Some(position) = queued.position() {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(self.busy(format!("no turn within {} s", self.max_wait.as_secs())));
            }
            if told.is_none_or(|(p, at)| p != position || now >= at + WAITING_EVERY) {
                let place = u32::try_from(position).unwrap_or(u32::MAX);
                control.send(ControlMessage::Waiting { position: place }.encode()).await?;
                told = Some((position, now));
            }
            let _ = tokio::time::timeout_at((now + LOOK_EVERY).min(deadline), queued.granted()).await;
        }
        (self.waited)(since.elapsed());
        Ok(queued.into_reservation())
    }

    /// The proof reservation of `amount` bytes and a proving slot. The prover is proving by then
    /// and waits on the proof's own channel, so nothing is sent while it waits.
    pub(crate) async fn proof(&self, amount: u64) -> Result<Reservation, AdmissionError> {
        let mut queued: Queued = self.budget.ask_proof(amount);
        match tokio::time::timeout(self.max_wait, queued.granted()).await {
            Ok(()) => Ok(queued.into_reservation()),
            Err(_) => Err(self.busy(format!("no turn to prove within {} s", self.max_wait.as_secs()))),
        }
    }
}
