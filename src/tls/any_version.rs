//! A client that offers TLS 1.3 and TLS 1.2 in one ClientHello and continues in the version
//! the server chooses: the TLS 1.3 client ([`Client13`]) sends the ClientHello; when the server
//! answers with TLS 1.2, the TLS 1.2 client ([`Client`]) takes over from that ClientHello and
//! checks RFC 8446's downgrade sentinel. Sans-IO, like both.

use super::client::{Client, ClientConfig};
use super::codec::{hs, parse_record_header, ContentType, HandshakeJoiner, RECORD_HEADER_LEN};
use super::driver::SansIoClient;
use super::error::Error;
use super::tls13::messages::{self, Tls12Offer, TLS13};
use super::tls13::{Client13, Config13};
use rustls_pki_types::UnixTime;

/// What the start of the server's stream says about the version.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FirstServerMessage {
    /// Not a whole first handshake message yet.
    Incomplete,
    /// The first message is a ServerHello (or HelloRetryRequest) negotiating this version.
    ServerHello { version: u16 },
    /// Anything else (an alert, another message): the client reading it reports what it is.
    Other,
}

/// Reads the server's stream up to its first handshake message.
pub(crate) fn first_server_message(stream: &[u8]) -> Result<FirstServerMessage, Error> {
    let mut joiner = HandshakeJoiner::default();
    let mut rest = stream;
    loop {
        let Some(header) = parse_record_header(rest)? else {
            return Ok(FirstServerMessage::Incomplete);
        };
        let Some(body) = rest.get(RECORD_HEADER_LEN..RECORD_HEADER_LEN + header.length) else {
            return Ok(FirstServerMessage::Incomplete);
        };
        rest = &rest[RECORD_HEADER_LEN + header.length..];
        if header.content_type != ContentType::Handshake as u8 || body.is_empty() {
            return Ok(FirstServerMessage::Other);
        }
        joiner.push(body);
        if let Some((typ, raw)) = joiner.pop()? {
            if typ != hs::SERVER_HELLO {
                return Ok(FirstServerMessage::Other);
            }
            return Ok(FirstServerMessage::ServerHello { version: messages::server_hello_version(&raw[4..])? });
        }
    }
}

/// The TLS 1.2 offer a [`Config13`] adds for a 1.2 client with `config`.
pub(crate) fn tls12_offer(config: &ClientConfig) -> Tls12Offer {
    Tls12Offer {
        suites: config.cipher_suites.iter().map(|s| s.id()).collect(),
        extended_master_secret: config.offer_extended_master_secret,
        session_ticket: config.offer_session_ticket,
    }
}

/// A client offering TLS 1.3 and 1.2 ([`AnyVersionClient::new`]); the module doc says how.
pub enum AnyVersionClient {
    /// The TLS 1.3 client runs: from the start until the server's first message decides (while
    /// `undecided` holds what the other version needs), and after, if it chose TLS 1.3.
    Tls13 { client: Box<Client13>, undecided: Option<Undecided> },
    /// The server chose TLS 1.2.
    Tls12(Box<Client>),
}

/// What the TLS 1.2 client needs if the server chooses TLS 1.2, and the server's bytes so far.
pub struct Undecided {
    config12: Box<ClientConfig>,
    name: String,
    now: UnixTime,
    seen: Vec<u8>,
}

impl AnyVersionClient {
    /// Offers TLS 1.3 with `config13` and TLS 1.2 with `config12` (both for `server_name`).
    pub fn new(config13: Config13, config12: ClientConfig, server_name: &str, now: UnixTime) -> Result<Self, Error> {
        let config13 = Config13 { tls12: Some(tls12_offer(&config12)), ..config13 };
        let client = Client13::new(config13, server_name, now)?;
        Ok(Self::over(client, config12, server_name, now))
    }

    /// Offers both versions through `client`, a TLS 1.3 client made (for `server_name`, at
    /// `now`) with [`tls12_offer`]`(&config12)`, which has sent nothing but its ClientHello.
    pub(crate) fn over(client: Client13, config12: ClientConfig, server_name: &str, now: UnixTime) -> Self {
        let undecided =
            Undecided { config12: Box::new(config12), name: server_name.to_string(), now, seen: Vec::new() };
        AnyVersionClient::Tls13 { client: Box::new(client), undecided: Some(undecided) }
    }

    /// The version the server chose, once it has.
    pub fn version(&self) -> Option<u16> {
        match self {
            AnyVersionClient::Tls13 { undecided: Some(_), .. } => None,
            AnyVersionClient::Tls13 { .. } => Some(TLS13),
            AnyVersionClient::Tls12(_) => Some(super::codec::TLS12),
        }
    }

