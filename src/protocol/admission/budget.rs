//! Admission by what sessions cost: a memory budget shared by every session, reserved in two
//! steps, and a number of sessions proving at once (the CPU-heavy part).
//!
//! A session reserves its **online** cost when its request arrives (what its declared limits
//! let it hold while it talks to the server: [`cost`](super::cost)), and its **proof** cost when
//! its reveal plan arrives (what proving those bytes takes; only then is it known). Each step
//! waits in its own first-in-first-out queue. Sessions already running go first: a proof
//! reservation waiting blocks new online ones. Online reservations together may hold at most
//! half the budget, and a proof reservation asks for at most the other half, so whenever no
//! proof is running the first proof waiting fits: every admitted session can finish, and the
//! queues cannot deadlock. A reservation larger than its half is clamped to it (the session
//! then runs alone in that half) rather than refused.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The budget's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetLimits {
    /// Bytes of memory all sessions together may reserve.
    pub memory: u64,
    /// Sessions in their proof at once (each proof keeps a core busy).
    pub max_proving: usize,
    /// Sessions admitted at once, whatever they cost (each runs on a thread of its own).
    pub max_sessions: usize,
}

impl BudgetLimits {
    /// The defaults for this machine: a quarter of its memory but at most 384 MiB per core,
    /// two proofs per core, and 64 sessions per core.
    pub(crate) fn for_this_machine() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_cores = 384 * (1 << 20) * cores as u64;
        let memory = physical_memory().map_or(per_cores, |m| (m / 4).min(per_cores));
        BudgetLimits { memory, max_proving: 2 * cores, max_sessions: 64 * cores }
    }
}

/// The machine's memory (Linux `/proc/meminfo`), if known.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 =
        info.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

/// Which of a session's two reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Online,
    Proof,
}

struct Waiter {
    id: u64,
    amount: u64,
    granted: futures::channel::oneshot::Sender<()>,
}

#[derive(Default)]
struct State {
    online_held: u64,
    proof_held: u64,
    sessions: usize,
    proving: usize,
    online_queue: VecDeque<Waiter>,
    proof_queue: VecDeque<Waiter>,
    next_id: u64,
    /// Mean time an admitted session held its online reservation (exponentially weighted),
    /// for the retry hint.
    mean_session: Option<f64>,
}

/// What the budget holds at a moment, for the `/metrics` gauges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Bytes reserved.
    pub reserved: u64,
    /// Sessions admitted (holding their online reservation), and of them those proving.
    pub sessions: usize,
    pub proving: usize,
    /// Sessions waiting for admission.
    pub waiting: usize,
}

/// The shared budget. Cheap to clone a handle of ([`Arc`]).
pub(crate) struct Budget {
    limits: BudgetLimits,
    state: Mutex<State>,
    /// Told the usage whenever it changes.
    on_change: Box<dyn Fn(Usage) + Send + Sync>,
}

