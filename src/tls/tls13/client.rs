//! A sans-IO TLS 1.3 client (RFC 8446) without PSK or 0-RTT, beside the TLS 1.2 [`Client`]
//! (crate::tls::Client): feed it the server's bytes with [`Client13::feed`], send what
//! [`Client13::take_outgoing`] returns. It keeps what the TLS 1.3 proof needs (the handshake
//! secret and the transcript hashes), and nothing reads the clock or a socket.
//!
//! Each handshake step is a [`State`] that consumes one message and names the next; errors
//! name what the server did wrong.

use super::key_schedule::{self, finished_verify_data, HashAlg, Secret, TrafficKeys, TrafficSecrets};
use super::messages::{self, hs13, ClientHelloParams, Suite13, TLS13};
use super::record::RecordKey;
use crate::tls::certs::{verify_server_chain, RootStore};
use crate::tls::codec::{
    handshake_message, hs, parse_record_header, ContentType, HandshakeJoiner, NamedGroup, RECORD_HEADER_LEN, TLS12,
};
use crate::tls::crypto::{random_bytes, KeyExchange, RingKeyExchange};
use crate::tls::error::{AlertDescription, Error, PeerMisbehaved};
use crate::tls::Direction;
use rustls_pki_types::{ServerName, UnixTime};

pub(crate) mod two_party;

/// What the client offers.
#[derive(Clone, Debug)]
pub struct Config13 {
    pub roots: RootStore,
    /// In order of preference; the server picks.
    pub suites: Vec<Suite13>,
    /// The first gets a key share in the first ClientHello; the others are offered, so a
    /// server may ask for one with a HelloRetryRequest.
    pub groups: Vec<NamedGroup>,
    /// Offer ALPN "http/1.1" (and accept nothing else back).
    pub alpn_http11: bool,
    /// Offer TLS 1.2 in the same ClientHello ([`crate::tls::AnyVersionClient`] continues in
    /// TLS 1.2 when the server chooses it).
    pub tls12: Option<messages::Tls12Offer>,
}

impl Config13 {
    pub fn new(roots: RootStore) -> Self {
        Self {
            roots,
            suites: Suite13::ALL.to_vec(),
            groups: vec![NamedGroup::X25519, NamedGroup::Secp256r1],
            alpn_http11: false,
            tls12: None,
        }
    }
}

/// The handshake's steps; each consumes one server message.
enum State {
    ExpectServerHello {
        share: Box<dyn KeyExchange>,
        retry_suite: Option<u16>,
    },
    /// Two-party mode: the ServerHello read, the handshake traffic secrets awaited from the
    /// caller's two-party computation ([`Client13::complete_two_party_handshake`]); the
    /// server's next records wait unread.
    AwaitHandshakeSecrets,
    ExpectEncryptedExtensions,
    ExpectCertificate {
        requested: Option<Vec<u8>>,
    },
    ExpectCertificateVerify {
        requested: Option<Vec<u8>>,
    },
    ExpectFinished {
        requested: Option<Vec<u8>>,
    },
    Connected,
}

impl State {
    fn expected(&self) -> &'static str {
        match self {
            Self::ExpectServerHello { .. } => "ServerHello",
            Self::AwaitHandshakeSecrets => "nothing before the handshake secrets",
            Self::ExpectEncryptedExtensions => "EncryptedExtensions",
            Self::ExpectCertificate { .. } => "Certificate",
            Self::ExpectCertificateVerify { .. } => "CertificateVerify",
            Self::ExpectFinished { .. } => "Finished",
            Self::Connected => "application data",
        }
    }
}

/// One direction's record key and the sequence number of its next record.
struct Keyed {
    key: RecordKey,
    seq: u64,
}

impl Keyed {
    fn new(suite: Suite13, secret: &Secret) -> Result<Self, Error> {
        let keys = TrafficKeys::derive(suite.hash(), secret, suite.aead().key_len());
        Ok(Self { key: RecordKey::new(suite.aead(), &keys)?, seq: 0 })
    }
    fn next_seq(&mut self) -> Result<u64, Error> {
        let seq = self.seq;
        self.seq = seq.checked_add(1).ok_or(Error::Crypto("sequence number overflow"))?;
        Ok(seq)
    }
}

/// The secrets and hashes of the key schedule, kept for the proof. Zeroized on drop.
#[derive(Debug)]
pub struct Schedule13 {
    pub handshake_secret: Secret,
    /// Hash(ClientHello..ServerHello).
    pub hello_hash: Secret,
    pub handshake_traffic: TrafficSecrets,
    /// Hash(ClientHello..server Finished), once the server's Finished checked.
    pub server_finished_hash: Option<Secret>,
    /// The first application traffic secrets.
    pub application_traffic: Option<TrafficSecrets>,
}

/// Bytes the server may have us hold before they form a record: one record at most.
const MAX_PENDING_INPUT: usize = RECORD_HEADER_LEN + super::record::MAX_ENCRYPTED;

