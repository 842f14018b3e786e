//! Wire encoding of the TLS 1.3 handshake messages the client sends and parses (RFC 8446 §4).
//! Parsers take untrusted bytes: every length is checked before slicing, an extension the
//! client did not offer or a duplicate one is refused, and errors name what the peer did.

use super::key_schedule::HashAlg;
use super::record::AeadAlg;
use crate::tls::codec::{ext, handshake_message, put_u16, put_vec16, put_vec8, NamedGroup, Reader, SignatureScheme};
use crate::tls::error::{Error, PeerMisbehaved};

/// The TLS 1.3 version number (supported_versions).
pub(crate) const TLS13: u16 = 0x0304;

/// Handshake message types TLS 1.3 adds.
pub(crate) mod hs13 {
    pub(crate) const ENCRYPTED_EXTENSIONS: u8 = 8;
    pub(crate) const CERTIFICATE_VERIFY: u8 = 15;
    pub(crate) const KEY_UPDATE: u8 = 24;
    /// The synthetic message that replaces the first ClientHello in the transcript after a
    /// HelloRetryRequest (RFC 8446 §4.4.1).
    pub(crate) const MESSAGE_HASH: u8 = 254;
}

/// Extension numbers TLS 1.3 adds.
pub(crate) mod ext13 {
    pub(crate) const PRE_SHARED_KEY: u16 = 41;
    pub(crate) const EARLY_DATA: u16 = 42;
    pub(crate) const SUPPORTED_VERSIONS: u16 = 43;
    pub(crate) const COOKIE: u16 = 44;
    pub(crate) const KEY_SHARE: u16 = 51;
}

/// The TLS 1.3 cipher suites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Suite13 {
    /// TLS_AES_128_GCM_SHA256, the one every TLS 1.3 server has.
    Aes128GcmSha256,
    /// TLS_AES_256_GCM_SHA384.
    Aes256GcmSha384,
    /// TLS_CHACHA20_POLY1305_SHA256.
    ChaCha20Poly1305Sha256,
}

impl Suite13 {
    pub const ALL: [Suite13; 3] = [Self::Aes128GcmSha256, Self::Aes256GcmSha384, Self::ChaCha20Poly1305Sha256];
    /// The prover's default offer, cheapest proof first: AES-128-GCM, which every TLS 1.3
    /// server implements (RFC 8446 §9.1; its keystream costs half of ChaCha20's in ZK), then
    /// ChaCha20-Poly1305, then AES-256-GCM with SHA-384 (its key derivation runs on SHA-384's
    /// compressions, about 2.5 times SHA-256's AND gates each, and its blocks take 14 rounds).
    pub const PROVER_DEFAULT: [Suite13; 3] =
        [Self::Aes128GcmSha256, Self::ChaCha20Poly1305Sha256, Self::Aes256GcmSha384];
    /// The suite with this IANA name.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
    pub fn id(self) -> u16 {
        match self {
            Self::Aes128GcmSha256 => 0x1301,
            Self::Aes256GcmSha384 => 0x1302,
            Self::ChaCha20Poly1305Sha256 => 0x1303,
        }
    }
    pub(crate) fn from_id(id: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }
    /// The IANA name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Aes128GcmSha256 => "TLS_AES_128_GCM_SHA256",
            Self::Aes256GcmSha384 => "TLS_AES_256_GCM_SHA384",
            Self::ChaCha20Poly1305Sha256 => "TLS_CHACHA20_POLY1305_SHA256",
        }
    }
    pub fn hash(self) -> HashAlg {
        match self {
            Self::Aes256GcmSha384 => HashAlg::Sha384,
            _ => HashAlg::Sha256,
        }
    }
    pub fn aead(self) -> AeadAlg {
        match self {
            Self::Aes128GcmSha256 => AeadAlg::Aes128Gcm,
            Self::Aes256GcmSha384 => AeadAlg::Aes256Gcm,
            Self::ChaCha20Poly1305Sha256 => AeadAlg::ChaCha20Poly1305,
        }
    }
}

/// The schemes a TLS 1.3 server may sign its CertificateVerify with (RFC 8446 §4.2.3: no
/// PKCS#1 v1.5 there, which is still offered for the certificates' own signatures).
pub(crate) const CERTIFICATE_VERIFY_SCHEMES: [SignatureScheme; 6] = [
    SignatureScheme::EcdsaP256Sha256,
    SignatureScheme::EcdsaP384Sha384,
    SignatureScheme::Ed25519,
    SignatureScheme::RsaPssRsaeSha256,
    SignatureScheme::RsaPssRsaeSha384,
    SignatureScheme::RsaPssRsaeSha512,
];