impl Budget {
    pub(crate) fn new(limits: BudgetLimits, on_change: impl Fn(Usage) + Send + Sync + 'static) -> Arc<Self> {
        let limits = BudgetLimits {
            memory: limits.memory.max(2),
            max_proving: limits.max_proving.max(1),
            max_sessions: limits.max_sessions.max(1),
        };
        Arc::new(Budget { limits, state: Mutex::default(), on_change: Box::new(on_change) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Half the budget: what online reservations may hold together, and the most one proof asks.
    fn half(&self) -> u64 {
        self.limits.memory / 2
    }

    pub(crate) fn limits(&self) -> BudgetLimits {
        self.limits
    }

    /// What is held and waiting now.
    #[cfg(test)]
    pub(crate) fn usage(&self) -> Usage {
        usage(&self.lock())
    }

    /// Asks for a session's online reservation of `amount` bytes: granted at once, or a place
    /// in the queue. `None` if the queue already holds `max_queued`.
    pub(crate) fn ask_online(self: &Arc<Self>, amount: u64, max_queued: usize) -> Option<Queued> {
        self.ask(Step::Online, amount.min(self.half()), max_queued)
    }

    /// Asks for a session's proof reservation of `amount` bytes (and a proving slot).
    pub(crate) fn ask_proof(self: &Arc<Self>, amount: u64) -> Queued {
        self.ask(Step::Proof, amount.min(self.half()), usize::MAX).expect("the proof queue is unbounded")
    }

    fn ask(self: &Arc<Self>, step: Step, amount: u64, max_queued: usize) -> Option<Queued> {
        let (tx, rx) = futures::channel::oneshot::channel();
        let mut s = self.lock();
        s.next_id += 1;
        let id = s.next_id;
        queue(&mut s, step).push_back(Waiter { id, amount, granted: tx });
        self.grant(&mut s);
        // one that must wait, behind a full queue, is turned away (it is the last)
        let q = queue(&mut s, step);
        if q.back().is_some_and(|w| w.id == id) && q.len() > max_queued {
            q.pop_back();
            (self.on_change)(usage(&s));
            return None;
        }
        drop(s);
        Some(Queued { budget: self.clone(), step, id, amount, granted: rx, done: false })
    }

    /// Grants the heads of the queues that fit, proofs first; new sessions only while no
    /// proof waits.
    fn grant(&self, s: &mut State) {
        let total = self.limits.memory;
        while let Some(w) = s.proof_queue.front() {
            if s.proving >= self.limits.max_proving || s.online_held + s.proof_held + w.amount > total {
                break;
            }
            let w = s.proof_queue.pop_front().expect("a head");
            s.proof_held += w.amount;
            s.proving += 1;
            let _ = w.granted.send(());
        }
        if !s.proof_queue.is_empty() {
            (self.on_change)(usage(s));
            return;
        }
        while let Some(w) = s.online_queue.front() {
            if s.sessions >= self.limits.max_sessions
                || s.online_held + w.amount > self.half()
                || s.online_held + s.proof_held + w.amount > total
            {
                break;
            }
            let w = s.online_queue.pop_front().expect("a head");
            s.online_held += w.amount;
            s.sessions += 1;
            let _ = w.granted.send(());
        }
        (self.on_change)(usage(s));
    }

    fn release(&self, step: Step, amount: u64, held_for: Option<Duration>) {
        let mut s = self.lock();
        match step {
            Step::Online => {
                s.online_held -= amount;
                s.sessions -= 1;
                if let Some(d) = held_for {
                    let d = d.as_secs_f64();
                    s.mean_session = Some(s.mean_session.map_or(d, |m| 0.8 * m + 0.2 * d));
                }
            }
            Step::Proof => {
                s.proof_held -= amount;
                s.proving -= 1;
            }
        }
        self.grant(&mut s);
    }

    /// A hint for a refused client: about how long until a newcomer would be admitted, from
    /// the mean session time, the sessions waiting and those running (whole seconds, 1 to 600).
    pub(crate) fn retry_after(&self) -> u32 {
        let s = self.lock();
        let mean = s.mean_session.unwrap_or(1.0);
        let secs = mean * (s.online_queue.len() + 1) as f64 / s.sessions.max(1) as f64;
        secs.ceil().clamp(1.0, 600.0) as u32
    }
}

fn queue(s: &mut State, step: Step) -> &mut VecDeque<Waiter> {
    match step {
        Step::Online => &mut s.online_queue,
        Step::Proof => &mut s.proof_queue,
    }
}

fn usage(s: &State) -> Usage {
    Usage {
        reserved: s.online_held + s.proof_held,
        sessions: s.sessions,
        proving: s.proving,
        waiting: s.online_queue.len(),
    }
}

/// A reservation asked for: granted, or waiting in its queue. Dropped before it is granted,
/// it leaves the queue; dropped after, it gives the grant back.
pub(crate) struct Queued {
    budget: Arc<Budget>,
    step: Step,
    id: u64,
    amount: u64,
    granted: futures::channel::oneshot::Receiver<()>,
    done: bool,
}

impl Queued {
    /// 1-based place in the queue; `None` once granted.
    pub(crate) fn position(&self) -> Option<usize> {
        let mut s = self.budget.lock();
        queue(&mut s, self.step).iter().position(|w| w.id == self.id).map(|i| i + 1)
    }

    /// Completes once granted.
    pub(crate) async fn granted(&mut self) {
        // The sender is only dropped by sending (the waiter is removed from its queue only by
        // a grant, or by this handle's own drop).
        let _ = (&mut self.granted).await;
    }

    /// The grant, held until dropped. Call once [`granted`](Self::granted) completed.
    pub(crate) fn into_reservation(mut self) -> Reservation {
        self.done = true;
        Reservation { budget: self.budget.clone(), step: self.step, amount: self.amount, since: Instant::now() }
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut s = self.budget.lock();
        let queue = queue(&mut s, self.step);
        if let Some(i) = queue.iter().position(|w| w.id == self.id) {
            queue.remove(i);
            // the head leaving may let the next one in
            self.budget.grant(&mut s);
        } else {
            drop(s);
            self.budget.release(self.step, self.amount, None);
        }
    }
}

/// Memory (and for a proof, a proving slot) held by a session until dropped.
pub(crate) struct Reservation {
    budget: Arc<Budget>,
    step: Step,
    amount: u64,
    since: Instant,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.release(self.step, self.amount, Some(self.since.elapsed()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    const MB: u64 = 1 << 20;

    fn budget(memory: u64, max_proving: usize) -> Arc<Budget> {
        Budget::new(BudgetLimits { memory, max_proving, max_sessions: 100 }, |_| {})
    }

    fn granted(q: &mut Queued) -> bool {
        q.granted().now_or_never().is_some()
    }

    #[test]
    fn grants_what_fits_and_queues_the_rest_in_order() {
        let b = budget(100 * MB, 4);
        let mut a = b.ask_online(30 * MB, 10).unwrap();
        let mut c = b.ask_online(30 * MB, 10).unwrap();
        assert!(granted(&mut a) && !granted(&mut c), "online reservations share half the budget");
        assert_eq!((a.position(), c.position()), (None, Some(1)));
        let mut d = b.ask_online(5 * MB, 10).unwrap();
        // first in, first out: the small one waits behind the large one
        assert!(!granted(&mut d));
        assert_eq!(d.position(), Some(2));
        let a = a.into_reservation();
        assert_eq!(b.usage().reserved, 30 * MB);
        drop(a);
        assert!(granted(&mut c) && granted(&mut d));
        assert_eq!(b.usage().reserved, 35 * MB);
        let (c, d) = (c.into_reservation(), d.into_reservation());
        drop((c, d));
        assert_eq!(b.usage().reserved, 0);
    }

    #[test]
    fn a_full_queue_refuses_and_a_waiter_that_leaves_frees_its_place() {
        let b = budget(100 * MB, 4);
        // without a queue, what fits is still granted
        let mut at_once = b.ask_online(MB, 0).unwrap();
        assert!(granted(&mut at_once));
        drop(at_once);
        let held = b.ask_online(50 * MB, 1).unwrap();
        let waiting = b.ask_online(10 * MB, 1).unwrap();
        assert!(b.ask_online(10 * MB, 1).is_none());
        assert_eq!(b.usage().waiting, 1);
        drop(waiting);
        assert_eq!(b.usage().waiting, 0);
        let mut next = b.ask_online(10 * MB, 1).unwrap();
        assert!(!granted(&mut next));
        drop(held); // a granted but unclaimed reservation gives its grant back too
        assert!(granted(&mut next));
        assert_eq!(b.usage().reserved, 10 * MB);
    }

    #[test]
    fn proofs_go_before_new_sessions_and_never_deadlock() {
        let b = budget(100 * MB, 4);
        // two sessions fill the online half
        let mut s1 = b.ask_online(25 * MB, 10).unwrap();
        let mut s2 = b.ask_online(25 * MB, 10).unwrap();
        assert!(granted(&mut s1) && granted(&mut s2));
        let (s1, s2) = (s1.into_reservation(), s2.into_reservation());
        // both ask for proofs as large as they may be (clamped to the other half)
        let mut p1 = b.ask_proof(500 * MB);
        let mut p2 = b.ask_proof(50 * MB);
        assert!(granted(&mut p1) && !granted(&mut p2));
        // a newcomer waits while a proof waits, even if it would fit
        drop(s2);
        let mut newcomer = b.ask_online(MB, 10).unwrap();
        assert!(!granted(&mut newcomer));
        // the first proof ends: the second runs, then the newcomer
        drop(p1.into_reservation());
        assert!(granted(&mut p2));
        assert!(granted(&mut newcomer));
        drop((s1, p2, newcomer));
        assert_eq!(b.usage().reserved, 0);
    }

    #[test]
    fn proving_slots_bound_the_proofs_at_once() {
        let b = budget(1000 * MB, 2);
        let mut p: Vec<_> = (0..3).map(|_| b.ask_proof(MB)).collect();
        assert_eq!(p.iter_mut().map(granted).collect::<Vec<_>>(), [true, true, false]);
        let first = p.remove(0).into_reservation();
        drop(first);
        assert!(granted(&mut p[1]));
    }

    #[test]
    fn the_retry_hint_grows_with_the_queue() {
        let b = budget(100 * MB, 4);
        let _held = b.ask_online(50 * MB, 100).unwrap();
        let alone = b.retry_after();
        let _waiting: Vec<_> = (0..20).map(|_| b.ask_online(MB, 100).unwrap()).collect();
        assert!(b.retry_after() > alone, "{} vs {alone}", b.retry_after());
        assert!((1..=600).contains(&b.retry_after()));
    }
}
