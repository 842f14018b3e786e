//! AND triples folded into their check rows while the circuit is still being evaluated.
//!
//! The batched check ([`super::check`]) weights gate j of packed row r by χ^(r+1)·x^(L−1−j),
//! so a row's sums g_r = Σ_j x^(L−1−j)·(the gate's terms) do not depend on χ. [`AndRows`]
//! therefore sums every full chunk of rows on the rayon pool as soon as the circuit has made
//! it, while the party goes on evaluating the (serial) circuit, and the check only combines
//! the row sums with χ. A party keeps 32 bytes per 128 gates instead of 48 bytes per gate, and
//! the field products overlap the circuit evaluation instead of following it. The sums are
//! exactly those of the whole-batch computation, in the same row layout, across deferred
//! batches too, so prover and verifier agree and the check's soundness is unchanged.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use zeroize::Zeroize;

use super::check::{and_rows_sum, Challenge, AND_ROW};
use crate::primitives::field::F128;

/// Gates per chunk handed to the pool: whole rows, a task of tens of microseconds.
const CHUNK_GATES: usize = 2048;
const CHUNK_ROWS: usize = CHUNK_GATES / AND_ROW;
const _: () = assert!(CHUNK_GATES.is_multiple_of(AND_ROW));
/// Wiped chunk buffers kept for reuse (more are freed): enough for the chunks a pool of a few
/// threads has in hand, so a long batch does not keep a buffer per chunk it made.
const SPARE_MAX: usize = 8;

/// One party's AND triples ([M_x, M_y, A1] or [K_x, K_y, K_z]) since the last check, as row
/// sums (finished chunks) plus the triples of the chunk being filled.
#[derive(Default)]
pub(crate) struct AndRows {
    /// The chunk being filled (fewer than `CHUNK_GATES` triples).
    staged: Vec<[F128; 3]>,
    /// Chunks handed to the pool, oldest first.
    pending: VecDeque<Arc<ChunkSlot>>,
    /// Row sums of the collected chunks, in row order.
    rows: Vec<[F128; 2]>,
    /// Wiped chunk buffers to reuse.
    spare: Vec<Vec<[F128; 3]>>,
    gates: usize,
}

impl AndRows {
    /// Gates since the last check ([`take_sum`](Self::take_sum)).
    pub(crate) fn gates(&self) -> usize {
        self.gates
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.gates == 0
    }

    #[inline]
    pub(crate) fn push(&mut self, triple: [F128; 3]) {
        if self.staged.capacity() == 0 {
            self.staged = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(CHUNK_GATES));
        }
        self.staged.push(triple);
        self.gates += 1;
        if self.staged.len() == CHUNK_GATES {
            self.hand_off();
        }
    }

    /// Sends the full staged chunk to the pool, and collects the chunks already summed.
    fn hand_off(&mut self) {
        let chunk = std::mem::take(&mut self.staged);
        let slot = Arc::new(ChunkSlot { state: Mutex::new(SlotState::Queued(chunk)), done: Condvar::new() });
        self.pending.push_back(Arc::clone(&slot));
        rayon::spawn(move || slot.run_queued());
        while self.pending.front().is_some_and(|s| s.is_done()) {
            self.collect_front();
        }
    }

    /// Waits for (or computes) the oldest pending chunk and appends its rows.
    fn collect_front(&mut self) {
        if let Some(slot) = self.pending.pop_front() {
            let (mut sums, buffer) = slot.wait();
            self.rows.extend_from_slice(&sums);
            sums.zeroize();
            if self.spare.len() < SPARE_MAX {
                self.spare.push(buffer);
            }
        }
    }

    /// The AND gates' part of the check under `ch` ([`and_rows_sum`] over every row); the rows
    /// start again empty.
    pub(crate) fn take_sum(&mut self, ch: &Challenge) -> (F128, F128) {
        let mut rows = self.take_rows();
        let sums = and_rows_sum(ch, &rows);
        rows.zeroize();
        sums
    }

    /// Every row's sums (g0_r, g1_r), in row order; the rows start again empty. The last row
    /// may be partial. The caller wipes the result.
    fn take_rows(&mut self) -> Vec<[F128; 2]> {
        while !self.pending.is_empty() {
            self.collect_front();
        }
        for row in self.staged.chunks(AND_ROW) {
            let (g0, g1) = F128::and_row_sums(row);
            self.rows.push([g0, g1]);
        }
        self.staged.zeroize();
        self.staged.clear();
        self.gates = 0;
        std::mem::take(&mut self.rows)
    }

    /// Drops every triple and row sum (wiped); chunks still on the pool wipe themselves.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.rows.zeroize();
        self.rows.clear();
        self.staged.zeroize();
        self.staged.clear();
        self.gates = 0;
    }
}

impl Drop for AndRows {
    fn drop(&mut self) {
        self.clear();
    }
}

/// A chunk on its way through the pool. Whoever takes it first sums it: a pool thread, or the
/// party itself when it needs the sums before a thread got to them (so waiting never depends
/// on a free pool thread).
struct ChunkSlot {
    state: Mutex<SlotState>,
    done: Condvar,
}

// The finished row sums sit in the slot (a few hundred bytes, once per chunk); boxing them
// would add an allocation per chunk for nothing.
#[allow(clippy::large_enum_variant)]
enum SlotState {
    Queued(Vec<[F128; 3]>),
    Running,
    /// The row sums and the wiped buffer.
    Done([[F128; 2]; CHUNK_ROWS], Vec<[F128; 3]>),
    Collected,
}

