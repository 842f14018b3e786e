//! The attestation's canonical byte layout (`docs/attestation.md`): fixed-width big-endian
//! fields and counted lists, so one statement has exactly one encoding, a Solidity contract can
//! read it with slices, and a decoder bounds every count before it allocates.

use super::signing::{Scheme, SignatureError, SigningKey, VerifyingKey};
pub use crate::wire::direction::Direction;
pub use crate::wire::session::Ending;
use crate::wire::session::SessionMode;
use crate::wire::statement::{Statement, MAX_STATEMENTS, MAX_TEXT, MAX_VALUE_RANGES};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The first bytes of every attestation.
pub(crate) const MAGIC: [u8; 8] = *b"TLSPROOF";
/// The layout this code writes and reads.
pub(crate) const FORMAT_VERSION: u16 = 4;
/// Longest server name (a DNS name's limit).
const MAX_NAME: usize = 253;
/// Most ranges of one kind per direction, as in a session's reveal plan.
const MAX_RANGES: usize = crate::wire::session::MAX_RANGES;
/// Bytes per encoded range: start, end, digest.
const RANGE_BYTES: usize = 8 + 8 + 32;
/// Most exchanges, as a verifier certifies them.
const MAX_EXCHANGES: usize = crate::wire::session::MAX_EXCHANGES;

/// What the verifier signs: what it verified of one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attestation {
    /// The session protocol version the verifier ran.
    pub protocol_version: u16,
    pub mode: SessionMode,
    /// Wire codes: `0x0303` (TLS 1.2) or `0x0304` (TLS 1.3), the IANA cipher suite and named group.
    pub tls_version: u16,
    pub cipher_suite: u16,
    pub group: u16,
    /// Unix seconds when the verifier connected to the server (proxy mode) or accepted the
    /// session (MPC mode).
    pub connection_time: u64,
    /// The port the verifier dialed (proxy mode); 0 in MPC mode, where it dialed nothing and
    /// only the name is certified.
    pub port: u16,
    /// The name the server's certificate was validated for.
    pub server_name: String,
    pub sent: AttestedDirection,
    pub received: AttestedDirection,
    /// The HTTP requests in order, each with the response that answers it, as the verifier
    /// paired them (docs/protocol.md, "Requests and responses"): the requests tile the sent
    /// direction, the responses the received one.
    pub exchanges: Vec<AttestedExchange>,
    /// The statements about hidden values of the requests' and responses' bodies, proven in
    /// zero knowledge (docs/protocol.md, "Statements about hidden values").
    pub statements: Vec<AttestedStatement>,
}

/// A statement proven about a hidden value: which request or response holds the value, what
/// was proven of it, and where it is. The value's bytes are attested by nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedStatement {
    /// The exchange (from 1, an index into [`Attestation::exchanges`] plus 1) whose request or
    /// response holds the value.
    pub exchange: u8,
    /// Which of the exchange's messages holds the value: [`Direction::Sent`] its request,
    /// [`Direction::Received`] its response. A relying party checks it with the text: the same
    /// path may name a field of either body.
    pub direction: Direction,
    /// Encoded as its canonical text (its `Display`), at most 4096 bytes.
    pub statement: Statement,
    /// Where the value is in [`Self::direction`]'s plaintext: sorted, disjoint, inside the
    /// exchange's request (sent) or response (received). Its length is public.
    pub value: Vec<Range<u64>>,
}

impl AttestedStatement {
    /// The hidden value's length in bytes.
    pub fn value_len(&self) -> u64 {
        self.value.iter().map(|r| r.end - r.start).sum()
    }
}

/// Where one request and its response are in the transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedExchange {
    /// The request's bytes in the sent direction.
    pub request: Range<u64>,
    /// Its response's bytes in the received direction; empty when no byte answered it.
    pub response: Range<u64>,
}

impl AttestedExchange {
    /// The exchange's message in direction `d`: its request (sent) or its response (received).
    pub fn message(&self, d: Direction) -> &Range<u64> {
        match d {
            Direction::Sent => &self.request,
            Direction::Received => &self.response,
        }
    }
}

/// One direction of the attested transcript (its application-data plaintext).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedDirection {
    /// Plaintext length.
    pub len: u64,
    /// How the direction ended at the TLS layer.
    pub ending: Ending,
    /// The ranges revealed to the verifier, sorted and disjoint, each with
    /// SHA-256(bytes ‖ salt) ([`range_digest`](super::range_digest)).
    pub revealed: Vec<AttestedRange>,
    /// Hash commitments to hidden ranges, SHA-256(bytes ‖ blinder), proven in zero knowledge.
    pub committed: Vec<AttestedRange>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedRange {
    pub range: Range<u64>,
    pub digest: [u8; 32],
}

