//! The two-party (MPC mode) side of the TLS 1.3 client (docs/protocol.md, "The TLS 1.3 key
//! schedule in two parties"): its key share is the sum of both parties' halves, made
//! elsewhere; after the ServerHello it waits for the handshake traffic secrets, which the
//! parties compute together and both learn; with them it reads and checks the server's flight
//! and writes its Finished itself, as any client; the application keys it never holds, so the
//! caller seals its records and the server's stay sealed.

use super::*;
use crate::tls::keys::PreMasterSecret;

/// Bytes of the server's flight the client holds unread while it awaits the handshake
/// secrets (a certificate chain fits many times over).
pub(crate) const MAX_AWAITED_INPUT: usize = 1 << 18;

/// The client key share both parties made: its group and public bytes, with no private key
/// here.
struct SharedKeyShare {
    group: NamedGroup,
    public: Vec<u8>,
}

impl KeyExchange for SharedKeyShare {
    fn group(&self) -> NamedGroup {
        self.group
    }
    fn public_key(&self) -> &[u8] {
        &self.public
    }
    fn complete(self: Box<Self>, _: &[u8]) -> Result<PreMasterSecret, Error> {
        Err(Error::InvalidState("a two-party key share completes in two parties"))
    }
}

/// What the parties' two-party computation needs once the ServerHello is read.
#[derive(Clone, Debug)]
pub(crate) struct HandshakeRequest13 {
    pub suite: Suite13,
    pub group: NamedGroup,
    pub server_public: Vec<u8>,
    /// Hash(ClientHello..ServerHello), the context of the handshake traffic secrets.
    pub hello_hash: Secret,
}

/// Two-party mode's state.
#[derive(Default)]
pub(crate) struct TwoParty13 {
    request: Option<HandshakeRequest13>,
    handshake_traffic: Option<TrafficSecrets>,
    server_finished_hash: Option<Secret>,
    /// The shares of the other groups offered, for a HelloRetryRequest.
    retry: Vec<SharedKeyShare>,
    /// The server's records after its Finished, as they came (header and payload).
    sealed_in: Vec<Vec<u8>>,
    /// How many server records were kept sealed in all.
    kept: usize,
    /// The sequence number of the next record the caller seals.
    next_sealed: u64,
    /// The bytes on the wire, sent and received, as the transcript proof reads them.
    pub(super) wire: [Vec<u8>; 2],
}

impl Client13 {
    /// A two-party client: its ClientHello offers `config`'s suites and the groups of
    /// `shares`, the parties' client key shares made elsewhere (group, public bytes), and
    /// carries the first; a HelloRetryRequest for another group gets that group's share.
    pub(crate) fn two_party(
        config: Config13,
        server_name: &str,
        now: UnixTime,
        shares: Vec<(NamedGroup, Vec<u8>)>,
    ) -> Result<Self, Error> {
        let (mut random, mut session_id) = ([0u8; 32], [0u8; 32]);
        random_bytes(&mut random)?;
        random_bytes(&mut session_id)?;
        Self::two_party_with_randoms(config, server_name, now, shares, (random, session_id))
    }

    /// [`Self::two_party`] with the ClientHello's random and legacy session id given: the
    /// verifier's copy of the prover's client writes the same ClientHello.
    pub(crate) fn two_party_with_randoms(
        mut config: Config13,
        server_name: &str,
        now: UnixTime,
        shares: Vec<(NamedGroup, Vec<u8>)>,
        randoms: ([u8; 32], [u8; 32]),
    ) -> Result<Self, Error> {
        let server_name = ServerName::try_from(server_name).map_err(|_| Error::InvalidServerName)?.to_owned();
        if config.suites.is_empty() {
            return Err(Error::InvalidState("a TLS 1.3 client needs a cipher suite"));
        }
        let mut shares = shares.into_iter().map(|(group, public)| SharedKeyShare { group, public });
        let first = shares.next().ok_or(Error::InvalidState("a two-party client needs a key share"))?;
        let retry: Vec<SharedKeyShare> = shares.collect();
        config.groups = std::iter::once(first.group).chain(retry.iter().map(|s| s.group)).collect();
        let two_party = TwoParty13 { retry, ..TwoParty13::default() };
        Self::start(config, server_name, now, randoms, Box::new(first), Some(two_party))
    }

    /// Two-party mode: the share made for `group`, which a HelloRetryRequest asks for.
    pub(super) fn retry_share(&mut self, group: NamedGroup) -> Option<Box<dyn KeyExchange>> {
        let retry = &mut self.two_party.as_mut()?.retry;
        let at = retry.iter().position(|s| s.group == group)?;
        Some(Box::new(retry.swap_remove(at)))
    }

    /// The ClientHello's legacy session id (which the verifier's copy needs to write the same
    /// ClientHello).
    pub(crate) fn session_id(&self) -> &[u8; 32] {
        &self.session_id
    }

