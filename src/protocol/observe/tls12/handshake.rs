//! The plaintext handshake of a recorded session, read message by message against what the
//! verifier allows: the ClientHello's offer (SNI, ALPN, suites, groups), the server's choices,
//! its certificate chain and key exchange.

use super::*;
use crate::tls::codec::{self, ext, hs, CipherSuite, NamedGroup, Reader, SignatureScheme, TLS12};
use crate::tls::{Direction, HandshakeMessage, ServerKeyExchangeInfo};

pub(super) struct Handshake {
    pub(super) client_random: [u8; 32],
    pub(super) server_random: [u8; 32],
    pub(super) cipher_suite: CipherSuite,
    pub(super) ems: bool,
    pub(super) chain: Vec<Vec<u8>>,
    pub(super) ske: ServerKeyExchangeInfo,
    pub(super) sni: Option<String>,
    pub(super) messages: Vec<HandshakeMessage>,
    pub(super) nst: Option<HandshakeMessage>,
}

/// What the ClientHello offered.
pub(crate) struct ClientOffer {
    pub(super) random: [u8; 32],
    pub(crate) session_id: Vec<u8>,
    pub(crate) suites: Vec<u16>,
    pub(crate) extensions: std::collections::BTreeSet<u16>,
    /// `None` if the extension was absent (then anything is allowed, RFC 8422 §4).
    pub(crate) groups: Option<Vec<u16>>,
    /// `None` if absent (RFC 5246 §7.4.1.4.1 defaults; we accept any known scheme).
    pub(super) schemes: Option<Vec<u16>>,
    /// The one host_name in server_name, if the extension was sent.
    pub(crate) sni: Option<String>,
}

/// Iterator over one direction's messages with "expect this type next" checks.
pub(super) struct Messages<'a> {
    pub(super) direction: Direction,
    pub(super) it: std::iter::Peekable<std::slice::Iter<'a, (u8, Vec<u8>)>>,
}

impl<'a> Messages<'a> {
    fn new(direction: Direction, msgs: &'a [(u8, Vec<u8>)]) -> Self {
        Self { direction, it: msgs.iter().peekable() }
    }
    fn expect(&mut self, typ: u8) -> Result<&'a Vec<u8>, TranscriptError> {
        match self.it.next() {
            None => Err(TranscriptError::MissingMessage(hs::name(typ))),
            Some((t, m)) if *t == typ => Ok(m),
            Some((t, _)) => Err(TranscriptError::UnexpectedHandshake {
                direction: self.direction,
                expected: hs::name(typ),
                got: hs::name(*t),
            }),
        }
    }
    fn optional(&mut self, typ: u8) -> Option<&'a Vec<u8>> {
        match self.it.peek() {
            Some((t, _)) if *t == typ => self.it.next().map(|(_, m)| m),
            _ => None,
        }
    }
    /// No messages may follow before ChangeCipherSpec.
    fn end(&mut self) -> Result<(), TranscriptError> {
        match self.it.next() {
            None => Ok(()),
            Some((t, _)) => Err(TranscriptError::UnexpectedHandshake {
                direction: self.direction,
                expected: "ChangeCipherSpec",
                got: hs::name(*t),
            }),
        }
    }
}

pub(super) fn body(msg: &[u8]) -> &[u8] {
    // Messages come from the joiner, which always yields the 4-byte header.
    msg.get(4..).unwrap_or(&[])
}

