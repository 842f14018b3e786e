//! Wire encoding of TLS 1.2 records and handshake messages (RFC 5246, RFC 8422, RFC 7627).
//!
//! Every parser works on untrusted bytes: lengths are checked against the remaining input
//! before anything is sliced or allocated, and failures are [`PeerMisbehaved::DecodeError`](super::error::PeerMisbehaved::DecodeError).

use super::error::{decode, Error};

/// Record header length: type(1) ‖ version(2) ‖ length(2).
pub(crate) const RECORD_HEADER_LEN: usize = 5;
/// Maximum plaintext fragment length (2^14, RFC 5246 §6.2.1).
pub(crate) const MAX_PLAINTEXT: usize = 16384;
/// Maximum encrypted fragment length (2^14 + 2048, RFC 5246 §6.2.3).
pub(crate) const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 2048;
/// Upper bound on one handshake message (certificate chains are the largest).
pub(crate) const MAX_HANDSHAKE_MESSAGE: usize = 64 * 1024;
/// TLS 1.2 protocol version on the wire.
pub const TLS12: u16 = 0x0303;

/// Record content types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ContentType {
    ChangeCipherSpec = 20,
    Alert = 21,
    Handshake = 22,
    ApplicationData = 23,
}

impl ContentType {
    pub(crate) fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            20 => Self::ChangeCipherSpec,
            21 => Self::Alert,
            22 => Self::Handshake,
            23 => Self::ApplicationData,
            _ => return None,
        })
    }
}

/// Handshake message types we use.
pub mod hs {
    pub(crate) const HELLO_REQUEST: u8 = 0;
    pub(crate) const CLIENT_HELLO: u8 = 1;
    pub(crate) const SERVER_HELLO: u8 = 2;
    pub(crate) const NEW_SESSION_TICKET: u8 = 4;
    pub(crate) const CERTIFICATE: u8 = 11;
    pub(crate) const SERVER_KEY_EXCHANGE: u8 = 12;
    pub(crate) const CERTIFICATE_REQUEST: u8 = 13;
    pub(crate) const SERVER_HELLO_DONE: u8 = 14;
    pub(crate) const CLIENT_KEY_EXCHANGE: u8 = 16;
    pub(crate) const FINISHED: u8 = 20;

    /// Name of a handshake type for error messages.
    pub fn name(t: u8) -> &'static str {
        match t {
            0 => "HelloRequest",
            1 => "ClientHello",
            2 => "ServerHello",
            4 => "NewSessionTicket",
            11 => "Certificate",
            12 => "ServerKeyExchange",
            13 => "CertificateRequest",
            14 => "ServerHelloDone",
            15 => "CertificateVerify",
            16 => "ClientKeyExchange",
            20 => "Finished",
            _ => "unknown handshake message",
        }
    }
}

/// Extension numbers we send or accept.
pub mod ext {
    pub const SERVER_NAME: u16 = 0;
    pub(crate) const SUPPORTED_GROUPS: u16 = 10;
    pub(crate) const EC_POINT_FORMATS: u16 = 11;
    pub(crate) const SIGNATURE_ALGORITHMS: u16 = 13;
    pub(crate) const ALPN: u16 = 16;
    pub(crate) const EXTENDED_MASTER_SECRET: u16 = 23;
    pub(crate) const SESSION_TICKET: u16 = 35;
    pub(crate) const RENEGOTIATION_INFO: u16 = 0xff01;
}

/// Cipher suites this client implements: ECDHE with an AEAD (RFC 5289, RFC 7905).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CipherSuite {
    /// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 (RFC 5289).
    EcdheEcdsaAes128GcmSha256,
    /// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RFC 5289).
    EcdheRsaAes128GcmSha256,
    /// TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 (RFC 7905).
    EcdheEcdsaChaCha20Poly1305Sha256,
    /// TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 (RFC 7905).
    EcdheRsaChaCha20Poly1305Sha256,
    /// TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 (RFC 5289): the PRF is P_SHA384.
    EcdheEcdsaAes256GcmSha384,
    /// TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 (RFC 5289): the PRF is P_SHA384.
    EcdheRsaAes256GcmSha384,
}