/// An encoded attestation and the verifier's signature over it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedAttestation {
    /// The canonical encoding ([`Attestation::encode`]).
    #[serde(with = "super::hex_bytes")]
    pub data: Vec<u8>,
    /// secp256k1: r ‖ s ‖ v (65 bytes, low s, v 27 or 28); Ed25519: 64 bytes.
    #[serde(with = "super::hex_bytes")]
    pub signature: Vec<u8>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AttestationError {
    #[error("attestation truncated")]
    Truncated,
    #[error("attestation has {0} bytes after its end")]
    TrailingBytes(usize),
    #[error("not a tlsproof attestation (magic bytes)")]
    BadMagic,
    #[error("attestation format version {0}; this code reads version {FORMAT_VERSION}")]
    UnsupportedFormat(u16),
    #[error("unknown signature scheme {0}")]
    UnknownScheme(u8),
    #[error("unknown session mode {0}")]
    UnknownMode(u8),
    #[error("unknown TLS version 0x{0:04x}")]
    UnknownTlsVersion(u16),
    #[error("port {port} in {mode} mode (proxy mode names the port dialed, MPC mode none)")]
    BadPort { mode: &'static str, port: u16 },
    #[error("server name is not a lower-case host name or address")]
    BadServerName,
    #[error("{direction}: unknown ending {ending:?}")]
    BadEnding { direction: &'static str, ending: [u8; 2] },
    #[error("{direction}: {count} ranges, more than {MAX_RANGES}")]
    TooManyRanges { direction: &'static str, count: usize },
    #[error("{direction}: range {range:?} is empty or outside the transcript of {len} bytes")]
    RangeOutsideTranscript { direction: &'static str, range: Range<u64>, len: u64 },
    #[error("{direction}: revealed ranges are not sorted and disjoint")]
    RangesOutOfOrder { direction: &'static str },
    #[error("{count} exchanges, not 1 to {MAX_EXCHANGES}")]
    BadExchangeCount { count: usize },
    #[error("the exchanges' {direction} ranges do not follow one another from 0 to the direction's length")]
    ExchangesNotTiling { direction: &'static str },
    #[error("{count} statements, more than {MAX_STATEMENTS}")]
    TooManyStatements { count: usize },
    #[error("statement {statement}: exchange {exchange}, not 1 to {count}")]
    BadStatementExchange { statement: usize, exchange: u8, count: usize },
    #[error("statement {statement}: {count} value ranges, not 1 to {MAX_VALUE_RANGES}")]
    BadValueRangeCount { statement: usize, count: usize },
    #[error("statement {statement}: direction byte {byte}, not 0 (sent: the request) or 1 (received: the response)")]
    BadStatementDirection { statement: usize, byte: u8 },
    #[error("statement {statement}: value range {range:?} is empty or outside its exchange's {} {message:?}", .direction.message())]
    ValueOutsideMessage { statement: usize, direction: Direction, range: Range<u64>, message: Range<u64> },
    #[error("statement {statement}: value ranges are not sorted and disjoint")]
    ValueRangesOutOfOrder { statement: usize },
    #[error("statement {statement}: text of {len} bytes, not 1 to {MAX_TEXT}")]
    BadStatementLength { statement: usize, len: usize },
    #[error("statement {statement}: the text is not a statement in canonical form")]
    StatementNotCanonical { statement: usize },
    #[error("the attestation is signed with {attestation}, the key given is {key}")]
    SchemeMismatch { attestation: &'static str, key: &'static str },
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

impl Attestation {
    /// The canonical encoding, naming `scheme` as the signature scheme.
    pub fn encode(&self, scheme: Scheme) -> Vec<u8> {
        let ranges = |d: &AttestedDirection| d.revealed.len() + d.committed.len();
        let mut out = Vec::with_capacity(
            64 + self.server_name.len() + RANGE_BYTES * (ranges(&self.sent) + ranges(&self.received)),
        );
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
        out.push(scheme.code());
        out.extend_from_slice(&self.protocol_version.to_be_bytes());
        out.push(match self.mode {
            SessionMode::Proxy => 0,
            SessionMode::Mpc => 1,
        });
        for v in [self.tls_version, self.cipher_suite, self.group] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&self.connection_time.to_be_bytes());
        out.extend_from_slice(&self.port.to_be_bytes());
        out.push(self.server_name.len() as u8);
        out.extend_from_slice(self.server_name.as_bytes());
        for d in [&self.sent, &self.received] {
            out.extend_from_slice(&d.len.to_be_bytes());
            out.extend_from_slice(&match d.ending {
                Ending::Open => [0, 0],
                Ending::CloseNotify => [1, 0],
                Ending::FatalAlert(a) => [2, a],
            });
            for list in [&d.revealed, &d.committed] {
                out.extend_from_slice(&(list.len() as u16).to_be_bytes());
                for r in list {
                    out.extend_from_slice(&r.range.start.to_be_bytes());
                    out.extend_from_slice(&r.range.end.to_be_bytes());
                    out.extend_from_slice(&r.digest);
                }
            }
        }
        out.push(self.exchanges.len() as u8);
        for x in &self.exchanges {
            for v in [x.request.start, x.request.end, x.response.start, x.response.end] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        out.push(self.statements.len() as u8);
        for s in &self.statements {
            out.push(s.exchange);
            out.push(match s.direction {
                Direction::Sent => 0,
                Direction::Received => 1,
            });
            out.push(s.value.len() as u8);
            for r in &s.value {
                out.extend_from_slice(&r.start.to_be_bytes());
                out.extend_from_slice(&r.end.to_be_bytes());
            }
            let text = s.statement.to_string();
            out.extend_from_slice(&(text.len() as u16).to_be_bytes());
            out.extend_from_slice(text.as_bytes());
        }
        out
    }

    /// Reads an encoding, refusing anything [`Self::encode`] would not have written.
    pub fn decode(bytes: &[u8]) -> Result<(Scheme, Attestation), AttestationError> {
        let mut r = Reader(bytes);
        if r.take(8)? != MAGIC {
            return Err(AttestationError::BadMagic);
        }
        let format = r.u16()?;
        if format != FORMAT_VERSION {
            return Err(AttestationError::UnsupportedFormat(format));
        }
        let code = r.u8()?;
        let scheme = Scheme::from_code(code).ok_or(AttestationError::UnknownScheme(code))?;
        let protocol_version = r.u16()?;
        let mode = match r.u8()? {
            0 => SessionMode::Proxy,
            1 => SessionMode::Mpc,
            m => return Err(AttestationError::UnknownMode(m)),
        };
        let tls_version = r.u16()?;
        if tls_version != 0x0303 && tls_version != 0x0304 {
            return Err(AttestationError::UnknownTlsVersion(tls_version));
        }
        let (cipher_suite, group) = (r.u16()?, r.u16()?);
        let connection_time = r.u64()?;
        let port = r.u16()?;
        if (mode == SessionMode::Proxy) == (port == 0) {
            return Err(AttestationError::BadPort { mode: mode.as_str(), port });
        }
        let name_len = usize::from(r.u8()?);
        let name = r.take(name_len)?;
        let name_ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || b".-_:".contains(c);
        if name.is_empty() || name.len() > MAX_NAME || !name.iter().all(name_ok) {
            return Err(AttestationError::BadServerName);
        }
        let server_name = String::from_utf8(name.to_vec()).map_err(|_| AttestationError::BadServerName)?;
        let sent = r.direction("sent")?;
        let received = r.direction("received")?;
        let exchanges = r.exchanges(sent.len, received.len)?;
        let statements = r.statements(&exchanges)?;
        if !r.0.is_empty() {
            return Err(AttestationError::TrailingBytes(r.0.len()));
        }
        let attestation = Attestation {
            protocol_version,
            mode,
            tls_version,
            cipher_suite,
            group,
            connection_time,
            port,
            server_name,
            sent,
            received,
            exchanges,
            statements,
        };
        Ok((scheme, attestation))
    }

    /// Encodes and signs with `key` (whose scheme the encoding names).
    pub fn sign(&self, key: &SigningKey) -> SignedAttestation {
        let data = self.encode(key.scheme());
        let signature = key.sign(&data);
        SignedAttestation { data, signature }
    }

    /// The direction's attested transcript.
    pub fn direction(&self, d: Direction) -> &AttestedDirection {
        match d {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    /// The cipher suite's and group's IANA names where this code knows them, else their codes.
    pub(crate) fn tls_parameter_names(&self) -> (String, String) {
        use crate::tls::{tls13::messages::Suite13, CipherSuite, NamedGroup};
        let suite = CipherSuite::from_id(self.cipher_suite)
            .map(CipherSuite::name)
            .or_else(|| Suite13::from_id(self.cipher_suite).map(Suite13::name));
        let group = NamedGroup::from_id(self.group).map(NamedGroup::name);
        (
            suite.map_or_else(|| format!("cipher suite 0x{:04x}", self.cipher_suite), str::to_string),
            group.map_or_else(|| format!("group 0x{:04x}", self.group), str::to_string),
        )
    }

    /// `TLS 1.2` or `TLS 1.3`.
    pub(crate) fn tls_version_name(&self) -> &'static str {
        if self.tls_version == 0x0304 {
            "TLS 1.3"
        } else {
            "TLS 1.2"
        }
    }
}

impl SignedAttestation {
    /// Checks the signature with the verifier's public key, then returns what it attests.
    pub fn verify(&self, key: &VerifyingKey) -> Result<Attestation, AttestationError> {
        let (scheme, attestation) = Attestation::decode(&self.data)?;
        if scheme != key.scheme() {
            return Err(AttestationError::SchemeMismatch { attestation: scheme.as_str(), key: key.scheme().as_str() });
        }
        key.verify(&self.data, &self.signature)?;
        Ok(attestation)
    }
}

/// A cursor over untrusted bytes: every read checks what is left.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], AttestationError> {
        if self.0.len() < n {
            return Err(AttestationError::Truncated);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, AttestationError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, AttestationError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u64(&mut self) -> Result<u64, AttestationError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn direction(&mut self, direction: &'static str) -> Result<AttestedDirection, AttestationError> {
        let len = self.u64()?;
        let ending = match [self.u8()?, self.u8()?] {
            [0, 0] => Ending::Open,
            [1, 0] => Ending::CloseNotify,
            // description 0 is close_notify, whatever its level
            [2, a] if a != 0 => Ending::FatalAlert(a),
            ending => return Err(AttestationError::BadEnding { direction, ending }),
        };
        let revealed = self.ranges(direction, len)?;
        if revealed.windows(2).any(|w| w[0].range.end > w[1].range.start) {
            return Err(AttestationError::RangesOutOfOrder { direction });
        }
        let committed = self.ranges(direction, len)?;
        Ok(AttestedDirection { len, ending, revealed, committed })
    }

    /// The exchanges: 1 to [`MAX_EXCHANGES`], their requests following one another from 0 to
    /// the sent length, their responses from 0 to the received length.
    fn exchanges(&mut self, sent: u64, received: u64) -> Result<Vec<AttestedExchange>, AttestationError> {
        let count = usize::from(self.u8()?);
        if count == 0 || count > MAX_EXCHANGES {
            return Err(AttestationError::BadExchangeCount { count });
        }
        let mut exchanges = Vec::with_capacity(count);
        let (mut request_at, mut response_at) = (0, 0);
        for _ in 0..count {
            let (request, response) = (self.u64()?..self.u64()?, self.u64()?..self.u64()?);
            if request.start != request_at || request.end < request.start {
                return Err(AttestationError::ExchangesNotTiling { direction: "sent" });
            }
            if response.start != response_at || response.end < response.start {
                return Err(AttestationError::ExchangesNotTiling { direction: "received" });
            }
            (request_at, response_at) = (request.end, response.end);
            exchanges.push(AttestedExchange { request, response });
        }
        if request_at != sent {
            return Err(AttestationError::ExchangesNotTiling { direction: "sent" });
        }
        if response_at != received {
            return Err(AttestationError::ExchangesNotTiling { direction: "received" });
        }
        Ok(exchanges)
    }

    /// The statements: at most [`MAX_STATEMENTS`], each about one of `exchanges` in a direction
    /// (0 sent, 1 received), its value inside that exchange's request (sent) or response
    /// (received), its text canonical.
    fn statements(&mut self, exchanges: &[AttestedExchange]) -> Result<Vec<AttestedStatement>, AttestationError> {
        let count = usize::from(self.u8()?);
        if count > MAX_STATEMENTS {
            return Err(AttestationError::TooManyStatements { count });
        }
        let mut statements = Vec::with_capacity(count);
        for i in 0..count {
            let exchange = self.u8()?;
            let Some(x) = usize::from(exchange).checked_sub(1).and_then(|e| exchanges.get(e)) else {
                return Err(AttestationError::BadStatementExchange { statement: i, exchange, count: exchanges.len() });
            };
            let direction = match self.u8()? {
                0 => Direction::Sent,
                1 => Direction::Received,
                byte => return Err(AttestationError::BadStatementDirection { statement: i, byte }),
            };
            // an unanswered request's response is empty: no value range fits inside it
            let message = x.message(direction);
            let ranges = usize::from(self.u8()?);
            if ranges == 0 || ranges > MAX_VALUE_RANGES {
                return Err(AttestationError::BadValueRangeCount { statement: i, count: ranges });
            }
            if self.0.len() < ranges * 16 {
                return Err(AttestationError::Truncated);
            }
            let mut value: Vec<Range<u64>> = Vec::with_capacity(ranges);
            for _ in 0..ranges {
                let range = self.u64()?..self.u64()?;
                if range.start >= range.end || range.start < message.start || range.end > message.end {
                    return Err(AttestationError::ValueOutsideMessage {
                        statement: i,
                        direction,
                        range,
                        message: message.clone(),
                    });
                }
                if value.last().is_some_and(|last| last.end > range.start) {
                    return Err(AttestationError::ValueRangesOutOfOrder { statement: i });
                }
                value.push(range);
            }
            let len = usize::from(self.u16()?);
            if len == 0 || len > MAX_TEXT {
                return Err(AttestationError::BadStatementLength { statement: i, len });
            }
            // UTF-8 with no control byte (which canonical text never has, and which a reader
            // without the grammar checks too), then read and printed back alike
            let not_canonical = || AttestationError::StatementNotCanonical { statement: i };
            let text = std::str::from_utf8(self.take(len)?).map_err(|_| not_canonical())?;
            if text.bytes().any(|b| b < 0x20) {
                return Err(not_canonical());
            }
            let statement = Statement::parse(text).map_err(|_| not_canonical())?;
            if statement.to_string() != text {
                return Err(not_canonical());
            }
            statements.push(AttestedStatement { exchange, direction, statement, value });
        }
        Ok(statements)
    }

    fn ranges(&mut self, direction: &'static str, len: u64) -> Result<Vec<AttestedRange>, AttestationError> {
        let count = usize::from(self.u16()?);
        if count > MAX_RANGES {
            return Err(AttestationError::TooManyRanges { direction, count });
        }
        if self.0.len() < count * RANGE_BYTES {
            return Err(AttestationError::Truncated);
        }
        (0..count)
            .map(|_| {
                let range = self.u64()?..self.u64()?;
                if range.start >= range.end || range.end > len {
                    return Err(AttestationError::RangeOutsideTranscript { direction, range, len });
                }
                let digest = self.take(32)?.try_into().expect("32 bytes");
                Ok(AttestedRange { range, digest })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attestation::{example, example_statements};

    #[test]
    fn encoding_round_trips_and_is_canonical() {
        let (a, _) = example();
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let bytes = a.encode(scheme);
            assert_eq!(Attestation::decode(&bytes), Ok((scheme, a.clone())));
        }
        let bytes = a.encode(Scheme::Ed25519);
        // every strict prefix is truncated, and nothing may follow
        for n in 0..bytes.len() {
            assert!(Attestation::decode(&bytes[..n]).is_err(), "prefix {n}");
        }
        assert_eq!(Attestation::decode(&[&bytes[..], &[0]].concat()), Err(AttestationError::TrailingBytes(1)));
    }

    /// Every TLS 1.2 suite the client offers is carried by its code and named when read back;
    /// a code this build does not know is shown as a number.
    #[test]
    fn every_tls12_suite_is_carried_and_named() {
        for suite in crate::tls::CipherSuite::ALL {
            let (mut a, _) = example();
            a.cipher_suite = suite.id();
            let (_, back) = Attestation::decode(&a.encode(Scheme::Ed25519)).unwrap();
            assert_eq!(back.cipher_suite, suite.id());
            assert_eq!(back.tls_parameter_names().0, suite.name());
        }
        let (mut a, _) = example();
        a.cipher_suite = 0x009c;
        assert_eq!(a.tls_parameter_names().0, "cipher suite 0x009c");
    }

    /// Offsets of the fixed header (docs/attestation.md).
    const SCHEME: usize = 10;
    const MODE: usize = 13;
    const TLS: usize = 14;
    const PORT: usize = 28;
    const NAME: usize = 31;

    fn tampered(at: usize, value: &[u8]) -> Result<(Scheme, Attestation), AttestationError> {
        let mut bytes = example().0.encode(Scheme::Ed25519);
        bytes[at..at + value.len()].copy_from_slice(value);
        Attestation::decode(&bytes)
    }

    #[test]
    fn header_fields_outside_their_domain_are_refused() {
        assert_eq!(tampered(0, b"X"), Err(AttestationError::BadMagic));
        assert_eq!(tampered(8, &[0, 1]), Err(AttestationError::UnsupportedFormat(1)));
        assert_eq!(tampered(SCHEME, &[3]), Err(AttestationError::UnknownScheme(3)));
        assert_eq!(tampered(MODE, &[2]), Err(AttestationError::UnknownMode(2)));
        assert_eq!(tampered(TLS, &[3, 1]), Err(AttestationError::UnknownTlsVersion(0x0301)));
        assert_eq!(tampered(PORT, &[0, 0]), Err(AttestationError::BadPort { mode: "proxy", port: 0 }));
        assert_eq!(tampered(MODE, &[1]), Err(AttestationError::BadPort { mode: "mpc", port: 443 }));
        assert_eq!(tampered(NAME, b"E"), Err(AttestationError::BadServerName));
        assert_eq!(tampered(NAME, b" "), Err(AttestationError::BadServerName));
        assert!(tampered(NAME, b"_").is_ok(), "an underscore, as some certificates' names have");
        assert_eq!(tampered(NAME - 1, &[0]).unwrap_err(), AttestationError::BadServerName);
    }

    #[test]
    fn ranges_and_endings_outside_their_domain_are_refused() {
        let (mut a, _) = example();
        let sent_at = NAME + a.server_name.len();
        let check = |a: &Attestation| Attestation::decode(&a.encode(Scheme::Ed25519)).map(|_| ());
        // the sent ending sits after its length
        assert_eq!(
            tampered(sent_at + 8, &[1, 7]),
            Err(AttestationError::BadEnding { direction: "sent", ending: [1, 7] })
        );
        assert_eq!(
            tampered(sent_at + 8, &[2, 0]),
            Err(AttestationError::BadEnding { direction: "sent", ending: [2, 0] })
        );
        assert_eq!(
            tampered(sent_at + 8, &[3, 0]),
            Err(AttestationError::BadEnding { direction: "sent", ending: [3, 0] })
        );
        a.sent.committed[0].range = 50..54;
        assert_eq!(
            check(&a),
            Err(AttestationError::RangeOutsideTranscript { direction: "sent", range: 50..54, len: 53 })
        );
        a.sent.committed[0].range = 5..5;
        assert_eq!(
            check(&a),
            Err(AttestationError::RangeOutsideTranscript { direction: "sent", range: 5..5, len: 53 })
        );
        let (mut a, _) = example();
        let r = a.received.revealed[0].clone();
        a.received.revealed =
            vec![AttestedRange { range: 5..9, ..r.clone() }, AttestedRange { range: 0..6, ..r.clone() }];
        assert_eq!(check(&a), Err(AttestationError::RangesOutOfOrder { direction: "received" }));
        a.received.revealed =
            vec![AttestedRange { range: 0..5, ..r.clone() }, AttestedRange { range: 5..9, ..r.clone() }];
        assert_eq!(check(&a), Ok(()), "adjacent ranges are disjoint");
        a.received.committed = vec![r; MAX_RANGES + 1];
        assert!(matches!(check(&a), Err(AttestationError::TooManyRanges { direction: "received", count: 4097 })));
    }

    #[test]
    fn a_count_beyond_the_bytes_left_is_refused_before_allocating() {
        let (a, _) = example();
        let mut bytes = a.encode(Scheme::Ed25519);
        // the received direction's committed count (its list is empty) precedes the exchanges,
        // which the statements' count (0) follows
        let at = bytes.len() - 1 - 1 - 32 * a.exchanges.len() - 2;
        bytes[at..at + 2].copy_from_slice(&4096u16.to_be_bytes());
        assert_eq!(Attestation::decode(&bytes), Err(AttestationError::Truncated));
    }

    /// The exchanges tile both directions in order: requests from 0 to the sent length, each
    /// where the one before ends, responses likewise (empty for a request not answered).
    #[test]
    fn exchanges_that_do_not_tile_the_transcript_are_refused() {
        let (a, _) = example();
        let check = |x: Vec<AttestedExchange>| {
            Attestation::decode(&Attestation { exchanges: x, ..a.clone() }.encode(Scheme::Ed25519)).map(|(_, a)| a)
        };
        let (s, r) = (a.sent.len, a.received.len);
        let x = |req: Range<u64>, resp: Range<u64>| AttestedExchange { request: req, response: resp };
        let two = vec![x(0..20, 0..10), x(20..s, 10..r)];
        assert_eq!(check(two.clone()).map(|a| a.exchanges), Ok(two));
        let unanswered = vec![x(0..20, 0..r), x(20..s, r..r)];
        assert!(check(unanswered).is_ok(), "a request no byte answered");
        let not = |direction| Err(AttestationError::ExchangesNotTiling { direction });
        assert_eq!(check(vec![x(0..20, 0..10), x(21..s, 10..r)]), not("sent"), "a gap");
        assert_eq!(check(vec![x(0..20, 0..10), x(19..s, 10..r)]), not("sent"), "an overlap");
        assert_eq!(check(vec![x(0..s - 1, 0..r)]), not("sent"), "short of the end");
        assert_eq!(check(vec![x(0..s, 0..r + 1)]), not("received"), "beyond the end");
        assert_eq!(check(vec![x(0..20, 0..10), x(20..s, Range { start: 10, end: 9 })]), not("received"), "reversed");
        assert_eq!(check(vec![]), Err(AttestationError::BadExchangeCount { count: 0 }));
        let many = (0..=MAX_EXCHANGES as u64).map(|i| x(i..i + 1, 0..0)).collect();
        assert_eq!(check(many), Err(AttestationError::BadExchangeCount { count: MAX_EXCHANGES + 1 }));
    }

    #[test]
    fn statements_round_trip_and_every_prefix_is_refused() {
        let (a, _) = example_statements();
        assert_eq!(a.statements.len(), 3);
        let directions: Vec<_> = a.statements.iter().map(|s| s.direction).collect();
        assert_eq!(directions, [Direction::Received, Direction::Received, Direction::Sent]);
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            assert_eq!(Attestation::decode(&a.encode(scheme)), Ok((scheme, a.clone())));
        }
        let bytes = a.encode(Scheme::Secp256k1);
        for n in 0..bytes.len() {
            assert!(Attestation::decode(&bytes[..n]).is_err(), "prefix {n}");
        }
        assert_eq!(Attestation::decode(&[&bytes[..], &[0]].concat()), Err(AttestationError::TrailingBytes(1)));
        assert_eq!(a.statements[0].value_len(), 7);
        assert_eq!(a.statements[2].value_len(), 2, "the request's 30");
    }

    /// The example with statements, its statements section (from its count on) replaced by
    /// `section`, decoded.
    fn with_section(section: &[u8]) -> Result<Attestation, AttestationError> {
        let (a, _) = example_statements();
        let mut bytes = Attestation { statements: vec![], ..a }.encode(Scheme::Ed25519);
        assert_eq!(bytes.pop(), Some(0), "the statements' count ends an attestation without any");
        bytes.extend_from_slice(section);
        Attestation::decode(&bytes).map(|(_, a)| a)
    }

    /// One statement's bytes: exchange, direction byte, value range count, ranges, text length,
    /// text.
    fn statement_bytes(exchange: u8, direction: u8, value: &[Range<u64>], text: &[u8]) -> Vec<u8> {
        let mut out = vec![exchange, direction, value.len() as u8];
        for r in value {
            out.extend_from_slice(&r.start.to_be_bytes());
            out.extend_from_slice(&r.end.to_be_bytes());
        }
        out.extend_from_slice(&(text.len() as u16).to_be_bytes());
        out.extend_from_slice(text);
        out
    }

    /// The direction byte of each statement of the example, changed in place in its encoding:
    /// 0 and 1 are the two directions, every other value is refused for that statement.
    #[test]
    fn a_statement_direction_byte_outside_its_domain_is_refused() {
        let (a, _) = example_statements();
        let bytes = a.encode(Scheme::Ed25519);
        let section = bytes.len()
            - 1
            - a.statements
                .iter()
                .map(|s| 2 + 1 + 16 * s.value.len() + 2 + s.statement.to_string().len())
                .sum::<usize>();
        assert_eq!(usize::from(bytes[section]), a.statements.len(), "the statements' count");
        let mut at = section + 1;
        for (i, s) in a.statements.iter().enumerate() {
            // after the exchange
            let direction = at + 1;
            assert_eq!(bytes[direction], u8::from(s.direction == Direction::Received));
            for byte in [2, 3, 0x80, 0xff] {
                let mut tampered = bytes.clone();
                tampered[direction] = byte;
                assert_eq!(
                    Attestation::decode(&tampered),
                    Err(AttestationError::BadStatementDirection { statement: i, byte })
                );
            }
            at += 2 + 1 + 16 * s.value.len() + 2 + s.statement.to_string().len();
        }
        assert_eq!(at, bytes.len());
    }

    #[test]
    fn a_statements_section_outside_its_domain_is_refused() {
        let (a, _) = example_statements();
        let (request, response) = (a.exchanges[0].request.clone(), a.exchanges[0].response.clone());
        let (value, text) = (a.statements[0].value[0].clone(), b"account.balance.amount >= 1000");
        const SENT: u8 = 0;
        const RECEIVED: u8 = 1;
        let one = |exchange, value: &[Range<u64>], text: &[u8]| {
            with_section(&[&[1][..], &statement_bytes(exchange, RECEIVED, value, text)].concat())
        };
        let one_in = |direction: u8, value: &[Range<u64>]| {
            with_section(&[&[1][..], &statement_bytes(1, direction, value, text)].concat())
        };
        let ok = one(1, std::slice::from_ref(&value), text).expect("the example's first statement");
        assert_eq!(ok.statements, a.statements[..1]);
        assert_eq!(with_section(&[0]).map(|a| a.statements), Ok(vec![]), "none");
        // the count
        assert_eq!(with_section(&[17]), Err(AttestationError::TooManyStatements { count: 17 }));
        assert_eq!(with_section(&[2]), Err(AttestationError::Truncated), "fewer than counted");
        assert_eq!(with_section(&[0, 1]), Err(AttestationError::TrailingBytes(1)));
        let twice = [&[2][..], &statement_bytes(1, RECEIVED, std::slice::from_ref(&value), text).repeat(2)].concat();
        assert_eq!(with_section(&twice).map(|a| a.statements.len()), Ok(2));
        // the exchange: from 1 to the exchanges' count
        let exchange = |exchange| AttestationError::BadStatementExchange { statement: 0, exchange, count: 1 };
        assert_eq!(one(0, std::slice::from_ref(&value), text), Err(exchange(0)));
        assert_eq!(one(2, std::slice::from_ref(&value), text), Err(exchange(2)));
        // the direction: 0 the request, 1 the response
        let sent =
            one_in(SENT, std::slice::from_ref(&a.statements[2].value[0])).expect("a statement about the request");
        assert_eq!(sent.statements[0].direction, Direction::Sent);
        for byte in [2, 0xff] {
            assert_eq!(
                one_in(byte, std::slice::from_ref(&value)),
                Err(AttestationError::BadStatementDirection { statement: 0, byte })
            );
        }
        assert_eq!(
            with_section(&[1, 1]),
            Err(AttestationError::Truncated),
            "the direction byte is read before the value"
        );
        // the value's ranges: 1 to 64, counted before allocating
        let count = |count| Err(AttestationError::BadValueRangeCount { statement: 0, count });
        assert_eq!(one(1, &[], text), count(0));
        assert_eq!(one(1, &vec![value.clone(); 65], text), count(65));
        let mut counted = statement_bytes(1, RECEIVED, std::slice::from_ref(&value), text);
        counted[2] = 64;
        assert_eq!(with_section(&[&[1][..], &counted].concat()), Err(AttestationError::Truncated));
        let bits = [value.start..value.start + 1, value.start + 2..value.end];
        assert_eq!(one(1, &bits, text).map(|a| a.statements[0].value_len()), Ok(6));
        // each inside the exchange's response, not empty, sorted and disjoint
        let outside = |range: Range<u64>| {
            Err(AttestationError::ValueOutsideMessage {
                statement: 0,
                direction: Direction::Received,
                range,
                message: response.clone(),
            })
        };
        let empty = value.start..value.start;
        assert_eq!(one(1, std::slice::from_ref(&empty), text), outside(empty));
        let reversed = Range { start: value.end, end: value.start };
        assert_eq!(one(1, std::slice::from_ref(&reversed), text), outside(reversed));
        let past = response.end - 1..response.end + 1;
        assert_eq!(one(1, std::slice::from_ref(&past), text), outside(past));
        let out_of_order = Err(AttestationError::ValueRangesOutOfOrder { statement: 0 });
        assert_eq!(one(1, &[bits[1].clone(), bits[0].clone()], text), out_of_order);
        assert_eq!(one(1, &[value.start..value.end, value.end - 1..value.end], text), out_of_order);
        let adjacent = [value.start..value.start + 1, value.start + 1..value.end];
        assert!(one(1, &adjacent, text).is_ok(), "adjacent ranges are disjoint");
        // a sent statement's value inside the exchange's request: the currency's place, inside
        // the response, is past the request's end
        let outside_request = |range: Range<u64>| {
            Err(AttestationError::ValueOutsideMessage {
                statement: 0,
                direction: Direction::Sent,
                range,
                message: request.clone(),
            })
        };
        let currency = a.statements[1].value[0].clone();
        assert!(currency.start >= request.end && currency.end <= response.end);
        assert!(one_in(RECEIVED, std::slice::from_ref(&currency)).is_ok());
        assert_eq!(one_in(SENT, std::slice::from_ref(&currency)), outside_request(currency));
        let past = request.end - 1..request.end + 1;
        assert_eq!(one_in(SENT, std::slice::from_ref(&past)), outside_request(past));
        let empty = request.end - 1..request.end - 1;
        assert_eq!(one_in(SENT, std::slice::from_ref(&empty)), outside_request(empty));
        let whole = request.clone();
        assert!(one_in(SENT, std::slice::from_ref(&whole)).is_ok(), "the whole request");
        // the text: 1 to 4096 bytes of canonical UTF-8
        let length = |len| Err(AttestationError::BadStatementLength { statement: 0, len });
        assert_eq!(one(1, std::slice::from_ref(&value), b""), length(0));
        let long = [&text[..], &b" "[..]].concat().repeat(133);
        assert_eq!(one(1, std::slice::from_ref(&value), &long), length(4123));
        let mut short = statement_bytes(1, RECEIVED, std::slice::from_ref(&value), text);
        let at = short.len() - text.len() - 2;
        short[at..at + 2].copy_from_slice(&4096u16.to_be_bytes());
        assert_eq!(with_section(&[&[1][..], &short].concat()), Err(AttestationError::Truncated));
        let not_canonical = Err(AttestationError::StatementNotCanonical { statement: 0 });
        for bad in [
            &b"account.balance.amount >= \xff000"[..],
            b"account.balance.amount >= 1000\n",
            b"account.balance\x01.amount >= 1000",
            b"account.balance.amount >=  1000",
            b"account.balance.amount>= 1000",
            b" account.balance.amount >= 1000",
            b"account.balance.amount >= 1e3",
            b"account.balance.amount",
        ] {
            assert_eq!(one(1, std::slice::from_ref(&value), bad), not_canonical, "{:?}", String::from_utf8_lossy(bad));
        }
        // the second statement is named by its index
        let second = [
            &[2][..],
            &statement_bytes(1, RECEIVED, std::slice::from_ref(&value), text),
            &statement_bytes(1, RECEIVED, &[], text),
        ]
        .concat();
        assert_eq!(with_section(&second), Err(AttestationError::BadValueRangeCount { statement: 1, count: 0 }));
        let second = [
            &[2][..],
            &statement_bytes(1, SENT, std::slice::from_ref(&whole), text),
            &statement_bytes(1, 7, std::slice::from_ref(&value), text),
        ]
        .concat();
        assert_eq!(with_section(&second), Err(AttestationError::BadStatementDirection { statement: 1, byte: 7 }));
    }

    /// With two exchanges, a value is in its own exchange's request or response, not the other
    /// one's.
    #[test]
    fn a_value_is_inside_the_message_of_its_exchange() {
        let (mut a, _) = example_statements();
        let value = a.statements[0].value[0].clone();
        let days = a.statements[2].value[0].clone();
        let (sent, received) = (a.sent.len, a.received.len);
        a.exchanges = vec![
            AttestedExchange { request: 0..10, response: 0..value.end },
            AttestedExchange { request: 10..sent, response: value.end..received },
        ];
        a.statements = vec![a.statements[0].clone(), AttestedStatement { exchange: 2, ..a.statements[2].clone() }];
        let check = |a: &Attestation| Attestation::decode(&a.encode(Scheme::Ed25519)).map(|(_, a)| a);
        assert_eq!(check(&a), Ok(a.clone()));
        let mut other = a.clone();
        other.statements[0].exchange = 2;
        assert_eq!(
            check(&other),
            Err(AttestationError::ValueOutsideMessage {
                statement: 0,
                direction: Direction::Received,
                range: value.clone(),
                message: value.end..received
            })
        );
        let mut other = a.clone();
        other.statements[1].exchange = 1;
        assert_eq!(
            check(&other),
            Err(AttestationError::ValueOutsideMessage {
                statement: 1,
                direction: Direction::Sent,
                range: days.clone(),
                message: 0..10
            })
        );
        // the response's place taken for one in the request
        let mut other = a.clone();
        other.statements[0].direction = Direction::Sent;
        assert_eq!(
            check(&other),
            Err(AttestationError::ValueOutsideMessage {
                statement: 0,
                direction: Direction::Sent,
                range: value.clone(),
                message: 0..10
            })
        );
        // a second request no byte answered: a statement about its request, not its response
        a.exchanges = vec![
            AttestedExchange { request: 0..10, response: 0..received },
            AttestedExchange { request: 10..sent, response: received..received },
        ];
        a.statements.truncate(0);
        a.statements.push(AttestedStatement { exchange: 2, ..example_statements().0.statements[2].clone() });
        assert_eq!(check(&a), Ok(a.clone()), "a statement about an unanswered request");
        a.statements[0].direction = Direction::Received;
        assert_eq!(
            check(&a),
            Err(AttestationError::ValueOutsideMessage {
                statement: 0,
                direction: Direction::Received,
                range: days.clone(),
                message: received..received
            })
        );
    }

    #[test]
    fn the_errors_name_the_message() {
        let e =
            |direction| AttestationError::ValueOutsideMessage { statement: 2, direction, range: 5..9, message: 0..4 };
        assert_eq!(
            e(Direction::Sent).to_string(),
            "statement 2: value range 5..9 is empty or outside its exchange's request 0..4"
        );
        assert_eq!(
            e(Direction::Received).to_string(),
            "statement 2: value range 5..9 is empty or outside its exchange's response 0..4"
        );
        assert_eq!(
            AttestationError::BadStatementDirection { statement: 0, byte: 2 }.to_string(),
            "statement 0: direction byte 2, not 0 (sent: the request) or 1 (received: the response)"
        );
    }
}