/// What a ClientHello offers.
pub(crate) struct ClientHelloParams<'a> {
    pub random: &'a [u8; 32],
    pub session_id: &'a [u8; 32],
    /// The SNI host name; `None` for an IP-literal server.
    pub server_name: Option<&'a str>,
    pub suites: &'a [Suite13],
    pub groups: &'a [NamedGroup],
    /// The key share sent (one: the first group, or the one a HelloRetryRequest asked for).
    pub key_share: (NamedGroup, &'a [u8]),
    pub alpn_http11: bool,
    /// The cookie a HelloRetryRequest carried, echoed.
    pub cookie: Option<&'a [u8]>,
    /// Offer TLS 1.2 too, with these suites and extensions ([`Tls12Offer`]).
    pub tls12: Option<&'a Tls12Offer>,
}

/// What a ClientHello that also offers TLS 1.2 adds: the 1.2 suites and the extensions a
/// TLS 1.2 handshake uses (the TLS 1.2 client continues from this ClientHello when the server
/// chooses 1.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls12Offer {
    pub suites: Vec<u16>,
    pub extended_master_secret: bool,
    pub session_ticket: bool,
}

/// The ClientHello handshake message (header included).
pub(crate) fn client_hello(p: &ClientHelloParams<'_>) -> Vec<u8> {
    let mut b = Vec::new();
    put_u16(&mut b, 0x0303);
    b.extend_from_slice(p.random);
    // A non-empty legacy session id: middlebox compatibility mode (RFC 8446 §D.4).
    put_vec8(&mut b, p.session_id);
    let tls12_suites = p.tls12.map(|o| o.suites.as_slice()).unwrap_or_default();
    let suites: Vec<u8> =
        p.suites.iter().map(|s| s.id()).chain(tls12_suites.iter().copied()).flat_map(u16::to_be_bytes).collect();
    put_vec16(&mut b, &suites);
    put_vec8(&mut b, &[0]);
    let mut exts = Vec::new();
    let mut add = |t: u16, body: &[u8]| {
        put_u16(&mut exts, t);
        put_vec16(&mut exts, body);
    };
    if let Some(host) = p.server_name {
        let mut entry = vec![0u8];
        put_vec16(&mut entry, host.as_bytes());
        let mut list = Vec::new();
        put_vec16(&mut list, &entry);
        add(ext::SERVER_NAME, &list);
    }
    if p.tls12.is_some() {
        add(ext13::SUPPORTED_VERSIONS, &[4, 0x03, 0x04, 0x03, 0x03]);
    } else {
        add(ext13::SUPPORTED_VERSIONS, &[2, 0x03, 0x04]);
    }
    let groups: Vec<u8> = p.groups.iter().flat_map(|g| g.id().to_be_bytes()).collect();
    let mut list = Vec::new();
    put_vec16(&mut list, &groups);
    add(ext::SUPPORTED_GROUPS, &list);
    let schemes: Vec<u8> = CERTIFICATE_VERIFY_SCHEMES
        .iter()
        .chain(&[SignatureScheme::RsaPkcs1Sha256, SignatureScheme::RsaPkcs1Sha384, SignatureScheme::RsaPkcs1Sha512])
        .flat_map(|s| s.id().to_be_bytes())
        .collect();
    let mut list = Vec::new();
    put_vec16(&mut list, &schemes);
    add(ext::SIGNATURE_ALGORITHMS, &list);
    let mut entry = Vec::new();
    put_u16(&mut entry, p.key_share.0.id());
    put_vec16(&mut entry, p.key_share.1);
    let mut list = Vec::new();
    put_vec16(&mut list, &entry);
    add(ext13::KEY_SHARE, &list);
    if p.alpn_http11 {
        let mut list = Vec::new();
        put_vec8(&mut list, b"http/1.1");
        let mut body = Vec::new();
        put_vec16(&mut body, &list);
        add(ext::ALPN, &body);
    }
    if let Some(cookie) = p.cookie {
        let mut body = Vec::new();
        put_vec16(&mut body, cookie);
        add(ext13::COOKIE, &body);
    }
    if let Some(o) = p.tls12 {
        add(ext::EC_POINT_FORMATS, &[1, 0]);
        if o.extended_master_secret {
            add(ext::EXTENDED_MASTER_SECRET, &[]);
        }
        if o.session_ticket {
            add(ext::SESSION_TICKET, &[]);
        }
        add(ext::RENEGOTIATION_INFO, &[0]);
    }
    put_vec16(&mut b, &exts);
    handshake_message(crate::tls::codec::hs::CLIENT_HELLO, &b)
}

