use super::*;
use crate::channel::memory_pair;
use crate::fixture::{FixtureServer, KeyType};
use crate::gc::Garbler;
use crate::mpc::garbled::GarblerParty;
use crate::mpc::phases::PhaseError;
use crate::mpc::record::request_records;
use crate::mpc::sealing::RecordCipher;
use crate::tls::codec::TLS12;
use crate::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
use crate::tls::driver::ByteIo;
use crate::tls::inject::{InjectAt, RecordInjector};
use crate::tls::keys::{extended_master_secret, key_block, PreMasterSecret};
use crate::tls::transcript::{MAX_RECORDS_PER_DIRECTION, TLS_OVERHEAD};
use crate::tls::Direction;
use crate::tls::{Client, RootStore};
use crate::zk::MAX_MESSAGE;
use futures::future::join;
use tokio_util::compat::{Compat, TokioAsyncReadCompatExt};

/// The prover's side with garbler `gp` ([`honest`], or a cheating one): `client` is a fresh
/// client built on [`two_party_config`] (its ClientHello not yet sent), `server` the byte
/// stream to the server, `request` the application data to send. Returns when the server has
/// sent an alert or closed. In one call, as the tests drive it (a session prepares first:
/// [`prepare_prover`], [`connect_prover`]).
async fn prover<C: Channel, S: ByteIo, Z: Party<C>>(
    gp: GarblerParty,
    ch: &mut C,
    zk: &mut Z,
    server: &mut S,
    client: Client,
    request: &[u8],
    limits: ConnectionLimits,
) -> Result<ProverConnection<Bit<Z, C>>, ConnectionError> {
    let prepared = prepare_with(gp, ch, TwoPartyTls::Tls12, request.len(), limits).await?;
    connect_prover(prepared, ch, zk, server, client, request, limits, None).await
}

/// A garbler that garbles as the protocol says.
fn honest() -> GarblerParty {
    GarblerParty::new(Garbler::new(Vec::new()))
}

/// The verifier's side, for a connection to `server_name` validated against `roots` at `now`,
/// in one call, as the tests drive it (a session prepares first: [`prepare_verifier`], [`connect_verifier`]).
async fn verifier<C: Channel, Z: Party<C>>(
    ch: &mut C,
    zk: &mut Z,
    roots: RootStore,
    server_name: &str,
    now: rustls_pki_types::UnixTime,
    limits: ConnectionLimits,
) -> Result<VerifierConnection<Bit<Z, C>>, ConnectionError> {
    let prepared = prepare_verifier(ch, limits).await?;
    connect_verifier(prepared, ch, zk, roots, server_name, || now, limits).await
}

/// A fresh two-party client for the account tests (its ClientHello taken), which takes one
/// warning alert.
fn fresh_client() -> Client {
    let mut c = Client::new(
        two_party_config(RootStore::from_anchors(Vec::new())),
        "localhost",
        rustls_pki_types::UnixTime::now(),
    )
    .expect("client");
    c.take_outgoing();
    c
}

const LIMITS: ConnectionLimits = ConnectionLimits { max_sent: 1024, max_recv: 1 << 16 };

/// The fixture on 127.0.0.1 and the roots that trust it.
pub(super) async fn fixture() -> (u16, RootStore) {
    let fixture =
        FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
    let port = fixture.local_addr().expect("port").port();
    let roots = RootStore::from_pem(&fixture.certs.ca_pem).expect("roots");
    tokio::spawn(fixture.run());
    (port, roots)
}

/// A byte of a server record to invert on its way to the prover, counted from the
/// record's explicit nonce.
#[derive(Clone, Copy, Debug)]
enum Flip {
    /// Of the first application data record.
    Response(usize),
    /// Of the Finished (the record after ChangeCipherSpec).
    Finished(usize),
}

/// The server's stream, with `flip` applied.
struct Tamper {
    tcp: Compat<tokio::net::TcpStream>,
    flip: Option<Flip>,
    seen: Vec<u8>,
    done: bool,
}

impl ByteIo for Tamper {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, crate::tls::Error> {
        let n = ByteIo::read(&mut self.tcp, buf).await?;
        let Some(flip) = self.flip.filter(|_| !self.done) else { return Ok(n) };
        let start = self.seen.len();
        self.seen.extend_from_slice(&buf[..n]);
        let (mut at, mut previous) = (0, None);
        while let Some(h) = self.seen.get(at..at + 5) {
            let len = u16::from_be_bytes([h[3], h[4]]) as usize;
            let (target, i) = match flip {
                Flip::Response(i) => (h[0] == 23, i),
                Flip::Finished(i) => (previous == Some(20), i),
            };
            if target && (start..self.seen.len()).contains(&(at + 5 + i)) {
                buf[at + 5 + i - start] ^= 1;
                self.done = true;
                break;
            }
            previous = Some(h[0]);
            at += 5 + len;
        }
        Ok(n)
    }
    async fn write_all(&mut self, data: &[u8]) -> Result<(), crate::tls::Error> {
        ByteIo::write_all(&mut self.tcp, data).await
    }
}

type ProverZk = crate::zk::Prover<crate::ot::ideal::IdealCotReceiver>;
type VerifierZk = crate::zk::Verifier<crate::ot::ideal::IdealCotSender>;
type ProverEnd = (ProverConnection<crate::zk::PBit>, ProverZk, crate::channel::MemoryChannel);
type VerifierEnd = (VerifierConnection<crate::zk::VBit>, VerifierZk, crate::channel::MemoryChannel);
type Outcomes = (Result<ProverEnd, ConnectionError>, Result<VerifierEnd, ConnectionError>);

/// One two-party connection to the fixture through `gp`: P's and V's outcomes, each with
/// its ZK party and its channel end for what follows. Each side owns its channel end, so
/// one that fails drops it and the other returns.
async fn connect_with(
    gp: GarblerParty,
    port: u16,
    prover_roots: RootStore,
    verifier_roots: RootStore,
    request: &[u8],
    flip: Option<Flip>,
) -> Outcomes {
    connect_within(gp, port, prover_roots, verifier_roots, request, flip, LIMITS).await
}

