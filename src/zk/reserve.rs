//! COTs made ahead of the pool, in the chunks they were made in (see `crate::mpc::cots_beside`):
//! the pool takes them a whole chunk at a time, before it asks the COT source for more, so a
//! few million of them are never copied into one vector at once, and both parties take the
//! same ones (each take depends only on counts both know).

use std::collections::VecDeque;
use zeroize::{DefaultIsZeroes, Zeroize};

/// Values in chunks, taken from the front. Wiped when dropped (they are MACs or keys).
pub(crate) struct Reserve<T: DefaultIsZeroes> {
    chunks: VecDeque<Vec<T>>,
}

impl<T: DefaultIsZeroes> Default for Reserve<T> {
    fn default() -> Self {
        Reserve { chunks: VecDeque::new() }
    }
}

impl<T: DefaultIsZeroes> Reserve<T> {
    /// Appends chunks, after those already held.
    pub(crate) fn append(&mut self, chunks: impl IntoIterator<Item = Vec<T>>) {
        self.chunks.extend(chunks.into_iter().filter(|c| !c.is_empty()));
    }

    /// The front chunk (`None` when none is left).
    pub(crate) fn next(&mut self) -> Option<Vec<T>> {
        self.chunks.pop_front()
    }
}

impl<T: DefaultIsZeroes> Drop for Reserve<T> {
    fn drop(&mut self) {
        self.chunks.iter_mut().for_each(|c| c.zeroize());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_out_whole_in_order() {
        let mut r = Reserve::default();
        r.append([vec![1u64, 2, 3], vec![], vec![4, 5]]);
        r.append([vec![6]]);
        assert_eq!(r.next(), Some(vec![1, 2, 3]));
        assert_eq!(r.next(), Some(vec![4, 5]));
        assert_eq!(r.next(), Some(vec![6]));
        assert_eq!(r.next(), None);
    }
}