    /// Two-party mode, after the ServerHello: keeps what the parties need and waits.
    pub(super) fn await_handshake_secrets(
        &mut self,
        suite: Suite13,
        group: NamedGroup,
        server_public: Vec<u8>,
        hello_hash: Secret,
    ) -> Result<State, Error> {
        let two_party = self.two_party.as_mut().ok_or(Error::InvalidState("not in two-party mode"))?;
        two_party.request = Some(HandshakeRequest13 { suite, group, server_public, hello_hash });
        Ok(State::AwaitHandshakeSecrets)
    }

    /// The ServerHello's key share and hello hash, once read (two-party mode).
    pub(crate) fn handshake_request(&self) -> Option<&HandshakeRequest13> {
        self.two_party.as_ref()?.request.as_ref()
    }

    /// Two-party mode: the handshake traffic secrets the parties computed. Installs the
    /// handshake keys and reads what the server sent meanwhile.
    pub(crate) fn complete_two_party_handshake(&mut self, secrets: TrafficSecrets) -> Result<(), Error> {
        self.check_failed()?;
        if !matches!(self.state, Some(State::AwaitHandshakeSecrets)) {
            return Err(Error::InvalidState("no two-party handshake pending"));
        }
        let suite = self.suite.ok_or(Error::InvalidState("no suite"))?;
        let r = (|| {
            self.read = Some(Keyed::new(suite, &secrets.server)?);
            self.write = Some(Keyed::new(suite, &secrets.client)?);
            if let Some(t) = self.two_party.as_mut() {
                t.handshake_traffic = Some(secrets);
            }
            self.state = Some(State::ExpectEncryptedExtensions);
            self.process()
        })();
        r.map_err(|e| self.fail(e))
    }

