//! What the verifier concludes from a session, in a form a program or a person can read.

use crate::wire::text::{content_lines, push_escaped, push_escaped_line, rfc3339};
use serde::{Deserialize, Serialize};
use std::ops::Range;

pub use crate::wire::session::Ending;

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
    /// The direction's TLS alerts as [level, description], in order; nothing follows one that
    /// ended it (see [`Self::ending`]).
    pub alerts: Vec<[u8; 2]>,
    /// TLS 1.3: each record after the handshake as proven, in order: where its content ends,
    /// its inner type byte, and the zero padding after it. Empty for TLS 1.2, whose records
    /// have neither.
    #[serde(default)]
    pub records: Vec<RecordLayout>,
}

/// A TLS 1.3 record's plaintext as proven: `content_len` bytes of content, then the inner
/// content type byte (23 application data, 21 alert, 22 handshake), then `padding` zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordLayout {
    pub content_len: usize,
    pub content_type: u8,
    pub padding: usize,
}

impl VerifiedDirection {
    /// Revealed bytes as text, hidden bytes as `█`, such that the server's bytes cannot pass
    /// for anything else: revealed text is lossy UTF-8 with control and invisible formatting
    /// characters, `\\` and `█` itself escaped (`\r`, `\x1b`, `\u{202e}`, `\u{2588}`), so only
    /// a hidden byte prints as `█` and no byte can move the cursor or rewrite a line. `\r\n`
    /// and `\n` stay line breaks. The exact bytes are in [`Self::bytes`].
    pub fn printable(&self) -> String {
        let mut out = String::new();
        let mut at = 0u64;
        for r in &self.revealed {
            for _ in at..r.start {
                out.push('█');
            }
            push_escaped(&mut out, &String::from_utf8_lossy(&self.bytes[r.start as usize..r.end as usize]));
            at = r.end;
        }
        for _ in at..self.len {
            out.push('█');
        }
        out
    }

    /// How the direction ended, from its alerts.
    pub fn ending(&self) -> Ending {
        match self.alerts.last() {
            Some([_, 0]) => Ending::CloseNotify,
            Some([2, d]) => Ending::FatalAlert(*d),
            _ => Ending::Open,
        }
    }

    /// Whether every byte of `range` was revealed.
    pub fn is_revealed(&self, range: Range<u64>) -> bool {
        self.revealed.iter().any(|r| r.start <= range.start && range.end <= r.end)
    }
}

/// A statement the verifier verified: the verdict's line `exchange N: STATEMENT: proven`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProvenStatement {
    /// The HTTP exchange (from 1) whose request (sent) or response (received) body holds the
    /// value.
    pub exchange: u64,
    pub direction: super::statement::Direction,
    pub statement: super::statement::Statement,
    /// Where the hidden value is in its direction (its length is public).
    pub value: Vec<Range<u64>>,
}

impl ProvenStatement {
    /// The value's length in bytes.
    pub fn value_len(&self) -> u64 {
        self.value.iter().map(|r| r.end - r.start).sum()
    }
}

/// A proven SHA-256 commitment to a plaintext range: digest = SHA-256(plaintext ‖ blinder).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Commitment {
    /// "sent" or "received".
    pub direction: String,
    pub range: Range<u64>,
    pub digest: [u8; 32],
}

/// One certified request and its response, as far as the revealed bytes show them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpExchange {
    /// The request's bytes in the sent direction.
    pub request: Range<u64>,
    /// The revealed request line, without CRLF (`None` when not revealed and not required).
    pub request_line: Option<String>,
    /// The response's bytes in the received direction; `None` when no byte answered it.
    pub response: Option<Range<u64>>,
    /// The response status code, when the status line is revealed.
    pub status: Option<u16>,
    /// Whether the response is complete by its own framing (Content-Length, chunked, or
    /// close-delimited and ended by close_notify); `None` when the framing is hidden.
    pub response_complete: Option<bool>,
}

/// Time and traffic of one phase, as measured by the party that reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    pub millis: f64,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

