//! TLS 1.3 connections in two parties against the fixture (rustls): X25519 and P-256, the
//! request garbled ahead and record by record; the proof of the garbling; the session's keys
//! from both shares, under which the transcript V holds reads as the server wrote it; and both
//! versions offered in one ClientHello.

use super::tests::fixture;
use super::*;
use crate::channel::memory_pair;
use crate::fixture::{FixtureServer, KeyType};
use crate::gc::Garbler;
use crate::mpc::garbled::{GarblerCheat, GarblerParty};
use crate::mpc::phases::{PeerMisbehaved, PhaseError};
use crate::mpc::reproof::ReproofError;
use crate::mpc::shared_secret::SharedGroup;
use crate::protocol::observe::tls13 as transcript13;
use crate::protocol::prove::tls13 as proof13;
use crate::tls::tls13::Suite13;
use crate::tls::Direction;
use crate::zk::MAX_MESSAGE;
use futures::future::join;
use tokio_util::compat::TokioAsyncReadCompatExt;

type ProverZk = crate::zk::Prover<crate::ot::ideal::IdealCotReceiver>;
type VerifierZk = crate::zk::Verifier<crate::ot::ideal::IdealCotSender>;
type ProverEnd = (ProverConnection13<crate::zk::PBit>, ProverZk, crate::channel::MemoryChannel);
type VerifierEnd = (VerifierConnection13<crate::zk::VBit>, VerifierZk, crate::channel::MemoryChannel);

/// The limits of a connection for `request`: max_sent exactly its length (the longest record
/// then carries max_sent bytes and the inner content type).
fn limits(request: &[u8]) -> ConnectionLimits {
    ConnectionLimits { max_sent: request.len(), max_recv: 1 << 16 }
}

fn request(path: &str, padding: usize) -> Vec<u8> {
    crate::http::RequestBuilder::get("localhost", path)
        .header("Authorization", "Bearer s3cret-t0ken")
        .header("X-Padding", &"p".repeat(padding))
        .build()
        .expect("request")
        .bytes
}

/// Both two-party suites, ChaCha20-Poly1305 first.
fn both() -> Suites13 {
    Suites13::of(&Suites13::TWO_PARTY).expect("two-party suites")
}

fn aes_only() -> Suites13 {
    Suites13::of(&[Suite13::Aes128GcmSha256]).expect("a two-party suite")
}

/// One TLS 1.3 connection in two parties to the fixture, P garbling with `gp`.
async fn connect(
    gp: GarblerParty,
    tls: TwoPartyTls,
    port: u16,
    roots: RootStore,
    request: &[u8],
) -> (Result<ProverEnd, ConnectionError>, Result<VerifierEnd, ConnectionError>) {
    connect_with(gp, tls, port, (roots.clone(), roots), request, None).await
}

fn tls13(group: NamedGroup, suites: Suites13) -> TwoPartyTls {
    TwoPartyTls::Tls13 { group, suites, also_tls12: false }
}

/// [`connect`] with each party's roots, and the `flip`th encrypted record from the server
/// altered (one bit) on its way to P.
async fn connect_with(
    gp: GarblerParty,
    tls: TwoPartyTls,
    port: u16,
    roots: (RootStore, RootStore),
    request: &[u8],
    flip: Option<usize>,
) -> (Result<ProverEnd, ConnectionError>, Result<VerifierEnd, ConnectionError>) {
    let (p, v) = connect_any(gp, tls, port, roots, request, (flip, false)).await;
    let p = p.map(|(conn, zk, ch)| match conn {
        ProverConnected::Tls13(conn) => (*conn, zk, ch),
        ProverConnected::Tls12(_) => panic!("the fixture speaks TLS 1.3"),
    });
    let v = v.map(|(conn, zk, ch)| match conn {
        VerifierConnected::Tls13(conn) => (*conn, zk, ch),
        VerifierConnected::Tls12(_) => panic!("the fixture speaks TLS 1.3"),
    });
    (p, v)
}

type AnyEnds = (
    Result<(ProverConnected<crate::zk::PBit>, ProverZk, crate::channel::MemoryChannel), ConnectionError>,
    Result<(VerifierConnected<crate::zk::VBit>, VerifierZk, crate::channel::MemoryChannel), ConnectionError>,
);