pub struct Client13 {
    config: Config13,
    server_name: ServerName<'static>,
    now: UnixTime,
    random: [u8; 32],
    session_id: [u8; 32],
    state: Option<State>,
    failed: Option<Error>,
    in_buf: Vec<u8>,
    out_buf: Vec<u8>,
    plaintext: Vec<u8>,
    joiner: HandshakeJoiner,
    /// The handshake messages so far, as the transcript hash covers them.
    transcript: Vec<u8>,
    /// The first ClientHello as sent.
    client_hello: Vec<u8>,
    suite: Option<Suite13>,
    group: Option<NamedGroup>,
    alpn: Option<Vec<u8>>,
    chain: Vec<Vec<u8>>,
    schedule: Option<Schedule13>,
    read: Option<Keyed>,
    write: Option<Keyed>,
    sent_change_cipher_spec: bool,
    received_close_notify: bool,
    tickets: usize,
    key_updates: usize,
    /// Two-party (MPC) mode's state; `None` for a client that holds its keys.
    two_party: Option<two_party::TwoParty13>,
}

fn unexpected(expected: &'static str, got: &str) -> Error {
    PeerMisbehaved::UnexpectedMessage { expected, got: got.to_string() }.into()
}

impl Client13 {
    /// Start a handshake with `server_name` (a DNS name or an IP literal); the ClientHello is
    /// ready in [`Self::take_outgoing`].
    pub fn new(config: Config13, server_name: &str, now: UnixTime) -> Result<Self, Error> {
        let mut random = [0u8; 32];
        let mut session_id = [0u8; 32];
        random_bytes(&mut random)?;
        random_bytes(&mut session_id)?;
        Self::with_randoms(config, server_name, now, random, session_id)
    }

    /// [`Self::new`] with the ClientHello's random and legacy session id given (tests and
    /// fuzzing; a real client takes fresh ones).
    pub(crate) fn with_randoms(
        config: Config13,
        server_name: &str,
        now: UnixTime,
        random: [u8; 32],
        session_id: [u8; 32],
    ) -> Result<Self, Error> {
        let server_name = ServerName::try_from(server_name).map_err(|_| Error::InvalidServerName)?.to_owned();
        if config.suites.is_empty() || config.groups.is_empty() {
            return Err(Error::InvalidState("a TLS 1.3 client needs a cipher suite and a group"));
        }
        let share: Box<dyn KeyExchange> = Box::new(RingKeyExchange::generate(config.groups[0])?);
        Self::start(config, server_name, now, (random, session_id), share, None)
    }

    /// A client whose ClientHello carries `share`, in two-party mode when `two_party` is given.
    fn start(
        config: Config13,
        server_name: ServerName<'static>,
        now: UnixTime,
        (random, session_id): ([u8; 32], [u8; 32]),
        share: Box<dyn KeyExchange>,
        two_party: Option<two_party::TwoParty13>,
    ) -> Result<Self, Error> {
        let mut client = Self {
            config,
            server_name,
            now,
            random,
            session_id,
            state: None,
            failed: None,
            in_buf: Vec::new(),
            out_buf: Vec::new(),
            plaintext: Vec::new(),
            joiner: HandshakeJoiner::default(),
            transcript: Vec::new(),
            client_hello: Vec::new(),
            suite: None,
            group: None,
            alpn: None,
            chain: Vec::new(),
            schedule: None,
            read: None,
            write: None,
            sent_change_cipher_spec: false,
            received_close_notify: false,
            tickets: 0,
            key_updates: 0,
            two_party,
        };
        client.send_client_hello(share.as_ref(), None)?;
        client.state = Some(State::ExpectServerHello { share, retry_suite: None });
        Ok(client)
    }

    fn send_client_hello(&mut self, share: &dyn KeyExchange, cookie: Option<&[u8]>) -> Result<(), Error> {
        let host = match &self.server_name {
            ServerName::DnsName(d) => Some(d.as_ref().to_string()),
            _ => None,
        };
        let hello = messages::client_hello(&ClientHelloParams {
            random: &self.random,
            session_id: &self.session_id,
            server_name: host.as_deref(),
            suites: &self.config.suites,
            groups: &self.config.groups,
            key_share: (share.group(), share.public_key()),
            alpn_http11: self.config.alpn_http11,
            cookie,
            tls12: self.config.tls12.as_ref(),
        });
        self.transcript.extend_from_slice(&hello);
        self.push_plain(ContentType::Handshake, &hello);
        if self.client_hello.is_empty() {
            self.client_hello = hello;
        }
        Ok(())
    }

    fn push_plain(&mut self, typ: ContentType, body: &[u8]) {
        for chunk in body.chunks(crate::tls::codec::MAX_PLAINTEXT) {
            self.out_buf.push(typ as u8);
            self.out_buf.extend_from_slice(&TLS12.to_be_bytes());
            self.out_buf.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            self.out_buf.extend_from_slice(chunk);
        }
    }

    fn push_sealed(&mut self, typ: ContentType, body: &[u8]) -> Result<(), Error> {
        let write = self.write.as_mut().ok_or(Error::InvalidState("no write key yet"))?;
        for chunk in body.chunks(crate::tls::codec::MAX_PLAINTEXT) {
            let seq = write.next_seq()?;
            let record = write.key.seal(seq, typ, chunk)?;
            self.out_buf.extend_from_slice(&record);
        }
        Ok(())
    }