pub(super) fn parse_handshake(
    sent: &[(u8, Vec<u8>)],
    received: &[(u8, Vec<u8>)],
) -> Result<Handshake, TranscriptError> {
    use Direction::{Received, Sent};
    let tls_s = |e| map_tls(Sent, e);
    let tls_r = |e| map_tls(Received, e);
    let mut c = Messages::new(Sent, sent);
    let mut s = Messages::new(Received, received);
    let mut messages = Vec::new();
    let mut push = |sender, typ, raw: &Vec<u8>| messages.push(HandshakeMessage { sender, typ, raw: raw.clone() });

    let ch = c.expect(hs::CLIENT_HELLO)?;
    let offer = parse_client_hello(body(ch))?;
    push(Sent, hs::CLIENT_HELLO, ch);

    let sh_msg = s.expect(hs::SERVER_HELLO)?;
    let sh = codec::parse_server_hello(body(sh_msg)).map_err(tls_r)?;
    if sh.version != TLS12 {
        return Err(TranscriptError::UnsupportedServerVersion(sh.version));
    }
    // A ClientHello with supported_versions offered TLS 1.3: a server that supports it and
    // answers TLS 1.2 marks its random (RFC 8446 §4.1.3), and then the offer was tampered with.
    if offer.extensions.contains(&crate::tls::tls13::messages::ext13::SUPPORTED_VERSIONS)
        && crate::tls::client::is_downgrade_sentinel(&sh.random)
    {
        return Err(TranscriptError::Downgrade);
    }
    let cipher_suite =
        CipherSuite::from_id(sh.cipher_suite).ok_or(TranscriptError::UnsupportedCipherSuite(sh.cipher_suite))?;
    if !offer.suites.contains(&sh.cipher_suite) {
        return Err(TranscriptError::CipherSuiteNotOffered(sh.cipher_suite));
    }
    if sh.compression != 0 {
        return Err(TranscriptError::UnsupportedCompression(sh.compression));
    }
    if !offer.session_id.is_empty() && sh.session_id == offer.session_id {
        return Err(TranscriptError::ResumptionNotSupported);
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut ems = false;
    let mut ticket_acked = false;
    for (t, b) in &sh.extensions {
        if !seen.insert(*t) {
            return Err(TranscriptError::DuplicateExtension { direction: Received, extension: *t });
        }
        let offered = offer.extensions.contains(t)
            || (*t == ext::RENEGOTIATION_INFO && offer.suites.contains(&EMPTY_RENEGOTIATION_INFO_SCSV));
        if !offered {
            return Err(TranscriptError::ExtensionNotOffered(*t));
        }
        match *t {
            ext::EXTENDED_MASTER_SECRET => {
                if !b.is_empty() {
                    return Err(tls_r(crate::tls::error::decode("extended_master_secret body")));
                }
                ems = true;
            }
            ext::SESSION_TICKET => ticket_acked = true,
            ext::ALPN => check_alpn(b)?,
            _ => {}
        }
    }
    push(Received, hs::SERVER_HELLO, sh_msg);

    let cert_msg = s.expect(hs::CERTIFICATE)?;
    let chain = codec::parse_certificate(body(cert_msg)).map_err(tls_r)?;
    if chain.is_empty() {
        return Err(TranscriptError::EmptyCertificateChain);
    }
    push(Received, hs::CERTIFICATE, cert_msg);

    let ske_msg = s.expect(hs::SERVER_KEY_EXCHANGE)?;
    let ske = codec::parse_server_key_exchange(body(ske_msg)).map_err(tls_r)?;
    let group = NamedGroup::from_id(ske.named_group)
        .filter(|_| offer.groups.as_ref().is_none_or(|g| g.contains(&ske.named_group)))
        .ok_or(TranscriptError::UnsupportedGroup(ske.named_group))?;
    let scheme = SignatureScheme::from_id(ske.scheme)
        .filter(|sc| sc.is_ecdsa() == cipher_suite.is_ecdsa())
        .filter(|_| offer.schemes.as_ref().is_none_or(|l| l.contains(&ske.scheme)))
        .ok_or(TranscriptError::UnsupportedSignatureScheme(ske.scheme))?;
    push(Received, hs::SERVER_KEY_EXCHANGE, ske_msg);

    let cert_request = s.optional(hs::CERTIFICATE_REQUEST);
    if let Some(cr) = cert_request {
        let mut r = Reader::new(body(cr));
        let types = r.vec8("CertificateRequest types").map_err(tls_r)?;
        if types.is_empty() {
            return Err(tls_r(crate::tls::error::decode("CertificateRequest types")));
        }
        r.vec16("CertificateRequest algorithms").map_err(tls_r)?;
        r.vec16("CertificateRequest authorities").map_err(tls_r)?;
        r.finish("CertificateRequest trailing bytes").map_err(tls_r)?;
        push(Received, hs::CERTIFICATE_REQUEST, cr);
    }
    let shd = s.expect(hs::SERVER_HELLO_DONE)?;
    if shd.len() != 4 {
        return Err(tls_r(crate::tls::error::decode("ServerHelloDone body")));
    }
    push(Received, hs::SERVER_HELLO_DONE, shd);

    if cert_request.is_some() {
        let cc = c.expect(hs::CERTIFICATE)?;
        let chain = codec::parse_certificate(body(cc)).map_err(tls_s)?;
        if !chain.is_empty() {
            return Err(TranscriptError::ClientCertificateNotSupported);
        }
        push(Sent, hs::CERTIFICATE, cc);
    }
    let cke = c.expect(hs::CLIENT_KEY_EXCHANGE)?;
    let mut r = Reader::new(body(cke));
    let public = r.vec8("ClientKeyExchange public").map_err(tls_s)?;
    r.finish("ClientKeyExchange trailing bytes").map_err(tls_s)?;
    if public.is_empty() {
        return Err(tls_s(crate::tls::error::decode("empty ClientKeyExchange")));
    }
    push(Sent, hs::CLIENT_KEY_EXCHANGE, cke);
    c.end()?;

    // RFC 5077 §3.3: NewSessionTicket is sent iff the server acknowledged the extension.
    let nst = if ticket_acked {
        let m = s.expect(hs::NEW_SESSION_TICKET)?;
        let mut r = Reader::new(body(m));
        r.u32("ticket lifetime").map_err(tls_r)?;
        r.vec16("ticket").map_err(tls_r)?;
        r.finish("NewSessionTicket trailing bytes").map_err(tls_r)?;
        Some(HandshakeMessage { sender: Received, typ: hs::NEW_SESSION_TICKET, raw: m.clone() })
    } else {
        None
    };
    s.end()?;

    Ok(Handshake {
        client_random: offer.random,
        server_random: sh.random,
        cipher_suite,
        ems,
        chain,
        ske: ServerKeyExchangeInfo { group, public: ske.public, params: ske.params, scheme, signature: ske.signature },
        sni: offer.sni,
        messages,
        nst,
    })
}

pub(super) fn parse_u16_list(body: &[u8], what: &'static str) -> Result<Vec<u16>, crate::tls::Error> {
    let mut r = Reader::new(body);
    let list = r.vec16(what)?;
    r.finish(what)?;
    if list.len() % 2 != 0 {
        return Err(crate::tls::error::decode(what));
    }
    Ok(list.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect())
}

pub(crate) fn parse_client_hello(body: &[u8]) -> Result<ClientOffer, TranscriptError> {
    let tls = |e| map_tls(Direction::Sent, e);
    let decode = |w| tls(crate::tls::error::decode(w));
    let mut r = Reader::new(body);
    r.u16("ClientHello version").map_err(tls)?;
    let mut random = [0u8; 32];
    random.copy_from_slice(r.take(32, "ClientHello random").map_err(tls)?);
    let session_id = r.vec8("ClientHello session_id").map_err(tls)?;
    if session_id.len() > 32 {
        return Err(decode("ClientHello session_id too long"));
    }
    let suites = r.vec16("ClientHello cipher_suites").map_err(tls)?;
    if suites.is_empty() || suites.len() % 2 != 0 {
        return Err(decode("ClientHello cipher_suites"));
    }
    let compression = r.vec8("ClientHello compression").map_err(tls)?;
    if !compression.contains(&0) {
        return Err(TranscriptError::NullCompressionNotOffered);
    }
    let mut extensions = std::collections::BTreeSet::new();
    let mut groups = None;
    let mut schemes = None;
    let mut sni = None;
    if !r.is_empty() {
        let mut er = Reader::new(r.vec16("ClientHello extensions").map_err(tls)?);
        while !er.is_empty() {
            let t = er.u16("extension type").map_err(tls)?;
            let b = er.vec16("extension body").map_err(tls)?;
            if !extensions.insert(t) {
                return Err(TranscriptError::DuplicateExtension { direction: Direction::Sent, extension: t });
            }
            match t {
                ext::SUPPORTED_GROUPS => groups = Some(parse_u16_list(b, "supported_groups").map_err(tls)?),
                ext::SIGNATURE_ALGORITHMS => schemes = Some(parse_u16_list(b, "signature_algorithms").map_err(tls)?),
                ext::SERVER_NAME => sni = Some(parse_sni(b)?),
                ext::ALPN => check_alpn(b)?,
                _ => {}
            }
        }
    }
    r.finish("ClientHello trailing bytes").map_err(tls)?;
    Ok(ClientOffer {
        random,
        session_id: session_id.to_vec(),
        suites: suites.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect(),
        extensions,
        groups,
        schemes,
        sni,
    })
}

/// The SNI of the ClientHello at the start of `message` (a handshake message with its 4-byte
/// header), checked as [`parse`] checks it; `Truncated` if the message is cut short.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn client_hello_sni(message: &[u8]) -> Result<Option<String>, TranscriptError> {
    let truncated = TranscriptError::Truncated { direction: Direction::Sent };
    let header = message.get(..4).ok_or(truncated.clone())?;
    let len = u32::from_be_bytes([0, header[1], header[2], header[3]]) as usize;
    let body = message.get(4..4 + len).ok_or(truncated)?;
    Ok(parse_client_hello(body)?.sni)
}