/// One connection in two parties to the fixture, prepared for `tls`, in the version the
/// server chooses; the server's stream altered on its way to P as `tamper` says (the `flip`th
/// encrypted record, RFC 8446's downgrade sentinel written into the ServerHello's random).
async fn connect_any(
    gp: GarblerParty,
    tls: TwoPartyTls,
    port: u16,
    (roots, v_roots): (RootStore, RootStore),
    request: &[u8],
    (flip, sentinel): (Option<usize>, bool),
) -> AnyEnds {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    let mut server = Tamper { tcp: tcp.compat(), flip, sentinel, seen: Vec::new(), done: false };
    let limits = limits(request);
    let now = rustls_pki_types::UnixTime::now();
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    let p = async move {
        let prepared = prepare_with(gp, &mut a, tls, request.len(), limits).await?;
        let server_side = (roots, "localhost", now);
        let conn = super::connect(prepared, &mut a, &mut pz, &mut server, server_side, request, limits, None).await?;
        Ok((conn, pz, a))
    };
    let v = async move {
        let prepared = prepare_verifier(&mut b, limits).await?;
        let conn = accept(prepared, &mut b, &mut vz, (v_roots, "localhost"), || now, limits).await?;
        Ok((conn, vz, b))
    };
    join(p, v).await
}

/// The server's stream with one bit of its `flip`th encrypted record (outer type 23, counted
/// from 0) inverted, and with `sentinel` the last 8 bytes of its ServerHello's random made
/// RFC 8446's TLS 1.2 downgrade sentinel.
struct Tamper {
    tcp: tokio_util::compat::Compat<tokio::net::TcpStream>,
    flip: Option<usize>,
    sentinel: bool,
    seen: Vec<u8>,
    done: bool,
}

/// Where the server random's last 8 bytes are in the stream: after the record header (5), the
/// handshake header (4), the version (2) and 24 bytes of the random.
const SENTINEL_AT: usize = 5 + 4 + 2 + 24;

impl crate::tls::driver::ByteIo for Tamper {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, crate::tls::Error> {
        let n = crate::tls::driver::ByteIo::read(&mut self.tcp, buf).await?;
        let start = self.seen.len();
        self.seen.extend_from_slice(&buf[..n]);
        if self.sentinel {
            for (at, byte) in (SENTINEL_AT..).zip(b"DOWNGRD\x01") {
                if let Some(b) = at.checked_sub(start).and_then(|i| buf[..n].get_mut(i)) {
                    *b = *byte;
                }
            }
        }
        let Some(target) = self.flip.filter(|_| !self.done) else { return Ok(n) };
        let (mut at, mut encrypted) = (0, 0);
        while let Some(h) = self.seen.get(at..at + 5) {
            let len = u16::from_be_bytes([h[3], h[4]]) as usize;
            if h[0] == 23 {
                if encrypted == target && (start..self.seen.len()).contains(&(at + 5)) {
                    buf[at + 5 - start] ^= 1;
                    self.done = true;
                    break;
                }
                encrypted += 1;
            }
            at += 5 + len;
        }
        Ok(n)
    }
    async fn write_all(&mut self, data: &[u8]) -> Result<(), crate::tls::Error> {
        crate::tls::driver::ByteIo::write_all(&mut self.tcp, data).await
    }
}

async fn reproof<P, V>(
    p: (P, ProverZk, crate::channel::MemoryChannel),
    v: (V, VerifierZk, crate::channel::MemoryChannel),
) -> (Result<([u8; 32], (P, ProverZk, crate::channel::MemoryChannel)), ReproofError>, Result<(), ReproofError>)
where
    P: crate::mpc::reproof::GarbledConnection<crate::zk::PBit>,
    V: crate::mpc::reproof::EvaluatedConnection<crate::zk::VBit>,
{
    let pp = async move {
        let (conn, mut zk, mut ch) = p;
        crate::mpc::reproof::prove(&mut zk, &mut ch, &conn).await.map(|share| (share, (conn, zk, ch)))
    };
    let vv = async move {
        let (conn, mut zk, mut ch) = v;
        crate::mpc::reproof::verify(&mut zk, &mut ch, &conn).await
    };
    join(pp, vv).await
}

/// A fixture that implements TLS_AES_128_GCM_SHA256 only of TLS 1.3's suites.
async fn aes_only_fixture() -> (u16, RootStore) {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.retain(|s| {
        s.version() != &rustls::version::TLS13 || s.suite() == rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
    });
    fixture_with(provider, &[&rustls::version::TLS12, &rustls::version::TLS13]).await
}