/// The hash of a TLS 1.2 suite's PRF, which also hashes the handshake for the Finished
/// messages and the extended master secret (RFC 5246 §5, §7.4.9; RFC 7627 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrfHash {
    Sha256,
    Sha384,
}

impl PrfHash {
    /// Bytes of a digest (and of one HMAC output block of the PRF).
    pub fn output_len(self) -> usize {
        match self {
            PrfHash::Sha256 => 32,
            PrfHash::Sha384 => 48,
        }
    }
}

/// A TLS 1.2 suite's record protection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aead12 {
    /// AES-128-GCM (RFC 5288): 4-byte implicit salt, 8-byte explicit nonce per record.
    Aes128Gcm,
    /// AES-256-GCM (RFC 5288), framed as AES-128-GCM.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 7905): 12-byte IV XOR the padded sequence number, nothing
    /// explicit on the wire.
    ChaCha20Poly1305,
}

impl Aead12 {
    /// Write key length.
    pub fn key_len(self) -> usize {
        match self {
            Aead12::Aes128Gcm => 16,
            Aead12::Aes256Gcm | Aead12::ChaCha20Poly1305 => 32,
        }
    }
    /// Length of the write IV taken from the key block: the GCM salt or ChaCha20's whole IV.
    pub fn iv_len(self) -> usize {
        match self {
            Aead12::Aes128Gcm | Aead12::Aes256Gcm => 4,
            Aead12::ChaCha20Poly1305 => 12,
        }
    }
    /// Bytes of nonce each record carries before its ciphertext.
    pub fn explicit_nonce_len(self) -> usize {
        match self {
            Aead12::Aes128Gcm | Aead12::Aes256Gcm => 8,
            Aead12::ChaCha20Poly1305 => 0,
        }
    }
}

impl CipherSuite {
    /// Every suite, in the client's default order of preference: AES-128-GCM first (the
    /// cheapest to prove: 16-byte blocks of 1,280 committed bits and a SHA-256 PRF), then
    /// ChaCha20-Poly1305 (a SHA-256 PRF, but 64-byte blocks of about 10k AND gates, so a
    /// hidden byte costs about twice an AES-128 one), then AES-256-GCM (its PRF runs on
    /// SHA-512 compressions, about 2.5 times SHA-256's AND gates, whatever is revealed).
    pub const ALL: [CipherSuite; 6] = [
        CipherSuite::EcdheEcdsaAes128GcmSha256,
        CipherSuite::EcdheRsaAes128GcmSha256,
        CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256,
        CipherSuite::EcdheRsaChaCha20Poly1305Sha256,
        CipherSuite::EcdheEcdsaAes256GcmSha384,
        CipherSuite::EcdheRsaAes256GcmSha384,
    ];
    /// The AES-128-GCM suites: the only ones the two-party (MPC-mode) client implements.
    pub const AES_128: [CipherSuite; 2] =
        [CipherSuite::EcdheEcdsaAes128GcmSha256, CipherSuite::EcdheRsaAes128GcmSha256];
    pub fn id(self) -> u16 {
        match self {
            Self::EcdheEcdsaAes128GcmSha256 => 0xc02b,
            Self::EcdheRsaAes128GcmSha256 => 0xc02f,
            Self::EcdheEcdsaAes256GcmSha384 => 0xc02c,
            Self::EcdheRsaAes256GcmSha384 => 0xc030,
            Self::EcdheRsaChaCha20Poly1305Sha256 => 0xcca8,
            Self::EcdheEcdsaChaCha20Poly1305Sha256 => 0xcca9,
        }
    }
    pub(crate) fn from_id(id: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }
    /// The suite of an IANA name, if this client implements it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
    /// The IANA name.
    pub fn name(self) -> &'static str {
        match self {
            Self::EcdheEcdsaAes128GcmSha256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            Self::EcdheRsaAes128GcmSha256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            Self::EcdheEcdsaAes256GcmSha384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            Self::EcdheRsaAes256GcmSha384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            Self::EcdheEcdsaChaCha20Poly1305Sha256 => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            Self::EcdheRsaChaCha20Poly1305Sha256 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        }
    }
    /// Whether the server certificate carries an ECDSA key (else RSA).
    pub(crate) fn is_ecdsa(self) -> bool {
        matches!(
            self,
            Self::EcdheEcdsaAes128GcmSha256 | Self::EcdheEcdsaAes256GcmSha384 | Self::EcdheEcdsaChaCha20Poly1305Sha256
        )
    }
    /// The PRF's hash.
    pub fn prf_hash(self) -> PrfHash {
        match self {
            Self::EcdheEcdsaAes256GcmSha384 | Self::EcdheRsaAes256GcmSha384 => PrfHash::Sha384,
            _ => PrfHash::Sha256,
        }
    }
    /// The record protection.
    pub fn aead(self) -> Aead12 {
        match self {
            Self::EcdheEcdsaAes128GcmSha256 | Self::EcdheRsaAes128GcmSha256 => Aead12::Aes128Gcm,
            Self::EcdheEcdsaAes256GcmSha384 | Self::EcdheRsaAes256GcmSha384 => Aead12::Aes256Gcm,
            Self::EcdheEcdsaChaCha20Poly1305Sha256 | Self::EcdheRsaChaCha20Poly1305Sha256 => Aead12::ChaCha20Poly1305,
        }
    }
}