async fn connect_within(
    gp: GarblerParty,
    port: u16,
    prover_roots: RootStore,
    verifier_roots: RootStore,
    request: &[u8],
    flip: Option<Flip>,
    limits: ConnectionLimits,
) -> Outcomes {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    let mut server = Tamper { tcp: tcp.compat(), flip, seen: Vec::new(), done: false };
    let now = rustls_pki_types::UnixTime::now();
    let client = Client::new(two_party_config(prover_roots), "localhost", now).expect("client");
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    let p = async move { prover(gp, &mut a, &mut pz, &mut server, client, request, limits).await.map(|p| (p, pz, a)) };
    let v =
        async move { verifier(&mut b, &mut vz, verifier_roots, "localhost", now, limits).await.map(|v| (v, vz, b)) };
    join(p, v).await
}

async fn connect(
    port: u16,
    prover_roots: RootStore,
    verifier_roots: RootStore,
    request: &[u8],
    flip: Option<Flip>,
) -> Outcomes {
    connect_with(honest(), port, prover_roots, verifier_roots, request, flip).await
}

/// The proof after the connection, both sides: P's result (V's share) and V's.
/// Each side again owns its channel end: one that fails drops it and the other returns.
async fn reproof(
    p: ProverEnd,
    v: VerifierEnd,
) -> (
    Result<([u8; 32], ProverEnd), super::super::reproof::ReproofError>,
    Result<VerifierEnd, super::super::reproof::ReproofError>,
) {
    let pp = async move {
        let (conn, mut zk, mut ch) = p;
        super::super::reproof::prove(&mut zk, &mut ch, &conn).await.map(|share| (share, (conn, zk, ch)))
    };
    let vv = async move {
        let (conn, mut zk, mut ch) = v;
        super::super::reproof::verify(&mut zk, &mut ch, &conn).await.map(|()| (conn, zk, ch))
    };
    join(pp, vv).await
}

fn request(path: &str) -> Vec<u8> {
    crate::http::RequestBuilder::get("localhost", path)
        .header("Authorization", "Bearer s3cret-t0ken")
        .build()
        .expect("request")
        .bytes
}

#[tokio::test]
async fn prover_and_verifier_together_fetch_from_a_real_server_then_the_prover_proves_the_garbling_and_decrypts() {
    let (port, roots) = fixture().await;
    let req = request("/json");
    let (p, v) = connect(port, roots.clone(), roots, &req, None).await;
    let (p_end, v_end) = (p.expect("prover"), v.expect("verifier"));
    let (p, v) = (&p_end.0, &v_end.0);
    for d in [Direction::Sent, Direction::Received] {
        assert_eq!(
            p.client.transcript().raw_bytes(d),
            v.client.transcript().raw_bytes(d),
            "both hold the same {d:?} records"
        );
    }
    assert_eq!(p.revealed, v.revealed, "both saw the same revealed values");
    assert!(
        v.client
            .transcript()
            .direction(Direction::Sent)
            .filter(|r| r.content_type == 23)
            .all(|r| r.plaintext.is_none()),
        "the verifier never saw the request"
    );
    // The server's keys, from the premaster secret neither party held: its records
    // and the request open under them.
    let HandshakeScript::Tls12(kdf) = &v.script.handshake else { panic!("a TLS 1.2 script") };
    let pms = kdf.group.add(&p.premaster_share, &v.premaster_share).expect("canonical shares");
    let pms = PreMasterSecret::new(pms.to_vec());
    let ms = extended_master_secret(&pms, v.client.session_hash().expect("the fixture agrees to EMS"));
    let kb = key_block(&ms, v.client.client_random(), v.client.server_random());
    let mut client_write = AesGcmRecordCrypto::new(&kb.client_write_key, &kb.client_write_iv).expect("key");
    for r in v.client.transcript().direction(Direction::Sent).filter(|r| r.content_type == 23) {
        assert_eq!(client_write.open(r.seq.expect("seq"), 23, TLS12, &r.raw[5..]).expect("the request opens"), req);
    }

    let v_share_published = *v.premaster_share;
    let (proven, verified) = reproof(p_end, v_end).await;
    verified.expect("the verifier accepts the garbling");
    let (v_share, (p, _, _)) = proven.expect("the prover's proof");
    assert_eq!(v_share, v_share_published);
    let records = p.open_received(&p.master_secret(&v_share).expect("a canonical share")).expect("deferred decryption");
    let response: Vec<u8> = records.iter().filter(|(t, _)| *t == 23).flat_map(|(_, b)| b.clone()).collect();
    let text = String::from_utf8(response).expect("text");
    assert!(text.starts_with("HTTP/1.1 200") && text.ends_with(crate::fixture::http::JSON_BODY), "{text}");
    assert_eq!(records.last(), Some(&(21, vec![1, 0])), "the server ended with close_notify");
}

/// A request whose tables would not fit [`AHEAD_TABLES`] is garbled record by record once
/// the keys exist; it reaches the server and the proof of the garbling accepts it, as a
/// short one garbled ahead does (the test above).
#[tokio::test]
async fn a_request_too_long_to_garble_ahead_is_garbled_once_the_keys_exist() {
    let (port, roots) = fixture().await;
    let req = crate::http::RequestBuilder::get("localhost", "/json")
        .header("X-Padding", &"p".repeat(4000))
        .build()
        .expect("request")
        .bytes;
    assert!(
        RecordCipher::AesGcm.tables_for_records(&request_records(RecordLayer::Tls12, req.len())) > AHEAD_TABLES
            && RecordCipher::AesGcm.tables_for_records(&request_records(RecordLayer::Tls12, 1024)) <= AHEAD_TABLES
    );
    let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
    let (p, v) = connect_within(honest(), port, roots.clone(), roots, &req, None, limits).await;
    let (p_end, v_end) = (p.expect("prover"), v.expect("verifier"));
    assert_eq!(p_end.0.client.transcript().app_plaintext(Direction::Sent), req);
    assert_eq!(v_end.0.script.requests, vec![(1, req.len())]);
    let (proven, verified) = reproof(p_end, v_end).await;
    verified.expect("the verifier accepts the garbling");
    proven.expect("the prover's proof");
}