async fn fixture_with(
    provider: rustls::crypto::CryptoProvider,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> (u16, RootStore) {
    let addr = "127.0.0.1:0".parse().expect("addr");
    let fixture = FixtureServer::bind_with(addr, KeyType::EcdsaP256, 30, provider, versions).await.expect("fixture");
    let port = fixture.local_addr().expect("port").port();
    let roots = RootStore::from_pem(&fixture.certs.ca_pem).expect("roots");
    tokio::spawn(fixture.run());
    (port, roots)
}

/// Both parties fetch `/json` over TLS 1.3 with each group and each suite, the request garbled
/// ahead (short) and record by record (7 KB of padding does not fit the tables ahead), and
/// against a server that picks the suite offered second (the request garbled ahead for the
/// first goes record by record): both hold the same wire bytes; the verifier accepts the proof
/// of the garbling; with its share the prover has the session's schedule, under which the
/// transcript reads as proxy mode's reading does: the handshake checked (chain,
/// CertificateVerify, both Finished), the request as sent, the fixture's JSON response.
#[tokio::test]
async fn a_tls13_connection_in_two_parties_fetches_from_a_real_server_and_its_garbling_is_proven() {
    let (port, roots) = fixture().await;
    let (aes_port, aes_roots) = aes_only_fixture().await;
    let (chacha, aes) = (Suite13::ChaCha20Poly1305Sha256, Suite13::Aes128GcmSha256);
    for (group, suites, padding, (port, roots), chosen) in [
        (NamedGroup::X25519, both(), 0, (port, &roots), chacha),
        (NamedGroup::Secp256r1, both(), 0, (port, &roots), chacha),
        (NamedGroup::X25519, both(), ONLINE, (port, &roots), chacha),
        (NamedGroup::X25519, aes_only(), 0, (port, &roots), aes),
        (NamedGroup::Secp256r1, aes_only(), ONLINE, (port, &roots), aes),
        (NamedGroup::X25519, both(), 0, (aes_port, &aes_roots), aes),
    ] {
        let req = request("/json", padding);
        let gp = GarblerParty::new(Garbler::new(Vec::new()));
        let (p, v) = connect(gp, tls13(group, suites), port, roots.clone(), &req).await;
        let (p, v) = (p.expect("prover"), v.expect("verifier"));
        assert_eq!(p.0.client.suite(), Some(chosen));
        let ahead = v.0.script.requests_ahead;
        assert_eq!(ahead, padding == 0 && chosen == suites.first(), "a short request is garbled ahead, for its suite");
        let wire = v.0.wire().clone();
        assert_eq!(p.0.client.wire(), Some(&wire), "both hold the same bytes ({group:?})");
        assert_eq!(p.0.revealed, v.0.revealed);
        // V's view: the wire's ciphertext, one-time-padded keystream and its own shares; the
        // request's token is in none of it
        let token = b"s3cret-t0ken";
        let seen = [&wire[0][..], &v.0.revealed.concat(), &v.0.for_verifier.concat()];
        assert!(seen.iter().all(|b| !b.windows(token.len()).any(|w| w == token)), "the token reached V");
        let published = *v.0.share;

        let (proven, verified) = reproof(p, v).await;
        verified.expect("the verifier accepts the garbling");
        let (share, (p, _, _)) = proven.expect("the prover's proof");
        assert_eq!(share, published);
        let schedule = p.schedule(&share).expect("schedule");
        let t = transcript13::parse(&wire[0], &wire[1]).expect("the wire parses as TLS 1.3");
        let traffic = &schedule.handshake_traffic;
        let now = rustls_pki_types::UnixTime::now();
        let handshake = t
            .read_handshake(traffic.client.as_bytes(), traffic.server.as_bytes(), roots, "localhost", now)
            .expect("the handshake reads and checks");
        let application = schedule.application_traffic.as_ref().expect("application secrets");
        let suite = chosen;
        let sent = proof13::application_records(&t, &handshake, Direction::Sent);
        let (shapes, sent_plain) = proof13::read_records(suite, &application.client, sent).expect("request opens");
        assert_eq!(sent_plain, req, "the server got the request ({group:?}, ahead: {ahead})");
        assert_eq!(shapes.last().map(|s| (s.content_type, s.content_len)), Some((21, 2)), "then close_notify");
        let received = proof13::application_records(&t, &handshake, Direction::Received);
        let (_, response) = proof13::read_records(suite, &application.server, received).expect("response opens");
        let text = String::from_utf8(response).expect("text");
        assert!(text.starts_with("HTTP/1.1 200") && text.ends_with(crate::fixture::http::JSON_BODY), "{text}");
    }
}

/// A garbler that flips one decoded bit of the request's keystream: the server gets a request
/// with one byte altered (or refuses its tag), and the proof of the garbling refuses it by
/// name, under either suite.
#[tokio::test]
async fn a_garbler_that_flips_a_keystream_bit_in_tls13_is_refused_by_the_proof_of_the_garbling() {
    let (port, roots) = fixture().await;
    let req = request("/json", 0);
    for suites in [both(), aes_only()] {
        let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
        // The request is garbled ahead of the handshake: the first wires the garbler decodes
        // are its keystream's (masked). Flip a bit of its byte 20, in the path.
        gp.cheat = GarblerCheat { flip_decoding: Some(8 * 20 + 3), ..GarblerCheat::default() };
        let (p, v) = connect(gp, tls13(NamedGroup::X25519, suites), port, roots.clone(), &req).await;
        let (p, v) = (p.expect("the connection completes"), v.expect("verifier"));
        let (_, verified) = reproof(p, v).await;
        let err = verified.expect_err("the verifier refuses the garbling");
        assert!(matches!(err, ReproofError::Phase(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. }))), "{err:?}");
    }
}

