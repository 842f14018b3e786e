//! The sans-IO TLS 1.2 client state machine.

mod handshake;
mod sealed;
mod state;
#[cfg(test)]
mod tests;

use crate::tls::certs::RootStore;
use crate::tls::codec::{
    ext, handshake_message, hs, parse_record_header, put_u16, put_vec16, put_vec8, CipherSuite, ContentType,
    HandshakeJoiner, NamedGroup, SignatureScheme, MAX_CIPHERTEXT, MAX_PLAINTEXT, RECORD_HEADER_LEN, TLS12,
};
use crate::tls::crypto::{random_bytes, RecordCryptoFactory, RingRecordCryptoFactory};
use crate::tls::error::{decode, unexpected, AlertDescription, Error, PeerMisbehaved};
use crate::tls::keys::{MasterSecret, PreMasterSecret, WriteKeys};
use crate::tls::record::DirectionState;
use crate::tls::transcript::{Direction, Transcript};
use rustls_pki_types::{ServerName, UnixTime};
use state::State;
use std::sync::Arc;

/// How the ECDHE step is performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyExchangeMode {
    /// The client generates an ephemeral `ring` key itself when ServerHelloDone arrives.
    Local,
    /// The client stops after ServerHelloDone; the caller reads
    /// [`Client::key_exchange_request`] and answers with [`Client::complete_key_exchange`]
    /// (e.g. from an async backend).
    External,
    /// The session keys are held by the caller and a second party together (MPC mode), and
    /// this client never encrypts or decrypts. It stops after ServerHelloDone as in
    /// `External` and takes only the client key share
    /// ([`Client::complete_two_party_key_exchange`]); then the caller seals our Finished
    /// ([`Client::send_sealed_finished`]) and every later record ([`Client::send_sealed`]),
    /// which may start before the server's Finished arrives (False Start, RFC 7918: the
    /// client offers only ECDHE with AES-GCM, and the server's key share is signed), and
    /// takes the server's records as they arrived ([`Client::take_sealed_records`]), to be
    /// decrypted once the keys may be opened. The server's Finished, the first of them, is
    /// checked then too (its verify_data covers [`Client::server_finished_hash`]). An
    /// encrypted alert from the server ends its data: which alert it was is known only then.
    TwoParty,
}

/// A record protected under keys the client does not hold ([`KeyExchangeMode::TwoParty`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SealedRecord {
    pub content_type: u8,
    /// The record's sequence number in its direction.
    pub seq: u64,
    /// explicit nonce ‖ ciphertext ‖ tag, as on the wire.
    pub body: Vec<u8>,
}

/// Client configuration.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Trust anchors for the server certificate.
    pub roots: RootStore,
    /// Offered cipher suites, in preference order.
    pub cipher_suites: Vec<CipherSuite>,
    /// Offered ECDHE groups, in preference order.
    pub groups: Vec<NamedGroup>,
    /// Accepted ServerKeyExchange signature schemes.
    pub signature_schemes: Vec<SignatureScheme>,
    /// Offer RFC 7627 extended master secret.
    pub offer_extended_master_secret: bool,
    /// Abort if the server does not negotiate EMS.
    pub require_extended_master_secret: bool,
    /// Offer an empty SessionTicket extension (server may send NewSessionTicket; we never
    /// resume).
    pub offer_session_ticket: bool,
    /// Local or externally driven key exchange.
    pub key_exchange: KeyExchangeMode,
    /// Builds the record protection of each direction at ChangeCipherSpec.
    pub record_crypto: Arc<dyn RecordCryptoFactory>,
}

impl ClientConfig {
    /// Defaults: both AES-128-GCM suites, P-256 then X25519, all schemes, EMS offered.
    pub fn new(roots: RootStore) -> Self {
        Self {
            roots,
            cipher_suites: CipherSuite::ALL.to_vec(),
            groups: vec![NamedGroup::Secp256r1, NamedGroup::X25519],
            signature_schemes: SignatureScheme::ALL.to_vec(),
            offer_extended_master_secret: true,
            require_extended_master_secret: false,
            offer_session_ticket: false,
            key_exchange: KeyExchangeMode::Local,
            record_crypto: Arc::new(RingRecordCryptoFactory),
        }
    }
}

/// The server's ECDHE parameters and their signature, as received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerKeyExchangeInfo {
    pub group: NamedGroup,
    /// The server's public share.
    pub public: Vec<u8>,
    /// curve_type ‖ named_curve ‖ public — the signed params.
    pub params: Vec<u8>,
    pub scheme: SignatureScheme,
    pub signature: Vec<u8>,
}