/// The version a ServerHello (or HelloRetryRequest) body negotiates: its supported_versions
/// extension's, or the legacy version field's when it has none (TLS 1.2 and below). Reads only
/// what it needs; the version's own parser checks the rest.
pub(crate) fn server_hello_version(body: &[u8]) -> Result<u16, Error> {
    let mut r = Reader::new(body);
    let legacy = r.u16("ServerHello version")?;
    r.take(32, "ServerHello random")?;
    r.vec8("ServerHello session id")?;
    r.take(3, "ServerHello cipher suite and compression")?;
    if r.is_empty() {
        return Ok(legacy);
    }
    let mut extensions = Reader::new(r.vec16("ServerHello extensions")?);
    while !extensions.is_empty() {
        let typ = extensions.u16("extension type")?;
        let mut body = Reader::new(extensions.vec16("extension body")?);
        if typ == ext13::SUPPORTED_VERSIONS {
            return body.u16("supported_versions");
        }
    }
    Ok(legacy)
}

/// A parsed ServerHello or HelloRetryRequest (they share the encoding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerHello13 {
    pub random: [u8; 32],
    pub session_id: Vec<u8>,
    pub suite: u16,
    /// supported_versions' selected version, if the extension was there.
    pub version: Option<u16>,
    /// A ServerHello's key share (group, public key), or a HelloRetryRequest's selected group
    /// (with an empty key).
    pub key_share: Option<(u16, Vec<u8>)>,
    pub cookie: Option<Vec<u8>>,
}

/// The ServerHello.random that marks a HelloRetryRequest: SHA-256("HelloRetryRequest").
pub(crate) fn hello_retry_random() -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, b"HelloRetryRequest");
    let mut r = [0u8; 32];
    r.copy_from_slice(d.as_ref());
    r
}

impl ServerHello13 {
    pub(crate) fn is_retry_request(&self) -> bool {
        self.random == hello_retry_random()
    }
}

/// Parse a ServerHello or HelloRetryRequest body. Extensions other than supported_versions,
/// key_share and (in a HelloRetryRequest) cookie were not offered and are refused.
pub(crate) fn parse_server_hello(body: &[u8]) -> Result<ServerHello13, Error> {
    let mut r = Reader::new(body);
    let _legacy_version = r.u16("ServerHello version")?;
    let mut random = [0u8; 32];
    random.copy_from_slice(r.take(32, "ServerHello random")?);
    let session_id = r.vec8("ServerHello session id")?.to_vec();
    let suite = r.u16("ServerHello cipher suite")?;
    let compression = r.u8("ServerHello compression")?;
    if compression != 0 {
        return Err(PeerMisbehaved::UnofferedCompression(compression).into());
    }
    let mut hello = ServerHello13 { random, session_id, suite, version: None, key_share: None, cookie: None };
    let retry = hello.is_retry_request();
    let exts = r.vec16("ServerHello extensions")?;
    r.finish("ServerHello")?;
    each_extension(exts, |typ, e| {
        match typ {
            ext13::SUPPORTED_VERSIONS => hello.version = Some(e.u16("supported_versions")?),
            ext13::KEY_SHARE if retry => hello.key_share = Some((e.u16("key_share group")?, Vec::new())),
            ext13::KEY_SHARE => {
                let group = e.u16("key_share group")?;
                hello.key_share = Some((group, e.vec16("key_share key")?.to_vec()));
            }
            ext13::COOKIE if retry => hello.cookie = Some(e.vec16("cookie")?.to_vec()),
            ext13::PRE_SHARED_KEY => return Err(PeerMisbehaved::ResumptionAttempted.into()),
            other => return Err(PeerMisbehaved::UnofferedExtension(other).into()),
        }
        Ok(())
    })?;
    Ok(hello)
}

/// Hands each extension of a list to `on`, with its body in a reader that must be used up;
/// a repeated extension is refused.
fn each_extension(list: &[u8], mut on: impl FnMut(u16, &mut Reader<'_>) -> Result<(), Error>) -> Result<(), Error> {
    let mut exts = Reader::new(list);
    let mut seen = Vec::new();
    while !exts.is_empty() {
        let typ = exts.u16("extension type")?;
        let mut e = Reader::new(exts.vec16("extension body")?);
        if seen.contains(&typ) {
            return Err(PeerMisbehaved::DuplicateExtension(typ).into());
        }
        seen.push(typ);
        on(typ, &mut e)?;
        e.finish("extension body")?;
    }
    Ok(())
}

/// What EncryptedExtensions told us: the negotiated ALPN protocol, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EncryptedExtensions {
    pub alpn: Option<Vec<u8>>,
}