/// The request's padding that keeps it from being garbled ahead (under either suite): P's
/// first circuit inputs are then its share of the secret (and its GHASH mask), and the first
/// values revealed are the schedule's (HS's inner pad state, then c_hs and s_hs).
const ONLINE: usize = 7000;

/// A garbler that flips a revealed bit of the schedule after the handshake (of c_ap's inner
/// pad state: the revealed values before it are HS's, c_hs, s_hs, D's and MS's, 1,280 bits):
/// the request goes out under another key, which the server refuses, the connection ends, and
/// the proof of the garbling refuses it.
#[tokio::test]
async fn a_garbler_that_flips_a_revealed_bit_of_the_schedule_is_refused() {
    let (port, roots) = fixture().await;
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    gp.cheat = GarblerCheat { flip_decoding: Some(1280 + 5), ..GarblerCheat::default() };
    let (p, v) = connect(gp, tls13(NamedGroup::X25519, both()), port, roots, &request("/json", ONLINE)).await;
    let (p, v) = (p.expect("the connection completes"), v.expect("verifier"));
    let refused = reproof(p, v).await.1.err();
    assert!(
        matches!(refused, Some(ReproofError::Phase(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. })))),
        "{refused:?}"
    );
}

/// A garbler that inputs another share than it committed: the handshake secrets are another
/// session's, the server's flight does not open under them, and both parties' clients refuse
/// it (`BadRecordMac`).
#[tokio::test]
async fn a_garbler_that_inputs_another_share_than_it_committed_gets_no_handshake() {
    let (port, roots) = fixture().await;
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    gp.cheat = GarblerCheat { other_value: Some(3), ..GarblerCheat::default() };
    let (p, v) = connect(gp, tls13(NamedGroup::X25519, both()), port, roots, &request("/json", ONLINE)).await;
    let bad_mac = |e: &ConnectionError| {
        matches!(e, ConnectionError::Tls(crate::tls::Error::PeerMisbehaved(crate::tls::PeerMisbehaved::BadRecordMac)))
    };
    assert!(
        p.as_ref().err().is_some_and(bad_mac) && v.as_ref().err().is_some_and(bad_mac),
        "{:?} / {:?}",
        p.err(),
        v.err()
    );
}

/// A verifier whose roots do not include the server's issuer refuses the connection when its
/// copy of the client reads the certificate; the prover cannot go on alone.
#[tokio::test]
async fn a_verifier_that_does_not_trust_the_servers_certificate_refuses_the_tls13_connection() {
    let (port, roots) = fixture().await;
    let other =
        FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
    let other_roots = RootStore::from_pem(&other.certs.ca_pem).expect("roots");
    let gp = GarblerParty::new(Garbler::new(Vec::new()));
    let tls = tls13(NamedGroup::X25519, both());
    let (p, v) = connect_with(gp, tls, port, (roots, other_roots), &request("/json", 0), None).await;
    let v = v.map(|_| ());
    assert!(matches!(&v, Err(ConnectionError::Tls(crate::tls::Error::Certificate(_)))), "{:?}", v.err());
    assert!(p.is_err(), "the prover cannot go on alone");
}