/// Named groups for ECDHE (RFC 8422).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedGroup {
    Secp256r1,
    X25519,
}

impl NamedGroup {
    pub fn id(self) -> u16 {
        match self {
            Self::Secp256r1 => 23,
            Self::X25519 => 29,
        }
    }
    pub(crate) fn from_id(id: u16) -> Option<Self> {
        match id {
            23 => Some(Self::Secp256r1),
            29 => Some(Self::X25519),
            _ => None,
        }
    }
    /// The IANA name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Secp256r1 => "secp256r1",
            Self::X25519 => "x25519",
        }
    }
}

/// Signature schemes accepted on ServerKeyExchange (TLS 1.2 SignatureAndHashAlgorithm codes)
/// and on TLS 1.3's CertificateVerify.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SignatureScheme {
    EcdsaP256Sha256,
    EcdsaP384Sha384,
    RsaPkcs1Sha256,
    RsaPkcs1Sha384,
    RsaPkcs1Sha512,
    RsaPssRsaeSha256,
    RsaPssRsaeSha384,
    RsaPssRsaeSha512,
    /// Offered in TLS 1.3 only, so not in [`Self::ALL`] (the TLS 1.2 offer).
    Ed25519,
}

impl SignatureScheme {
    pub const ALL: [SignatureScheme; 8] = [
        Self::EcdsaP256Sha256,
        Self::EcdsaP384Sha384,
        Self::RsaPssRsaeSha256,
        Self::RsaPssRsaeSha384,
        Self::RsaPssRsaeSha512,
        Self::RsaPkcs1Sha256,
        Self::RsaPkcs1Sha384,
        Self::RsaPkcs1Sha512,
    ];
    pub fn id(self) -> u16 {
        match self {
            Self::EcdsaP256Sha256 => 0x0403,
            Self::EcdsaP384Sha384 => 0x0503,
            Self::RsaPkcs1Sha256 => 0x0401,
            Self::RsaPkcs1Sha384 => 0x0501,
            Self::RsaPkcs1Sha512 => 0x0601,
            Self::RsaPssRsaeSha256 => 0x0804,
            Self::RsaPssRsaeSha384 => 0x0805,
            Self::RsaPssRsaeSha512 => 0x0806,
            Self::Ed25519 => 0x0807,
        }
    }
    pub(crate) fn from_id(id: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }
    pub(crate) fn is_ecdsa(self) -> bool {
        matches!(self, Self::EcdsaP256Sha256 | Self::EcdsaP384Sha384)
    }
    /// The webpki verification algorithm for this scheme.
    pub(crate) fn webpki_alg(self) -> &'static dyn rustls_pki_types::SignatureVerificationAlgorithm {
        use webpki::ring as alg;
        match self {
            Self::EcdsaP256Sha256 => alg::ECDSA_P256_SHA256,
            Self::EcdsaP384Sha384 => alg::ECDSA_P384_SHA384,
            Self::RsaPkcs1Sha256 => alg::RSA_PKCS1_2048_8192_SHA256,
            Self::RsaPkcs1Sha384 => alg::RSA_PKCS1_2048_8192_SHA384,
            Self::RsaPkcs1Sha512 => alg::RSA_PKCS1_2048_8192_SHA512,
            Self::RsaPssRsaeSha256 => alg::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
            Self::RsaPssRsaeSha384 => alg::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
            Self::RsaPssRsaeSha512 => alg::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
            Self::Ed25519 => alg::ED25519,
        }
    }
}