    /// Middlebox compatibility: one ChangeCipherSpec before our second flight (RFC 8446 §D.4).
    fn send_change_cipher_spec_once(&mut self) {
        if !self.sent_change_cipher_spec {
            self.sent_change_cipher_spec = true;
            self.push_plain(ContentType::ChangeCipherSpec, &[1]);
        }
    }

    fn check_failed(&self) -> Result<(), Error> {
        match &self.failed {
            Some(e) => Err(Error::AlreadyFailed(e.to_string())),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        if let Some(alert) = e.alert() {
            let body = [2, alert.0];
            if self.write.is_some() {
                let _ = self.push_sealed(ContentType::Alert, &body);
            } else {
                self.push_plain(ContentType::Alert, &body);
            }
        }
        self.failed = Some(e.clone());
        e
    }

    /// Feed bytes received from the server and process every complete record.
    pub fn feed(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_failed()?;
        if let Some(t) = self.two_party.as_mut() {
            t.wire[1].extend_from_slice(data);
        }
        self.in_buf.extend_from_slice(data);
        let r = self.process();
        r.map_err(|e| self.fail(e))
    }

    /// The server closed the stream: after the handshake and between records an ending,
    /// close_notify or not (the transcript shows which); otherwise an error.
    pub fn feed_eof(&mut self) -> Result<(), Error> {
        self.check_failed()?;
        if self.received_close_notify || (self.is_connected() && self.in_buf.is_empty()) {
            return Ok(());
        }
        let e: Error = if self.is_connected() {
            PeerMisbehaved::TruncatedWithoutCloseNotify.into()
        } else {
            PeerMisbehaved::UnexpectedEof.into()
        };
        self.failed = Some(e.clone());
        Err(e)
    }

    fn process(&mut self) -> Result<(), Error> {
        loop {
            if matches!(self.state, Some(State::AwaitHandshakeSecrets)) {
                // the server's flight waits for the handshake keys, bounded
                if self.in_buf.len() > two_party::MAX_AWAITED_INPUT {
                    return Err(PeerMisbehaved::RecordOverflow.into());
                }
                return Ok(());
            }
            let Some(h) = parse_record_header(&self.in_buf)? else {
                return Ok(());
            };
            if RECORD_HEADER_LEN + h.length > MAX_PENDING_INPUT {
                return Err(PeerMisbehaved::RecordOverflow.into());
            }
            if self.in_buf.len() < RECORD_HEADER_LEN + h.length {
                return Ok(());
            }
            let rest = self.in_buf.split_off(RECORD_HEADER_LEN + h.length);
            let record = std::mem::replace(&mut self.in_buf, rest);
            self.process_record(h.content_type, &record[RECORD_HEADER_LEN..])?;
        }
    }

    fn process_record(&mut self, outer_type: u8, payload: &[u8]) -> Result<(), Error> {
        let handshaking = !self.is_connected();
        match ContentType::from_u8(outer_type) {
            // Dropped unread while the handshake runs (RFC 8446 §5), refused otherwise.
            Some(ContentType::ChangeCipherSpec) if handshaking && payload == [1] => Ok(()),
            Some(ContentType::ChangeCipherSpec) => Err(PeerMisbehaved::BadChangeCipherSpec.into()),
            Some(ContentType::Alert) if self.read.is_none() => self.handle_alert(payload),
            Some(ContentType::Handshake) if self.read.is_none() => self.handle_handshake_fragment(payload),
            Some(ContentType::ApplicationData) if self.read.is_none() && self.two_party.is_some() => {
                self.keep_sealed(payload)
            }
            Some(ContentType::ApplicationData) if self.read.is_some() => {
                let read = self.read.as_mut().ok_or(Error::InvalidState("no read key"))?;
                let seq = read.next_seq()?;
                let inner = read.key.open(seq, payload)?;
                if inner.content_type != ContentType::Handshake as u8 && !self.joiner.is_empty() {
                    // A handshake message may span records, but nothing may come in between.
                    return Err(unexpected(
                        "the rest of a handshake message",
                        crate::tls::client::content_name(inner.content_type),
                    ));
                }
                match ContentType::from_u8(inner.content_type) {
                    Some(ContentType::Handshake) => self.handle_handshake_fragment(&inner.content),
                    Some(ContentType::Alert) => self.handle_alert(&inner.content),
                    Some(ContentType::ApplicationData) if self.is_connected() => {
                        if self.received_close_notify {
                            return Err(PeerMisbehaved::DataAfterCloseNotify.into());
                        }
                        self.plaintext.extend_from_slice(&inner.content);
                        Ok(())
                    }
                    Some(ContentType::ApplicationData) => Err(unexpected(self.expected(), "application data")),
                    _ => Err(PeerMisbehaved::UnknownContentType(inner.content_type).into()),
                }
            }
            _ => Err(unexpected(self.expected(), crate::tls::client::content_name(outer_type))),
        }
    }

    fn expected(&self) -> &'static str {
        self.state.as_ref().map_or("nothing", State::expected)
    }