/// A verifier that publishes another share than it input is refused by the prover, by the
/// label it held for the bit: its share of the secret, or its share of a ChaCha20-Poly1305
/// record's Poly1305 polynomial (the first after the 256 bits of the secret's).
#[tokio::test]
async fn a_verifier_that_publishes_another_share_than_it_input_is_refused_in_tls13() {
    let (port, roots) = fixture().await;
    for (tamper, bit) in [(0, 0), (1, 256 + 9)] {
        let gp = GarblerParty::new(Garbler::new(Vec::new()));
        let (p, v) = connect(gp, tls13(NamedGroup::X25519, both()), port, roots.clone(), &request("/json", 0)).await;
        let mut v = v.expect("verifier");
        assert_eq!(v.0.tag_shares.len(), 2 * 17, "the request's record and the close_notify");
        match tamper {
            0 => v.0.share[0] ^= 1,
            _ => v.0.tag_shares[1] ^= 2,
        }
        let (proven, _) = reproof(p.expect("prover"), v).await;
        assert!(matches!(proven, Err(ReproofError::LabelMismatch { bit: b }) if b == bit), "{:?}", proven.err());
    }
}

/// A server record after the handshake altered before it reached P (by the network, or by P,
/// which holds no key then) is in V's copy as forwarded: nothing checks it during the
/// connection, and under the session's keys it does not open (the transcript proof checks
/// every record's tag in V's copy).
#[tokio::test]
async fn a_server_record_altered_before_it_reached_the_prover_does_not_open_under_the_sessions_keys() {
    let (port, roots) = fixture().await;
    let gp = GarblerParty::new(Garbler::new(Vec::new()));
    // rustls's flight is four records; the fifth encrypted record is after the handshake
    let tls = tls13(NamedGroup::X25519, both());
    let (p, v) = connect_with(gp, tls, port, (roots.clone(), roots.clone()), &request("/json", 0), Some(1)).await;
    let (p, v) = (p.expect("the connection completes"), v.expect("verifier"));
    let wire = v.0.wire().clone();
    assert_eq!(p.0.client.wire(), Some(&wire), "V holds what P forwarded");
    let (proven, verified) = reproof(p, v).await;
    verified.expect("the garbling was honest");
    let (share, (p, _, _)) = proven.expect("the prover's proof");
    let schedule = p.schedule(&share).expect("schedule");
    let t = transcript13::parse(&wire[0], &wire[1]).expect("parses");
    let traffic = &schedule.handshake_traffic;
    let now = rustls_pki_types::UnixTime::now();
    let handshake = t
        .read_handshake(traffic.client.as_bytes(), traffic.server.as_bytes(), &roots, "localhost", now)
        .expect("the handshake is intact");
    let application = schedule.application_traffic.as_ref().expect("application secrets");
    let received = proof13::application_records(&t, &handshake, Direction::Received);
    let opened = proof13::read_records(Suite13::ChaCha20Poly1305Sha256, &application.server, received);
    assert!(
        matches!(opened, Err(crate::tls::Error::PeerMisbehaved(crate::tls::PeerMisbehaved::BadRecordMac))),
        "{opened:?}"
    );
}

fn both_versions() -> TwoPartyTls {
    TwoPartyTls::Tls13 { group: NamedGroup::X25519, suites: both(), also_tls12: true }
}