/// The audit's cheating garbler, after the key exchange: the verifier decodes a value of
/// the request's keystream phase other than the agreed circuit gives (here one decoding
/// bit flipped; a garbling that leaked the verifier's share or a key into a revealed value
/// would do the same). As a control, the transcript proof alone would accept a copy whose
/// response a prover holding the keys made up (a record re-sealed around other bytes under
/// the real server key). The session never gets there: the proof of the garbling refuses
/// it first, as the values revealed differ from what the committed inputs give
/// (`RevealDiffers`).
#[tokio::test]
async fn a_garbler_that_reveals_another_value_is_refused_before_the_transcript_proof() {
    let (port, roots) = fixture().await;
    let req = crate::http::RequestBuilder::get("localhost", "/json")
        .header("X-Padding", &"p".repeat(4000))
        .build()
        .expect("request")
        .bytes;
    let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
    // Wires decoded before the request's first keystream phase: the key derivation's
    // (236 bytes), the client direction's H and E_K(J0) shares and the client Finished's
    // keystream (16 bytes each). Byte 100 of the request is in the padding header.
    const BEFORE_REQUEST: usize = 8 * (236 + 3 * 16);
    let mut gp = honest();
    gp.cheat.flip_decoding = Some(BEFORE_REQUEST + 8 * 100 + 3);
    let (p, v) = connect_within(gp, port, roots.clone(), roots, &req, None, limits).await;
    let (p_end, v_end) = (p.expect("the prover's connection"), v.expect("the verifier's connection"));
    assert_eq!(&p_end.0.client.transcript().app_plaintext(Direction::Sent)[..100], &req[..100]);

    // The control: a response record re-sealed around other bytes under the real server
    // key passes the transcript proof of V's copy, had P forwarded it.
    let ms = p_end.0.master_secret(&v_end.0.premaster_share).expect("a canonical share");
    let kb = key_block(&ms, p_end.0.client.client_random(), p_end.0.client.server_random());
    let [sent, received] =
        forge_first_record(&v_end.0.client, Direction::Received, &kb.server_write_key, &kb.server_write_iv);
    let copy = crate::protocol::observe::tls12::parse(&sent, &received).expect("the forged copy parses");
    use crate::protocol::prove::tls12::{self as proof, PublicInputs};
    let lens = [Direction::Sent, Direction::Received].map(|d| proof::app_len(copy.encrypted_records(d)));
    let plan = crate::protocol::messages::RevealPlan {
        sent: vec![0..lens[0]],
        received: vec![0..lens[1]],
        ..Default::default()
    };
    let inputs = PublicInputs::new(&copy, &plan);
    let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let pp = proof::run(&mut pz, &mut a, Some(&ms.0), Some(&[]), &inputs, |cvd| copy.server_finished_hash(cvd));
    let vv = async {
        let opened = proof::run(&mut vz, &mut b, None, None, &inputs, |cvd| copy.server_finished_hash(cvd))
            .await
            .expect("the transcript proof accepts the forged copy");
        crate::protocol::prove::tls12::check::recover(
            "received",
            copy.encrypted_records(Direction::Received),
            &opened.received,
            &plan.received,
        )
        .expect("every record verifies")
        .bytes
    };
    let (_, forged) = join(pp, vv).await;
    let genuine: Vec<u8> = p_end
        .0
        .open_received(&ms)
        .expect("the genuine records")
        .into_iter()
        .filter(|(t, _)| *t == 23)
        .flat_map(|(_, b)| b)
        .collect();
    assert_eq!(forged.len(), genuine.len());
    assert_ne!(forged, genuine, "the transcript proof alone would certify bytes the server never sent");

    // The session: the proof of the garbling comes first, and refuses.
    let (_, verified) = reproof(p_end, v_end).await;
    assert!(
        matches!(&verified, Err(super::super::reproof::ReproofError::Phase(PhaseError::Peer(crate::mpc::phases::PeerMisbehaved::RevealDiffers { index: 9 })))),
        "{:?} (phases revealed to both before the request's: the key derivation's seven, the client key schedule's and the Finished's keystream)",
        verified.err()
    );
}

/// A connection prepared for more than its request: garbled ahead (1,024 bytes) and online
/// (5,000, too long to garble ahead). The request reaches the server as it is, the
/// verifier's copy holds it as sent, and the proof of the garbling accepts the records
/// replayed over their prepared length.
#[tokio::test]
async fn a_connection_prepared_for_more_takes_a_shorter_request() {
    for (capacity, ahead) in [(1024, true), (5000, false)] {
        let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
        let req = request("/json");
        let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
        let p = async {
            let prepared = prepare_prover(&mut a, TwoPartyTls::Tls12, capacity, limits).await?;
            assert_eq!((prepared.capacity(), prepared.ahead.is_some()), (capacity, ahead));
            connect_prover(prepared, &mut a, &mut pz, &mut server, client, &req, limits, None).await
        };
        let v = verifier(&mut b, &mut vz, roots, "localhost", now, limits);
        let (p, v) = join(p, v).await;
        let (p, v) = (p.expect("prover"), v.expect("verifier"));
        assert_eq!(p.client.transcript().app_plaintext(Direction::Sent), req);
        for d in [Direction::Sent, Direction::Received] {
            assert_eq!(
                p.client.transcript().raw_bytes(d),
                v.client.transcript().raw_bytes(d),
                "both hold the same {d:?} records"
            );
        }
        let sent: Vec<usize> = v
            .client
            .transcript()
            .direction(Direction::Sent)
            .filter(|r| r.content_type == 23)
            .map(|r| r.raw.len() - 5 - 24)
            .collect();
        assert_eq!(sent, vec![req.len()], "one record, as long as the request");
        // the keystream replayed ahead is the prepared record's; online, the record's own
        assert_eq!(v.script.requests, vec![(1, if ahead { capacity } else { req.len() })]);
        let (proven, verified) = reproof((p, pz, a), (v, vz, b)).await;
        verified.expect("the verifier accepts the garbling");
        proven.expect("the prover's proof");
    }
}