/// Bounds-checked reader over untrusted bytes.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(decode(what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }
    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, Error> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub(crate) fn u24(&mut self, what: &'static str) -> Result<usize, Error> {
        let b = self.take(3, what)?;
        Ok(((b[0] as usize) << 16) | ((b[1] as usize) << 8) | b[2] as usize)
    }
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn vec8(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.u8(what)? as usize;
        self.take(n, what)
    }
    pub(crate) fn vec16(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.u16(what)? as usize;
        self.take(n, what)
    }
    pub(crate) fn vec24(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.u24(what)?;
        self.take(n, what)
    }
    /// Error unless all input was consumed.
    pub(crate) fn finish(&self, what: &'static str) -> Result<(), Error> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(decode(what))
        }
    }
}

pub(crate) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}
pub(crate) fn put_u24(out: &mut Vec<u8>, v: usize) {
    debug_assert!(v < (1 << 24));
    out.extend_from_slice(&[(v >> 16) as u8, (v >> 8) as u8, v as u8]);
}
/// Append `body` with a 1-byte length prefix. Caller guarantees `body.len() < 256`.
pub(crate) fn put_vec8(out: &mut Vec<u8>, body: &[u8]) {
    debug_assert!(body.len() < 256);
    out.push(body.len() as u8);
    out.extend_from_slice(body);
}
/// Append `body` with a 2-byte length prefix. Caller guarantees `body.len() < 65536`.
pub(crate) fn put_vec16(out: &mut Vec<u8>, body: &[u8]) {
    debug_assert!(body.len() < 65536);
    put_u16(out, body.len() as u16);
    out.extend_from_slice(body);
}

/// Wrap a handshake body into a handshake message: type ‖ u24 length ‖ body.
pub fn handshake_message(typ: u8, body: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(4 + body.len());
    m.push(typ);
    put_u24(&mut m, body.len());
    m.extend_from_slice(body);
    m
}

/// A parsed record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub content_type: u8,
    pub version: u16,
    pub length: usize,
}

/// Parse a record header from the start of `buf`; `Ok(None)` if fewer than 5 bytes.
/// Rejects non-TLS bytes (version major != 3) and lengths above the ciphertext maximum.
pub(crate) fn parse_record_header(buf: &[u8]) -> Result<Option<RecordHeader>, Error> {
    use super::error::PeerMisbehaved;
    if buf.len() < RECORD_HEADER_LEN {
        return Ok(None);
    }
    let content_type = buf[0];
    let version = u16::from_be_bytes([buf[1], buf[2]]);
    let length = u16::from_be_bytes([buf[3], buf[4]]) as usize;
    if ContentType::from_u8(content_type).is_none() {
        return Err(PeerMisbehaved::UnknownContentType(content_type).into());
    }
    if buf[1] != 3 {
        return Err(PeerMisbehaved::UnsupportedVersion(version).into());
    }
    if length > MAX_CIPHERTEXT {
        return Err(PeerMisbehaved::RecordOverflow.into());
    }
    Ok(Some(RecordHeader { content_type, version, length }))
}