/// Parse EncryptedExtensions: server_name (empty), supported_groups (the server's preference,
/// ignored) and ALPN (only if offered) are allowed; anything else was not offered.
pub(crate) fn parse_encrypted_extensions(body: &[u8], offered_alpn: bool) -> Result<EncryptedExtensions, Error> {
    let mut r = Reader::new(body);
    let exts = r.vec16("EncryptedExtensions")?;
    r.finish("EncryptedExtensions")?;
    let mut out = EncryptedExtensions::default();
    each_extension(exts, |typ, e| {
        match typ {
            ext::SERVER_NAME => {}
            ext::SUPPORTED_GROUPS => {
                e.vec16("supported_groups")?;
            }
            ext::ALPN if offered_alpn => {
                let mut list = Reader::new(e.vec16("ALPN list")?);
                let proto = list.vec8("ALPN protocol")?.to_vec();
                list.finish("ALPN list")?;
                out.alpn = Some(proto);
            }
            other => return Err(PeerMisbehaved::UnofferedExtension(other).into()),
        }
        Ok(())
    })?;
    Ok(out)
}

/// Parse a TLS 1.3 Certificate: the request context must be empty (we never send a
/// CertificateRequest), every entry's extensions empty (we offer none that could fill them).
pub(crate) fn parse_certificate(body: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let mut r = Reader::new(body);
    if !r.vec8("certificate_request_context")?.is_empty() {
        return Err(PeerMisbehaved::DecodeError("server Certificate with a request context").into());
    }
    let mut list = Reader::new(r.vec24("certificate_list")?);
    r.finish("Certificate")?;
    let mut chain = Vec::new();
    while !list.is_empty() {
        chain.push(list.vec24("cert_data")?.to_vec());
        let mut e = Reader::new(list.vec16("certificate entry extensions")?);
        if !e.is_empty() {
            return Err(PeerMisbehaved::UnofferedExtension(e.u16("extension type")?).into());
        }
    }
    if chain.is_empty() {
        return Err(PeerMisbehaved::NoCertificate.into());
    }
    Ok(chain)
}

/// Parse a CertificateVerify: (scheme, signature).
pub(crate) fn parse_certificate_verify(body: &[u8]) -> Result<(u16, &[u8]), Error> {
    let mut r = Reader::new(body);
    let scheme = r.u16("CertificateVerify scheme")?;
    let signature = r.vec16("CertificateVerify signature")?;
    r.finish("CertificateVerify")?;
    Ok((scheme, signature))
}

/// Checks a server CertificateVerify body under the leaf certificate: the scheme must be one
/// TLS 1.3 allows, the signature over [`server_signed_content`] of the hash through
/// Certificate must verify.
pub(crate) fn verify_certificate_verify(leaf: &[u8], body: &[u8], transcript_hash: &[u8]) -> Result<(), Error> {
    let (scheme, signature) = parse_certificate_verify(body)?;
    let scheme = CERTIFICATE_VERIFY_SCHEMES
        .into_iter()
        .find(|s| s.id() == scheme)
        .ok_or(PeerMisbehaved::UnofferedSignatureScheme(scheme))?;
    let leaf = rustls_pki_types::CertificateDer::from(leaf);
    let ee = webpki::EndEntityCert::try_from(&leaf).map_err(Error::Certificate)?;
    ee.verify_signature(scheme.webpki_alg(), &server_signed_content(transcript_hash), signature).map_err(|e| match e {
        webpki::Error::InvalidSignatureForPublicKey
        | webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => {
            PeerMisbehaved::BadCertificateVerify.into()
        }
        other => Error::Certificate(other),
    })
}