impl PhaseStats {
    /// The same phase with `(up, down)` more bytes (those of another channel).
    pub fn plus(self, (up, down): (u64, u64)) -> Self {
        PhaseStats { bytes_up: self.bytes_up + up, bytes_down: self.bytes_down + down, ..self }
    }
}

/// Per-phase figures: preprocess (OT setup), online (TLS session), prove (the ZK proof).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionStats {
    pub preprocess: PhaseStats,
    pub online: PhaseStats,
    pub prove: PhaseStats,
}

impl SessionStats {
    /// Bytes over all phases: (up, prover → verifier; down).
    pub fn bytes(&self) -> (u64, u64) {
        let phases = [self.preprocess, self.online, self.prove];
        (phases.iter().map(|p| p.bytes_up).sum(), phases.iter().map(|p| p.bytes_down).sum())
    }
}

/// The verifier's result: the server it talked to and what it learned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifierOutput {
    /// How the prover reached the server.
    pub mode: crate::wire::session::SessionMode,
    /// The name the server's certificate was validated for.
    pub server_name: String,
    /// `HOST:PORT`, always `server_name` and a port. Proxy mode: the address the verifier
    /// dialed. MPC mode: the address the prover says its proxy dialed; the verifier dialed
    /// nothing, so only the name is certified (by the certificate), not the port.
    pub server: String,
    /// The ClientHello's SNI, checked to be `server_name` (none when that is an IP literal).
    pub sni: Option<String>,
    /// What the server chose, read from the relayed ServerHello (and in TLS 1.2 its key
    /// exchange).
    pub tls: TlsParameters,
    /// Unix seconds when the verifier connected to the server.
    pub connection_time: u64,
    pub sent: VerifiedDirection,
    pub received: VerifiedDirection,
    /// The requests, in the order sent, each with its response, as the revealed bytes show them.
    pub exchanges: Vec<HttpExchange>,
    /// Proven SHA-256 commitments to (hidden) ranges.
    pub commitments: Vec<Commitment>,
    /// Statements about hidden values of the responses, proven in zero knowledge.
    pub statements: Vec<ProvenStatement>,
    /// As seen by the verifier (bytes up = prover → verifier).
    pub stats: SessionStats,
}

/// The TLS version, cipher suite and key-exchange group of the proven session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsParameters {
    pub version: crate::wire::session::TlsVersion,
    /// The suite's IANA name (`TLS_AES_128_GCM_SHA256`).
    pub cipher_suite: String,
    /// The key-exchange group's name (`x25519`, `secp256r1`).
    pub group: String,
    /// Their IANA code points, as the attestation states them.
    pub cipher_suite_id: u16,
    pub group_id: u16,
}

impl VerifierOutput {
    /// One line for an operator's log, with no byte of either direction's plaintext (not
    /// even revealed ones: the verdict goes to whoever asked for it, a log goes everywhere):
    /// the certified server, the mode and TLS parameters, each direction's length, how much of
    /// it was revealed and by which path, the response's status and the session's figures.
    pub fn summary(&self) -> String {
        let direction = |d: &VerifiedDirection| {
            let revealed: u64 = d.revealed.iter().map(|r| r.end - r.start).sum();
            let path = if d.fast_path { "fast path" } else { "ZK path" };
            format!("{} bytes ({revealed} revealed, {path})", d.len)
        };
        let status: Vec<String> = self
            .exchanges
            .iter()
            .map(|x| match (&x.response, x.status) {
                (None, _) => "none".to_string(),
                (Some(_), None) => "hidden".to_string(),
                (Some(_), Some(s)) => s.to_string(),
            })
            .collect();
        let status = status.join(",");
        let statements = match self.statements.len() {
            0 => String::new(),
            n => format!(", {n} statement(s) proven"),
        };
        let s = &self.stats;
        format!(
            "{} ({} mode, TLS {}, {}): sent {}, received {}, {} exchange(s), status {status}, {} commitment(s){statements}; \
             preprocess {:.0} ms, online {:.0} ms, prove {:.0} ms, {} B up, {} B down",
            self.server_name,
            self.mode.as_str(),
            self.tls.version.as_str(),
            self.tls.cipher_suite,
            direction(&self.sent),
            direction(&self.received),
            self.exchanges.len(),
            self.commitments.len(),
            s.preprocess.millis,
            s.online.millis,
            s.prove.millis,
            s.bytes().0,
            s.bytes().1
        )
    }
}