/// The masks of a request garbled ahead are committed as the connection starts, after
/// their labels went out: a prover that then commits (and uses) another mask than it
/// garbled with, one bit of the first record's, is caught by the proof of the garbling,
/// whose re-run of the record's phases from the committed masks disagrees with what was
/// decoded.
#[tokio::test]
async fn a_mask_committed_otherwise_than_garbled_ahead_is_caught_by_the_proof_of_the_garbling() {
    let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
    let req = request("/json");
    let p = async {
        let mut prepared: PreparedProver<_> = prepare_prover(&mut a, TwoPartyTls::Tls12, req.len(), LIMITS).await?;
        assert!(prepared.ahead.is_some(), "the request is garbled ahead");
        if let Some(ahead) = prepared.ahead.as_mut() {
            ahead.records[0].masks[6] ^= 1;
        }
        connect_prover(prepared, &mut a, &mut pz, &mut server, client, &req, LIMITS, None).await
    };
    let v = verifier(&mut b, &mut vz, roots, "localhost", now, LIMITS);
    let (p, v) = join(p, v).await;
    let (p, v) = (p.expect("the connection itself goes through"), v.expect("verifier"));
    let (_, verified) = reproof((p, pz, a), (v, vz, b)).await;
    let refused = verified.err();
    assert!(
        matches!(
            refused,
            Some(super::super::reproof::ReproofError::Phase(PhaseError::Peer(
                super::super::phases::PeerMisbehaved::RevealDiffers { .. }
            )))
        ),
        "{refused:?}"
    );
}

/// V's reading of the record lengths P announces for a request garbled ahead.
#[test]
fn record_lengths_fit_the_records_prepared() {
    let view = |len| AheadRecordView::<()> { len, wires: Vec::new(), committed: Vec::new() };
    let ahead = [view(16384), view(100)];
    let msg = |lens: &[u32]| lens.iter().flat_map(|l| l.to_be_bytes()).collect::<Vec<u8>>();
    assert_eq!(record_lengths(&msg(&[16384, 100]), &ahead).expect("fits"), vec![16384, 100]);
    assert_eq!(record_lengths(&msg(&[5]), &ahead).expect("fits"), vec![5]);
    assert_eq!(record_lengths(&msg(&[]), &ahead).expect("no request"), Vec::<usize>::new());
    assert!(matches!(record_lengths(&msg(&[16384, 101]), &ahead), Err(ConnectionError::TooMuchSent { limit: 100 })));
    assert!(matches!(record_lengths(&msg(&[16385]), &ahead), Err(ConnectionError::TooMuchSent { limit: 16384 })));
    assert!(matches!(record_lengths(&msg(&[1, 1, 1]), &ahead), Err(ConnectionError::TooMuchSent { limit: 16484 })));
    assert!(matches!(record_lengths(&msg(&[0]), &ahead), Err(ConnectionError::Malformed(_))));
    assert!(matches!(record_lengths(&[0, 0, 1], &ahead), Err(ConnectionError::Malformed(_))));
}

#[tokio::test]
async fn after_the_proof_of_the_garbling_the_transcript_proof_certifies_the_response_and_hides_the_token() {
    use crate::protocol::messages::RevealPlan;
    use crate::protocol::prove::tls12::{self as proof, OpenedDirection, PublicInputs};
    let (port, roots) = fixture().await;
    let req = request("/json");
    let (p, v) = connect(port, roots.clone(), roots.clone(), &req, None).await;
    // The verifier's transcript is the proxy mode's: the records as they went over the
    // wire, which it checks the same way (chain, name, key-exchange signature).
    let v_conn = &v.as_ref().expect("verifier").0;
    let raw = |c: &Client, d| c.transcript().raw_bytes(d);
    let transcript = crate::protocol::observe::tls12::parse(
        &raw(&v_conn.client, Direction::Sent),
        &raw(&v_conn.client, Direction::Received),
    )
    .expect("transcript");
    transcript
        .validate_server(&roots, "localhost", rustls_pki_types::UnixTime::now())
        .expect("the fixture's certificate");
    let (p, v) = reproof(p.expect("prover"), v.expect("verifier")).await;
    let ((v_share, (p, mut pz, mut a)), (_, mut vz, mut b)) = (p.expect("prover"), v.expect("verifier"));

    // The request revealed but its token; the response whole (the fast path).
    let token = req.windows(12).position(|w| w == b"s3cret-t0ken").expect("token") as u64;
    let recv_len = proof::app_len(transcript.encrypted_records(Direction::Received));
    let plan = RevealPlan {
        sent: vec![0..token, token + 12..req.len() as u64],
        received: vec![0..recv_len],
        ..Default::default()
    };
    let ms = p.master_secret(&v_share).expect("a canonical share");
    let p_transcript =
        crate::protocol::observe::tls12::parse(&raw(&p.client, Direction::Sent), &raw(&p.client, Direction::Received))
            .expect("transcript");
    let (p_inputs, v_inputs) = (PublicInputs::new(&p_transcript, &plan), PublicInputs::new(&transcript, &plan));
    let pp =
        proof::run(&mut pz, &mut a, Some(&ms.0), Some(&[]), &p_inputs, |cvd| p_transcript.server_finished_hash(cvd));
    let vv = proof::run(&mut vz, &mut b, None, None, &v_inputs, |cvd| transcript.server_finished_hash(cvd));
    let (pr, opened) = join(pp, vv).await;
    pr.expect("the prover's transcript proof");
    let opened = opened.expect("the verifier accepts the transcript proof");
    assert!(matches!(opened.received, OpenedDirection::Key { .. }), "the response took the fast path");
    let sent = crate::protocol::prove::tls12::check::recover(
        "sent",
        transcript.encrypted_records(Direction::Sent),
        &opened.sent,
        &plan.sent,
    )
    .expect("sent");
    let received = crate::protocol::prove::tls12::check::recover(
        "received",
        transcript.encrypted_records(Direction::Received),
        &opened.received,
        &plan.received,
    )
    .expect("received");
    let text = String::from_utf8(received.bytes).expect("text");
    assert!(text.starts_with("HTTP/1.1 200") && text.ends_with(crate::fixture::http::JSON_BODY), "{text}");
    assert_eq!(&sent.bytes[..token as usize], &req[..token as usize]);
    assert_eq!(&sent.bytes[token as usize..token as usize + 12], &[0; 12], "the token stays hidden");
    assert_eq!(&sent.bytes[token as usize + 12..], &req[token as usize + 12..]);
}

