//! Error types of the TLS client.

use thiserror::Error;

/// TLS alert descriptions we send or recognise (RFC 5246 §7.2, RFC 5746, RFC 7627).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlertDescription(pub u8);

impl AlertDescription {
    pub(crate) const CLOSE_NOTIFY: Self = Self(0);
    pub(crate) const UNEXPECTED_MESSAGE: Self = Self(10);
    pub(crate) const BAD_RECORD_MAC: Self = Self(20);
    pub(crate) const RECORD_OVERFLOW: Self = Self(22);
    pub const HANDSHAKE_FAILURE: Self = Self(40);
    pub(crate) const BAD_CERTIFICATE: Self = Self(42);
    pub(crate) const CERTIFICATE_EXPIRED: Self = Self(45);
    pub(crate) const ILLEGAL_PARAMETER: Self = Self(47);
    pub(crate) const UNKNOWN_CA: Self = Self(48);
    pub(crate) const DECODE_ERROR: Self = Self(50);
    pub(crate) const DECRYPT_ERROR: Self = Self(51);
    pub const PROTOCOL_VERSION: Self = Self(70);
    pub(crate) const INTERNAL_ERROR: Self = Self(80);
    pub(crate) const NO_RENEGOTIATION: Self = Self(100);
    pub(crate) const UNSUPPORTED_EXTENSION: Self = Self(110);

    /// The alert's name in the RFCs (RFC 8446 §6, RFC 5246 §7.2), if it has one.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "close_notify",
            10 => "unexpected_message",
            20 => "bad_record_mac",
            21 => "decryption_failed",
            22 => "record_overflow",
            30 => "decompression_failure",
            40 => "handshake_failure",
            41 => "no_certificate",
            42 => "bad_certificate",
            43 => "unsupported_certificate",
            44 => "certificate_revoked",
            45 => "certificate_expired",
            46 => "certificate_unknown",
            47 => "illegal_parameter",
            48 => "unknown_ca",
            49 => "access_denied",
            50 => "decode_error",
            51 => "decrypt_error",
            70 => "protocol_version",
            71 => "insufficient_security",
            80 => "internal_error",
            86 => "inappropriate_fallback",
            90 => "user_canceled",
            100 => "no_renegotiation",
            109 => "missing_extension",
            110 => "unsupported_extension",
            112 => "unrecognized_name",
            116 => "certificate_required",
            120 => "no_application_protocol",
            _ => return None,
        })
    }
}

impl std::fmt::Display for AlertDescription {
    /// `handshake_failure (40)`; a description without a name as its number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "alert {}", self.0),
        }
    }
}