    fn feed_server(&mut self, data: &[u8]) -> Result<(), Error> {
        let (client, undecided) = match self {
            AnyVersionClient::Tls12(client) => return client.feed(data),
            AnyVersionClient::Tls13 { client, undecided } => (client, undecided),
        };
        let Some(u) = undecided.as_mut() else {
            return client.feed(data);
        };
        u.seen.extend_from_slice(data);
        match first_server_message(&u.seen)? {
            FirstServerMessage::Incomplete => Ok(()),
            FirstServerMessage::ServerHello { version } if version != TLS13 => {
                let mut tls12 = Client::continue_after_hello(
                    (*u.config12).clone(),
                    &u.name,
                    u.now,
                    *client.client_random(),
                    client.client_hello().to_vec(),
                )?;
                let fed = tls12.feed(&u.seen);
                *self = AnyVersionClient::Tls12(Box::new(tls12));
                fed
            }
            _ => {
                let seen = std::mem::take(&mut u.seen);
                *undecided = None;
                client.feed(&seen)
            }
        }
    }
}

impl SansIoClient for AnyVersionClient {
    fn feed(&mut self, data: &[u8]) -> Result<(), Error> {
        self.feed_server(data)
    }
    fn feed_eof(&mut self) -> Result<(), Error> {
        match self {
            AnyVersionClient::Tls13 { client, .. } => client.feed_eof(),
            AnyVersionClient::Tls12(client) => client.feed_eof(),
        }
    }
    fn wants_write(&self) -> bool {
        self.active().wants_write()
    }
    fn take_outgoing(&mut self) -> Vec<u8> {
        self.active_mut().take_outgoing()
    }
    fn write_plaintext(&mut self, data: &[u8]) -> Result<(), Error> {
        self.active_mut().write_plaintext(data)
    }
    fn take_plaintext(&mut self) -> Vec<u8> {
        self.active_mut().take_plaintext()
    }
    fn send_close_notify(&mut self) -> Result<(), Error> {
        self.active_mut().send_close_notify()
    }
    fn is_handshaking(&self) -> bool {
        self.active().is_handshaking()
    }
    fn received_close_notify(&self) -> bool {
        self.active().received_close_notify()
    }
    fn error(&self) -> Option<&Error> {
        self.active().error()
    }
    fn can_false_start(&self) -> bool {
        self.active().can_false_start()
    }
}

impl AnyVersionClient {
    fn active(&self) -> &dyn SansIoClient {
        match self {
            AnyVersionClient::Tls13 { client, .. } => &**client,
            AnyVersionClient::Tls12(client) => &**client,
        }
    }
    fn active_mut(&mut self) -> &mut dyn SansIoClient {
        match self {
            AnyVersionClient::Tls13 { client, .. } => &mut **client,
            AnyVersionClient::Tls12(client) => &mut **client,
        }
    }
}