/// What the server's CertificateVerify signs: 64 spaces, the context string, a zero byte and
/// the transcript hash through Certificate (RFC 8446 §4.4.3).
pub(crate) fn server_signed_content(transcript_hash: &[u8]) -> Vec<u8> {
    let mut m = vec![0x20u8; 64];
    m.extend_from_slice(b"TLS 1.3, server CertificateVerify\0");
    m.extend_from_slice(transcript_hash);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_hello(random: [u8; 32], exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut b = vec![3, 3];
        b.extend_from_slice(&random);
        put_vec8(&mut b, &[7; 32]);
        put_u16(&mut b, 0x1301);
        b.push(0);
        let mut e = Vec::new();
        for (t, body) in exts {
            put_u16(&mut e, *t);
            put_vec16(&mut e, body);
        }
        put_vec16(&mut b, &e);
        b
    }

    #[test]
    fn the_retry_marker_is_rfc8446s() {
        assert_eq!(hello_retry_random()[..8], [0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11], "RFC 8446 §4.1.3");
    }

    #[test]
    fn server_hellos_parse_and_unoffered_or_duplicate_extensions_are_refused() {
        let share = |k: &[u8]| {
            let mut b = vec![0, 29];
            put_vec16(&mut b, k);
            b
        };
        let ok = server_hello([1; 32], &[(ext13::SUPPORTED_VERSIONS, vec![3, 4]), (ext13::KEY_SHARE, share(&[5; 32]))]);
        let hello = parse_server_hello(&ok).unwrap();
        assert!(!hello.is_retry_request());
        assert_eq!((hello.version, hello.key_share), (Some(TLS13), Some((29, vec![5; 32]))));

        let retry =
            server_hello(hello_retry_random(), &[(ext13::KEY_SHARE, vec![0, 23]), (ext13::COOKIE, vec![0, 2, 9, 9])]);
        let hello = parse_server_hello(&retry).unwrap();
        assert!(hello.is_retry_request());
        assert_eq!((hello.key_share, hello.cookie), (Some((23, vec![])), Some(vec![9, 9])));

        let dup =
            server_hello([1; 32], &[(ext13::SUPPORTED_VERSIONS, vec![3, 4]), (ext13::SUPPORTED_VERSIONS, vec![3, 4])]);
        assert_eq!(parse_server_hello(&dup), Err(PeerMisbehaved::DuplicateExtension(43).into()));
        let psk = server_hello([1; 32], &[(ext13::PRE_SHARED_KEY, vec![0, 0])]);
        assert_eq!(parse_server_hello(&psk), Err(PeerMisbehaved::ResumptionAttempted.into()));
        let cookie = server_hello([1; 32], &[(ext13::COOKIE, vec![0, 0])]);
        assert_eq!(parse_server_hello(&cookie), Err(PeerMisbehaved::UnofferedExtension(44).into()));
        for cut in 0..ok.len() {
            assert!(parse_server_hello(&ok[..cut]).is_err(), "a ServerHello cut at {cut}");
        }
    }

    #[test]
    fn encrypted_extensions_allow_only_what_was_offered() {
        let mut alpn = Vec::new();
        put_u16(&mut alpn, ext::ALPN);
        put_vec16(&mut alpn, &[0, 9, 8, b'h', b't', b't', b'p', b'/', b'1', b'.', b'1']);
        let mut body = Vec::new();
        put_vec16(&mut body, &alpn);
        assert_eq!(parse_encrypted_extensions(&body, true).unwrap().alpn.as_deref(), Some(&b"http/1.1"[..]));
        assert_eq!(parse_encrypted_extensions(&body, false), Err(PeerMisbehaved::UnofferedExtension(16).into()));
        let mut early = Vec::new();
        put_vec16(&mut early, &[0, 42, 0, 0]);
        assert_eq!(parse_encrypted_extensions(&early, true), Err(PeerMisbehaved::UnofferedExtension(42).into()));
    }

    #[test]
    fn certificates_need_an_empty_context_entries_without_extensions_and_one_entry() {
        let entry = |ext: &[u8]| {
            let mut e = Vec::new();
            crate::tls::codec::put_u24(&mut e, 3);
            e.extend_from_slice(&[1, 2, 3]);
            put_vec16(&mut e, ext);
            e
        };
        let cert = |ctx: &[u8], entries: &[u8]| {
            let mut b = Vec::new();
            put_vec8(&mut b, ctx);
            crate::tls::codec::put_u24(&mut b, entries.len());
            b.extend_from_slice(entries);
            b
        };
        assert_eq!(parse_certificate(&cert(&[], &entry(&[]))).unwrap(), vec![vec![1, 2, 3]]);
        assert!(parse_certificate(&cert(&[1], &entry(&[]))).is_err());
        assert_eq!(
            parse_certificate(&cert(&[], &entry(&[0, 5, 0, 0]))),
            Err(PeerMisbehaved::UnofferedExtension(5).into())
        );
        assert_eq!(parse_certificate(&cert(&[], &[])), Err(PeerMisbehaved::NoCertificate.into()));
    }
}