    fn handle_alert(&mut self, body: &[u8]) -> Result<(), Error> {
        let [_level, description] = body else {
            return Err(PeerMisbehaved::DecodeError("alert").into());
        };
        if *description == AlertDescription::CLOSE_NOTIFY.0 {
            self.received_close_notify = true;
            return Ok(());
        }
        // In TLS 1.3 every alert but close_notify ends the connection (RFC 8446 §6).
        Err(PeerMisbehaved::FatalAlert(AlertDescription(*description)).into())
    }

    fn handle_handshake_fragment(&mut self, fragment: &[u8]) -> Result<(), Error> {
        if fragment.is_empty() {
            return Err(PeerMisbehaved::EmptyFragment.into());
        }
        self.joiner.push(fragment);
        while let Some((typ, raw)) = self.joiner.pop()? {
            self.handle_message(typ, raw)?;
        }
        Ok(())
    }

    /// Handshake messages may not span a key change (RFC 8446 §5.1).
    fn at_record_boundary(&self, what: &'static str) -> Result<(), Error> {
        if self.joiner.is_empty() {
            Ok(())
        } else {
            Err(unexpected("a record boundary", what))
        }
    }

    fn hash(&self) -> Result<Secret, Error> {
        let suite = self.suite.ok_or(Error::InvalidState("no suite yet"))?;
        Ok(suite.hash().hash(&self.transcript))
    }

    fn schedule(&self) -> Result<&Schedule13, Error> {
        self.schedule.as_ref().ok_or(Error::InvalidState("no key schedule yet"))
    }

    fn handle_message(&mut self, typ: u8, raw: Vec<u8>) -> Result<(), Error> {
        let state = self.state.take().ok_or(Error::InvalidState("no state"))?;
        let body = &raw[4..];
        let next = match state {
            State::ExpectServerHello { share, retry_suite } => {
                if typ != hs::SERVER_HELLO {
                    return Err(unexpected("ServerHello", hs::name(typ)));
                }
                self.server_hello(share, retry_suite, &raw)?
            }
            State::ExpectEncryptedExtensions => {
                if typ != hs13::ENCRYPTED_EXTENSIONS {
                    return Err(unexpected("EncryptedExtensions", hs::name(typ)));
                }
                let ee = messages::parse_encrypted_extensions(body, self.config.alpn_http11)?;
                if ee.alpn.as_deref().is_some_and(|p| p != b"http/1.1") {
                    return Err(PeerMisbehaved::DecodeError("ALPN protocol we did not offer").into());
                }
                self.alpn = ee.alpn;
                self.transcript.extend_from_slice(&raw);
                State::ExpectCertificate { requested: None }
            }
            State::ExpectCertificate { requested: None } if typ == hs::CERTIFICATE_REQUEST => {
                // We have no certificate; the answer is an empty Certificate with this context.
                let mut r = crate::tls::codec::Reader::new(body);
                let context = r.vec8("certificate_request_context")?.to_vec();
                r.vec16("CertificateRequest extensions")?;
                r.finish("CertificateRequest")?;
                self.transcript.extend_from_slice(&raw);
                State::ExpectCertificate { requested: Some(context) }
            }
            State::ExpectCertificate { requested } => {
                if typ != hs::CERTIFICATE {
                    return Err(unexpected("Certificate", hs::name(typ)));
                }
                let chain = messages::parse_certificate(body)?;
                verify_server_chain(&self.config.roots, &chain, &self.server_name, self.now)?;
                self.chain = chain;
                self.transcript.extend_from_slice(&raw);
                State::ExpectCertificateVerify { requested }
            }
            State::ExpectCertificateVerify { requested } => {
                if typ != hs13::CERTIFICATE_VERIFY {
                    return Err(unexpected("CertificateVerify", hs::name(typ)));
                }
                messages::verify_certificate_verify(&self.chain[0], body, self.hash()?.as_bytes())?;
                self.transcript.extend_from_slice(&raw);
                State::ExpectFinished { requested }
            }
            State::ExpectFinished { requested } => {
                if typ != hs::FINISHED {
                    return Err(unexpected("Finished", hs::name(typ)));
                }
                if self.two_party.is_some() {
                    self.two_party_server_finished(requested, &raw)?
                } else {
                    self.server_finished(requested, &raw)?
                }
            }
            State::AwaitHandshakeSecrets => {
                return Err(unexpected("nothing before the handshake secrets", hs::name(typ)))
            }
            State::Connected => {
                self.post_handshake(typ, body)?;
                State::Connected
            }
        };
        self.state = Some(next);
        Ok(())
    }