/// After a connection and the proof of its garbling, the transcript proof with `plan(sent
/// length, received length)`: P proves over its records with `forge` applied to them once
/// it knows the keys, and cheats as `cheat` says; V proves over its own copy. V's outcome:
/// what it recovered of (sent, received), and the honest plaintext of both.
async fn transcript_proof(
    plan: impl Fn(u64, u64) -> crate::protocol::messages::RevealPlan,
    forge: impl FnOnce(&crate::tls::keys::KeyBlock, &Client) -> [Vec<u8>; 2],
    cheat: crate::protocol::prove::tls12::ProofCheat,
) -> (Result<[Vec<u8>; 2], String>, [Vec<u8>; 2]) {
    let (verified, honest) = transcript_proof_over(None, plan, forge, cheat).await;
    (verified, honest.expect("P decrypts the server's records"))
}

/// [`transcript_proof`] over a connection whose server bytes were altered as `flip` says
/// before they reached P; the honest plaintext as P's deferred decryption gives it.
async fn transcript_proof_over(
    flip: Option<Flip>,
    plan: impl Fn(u64, u64) -> crate::protocol::messages::RevealPlan,
    forge: impl FnOnce(&crate::tls::keys::KeyBlock, &Client) -> [Vec<u8>; 2],
    cheat: crate::protocol::prove::tls12::ProofCheat,
) -> (Result<[Vec<u8>; 2], String>, Result<[Vec<u8>; 2], ConnectionError>) {
    use crate::protocol::observe::tls12 as transcript;
    use crate::protocol::prove::tls12::{self as proof, PublicInputs, PROOF_CHEAT};
    let (port, roots) = fixture().await;
    let (p, v) = connect(port, roots.clone(), roots, &request("/json"), flip).await;
    let (p, v) = reproof(p.expect("prover"), v.expect("verifier")).await;
    let ((v_share, (p, mut pz, mut a)), (v, mut vz, mut b)) = (p.expect("prover"), v.expect("verifier"));
    let ms = p.master_secret(&v_share).expect("a canonical share");
    let honest = p.open_received(&ms).map(|r| {
        [
            p.client.transcript().app_plaintext(Direction::Sent),
            r.into_iter().filter(|(t, _)| *t == 23).flat_map(|(_, b)| b).collect(),
        ]
    });
    let kb = key_block(&ms, p.client.client_random(), p.client.server_random());
    let [p_sent, p_received] = forge(&kb, &p.client);
    let raw = |d| v.client.transcript().raw_bytes(d);
    let (pt, vt) = (
        transcript::parse(&p_sent, &p_received).expect("P's records"),
        transcript::parse(&raw(Direction::Sent), &raw(Direction::Received)).expect("V's records"),
    );
    let (sent_len, recv_len) = (
        proof::app_len(vt.encrypted_records(Direction::Sent)),
        proof::app_len(vt.encrypted_records(Direction::Received)),
    );
    let plan = plan(sent_len, recv_len);
    let (p_inputs, v_inputs) = (PublicInputs::new(&pt, &plan), PublicInputs::new(&vt, &plan));
    PROOF_CHEAT.with(|c| c.set(cheat));
    let pp = proof::run(&mut pz, &mut a, Some(&ms.0), Some(&[]), &p_inputs, |cvd| pt.server_finished_hash(cvd));
    let (vt, plan) = (&vt, &plan);
    let vv = async move {
        let opened = proof::run(&mut vz, &mut b, None, None, &v_inputs, |cvd| vt.server_finished_hash(cvd))
            .await
            .map_err(|e| format!("{e:?}"))?;
        let recover = |name, d, opened, plan| {
            crate::protocol::prove::tls12::check::recover(name, vt.encrypted_records(d), opened, plan)
                .map(|r| r.bytes)
                .map_err(|e| format!("{e:?}"))
        };
        Ok([
            recover("sent", Direction::Sent, &opened.sent, &plan.sent)?,
            recover("received", Direction::Received, &opened.received, &plan.received)?,
        ])
    };
    let (_, verified) = join(pp, vv).await;
    PROOF_CHEAT.with(|c| c.set(Default::default()));
    (verified, honest)
}

/// Both directions' raw records as P holds them, the first application data record of
/// `direction` re-sealed under `key`/`iv` around its plaintext with one byte changed.
fn forge_first_record(client: &Client, direction: Direction, key: &[u8; 16], iv: &[u8; 4]) -> [Vec<u8>; 2] {
    let mut crypto = AesGcmRecordCrypto::new(key, iv).expect("key");
    let mut done = false;
    let mut rebuild = |d: Direction| -> Vec<u8> {
        client
            .transcript()
            .direction(d)
            .flat_map(|r| {
                if d != direction || done || r.content_type != 23 || r.seq.is_none() {
                    return r.raw.clone();
                }
                done = true;
                let seq = r.seq.expect("seq");
                let mut plain = crypto.open(seq, 23, TLS12, &r.raw[5..]).expect("the record opens under the known key");
                plain[10] ^= 0x20;
                let body = crypto.seal(seq, 23, TLS12, &plain).expect("seal");
                assert_eq!(body.len(), r.raw.len() - 5);
                [&r.raw[..5], &body[..]].concat()
            })
            .collect()
    };
    let sent = rebuild(Direction::Sent);
    let received = rebuild(Direction::Received);
    assert!(done, "a record was forged");
    [sent, received]
}

fn unchanged(_: &crate::tls::keys::KeyBlock, c: &Client) -> [Vec<u8>; 2] {
    [c.transcript().raw_bytes(Direction::Sent), c.transcript().raw_bytes(Direction::Received)]
}

/// Where the token is in [`request`]`("/json")`.
fn token_range() -> std::ops::Range<u64> {
    let at = request("/json").windows(12).position(|w| w == b"s3cret-t0ken").expect("the token") as u64;
    at..at + 12
}

/// Everything revealed but the request's token and the response's last byte: both
/// directions on the ZK path.
fn all_but_token_and_last(sent: u64, received: u64) -> crate::protocol::messages::RevealPlan {
    let token = token_range();
    crate::protocol::messages::RevealPlan {
        sent: vec![0..token.start, token.end..sent],
        received: vec![0..received - 1],
        ..Default::default()
    }
}