// Native only: the servers are rustls in process.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::fixture::{FixtureCerts, KeyType};
    use crate::tls::error::PeerMisbehaved;
    use crate::tls::RootStore;
    use std::io::{Read, Write};
    use std::sync::Arc;

    /// A rustls server speaking `versions`, and our client offering both for "localhost".
    fn start(
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> (AnyVersionClient, rustls::ServerConnection, RootStore) {
        let certs = FixtureCerts::generate(KeyType::EcdsaP256, 30).unwrap();
        let cfg = crate::fixture::test_server_config(&certs, rustls::crypto::ring::default_provider(), versions, false);
        let roots = RootStore::from_der_certs([certs.ca_der.as_ref()]).unwrap();
        let client = AnyVersionClient::new(
            Config13::new(roots.clone()),
            ClientConfig::new(roots.clone()),
            "localhost",
            UnixTime::now(),
        )
        .unwrap();
        (client, rustls::ServerConnection::new(Arc::new(cfg)).unwrap(), roots)
    }

    /// Moves bytes both ways until neither side has any, passing the server's through `tamper`.
    fn pump(
        client: &mut AnyVersionClient,
        server: &mut rustls::ServerConnection,
        tamper: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<(), Error> {
        loop {
            let out = client.take_outgoing();
            let mut rd = &out[..];
            while !rd.is_empty() {
                server.read_tls(&mut rd).unwrap();
                server.process_new_packets().unwrap();
            }
            let mut back = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut back).unwrap();
            }
            if out.is_empty() && back.is_empty() {
                return Ok(());
            }
            tamper(&mut back);
            if !back.is_empty() {
                client.feed(&back)?;
            }
        }
    }

    /// A request and its answer over the connection.
    fn exchange(client: &mut AnyVersionClient, server: &mut rustls::ServerConnection) {
        client.write_plaintext(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        pump(client, server, &mut |_| {}).unwrap();
        let mut request = [0u8; 18];
        server.reader().read_exact(&mut request).unwrap();
        server.writer().write_all(b"HTTP/1.1 200 OK\r\n\r\nhi").unwrap();
        pump(client, server, &mut |_| {}).unwrap();
        assert_eq!(client.take_plaintext(), b"HTTP/1.1 200 OK\r\n\r\nhi");
    }

    #[test]
    fn offering_both_versions_continues_in_the_one_the_server_chooses() {
        let (mut client, mut server, _) = start(&[&rustls::version::TLS13, &rustls::version::TLS12]);
        assert_eq!(client.version(), None);
        pump(&mut client, &mut server, &mut |_| {}).unwrap();
        assert_eq!(
            (client.version(), server.protocol_version()),
            (Some(TLS13), Some(rustls::ProtocolVersion::TLSv1_3))
        );
        exchange(&mut client, &mut server);

        let (mut client, mut server, _) = start(&[&rustls::version::TLS12]);
        let AnyVersionClient::Tls13 { client: tls13, .. } = &client else { panic!("starts offering TLS 1.3") };
        let hello = tls13.client_hello().to_vec();
        pump(&mut client, &mut server, &mut |_| {}).unwrap();
        assert_eq!(
            (client.version(), server.protocol_version()),
            (Some(super::super::codec::TLS12), Some(rustls::ProtocolVersion::TLSv1_2))
        );
        assert!(!client.is_handshaking());
        exchange(&mut client, &mut server);
        // The TLS 1.2 client's transcript starts with the ClientHello as it was sent.
        let AnyVersionClient::Tls12(tls12) = &client else { panic!("not TLS 1.2") };
        let sent = tls12.transcript().raw_bytes(crate::tls::Direction::Sent);
        assert_eq!(&sent[5..5 + hello.len()], &hello[..]);
    }

    /// RFC 8446 §4.1.3: a TLS 1.2 ServerHello whose random ends with the downgrade sentinel,
    /// in answer to a TLS 1.3 offer, is refused at once.
    #[test]
    fn a_tls12_server_hello_with_the_downgrade_sentinel_is_refused() {
        for last in [1u8, 0] {
            let (mut client, mut server, _) = start(&[&rustls::version::TLS12]);
            let mut first = true;
            let refused = pump(&mut client, &mut server, &mut |bytes| {
                // The ServerHello's random: record header 5, message header 4, version 2.
                if std::mem::take(&mut first) {
                    bytes[11 + 24..11 + 32].copy_from_slice(&[b'D', b'O', b'W', b'N', b'G', b'R', b'D', last]);
                }
            });
            assert_eq!(refused, Err(PeerMisbehaved::Downgrade.into()), "sentinel ending {last}");
        }
        // Without the TLS 1.3 offer, the same random is only a random.
        let mut random = [0u8; 32];
        random[24..].copy_from_slice(b"DOWNGRD\x02");
        assert!(!crate::tls::client::is_downgrade_sentinel(&random));
    }

    /// The verifier reads a TLS 1.2 session that began with the two-version ClientHello, and
    /// refuses it when the server's random carries the downgrade sentinel.
    #[test]
    fn the_verifier_reads_the_tls12_session_and_refuses_the_sentinel() {
        use crate::protocol::observe::tls12::{self as transcript, TranscriptError};
        use crate::tls::Direction;
        let (mut client, mut server, roots) = start(&[&rustls::version::TLS12]);
        pump(&mut client, &mut server, &mut |_| {}).unwrap();
        exchange(&mut client, &mut server);
        let AnyVersionClient::Tls12(tls12) = &client else { panic!("not TLS 1.2") };
        let (sent, mut received) =
            (tls12.transcript().raw_bytes(Direction::Sent), tls12.transcript().raw_bytes(Direction::Received));
        let t = transcript::parse(&sent, &received).expect("the verifier reads the session");
        t.validate_server(&roots, "localhost", UnixTime::now()).expect("and certifies the server");
        received[11 + 24..11 + 32].copy_from_slice(b"DOWNGRD\x01");
        assert!(matches!(transcript::parse(&sent, &received), Err(TranscriptError::Downgrade)));
    }
}