/// The one host_name of a ClientHello's server_name extension (RFC 6066 §3).
pub(super) fn parse_sni(body: &[u8]) -> Result<String, TranscriptError> {
    let bad = |_| TranscriptError::BadServerNameExtension;
    let mut r = Reader::new(body);
    let mut list = Reader::new(r.vec16("server_name list").map_err(bad)?);
    r.finish("server_name").map_err(bad)?;
    let name_type = list.u8("server_name type").map_err(bad)?;
    let name = list.vec16("host_name").map_err(bad)?;
    if name_type != 0 || !list.is_empty() || name.is_empty() || !name.iter().all(|c| c.is_ascii_graphic()) {
        return Err(TranscriptError::BadServerNameExtension);
    }
    Ok(String::from_utf8_lossy(name).into_owned())
}

/// An ALPN extension body (a ClientHello's offer or a ServerHello's choice) must name
/// http/1.1 and nothing else.
pub(super) fn check_alpn(body: &[u8]) -> Result<(), TranscriptError> {
    let bad = |_| TranscriptError::BadAlpnExtension;
    let mut r = Reader::new(body);
    let mut list = Reader::new(r.vec16("ALPN list").map_err(bad)?);
    r.finish("ALPN").map_err(bad)?;
    if list.is_empty() {
        return Err(TranscriptError::BadAlpnExtension);
    }
    while !list.is_empty() {
        let p = list.vec8("ALPN protocol").map_err(bad)?;
        if p != b"http/1.1" {
            return Err(TranscriptError::AlpnNotHttp11(String::from_utf8_lossy(p).into_owned()));
        }
    }
    Ok(())
}
