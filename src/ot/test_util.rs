//! Helpers shared by the COT tests (KOS, SoftSpokenOT, Ferret).

use super::{CotError, CotReceiver, CotSender};
use crate::channel::Channel;
use crate::primitives::field::F128;
use futures::executor::block_on;
use futures::future::join;

/// n random correlations under `delta`, as a COT extension delivers them: the sender's keys K,
/// the receiver's choices c and MACs K ⊕ c·Δ (for tests of what runs on COTs).
pub(crate) fn random_cots(delta: F128, n: usize) -> (Vec<F128>, Vec<bool>, Vec<F128>) {
    use rand::Rng;
    let mut rng = rand::rng();
    let keys: Vec<F128> = (0..n).map(|_| F128(rng.random())).collect();
    let choices: Vec<bool> = (0..n).map(|_| rng.random()).collect();
    let macs = keys.iter().zip(&choices).map(|(k, &c)| *k + delta.select(c)).collect();
    (keys, choices, macs)
}

/// Every correlation satisfies M = K ⊕ u·Δ.
pub(crate) fn assert_correlated(delta: F128, keys: &[F128], bits: &[bool], macs: &[F128]) {
    assert_eq!(keys.len(), bits.len());
    assert_eq!(keys.len(), macs.len());
    for i in 0..keys.len() {
        assert_eq!(macs[i], keys[i] + delta.select(bits[i]), "correlation {i} broken");
    }
}

pub(crate) type SendOut<A> = (Option<A>, Result<Vec<F128>, CotError>);
pub(crate) type RecvOut<B> = (Option<B>, Result<(Vec<bool>, Vec<F128>), CotError>);

/// One extend on both sides. Each side owns its channel end and drops it when it fails, or
/// when it returns another number of correlations than asked (it then skipped some of the
/// protocol), so the peer returns instead of waiting forever; a side's end comes back only if
/// it succeeded.
pub(crate) fn extend_both<S: CotSender, R: CotReceiver, A: Channel, B: Channel>(
    s: &mut S,
    r: &mut R,
    mut cv: A,
    mut cp: B,
    n: usize,
) -> (SendOut<A>, RecvOut<B>) {
    let fv = async {
        let res = s.extend(&mut cv, n).await;
        (res.as_ref().is_ok_and(|keys| keys.len() == n).then_some(cv), res)
    };
    let fp = async {
        let res = r.extend(&mut cp, n).await;
        (res.as_ref().is_ok_and(|(bits, macs)| bits.len() == n && macs.len() == n).then_some(cp), res)
    };
    block_on(join(fv, fp))
}

/// What [`run_extend`] gives back: both parties, the surviving channel ends and the results.
pub(crate) struct Outcome<S, R, A, B> {
    pub sender: S,
    pub receiver: R,
    pub cv: Option<A>,
    pub cp: Option<B>,
    pub keys: Result<Vec<F128>, CotError>,
    pub cots: Result<(Vec<bool>, Vec<F128>), CotError>,
}

/// [`extend_both`] on owned parties, handing them back for further calls.
pub(crate) fn run_extend<S: CotSender, R: CotReceiver, A: Channel, B: Channel>(
    mut sender: S,
    mut receiver: R,
    cv: A,
    cp: B,
    n: usize,
) -> Outcome<S, R, A, B> {
    let ((cv, keys), (cp, cots)) = extend_both(&mut sender, &mut receiver, cv, cp, n);
    Outcome { sender, receiver, cv, cp, keys, cots }
}
