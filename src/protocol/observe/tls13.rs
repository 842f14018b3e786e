//! The verifier's view of a proxy-mode TLS 1.3 session (sans-IO; docs/protocol.md, "TLS 1.3
//! in proxy mode").
//!
//! [`parse`] splits the two relayed streams into the plaintext hellos and the encrypted
//! records, and checks what needs no key: the ClientHello (SNI, ALPN, no PSK or early data) and
//! the ServerHello (TLS 1.3, a suite and a group the client offered, the session id
//! echoed, after at most one HelloRetryRequest); it computes Hash(ClientHello..ServerHello).
//! Once the proof has opened the handshake traffic secrets, [`Transcript13::read_handshake`]
//! decrypts both encrypted handshakes with them and checks the certificate chain for the
//! certified name, the CertificateVerify signature and both Finished messages; it gives
//! Hash(ClientHello..server Finished), over which the application secrets are derived.
//!
//! Every length is checked before slicing, counts are bounded, and each failure is a specific
//! [`TranscriptError`].

use crate::protocol::messages::TlsVersion;
use crate::protocol::observe::tls12::{
    map_tls, parse_client_hello, ClientOffer, TranscriptError, MAX_HANDSHAKE_MESSAGES, MAX_RECORDS_PER_DIRECTION,
};
use crate::tls::certs::{verify_server_chain, RootStore};
use crate::tls::codec::{handshake_message, hs, parse_record_header, ContentType, HandshakeJoiner, RECORD_HEADER_LEN};
use crate::tls::tls13::key_schedule::{finished_verify_data, Secret};
use crate::tls::tls13::messages::{self, ext13, hs13, Suite13, TLS13};
use crate::tls::tls13::record::RecordKey;
use crate::tls::tls13::TrafficKeys;
use crate::tls::Direction;
use rustls_pki_types::{ServerName, UnixTime};

/// A relayed session before any key is known.
#[derive(Clone, Debug)]
pub(crate) struct Transcript13 {
    sni: Option<String>,
    offered_alpn: bool,
    suite: Suite13,
    group: u16,
    /// The handshake messages through the ServerHello, as the transcript hash covers them.
    hello_messages: Vec<u8>,
    /// Encrypted records (payload: ciphertext ‖ tag) per direction, in order.
    sent: Vec<Vec<u8>>,
    received: Vec<Vec<u8>>,
}

/// What the encrypted handshake showed, once read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Handshake13 {
    pub chain: Vec<Vec<u8>>,
    /// Hash(ClientHello..server Finished): the context of the application traffic secrets.
    pub server_finished_hash: Vec<u8>,
    /// Per direction ([sent, received]), how many encrypted records the handshake took: the
    /// application records (sequence numbers from 0 under the application keys) follow.
    pub handshake_records: [usize; 2],
}

/// The records of one stream: the plaintext handshake messages and ChangeCipherSpecs before
/// the first encrypted record, then the encrypted records.
fn split(direction: Direction, stream: &[u8]) -> Result<(Vec<(u8, Vec<u8>)>, Vec<Vec<u8>>), TranscriptError> {
    let tls = |e| map_tls(direction, e);
    let (mut messages, mut encrypted) = (Vec::new(), Vec::new());
    let mut joiner = HandshakeJoiner::default();
    let mut rest = stream;
    let mut records = 0usize;
    while !rest.is_empty() {
        let header = parse_record_header(rest).map_err(tls)?.ok_or(TranscriptError::Truncated { direction })?;
        let end = RECORD_HEADER_LEN + header.length;
        let body = rest.get(RECORD_HEADER_LEN..end).ok_or(TranscriptError::Truncated { direction })?;
        rest = &rest[end..];
        records += 1;
        if records > MAX_RECORDS_PER_DIRECTION {
            return Err(TranscriptError::TooManyRecords { direction });
        }
        match ContentType::from_u8(header.content_type) {
            Some(ContentType::ApplicationData) => {
                if body.len() > crate::tls::tls13::record::MAX_ENCRYPTED {
                    return Err(TranscriptError::RecordOverflow { direction, length: body.len() });
                }
                encrypted.push(body.to_vec());
            }
            _ if !encrypted.is_empty() => {
                return Err(TranscriptError::UnexpectedPlaintextRecord {
                    direction,
                    content_type: header.content_type,
                });
            }
            Some(ContentType::ChangeCipherSpec) if body == [1] && joiner.is_empty() => {}
            Some(ContentType::ChangeCipherSpec) => return Err(TranscriptError::BadChangeCipherSpec { direction }),
            Some(ContentType::Handshake) if !body.is_empty() => {
                joiner.push(body);
                while let Some(message) = joiner.pop().map_err(tls)? {
                    messages.push(message);
                    if messages.len() > MAX_HANDSHAKE_MESSAGES {
                        return Err(TranscriptError::TooManyHandshakeMessages { direction });
                    }
                }
            }
            Some(ContentType::Alert) => {
                let description = body.get(1).copied().ok_or(TranscriptError::BadAlert { direction })?;
                return Err(TranscriptError::FatalAlert { direction, description });
            }
            _ => return Err(TranscriptError::EmptyFragment { direction, content_type: header.content_type }),
        }
    }
    if !joiner.is_empty() {
        return Err(TranscriptError::Truncated { direction });
    }
    Ok((messages, encrypted))
}

