//! The verdict as it travels to the prover: without the bytes of either direction, which the
//! prover already holds, so its size does not grow with the transcript (a 16 MB response
//! would not fit one multiplexer frame, and would cross the link a second time). In their
//! place, the SHA-256 of each direction's bytes as the verifier verified them: the prover
//! puts its own plaintext back and accepts the verdict only if the digests match, so the
//! verdict it shows is the one the verifier reached, byte for byte.

use super::output::{VerifiedDirection, VerifierOutput};
use serde::{Deserialize, Serialize};

/// Verifier → prover: the verdict without its bytes ([`LeanVerdict::of`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeanVerdict {
    /// The verdict with both directions' `bytes` left empty.
    output: VerifierOutput,
    /// SHA-256 of the sent and the received `bytes`, as the verifier holds them.
    digests: [[u8; 32]; 2],
}

/// The verifier's verdict is not of this session's bytes: a verifier that misbehaves, or a
/// transcript the two sides read differently.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    #[error("the verdict counts {verdict} {direction} bytes; this session has {ours}")]
    Length { direction: &'static str, verdict: u64, ours: u64 },
    #[error("the verdict reveals {direction} bytes {start}..{end}, outside the {len} there are")]
    Range { direction: &'static str, start: u64, end: u64, len: u64 },
    #[error("the {direction} bytes the verifier verified are not this session's (another SHA-256)")]
    Digest { direction: &'static str },
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0; 32];
    out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref());
    out
}

/// A direction without its bytes (every other field as it is).
fn without_bytes(d: &VerifiedDirection) -> VerifiedDirection {
    VerifiedDirection {
        len: d.len,
        bytes: Vec::new(),
        revealed: d.revealed.clone(),
        fast_path: d.fast_path,
        alerts: d.alerts.clone(),
        records: d.records.clone(),
    }
}

/// Puts `plaintext`'s revealed bytes back into `d` (hidden ones are zero, as the verifier
/// holds them) and checks them against `digest`.
fn restore(
    d: &mut VerifiedDirection,
    plaintext: &[u8],
    digest: &[u8; 32],
    direction: &'static str,
) -> Result<(), VerdictError> {
    let ours = plaintext.len() as u64;
    if d.len != ours {
        return Err(VerdictError::Length { direction, verdict: d.len, ours });
    }
    let mut bytes = vec![0; plaintext.len()];
    for r in &d.revealed {
        if r.start > r.end || r.end > d.len {
            return Err(VerdictError::Range { direction, start: r.start, end: r.end, len: d.len });
        }
        let r = r.start as usize..r.end as usize;
        bytes[r.clone()].copy_from_slice(&plaintext[r]);
    }
    if sha256(&bytes) != *digest {
        return Err(VerdictError::Digest { direction });
    }
    d.bytes = bytes;
    Ok(())
}

impl LeanVerdict {
    pub fn of(out: &VerifierOutput) -> Self {
        let output = VerifierOutput {
            mode: out.mode,
            server_name: out.server_name.clone(),
            server: out.server.clone(),
            sni: out.sni.clone(),
            tls: out.tls.clone(),
            connection_time: out.connection_time,
            sent: without_bytes(&out.sent),
            received: without_bytes(&out.received),
            exchanges: out.exchanges.clone(),
            commitments: out.commitments.clone(),
            statements: out.statements.clone(),
            stats: out.stats,
        };
        LeanVerdict { output, digests: [sha256(&out.sent.bytes), sha256(&out.received.bytes)] }
    }

    /// The whole verdict, its bytes taken from the prover's own plaintext of the session:
    /// an error if they are not the bytes the verifier verified.
    pub(crate) fn restore(self, sent: &[u8], received: &[u8]) -> Result<VerifierOutput, VerdictError> {
        let LeanVerdict { mut output, digests: [sent_digest, received_digest] } = self;
        restore(&mut output.sent, sent, &sent_digest, "sent")?;
        restore(&mut output.received, received, &received_digest, "received")?;
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::super::attest::tests::{verdict, REQUEST, RESPONSE, TOKEN};
    use super::*;

    #[test]
    fn the_verdict_travels_without_its_bytes_and_comes_back_whole_from_the_provers_plaintext() {
        let out = verdict().0;
        let lean = LeanVerdict::of(&out);
        assert!(lean.output.sent.bytes.is_empty() && lean.output.received.bytes.is_empty());
        let wire = postcard::to_allocvec(&lean).unwrap();
        let whole = postcard::to_allocvec(&out).unwrap();
        assert!(wire.len() + REQUEST.len() + RESPONSE.len() - 64 <= whole.len(), "{} {}", wire.len(), whole.len());
        let back: LeanVerdict = postcard::from_bytes(&wire).unwrap();
        assert_eq!(back.restore(REQUEST, RESPONSE).unwrap(), out);
    }

    /// The operator's log line holds no byte of the transcript, revealed or hidden.
    #[test]
    fn the_summary_line_holds_no_plaintext() {
        let out = verdict().0;
        let line = out.summary();
        assert!(line.starts_with("h.test (proxy mode, TLS 1.3, TLS_AES_128_GCM_SHA256): sent 49 bytes (44 revealed, ZK path), received 40 bytes (40 revealed, fast path), 1 exchange(s), status 200"), "{line}");
        for plaintext in ["GET", "/a", "X-Token", "12345", "HTTP/1.1", "OK", "hi"] {
            assert!(!line.contains(plaintext), "{plaintext:?} in {line}");
        }
    }

    #[test]
    fn a_verdict_of_other_bytes_lengths_or_ranges_than_the_session_is_refused() {
        let lean = LeanVerdict::of(&verdict().0);
        let mut other = RESPONSE.to_vec();
        *other.last_mut().unwrap() ^= 1;
        assert_eq!(lean.clone().restore(REQUEST, &other), Err(VerdictError::Digest { direction: "received" }));
        // a hidden byte that differs is no difference: the verifier holds zero there
        let mut hidden_other = REQUEST.to_vec();
        hidden_other[TOKEN.start as usize] ^= 1;
        assert!(lean.clone().restore(&hidden_other, RESPONSE).is_ok());
        let short = RESPONSE.len() as u64 - 1;
        assert_eq!(
            lean.clone().restore(REQUEST, &RESPONSE[1..]),
            Err(VerdictError::Length { direction: "received", verdict: short + 1, ours: short })
        );
        let len = REQUEST.len() as u64;
        let mut past = lean.clone();
        past.output.sent.revealed.push(len - 1..len + 1);
        assert_eq!(
            past.restore(REQUEST, RESPONSE),
            Err(VerdictError::Range { direction: "sent", start: len - 1, end: len + 1, len })
        );
        let mut backwards = lean;
        #[allow(clippy::reversed_empty_ranges)] // a verifier may send any range
        let backwards_range = 3..2;
        backwards.output.received.revealed = vec![backwards_range];
        assert!(matches!(backwards.restore(REQUEST, RESPONSE), Err(VerdictError::Range { direction: "received", .. })));
    }
}