    fn server_hello(
        &mut self,
        share: Box<dyn KeyExchange>,
        retry_suite: Option<u16>,
        raw: &[u8],
    ) -> Result<State, Error> {
        let hello = messages::parse_server_hello(&raw[4..])?;
        if hello.version != Some(TLS13) {
            return Err(PeerMisbehaved::UnsupportedVersion(hello.version.unwrap_or(0x0303)).into());
        }
        if hello.session_id != self.session_id {
            return Err(PeerMisbehaved::BadServerHello("legacy_session_id not echoed").into());
        }
        let suite = self
            .config
            .suites
            .iter()
            .copied()
            .find(|s| s.id() == hello.suite)
            .ok_or(PeerMisbehaved::UnofferedCipherSuite(hello.suite))?;
        if retry_suite.is_some_and(|s| s != hello.suite) {
            return Err(PeerMisbehaved::BadServerHello("cipher suite changed after HelloRetryRequest").into());
        }
        let (group_id, server_public) =
            hello.key_share.clone().ok_or(PeerMisbehaved::BadServerHello("no key_share"))?;
        let group = self
            .config
            .groups
            .iter()
            .copied()
            .find(|g| g.id() == group_id)
            .ok_or(PeerMisbehaved::UnofferedGroup(group_id))?;
        self.suite = Some(suite);
        if hello.is_retry_request() {
            if retry_suite.is_some() {
                return Err(PeerMisbehaved::BadServerHello("a second HelloRetryRequest").into());
            }
            if group == share.group() {
                return Err(PeerMisbehaved::BadServerHello("HelloRetryRequest for the group already shared").into());
            }
            // The first ClientHello becomes message_hash(Hash(ClientHello1)) (RFC 8446 §4.4.1).
            let first = suite.hash().hash(&self.transcript);
            self.transcript = handshake_message(hs13::MESSAGE_HASH, first.as_bytes());
            self.transcript.extend_from_slice(raw);
            self.at_record_boundary("HelloRetryRequest")?;
            let share: Box<dyn KeyExchange> = match self.two_party.is_some() {
                true => self.retry_share(group).ok_or(PeerMisbehaved::UnofferedGroup(group_id))?,
                false => Box::new(RingKeyExchange::generate(group)?),
            };
            self.send_change_cipher_spec_once();
            self.send_client_hello(share.as_ref(), hello.cookie.as_deref())?;
            return Ok(State::ExpectServerHello { share, retry_suite: Some(hello.suite) });
        }
        if group != share.group() {
            return Err(PeerMisbehaved::BadServerHello("key_share in a group we sent no share for").into());
        }
        self.group = Some(group);
        if self.two_party.is_some() {
            self.transcript.extend_from_slice(raw);
            self.at_record_boundary("ServerHello")?;
            let hello_hash = self.hash()?;
            return self.await_handshake_secrets(suite, group, server_public, hello_hash);
        }
        let ecdhe = share.complete(&server_public)?;
        self.transcript.extend_from_slice(raw);
        self.at_record_boundary("ServerHello")?;
        let alg: HashAlg = suite.hash();
        let handshake_secret = key_schedule::handshake_secret(alg, ecdhe.as_bytes());
        let hello_hash = self.hash()?;
        let handshake_traffic = TrafficSecrets::handshake(alg, &handshake_secret, &hello_hash);
        self.read = Some(Keyed::new(suite, &handshake_traffic.server)?);
        self.write = Some(Keyed::new(suite, &handshake_traffic.client)?);
        self.schedule = Some(Schedule13 {
            handshake_secret,
            hello_hash,
            handshake_traffic,
            server_finished_hash: None,
            application_traffic: None,
        });
        Ok(State::ExpectEncryptedExtensions)
    }