#[tokio::test]
async fn after_the_connection_a_fast_path_key_other_than_the_derived_one_is_refused() {
    let all = |sent, received| crate::protocol::messages::RevealPlan {
        sent: vec![0..sent],
        received: vec![0..received],
        ..Default::default()
    };
    let (honest, plain) = transcript_proof(all, unchanged, Default::default()).await;
    assert_eq!(honest.expect("the honest prover"), plain);
    for side in [0, 1] {
        let cheat = crate::protocol::prove::tls12::ProofCheat { fast_key: Some(side), ..Default::default() };
        let (v, _) = transcript_proof(all, unchanged, cheat).await;
        assert_eq!(v.err().as_deref(), Some("OpeningMacMismatch"), "direction {side}");
    }
}

/// Once P knows the keys it can re-encrypt a server record around other bytes, but V
/// proves over its own copy of the records, taken before any key existed: a proof over
/// the forged record is refused (its tag, checked in ZK, is over other ciphertext).
#[tokio::test]
async fn a_server_record_forged_once_the_keys_are_known_is_refused() {
    let (honest, plain) = transcript_proof(all_but_token_and_last, unchanged, Default::default()).await;
    let honest = honest.expect("the honest prover");
    assert_eq!(&honest[1][..plain[1].len() - 1], &plain[1][..plain[1].len() - 1]);
    let forge = |kb: &crate::tls::keys::KeyBlock, c: &Client| {
        forge_first_record(c, Direction::Received, &kb.server_write_key, &kb.server_write_iv)
    };
    let (v, _) = transcript_proof(all_but_token_and_last, forge, Default::default()).await;
    assert_eq!(v.err().as_deref(), Some("MultiplicationCheckFailed"));
}

/// Likewise a request record P encrypts alone once it knows the client key: V's copy of the
/// request is what it helped seal.
#[tokio::test]
async fn a_request_ciphertext_the_verifier_did_not_help_seal_does_not_reach_the_verdict() {
    let forge = |kb: &crate::tls::keys::KeyBlock, c: &Client| {
        forge_first_record(c, Direction::Sent, &kb.client_write_key, &kb.client_write_iv)
    };
    let (v, plain) = transcript_proof(all_but_token_and_last, forge, Default::default()).await;
    let v = v.expect("V proves over its own records");
    let mut sent = plain[0].clone();
    let token = token_range();
    sent[token.start as usize..token.end as usize].fill(0);
    assert_eq!(v[0], sent, "the verdict holds the request sent");
}

#[tokio::test]
async fn a_garbler_that_flipped_a_decoded_keystream_bit_during_the_connection_is_caught_by_the_proof() {
    let (port, roots) = fixture().await;
    let req = request("/json");
    // The request is garbled ahead of the handshake: the first wires the garbler decodes
    // are its keystream's (masked). Flip a bit of its byte 20.
    let mut gp = honest();
    gp.cheat.flip_decoding = Some(8 * 20 + 3);
    let (p, v) = connect_with(gp, port, roots.clone(), roots, &req, None).await;
    // The connection itself goes through (the server gets one altered request byte).
    let (_, verified) = reproof(p.expect("prover"), v.expect("verifier")).await;
    assert!(
        matches!(
            &verified,
            Err(super::super::reproof::ReproofError::Phase(PhaseError::Peer(
                super::super::phases::PeerMisbehaved::RevealDiffers { .. }
            )))
        ),
        "{:?}",
        verified.err()
    );
}

#[tokio::test]
async fn a_verifier_that_publishes_another_share_than_it_input_is_refused_by_the_prover() {
    let (port, roots) = fixture().await;
    let (p, v) = connect(port, roots.clone(), roots, &request("/json"), None).await;
    let mut v = v.expect("verifier");
    // one bit of the share's lowest (P-256) or highest (X25519) byte: still in the field
    v.0.premaster_share[31] ^= 1;
    let (proven, _) = reproof(p.expect("prover"), v).await;
    assert!(matches!(proven, Err(super::super::reproof::ReproofError::LabelMismatch { .. })), "{:?}", proven.err());
}

#[tokio::test]
async fn a_verifier_that_does_not_trust_the_servers_certificate_refuses_the_connection() {
    let (port, roots) = fixture().await;
    let other =
        FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
    let other_roots = RootStore::from_pem(&other.certs.ca_pem).expect("roots");
    let (p, v) = connect(port, roots, other_roots, &request("/json"), None).await;
    let v = v.map(|_| ());
    assert!(matches!(&v, Err(ConnectionError::Tls(crate::tls::Error::Certificate(_)))), "{:?}", v.err());
    assert!(p.is_err(), "the prover cannot go on alone");
}

/// A server record altered before it reached P (by the network, or by P before it
/// forwarded it) is in V's copy as P forwarded it, before any key existed. Nothing checks
/// it during the connection; its tag is refused by the transcript proof on either path, and
/// P's deferred decryption names it.
#[tokio::test]
async fn a_server_record_altered_before_it_reached_the_prover_is_refused_after_the_connection() {
    let all = |sent, received| crate::protocol::messages::RevealPlan {
        sent: vec![0..sent],
        received: vec![0..received],
        ..Default::default()
    };
    for (plan, path) in [(all as fn(u64, u64) -> _, "fast"), (all_but_token_and_last, "ZK")] {
        let (v, p) = transcript_proof_over(Some(Flip::Response(40)), plan, unchanged, Default::default()).await;
        assert_eq!(v.err().as_deref(), Some("BadTag { direction: \"received\", index: 1 }"), "{path} path");
        assert!(matches!(p, Err(ConnectionError::ServerRecordDoesNotOpen { seq: 1 })), "{path} path: {:?}", p.err());
    }
}