fn expect<'a>(
    direction: Direction,
    messages: &'a [(u8, Vec<u8>)],
    i: usize,
    typ: u8,
    name: &'static str,
) -> Result<&'a [u8], TranscriptError> {
    match messages.get(i) {
        Some((t, raw)) if *t == typ => Ok(raw),
        Some((t, _)) => Err(TranscriptError::UnexpectedHandshake { direction, expected: name, got: hs::name(*t) }),
        None => Err(TranscriptError::MissingMessage(name)),
    }
}

/// The ClientHello's rules for a TLS 1.3 session: no pre-shared key or early data.
fn check_offer(offer: &ClientOffer) -> Result<(), TranscriptError> {
    if offer.extensions.contains(&ext13::PRE_SHARED_KEY) || offer.extensions.contains(&ext13::EARLY_DATA) {
        return Err(TranscriptError::PskOffered);
    }
    Ok(())
}

/// The TLS version the server chose, from the relayed stream's first ServerHello (or
/// HelloRetryRequest): TLS 1.3 when its supported_versions says so, otherwise TLS 1.2. Each
/// version's own parser then checks the whole session.
pub(crate) fn server_version(received: &[u8]) -> Result<TlsVersion, TranscriptError> {
    use crate::tls::any_version::{first_server_message, FirstServerMessage};
    let direction = Direction::Received;
    match first_server_message(received).map_err(|e| map_tls(direction, e))? {
        FirstServerMessage::ServerHello { version: TLS13 } => Ok(TlsVersion::Tls13),
        FirstServerMessage::ServerHello { .. } => Ok(TlsVersion::Tls12),
        FirstServerMessage::Incomplete => Err(TranscriptError::Truncated { direction }),
        // The TLS 1.2 reading names what came instead (an alert, another message).
        FirstServerMessage::Other => Ok(TlsVersion::Tls12),
    }
}

/// Split and check the relayed streams of a TLS 1.3 session (see the module doc).
pub(crate) fn parse(sent: &[u8], received: &[u8]) -> Result<Transcript13, TranscriptError> {
    let (client_messages, sent_records) = split(Direction::Sent, sent)?;
    let (server_messages, received_records) = split(Direction::Received, received)?;
    let (c, s) = (Direction::Sent, Direction::Received);
    let hello1 = expect(c, &client_messages, 0, hs::CLIENT_HELLO, "ClientHello")?;
    let offer = parse_client_hello(&hello1[4..])?;
    check_offer(&offer)?;
    let first = expect(s, &server_messages, 0, hs::SERVER_HELLO, "ServerHello")?;
    let first_hello = messages::parse_server_hello(&first[4..]).map_err(|e| map_tls(s, e))?;
    let retried = first_hello.is_retry_request();
    let (hello, server_hello_raw, last) = if retried {
        let hello2 = expect(c, &client_messages, 1, hs::CLIENT_HELLO, "second ClientHello")?;
        let offer2 = parse_client_hello(&hello2[4..])?;
        check_offer(&offer2)?;
        if offer2.sni != offer.sni || offer2.suites != offer.suites {
            return Err(TranscriptError::UnexpectedHandshake {
                direction: c,
                expected: "the same ClientHello again",
                got: "another offer",
            });
        }
        let raw = expect(s, &server_messages, 1, hs::SERVER_HELLO, "ServerHello")?;
        (messages::parse_server_hello(&raw[4..]).map_err(|e| map_tls(s, e))?, raw, 1)
    } else {
        (first_hello.clone(), first, 0)
    };
    // Both sides send their hellos in the clear (two each after a HelloRetryRequest), nothing else.
    if client_messages.len() > last + 1 {
        let (t, _) = &client_messages[last + 1];
        return Err(TranscriptError::UnexpectedHandshake {
            direction: c,
            expected: "encrypted records",
            got: hs::name(*t),
        });
    }
    if server_messages.len() > last + 1 {
        let (t, _) = &server_messages[last + 1];
        return Err(TranscriptError::UnexpectedHandshake {
            direction: s,
            expected: "encrypted records",
            got: hs::name(*t),
        });
    }
    if hello.is_retry_request() {
        return Err(TranscriptError::UnexpectedHandshake {
            direction: s,
            expected: "ServerHello",
            got: "a second HelloRetryRequest",
        });
    }
    let version = hello.version.unwrap_or(0x0303);
    if version != TLS13 {
        return Err(TranscriptError::UnsupportedServerVersion(version));
    }
    if !offer.suites.contains(&hello.suite) || (retried && first_hello.suite != hello.suite) {
        return Err(TranscriptError::CipherSuiteNotOffered(hello.suite));
    }
    let suite = Suite13::from_id(hello.suite).ok_or(TranscriptError::UnsupportedCipherSuite(hello.suite))?;
    if hello.session_id != offer.session_id {
        return Err(TranscriptError::UnexpectedHandshake {
            direction: s,
            expected: "the session id echoed",
            got: "another one",
        });
    }
    let group = hello.key_share.as_ref().map(|(g, _)| *g).ok_or(TranscriptError::MissingMessage("key_share"))?;
    if !offer.groups.as_ref().is_some_and(|g| g.contains(&group)) {
        return Err(TranscriptError::UnsupportedGroup(group));
    }
    let mut hello_messages = Vec::new();
    if retried {
        // The first ClientHello enters the transcript as message_hash(Hash(ClientHello1)).
        hello_messages = handshake_message(hs13::MESSAGE_HASH, suite.hash().hash(hello1).as_bytes());
        hello_messages.extend_from_slice(first);
        hello_messages.extend_from_slice(&client_messages[1].1);
    } else {
        hello_messages.extend_from_slice(hello1);
    }
    hello_messages.extend_from_slice(server_hello_raw);
    Ok(Transcript13 {
        sni: offer.sni,
        offered_alpn: offer.extensions.contains(&crate::tls::codec::ext::ALPN),
        suite,
        group,
        hello_messages,
        sent: sent_records,
        received: received_records,
    })
}

