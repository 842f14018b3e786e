//! Why a recorded TLS 1.2 session could not be parsed or validated.

use crate::tls::Direction;
use thiserror::Error;

/// Why a recorded session could not be parsed or validated.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TranscriptError {
    /// The stream ends inside a record or inside a handshake message.
    #[error("{direction:?} stream is truncated")]
    Truncated { direction: Direction },
    /// More records than [`MAX_RECORDS_PER_DIRECTION`].
    #[error("{direction:?} stream has too many records")]
    TooManyRecords { direction: Direction },
    /// More handshake messages than [`MAX_HANDSHAKE_MESSAGES`].
    #[error("{direction:?} stream has too many handshake messages")]
    TooManyHandshakeMessages { direction: Direction },
    /// A record longer than TLS allows (plaintext 2^14, AES-GCM ciphertext 2^14 + 24).
    #[error("{direction:?} record of {length} bytes exceeds the maximum")]
    RecordOverflow { direction: Direction, length: usize },
    /// A content type outside TLS 1.2's four.
    #[error("{direction:?} record has unknown content type {content_type}")]
    UnknownContentType { direction: Direction, content_type: u8 },
    /// A record version whose major byte is not 3.
    #[error("{direction:?} record has version {version:#06x}")]
    UnsupportedRecordVersion { direction: Direction, version: u16 },
    /// A zero-length handshake, alert or ChangeCipherSpec record (RFC 5246 §6.2.1).
    #[error("{direction:?} empty {content_type} record")]
    EmptyFragment { direction: Direction, content_type: u8 },
    /// A handshake message longer than the codec's bound.
    #[error("{direction:?} handshake message of {length} bytes is too large")]
    HandshakeMessageTooLarge { direction: Direction, length: usize },
    /// A non-handshake record arrived while a handshake message was only partly received.
    #[error("{direction:?} record interleaved with a fragmented handshake message")]
    InterleavedHandshakeFragment { direction: Direction },
    /// A record type not allowed before ChangeCipherSpec (application data).
    #[error("{direction:?} record type {content_type} before ChangeCipherSpec")]
    UnexpectedPlaintextRecord { direction: Direction, content_type: u8 },
    /// A plaintext alert that is not two bytes.
    #[error("{direction:?} malformed alert")]
    BadAlert { direction: Direction },
    /// A fatal plaintext alert during the handshake: the session failed.
    #[error("{direction:?} fatal alert {description} during the handshake")]
    FatalAlert { direction: Direction, description: u8 },
    /// ChangeCipherSpec payload was not the single byte 1.
    #[error("{direction:?} malformed ChangeCipherSpec")]
    BadChangeCipherSpec { direction: Direction },
    /// A handshake message arrived where another one was required.
    #[error("{direction:?} expected {expected}, got {got}")]
    UnexpectedHandshake { direction: Direction, expected: &'static str, got: &'static str },
    /// A required message or record is absent.
    #[error("missing {0}")]
    MissingMessage(&'static str),
    /// An encrypted record shorter than explicit nonce + tag.
    #[error("{direction:?} encrypted record {seq} has only {length} bytes")]
    EncryptedRecordTooShort { direction: Direction, seq: u64, length: usize },
    /// The first encrypted record (the Finished) is not of type handshake.
    #[error("{direction:?} first encrypted record has content type {content_type}, not handshake")]
    FinishedNotHandshake { direction: Direction, content_type: u8 },
    /// The encrypted Finished is not 16 bytes (4-byte header + 12-byte verify_data).
    #[error("{direction:?} encrypted Finished has {length} bytes of ciphertext, expected 16")]
    BadFinishedLength { direction: Direction, length: usize },
    /// An encrypted alert whose ciphertext is not two bytes.
    /// Two records of one direction share an explicit nonce: a replay, or a key's nonce used twice.
    #[error("{direction:?} encrypted record {seq} repeats an earlier record's explicit nonce")]
    RepeatedNonce { direction: Direction, seq: u64 },
    #[error("{direction:?} encrypted alert {seq} has {length} bytes, expected 2")]
    BadEncryptedAlertLength { direction: Direction, seq: u64, length: usize },
    /// After the Finished only application data and alerts are allowed (no renegotiation).
    #[error("{direction:?} encrypted record {seq} has disallowed content type {content_type}")]
    DisallowedEncryptedRecord { direction: Direction, seq: u64, content_type: u8 },
    /// An extension appears twice in a hello.
    #[error("{direction:?} hello repeats extension {extension}")]
    DuplicateExtension { direction: Direction, extension: u16 },
    /// ServerHello version other than TLS 1.2.
    #[error("server negotiated version {0:#06x}, not TLS 1.2")]
    UnsupportedServerVersion(u16),
    /// The ClientHello offered TLS 1.3 and the server's TLS 1.2 random carries the downgrade
    /// sentinel.
    #[error("the server answered a TLS 1.3 offer with TLS 1.2 and the downgrade sentinel")]
    Downgrade,
    /// The negotiated suite is not one we can prove (ECDHE + AES-128-GCM-SHA256).
    #[error("unsupported cipher suite {0:#06x}")]
    UnsupportedCipherSuite(u16),
    /// The server chose a suite the ClientHello did not offer.
    #[error("server chose cipher suite {0:#06x} that the client did not offer")]
    CipherSuiteNotOffered(u16),
    /// The ClientHello's server_name extension is malformed or names more than one host.
    #[error("malformed server_name extension in the ClientHello")]
    BadServerNameExtension,
    /// The SNI is not the name the certificate is validated for (an IP-literal name has none).
    #[error("the ClientHello's SNI {sni:?} is not the certified name {name:?}")]
    SniMismatch { sni: Option<String>, name: String },
    #[error("malformed ALPN extension")]
    BadAlpnExtension,
    /// ALPN offered or chosen with a protocol other than HTTP/1.1 (HTTP/2's header compression
    /// would make revealed header bytes depend on hidden ones).
    #[error("ALPN protocol other than http/1.1 {0:?}")]
    AlpnNotHttp11(String),
    /// The server chose a compression method other than null.
    #[error("server chose compression method {0}")]
    UnsupportedCompression(u8),
    /// The ClientHello did not offer null compression.
    #[error("client did not offer null compression")]
    NullCompressionNotOffered,
    /// The server answered an extension the client did not offer.
    #[error("server sent extension {0} the client did not offer")]
    ExtensionNotOffered(u16),
    /// The server resumed a session (abbreviated handshake); proofs need a full handshake.
    #[error("server resumed a session; a full handshake is required")]
    ResumptionNotSupported,
    /// The server sent an empty certificate chain.
    #[error("server certificate chain is empty")]
    EmptyCertificateChain,
    /// The client sent a non-empty certificate (client authentication is not supported).
    #[error("client certificates are not supported")]
    ClientCertificateNotSupported,
    /// ServerKeyExchange used an unknown group or one the client did not offer.
    #[error("unsupported or unoffered ECDHE group {0:#06x}")]
    UnsupportedGroup(u16),
    /// ServerKeyExchange used an unknown signature scheme, one the client did not offer, or one
    /// whose key type does not match the cipher suite.
    #[error("unsupported or unoffered signature scheme {0:#06x}")]
    UnsupportedSignatureScheme(u16),
    /// The server name given to [`SessionTranscript::validate_server`] is not a DNS name or IP.
    #[error("invalid server name")]
    InvalidServerName,
    /// The certificate chain did not validate (issuer, name or validity time).
    #[error("server certificate invalid: {0}")]
    InvalidCertificate(crate::tls::Error),
    /// The ServerKeyExchange signature does not verify under the leaf certificate's key.
    #[error("bad ServerKeyExchange signature")]
    BadServerKeyExchangeSignature,
    /// TLS 1.3: the ClientHello offered a pre-shared key or early data (a full handshake is
    /// required: a resumed session has no certificate to check).
    #[error("the ClientHello offers a pre-shared key or early data")]
    PskOffered,
    /// TLS 1.3: an encrypted handshake record does not decrypt under the keys of the opened
    /// handshake traffic secret, or carries something other than handshake messages.
    #[error("{direction:?} encrypted handshake does not decrypt under the opened secret")]
    HandshakeNotDecrypted { direction: Direction },
    /// TLS 1.3: the CertificateVerify signature does not verify under the leaf's key.
    #[error("bad CertificateVerify signature")]
    BadCertificateVerify,
    /// TLS 1.3: a Finished message's verify_data is not the HMAC of the transcript.
    #[error("{direction:?} Finished does not match the transcript")]
    BadFinished { direction: Direction },
    /// A structure inside a message could not be decoded.
    #[error("{direction:?}: {source}")]
    Tls {
        direction: Direction,
        #[source]
        source: crate::tls::Error,
    },
}