    fn server_finished(&mut self, requested: Option<Vec<u8>>, raw: &[u8]) -> Result<State, Error> {
        let suite = self.suite.ok_or(Error::InvalidState("no suite"))?;
        let alg = suite.hash();
        let expected = finished_verify_data(alg, &self.schedule()?.handshake_traffic.server, &self.hash()?);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), &raw[4..])) {
            return Err(PeerMisbehaved::BadFinished.into());
        }
        self.transcript.extend_from_slice(raw);
        self.at_record_boundary("server Finished")?;
        let server_finished_hash = self.hash()?;
        let master = key_schedule::master_secret(alg, &self.schedule()?.handshake_secret);
        let application = TrafficSecrets::application(alg, &master, &server_finished_hash);

        let client_hs = self.schedule()?.handshake_traffic.client.clone();
        self.send_second_flight(requested, &client_hs)?;

        self.read = Some(Keyed::new(suite, &application.server)?);
        self.write = Some(Keyed::new(suite, &application.client)?);
        let schedule = self.schedule.as_mut().ok_or(Error::InvalidState("no key schedule"))?;
        schedule.server_finished_hash = Some(server_finished_hash);
        schedule.application_traffic = Some(application);
        Ok(State::Connected)
    }

    /// Our second flight, under the client handshake key: an empty Certificate if the server
    /// asked for one, then our Finished under `client_hs`.
    fn send_second_flight(&mut self, requested: Option<Vec<u8>>, client_hs: &Secret) -> Result<(), Error> {
        let alg = self.suite.ok_or(Error::InvalidState("no suite"))?.hash();
        self.send_change_cipher_spec_once();
        if let Some(context) = requested {
            let mut body = Vec::new();
            crate::tls::codec::put_vec8(&mut body, &context);
            crate::tls::codec::put_u24(&mut body, 0);
            let certificate = handshake_message(hs::CERTIFICATE, &body);
            self.transcript.extend_from_slice(&certificate);
            self.push_sealed(ContentType::Handshake, &certificate)?;
        }
        let verify_data = finished_verify_data(alg, client_hs, &self.hash()?);
        let finished = handshake_message(hs::FINISHED, verify_data.as_bytes());
        self.transcript.extend_from_slice(&finished);
        self.push_sealed(ContentType::Handshake, &finished)
    }

    /// NewSessionTicket (kept count of, never used: no resumption) and KeyUpdate.
    fn post_handshake(&mut self, typ: u8, body: &[u8]) -> Result<(), Error> {
        match typ {
            hs::NEW_SESSION_TICKET => {
                self.tickets += 1;
                Ok(())
            }
            hs13::KEY_UPDATE => {
                let update_requested = match body {
                    [0] => false,
                    [1] => true,
                    _ => return Err(PeerMisbehaved::DecodeError("KeyUpdate").into()),
                };
                self.at_record_boundary("KeyUpdate")?;
                self.read = Some(self.update_traffic_secret(Direction::Received)?);
                if update_requested {
                    // Answer under the old key, then switch ours.
                    self.push_sealed(ContentType::Handshake, &handshake_message(hs13::KEY_UPDATE, &[0]))?;
                    self.write = Some(self.update_traffic_secret(Direction::Sent)?);
                }
                self.key_updates += 1;
                Ok(())
            }
            other => Err(unexpected("NewSessionTicket or KeyUpdate", hs::name(other))),
        }
    }

    /// Moves one direction's application traffic secret to the next (KeyUpdate) and returns
    /// its record key.
    fn update_traffic_secret(&mut self, direction: Direction) -> Result<Keyed, Error> {
        let suite = self.suite.ok_or(Error::InvalidState("no suite"))?;
        let application = self
            .schedule
            .as_mut()
            .and_then(|s| s.application_traffic.as_mut())
            .ok_or(Error::InvalidState("no application secrets"))?;
        let secret = match direction {
            Direction::Sent => &mut application.client,
            Direction::Received => &mut application.server,
        };
        *secret = key_schedule::next_traffic_secret(suite.hash(), secret);
        Keyed::new(suite, secret)
    }

    /// Encrypt application data (once connected).
    pub fn write_plaintext(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_failed()?;
        if self.two_party.is_some() {
            return Err(Error::InvalidState("the two-party backend seals this direction's records"));
        }
        if !self.is_connected() {
            return Err(Error::InvalidState("application data before the handshake completed"));
        }
        self.push_sealed(ContentType::ApplicationData, data)
    }

    pub fn send_close_notify(&mut self) -> Result<(), Error> {
        self.check_failed()?;
        self.push_sealed(ContentType::Alert, &[1, AlertDescription::CLOSE_NOTIFY.0])
    }

    pub fn take_outgoing(&mut self) -> Vec<u8> {
        if let Some(t) = self.two_party.as_mut() {
            t.wire[0].extend_from_slice(&self.out_buf);
        }
        std::mem::take(&mut self.out_buf)
    }
    pub fn wants_write(&self) -> bool {
        !self.out_buf.is_empty()
    }
    pub fn take_plaintext(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.plaintext)
    }
    pub fn is_connected(&self) -> bool {
        matches!(self.state, Some(State::Connected))
    }
    pub fn is_handshaking(&self) -> bool {
        !self.is_connected() && self.failed.is_none()
    }
    pub fn received_close_notify(&self) -> bool {
        self.received_close_notify
    }
    pub fn error(&self) -> Option<&Error> {
        self.failed.as_ref()
    }
    pub fn suite(&self) -> Option<Suite13> {
        self.suite
    }
    /// The group of the key exchange, once the ServerHello chose it.
    pub fn group(&self) -> Option<NamedGroup> {
        self.group
    }
    pub fn alpn(&self) -> Option<&[u8]> {
        self.alpn.as_deref()
    }
    pub fn server_cert_chain(&self) -> &[Vec<u8>] {
        &self.chain
    }
    /// The first ClientHello as sent (message header included).
    pub(crate) fn client_hello(&self) -> &[u8] {
        &self.client_hello
    }

    pub fn client_random(&self) -> &[u8; 32] {
        &self.random
    }
    /// The key schedule's secrets and hashes (from the ServerHello on).
    pub fn key_schedule(&self) -> Option<&Schedule13> {
        self.schedule.as_ref()
    }
    /// NewSessionTicket messages received (never used).
    pub fn tickets(&self) -> usize {
        self.tickets
    }
    /// KeyUpdate messages received.
    #[cfg(test)]
    pub(crate) fn key_updates(&self) -> usize {
        self.key_updates
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests {
    use super::*;
    use crate::fixture::{FixtureCerts, KeyType};
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};

    /// The secrets rustls's server logs (NSS key log labels), to compare with ours.
    #[derive(Debug, Default)]
    pub(crate) struct Secrets(Mutex<Vec<(String, Vec<u8>)>>);
    impl rustls::KeyLog for Secrets {
        fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
            self.0.lock().unwrap().push((label.to_string(), secret.to_vec()));
        }
        fn will_log(&self, _label: &str) -> bool {
            true
        }
    }
    impl Secrets {
        fn get(&self, label: &str) -> Vec<u8> {
            let logged = self.0.lock().unwrap();
            logged
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| panic!("{label} not logged"))
        }
    }

    pub(crate) struct Server {
        pub(crate) suites: Vec<rustls::SupportedCipherSuite>,
        pub(crate) groups: Vec<&'static dyn rustls::crypto::SupportedKxGroup>,
        pub(crate) key: KeyType,
        pub(crate) client_auth: bool,
        pub(crate) tls12_only: bool,
        /// ALPN protocols the server picks from.
        pub(crate) alpn: Vec<Vec<u8>>,
        /// Largest record the server writes (its flight then spans several records).
        pub(crate) max_fragment: Option<usize>,
    }

    impl Default for Server {
        fn default() -> Self {
            let p = rustls::crypto::ring::default_provider();
            Self {
                suites: p.cipher_suites,
                groups: p.kx_groups,
                key: KeyType::EcdsaP256,
                client_auth: false,
                tls12_only: false,
                alpn: vec![],
                max_fragment: None,
            }
        }
    }

    /// Our client and a rustls server as `server` says, with the roots our client trusts.
    pub(crate) fn start(
        server: Server,
        name: &str,
        config: impl FnOnce(&mut Config13),
    ) -> (Client13, rustls::ServerConnection, Arc<Secrets>, RootStore) {
        let certs = FixtureCerts::generate(server.key, 30).unwrap();
        let mut provider = rustls::crypto::ring::default_provider();
        provider.cipher_suites = server.suites;
        provider.kx_groups = server.groups;
        let versions: &[&'static rustls::SupportedProtocolVersion] =
            if server.tls12_only { &[&rustls::version::TLS12] } else { &[&rustls::version::TLS13] };
        let mut cfg = crate::fixture::test_server_config(&certs, provider, versions, server.client_auth);
        cfg.alpn_protocols = server.alpn;
        cfg.max_fragment_size = server.max_fragment;
        let secrets = Arc::new(Secrets::default());
        cfg.key_log = secrets.clone();
        let roots = RootStore::from_der_certs([certs.ca_der.as_ref()]).unwrap();
        let mut ours = Config13::new(roots.clone());
        config(&mut ours);
        let client = Client13::new(ours, name, UnixTime::now()).unwrap();
        (client, rustls::ServerConnection::new(Arc::new(cfg)).unwrap(), secrets, roots)
    }

    fn to_server(client: &mut Client13, server: &mut rustls::ServerConnection) -> Result<(), rustls::Error> {
        let out = client.take_outgoing();
        let mut rd = &out[..];
        while !rd.is_empty() {
            server.read_tls(&mut rd).unwrap();
            server.process_new_packets()?;
        }
        Ok(())
    }

    fn to_client(client: &mut Client13, server: &mut rustls::ServerConnection) -> Result<(), Error> {
        let mut out = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut out).unwrap();
        }
        client.feed(&out)
    }

    fn handshake(client: &mut Client13, server: &mut rustls::ServerConnection) -> Result<(), Error> {
        for _ in 0..6 {
            let _ = to_server(client, server);
            to_client(client, server)?;
            if client.is_connected() && !server.is_handshaking() {
                return Ok(());
            }
        }
        to_server(client, server).map_err(|e| Error::Io(e.to_string()))?;
        Ok(())
    }

    /// A request, a response and both close_notify alerts over a connected pair.
    fn exchange(client: &mut Client13, server: &mut rustls::ServerConnection, response_len: usize) {
        client.write_plaintext(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        to_server(client, server).unwrap();
        let mut request = [0u8; 18];
        server.reader().read_exact(&mut request).unwrap();
        assert_eq!(&request, b"GET / HTTP/1.1\r\n\r\n");
        let body: Vec<u8> = (0..response_len).map(|i| (i % 251) as u8).collect();
        server.writer().write_all(&body).unwrap();
        server.send_close_notify();
        to_client(client, server).unwrap();
        assert_eq!(client.take_plaintext(), body);
        assert!(client.received_close_notify());
        client.send_close_notify().unwrap();
        to_server(client, server).unwrap();
        assert_eq!(server.reader().read(&mut [0u8; 1]).unwrap(), 0, "the server saw our close_notify");
    }

    #[test]
    fn every_suite_and_group_against_rustls_with_the_key_schedule_rustls_logged() {
        let provider = rustls::crypto::ring::default_provider();
        let tls13_suites: Vec<_> =
            provider.cipher_suites.iter().copied().filter(|s| s.version() == &rustls::version::TLS13).collect();
        assert_eq!(tls13_suites.len(), 3);
        for suite in tls13_suites {
            for (group, ours) in [
                (rustls::crypto::ring::kx_group::X25519, NamedGroup::X25519),
                (rustls::crypto::ring::kx_group::SECP256R1, NamedGroup::Secp256r1),
            ] {
                for key in [KeyType::EcdsaP256, KeyType::Rsa2048] {
                    let server = Server { suites: vec![suite], groups: vec![group], key, ..Server::default() };
                    let (mut client, mut server, logged, _) = start(server, "localhost", |c| c.groups = vec![ours]);
                    handshake(&mut client, &mut server).unwrap();
                    let what = format!("{:?} {ours:?} {key:?}", suite.suite());
                    assert_eq!(client.suite().map(|s| s.id()), Some(u16::from(suite.suite())), "{what}");
                    assert_eq!(client.group(), Some(ours));
                    let schedule = client.key_schedule().unwrap();
                    assert_eq!(
                        schedule.handshake_traffic.client.as_bytes(),
                        logged.get("CLIENT_HANDSHAKE_TRAFFIC_SECRET"),
                        "{what}"
                    );
                    assert_eq!(
                        schedule.handshake_traffic.server.as_bytes(),
                        logged.get("SERVER_HANDSHAKE_TRAFFIC_SECRET"),
                        "{what}"
                    );
                    let application = schedule.application_traffic.as_ref().unwrap();
                    assert_eq!(application.client.as_bytes(), logged.get("CLIENT_TRAFFIC_SECRET_0"), "{what}");
                    assert_eq!(application.server.as_bytes(), logged.get("SERVER_TRAFFIC_SECRET_0"), "{what}");
                    exchange(&mut client, &mut server, 40_000);
                }
            }
        }
    }

    #[test]
    fn a_server_that_wants_another_group_gets_it_after_a_hello_retry_request() {
        let server = Server { groups: vec![rustls::crypto::ring::kx_group::SECP256R1], ..Server::default() };
        let (mut client, mut server, logged, _) = start(server, "localhost", |_| {});
        handshake(&mut client, &mut server).unwrap();
        assert_eq!(client.group(), Some(NamedGroup::Secp256r1));
        let application = client.key_schedule().unwrap().application_traffic.clone().unwrap();
        assert_eq!(application.server.as_bytes(), logged.get("SERVER_TRAFFIC_SECRET_0"));
        exchange(&mut client, &mut server, 100);
    }

    #[test]
    fn tickets_key_updates_and_an_optional_client_certificate_are_handled() {
        let server = Server { client_auth: true, ..Server::default() };
        let (mut client, mut server, _, _) = start(server, "localhost", |c| c.alpn_http11 = true);
        handshake(&mut client, &mut server).unwrap();
        assert!(server.peer_certificates().is_none(), "we answered the request with no certificate");
        // rustls asks us to update too; we answer and switch our key.
        server.refresh_traffic_keys().unwrap();
        server.writer().write_all(b"after the update").unwrap();
        to_client(&mut client, &mut server).unwrap();
        assert_eq!(client.take_plaintext(), b"after the update");
        assert_eq!(client.key_updates(), 1);
        exchange(&mut client, &mut server, 5000);
    }

    /// rustls sends no NewSessionTicket to a client that offers no PSK mode (ours never does),
    /// so the ticket is sealed here under the server's first application key.
    #[test]
    fn a_new_session_ticket_is_counted_and_never_taken_for_data() {
        let (mut client, mut server, _, _) = start(Server::default(), "localhost", |_| {});
        handshake(&mut client, &mut server).unwrap();
        let suite = client.suite().unwrap();
        let server_secret = client.key_schedule().unwrap().application_traffic.as_ref().unwrap().server.clone();
        let ticket = handshake_message(hs::NEW_SESSION_TICKET, &[0, 0, 0, 60, 1, 2, 3, 4, 0, 0, 1, 9, 0, 0]);
        let record = Keyed::new(suite, &server_secret).unwrap().key.seal(0, ContentType::Handshake, &ticket).unwrap();
        client.feed(&record).unwrap();
        assert_eq!((client.tickets(), client.take_plaintext().len()), (1, 0));
        // Half a ticket, then application data: refused, a message may not be interleaved.
        let key = Keyed::new(suite, &server_secret).unwrap().key;
        client.feed(&key.seal(1, ContentType::Handshake, &ticket[..6]).unwrap()).unwrap();
        let e = client.feed(&key.seal(2, ContentType::ApplicationData, b"data").unwrap()).unwrap_err();
        assert!(
            matches!(
                e,
                Error::PeerMisbehaved(PeerMisbehaved::UnexpectedMessage {
                    expected: "the rest of a handshake message",
                    ..
                })
            ),
            "{e:?}"
        );
    }

    #[test]
    fn a_wrong_name_a_tls12_server_and_a_tampered_record_are_refused() {
        let (mut client, mut server, _, _) = start(Server::default(), "other.test", |_| {});
        let e = handshake(&mut client, &mut server).unwrap_err();
        assert!(matches!(e, Error::Certificate(_)), "{e:?}");
        assert!(
            client.take_outgoing().ends_with(&[2, AlertDescription::BAD_CERTIFICATE.0]) || client.error().is_some()
        );

        let (mut client, mut server, _, _) =
            start(Server { tls12_only: true, ..Server::default() }, "localhost", |_| {});
        let _ = to_server(&mut client, &mut server);
        // rustls refuses a ClientHello that offers only TLS 1.3 with an alert.
        let e = to_client(&mut client, &mut server).unwrap_err();
        assert!(matches!(e, Error::PeerMisbehaved(PeerMisbehaved::FatalAlert(_))), "{e:?}");

        let (mut client, mut server, _, _) = start(Server::default(), "localhost", |_| {});
        to_server(&mut client, &mut server).unwrap();
        let mut flight = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut flight).unwrap();
        }
        let last = flight.len() - 1;
        flight[last] ^= 1;
        assert_eq!(client.feed(&flight), Err(PeerMisbehaved::BadRecordMac.into()));
        assert!(matches!(client.feed(b"x"), Err(Error::AlreadyFailed(_))));
    }
}