/// One handshake message as hashed in the transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandshakeMessage {
    pub sender: Direction,
    pub typ: u8,
    /// type ‖ u24 length ‖ body.
    pub raw: Vec<u8>,
}

/// What the caller must compute in [`KeyExchangeMode::External`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyExchangeRequest {
    pub group: NamedGroup,
    pub server_public: Vec<u8>,
}

/// Bound on buffered-but-unprocessed input (only reached while a key exchange is pending).
const MAX_PENDING_INPUT: usize = 4 * (RECORD_HEADER_LEN + MAX_CIPHERTEXT);

/// Warning alerts a two-party client takes, before the server's ServerHelloDone: a server may
/// warn once that it has no site of the name asked for (unrecognized_name, RFC 6066 §3). Every
/// other record costs the verifier's copy of the client memory until the session ends, and a
/// TLS 1.2 handshake as two-party mode runs it has no other place for a warning, nor for a
/// HelloRequest at all (the server's handshake flight is in progress, or our key exchange is).
const TWO_PARTY_WARNINGS: usize = 1;

/// A sans-IO TLS 1.2 client connection.
pub struct Client {
    config: ClientConfig,
    server_name: ServerName<'static>,
    now: UnixTime,
    /// Where the handshake is, with what it has settled so far.
    state: State,
    client_random: [u8; 32],
    messages: Vec<HandshakeMessage>,
    joiner: HandshakeJoiner,
    read: DirectionState,
    write: DirectionState,
    in_buf: Vec<u8>,
    out_buf: Vec<u8>,
    plaintext: Vec<u8>,
    transcript: Transcript,
    received_close_notify: bool,
    sent_close_notify: bool,
    /// Two-party mode: the server's records after its Finished, as they arrived.
    sealed_in: Vec<SealedRecord>,
    /// Two-party mode: the server sent an (encrypted) alert, the end of its data.
    received_sealed_alert: bool,
    /// Warning alerts taken during the handshake ([`TWO_PARTY_WARNINGS`]).
    handshake_warnings: usize,
    failed: Option<Error>,
    /// The ClientHello offered TLS 1.3 too ([`Client::continue_after_hello`]).
    offered_tls13: bool,
}

/// The handshake hash of `parts` under the negotiated suite's PRF hash.
fn transcript_hash(suite: CipherSuite, parts: &[HandshakeMessage]) -> crate::tls::keys::HandshakeHash {
    crate::tls::keys::HandshakeHash::of(suite.prf_hash(), parts.iter().map(|m| &m.raw[..]))
}

/// Whether a TLS 1.2 ServerHello's random ends with RFC 8446's downgrade sentinel
/// ("DOWNGRD" and 0x01 for TLS 1.2, 0x00 for TLS 1.1 and below).
pub(crate) fn is_downgrade_sentinel(server_random: &[u8; 32]) -> bool {
    server_random[24..31] == *b"DOWNGRD" && server_random[31] <= 1
}

pub(crate) fn content_name(t: u8) -> &'static str {
    match ContentType::from_u8(t) {
        Some(ContentType::ChangeCipherSpec) => "ChangeCipherSpec",
        Some(ContentType::Alert) => "Alert",
        Some(ContentType::Handshake) => "Handshake",
        Some(ContentType::ApplicationData) => "ApplicationData",
        None => "unknown record",
    }
}

impl Client {
    /// Start a connection to `server_name` (DNS name or IP literal), validating certificates at
    /// `now`. Queues the ClientHello.
    pub fn new(config: ClientConfig, server_name: &str, now: UnixTime) -> Result<Self, Error> {
        let mut random = [0u8; 32];
        random_bytes(&mut random)?;
        Self::with_client_random(config, server_name, now, random)
    }

    /// Like [`Client::new`] with a caller-chosen client_random (e.g. from a joint coin flip).
    pub(crate) fn with_client_random(
        config: ClientConfig,
        server_name: &str,
        now: UnixTime,
        client_random: [u8; 32],
    ) -> Result<Self, Error> {
        let mut c = Self::build(config, server_name, now, client_random)?;
        let hello = c.client_hello();
        c.send_handshake(hello)?;
        Ok(c)
    }

