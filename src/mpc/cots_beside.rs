//! COTs made beside MPC mode's connection.
//!
//! A response that is only partly revealed has its keystream proven after the connection, at
//! about 1,300 COTs per 16-byte block (4.3M for 51 KB), which Ferret makes in LPN iterations
//! of a few hundred milliseconds each. During the connection the link from the prover is full
//! of garbled tables, but the link to it and the cores are mostly idle, and Ferret's traffic is
//! mostly the verifier's (its GGM trees) and its work the LPN: both fit there.
//!
//! So both parties lend their ZK party's COT source out and run Ferret on the session's COT
//! channel, on a thread of their own (an LPN iteration would otherwise hold up the thread that
//! forwards the server's records). The session's multiplexer sends frames round-robin by
//! channel within a bounded window, so Ferret's few small prover messages do not wait behind
//! the tables. The COTs made join both pools, after those the connection uses, once the
//! connection and the proof of the garbling are done: the keystream proof then finds them
//! there, and both parties' pools stay in step.
//!
//! The prover drives: before each step it sends the step's size (a little-endian u32), and 0 to
//! end. It asks for steps while the connection runs, up to [`max_cots`] of its `max_recv`. The
//! verifier serves steps up to `max_cots` of the session's `max_recv` and refuses more.
//!
//! The same exchange, one step of the session's `preprocess` COTs, makes the COTs for the
//! proofs while the request is garbled ahead of the handshake, which uses none of them.

use crate::channel::{Channel, ChannelError};
use crate::ot::{CotError, CotReceiver, CotSender};
use crate::primitives::field::F128;
use futures::channel::oneshot;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

/// COTs asked for per step (the COT source runs the LPN iterations a step lacks).
pub(crate) const COTS_PER_STEP: usize = crate::cost::KEYSTREAM_PREPROCESS;

/// The most COTs a session makes beside its connection: 6 · 2^20, the keystream proof of about
/// 75 KB. They are held until the proof takes them: 17 bytes each on the prover (a bit and a
/// MAC), 16 on the verifier, so about 107 and 101 MB at most.
pub(crate) const MAX_COTS: usize = 6 << 20;

/// What a session of `max_recv` bytes received makes beside its connection at most: the
/// keystream proof of all of it under the costliest cipher MPC mode speaks (ChaCha20), and at
/// most [`MAX_COTS`]. The verifier serves up to this; the prover asks for the cipher it
/// expects ([`cots_for`]).
pub(crate) fn max_cots(max_recv: usize) -> usize {
    crate::cost::most_keystream_cots(max_recv).min(MAX_COTS)
}

/// What a session of `max_recv` bytes received asks for beside its connection when the server
/// is expected to choose `cipher`: the keystream proof of all of it, and at most [`MAX_COTS`].
pub(crate) fn cots_for(cipher: crate::mpc::sealing::RecordCipher, max_recv: usize) -> usize {
    use crate::tls::tls13::Suite13;
    let suite = match cipher {
        crate::mpc::sealing::RecordCipher::AesGcm => Suite13::Aes128GcmSha256,
        crate::mpc::sealing::RecordCipher::ChaCha20Poly1305 => Suite13::ChaCha20Poly1305Sha256,
    };
    crate::cost::keystream_cots_of(suite, max_recv).min(MAX_COTS)
}

#[derive(Debug, thiserror::Error)]
pub enum BesideError {
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error("correlated OT: {0}")]
    Cot(#[from] CotError),
    #[error("the prover sent a step of {0} bytes (expected 4)")]
    MalformedStep(usize),
    #[error("the prover asked for {asked} COTs on the COT channel (limit {limit})")]
    TooMany { asked: usize, limit: usize },
    #[error("the COT source made {made} COTs for a step of {asked}")]
    WrongCount { made: usize, asked: usize },
    #[error("the thread making COTs beside the connection did not finish")]
    Lost,
}

/// What the prover's side makes: bits and MACs, a chunk per step.
pub(crate) type ProverMade = Vec<(Vec<bool>, Vec<F128>)>;