/// Something the server did that TLS 1.2 forbids or that we did not offer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PeerMisbehaved {
    /// ServerHello chose a cipher suite that was not in our ClientHello.
    #[error("server chose a cipher suite we did not offer: {0:#06x}")]
    UnofferedCipherSuite(u16),
    /// ServerHello (or a record) carried a protocol version other than TLS 1.2.
    #[error("unsupported protocol version {0:#06x}")]
    UnsupportedVersion(u16),
    /// We offered TLS 1.3, the server chose TLS 1.2 with RFC 8446's downgrade sentinel in its
    /// random: the offer was removed on the way (a downgrade attack).
    #[error("the server chose TLS 1.2 and its random says it supports TLS 1.3: a downgrade")]
    Downgrade,
    /// ServerHello chose a compression method other than null.
    #[error("server chose compression method {0}")]
    UnofferedCompression(u8),
    /// ServerHello contained an extension we did not offer.
    #[error("server sent an extension we did not offer: {0}")]
    UnofferedExtension(u16),
    /// The same extension appeared twice.
    #[error("duplicate extension {0}")]
    DuplicateExtension(u16),
    /// renegotiation_info was not empty on an initial handshake (RFC 5746 §3.4).
    #[error("renegotiation_info not empty")]
    BadRenegotiationInfo,
    /// Server tried to resume a session (abbreviated handshake); we never offer resumption.
    #[error("server tried to resume a session we never offered")]
    ResumptionAttempted,
    /// ServerKeyExchange used a group we did not offer or a non-named curve.
    #[error("server chose a key exchange group we did not offer: {0:#06x}")]
    UnofferedGroup(u16),
    /// ServerKeyExchange used a signature scheme we did not offer.
    #[error("server used a signature scheme we did not offer: {0:#06x}")]
    UnofferedSignatureScheme(u16),
    /// The server's ECDHE public key is not a valid point.
    #[error("invalid server ECDHE public key")]
    InvalidServerPublicKey,
    /// The ServerKeyExchange signature does not verify under the certificate's key.
    #[error("bad ServerKeyExchange signature")]
    BadServerKeyExchangeSignature,
    /// The server sent no certificate.
    #[error("server sent an empty certificate chain")]
    NoCertificate,
    /// A record failed AEAD authentication.
    #[error("bad record MAC")]
    BadRecordMac,
    /// A record exceeded the maximum size.
    #[error("record overflow")]
    RecordOverflow,
    /// A handshake message exceeded our size bound.
    #[error("handshake message too large: {0} bytes")]
    HandshakeMessageTooLarge(usize),
    /// A message arrived that is not allowed in the current state.
    #[error("unexpected message: expected {expected}, got {got}")]
    UnexpectedMessage { expected: &'static str, got: String },
    /// A record had an unknown content type.
    #[error("unknown record content type {0}")]
    UnknownContentType(u8),
    /// A zero-length handshake/alert/CCS fragment (RFC 5246 §6.2.1).
    #[error("empty record fragment")]
    EmptyFragment,
    /// Bytes could not be decoded as the expected structure.
    #[error("decode error: {0}")]
    DecodeError(&'static str),
    /// ChangeCipherSpec was not the single byte 1, or interleaved with a handshake message.
    #[error("malformed ChangeCipherSpec")]
    BadChangeCipherSpec,
    /// The server Finished verify_data did not match.
    #[error("server Finished verify_data mismatch")]
    BadFinished,
    /// The stream ended after the handshake inside a record. (Between records, an end without
    /// close_notify is no error here: whether the data before it is whole is for its own
    /// framing to say, as a verdict's "no close_notify (may be cut off)" does.)
    #[error("the stream ended inside a record, without close_notify")]
    TruncatedWithoutCloseNotify,
    /// The stream ended during the handshake.
    #[error("unexpected end of stream during handshake")]
    UnexpectedEof,
    /// The server sent a fatal alert.
    #[error("server sent fatal alert {0}")]
    FatalAlert(AlertDescription),
    /// Data arrived after close_notify.
    #[error("data after close_notify")]
    DataAfterCloseNotify,
    /// The server asked for renegotiation; we refuse (no_renegotiation sent).
    #[error("server requested renegotiation")]
    RenegotiationRequested,
    /// A TLS 1.3 ServerHello that breaks a rule of RFC 8446 §4.1.3–4.1.4.
    #[error("bad ServerHello: {0}")]
    BadServerHello(&'static str),
    #[error("bad CertificateVerify signature")]
    BadCertificateVerify,
    /// A TLS 1.3 record whose decrypted bytes are all zero: no content type (RFC 8446 §5.4).
    #[error("encrypted record with no content type byte")]
    NoInnerContentType,
}

/// Errors of the TLS client.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// The server violated the protocol.
    #[error("peer misbehaved: {0}")]
    PeerMisbehaved(#[from] PeerMisbehaved),
    /// The server's certificate chain or name did not validate.
    #[error("certificate error: {0}")]
    Certificate(webpki::Error),
    /// The configured server name is not a valid DNS name or IP address.
    #[error("invalid server name")]
    InvalidServerName,
    /// A root certificate could not be parsed as a trust anchor.
    #[error("invalid root certificate: {0}")]
    InvalidRoot(webpki::Error),
    /// The local crypto backend failed (RNG, key generation).
    #[error("crypto backend failure: {0}")]
    Crypto(&'static str),
    /// Called in a state where this operation is not possible.
    #[error("invalid state: {0}")]
    InvalidState(&'static str),
    /// The connection already failed with an earlier error.
    #[error("connection failed earlier: {0}")]
    AlreadyFailed(String),
    /// I/O error in the async driver (not used by the sans-IO core).
    #[error("io error: {0}")]
    Io(String),
    /// The HTTP response over the connection was malformed or over a limit.
    #[error("bad HTTP response: {0}")]
    Http(String),
    /// Application data could not be sent: the connection is closed.
    #[error("connection closed")]
    Closed,
}

impl PeerMisbehaved {
    /// The alert TLS says to send for this error.
    pub fn alert(&self) -> Option<AlertDescription> {
        use PeerMisbehaved::*;
        Some(match self {
            UnofferedCipherSuite(_)
            | UnofferedCompression(_)
            | UnofferedGroup(_)
            | UnofferedSignatureScheme(_)
            | InvalidServerPublicKey
            | BadServerHello(_)
            | ResumptionAttempted => AlertDescription::ILLEGAL_PARAMETER,
            UnsupportedVersion(_) => AlertDescription::PROTOCOL_VERSION,
            Downgrade => AlertDescription::ILLEGAL_PARAMETER,
            UnofferedExtension(_) => AlertDescription::UNSUPPORTED_EXTENSION,
            DuplicateExtension(_) | DecodeError(_) | EmptyFragment | BadChangeCipherSpec => {
                AlertDescription::DECODE_ERROR
            }
            BadRenegotiationInfo => AlertDescription::HANDSHAKE_FAILURE,
            BadServerKeyExchangeSignature | BadFinished | BadCertificateVerify => AlertDescription::DECRYPT_ERROR,
            NoCertificate => AlertDescription::BAD_CERTIFICATE,
            BadRecordMac => AlertDescription::BAD_RECORD_MAC,
            RecordOverflow | HandshakeMessageTooLarge(_) => AlertDescription::RECORD_OVERFLOW,
            UnexpectedMessage { .. } | UnknownContentType(_) | DataAfterCloseNotify | NoInnerContentType => {
                AlertDescription::UNEXPECTED_MESSAGE
            }
            RenegotiationRequested => AlertDescription::NO_RENEGOTIATION,
            TruncatedWithoutCloseNotify | UnexpectedEof | FatalAlert(_) => return None,
        })
    }
}

impl Error {
    /// The fatal alert to send to the server for this error, if any.
    pub fn alert(&self) -> Option<AlertDescription> {
        match self {
            Error::PeerMisbehaved(p) => p.alert(),
            Error::Certificate(e) => Some(match e {
                webpki::Error::UnknownIssuer => AlertDescription::UNKNOWN_CA,
                webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => {
                    AlertDescription::CERTIFICATE_EXPIRED
                }
                _ => AlertDescription::BAD_CERTIFICATE,
            }),
            Error::Crypto(_) => Some(AlertDescription::INTERNAL_ERROR),
            _ => None,
        }
    }
}

/// Shorthand for an "unexpected message" error.
pub(crate) fn unexpected(expected: &'static str, got: impl Into<String>) -> Error {
    Error::PeerMisbehaved(PeerMisbehaved::UnexpectedMessage { expected, got: got.into() })
}

/// Shorthand for a decode error.
pub(crate) fn decode(what: &'static str) -> Error {
    Error::PeerMisbehaved(PeerMisbehaved::DecodeError(what))
}