/// The server's Finished is checked after the connection only (False Start: the request
/// went out before it arrived). One altered on its way to P completes the connection; the
/// transcript proof refuses it, and P's deferred check names it.
#[tokio::test]
async fn a_server_finished_altered_before_it_reached_the_prover_is_refused_after_the_connection() {
    let (v, p) =
        transcript_proof_over(Some(Flip::Finished(12)), all_but_token_and_last, unchanged, Default::default()).await;
    assert_eq!(v.err().as_deref(), Some("ConstantMismatch"));
    assert!(matches!(p, Err(ConnectionError::ServerRecordDoesNotOpen { seq: 0 })), "{:?}", p.err());
}

/// P's check of the server's Finished message once the keys are known: the verify_data
/// over this handshake, nothing else.
#[test]
fn the_provers_deferred_check_takes_only_the_finished_of_this_handshake() {
    let ms = crate::tls::MasterSecret(rand::random());
    let (ours, theirs): ([u8; 32], [u8; 32]) = (rand::random(), rand::random());
    let message =
        |hash| [&[20u8, 0, 0, 12][..], &crate::tls::keys::verify_data(&ms, b"server finished", hash)].concat();
    assert!(check_server_finished(&message(&ours), &ms, &ours).is_ok());
    assert!(matches!(
        check_server_finished(&message(&theirs), &ms, &ours),
        Err(ConnectionError::ServerFinishedMismatch)
    ));
    let client = [&[20u8, 0, 0, 12][..], &crate::tls::keys::verify_data(&ms, b"client finished", &ours)].concat();
    assert!(matches!(check_server_finished(&client, &ms, &ours), Err(ConnectionError::ServerFinishedMismatch)));
    assert!(matches!(
        check_server_finished(&[message(&ours), vec![0]].concat(), &ms, &ours),
        Err(ConnectionError::ServerFinishedMismatch)
    ));
}

#[tokio::test]
async fn a_response_over_max_recv_is_refused_by_both() {
    let (port, roots) = fixture().await;
    let (p, v) =
        connect(port, roots.clone(), roots, &request(&format!("/bytes?n={}", LIMITS.max_recv + 1)), None).await;
    assert!(matches!(&v, Err(ConnectionError::TooMuchReceived { .. })), "{:?}", v.err());
    assert!(matches!(&p, Err(ConnectionError::TooMuchReceived { .. })), "{:?}", p.err());
}

/// What a test that drives both sides itself starts from: the fixture's roots, a stream
/// to it, a fresh client, the channel and the ideal ZK parties.
struct Raw {
    roots: RootStore,
    server: Compat<tokio::net::TcpStream>,
    client: Client,
    now: rustls_pki_types::UnixTime,
    a: crate::channel::MemoryChannel,
    b: crate::channel::MemoryChannel,
    pz: ProverZk,
    vz: VerifierZk,
}

