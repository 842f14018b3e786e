//! COTs made ahead of the pool, in the chunks they were made in (see `crate::mpc::beside`):
//! the pool takes them from the front before it asks the COT source for more, so a few million
//! of them are never copied into one vector all at once, and both parties take the same ones.

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

    /// Up to `n` values from the front (`None` when empty): the front chunk whole when it
    /// holds at most `n`, else its first `n`.
    pub(crate) fn take(&mut self, n: usize) -> Option<Vec<T>> {
        let mut chunk = self.chunks.pop_front()?;
        if chunk.len() > n {
            let rest = chunk[n..].to_vec();
            chunk[n..].zeroize();
            chunk.truncate(n);
            self.chunks.push_front(rest);
        }
        Some(chunk)
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
    fn values_come_out_in_order_whole_chunks_or_split() {
        let mut r = Reserve::default();
        r.append([vec![1u64, 2, 3], vec![], vec![4, 5]]);
        assert_eq!(r.take(2), Some(vec![1, 2]));
        assert_eq!(r.take(5), Some(vec![3]));
        assert_eq!(r.take(5), Some(vec![4, 5]));
        assert_eq!(r.take(1), None);
    }
}