/// Decrypts a direction's handshake records in order and hands each message to `on_message`
/// until it returns true (the Finished); returns how many records that took.
fn read_messages(
    direction: Direction,
    key: &RecordKey,
    records: &[Vec<u8>],
    mut on_message: impl FnMut(u8, &[u8]) -> Result<bool, TranscriptError>,
) -> Result<usize, TranscriptError> {
    let not_decrypted = TranscriptError::HandshakeNotDecrypted { direction };
    let mut joiner = HandshakeJoiner::default();
    for (seq, payload) in records.iter().enumerate() {
        let inner = key.open(seq as u64, payload).map_err(|_| not_decrypted.clone())?;
        if inner.content_type != ContentType::Handshake as u8 || inner.content.is_empty() {
            return Err(not_decrypted);
        }
        joiner.push(&inner.content);
        let mut count = 0;
        while let Some((typ, raw)) = joiner.pop().map_err(|e| map_tls(direction, e))? {
            count += 1;
            if count > MAX_HANDSHAKE_MESSAGES {
                return Err(TranscriptError::TooManyHandshakeMessages { direction });
            }
            if on_message(typ, &raw)? {
                // The application keys start at the next record (RFC 8446 §5.1).
                return if joiner.is_empty() {
                    Ok(seq + 1)
                } else {
                    Err(TranscriptError::InterleavedHandshakeFragment { direction })
                };
            }
        }
    }
    Err(TranscriptError::MissingMessage("Finished"))
}