/// What the verifier's side makes: keys, a chunk per step.
pub(crate) type VerifierMade = Vec<Vec<F128>>;

/// The prover's side: steps of at most `step` COTs until `total` are made or `go_on` turns
/// false (checked before each step), then the end.
pub(crate) async fn make<R: CotReceiver, C: Channel>(
    source: &mut R,
    ch: &mut C,
    total: usize,
    step: usize,
    go_on: &AtomicBool,
) -> Result<ProverMade, BesideError> {
    let (mut made, mut sum) = (Vec::new(), 0);
    while sum < total && go_on.load(Ordering::Acquire) {
        let n = step.max(1).min(total - sum);
        ch.send(step_message(n)).await?;
        let (b, m) = source.extend(ch, n).await?;
        if b.len() != n || m.len() != n {
            return Err(BesideError::WrongCount { made: b.len().min(m.len()), asked: n });
        }
        sum += n;
        made.push((b, m));
    }
    ch.send(step_message(0)).await?;
    Ok(made)
}

/// The verifier's side: serves the prover's steps while their total stays within `cap`.
pub(crate) async fn serve<S: CotSender, C: Channel>(
    source: &mut S,
    ch: &mut C,
    cap: usize,
) -> Result<VerifierMade, BesideError> {
    let (mut made, mut total) = (Vec::new(), 0usize);
    loop {
        let msg = ch.recv().await?;
        let n = <[u8; 4]>::try_from(msg.as_slice()).map_err(|_| BesideError::MalformedStep(msg.len()))?;
        let n = u32::from_le_bytes(n) as usize;
        if n == 0 {
            return Ok(made);
        }
        let asked = total.saturating_add(n);
        if asked > cap {
            return Err(BesideError::TooMany { asked, limit: cap });
        }
        let k = source.extend(ch, n).await?;
        if k.len() != n {
            return Err(BesideError::WrongCount { made: k.len(), asked: n });
        }
        total = asked;
        made.push(k);
    }
}

fn step_message(n: usize) -> Vec<u8> {
    u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes().to_vec()
}

/// A job running on a thread of its own: natively an OS thread, in wasm a thread of the rayon
/// pool (the page's Web Workers), polled there by a local executor. Dropping it stops the job
/// at its next wait, so a session that ends early leaves nothing running.
pub(crate) struct OwnThread<T> {
    result: oneshot::Receiver<T>,
    _stop: oneshot::Sender<()>,
}