    /// Two-party mode: the server's Finished checked, our Finished written under the client
    /// handshake key; the application keys stay with the parties.
    pub(super) fn two_party_server_finished(&mut self, requested: Option<Vec<u8>>, raw: &[u8]) -> Result<State, Error> {
        let suite = self.suite.ok_or(Error::InvalidState("no suite"))?;
        let alg = suite.hash();
        let traffic = (self.two_party.as_ref().and_then(|t| t.handshake_traffic.as_ref()))
            .ok_or(Error::InvalidState("no handshake secrets"))?;
        let expected = finished_verify_data(alg, &traffic.server, &self.hash()?);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), &raw[4..])) {
            return Err(PeerMisbehaved::BadFinished.into());
        }
        let client_secret = traffic.client.clone();
        self.transcript.extend_from_slice(raw);
        self.at_record_boundary("server Finished")?;
        let server_finished_hash = self.hash()?;
        self.send_second_flight(requested, &client_secret)?;
        // from here on, the caller seals our records and the server's stay sealed
        self.read = None;
        self.write = None;
        if let Some(t) = self.two_party.as_mut() {
            t.server_finished_hash = Some(server_finished_hash);
        }
        Ok(State::Connected)
    }

    /// Hash(ClientHello..server Finished), the context of the application traffic secrets
    /// (two-party mode, once connected).
    pub(crate) fn server_finished_hash(&self) -> Option<&Secret> {
        self.two_party.as_ref()?.server_finished_hash.as_ref()
    }

    /// Two-party mode: a server record after the handshake, kept sealed for the parties.
    pub(super) fn keep_sealed(&mut self, payload: &[u8]) -> Result<(), Error> {
        if !self.is_connected() {
            return Err(unexpected(self.expected(), "application data"));
        }
        let two_party = self.two_party.as_mut().ok_or(Error::InvalidState("not in two-party mode"))?;
        two_party.sealed_in.push([&super::super::record::header(payload.len())[..], payload].concat());
        two_party.kept += 1;
        Ok(())
    }

    /// The server's records kept sealed since the last call (whole records).
    pub(crate) fn take_sealed_records(&mut self) -> Vec<Vec<u8>> {
        self.two_party.as_mut().map(|t| std::mem::take(&mut t.sealed_in)).unwrap_or_default()
    }

    /// How many server records were kept sealed (two-party mode).
    pub(crate) fn records_kept(&self) -> usize {
        self.two_party.as_ref().map_or(0, |t| t.kept)
    }

    /// The sequence number the next record the caller seals takes (two-party mode).
    pub(crate) fn next_sealed_seq(&self) -> u64 {
        self.two_party.as_ref().map_or(0, |t| t.next_sealed)
    }

    /// Two-party mode: an application-data record the caller sealed under
    /// [`Self::next_sealed_seq`] (its payload: ciphertext and tag), sent as is.
    pub(crate) fn send_sealed_record(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.check_failed()?;
        let connected = self.is_connected();
        let Some(two_party) = self.two_party.as_mut().filter(|_| connected) else {
            return Err(Error::InvalidState("a sealed record outside a connected two-party client"));
        };
        two_party.next_sealed += 1;
        self.out_buf.extend_from_slice(&super::super::record::header(payload.len()));
        self.out_buf.extend_from_slice(payload);
        Ok(())
    }

    /// The bytes sent and received so far (two-party mode), as the wire carried them.
    pub(crate) fn wire(&self) -> Option<&[Vec<u8>; 2]> {
        self.two_party.as_ref().map(|t| &t.wire)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::super::tests::{start, Server};
    use super::*;
    use crate::tls::tls13::key_schedule::{handshake_secret, master_secret};
    use crate::tls::tls13::record::RecordKey;
    use curve25519_dalek::montgomery::MontgomeryPoint;
    use std::io::{Read, Write};

    fn pump_to_server(client: &mut Client13, server: &mut rustls::ServerConnection) {
        let out = client.take_outgoing();
        let mut rd = &out[..];
        while !rd.is_empty() {
            server.read_tls(&mut rd).unwrap();
            server.process_new_packets().unwrap();
        }
    }

    fn server_bytes(server: &mut rustls::ServerConnection) -> Vec<u8> {
        let mut out = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut out).unwrap();
        }
        out
    }

    /// A two-party client against rustls, the parties' computation stood in for by a party
    /// that holds the whole X25519 scalar: the handshake completes with the secrets it is given,
    /// the request sealed elsewhere reaches the server, and the response stays sealed, opening
    /// under the server's application key.
    #[test]
    fn a_two_party_client_completes_a_handshake_with_the_secrets_it_is_given() {
        let (plain, mut server, _, roots) = start(Server::default(), "localhost", |_| {});
        drop(plain);
        let scalar: [u8; 32] = rand::random();
        let public = MontgomeryPoint::mul_base_clamped(scalar).to_bytes().to_vec();
        let mut config = Config13::new(roots);
        config.suites = vec![Suite13::Aes128GcmSha256];
        let mut client =
            Client13::two_party(config, "localhost", UnixTime::now(), vec![(NamedGroup::X25519, public)]).unwrap();
        pump_to_server(&mut client, &mut server);
        client.feed(&server_bytes(&mut server)).unwrap();
        assert!(!client.is_connected() && !client.wants_write(), "it waits for the secrets");
        let request = client.handshake_request().expect("the ServerHello is read").clone();
        assert_eq!((request.suite, request.group), (Suite13::Aes128GcmSha256, NamedGroup::X25519));
        let server_public: [u8; 32] = request.server_public.as_slice().try_into().unwrap();
        let ecdhe = MontgomeryPoint(server_public).mul_clamped(scalar).to_bytes();
        let alg = HashAlg::Sha256;
        let hs = handshake_secret(alg, &ecdhe);
        client.complete_two_party_handshake(TrafficSecrets::handshake(alg, &hs, &request.hello_hash)).unwrap();
        assert!(client.is_connected());
        pump_to_server(&mut client, &mut server);
        assert!(!server.is_handshaking(), "the server took our Finished");

        let application =
            TrafficSecrets::application(alg, &master_secret(alg, &hs), client.server_finished_hash().unwrap());
        let keys = |secret| RecordKey::new(Suite13::Aes128GcmSha256.aead(), &TrafficKeys::derive(alg, secret, 16));
        let sealed = keys(&application.client)
            .unwrap()
            .seal(0, ContentType::ApplicationData, b"GET / HTTP/1.1\r\n\r\n")
            .unwrap();
        assert!(client.write_plaintext(b"x").is_err(), "the caller seals our records");
        client.send_sealed_record(&sealed[RECORD_HEADER_LEN..]).unwrap();
        pump_to_server(&mut client, &mut server);
        let mut got = [0u8; 18];
        server.reader().read_exact(&mut got).unwrap();
        assert_eq!(&got, b"GET / HTTP/1.1\r\n\r\n");
        server.writer().write_all(b"hello").unwrap();
        client.feed(&server_bytes(&mut server)).unwrap();
        assert!(client.take_plaintext().is_empty(), "the response stays sealed");
        let records = client.take_sealed_records();
        let server_key = keys(&application.server).unwrap();
        // rustls sends session tickets first: the response is the last record
        let last = records.last().expect("sealed records");
        let opened = server_key.open(records.len() as u64 - 1, &last[RECORD_HEADER_LEN..]).unwrap();
        assert_eq!(opened.content, b"hello");
    }

    /// Secrets other than the session's make the server's flight unreadable (refused, the
    /// client failed); secrets before the ServerHello and a plaintext write are refused by
    /// name; more than [`MAX_AWAITED_INPUT`] bytes held unread are refused; a server without
    /// the share's group refuses the one group offered.
    #[test]
    fn wrong_or_early_secrets_and_a_server_without_the_group_are_refused() {
        let two_party = |roots| {
            let mut config = Config13::new(roots);
            config.suites = vec![Suite13::Aes128GcmSha256];
            let public = MontgomeryPoint::mul_base_clamped(rand::random()).to_bytes().to_vec();
            Client13::two_party(config, "localhost", UnixTime::now(), vec![(NamedGroup::X25519, public)]).unwrap()
        };
        let (_, mut server, _, roots) = start(Server::default(), "localhost", |_| {});
        let mut client = two_party(roots);
        let early =
            TrafficSecrets::handshake(HashAlg::Sha256, &Secret::from_slice(&[1; 32]), &Secret::from_slice(&[2; 32]));
        assert_eq!(
            client.complete_two_party_handshake(early.clone()),
            Err(Error::InvalidState("no two-party handshake pending"))
        );
        assert!(client.write_plaintext(b"x").is_err());
        pump_to_server(&mut client, &mut server);
        client.feed(&server_bytes(&mut server)).unwrap();
        let r = client.complete_two_party_handshake(early);
        assert!(matches!(r, Err(Error::PeerMisbehaved(PeerMisbehaved::BadRecordMac))), "{r:?}");

        // a server that sends more than a flight while the secrets are awaited is refused
        let (_, mut server, _, roots) = start(Server::default(), "localhost", |_| {});
        let mut client = two_party(roots);
        pump_to_server(&mut client, &mut server);
        client.feed(&server_bytes(&mut server)).unwrap();
        let r = client.feed(&vec![0x17; MAX_AWAITED_INPUT]);
        assert_eq!(r, Err(Error::PeerMisbehaved(PeerMisbehaved::RecordOverflow)));
        assert!(client.error().is_some() && !client.is_connected());

        // one group offered, the share's: a server without it refuses (no retry request)
        let p256_only = Server { groups: vec![rustls::crypto::ring::kx_group::SECP256R1], ..Server::default() };
        let (_, mut server, _, roots) = start(p256_only, "localhost", |_| {});
        let mut client = two_party(roots);
        let out = client.take_outgoing();
        server.read_tls(&mut &out[..]).unwrap();
        assert!(server.process_new_packets().is_err(), "no group in common");
        let r = client.feed(&server_bytes(&mut server));
        assert!(matches!(r, Err(Error::PeerMisbehaved(PeerMisbehaved::FatalAlert(_)))), "{r:?}");
    }

    /// With a share for each group, a server that wants the second one asks for it by a
    /// HelloRetryRequest: the client's second ClientHello carries the share made for it, and
    /// the handshake request names that group and that server share.
    #[test]
    fn a_hello_retry_request_gets_the_share_made_for_its_group() {
        let p256_only = Server { groups: vec![rustls::crypto::ring::kx_group::SECP256R1], ..Server::default() };
        let (_, mut server, _, roots) = start(p256_only, "localhost", |_| {});
        let mut config = Config13::new(roots);
        config.suites = vec![Suite13::Aes128GcmSha256];
        let x25519 = MontgomeryPoint::mul_base_clamped(rand::random()).to_bytes().to_vec();
        use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
        let d = crate::mpc::ecdh::random_scalar();
        let p256_public = (p256::ProjectivePoint::GENERATOR * d).to_affine().to_encoded_point(false);
        let shares = vec![(NamedGroup::X25519, x25519), (NamedGroup::Secp256r1, p256_public.as_bytes().to_vec())];
        let mut client = Client13::two_party(config, "localhost", UnixTime::now(), shares).unwrap();
        pump_to_server(&mut client, &mut server);
        client.feed(&server_bytes(&mut server)).unwrap();
        assert!(client.handshake_request().is_none() && client.wants_write(), "a second ClientHello");
        pump_to_server(&mut client, &mut server);
        client.feed(&server_bytes(&mut server)).unwrap();
        let request = client.handshake_request().expect("the ServerHello after the retry");
        assert_eq!(request.group, NamedGroup::Secp256r1);
        let encoded = p256::EncodedPoint::from_bytes(&request.server_public).expect("SEC 1");
        let server_point = p256::AffinePoint::from_encoded_point(&encoded).expect("a P-256 point");
        // the secret the server computed is the one the share's scalar gives
        let shared = (p256::ProjectivePoint::from(server_point) * d).to_affine().to_encoded_point(false);
        let alg = HashAlg::Sha256;
        let hs = crate::tls::tls13::key_schedule::handshake_secret(alg, shared.x().expect("not the identity"));
        client.complete_two_party_handshake(TrafficSecrets::handshake(alg, &hs, &request.hello_hash.clone())).unwrap();
        assert!(client.is_connected(), "the flight reads under the retried share's secret");
    }
}