/// A connection that offers both versions in one ClientHello goes on in the one the server
/// chooses: TLS 1.3 from a server that speaks both; TLS 1.2 from a server that speaks only
/// TLS 1.2, in the group it picks (rustls prefers X25519; one that implements P-256 alone), where
/// the request garbled ahead for TLS 1.3 goes record by record.
/// Either way both parties hold the same bytes, the verifier accepts the proof of the
/// garbling, and with its share the prover reads the fixture's response.
#[tokio::test]
async fn offering_both_versions_goes_on_in_the_one_the_server_chooses() {
    let (port, roots) = fixture().await;
    let (port12, roots12) = fixture_with(rustls::crypto::ring::default_provider(), &[&rustls::version::TLS12]).await;
    let req = request("/json", 0);
    let gp = GarblerParty::new(Garbler::new(Vec::new()));
    let (p, v) = connect_any(gp, both_versions(), port, (roots.clone(), roots), &req, (None, false)).await;
    let (ProverConnected::Tls13(p), VerifierConnected::Tls13(v)) = (p.expect("prover").0, v.expect("verifier").0)
    else {
        panic!("a server that speaks both chooses TLS 1.3")
    };
    assert_eq!((v.script.requests_ahead, p.client.suite()), (true, Some(Suite13::ChaCha20Poly1305Sha256)));

    let mut p256_only = rustls::crypto::ring::default_provider();
    p256_only.kx_groups.retain(|g| g.name() == rustls::NamedGroup::secp256r1);
    let p256_server = fixture_with(p256_only, &[&rustls::version::TLS12]).await;
    for ((port12, roots12), group) in [((port12, roots12), SharedGroup::X25519), (p256_server, SharedGroup::P256)] {
        let gp = GarblerParty::new(Garbler::new(Vec::new()));
        let tls = both_versions();
        let (p, v) = connect_any(gp, tls, port12, (roots12.clone(), roots12.clone()), &req, (None, false)).await;
        let ((ProverConnected::Tls12(p), pz, a), (VerifierConnected::Tls12(v), vz, b)) =
            (p.expect("prover"), v.expect("verifier"))
        else {
            panic!("a TLS 1.2 server gets TLS 1.2")
        };
        let (p, v) = (*p, *v);
        let HandshakeScript::Tls12(kdf) = &v.script.handshake else { panic!("a TLS 1.2 script") };
        assert_eq!(kdf.group, group, "the group the server chose");
        assert!(!v.script.requests_ahead, "garbled ahead for TLS 1.3's records, sent record by record");
        let sent = v.client.transcript().raw_bytes(Direction::Sent);
        assert_eq!(p.client.transcript().raw_bytes(Direction::Sent), sent, "both hold the same bytes");
        let received = v.client.transcript().raw_bytes(Direction::Received);
        let session = crate::protocol::observe::tls12::parse(&sent, &received).expect("V reads a TLS 1.2 session");
        session.validate_server(&roots12, "localhost", rustls_pki_types::UnixTime::now()).expect("and its server");
        let (proven, verified) = reproof((p, pz, a), (v, vz, b)).await;
        verified.expect("the verifier accepts the garbling");
        let (share, (p, _, _)) = proven.expect("the prover's proof");
        let ms = p.master_secret(&share).expect("the master secret");
        let opened = p.open_received(&ms).expect("deferred decryption");
        let response: Vec<u8> = opened.into_iter().filter(|(t, _)| *t == 23).flat_map(|r| r.1).collect();
        let text = String::from_utf8(response).expect("text");
        assert!(text.starts_with("HTTP/1.1 200") && text.ends_with(crate::fixture::http::JSON_BODY), "{text}");
    }
}

/// RFC 8446 §4.1.3: a TLS 1.2 ServerHello whose random ends with the downgrade sentinel, to a
/// ClientHello that offered TLS 1.3, is refused by the verifier's copy of the client (and the
/// prover's): someone in the middle removed TLS 1.3 from the offer.
#[tokio::test]
async fn a_tls12_server_hello_with_the_downgrade_sentinel_is_refused_when_both_were_offered() {
    let (port12, roots12) = fixture_with(rustls::crypto::ring::default_provider(), &[&rustls::version::TLS12]).await;
    let gp = GarblerParty::new(Garbler::new(Vec::new()));
    let req = request("/json", 0);
    let (p, v) = connect_any(gp, both_versions(), port12, (roots12.clone(), roots12), &req, (None, true)).await;
    let downgrade = |e: &ConnectionError| {
        matches!(e, ConnectionError::Tls(crate::tls::Error::PeerMisbehaved(crate::tls::PeerMisbehaved::Downgrade)))
    };
    let (p, v) = (p.map(|_| ()), v.map(|_| ()));
    assert!(v.as_ref().err().is_some_and(downgrade), "{:?}", v.err());
    assert!(p.as_ref().err().is_some_and(downgrade), "{:?}", p.err());
}