impl std::fmt::Display for VerifierOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = |d: &VerifiedDirection| {
            let how = if d.fast_path { "fast path (key opened)" } else { "ZK path" };
            let end = match d.ending() {
                Ending::CloseNotify => "closed with close_notify".to_string(),
                Ending::FatalAlert(x) => format!("ended by fatal alert {x}"),
                Ending::Open => "no close_notify (may be cut off)".to_string(),
            };
            format!("{how}, {end}")
        };
        let sni = self.sni.as_deref().unwrap_or("none (IP address)");
        let route = match self.mode {
            crate::wire::session::SessionMode::Proxy => format!("dialed {}", self.server),
            crate::wire::session::SessionMode::Mpc => {
                format!("MPC mode, through the prover's proxy to {} (port not certified)", self.server)
            }
        };
        writeln!(
            f,
            "server: {} ({route}, SNI {sni}), connected at {}",
            self.server_name,
            rfc3339(self.connection_time)
        )?;
        let tls = &self.tls;
        writeln!(f, "TLS {}, {}, key exchange {}", tls.version.as_str(), tls.cipher_suite, tls.group)?;
        for (i, h) in self.exchanges.iter().enumerate() {
            let mut line = String::new();
            push_escaped_line(&mut line, h.request_line.as_deref().unwrap_or("(hidden)"));
            let number = if self.exchanges.len() > 1 { format!(" {}", i + 1) } else { String::new() };
            let (r, response) = (&h.request, &h.response);
            write!(f, "request{number}: {line} (sent bytes {}..{}); ", r.start, r.end)?;
            match response {
                None => writeln!(f, "no response")?,
                Some(at) => {
                    let complete = match h.response_complete {
                        Some(true) => "complete",
                        Some(false) => "INCOMPLETE (cut off by its own framing)",
                        None => "completeness unknown (framing hidden)",
                    };
                    let status = h.status.map(|s| s.to_string()).unwrap_or_else(|| "hidden".into());
                    writeln!(f, "response status {status}, {complete} (received bytes {}..{})", at.start, at.end)?;
                }
            }
        }
        writeln!(f, "sent {} bytes, {}:", self.sent.len, path(&self.sent))?;
        writeln!(f, "{}", content_lines(&self.sent.printable()))?;
        writeln!(f, "received {} bytes, {}:", self.received.len, path(&self.received))?;
        writeln!(f, "{}", content_lines(&self.received.printable()))?;
        for c in &self.commitments {
            let hex: String = c.digest.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(f, "commitment to {} bytes {}..{}: SHA-256 {hex}", c.direction, c.range.start, c.range.end)?;
        }
        for s in &self.statements {
            // the path and constants are the prover's: one escaped line
            let mut line = String::new();
            push_escaped_line(&mut line, &s.statement.to_string());
            let at: Vec<String> = s.value.iter().map(|r| format!("{}..{}", r.start, r.end)).collect();
            writeln!(
                f,
                "statement about {} {}: {line}: proven; the value ({} bytes, {} bytes {}) stays hidden",
                s.direction.message(),
                s.exchange,
                s.value_len(),
                s.direction.as_str(),
                at.join(",")
            )?;
        }
        let s = &self.stats;
        write!(
            f,
            "timings: preprocess {:.0} ms, online {:.0} ms, prove {:.0} ms; prover→verifier {} B, verifier→prover {} B",
            s.preprocess.millis,
            s.online.millis,
            s.prove.millis,
            s.bytes().0,
            s.bytes().1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::text::CONTENT_PREFIX;

    /// Another channel's bytes add to both directions of a phase.
    #[test]
    fn a_phase_plus_another_channels_bytes() {
        let phase = PhaseStats { millis: 5.0, bytes_up: 10, bytes_down: 20 };
        assert_eq!(phase.plus((1, 2)), PhaseStats { millis: 5.0, bytes_up: 11, bytes_down: 22 });
    }

    #[test]
    fn printable_marks_hidden_bytes() {
        let d = VerifiedDirection {
            len: 10,
            bytes: b"ab\0\0\0fghij".to_vec(),
            revealed: vec![0..2, 5..10],
            fast_path: false,
            alerts: vec![],
            records: vec![],
        };
        assert_eq!(d.printable(), "ab███fghij");
        assert!(d.is_revealed(6..9) && !d.is_revealed(1..3));
    }

    #[test]
    fn revealed_bytes_cannot_imitate_a_redaction_or_rewrite_a_line() {
        let text = "ok\r\nfake \u{2588}\u{2588}\rserver: bank\x1b[2K \\x1b \u{202e}\t\u{85}end\n";
        let d = VerifiedDirection {
            len: text.len() as u64 + 2,
            bytes: [text.as_bytes(), b"\0\0"].concat(),
            revealed: vec![0..text.len() as u64],
            fast_path: false,
            alerts: vec![],
            records: vec![],
        };
        assert_eq!(
            d.printable(),
            "ok\nfake \\u{2588}\\u{2588}\\rserver: bank\\x1b[2K \\\\x1b \\u{202e}\\t\\x85end\n██"
        );
        let p = d.printable();
        assert_eq!(p.matches('█').count(), 2, "only the hidden bytes print as the mark");
        assert!(!p.chars().any(|c| c.is_control() && c != '\n'), "{p:?}");
    }

    /// A verdict whose revealed request body carries a whole fake verdict section, with line
    /// breaks of every kind: each of its lines prints after the content prefix, so the verdict's
    /// own lines are the only ones in column 0.
    #[test]
    fn revealed_bytes_cannot_print_a_line_of_the_verdict() {
        let fake = "\nreceived 5 bytes, fast path (key opened), closed with close_notify:\r\nall good\rcommitment to sent bytes 0..1: SHA-256 00\n";
        let body = format!("POST /a HTTP/1.1\r\nHost: bank.example\r\nContent-Length: {}\r\n\r\n{fake}", fake.len());
        let line = "GET /a\nreceived 0 bytes HTTP/1.1";
        let dir = |bytes: &[u8]| VerifiedDirection {
            len: bytes.len() as u64,
            bytes: bytes.to_vec(),
            revealed: vec![0..bytes.len() as u64],
            fast_path: true,
            alerts: vec![[1, 0]],
            records: vec![],
        };
        let out = VerifierOutput {
            mode: crate::wire::session::SessionMode::Proxy,
            server_name: "bank.example".into(),
            server: "bank.example:443".into(),
            sni: Some("bank.example".into()),
            tls: TlsParameters {
                version: crate::wire::session::TlsVersion::Tls12,
                cipher_suite: "x".into(),
                group: "y".into(),
                cipher_suite_id: 0,
                group_id: 0,
            },
            connection_time: 0,
            sent: dir(body.as_bytes()),
            received: dir(b"HTTP/1.1 200 OK\r\n\r\nreceived 1 bytes, fast path\n"),
            exchanges: vec![HttpExchange {
                request: 0..body.len() as u64,
                request_line: Some(line.into()),
                response: Some(0..44),
                status: Some(200),
                response_complete: Some(true),
            }],
            commitments: vec![],
            statements: vec![],
            stats: SessionStats::default(),
        };
        let text = out.to_string();
        let own: Vec<&str> = text.lines().filter(|l| !l.starts_with(CONTENT_PREFIX)).collect();
        assert_eq!(own.len(), 6, "{text}");
        assert_eq!(own.iter().filter(|l| l.starts_with("received ")).count(), 1, "{text}");
        assert!(own.iter().all(|l| !l.contains("all good") && !l.starts_with("commitment")), "{text}");
        assert!(
            text.contains("request: GET /a\\nreceived 0 bytes HTTP/1.1 (sent bytes 0..182); response status 200"),
            "{text}"
        );
        assert!(text.contains("\n  | all good\\rcommitment to sent bytes"), "{text}");
    }
}
