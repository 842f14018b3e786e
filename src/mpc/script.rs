//! What a two-party connection did, as the proof of the garbling replays it: the public
//! script of its phases, which both parties record ([`super::connection`]), and the prover's
//! circuit inputs as it committed them ([`super::reproof`] proves over both).

use super::kdf::KdfInputs;

/// The public parameters of a connection's phases, as both parties recorded them.
#[derive(Clone, Debug)]
pub struct SessionScript {
    pub kdf: KdfInputs,
    /// Whether the request's records were garbled ahead of the handshake, under a key
    /// schedule of their own (a phase of its own, before them).
    pub requests_ahead: bool,
    /// (sequence number, length) of every request record.
    pub requests: Vec<(u64, usize)>,
    /// (sequence number, length) of the records the client sealed after the response: its
    /// close_notify.
    pub closing: Vec<(u64, usize)>,
}

/// P's circuit inputs as committed in the ZK engine during the connection: the premaster
/// share and the handshake's masks, then per request record its keystream and E_K(J0) masks,
/// and per closing record its masks as a request's.
pub struct CommittedInputs<W> {
    pub handshake: Vec<W>,
    pub requests: Vec<Vec<W>>,
    pub closing: Vec<Vec<W>>,
}