    fn build(config: ClientConfig, server_name: &str, now: UnixTime, client_random: [u8; 32]) -> Result<Self, Error> {
        let server_name = ServerName::try_from(server_name.to_string()).map_err(|_| Error::InvalidServerName)?;
        if config.cipher_suites.is_empty() || config.groups.is_empty() {
            return Err(Error::InvalidState("no cipher suites or groups configured"));
        }
        // The two-party backend seals and opens AES-128-GCM records only.
        if config.key_exchange == KeyExchangeMode::TwoParty
            && config.cipher_suites.iter().any(|s| s.aead() != crate::tls::codec::Aead12::Aes128Gcm)
        {
            return Err(Error::InvalidState("the two-party client implements the AES-128-GCM suites only"));
        }
        Ok(Client {
            config,
            server_name,
            now,
            state: State::ExpectServerHello,
            client_random,
            messages: Vec::new(),
            joiner: HandshakeJoiner::default(),
            read: DirectionState::default(),
            write: DirectionState::default(),
            in_buf: Vec::new(),
            out_buf: Vec::new(),
            plaintext: Vec::new(),
            transcript: Transcript::default(),
            received_close_notify: false,
            sent_close_notify: false,
            sealed_in: Vec::new(),
            received_sealed_alert: false,
            handshake_warnings: 0,
            failed: None,
            offered_tls13: false,
        })
    }

    /// Continues a handshake whose ClientHello, `hello` (the message, header included, with
    /// `client_random`), another client sent offering TLS 1.3 and 1.2, after the server chose
    /// TLS 1.2 ([`super::AnyVersionClient`]). The ClientHello is in the transcript as sent; the
    /// server's random must not carry RFC 8446's downgrade sentinel.
    pub(crate) fn continue_after_hello(
        config: ClientConfig,
        server_name: &str,
        now: UnixTime,
        client_random: [u8; 32],
        hello: Vec<u8>,
    ) -> Result<Self, Error> {
        let mut c = Self::build(config, server_name, now, client_random)?;
        c.offered_tls13 = true;
        c.send_handshake(hello)?;
        // The other client has sent these bytes.
        c.out_buf.clear();
        Ok(c)
    }

    fn client_hello(&self) -> Vec<u8> {
        let cfg = &self.config;
        let mut b = Vec::new();
        put_u16(&mut b, TLS12);
        b.extend_from_slice(&self.client_random);
        put_vec8(&mut b, &[]); // empty session id: no resumption
        let mut suites = Vec::new();
        for s in &cfg.cipher_suites {
            put_u16(&mut suites, s.id());
        }
        put_vec16(&mut b, &suites);
        put_vec8(&mut b, &[0]); // null compression
        let mut exts = Vec::new();
        let mut add = |t: u16, body: &[u8]| {
            put_u16(&mut exts, t);
            put_vec16(&mut exts, body);
        };
        if let ServerName::DnsName(dns) = &self.server_name {
            let host = dns.as_ref().as_bytes();
            let mut entry = vec![0u8];
            put_vec16(&mut entry, host);
            let mut list = Vec::new();
            put_vec16(&mut list, &entry);
            add(ext::SERVER_NAME, &list);
        }
        let mut groups = Vec::new();
        for g in &cfg.groups {
            put_u16(&mut groups, g.id());
        }
        let mut gl = Vec::new();
        put_vec16(&mut gl, &groups);
        add(ext::SUPPORTED_GROUPS, &gl);
        add(ext::EC_POINT_FORMATS, &[1, 0]);
        let mut schemes = Vec::new();
        for s in &cfg.signature_schemes {
            put_u16(&mut schemes, s.id());
        }
        let mut sl = Vec::new();
        put_vec16(&mut sl, &schemes);
        add(ext::SIGNATURE_ALGORITHMS, &sl);
        if cfg.offer_extended_master_secret {
            add(ext::EXTENDED_MASTER_SECRET, &[]);
        }
        if cfg.offer_session_ticket {
            add(ext::SESSION_TICKET, &[]);
        }
        add(ext::RENEGOTIATION_INFO, &[0]);
        put_vec16(&mut b, &exts);
        handshake_message(hs::CLIENT_HELLO, &b)
    }

    // ----- output -----

    fn push_record(&mut self, content_type: u8, payload: &[u8]) -> Result<(), Error> {
        for chunk in payload.chunks(MAX_PLAINTEXT) {
            let rec = self.write.seal_record(content_type, chunk)?;
            self.out_buf.extend_from_slice(&rec.raw);
            self.transcript.records.push(rec);
        }
        Ok(())
    }

