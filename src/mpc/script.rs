//! What a two-party connection did, as the proof of the garbling replays it: the public
//! script of its phases, which both parties record ([`super::connection`]), and the prover's
//! circuit inputs as it committed them ([`super::reproof`] proves over both).

use super::kdf::KdfInputs;
use super::sealing::RecordCipher;
use super::shared_secret::SharedGroup;

/// The public parameters of a connection's handshake phases.
#[derive(Clone, Debug)]
pub enum HandshakeScript {
    /// TLS 1.2: the key derivation's inputs ([`super::handshake`]).
    Tls12(KdfInputs),
    /// TLS 1.3: the group of the shares, the cipher of the suite the server chose, and the
    /// transcript hashes the key schedule's secrets are derived over ([`super::kdf13`]).
    Tls13 { group: SharedGroup, cipher: RecordCipher, hello_hash: [u8; 32], server_finished_hash: [u8; 32] },
}

/// The public parameters of a connection's phases, as both parties recorded them.
#[derive(Clone, Debug)]
pub struct SessionScript {
    pub handshake: HandshakeScript,
    /// Whether the request's records were garbled ahead of the handshake, under a key
    /// schedule of their own (a phase of its own, before them).
    pub requests_ahead: bool,
    /// (sequence number, length) of every request record.
    pub requests: Vec<(u64, usize)>,
    /// (sequence number, length) of the records the client sealed after the response: its
    /// close_notify.
    pub closing: Vec<(u64, usize)>,
}

/// P's circuit inputs as committed in the ZK engine during the connection: the share of the
/// key exchange's secret and the handshake's masks, then per request record its keystream
/// mask and its cipher's tail mask (E_K(J0)'s, or r's and then P's share of the Poly1305
/// polynomial), and per closing record its inputs as a request's.
pub struct CommittedInputs<W> {
    pub handshake: Vec<W>,
    pub requests: Vec<Vec<W>>,
    pub closing: Vec<Vec<W>>,
}
