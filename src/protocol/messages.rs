//! Control messages between prover and verifier (postcard-encoded, one per control frame).
//!
//! Every message is decoded from one frame whose size the multiplexer already bounded; counts
//! inside (reveal ranges) are checked against [`MAX_RANGES`](crate::wire::session::MAX_RANGES) before use.

use serde::{Deserialize, Serialize};

pub(crate) use crate::protocol::disclose::reveal::RevealPlan;
pub use crate::wire::session::{SessionMode, TlsVersion, PROTOCOL_VERSION};

/// Prover → verifier: what session the prover wants notarized.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRequest {
    pub version: u16,
    pub mode: SessionMode,
    /// `HOST:PORT` of the server: the verifier dials it (proxy mode), or the prover's proxy
    /// does (MPC mode).
    pub server: String,
    /// The name the certificate must be valid for (SNI): the host of `server`, or the verifier
    /// refuses ([`ServerTarget`](crate::protocol::target::ServerTarget)).
    pub server_name: String,
    /// Most application bytes the prover will send / receive.
    pub max_sent: u32,
    pub max_recv: u32,
    /// Correlations both sides generate while the TLS session runs
    /// ([`proof::preprocess_cots`](crate::protocol::prove::tls12::preprocess_cots)); the verifier refuses more
    /// than a session within `max_sent` can use.
    pub preprocess: u32,
    /// The PRG of the proof engine's OT extension (the prover's choice: ChaCha12 in the
    /// browser, AES-128-CTR with AES-NI); the verifier accepts either.
    pub prg: crate::primitives::prg::PrgKind,
    /// Whether part of the response will stay hidden, so that it is proven in zero knowledge
    /// rather than by its opened key (the fast path). The verifier reserves memory by it
    /// ([`cost`](crate::protocol::admission::cost)), and in MPC mode makes COTs beside the
    /// connection for that proof only when it is set.
    pub response_in_zk: bool,
}

/// Prover → verifier after the TLS connection: how many raw bytes of each direction the
/// proof covers. `sent` must be everything relayed; `received` may stop before bytes the
/// server sent but the prover never used (e.g. a trailing close_notify).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsDone {
    pub sent: u64,
    pub received: u64,
}

/// Prover → verifier, with the reveal plan of a TLS 1.3 session: the shape of each
/// application record (after the encrypted handshake), per direction. The proof checks them
/// ([`check13`](crate::protocol::prove::tls13::check)).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordShapes {
    pub sent: Vec<crate::protocol::prove::tls13::check::RecordShape>,
    pub received: Vec<crate::protocol::prove::tls13::check::RecordShape>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ControlMessage {
    Request(SessionRequest),
    /// Verifier → prover: connected to the server (proxy mode), or ready for the connection
    /// in two parties (MPC mode), at `connection_time` (Unix seconds).
    Accepted {
        connection_time: u64,
    },
    /// Either side: the session ends now, with a reason for the other side's user.
    Abort {
        reason: String,
    },
    TlsDone(TlsDone),
    Reveal(RevealPlan),
    /// Verifier → prover: the verdict, so the prover can show exactly what the verifier saw,
    /// without the bytes the prover holds ([`LeanVerdict`](crate::protocol::disclose::verdict::LeanVerdict)).
    /// With it, when the verifier has a signing key, the signed attestation of that verdict.
    Verified {
        verdict: Box<crate::protocol::disclose::verdict::LeanVerdict>,
        attestation: Option<Box<crate::protocol::disclose::attest::Attested>>,
    },
    /// After `Reveal`, in a TLS 1.3 session only.
    RecordShapes(RecordShapes),
    /// Verifier → prover, before `Accepted`: the session waits for its turn, at `position` in
    /// the queue (1 = next). Sent when the wait begins, as the place changes, and every few
    /// seconds while it lasts, so the prover can show it and knows the verifier is there.
    Waiting {
        position: u32,
    },
    /// Verifier → prover, instead of `Accepted`: not admitted (the queue is full, the wait ran
    /// past its bound, the verifier is shutting down, or too many sessions from one address);
    /// try again after about `retry_after` seconds.
    Busy {
        reason: String,
        retry_after: u32,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    #[error("malformed control message: {0}")]
    Malformed(#[from] postcard::Error),
}

impl ControlMessage {
    pub fn encode(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("control messages always serialize")
    }

    pub fn decode(frame: &[u8]) -> Result<ControlMessage, MessageError> {
        Ok(postcard::from_bytes(frame)?)
    }

    /// Short name for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            ControlMessage::Request(_) => "Request",
            ControlMessage::Accepted { .. } => "Accepted",
            ControlMessage::Abort { .. } => "Abort",
            ControlMessage::TlsDone(_) => "TlsDone",
            ControlMessage::Reveal(_) => "Reveal",
            ControlMessage::Verified { .. } => "Verified",
            ControlMessage::RecordShapes(_) => "RecordShapes",
            ControlMessage::Waiting { .. } => "Waiting",
            ControlMessage::Busy { .. } => "Busy",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_garbage() {
        let m = ControlMessage::Reveal(RevealPlan {
            sent: vec![0..5, 9..10],
            received: vec![0..100],
            commit_sent: vec![],
            commit_received: vec![2..4],
            ..Default::default()
        });
        let back = ControlMessage::decode(&m.encode()).unwrap();
        assert!(matches!(back, ControlMessage::Reveal(p) if p.sent == vec![0..5, 9..10]));
        for junk in [&[][..], &[0xff][..], &[4, 0xff, 0xff, 0xff, 0xff, 0x0f][..]] {
            assert!(ControlMessage::decode(junk).is_err());
        }
    }

    #[test]
    fn session_request_carries_the_engine_prg_and_refuses_unknown_ones() {
        use crate::primitives::prg::PrgKind;
        for prg in [PrgKind::Aes128Ctr, PrgKind::ChaCha12] {
            let req = SessionRequest {
                version: PROTOCOL_VERSION,
                mode: SessionMode::Mpc,
                server: "h:1".into(),
                server_name: "h".into(),
                max_sent: 1,
                max_recv: 2,
                preprocess: 200_000,
                prg,
                response_in_zk: false,
            };
            let frame = ControlMessage::Request(req.clone()).encode();
            assert!(matches!(ControlMessage::decode(&frame), Ok(ControlMessage::Request(r)) if r == req));
            // the PRG is the last field but one: a variant index past the known ones is malformed
            let mut bad = frame.clone();
            let at = bad.len() - 2;
            bad[at] = 2;
            assert!(matches!(ControlMessage::decode(&bad), Err(MessageError::Malformed(_))));
            // and a request without it (protocol version 2) is refused too
            assert!(ControlMessage::decode(&frame[..frame.len() - 1]).is_err());
        }
    }
}