impl Transcript13 {
    pub(crate) fn suite(&self) -> Suite13 {
        self.suite
    }
    /// The key-share group the server chose.
    pub(crate) fn group(&self) -> u16 {
        self.group
    }
    pub(crate) fn sni(&self) -> Option<&str> {
        self.sni.as_deref()
    }
    /// Hash(ClientHello..ServerHello) with the suite's hash, the context of the handshake
    /// traffic secrets.
    pub(crate) fn hello_hash(&self) -> Vec<u8> {
        self.suite.hash().hash(&self.hello_messages).as_bytes().to_vec()
    }
    /// Encrypted records (ciphertext ‖ tag) of a direction, handshake ones first.
    pub(crate) fn encrypted_records(&self, d: Direction) -> &[Vec<u8>] {
        match d {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    /// Reads both encrypted handshakes with the opened handshake traffic secrets and checks
    /// them: the chain for `name` at `now`, the SNI, ALPN, the CertificateVerify signature,
    /// both Finished messages (see the module doc).
    pub(crate) fn read_handshake(
        &self,
        client_secret: &[u8],
        server_secret: &[u8],
        roots: &RootStore,
        name: &str,
        now: UnixTime,
    ) -> Result<Handshake13, TranscriptError> {
        let alg = self.suite.hash();
        let server_name = ServerName::try_from(name).map_err(|_| TranscriptError::InvalidServerName)?.to_owned();
        let expected_sni = match &server_name {
            ServerName::DnsName(d) => Some(d.as_ref().to_ascii_lowercase()),
            _ => None,
        };
        if self.sni.as_ref().map(|s| s.to_ascii_lowercase()) != expected_sni {
            return Err(TranscriptError::SniMismatch { sni: self.sni.clone(), name: name.to_string() });
        }
        let (client_secret, server_secret) = (Secret::from_slice(client_secret), Secret::from_slice(server_secret));
        let key = |secret: &Secret| {
            RecordKey::new(self.suite.aead(), &TrafficKeys::derive(alg, secret, self.suite.aead().key_len()))
                .map_err(|_| TranscriptError::UnsupportedCipherSuite(self.suite.id()))
        };
        let s = Direction::Received;
        let mut transcript = self.hello_messages.clone();
        let mut chain: Vec<Vec<u8>> = Vec::new();
        let mut step = 0;
        let mut certificate_requested = None;
        let server_records = read_messages(s, &key(&server_secret)?, &self.received, |typ, raw| {
            let body = &raw[4..];
            let tls = |e| map_tls(s, e);
            let unexpected = |expected: &'static str| TranscriptError::UnexpectedHandshake {
                direction: s,
                expected,
                got: hs::name(typ),
            };
            match (step, typ) {
                (0, hs13::ENCRYPTED_EXTENSIONS) => {
                    let ee = messages::parse_encrypted_extensions(body, self.offered_alpn).map_err(tls)?;
                    if let Some(p) = ee.alpn.filter(|p| p != b"http/1.1") {
                        return Err(TranscriptError::AlpnNotHttp11(String::from_utf8_lossy(&p).into_owned()));
                    }
                }
                (1, hs::CERTIFICATE_REQUEST) if certificate_requested.is_none() => {
                    let mut r = crate::tls::codec::Reader::new(body);
                    certificate_requested = Some(r.vec8("certificate_request_context").map_err(tls)?.to_vec());
                    transcript.extend_from_slice(raw);
                    return Ok(false);
                }
                (1, hs::CERTIFICATE) => {
                    chain = messages::parse_certificate(body).map_err(tls)?;
                    verify_server_chain(roots, &chain, &server_name, now)
                        .map_err(TranscriptError::InvalidCertificate)?;
                }
                (2, hs13::CERTIFICATE_VERIFY) => {
                    messages::verify_certificate_verify(&chain[0], body, alg.hash(&transcript).as_bytes()).map_err(
                        |e| match e {
                            crate::tls::Error::PeerMisbehaved(
                                crate::tls::PeerMisbehaved::UnofferedSignatureScheme(scheme),
                            ) => TranscriptError::UnsupportedSignatureScheme(scheme),
                            crate::tls::Error::PeerMisbehaved(crate::tls::PeerMisbehaved::BadCertificateVerify) => {
                                TranscriptError::BadCertificateVerify
                            }
                            crate::tls::Error::Certificate(e) => {
                                TranscriptError::InvalidCertificate(crate::tls::Error::Certificate(e))
                            }
                            other => map_tls(s, other),
                        },
                    )?;
                }
                (3, hs::FINISHED) => {
                    let expected = finished_verify_data(alg, &server_secret, &alg.hash(&transcript));
                    if !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), body)) {
                        return Err(TranscriptError::BadFinished { direction: s });
                    }
                    transcript.extend_from_slice(raw);
                    return Ok(true);
                }
                (0, _) => return Err(unexpected("EncryptedExtensions")),
                (1, _) => return Err(unexpected("Certificate")),
                (2, _) => return Err(unexpected("CertificateVerify")),
                _ => return Err(unexpected("Finished")),
            }
            transcript.extend_from_slice(raw);
            step += 1;
            Ok(false)
        })?;
        let server_finished_hash = alg.hash(&transcript).as_bytes().to_vec();

        // The client's flight: an empty Certificate if one was requested, then its Finished.
        let c = Direction::Sent;
        let mut certificate_sent = certificate_requested.is_none();
        let client_records = read_messages(c, &key(&client_secret)?, &self.sent, |typ, raw| match typ {
            hs::CERTIFICATE if !certificate_sent => {
                let mut r = crate::tls::codec::Reader::new(&raw[4..]);
                r.vec8("certificate_request_context").map_err(|e| map_tls(c, e))?;
                if !r.vec24("certificate_list").map_err(|e| map_tls(c, e))?.is_empty() {
                    return Err(TranscriptError::ClientCertificateNotSupported);
                }
                certificate_sent = true;
                transcript.extend_from_slice(raw);
                Ok(false)
            }
            hs::FINISHED if certificate_sent => {
                let expected = finished_verify_data(alg, &client_secret, &alg.hash(&transcript));
                if !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), &raw[4..])) {
                    return Err(TranscriptError::BadFinished { direction: c });
                }
                Ok(true)
            }
            other => {
                let expected = if certificate_sent { "Finished" } else { "Certificate" };
                Err(TranscriptError::UnexpectedHandshake { direction: c, expected, got: hs::name(other) })
            }
        })?;
        Ok(Handshake13 { chain, server_finished_hash, handshake_records: [client_records, server_records] })
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests {
    use super::*;
    use crate::fixture::FixtureCerts;
    use crate::tls::tls13::client::tests::{start, Server};
    use crate::tls::tls13::record::RecordKey;
    use crate::tls::tls13::HashAlg;
    use crate::tls::tls13::{Client13, Secret};
    use std::io::{Read, Write};

    /// A relayed session: what the verifier recorded each way, and the client (whose secrets
    /// stand in for what the proof opens).
    pub(crate) struct Relayed {
        pub(crate) sent: Vec<u8>,
        pub(crate) received: Vec<u8>,
        pub(crate) client: Client13,
        pub(crate) roots: RootStore,
    }

    /// A session of our client with rustls: a request, a response of "hello".
    pub(crate) fn relay(server: Server) -> Relayed {
        relay_configured(server, |_| {})
    }

    /// [`relay`] with our client configured by `config`.
    fn relay_configured(server: Server, config: impl FnOnce(&mut crate::tls::tls13::client::Config13)) -> Relayed {
        let (mut client, mut conn, _, roots) = start(server, "localhost", config);
        let (mut sent, mut received) = (Vec::new(), Vec::new());
        let mut pump = |client: &mut Client13, conn: &mut rustls::ServerConnection| {
            let out = client.take_outgoing();
            sent.extend_from_slice(&out);
            let mut rd = &out[..];
            while !rd.is_empty() {
                conn.read_tls(&mut rd).unwrap();
                conn.process_new_packets().unwrap();
            }
            let mut back = Vec::new();
            while conn.wants_write() {
                conn.write_tls(&mut back).unwrap();
            }
            received.extend_from_slice(&back);
            client.feed(&back).unwrap();
        };
        for _ in 0..4 {
            pump(&mut client, &mut conn);
        }
        assert!(client.is_connected());
        client.write_plaintext(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        pump(&mut client, &mut conn);
        conn.reader().read_exact(&mut [0u8; 18]).unwrap();
        conn.writer().write_all(b"HTTP/1.1 200 OK\r\n\r\nhello").unwrap();
        pump(&mut client, &mut conn);
        Relayed { sent, received, client, roots }
    }

    fn secrets(c: &Client13) -> ([u8; 32], [u8; 32]) {
        let h = &c.key_schedule().unwrap().handshake_traffic;
        (h.client.as_bytes().try_into().unwrap(), h.server.as_bytes().try_into().unwrap())
    }

    #[test]
    fn the_verifier_reads_the_handshake_with_the_opened_secrets() {
        for (server, group) in [
            (Server::default(), 29),
            (Server { groups: vec![rustls::crypto::ring::kx_group::SECP256R1], ..Server::default() }, 23),
        ] {
            let r = relay(server);
            let t = parse(&r.sent, &r.received).unwrap();
            assert_eq!(t.group(), group, "the key-exchange group the verdict names");
            let schedule = r.client.key_schedule().unwrap();
            assert_eq!(&t.hello_hash()[..], schedule.hello_hash.as_bytes());
            assert_eq!(t.sni(), Some("localhost"));
            let (c, s) = secrets(&r.client);
            let h = t.read_handshake(&c, &s, &r.roots, "localhost", UnixTime::now()).unwrap();
            assert_eq!(&h.server_finished_hash[..], schedule.server_finished_hash.as_ref().unwrap().as_bytes());
            assert_eq!(h.chain, r.client.server_cert_chain());
            // The records after the handshake are the application's, under the application keys.
            let app = schedule.application_traffic.as_ref().unwrap();
            let suite = t.suite();
            let server_key = RecordKey::new(
                suite.aead(),
                &TrafficKeys::derive(HashAlg::Sha256, &app.server, suite.aead().key_len()),
            )
            .unwrap();
            let first = &t.encrypted_records(Direction::Received)[h.handshake_records[1]];
            assert_eq!(server_key.open(0, first).unwrap().content, b"HTTP/1.1 200 OK\r\n\r\nhello");
            let client_key = RecordKey::new(
                suite.aead(),
                &TrafficKeys::derive(HashAlg::Sha256, &app.client, suite.aead().key_len()),
            )
            .unwrap();
            let request = &t.encrypted_records(Direction::Sent)[h.handshake_records[0]];
            assert_eq!(client_key.open(0, request).unwrap().content, b"GET / HTTP/1.1\r\n\r\n");
        }
    }

    #[test]
    fn secrets_other_than_the_sessions_a_wrong_name_or_a_forged_signature_are_refused() {
        let r = relay(Server::default());
        let t = parse(&r.sent, &r.received).unwrap();
        let (c, s) = secrets(&r.client);
        let now = UnixTime::now();
        let wrong = [7u8; 32];
        assert_eq!(
            t.read_handshake(&c, &wrong, &r.roots, "localhost", now),
            Err(TranscriptError::HandshakeNotDecrypted { direction: Direction::Received })
        );
        assert_eq!(
            t.read_handshake(&wrong, &s, &r.roots, "localhost", now),
            Err(TranscriptError::HandshakeNotDecrypted { direction: Direction::Sent })
        );
        assert!(matches!(
            t.read_handshake(&c, &s, &r.roots, "fixture.test", now),
            Err(TranscriptError::SniMismatch { .. })
        ));
        let other_ca = FixtureCerts::generate(crate::fixture::KeyType::EcdsaP256, 30).unwrap();
        let other = RootStore::from_der_certs([other_ca.ca_der.as_ref()]).unwrap();
        assert!(matches!(
            t.read_handshake(&c, &s, &other, "localhost", now),
            Err(TranscriptError::InvalidCertificate(_))
        ));

        // The server's flight re-sealed with one bit of the CertificateVerify signature flipped:
        // it decrypts, and the signature check refuses it before the Finished is looked at.
        let suite = t.suite();
        let key = RecordKey::new(
            suite.aead(),
            &TrafficKeys::derive(HashAlg::Sha256, &Secret::from_slice(&s), suite.aead().key_len()),
        )
        .unwrap();
        let flight: Vec<u8> = t.received
            [..t.read_handshake(&c, &s, &r.roots, "localhost", now).unwrap().handshake_records[1]]
            .iter()
            .enumerate()
            .flat_map(|(seq, rec)| key.open(seq as u64, rec).unwrap().content)
            .collect();
        let mut joiner = HandshakeJoiner::default();
        joiner.push(&flight);
        let mut forged = Vec::new();
        while let Some((typ, mut raw)) = joiner.pop().unwrap() {
            if typ == hs13::CERTIFICATE_VERIFY {
                let last = raw.len() - 1;
                raw[last] ^= 1;
            }
            forged.push(raw);
        }
        let mut forged_t = t.clone();
        forged_t.received = forged
            .iter()
            .enumerate()
            .map(|(seq, m)| key.seal(seq as u64, ContentType::Handshake, m).unwrap()[RECORD_HEADER_LEN..].to_vec())
            .collect();
        assert_eq!(
            forged_t.read_handshake(&c, &s, &r.roots, "localhost", now),
            Err(TranscriptError::BadCertificateVerify)
        );
        // The same flight unforged, one message per record, passes: only the signature changed.
        let mut resealed = t.clone();
        let mut joiner = HandshakeJoiner::default();
        joiner.push(&flight);
        let mut records = Vec::new();
        while let Some((_, raw)) = joiner.pop().unwrap() {
            records.push(
                key.seal(records.len() as u64, ContentType::Handshake, &raw).unwrap()[RECORD_HEADER_LEN..].to_vec(),
            );
        }
        resealed.received = records;
        assert!(resealed.read_handshake(&c, &s, &r.roots, "localhost", now).is_ok());
    }

    /// A stream's records as (content type, body), and back.
    fn records_of(stream: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        let mut rest = stream;
        while !rest.is_empty() {
            let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
            out.push((rest[0], rest[RECORD_HEADER_LEN..RECORD_HEADER_LEN + len].to_vec()));
            rest = &rest[RECORD_HEADER_LEN + len..];
        }
        out
    }

    fn stream_of(records: &[(u8, Vec<u8>)]) -> Vec<u8> {
        records
            .iter()
            .flat_map(|(t, body)| [&[*t, 3, 3][..], &(body.len() as u16).to_be_bytes(), body].concat())
            .collect()
    }

    /// `records` with `extra` before the first encrypted one.
    fn inserted(records: &[(u8, Vec<u8>)], extra: Vec<(u8, Vec<u8>)>) -> Vec<u8> {
        let at = records.iter().position(|(t, _)| *t == ContentType::ApplicationData as u8).unwrap();
        stream_of(&[&records[..at], &extra, &records[at..]].concat())
    }

    #[test]
    fn each_plaintext_record_before_the_encrypted_ones_is_checked() {
        use TranscriptError::*;
        let r = relay(Server::default());
        let (sent, received) = (records_of(&r.sent), records_of(&r.received));
        let d = Direction::Received;
        let check = |received: Vec<u8>| parse(&r.sent, &received).map(|_| ());
        assert_eq!(check(stream_of(&received)), Ok(()));
        // ChangeCipherSpec: the one byte 1, between whole handshake messages
        assert_eq!(check(inserted(&received, vec![(20, vec![1])])), Ok(()));
        assert_eq!(check(inserted(&received, vec![(20, vec![2])])), Err(BadChangeCipherSpec { direction: d }));
        let hello = &received[0].1;
        let fragmented = |middle: Vec<(u8, Vec<u8>)>| {
            stream_of(
                &[vec![(22, hello[..10].to_vec())], middle, vec![(22, hello[10..].to_vec())], received[1..].to_vec()]
                    .concat(),
            )
        };
        assert_eq!(check(fragmented(vec![])), Ok(()), "a fragmented ServerHello");
        assert_eq!(
            check(fragmented(vec![(20, vec![1])])),
            Err(BadChangeCipherSpec { direction: d }),
            "inside a message"
        );
        // empty handshake records, plaintext alerts
        assert_eq!(
            check(inserted(&received, vec![(22, vec![])])),
            Err(EmptyFragment { direction: d, content_type: 22 })
        );
        assert_eq!(
            check(inserted(&received, vec![(21, vec![2, 40])])),
            Err(FatalAlert { direction: d, description: 40 })
        );
        assert_eq!(check(inserted(&received, vec![(21, vec![2])])), Err(BadAlert { direction: d }));
        // as many records as the limit, then one more
        let ccs = |n: usize| vec![(20u8, vec![1u8]); n];
        assert_eq!(check(inserted(&received, ccs(MAX_RECORDS_PER_DIRECTION - received.len()))), Ok(()));
        assert_eq!(
            check(inserted(&received, ccs(MAX_RECORDS_PER_DIRECTION - received.len() + 1))),
            Err(TooManyRecords { direction: d })
        );
        // an encrypted record of the largest size TLS 1.3 allows, then one byte larger
        let mut big = received.clone();
        big.push((23, vec![0; crate::tls::tls13::record::MAX_ENCRYPTED]));
        assert_eq!(check(stream_of(&big)), Ok(()));
        big.last_mut().unwrap().1.push(0);
        assert_eq!(
            check(stream_of(&big)),
            Err(RecordOverflow { direction: d, length: crate::tls::tls13::record::MAX_ENCRYPTED + 1 })
        );
        // plaintext handshake messages beyond the hellos: named, up to the count limit
        let extra = |n: usize| {
            vec![(22u8, (0..n).flat_map(|_| handshake_message(hs13::ENCRYPTED_EXTENSIONS, &[])).collect::<Vec<u8>>())]
        };
        let late = UnexpectedHandshake {
            direction: d,
            expected: "encrypted records",
            got: hs::name(hs13::ENCRYPTED_EXTENSIONS),
        };
        assert_eq!(check(inserted(&received, extra(MAX_HANDSHAKE_MESSAGES - 1))), Err(late));
        assert_eq!(
            check(inserted(&received, extra(MAX_HANDSHAKE_MESSAGES))),
            Err(TooManyHandshakeMessages { direction: d })
        );
        let late_sent = parse(&inserted(&sent, extra(1)), &r.received).map(|_| ());
        assert_eq!(
            late_sent,
            Err(UnexpectedHandshake {
                direction: Direction::Sent,
                expected: "encrypted records",
                got: hs::name(hs13::ENCRYPTED_EXTENSIONS)
            })
        );
        // the server's first message must be its hello
        let mut first = received.clone();
        first[0].1 = handshake_message(hs::CERTIFICATE, &[0; 4]);
        assert_eq!(
            check(stream_of(&first)),
            Err(UnexpectedHandshake { direction: d, expected: "ServerHello", got: hs::name(hs::CERTIFICATE) })
        );
        // a suite the client did not offer (TLS_AES_128_CCM_SHA256)
        let mut suite = received.clone();
        let at = 4 + 2 + 32 + 1 + usize::from(suite[0].1[4 + 2 + 32]);
        suite[0].1[at..at + 2].copy_from_slice(&[0x13, 0x04]);
        assert_eq!(check(stream_of(&suite)), Err(CipherSuiteNotOffered(0x1304)));
        // the version sniffer reads TLS 1.3 here, and nothing from nothing
        assert_eq!(server_version(&r.received), Ok(TlsVersion::Tls13));
        assert_eq!(server_version(&r.received[..3]), Err(Truncated { direction: d }));
    }

    /// After a HelloRetryRequest the second ClientHello must make the same offer.
    #[test]
    fn a_second_client_hello_with_another_offer_is_refused() {
        let r = relay(Server { groups: vec![rustls::crypto::ring::kx_group::SECP256R1], ..Server::default() });
        assert!(parse(&r.sent, &r.received).is_ok());
        let sent = records_of(&r.sent);
        let hellos: Vec<usize> = (0..sent.len()).filter(|&i| sent[i].0 == 22).collect();
        assert_eq!(hellos.len(), 2, "a HelloRetryRequest, so two ClientHellos");
        let other_name = {
            let mut v = sent.clone();
            let body = &mut v[hellos[1]].1;
            let at = body.windows(9).position(|w| w == b"localhost").unwrap();
            body[at + 8] = b'x';
            stream_of(&v)
        };
        let refused = TranscriptError::UnexpectedHandshake {
            direction: Direction::Sent,
            expected: "the same ClientHello again",
            got: "another offer",
        };
        assert_eq!(parse(&other_name, &r.received).map(|_| ()), Err(refused));
    }

    /// Encrypted handshake records hold handshake content, never empty, and the server's
    /// messages in their order.
    #[test]
    fn the_encrypted_flight_is_handshake_records_in_order() {
        let r = relay(Server::default());
        let t = parse(&r.sent, &r.received).unwrap();
        let (c, s) = secrets(&r.client);
        let now = UnixTime::now();
        let flight_records = t.read_handshake(&c, &s, &r.roots, "localhost", now).unwrap().handshake_records[1];
        let suite = t.suite();
        let key = RecordKey::new(
            suite.aead(),
            &TrafficKeys::derive(HashAlg::Sha256, &Secret::from_slice(&s), suite.aead().key_len()),
        )
        .unwrap();
        let flight: Vec<u8> = t.received[..flight_records]
            .iter()
            .enumerate()
            .flat_map(|(seq, rec)| key.open(seq as u64, rec).unwrap().content)
            .collect();
        let reseal = |first: (ContentType, Vec<u8>)| {
            let mut t = t.clone();
            let rest = if first.1.is_empty() { flight.clone() } else { flight[first.1.len()..].to_vec() };
            t.received = [first, (ContentType::Handshake, rest)]
                .iter()
                .enumerate()
                .map(|(seq, (typ, m))| key.seal(seq as u64, *typ, m).unwrap()[RECORD_HEADER_LEN..].to_vec())
                .collect();
            t.read_handshake(&c, &s, &r.roots, "localhost", now).map(|_| ())
        };
        let ee_len = 4 + usize::from(u16::from_be_bytes([flight[2], flight[3]]));
        assert_eq!(reseal((ContentType::Handshake, flight[..ee_len].to_vec())), Ok(()), "the flight in two records");
        let refused = Err(TranscriptError::HandshakeNotDecrypted { direction: Direction::Received });
        assert_eq!(reseal((ContentType::ApplicationData, flight[..ee_len].to_vec())), refused);
        assert_eq!(reseal((ContentType::Handshake, vec![])), refused);

        // The server's flight with one message left out: the next one is refused by name, in
        // place of the one that is due.
        let mut joiner = HandshakeJoiner::default();
        joiner.push(&flight);
        let mut types = Vec::new();
        while let Some((typ, _)) = joiner.pop().unwrap() {
            types.push(typ);
        }
        assert_eq!(types, [hs13::ENCRYPTED_EXTENSIONS, hs::CERTIFICATE, hs13::CERTIFICATE_VERIFY, hs::FINISHED]);
        for (left_out, expected) in [(0, "EncryptedExtensions"), (1, "Certificate"), (2, "CertificateVerify")] {
            let got = hs::name(types[left_out + 1]);
            let without = reseal_flight(&r, &t, Direction::Received, |m| {
                m.remove(left_out);
            });
            assert_eq!(
                without,
                Err(TranscriptError::UnexpectedHandshake { direction: Direction::Received, expected, got })
            );
        }
    }

    /// A direction's encrypted handshake as its messages, resealed after `edit`, then read.
    fn reseal_flight(
        r: &Relayed,
        t: &Transcript13,
        d: Direction,
        edit: impl FnOnce(&mut Vec<Vec<u8>>),
    ) -> Result<(), TranscriptError> {
        let (c, s) = secrets(&r.client);
        let now = UnixTime::now();
        let side = usize::from(d == Direction::Received);
        let records = t.read_handshake(&c, &s, &r.roots, "localhost", now).unwrap().handshake_records[side];
        let suite = t.suite();
        let secret = Secret::from_slice(if side == 0 { &c } else { &s });
        let key = RecordKey::new(suite.aead(), &TrafficKeys::derive(HashAlg::Sha256, &secret, suite.aead().key_len()))
            .unwrap();
        let mut joiner = HandshakeJoiner::default();
        for (seq, rec) in t.encrypted_records(d)[..records].iter().enumerate() {
            joiner.push(&key.open(seq as u64, rec).unwrap().content);
        }
        let mut messages = Vec::new();
        while let Some((_, raw)) = joiner.pop().unwrap() {
            messages.push(raw);
        }
        edit(&mut messages);
        let sealed = messages
            .iter()
            .enumerate()
            .map(|(seq, m)| key.seal(seq as u64, ContentType::Handshake, m).unwrap()[RECORD_HEADER_LEN..].to_vec())
            .collect();
        let mut t = t.clone();
        if side == 0 {
            t.sent = sealed;
        } else {
            t.received = sealed;
        }
        t.read_handshake(&c, &s, &r.roots, "localhost", now).map(|_| ())
    }

    #[test]
    fn alpn_and_a_certificate_request_are_read_as_the_server_sent_them() {
        use TranscriptError::UnexpectedHandshake;
        let now = UnixTime::now();
        // the server picks http/1.1 by ALPN
        let r = relay_configured(Server { alpn: vec![b"http/1.1".to_vec()], ..Server::default() }, |c| {
            c.alpn_http11 = true
        });
        assert_eq!(r.client.alpn(), Some(&b"http/1.1"[..]));
        let t = parse(&r.sent, &r.received).unwrap();
        let (c, s) = secrets(&r.client);
        assert!(t.read_handshake(&c, &s, &r.roots, "localhost", now).is_ok());
        // it asks for a client certificate: the client's empty Certificate comes before its Finished
        let r = relay(Server { client_auth: true, ..Server::default() });
        let t = parse(&r.sent, &r.received).unwrap();
        assert_eq!(reseal_flight(&r, &t, Direction::Sent, |_| {}), Ok(()));
        // one CertificateRequest only
        let twice = reseal_flight(&r, &t, Direction::Received, |m| m.insert(2, m[1].clone()));
        assert_eq!(
            twice,
            Err(UnexpectedHandshake {
                direction: Direction::Received,
                expected: "Certificate",
                got: hs::name(hs::CERTIFICATE_REQUEST)
            })
        );
        let without = reseal_flight(&r, &t, Direction::Sent, |m| {
            m.remove(0);
        });
        assert_eq!(
            without,
            Err(UnexpectedHandshake {
                direction: Direction::Sent,
                expected: "Certificate",
                got: hs::name(hs::FINISHED)
            })
        );
        // nobody asked for one: an empty Certificate is refused
        let r = relay(Server::default());
        let t = parse(&r.sent, &r.received).unwrap();
        let unasked =
            reseal_flight(&r, &t, Direction::Sent, |m| m.insert(0, handshake_message(hs::CERTIFICATE, &[0, 0, 0, 0])));
        assert_eq!(
            unasked,
            Err(UnexpectedHandshake {
                direction: Direction::Sent,
                expected: "Finished",
                got: hs::name(hs::CERTIFICATE)
            })
        );
    }

    #[test]
    fn a_psk_offer_a_cut_stream_or_a_plaintext_record_after_encryption_is_refused() {
        let r = relay(Server::default());
        let mut offer = parse_client_hello(
            &crate::tls::tls13::messages::client_hello(&crate::tls::tls13::messages::ClientHelloParams {
                random: &[1; 32],
                session_id: &[2; 32],
                server_name: Some("localhost"),
                suites: &Suite13::ALL,
                groups: &[crate::tls::NamedGroup::X25519],
                key_share: (crate::tls::NamedGroup::X25519, &[9; 32]),
                alpn_http11: false,
                cookie: None,
                tls12: None,
            })[4..],
        )
        .unwrap();
        assert_eq!(check_offer(&offer), Ok(()));
        offer.extensions.insert(ext13::PRE_SHARED_KEY);
        assert_eq!(check_offer(&offer), Err(TranscriptError::PskOffered));
        for cut in [1, 10, r.received.len() - 1] {
            assert!(parse(&r.sent, &r.received[..cut]).is_err(), "received cut at {cut}");
        }
        let mut late = r.sent.clone();
        late.extend_from_slice(&[22, 3, 3, 0, 1, 1]);
        assert_eq!(
            parse(&late, &r.received).unwrap_err(),
            TranscriptError::UnexpectedPlaintextRecord { direction: Direction::Sent, content_type: 22 }
        );
    }
}