async fn raw() -> Raw {
    let (port, roots) = fixture().await;
    let server = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect").compat();
    let now = rustls_pki_types::UnixTime::now();
    let client = Client::new(two_party_config(roots.clone()), "localhost", now).expect("client");
    let (a, b) = memory_pair(MAX_MESSAGE);
    let (pz, vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    Raw { roots, server, client, now, a, b, pz, vz }
}

/// A prover that announced a request too long to garble ahead, then sends a longer one:
/// the verifier refuses the first record beyond the announced length.
#[tokio::test]
async fn a_request_longer_than_announced_is_refused_by_the_verifier() {
    let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
    let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
    let p = async move {
        let mut prepared = prepare_with(honest(), &mut a, TwoPartyTls::Tls12, 5000, limits).await?;
        prepared.request_len = 6000;
        connect_prover(prepared, &mut a, &mut pz, &mut server, client, &[b'a'; 6000], limits, None).await.map(|_| ())
    };
    let v = async move { verifier(&mut b, &mut vz, roots, "localhost", now, limits).await.map(|_| ()) };
    let (p, v) = join(p, v).await;
    assert!(
        matches!(&v, Err(ConnectionError::TooMuchSent { limit: 5000 })),
        "{:?} / prover: {:?}",
        v.err(),
        p.as_ref().err()
    );
}

/// The server's stream with records put in by a [`RecordInjector`]: what a prover
/// forwards to the verifier is whatever it says the server sent, and the honest prover
/// here forwards what it reads before its own client looks at it.
struct Inject {
    tcp: Compat<tokio::net::TcpStream>,
    injector: RecordInjector,
    out: std::collections::VecDeque<u8>,
}

impl ByteIo for Inject {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, crate::tls::Error> {
        while self.out.is_empty() {
            let mut chunk = vec![0u8; READ_CHUNK];
            let n = ByteIo::read(&mut self.tcp, &mut chunk).await?;
            if n == 0 {
                return Ok(0);
            }
            self.out.extend(self.injector.push(&chunk[..n]));
        }
        let n = buf.len().min(self.out.len());
        for (b, x) in buf.iter_mut().zip(self.out.drain(..n)) {
            *b = x;
        }
        Ok(n)
    }
    async fn write_all(&mut self, data: &[u8]) -> Result<(), crate::tls::Error> {
        ByteIo::write_all(&mut self.tcp, data).await
    }
}

/// A connection whose server stream carries `count` copies of `record` at `at`: the
/// verifier's outcome.
async fn connect_injected(at: InjectAt, record: &[u8], count: usize) -> Result<VerifierEnd, ConnectionError> {
    let (port, roots) = fixture().await;
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    let mut server =
        Inject { tcp: tcp.compat(), injector: RecordInjector::new(at, record.repeat(count)), out: Default::default() };
    let now = rustls_pki_types::UnixTime::now();
    let client = Client::new(two_party_config(roots.clone()), "localhost", now).expect("client");
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    let request = request("/json");
    let p = async move { prover(honest(), &mut a, &mut pz, &mut server, client, &request, LIMITS).await.map(|_| ()) };
    let v = async move { verifier(&mut b, &mut vz, roots, "localhost", now, LIMITS).await.map(|v| (v, vz, b)) };
    join(p, v).await.1
}

fn unexpected_record(v: &Result<VerifierEnd, ConnectionError>) -> Option<String> {
    match v {
        Err(ConnectionError::Tls(crate::tls::Error::PeerMisbehaved(
            crate::tls::PeerMisbehaved::UnexpectedMessage { got, .. },
        ))) => Some(got.clone()),
        _ => None,
    }
}

const HELLO_REQUEST: [u8; 9] = [22, 3, 3, 0, 4, 0, 0, 0, 0];
const WARNING: [u8; 7] = [21, 3, 3, 0, 2, 1, 112];

/// The verifier's copy of the client takes no HelloRequest at all in two-party mode: a
/// prover forwarding 10^6 of them (9 MB) is refused at the first, before the ServerHello
/// and between the client Finished and the server's ChangeCipherSpec alike, so the
/// verifier holds no more than the one forwarded message (16 KiB) that carried it.
#[tokio::test]
async fn forwarded_hello_requests_are_refused_by_the_verifier() {
    for at in [InjectAt::Start, InjectAt::BeforeCcs] {
        let v = connect_injected(at, &HELLO_REQUEST, 1_000_000).await;
        assert_eq!(unexpected_record(&v).as_deref(), Some("HelloRequest"), "{at:?}: {:?}", v.as_ref().err());
    }
}

/// One warning alert before the ServerHelloDone (an unrecognized_name) is taken; a second,
/// or one after the client Finished, is refused.
#[tokio::test]
async fn forwarded_warning_alerts_are_refused_where_the_handshake_has_no_place_for_them() {
    let v = connect_injected(InjectAt::Start, &WARNING, 1).await;
    assert!(v.is_ok(), "one unrecognized_name warning: {:?}", v.err());
    let v = connect_injected(InjectAt::Start, &WARNING, 1_000_000).await;
    assert_eq!(unexpected_record(&v).as_deref(), Some("a warning alert (112)"), "{:?}", v.as_ref().err());
    let v = connect_injected(InjectAt::BeforeCcs, &WARNING, 1).await;
    assert_eq!(unexpected_record(&v).as_deref(), Some("a warning alert (112)"), "{:?}", v.as_ref().err());
}

/// Every forwarded byte counts against max_recv + TLS_OVERHEAD: 10^6 empty application-data
/// records (29 bytes each on the wire, 1 charged against max_recv) are refused once the
/// forwarded bytes pass that (here 128 KiB: ≈4,500 records), before the verifier's copy
/// holds more.
#[tokio::test]
async fn a_flood_of_empty_records_is_refused_by_the_verifier_within_max_recv_and_the_overhead() {
    let empty = [&[23u8, 3, 3, 0, 24][..], &[0; 24]].concat();
    let v = connect_injected(InjectAt::AfterFinished, &empty, 1_000_000).await;
    let limit = LIMITS.max_recv as u64 + TLS_OVERHEAD;
    assert!(matches!(&v, Err(ConnectionError::TooMuchForwarded { limit: l }) if *l == limit), "{:?}", v.as_ref().err());
    // Each bound on its own, taking exactly what it allows: 2^16 records (under a max_recv
    // that would take more), and max_recv + the overhead in bytes; one record or byte more is
    // refused.
    let mut full = ServerBytes { bytes: 0, records: MAX_RECORDS_PER_DIRECTION, max_bytes: u64::MAX };
    assert!(matches!(
        full.feed(&mut fresh_client(), &WARNING),
        Err(ConnectionError::TooManyRecords { limit: MAX_RECORDS_PER_DIRECTION })
    ));
    let mut nearly = ServerBytes { bytes: 0, records: MAX_RECORDS_PER_DIRECTION - 1, max_bytes: u64::MAX };
    assert!(nearly.feed(&mut fresh_client(), &WARNING).is_ok());
    assert_eq!(nearly.records, MAX_RECORDS_PER_DIRECTION);
    let mut exact = ServerBytes { bytes: 0, records: 0, max_bytes: WARNING.len() as u64 };
    assert!(exact.feed(&mut fresh_client(), &WARNING).is_ok());
    let mut short = ServerBytes { bytes: 0, records: 0, max_bytes: WARNING.len() as u64 - 1 };
    assert!(matches!(short.feed(&mut fresh_client(), &WARNING), Err(ConnectionError::TooMuchForwarded { limit: 6 })));
}

#[tokio::test]
async fn a_request_over_the_verifiers_max_sent_is_refused_by_the_verifier() {
    let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
    // Both limits allow full records, so both size the same GHASH powers; the prover
    // claims 40000 bytes where the verifier agreed to 20000, and announces 30000 before
    // the handshake.
    let (ours, theirs) =
        (ConnectionLimits { max_sent: 20_000, ..LIMITS }, ConnectionLimits { max_sent: 40_000, ..LIMITS });
    let p = async move { prover(honest(), &mut a, &mut pz, &mut server, client, &[b'a'; 30_000], theirs).await.map(|_| ()) };
    let v = async move { verifier(&mut b, &mut vz, roots, "localhost", now, ours).await.map(|_| ()) };
    let (p, v) = join(p, v).await;
    assert!(
        matches!(&v, Err(ConnectionError::TooMuchSent { limit: 20_000 })),
        "{:?} / prover: {:?}",
        v.err(),
        p.as_ref().err()
    );
    assert!(matches!(&p, Err(ConnectionError::Channel(_)) | Err(ConnectionError::Phase(_))), "{:?}", p.err());
}

/// The verifier takes a forwarded message only as the prover's side makes them: a tag byte and
/// 1 to 16 KiB of the server's bytes; an empty or a longer one is malformed, before anything
/// is fed to its copy of the client.
#[tokio::test]
async fn a_forwarded_message_of_no_bytes_or_over_16_kib_is_refused_as_malformed() {
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    for len in [0, READ_CHUNK + 1, READ_CHUNK] {
        a.send([&[SERVER_BYTES][..], &vec![0; len]].concat()).await.expect("send");
        let mut account = ServerBytes { bytes: 0, records: 0, max_bytes: 10 };
        let taken = take_forwarded(&mut b, &mut fresh_client(), &mut account).await;
        if len == READ_CHUNK {
            // taken, and refused by the byte bound (10 here) rather than as malformed
            assert!(matches!(taken, Err(ConnectionError::TooMuchForwarded { limit: 10 })), "{len}: {taken:?}");
        } else {
            assert!(matches!(taken, Err(ConnectionError::Malformed(_))), "{len}: {taken:?}");
            assert_eq!(account.bytes, 0, "nothing was fed");
        }
    }
}
