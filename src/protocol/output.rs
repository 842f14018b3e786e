//! What the verifier concludes from a session, in a form a program or a person can read.

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// One direction of the verified transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedDirection {
    /// Application-data length (every byte's existence is proven; hidden bytes are 0 here).
    pub len: u64,
    pub bytes: Vec<u8>,
    /// Revealed ranges (canonical).
    pub revealed: Vec<Range<u64>>,
    /// Whether this direction took the full-reveal fast path (its key was opened).
    pub fast_path: bool,
}

impl VerifiedDirection {
    /// Revealed bytes as text (lossy UTF-8 per range), hidden bytes as `█`.
    pub fn printable(&self) -> String {
        let mut out = String::new();
        let mut at = 0u64;
        for r in &self.revealed {
            for _ in at..r.start {
                out.push('█');
            }
            out.push_str(&String::from_utf8_lossy(&self.bytes[r.start as usize..r.end as usize]));
            at = r.end;
        }
        for _ in at..self.len {
            out.push('█');
        }
        out
    }

    /// Whether every byte of `range` was revealed.
    pub fn is_revealed(&self, range: Range<u64>) -> bool {
        self.revealed.iter().any(|r| r.start <= range.start && range.end <= r.end)
    }
}

/// Time and traffic of one phase, as measured by the party that reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    pub millis: f64,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

/// Per-phase figures: preprocess (OT setup), online (TLS session), prove (the ZK proof).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionStats {
    pub preprocess: PhaseStats,
    pub online: PhaseStats,
    pub prove: PhaseStats,
}

/// The verifier's result: the server it talked to and what it learned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifierOutput {
    /// The name the server's certificate was validated for.
    pub server_name: String,
    /// `HOST:PORT` the verifier connected to.
    pub server: String,
    /// Unix seconds when the verifier connected to the server.
    pub connection_time: u64,
    pub sent: VerifiedDirection,
    pub received: VerifiedDirection,
    /// Proven SHA-256 commitments to (hidden) ranges.
    pub commitments: Vec<super::proof::Commitment>,
    /// As seen by the verifier (bytes up = prover → verifier).
    pub stats: SessionStats,
}

impl std::fmt::Display for VerifierOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = |d: &VerifiedDirection| if d.fast_path { "fast path (key opened)" } else { "ZK path" };
        writeln!(f, "server: {} ({}), connected at {} (unix)", self.server_name, self.server, self.connection_time)?;
        writeln!(f, "sent {} bytes, {}:", self.sent.len, path(&self.sent))?;
        writeln!(f, "{}", self.sent.printable())?;
        writeln!(f, "received {} bytes, {}:", self.received.len, path(&self.received))?;
        writeln!(f, "{}", self.received.printable())?;
        for c in &self.commitments {
            let hex: String = c.digest.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(f, "commitment to {} bytes {}..{}: SHA-256 {hex}", c.direction, c.range.start, c.range.end)?;
        }
        let s = &self.stats;
        write!(
            f,
            "timings: preprocess {:.0} ms, online {:.0} ms, prove {:.0} ms; prover→verifier {} B, verifier→prover {} B",
            s.preprocess.millis,
            s.online.millis,
            s.prove.millis,
            s.preprocess.bytes_up + s.online.bytes_up + s.prove.bytes_up,
            s.preprocess.bytes_down + s.online.bytes_down + s.prove.bytes_down
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_marks_hidden_bytes() {
        let d = VerifiedDirection { len: 10, bytes: b"ab\0\0\0fghij".to_vec(), revealed: vec![0..2, 5..10], fast_path: false };
        assert_eq!(d.printable(), "ab███fghij");
        assert!(d.is_revealed(6..9) && !d.is_revealed(1..3));
    }
}
