//! The proof of the statements about hidden values of the requests and responses
//! (docs/protocol.md, "Statements about hidden values"), the same for both TLS versions and run
//! per direction: per statement one batch that computes its value's plaintext in ZK
//! (ciphertext ⊕ keystream, as for revealed bytes) and asserts every output of
//! [`claim_circuit`] true; then the hidden string bytes of the stated messages' bodies,
//! asserted string content (neither quote, backslash nor control byte), in batches of a
//! bounded number of keystream blocks.

use crate::channel::Channel;
use crate::circuits::statement::{claim_circuit, content};
use crate::cost::BLOCKS_PER_BATCH;
use crate::primitives::sbox_circuit::Gates;
use crate::protocol::disclose::reveal::RevealPlan;
use crate::protocol::disclose::statement::StatementPlan;
use crate::zk::{Backend, Party, ProofError};
use std::ops::Range;

/// What both parties prove of the directions beside their reveals.
#[derive(Clone, Copy, Default)]
pub struct StatementInputs<'a> {
    pub statements: &'a [StatementPlan],
    /// Hidden string bytes to prove content, per direction (canonical).
    pub content: [&'a [Range<u64>]; 2],
}

impl<'a> StatementInputs<'a> {
    /// A reveal plan's statements and content.
    pub fn of(plan: &'a RevealPlan) -> Self {
        StatementInputs {
            statements: &plan.statements,
            content: [&plan.string_content_sent, &plan.string_content_received],
        }
    }

    /// Whether direction `side` (0 sent, 1 received) has nothing to prove.
    pub fn is_empty(&self, side: usize) -> bool {
        self.content[side].is_empty() && !self.statements.iter().any(|s| s.direction.index() == side)
    }
}

/// Runs the batches of direction `side` (0 sent, 1 received); `plaintext` gives the bits (8
/// per byte, least significant first) of that direction's plaintext at some ranges, computed
/// in ZK. The last batch is checked unless `more_follow` (the caller's next checked batch then
/// checks it). A statement that fails is named by its place in the plan, from 1.
pub(crate) async fn prove<P: Party<C>, C: Channel>(
    party: &mut P,
    ch: &mut C,
    inputs: StatementInputs<'_>,
    side: usize,
    more_follow: bool,
    plaintext: &dyn Fn(&mut P::Backend, &[Range<u64>]) -> Vec<<P::Backend as Gates>::Bit>,
) -> Result<(), ProofError> {
    let pieces = batch_pieces(inputs.content[side].iter().cloned());
    let stated: Vec<(usize, &StatementPlan)> =
        inputs.statements.iter().enumerate().filter(|(_, s)| s.direction.index() == side).collect();
    let batches = stated.len() + pieces.len();
    for (n, &(k, s)) in stated.iter().enumerate() {
        party
            .run_batch_unless_more(ch, n + 1 < batches || more_follow, &mut |b: &mut P::Backend| {
                let bits = plaintext(b, &s.value);
                let holds = claim_circuit(b, &bits, &s.statement.claim);
                b.assert_constant(&holds, &vec![true; holds.len()]);
            })
            .await
            .map_err(|e| match e {
                ProofError::ConstantMismatch => ProofError::StatementNotProven(k + 1),
                e => e,
            })?;
    }
    for (k, piece) in pieces.iter().enumerate() {
        let k = stated.len() + k;
        party
            .run_batch_unless_more(ch, k + 1 < batches || more_follow, &mut |b: &mut P::Backend| {
                let bits = plaintext(b, piece);
                let flags: Vec<_> = bits.chunks_exact(8).map(|x| content(b, x)).collect();
                let mut expected = vec![true; flags.len()];
                if bits.len() % 8 != 0 {
                    // a partial byte: lengths unequal, so the batch fails rather than passes it
                    expected.push(true);
                }
                b.assert_constant(&flags, &expected);
            })
            .await
            .map_err(|e| match e {
                ProofError::ConstantMismatch => ProofError::HiddenNotContent,
                e => e,
            })?;
    }
    Ok(())
}

/// `ranges` in groups that touch at most [`BLOCKS_PER_BATCH`] 16-byte blocks (a range of n
/// bytes touches at most n/16 + 2; one that alone touches more is split).
pub(crate) fn batch_pieces(ranges: impl Iterator<Item = Range<u64>>) -> Vec<Vec<Range<u64>>> {
    let most = 16 * (BLOCKS_PER_BATCH as u64 - 2);
    let blocks = |r: &Range<u64>| (r.end - r.start).div_ceil(16) as usize + 2;
    let mut pieces: Vec<Vec<Range<u64>>> = Vec::new();
    let mut budget = 0;
    for h in ranges {
        for start in (h.start..h.end).step_by(most as usize) {
            let r = start..(start + most).min(h.end);
            if pieces.is_empty() || budget + blocks(&r) > BLOCKS_PER_BATCH {
                pieces.push(Vec::new());
                budget = 0;
            }
            budget += blocks(&r);
            pieces.last_mut().expect("a piece").push(r);
        }
    }
    pieces
}