/// Reassembles handshake messages from record fragments (messages may span records and records
/// may hold several messages).
#[derive(Default, Debug)]
pub(crate) struct HandshakeJoiner {
    buf: Vec<u8>,
}

impl HandshakeJoiner {
    pub(crate) fn push(&mut self, fragment: &[u8]) {
        self.buf.extend_from_slice(fragment);
    }
    /// True if no partial message is buffered (required before ChangeCipherSpec).
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// Pop one complete message (type, full raw bytes incl. 4-byte header), if available.
    pub(crate) fn pop(&mut self) -> Result<Option<(u8, Vec<u8>)>, Error> {
        use super::error::PeerMisbehaved;
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = ((self.buf[1] as usize) << 16) | ((self.buf[2] as usize) << 8) | self.buf[3] as usize;
        if len > MAX_HANDSHAKE_MESSAGE {
            return Err(PeerMisbehaved::HandshakeMessageTooLarge(len).into());
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let typ = self.buf[0];
        let rest = self.buf.split_off(4 + len);
        let msg = std::mem::replace(&mut self.buf, rest);
        Ok(Some((typ, msg)))
    }
}

/// Parsed ServerHello.
#[derive(Clone, Debug)]
pub struct ServerHello {
    pub version: u16,
    pub random: [u8; 32],
    pub session_id: Vec<u8>,
    pub cipher_suite: u16,
    pub compression: u8,
    /// (type, body) in wire order.
    pub extensions: Vec<(u16, Vec<u8>)>,
}

pub(crate) fn parse_server_hello(body: &[u8]) -> Result<ServerHello, Error> {
    let mut r = Reader::new(body);
    let version = r.u16("ServerHello version")?;
    let mut random = [0u8; 32];
    random.copy_from_slice(r.take(32, "ServerHello random")?);
    let session_id = r.vec8("ServerHello session_id")?;
    if session_id.len() > 32 {
        return Err(decode("ServerHello session_id too long"));
    }
    let cipher_suite = r.u16("ServerHello cipher_suite")?;
    let compression = r.u8("ServerHello compression")?;
    let mut extensions = Vec::new();
    if !r.is_empty() {
        let mut er = Reader::new(r.vec16("ServerHello extensions")?);
        while !er.is_empty() {
            let t = er.u16("extension type")?;
            let b = er.vec16("extension body")?;
            extensions.push((t, b.to_vec()));
        }
    }
    r.finish("ServerHello trailing bytes")?;
    Ok(ServerHello { version, random, session_id: session_id.to_vec(), cipher_suite, compression, extensions })
}

/// Parse a Certificate message body into DER certificates (leaf first). Bounded by the
/// handshake message size limit, so the count is bounded too.
pub(crate) fn parse_certificate(body: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let mut r = Reader::new(body);
    let list = r.vec24("Certificate list")?;
    r.finish("Certificate trailing bytes")?;
    let mut lr = Reader::new(list);
    let mut certs = Vec::new();
    while !lr.is_empty() {
        let c = lr.vec24("certificate")?;
        if c.is_empty() {
            return Err(decode("empty certificate"));
        }
        certs.push(c.to_vec());
    }
    Ok(certs)
}

/// Parsed ECDHE ServerKeyExchange (RFC 8422 §5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EcdheServerKeyExchange {
    /// curve_type ‖ named_curve ‖ public (the bytes that are signed with the randoms).
    pub params: Vec<u8>,
    pub named_group: u16,
    pub public: Vec<u8>,
    pub scheme: u16,
    pub signature: Vec<u8>,
}