impl<T: Send + 'static> OwnThread<T> {
    /// Starts the future `job` builds on the new thread.
    pub(crate) fn spawn<F: Future<Output = T>>(job: impl FnOnce() -> F + Send + 'static) -> Self {
        let (tx, result) = oneshot::channel();
        let (_stop, stop) = oneshot::channel::<()>();
        let run = move || {
            let job = Box::pin(job());
            if let futures::future::Either::Left((out, _)) =
                futures::executor::block_on(futures::future::select(job, stop))
            {
                let _ = tx.send(out);
            }
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            // A thread that cannot start drops `run`, and `finish` reports the loss.
            let _ = std::thread::Builder::new().name("tlsproof-cots".into()).spawn(run);
        }
        #[cfg(target_arch = "wasm32")]
        rayon::spawn(run);
        OwnThread { result, _stop }
    }

    /// Waits for the job's output (`None` if its thread did not start or panicked).
    pub(crate) async fn finish(self) -> Option<T> {
        let OwnThread { result, _stop } = self;
        result.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::ot::ideal::{IdealCotReceiver, IdealCotSender};
    use futures::executor::block_on;
    use futures::future::join;

    type Made = (Result<ProverMade, BesideError>, Result<VerifierMade, BesideError>, F128);

    fn run(cap: usize, limit: usize, steps_while_connected: bool) -> Made {
        let (mut a, mut b) = memory_pair(1 << 20);
        let (mut r, mut s) = (IdealCotReceiver::new([7; 16]), IdealCotSender::new([7; 16]));
        let delta = s.delta();
        let connected = AtomicBool::new(steps_while_connected);
        let (p, v) = block_on(join(make(&mut r, &mut a, cap, COTS_PER_STEP, &connected), serve(&mut s, &mut b, limit)));
        (p, v, delta)
    }

    /// Steps up to the cap make correlated pairs on both sides, in the same order.
    #[test]
    fn the_cots_made_beside_are_correlated_and_stop_at_the_maximum() {
        let (p, v, delta) = run(COTS_PER_STEP + 5, COTS_PER_STEP + 5, true);
        let (p, v) = (p.unwrap(), v.unwrap());
        assert_eq!(p.iter().map(|(b, _)| b.len()).collect::<Vec<_>>(), [COTS_PER_STEP, 5], "a chunk per step");
        assert_eq!(v.iter().map(Vec::len).collect::<Vec<_>>(), [COTS_PER_STEP, 5]);
        let bits: Vec<bool> = p.iter().flat_map(|(b, _)| b.clone()).collect();
        let macs: Vec<F128> = p.into_iter().flat_map(|(_, m)| m).collect();
        let keys: Vec<F128> = v.concat();
        assert_eq!((bits.len(), keys.len()), (COTS_PER_STEP + 5, COTS_PER_STEP + 5));
        for i in [0, 1, COTS_PER_STEP - 1, COTS_PER_STEP, COTS_PER_STEP + 4] {
            let expected = if bits[i] { F128(keys[i].0 ^ delta.0) } else { keys[i] };
            assert_eq!(macs[i], expected, "COT {i}");
        }
    }

    /// A connection that is over asks for nothing more: both sides end with nothing made.
    #[test]
    fn nothing_is_made_once_the_connection_is_over() {
        let (p, v, _) = run(COTS_PER_STEP, COTS_PER_STEP, false);
        assert!(p.unwrap().is_empty());
        assert!(v.unwrap().is_empty());
    }

    /// A prover that asks for more than the verifier's cap is refused before anything is made.
    #[test]
    fn a_prover_asking_beyond_the_cap_is_refused() {
        let (_, v, _) = run(2 * COTS_PER_STEP, COTS_PER_STEP + 1, true);
        assert!(
            matches!(v, Err(BesideError::TooMany { asked, limit }) if asked == 2 * COTS_PER_STEP && limit == COTS_PER_STEP + 1),
            "{v:?}"
        );
        // a session that declared its response wholly revealed (or hidden) gets a cap of 0: the
        // first COT asked for is refused
        let (_, v, _) = run(COTS_PER_STEP, 0, true);
        assert!(matches!(v, Err(BesideError::TooMany { asked, limit: 0 }) if asked == COTS_PER_STEP), "{v:?}");
    }

    /// A step message of the wrong size is refused.
    #[test]
    fn a_malformed_step_is_refused() {
        let (mut a, mut b) = memory_pair(1 << 20);
        let mut s = IdealCotSender::new([7; 16]);
        let sent = block_on(async {
            a.send(vec![1, 0, 0]).await.unwrap();
            serve(&mut s, &mut b, COTS_PER_STEP).await
        });
        assert!(matches!(sent, Err(BesideError::MalformedStep(3))), "{sent:?}");
    }

    /// The thread runs its job and gives back the result; dropped, it stops at its next wait.
    #[test]
    fn a_job_on_its_own_thread_finishes_or_is_stopped() {
        assert_eq!(block_on(OwnThread::spawn(|| async { 7 }).finish()), Some(7));
        let (tx, rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let waiting = OwnThread::spawn(move || async move {
            let out = rx.await;
            let _ = done_tx.send(());
            out
        });
        drop(waiting);
        // The job was dropped without finishing (its sender went with it); a job still
        // waiting would time out instead.
        let stopped = done_rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(stopped, Err(std::sync::mpsc::RecvTimeoutError::Disconnected));
        drop(tx);
    }
}