    fn send_handshake(&mut self, msg: Vec<u8>) -> Result<(), Error> {
        self.push_record(ContentType::Handshake as u8, &msg)?;
        self.messages.push(HandshakeMessage { sender: Direction::Sent, typ: msg[0], raw: msg });
        Ok(())
    }

    fn send_alert(&mut self, fatal: bool, desc: AlertDescription) {
        let level = if fatal { 2 } else { 1 };
        // Ignore failure: we are already reporting an error.
        let _ = self.push_record(ContentType::Alert as u8, &[level, desc.0]);
    }

    /// True if there are bytes to send to the server.
    pub fn wants_write(&self) -> bool {
        !self.out_buf.is_empty()
    }

    /// Take the bytes to send to the server.
    pub fn take_outgoing(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out_buf)
    }

    /// Queue application data (split into records of at most 16 KiB). Allowed once the
    /// handshake is complete, or earlier under [`Client::can_false_start`].
    pub fn write_plaintext(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_failed()?;
        if !self.state.is_connected() && !self.can_false_start() {
            return Err(Error::InvalidState("handshake not complete"));
        }
        if self.sent_close_notify {
            return Err(Error::Closed);
        }
        self.push_record(ContentType::ApplicationData as u8, data)
    }

    /// Queue a close_notify alert.
    pub fn send_close_notify(&mut self) -> Result<(), Error> {
        if !self.sent_close_notify {
            self.sent_close_notify = true;
            self.push_record(ContentType::Alert as u8, &[1, 0])?;
        }
        Ok(())
    }

    // ----- input -----

    fn check_failed(&self) -> Result<(), Error> {
        match &self.failed {
            Some(e) => Err(Error::AlreadyFailed(e.to_string())),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        if let Some(a) = e.alert() {
            self.send_alert(true, a);
        }
        self.failed = Some(e.clone());
        e
    }

    /// Feed bytes received from the server and process every complete record.
    pub fn feed(&mut self, data: &[u8]) -> Result<(), Error> {
        self.check_failed()?;
        self.in_buf.extend_from_slice(data);
        let mut r = self.process();
        if r.is_ok() && self.in_buf.len() > MAX_PENDING_INPUT {
            // Only reachable while an external key exchange is pending: the server must not
            // send anything then.
            r = Err(unexpected(self.state.expected(), "data while our key exchange or a Finished is pending"));
        }
        r.map_err(|e| self.fail(e))
    }

    /// Tell the client the server closed the TCP stream. After the handshake and between
    /// records that ends the connection, close_notify or not (many servers close without
    /// one; the transcript shows which); during the handshake or inside a record it is an
    /// error.
    pub fn feed_eof(&mut self) -> Result<(), Error> {
        self.check_failed()?;
        if self.received_close_notify || self.received_sealed_alert {
            return Ok(());
        }
        if self.state.is_connected() && self.in_buf.is_empty() {
            return Ok(());
        }
        let e = if self.state.is_connected() {
            PeerMisbehaved::TruncatedWithoutCloseNotify
        } else {
            PeerMisbehaved::UnexpectedEof
        };
        self.failed = Some(e.clone().into());
        Err(e.into())
    }

    fn process(&mut self) -> Result<(), Error> {
        loop {
            match self.state {
                State::KeyExchangePending { .. } if self.config.key_exchange == KeyExchangeMode::Local => {
                    self.local_key_exchange()?;
                    continue;
                }
                State::KeyExchangePending { .. } | State::FinishedPending(_) => return Ok(()),
                _ => {}
            }
            let Some(h) = parse_record_header(&self.in_buf)? else {
                return Ok(());
            };
            if self.in_buf.len() < RECORD_HEADER_LEN + h.length {
                return Ok(());
            }
            let rest = self.in_buf.split_off(RECORD_HEADER_LEN + h.length);
            let raw = std::mem::replace(&mut self.in_buf, rest);
            self.process_record(h.content_type, h.version, raw)?;
        }
    }

    fn process_record(&mut self, content_type: u8, version: u16, raw: Vec<u8>) -> Result<(), Error> {
        if self.received_close_notify || self.received_sealed_alert {
            return Err(PeerMisbehaved::DataAfterCloseNotify.into());
        }
        let entry = match self.read.open_record(content_type, version, raw) {
            Ok(e) => e,
            Err(boxed) => {
                let (err, entry) = *boxed;
                self.transcript.records.push(entry);
                return Err(err);
            }
        };
        if self.read.sealed_elsewhere {
            return self.process_sealed_record(entry);
        }
        let payload = entry.plaintext.clone().unwrap_or_default();
        self.transcript.records.push(entry);
        let ct = ContentType::from_u8(content_type).ok_or(PeerMisbehaved::UnknownContentType(content_type))?;
        if payload.is_empty() && ct != ContentType::ApplicationData {
            return Err(PeerMisbehaved::EmptyFragment.into());
        }
        if ct != ContentType::Handshake && !self.joiner.is_empty() {
            // Another record type interleaved with a fragmented handshake message.
            return Err(unexpected("rest of handshake message", content_name(content_type)));
        }
        match ct {
            ContentType::ChangeCipherSpec => self.handle_ccs(&payload),
            ContentType::Alert => self.handle_alert(&payload),
            ContentType::Handshake => {
                self.joiner.push(&payload);
                while let Some((typ, msg)) = self.joiner.pop()? {
                    self.handle_handshake(typ, msg)?;
                }
                Ok(())
            }
            ContentType::ApplicationData => {
                if !self.state.is_connected() {
                    return Err(unexpected(self.state.expected(), "ApplicationData"));
                }
                self.plaintext.extend_from_slice(&payload);
                Ok(())
            }
        }
    }

    fn handle_ccs(&mut self, payload: &[u8]) -> Result<(), Error> {
        if payload != [1] {
            return Err(PeerMisbehaved::BadChangeCipherSpec.into());
        }
        let e = match self.state.take() {
            State::ExpectCcs(e) | State::ExpectNewSessionTicketOrCcs(e) => e,
            s => {
                let err = match s {
                    State::ExpectCertificate(_) => PeerMisbehaved::ResumptionAttempted.into(),
                    _ => unexpected(s.expected(), "ChangeCipherSpec"),
                };
                self.state = s;
                return Err(err);
            }
        };
        match &e.ours.secrets {
            None if self.config.key_exchange == KeyExchangeMode::TwoParty => self.read.install_sealed_elsewhere(),
            None => return Err(Error::InvalidState("no keys at CCS")),
            Some(secrets) => {
                let kb = &secrets.key_block;
                let suite = e.negotiated.suite;
                let crypto = self.config.record_crypto.new_record_crypto(
                    suite,
                    false,
                    &kb.server_write_key,
                    &kb.server_write_iv,
                )?;
                self.read.install(crypto);
            }
        }
        self.state = State::ExpectFinished(e);
        Ok(())
    }

    fn handle_alert(&mut self, payload: &[u8]) -> Result<(), Error> {
        if payload.len() != 2 {
            return Err(decode("alert length"));
        }
        let desc = AlertDescription(payload[1]);
        if desc == AlertDescription::CLOSE_NOTIFY {
            if !self.state.is_connected() {
                return Err(PeerMisbehaved::FatalAlert(desc).into());
            }
            self.received_close_notify = true;
            return Ok(());
        }
        if payload[0] != 1 {
            // Fatal (or an unknown level, treated as fatal).
            return Err(PeerMisbehaved::FatalAlert(desc).into());
        }
        if self.config.key_exchange == KeyExchangeMode::TwoParty {
            let in_flight = matches!(
                self.state,
                State::ExpectServerHello
                    | State::ExpectCertificate(_)
                    | State::ExpectServerKeyExchange(..)
                    | State::ExpectServerHelloDone { .. }
            );
            self.handshake_warnings += 1;
            if !in_flight || self.handshake_warnings > TWO_PARTY_WARNINGS {
                return Err(unexpected(self.state.expected(), format!("a warning alert ({})", desc.0)));
            }
        }
        // Warnings (e.g. unrecognized_name during the handshake, no_renegotiation) are
        // ignored, as RFC 5246 §7.2 allows.
        Ok(())
    }

    fn push_received(&mut self, typ: u8, raw: Vec<u8>) {
        self.messages.push(HandshakeMessage { sender: Direction::Received, typ, raw });
    }

    /// Take the application data received so far.
    pub fn take_plaintext(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.plaintext)
    }
    pub fn is_handshaking(&self) -> bool {
        !self.state.is_connected() && self.failed.is_none()
    }
    pub fn is_connected(&self) -> bool {
        self.state.is_connected() && self.failed.is_none()
    }
    /// Whether application data may already be sent, before the server's Finished: TLS False
    /// Start (RFC 7918), which saves a round trip. Its conditions hold for every session this
    /// client completes: the server's certificate and its signature over the ECDHE (forward
    /// secret) key exchange are verified, the suite is an AEAD, and our Finished is sent. The
    /// server's Finished is still checked before any data from it is accepted, and a server
    /// that tampered with the handshake could only read data meant for itself.
    pub fn can_false_start(&self) -> bool {
        self.failed.is_none()
            && matches!(
                self.state,
                State::ExpectNewSessionTicketOrCcs(_) | State::ExpectCcs(_) | State::ExpectFinished(_)
            )
    }
    pub fn received_close_notify(&self) -> bool {
        self.received_close_notify
    }
    /// The error the connection failed with, if any.
    pub fn error(&self) -> Option<&Error> {
        self.failed.as_ref()
    }
    pub fn client_random(&self) -> &[u8; 32] {
        &self.client_random
    }
    /// Zero until ServerHello.
    pub fn server_random(&self) -> &[u8; 32] {
        self.state.negotiated().map_or(&[0; 32], |n| &n.server_random)
    }
    pub fn cipher_suite(&self) -> Option<CipherSuite> {
        self.state.negotiated().map(|n| n.suite)
    }
    pub fn group(&self) -> Option<NamedGroup> {
        self.state.server().map(|s| s.kx.group)
    }
    /// Whether RFC 7627 extended master secret was negotiated.
    pub fn extended_master_secret(&self) -> bool {
        self.state.negotiated().is_some_and(|n| n.ems)
    }
    /// Our ECDHE public share (as in ClientKeyExchange); empty before it is sent.
    pub fn client_public_key(&self) -> &[u8] {
        self.state.established().map_or(&[], |e| &e.ours.public)
    }
    /// The pre-master secret (local key exchange only).
    pub fn pre_master_secret(&self) -> Option<&PreMasterSecret> {
        self.state.secrets().map(|s| &s.pms)
    }
    pub fn master_secret(&self) -> Option<&MasterSecret> {
        self.state.secrets().map(|s| &s.ms)
    }
    /// The write keys and IVs, split at the suite's lengths.
    pub fn key_block(&self) -> Option<&WriteKeys> {
        self.state.secrets().map(|s| &s.key_block)
    }
    /// Handshake messages in order, both directions, as hashed (HelloRequest excluded).
    pub fn handshake_messages(&self) -> &[HandshakeMessage] {
        &self.messages
    }
    /// RFC 7627 session hash (messages through ClientKeyExchange), if EMS was used, of a
    /// SHA-256 suite (`None` for a SHA-384 one: [`Client::handshake_hashes`] has both).
    pub fn session_hash(&self) -> Option<&[u8; 32]> {
        self.state.established()?.ours.session_hash.as_ref()?.as_sha256()
    }
    /// H_c: hash of all messages before the client Finished, of a SHA-256 suite (`None` for a
    /// SHA-384 one: [`Client::handshake_hashes`] has both).
    pub fn client_finished_hash(&self) -> Option<&[u8; 32]> {
        self.state.established()?.ours.finished_hash.as_sha256()
    }
    /// H_s: hash of all messages before the server Finished (includes the client Finished), of
    /// a SHA-256 suite (`None` for a SHA-384 one: [`Client::handshake_hashes`] has both).
    pub fn server_finished_hash(&self) -> Option<&[u8; 32]> {
        self.state.server_finished()?.hash.as_sha256()
    }
    /// The handshake hashes under the suite's PRF hash, as far as known: the session hash (with
    /// EMS), H_c and H_s ([`Client::session_hash`] and the others, for any suite).
    pub fn handshake_hashes(&self) -> [Option<&[u8]>; 3] {
        let ours = self.state.established().map(|e| &e.ours);
        [
            ours.and_then(|o| o.session_hash.as_ref()).map(|h| h.as_bytes()),
            ours.map(|o| o.finished_hash.as_bytes()),
            self.state.server_finished().map(|f| f.hash.as_bytes()),
        ]
    }
    pub fn client_verify_data(&self) -> Option<&[u8; 12]> {
        self.state.established()?.ours.verify_data.as_ref()
    }
    pub fn server_verify_data(&self) -> Option<&[u8; 12]> {
        self.state.server_finished()?.verify_data.as_ref()
    }
    /// Server certificate chain (DER, leaf first), validated.
    pub fn server_cert_chain(&self) -> &[Vec<u8>] {
        self.state.chain()
    }
    pub fn server_key_exchange(&self) -> Option<&ServerKeyExchangeInfo> {
        self.state.server().map(|s| &s.kx)
    }
    /// Every record in both directions.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }
    /// The server name this connection validates against.
    pub fn server_name(&self) -> &ServerName<'static> {
        &self.server_name
    }
}