impl ChunkSlot {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_done(&self) -> bool {
        matches!(*self.lock(), SlotState::Done(..))
    }

    /// The pool's task: sums the chunk unless the party took it already.
    fn run_queued(&self) {
        let chunk = {
            let mut state = self.lock();
            match std::mem::replace(&mut *state, SlotState::Running) {
                SlotState::Queued(chunk) => chunk,
                other => {
                    *state = other;
                    return;
                }
            }
        };
        let (sums, buffer) = sum_chunk(chunk);
        *self.lock() = SlotState::Done(sums, buffer);
        self.done.notify_all();
    }

    /// The row sums and the buffer, summing here if no pool thread has started.
    fn wait(&self) -> ([[F128; 2]; CHUNK_ROWS], Vec<[F128; 3]>) {
        let mut state = self.lock();
        loop {
            match std::mem::replace(&mut *state, SlotState::Collected) {
                SlotState::Queued(chunk) => {
                    drop(state);
                    return sum_chunk(chunk);
                }
                SlotState::Running => {
                    *state = SlotState::Running;
                    state = self.done.wait(state).unwrap_or_else(PoisonError::into_inner);
                }
                SlotState::Done(sums, buffer) => return (sums, buffer),
                SlotState::Collected => unreachable!("a chunk is collected once"),
            }
        }
    }
}

impl Drop for ChunkSlot {
    fn drop(&mut self) {
        match self.state.get_mut().unwrap_or_else(PoisonError::into_inner) {
            SlotState::Queued(chunk) => chunk.zeroize(),
            SlotState::Done(sums, _) => sums.zeroize(),
            SlotState::Running | SlotState::Collected => {}
        }
    }
}

/// A full chunk's row sums; the chunk comes back wiped and empty.
fn sum_chunk(mut chunk: Vec<[F128; 3]>) -> ([[F128; 2]; CHUNK_ROWS], Vec<[F128; 3]>) {
    let mut sums = [[F128::ZERO; 2]; CHUNK_ROWS];
    for (s, row) in sums.iter_mut().zip(chunk.chunks(AND_ROW)) {
        let (g0, g1) = F128::and_row_sums(row);
        *s = [g0, g1];
    }
    chunk.zeroize();
    chunk.clear();
    (sums, chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn random_triples(n: usize) -> Vec<[F128; 3]> {
        let mut rng = rand::rng();
        (0..n).map(|_| [0; 3].map(|_: i32| F128(rng.random()))).collect()
    }

    /// The check's AND part by its definition: gate j of row r (of length L) weighted by
    /// χ^(r+1)·x^(L−1−j).
    fn by_definition(chi: F128, triples: &[[F128; 3]]) -> (F128, F128) {
        let (mut e0, mut e1) = (F128::ZERO, F128::ZERO);
        for (r, row) in triples.chunks(AND_ROW).enumerate() {
            for (j, t) in row.iter().enumerate() {
                let c = chi.pow(r as u128 + 1) * F128::x_pow(row.len() - 1 - j);
                e0 += c * t[0] * t[1];
                e1 += c * t[2];
            }
        }
        (e0, e1)
    }

    /// Pushed in several runs (as deferred batches do), with chunks summed on the pool, by the
    /// party itself, or still staged, the sums equal the definition's over the concatenation,
    /// and the rows start again empty after each check.
    #[test]
    fn row_sums_across_pushes_and_checks_match_the_definition() {
        let mut rows = AndRows::default();
        for runs in [vec![0], vec![1], vec![127, 1], vec![2048], vec![2047, 2, 2048], vec![5000, 3000, 300]] {
            let all: Vec<[F128; 3]> = runs.iter().flat_map(|&n| random_triples(n)).collect();
            for t in &all {
                rows.push(*t);
            }
            assert_eq!(rows.gates(), all.len());
            assert_eq!(rows.is_empty(), all.is_empty());
            let seed: [u8; 16] = rand::rng().random();
            let ch = Challenge::new(seed, rows.gates(), 0);
            let sums = rows.take_rows();
            assert_eq!(sums.len(), all.len().div_ceil(AND_ROW), "{runs:?}");
            assert_eq!(and_rows_sum(&ch, &sums), by_definition(F128::from_le_bytes(seed), &all), "{runs:?}");
            assert!(rows.is_empty() && rows.take_rows().is_empty());
        }
    }

    /// A chunk the party needs before any pool thread started it is summed in place.
    #[test]
    fn a_queued_chunk_is_summed_by_whoever_takes_it_first() {
        let triples = random_triples(CHUNK_GATES);
        let expected = sum_chunk(triples.clone()).0;
        let slot = ChunkSlot { state: Mutex::new(SlotState::Queued(triples.clone())), done: Condvar::new() };
        assert_eq!(slot.wait().0, expected);
        let slot = ChunkSlot { state: Mutex::new(SlotState::Queued(triples)), done: Condvar::new() };
        slot.run_queued();
        assert!(slot.is_done());
        let (sums, buffer) = slot.wait();
        assert_eq!(sums, expected);
        assert!(buffer.is_empty() && buffer.capacity() >= CHUNK_GATES, "the buffer comes back for reuse");
    }
}