pub(crate) fn parse_server_key_exchange(body: &[u8]) -> Result<EcdheServerKeyExchange, Error> {
    use super::error::PeerMisbehaved;
    let mut r = Reader::new(body);
    let curve_type = r.u8("ServerKeyExchange curve_type")?;
    if curve_type != 3 {
        return Err(PeerMisbehaved::UnofferedGroup(0xff00 | curve_type as u16).into());
    }
    let named_group = r.u16("ServerKeyExchange named_curve")?;
    let public = r.vec8("ServerKeyExchange public")?;
    if public.is_empty() {
        return Err(decode("empty ECDHE public key"));
    }
    let params_len = 1 + 2 + 1 + public.len();
    let scheme = r.u16("ServerKeyExchange signature scheme")?;
    let signature = r.vec16("ServerKeyExchange signature")?;
    r.finish("ServerKeyExchange trailing bytes")?;
    Ok(EcdheServerKeyExchange {
        params: body[..params_len].to_vec(),
        named_group,
        public: public.to_vec(),
        scheme,
        signature: signature.to_vec(),
    })
}

/// Records split out of a byte stream: (header, payload) pairs.
pub(crate) type RecordSlices<'a> = Vec<(RecordHeader, &'a [u8])>;

/// Parse a record stream (plaintext framing only): returns (header, payload) pairs and the
/// number of bytes consumed. Used by tests and the fuzz target.
pub fn split_records(mut buf: &[u8]) -> Result<(RecordSlices<'_>, usize), Error> {
    let mut out = Vec::new();
    let mut used = 0;
    while let Some(h) = parse_record_header(buf)? {
        if buf.len() < RECORD_HEADER_LEN + h.length {
            break;
        }
        out.push((h, &buf[RECORD_HEADER_LEN..RECORD_HEADER_LEN + h.length]));
        used += RECORD_HEADER_LEN + h.length;
        buf = &buf[RECORD_HEADER_LEN + h.length..];
    }
    Ok((out, used))
}

/// The length of the whole TLS records at the start of `stream`.
pub(crate) fn whole_records_len(stream: &[u8]) -> usize {
    let mut at = 0;
    while let Ok(Some(h)) = parse_record_header(&stream[at..]) {
        let end = at + RECORD_HEADER_LEN + h.length;
        if end > stream.len() {
            break;
        }
        at = end;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joiner_fragments_and_coalesces() {
        let m1 = handshake_message(2, &[1, 2, 3]);
        let m2 = handshake_message(14, &[]);
        let mut all = m1.clone();
        all.extend_from_slice(&m2);
        let mut j = HandshakeJoiner::default();
        for b in &all[..5] {
            j.push(&[*b]);
            if j.buf.len() < m1.len() {
                assert!(j.pop().unwrap().is_none());
            }
        }
        j.push(&all[5..]);
        assert_eq!(j.pop().unwrap(), Some((2, m1)));
        assert_eq!(j.pop().unwrap(), Some((14, m2)));
        assert!(j.pop().unwrap().is_none());
        assert!(j.is_empty());
    }

    #[test]
    fn oversized_handshake_message_rejected() {
        let mut j = HandshakeJoiner::default();
        j.push(&[11, 0x10, 0, 0]);
        assert!(matches!(j.pop(), Err(Error::PeerMisbehaved(crate::tls::PeerMisbehaved::HandshakeMessageTooLarge(_)))));
    }

    #[test]
    fn truncated_inputs_are_decode_errors() {
        assert!(parse_server_hello(&[3, 3, 0]).is_err());
        assert!(parse_certificate(&[0, 0, 5, 0, 0, 9, 1]).is_err());
        assert!(parse_server_key_exchange(&[3, 0, 23, 65, 4]).is_err());
        assert!(parse_record_header(&[22, 3, 3, 0xff, 0xff]).is_err());
        assert!(parse_record_header(&[99, 3, 3, 0, 1]).is_err());
    }
}
