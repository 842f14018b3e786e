use super::handshake::*;
use super::*;
use crate::fixture::{FixtureCerts, KeyType};
use crate::tls::codec::{self, ext, hs, HandshakeJoiner, MAX_PLAINTEXT, RECORD_HEADER_LEN, TLS12};
use crate::tls::codec::{put_vec16, put_vec8, split_records};
use crate::tls::crypto::{EXPLICIT_NONCE_LEN, TAG_LEN};
use crate::tls::{keys, Client, ClientConfig};
use crate::tls::{CipherSuite, Direction, RootStore};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rustls_pki_types::UnixTime;
use std::io::{Read, Write};
use std::sync::Arc;

pub(crate) const REQUEST: &[u8] = b"GET /json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

pub(crate) struct Session {
    pub(crate) client: Client,
    pub(crate) roots: RootStore,
    pub(crate) sent: Vec<u8>,
    pub(crate) received: Vec<u8>,
}

#[derive(Clone, Copy)]
pub(crate) struct Opts {
    pub(crate) key: KeyType,
    pub(crate) tickets: bool,
    pub(crate) max_fragment: Option<usize>,
    pub(crate) response_len: usize,
    /// The server's bytes, in place of `response_len` bytes counting up.
    pub(crate) response: Option<&'static [u8]>,
    /// The client's bytes, in place of [`REQUEST`].
    pub(crate) request: Option<&'static [u8]>,
    /// Server sends CertificateRequest (client certificate optional).
    pub(crate) client_auth: bool,
    /// The name our client connects to (its SNI unless an IP).
    pub(crate) name: &'static str,
    /// The one suite our client offers (all of them if `None`).
    pub(crate) suite: Option<CipherSuite>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            key: KeyType::EcdsaP256,
            tickets: false,
            max_fragment: None,
            response_len: 20_000,
            response: None,
            request: None,
            client_auth: false,
            name: "localhost",
            suite: None,
        }
    }
}

fn pump_to_server(client: &mut Client, server: &mut rustls::ServerConnection) {
    let out = client.take_outgoing();
    let mut rd = &out[..];
    while !rd.is_empty() {
        server.read_tls(&mut rd).unwrap();
        server.process_new_packets().unwrap();
    }
}

fn pump_to_client(client: &mut Client, server: &mut rustls::ServerConnection) {
    let mut out = Vec::new();
    while server.wants_write() {
        server.write_tls(&mut out).unwrap();
    }
    if !out.is_empty() {
        client.feed(&out).unwrap();
    }
}

/// A full in-memory session: our client against a rustls server configured like the
/// fixture server (TLS 1.2 and 1.3 offered; our client negotiates 1.2).
pub(crate) fn run_session(opts: Opts) -> Session {
    let certs = FixtureCerts::generate(opts.key, 30).unwrap();
    let versions: &[&'static rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12, &rustls::version::TLS13];
    let mut cfg = crate::fixture::test_server_config(
        &certs,
        rustls::crypto::ring::default_provider(),
        versions,
        opts.client_auth,
    );
    cfg.max_fragment_size = opts.max_fragment;
    if opts.tickets {
        cfg.ticketer = rustls::crypto::ring::Ticketer::new().unwrap();
    }
    let roots = RootStore::from_der_certs([certs.ca_der.as_ref()]).unwrap();
    let mut ccfg = ClientConfig::new(roots.clone());
    ccfg.offer_session_ticket = opts.tickets;
    if let Some(suite) = opts.suite {
        ccfg.cipher_suites = vec![suite];
    }
    let mut client = Client::new(ccfg, opts.name, UnixTime::now()).unwrap();
    let mut server = rustls::ServerConnection::new(Arc::new(cfg)).unwrap();
    for _ in 0..10 {
        pump_to_server(&mut client, &mut server);
        pump_to_client(&mut client, &mut server);
        if client.is_connected() {
            break;
        }
    }
    assert!(client.is_connected());
    let request = opts.request.unwrap_or(REQUEST);
    client.write_plaintext(request).unwrap();
    pump_to_server(&mut client, &mut server);
    let mut req = vec![0u8; request.len()];
    server.reader().read_exact(&mut req).unwrap();
    assert_eq!(req, request);
    let body: Vec<u8> = match opts.response {
        Some(bytes) => bytes.to_vec(),
        None => (0..opts.response_len).map(|i| (i % 251) as u8).collect(),
    };
    server.writer().write_all(&body).unwrap();
    server.send_close_notify();
    pump_to_client(&mut client, &mut server);
    assert_eq!(client.take_plaintext(), body);
    assert!(client.received_close_notify());
    client.send_close_notify().unwrap();
    pump_to_server(&mut client, &mut server);
    let sent = client.transcript().raw_bytes(Direction::Sent);
    let received = client.transcript().raw_bytes(Direction::Received);
    Session { client, roots, sent, received }
}

type Rec = (u8, u16, Vec<u8>);

fn records(stream: &[u8]) -> Vec<Rec> {
    let (recs, used) = split_records(stream).unwrap();
    assert_eq!(used, stream.len());
    recs.into_iter().map(|(h, p)| (h.content_type, h.version, p.to_vec())).collect()
}

fn join(recs: &[Rec]) -> Vec<u8> {
    let mut out = Vec::new();
    for (t, v, p) in recs {
        out.push(*t);
        out.extend_from_slice(&v.to_be_bytes());
        out.extend_from_slice(&(p.len() as u16).to_be_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// Index of the ChangeCipherSpec record.
fn ccs_index(recs: &[Rec]) -> usize {
    recs.iter().position(|r| r.0 == 20).unwrap()
}

/// The plaintext handshake messages of a stream (HelloRequest included).
fn messages_of(stream: &[u8]) -> Vec<Vec<u8>> {
    let recs = records(stream);
    let mut j = HandshakeJoiner::default();
    for r in &recs[..ccs_index(&recs)] {
        j.push(&r.2);
    }
    let mut out = Vec::new();
    while let Some((_, m)) = j.pop().unwrap() {
        out.push(m);
    }
    assert!(j.is_empty());
    out
}

/// Replace the handshake part of `stream` with `msgs`, in records of `chunk` bytes.
fn with_messages(stream: &[u8], msgs: &[Vec<u8>], chunk: usize) -> Vec<u8> {
    let recs = records(stream);
    let all: Vec<u8> = msgs.concat();
    let mut out: Vec<Rec> = all.chunks(chunk).map(|c| (22, TLS12, c.to_vec())).collect();
    out.extend_from_slice(&recs[ccs_index(&recs)..]);
    join(&out)
}

/// Opens a record with ring directly, its nonce made here as the suite says: salt ‖ explicit
/// nonce for AES-GCM (RFC 5288), IV ⊕ the padded sequence number for ChaCha20 (RFC 7905).
fn suite_open(suite: CipherSuite, key: &[u8], iv: &[u8], rec: &EncryptedRecord) -> Vec<u8> {
    use crate::tls::Aead12;
    use ring::aead;
    let alg = match suite.aead() {
        Aead12::Aes128Gcm => &aead::AES_128_GCM,
        Aead12::Aes256Gcm => &aead::AES_256_GCM,
        Aead12::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
    };
    let k = aead::LessSafeKey::new(aead::UnboundKey::new(alg, key).unwrap());
    let mut nonce = [0u8; 12];
    if suite.aead() == Aead12::ChaCha20Poly1305 {
        nonce.copy_from_slice(iv);
        for (n, s) in nonce[4..].iter_mut().zip(rec.seq.to_be_bytes()) {
            *n ^= s;
        }
    } else {
        nonce[..4].copy_from_slice(iv);
        nonce[4..].copy_from_slice(&rec.explicit_nonce);
    }
    let mut buf = rec.ciphertext.clone();
    buf.extend_from_slice(&rec.tag);
    let pt = k
        .open_in_place(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::from(rec.additional_data()), &mut buf)
        .expect("record must authenticate with our additional data");
    pt.to_vec()
}

/// Everything the verifier parses equals what our client knows about the same session.
fn check_matches_client(s: &Session, t: &SessionTranscript) {
    let c = &s.client;
    assert_eq!(t.client_random(), c.client_random());
    assert_eq!(t.server_random(), c.server_random());
    assert_eq!(Some(t.cipher_suite()), c.cipher_suite());
    assert!(c.extended_master_secret(), "rustls always negotiates EMS");
    assert_eq!(t.extended_master_secret(), c.extended_master_secret());
    assert_eq!(t.server_cert_chain(), c.server_cert_chain());
    assert_eq!(Some(t.server_key_exchange()), c.server_key_exchange());
    let h_c = t.client_finished_hash();
    let vd_c = c.client_verify_data().unwrap();
    let h_s = t.server_finished_hash(vd_c);
    assert_eq!(c.handshake_hashes(), [Some(h_c.as_bytes()), Some(h_c.as_bytes()), Some(h_s.as_bytes())]);
    let suite = t.cipher_suite();
    assert_eq!(h_c.as_bytes().len(), suite.prf_hash().output_len());
    // Handshake messages: the client's list up to its Finished.
    let upto = c.handshake_messages().iter().position(|m| m.typ == hs::FINISHED).unwrap();
    assert_eq!(t.handshake_messages(), &c.handshake_messages()[..upto]);

    let ms = c.master_secret().unwrap();
    let kb = c.key_block().unwrap();
    for d in [Direction::Sent, Direction::Received] {
        let ours = t.encrypted_records(d);
        let theirs: Vec<_> = c.transcript().direction(d).filter(|r| r.is_encrypted()).collect();
        assert_eq!(ours.len(), theirs.len());
        assert!(ours.len() >= 3, "Finished, data, close_notify");
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(Some(a.seq), b.seq);
            assert_eq!(a.content_type, b.content_type);
            assert_eq!(a.version, b.version);
            let explicit = (suite.aead().explicit_nonce_len() > 0).then_some(a.explicit_nonce);
            assert_eq!(explicit, b.explicit_nonce);
            assert_eq!(a.ciphertext, b.ciphertext);
            assert_eq!(Some(a.tag), b.tag);
        }
        let plain: Vec<_> = c.transcript().direction(d).filter(|r| !r.is_encrypted()).collect();
        assert_eq!(t.plaintext_records(d).len(), plain.len());
        for (a, b) in t.plaintext_records(d).iter().zip(&plain) {
            assert_eq!((a.content_type, a.version), (b.content_type, b.version));
            assert_eq!(a.payload, b.ciphertext);
        }
        assert_eq!(t.plaintext_records(d).last().unwrap().content_type, 20);
        // Known answer against ring: every record opens under the real keys with our
        // additional data, and each Finished is 14 00 00 0c ‖ PRF(MS, label, our hash).
        let (key, iv, label, hash) = match d {
            Direction::Sent => (&kb.client_write_key, &kb.client_write_iv, &b"client finished"[..], h_c),
            Direction::Received => (&kb.server_write_key, &kb.server_write_iv, &b"server finished"[..], h_s),
        };
        let fin = suite_open(suite, key, iv, &ours[0]);
        let mut expected = vec![hs::FINISHED, 0, 0, 12];
        expected.extend_from_slice(&keys::verify_data_with(suite.prf_hash(), ms, label, hash.as_bytes()));
        assert_eq!(fin, expected);
        let mut app = Vec::new();
        for r in &ours[1..] {
            let pt = suite_open(suite, key, iv, r);
            if r.content_type == 23 {
                app.extend_from_slice(&pt);
            } else {
                assert_eq!(pt, [1, 0], "close_notify");
            }
        }
        assert_eq!(app, c.transcript().app_plaintext(d));
    }
}

#[test]
fn real_sessions_match_the_client() {
    let cases = [
        Opts::default(),
        Opts { key: KeyType::Rsa2048, ..Opts::default() },
        Opts { key: KeyType::Rsa2048, tickets: true, ..Opts::default() },
        // CertificateRequest, answered with an empty client Certificate (both hashed).
        Opts { client_auth: true, ..Opts::default() },
        // Tiny server records: handshake messages fragmented across many records.
        Opts { tickets: true, max_fragment: Some(64), response_len: 300, ..Opts::default() },
        // The SHA-384 and ChaCha20-Poly1305 suites, with both key types.
        Opts { suite: Some(CipherSuite::EcdheEcdsaAes256GcmSha384), ..Opts::default() },
        Opts { key: KeyType::Rsa2048, suite: Some(CipherSuite::EcdheRsaAes256GcmSha384), ..Opts::default() },
        Opts { suite: Some(CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256), tickets: true, ..Opts::default() },
        Opts { key: KeyType::Rsa2048, suite: Some(CipherSuite::EcdheRsaChaCha20Poly1305Sha256), ..Opts::default() },
    ];
    for opts in cases {
        let s = run_session(opts);
        let t = parse(&s.sent, &s.received).unwrap();
        check_matches_client(&s, &t);
        let ecdsa = opts.key == KeyType::EcdsaP256;
        assert_eq!(t.cipher_suite().is_ecdsa(), ecdsa);
        if let Some(suite) = opts.suite {
            assert_eq!(t.cipher_suite(), suite);
        }
        assert_eq!(t.new_session_ticket.is_some(), opts.tickets);
        let types: Vec<u8> = t.handshake_messages().iter().map(|m| m.typ).collect();
        let mut want = vec![hs::CLIENT_HELLO, hs::SERVER_HELLO, hs::CERTIFICATE, hs::SERVER_KEY_EXCHANGE];
        if opts.client_auth {
            want.extend([hs::CERTIFICATE_REQUEST, hs::SERVER_HELLO_DONE, hs::CERTIFICATE]);
        } else {
            want.push(hs::SERVER_HELLO_DONE);
        }
        want.push(hs::CLIENT_KEY_EXCHANGE);
        assert_eq!(types, want);
        if opts.max_fragment.is_some() {
            assert!(t.plaintext_records(Direction::Received).len() > 10);
        }
        t.validate_server(&s.roots, "localhost", UnixTime::now()).unwrap();
        assert_eq!(t.sni(), Some("localhost"));
    }
}

#[test]
fn refragmented_coalesced_and_hello_request_parse_the_same() {
    let s = run_session(Opts { tickets: true, ..Opts::default() });
    let base = parse(&s.sent, &s.received).unwrap();
    // Client messages one byte per record; server messages coalesced into one record,
    // with a HelloRequest (never hashed) in front.
    let sent = with_messages(&s.sent, &messages_of(&s.sent), 1);
    let mut server_msgs = vec![vec![hs::HELLO_REQUEST, 0, 0, 0]];
    server_msgs.extend(messages_of(&s.received));
    let received = with_messages(&s.received, &server_msgs, MAX_PLAINTEXT);
    let t = parse(&sent, &received).unwrap();
    assert!(t.plaintext_records(Direction::Sent).len() > 100);
    assert_eq!(t.plaintext_records(Direction::Received).len(), 2);
    assert_eq!(t.client_finished_hash(), base.client_finished_hash());
    let vd = s.client.client_verify_data().unwrap();
    assert_eq!(t.server_finished_hash(vd), base.server_finished_hash(vd));
    assert_eq!(t.encrypted_records(Direction::Received), base.encrypted_records(Direction::Received));
    // A different client verify_data gives a different server hash.
    assert_ne!(t.server_finished_hash(&[0; 12]), base.server_finished_hash(vd));
}

/// Records are bound to their position: a record moved or dropped on the way fails its tag
/// in the verifier's check, and a replayed one is refused when parsed.
#[test]
fn replayed_dropped_or_reordered_records_are_refused() {
    use crate::protocol::prove::tls12::check::{recover, CheckError};
    use crate::protocol::prove::tls12::OpenedDirection;
    let s = run_session(Opts { max_fragment: Some(4096), ..Opts::default() });
    let kb = s.client.key_block().unwrap();
    let cases = [
        (
            Direction::Sent,
            "sent",
            &s.sent,
            OpenedDirection::Key { key: kb.client_write_key.clone(), iv: kb.client_write_iv.clone() },
        ),
        (
            Direction::Received,
            "received",
            &s.received,
            OpenedDirection::Key { key: kb.server_write_key.clone(), iv: kb.server_write_iv.clone() },
        ),
    ];
    for (d, name, stream, opened) in cases {
        let recs = records(stream);
        let first = ccs_index(&recs) + 2; // the first record after the Finished
        let check = |recs: &[Rec]| {
            let (sent, received) =
                if d == Direction::Sent { (join(recs), s.received.clone()) } else { (s.sent.clone(), join(recs)) };
            let t = parse(&sent, &received)?;
            Ok::<_, TranscriptError>(recover(name, t.encrypted_records(d), &opened, &[]).map(|_| ()))
        };
        assert_eq!(check(&recs), Ok(Ok(())), "{name}: the stream as relayed");
        let mut swapped = recs.clone();
        swapped.swap(first, first + 1);
        assert_eq!(check(&swapped), Ok(Err(CheckError::BadTag { direction: name, index: 1 })), "{name}: reordered");
        let mut dropped = recs.clone();
        dropped.remove(first);
        assert_eq!(check(&dropped), Ok(Err(CheckError::BadTag { direction: name, index: 1 })), "{name}: dropped");
        let mut replayed = recs.clone();
        replayed.insert(first + 1, recs[first].clone());
        assert_eq!(check(&replayed), Err(TranscriptError::RepeatedNonce { direction: d, seq: 2 }), "{name}: replayed");
    }
}

/// Seals `plaintext` as the direction's next record (sequence number = position).
fn seal_next(
    key: &[u8; 16],
    iv: &[u8; 4],
    records: &[EncryptedRecord],
    content_type: u8,
    plaintext: &[u8],
) -> EncryptedRecord {
    use ring::aead;
    let seq = records.len() as u64;
    let explicit_nonce = (seq + 1000).to_be_bytes();
    let mut r = EncryptedRecord {
        seq,
        content_type,
        version: 0x0303,
        explicit_nonce,
        ciphertext: plaintext.to_vec(),
        tag: [0; 16],
    };
    let k = aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, key).unwrap());
    let mut nonce = [0u8; 12];
    nonce[..4].copy_from_slice(iv);
    nonce[4..].copy_from_slice(&explicit_nonce);
    let tag = k
        .seal_in_place_separate_tag(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from(r.additional_data()),
            &mut r.ciphertext,
        )
        .unwrap();
    r.tag.copy_from_slice(tag.as_ref());
    r
}

/// The verifier learns every alert and how each direction ended; a record after
/// close_notify or a fatal alert, or an alert of no known level, is refused.
#[test]
fn alerts_end_a_direction_and_nothing_may_follow() {
    use crate::protocol::prove::tls12::check::{recover, CheckError};
    use crate::protocol::prove::tls12::OpenedDirection;
    let s = run_session(Opts::default());
    let kb = s.client.key_block().unwrap();
    let opened = OpenedDirection::Key { key: kb.server_write_key.clone(), iv: kb.server_write_iv.clone() };
    let key: [u8; 16] = kb.server_write_key.clone().try_into().unwrap();
    let iv: [u8; 4] = kb.server_write_iv.clone().try_into().unwrap();
    let t = parse(&s.sent, &s.received).unwrap();
    let honest = t.encrypted_records(Direction::Received).to_vec();
    let d = recover("received", &honest, &opened, &[]).unwrap();
    assert_eq!(d.alerts, vec![[1, 0]], "the server closed with close_notify");
    // Application data after the close_notify.
    let mut after = honest.clone();
    after.push(seal_next(&key, &iv, &after, 23, b"HTTP/1.1 200 OK\r\n\r\nforged"));
    assert_eq!(
        recover("received", &after, &opened, &[]).err(),
        Some(CheckError::DataAfterClose { direction: "received", index: honest.len() })
    );
    // A fatal alert ends it too; a warning alert does not.
    let mut cut = honest[..honest.len() - 1].to_vec();
    cut.push(seal_next(&key, &iv, &cut, 21, &[1, 100])); // warning no_renegotiation
    let d = recover("received", &cut, &opened, &[]).unwrap();
    assert_eq!(d.alerts, vec![[1, 100]]);
    cut.push(seal_next(&key, &iv, &cut, 21, &[2, 40])); // fatal handshake_failure
    cut.push(seal_next(&key, &iv, &cut, 23, b"more"));
    assert_eq!(
        recover("received", &cut, &opened, &[]).err(),
        Some(CheckError::DataAfterClose { direction: "received", index: cut.len() - 1 })
    );
    let mut odd = honest[..honest.len() - 1].to_vec();
    odd.push(seal_next(&key, &iv, &odd, 21, &[7, 0]));
    assert_eq!(
        recover("received", &odd, &opened, &[]).err(),
        Some(CheckError::BadAlertLevel { direction: "received", index: odd.len() - 1, level: 7 })
    );
}

#[test]
fn the_sni_must_be_the_certified_name() {
    let now = UnixTime::now();
    // The certificate is valid for all three names; only the one the client named counts.
    let s = run_session(Opts { name: "fixture.test", ..Opts::default() });
    let t = parse(&s.sent, &s.received).unwrap();
    t.validate_server(&s.roots, "FIXTURE.test", now).unwrap();
    for other in ["localhost", "127.0.0.1"] {
        assert_eq!(
            t.validate_server(&s.roots, other, now),
            Err(TranscriptError::SniMismatch { sni: Some("fixture.test".into()), name: other.into() })
        );
    }
    // An IP-literal name sends no SNI (RFC 6066 §3), and certifies only that IP.
    let s = run_session(Opts { name: "127.0.0.1", ..Opts::default() });
    let t = parse(&s.sent, &s.received).unwrap();
    assert_eq!(t.sni(), None);
    t.validate_server(&s.roots, "127.0.0.1", now).unwrap();
    assert_eq!(
        t.validate_server(&s.roots, "localhost", now),
        Err(TranscriptError::SniMismatch { sni: None, name: "localhost".into() })
    );
}

/// A hello message (its 4-byte header included) rebuilt with its extension block edited;
/// `exts_at` is where the block's 2-byte length starts.
fn edit_extensions(msg: &[u8], exts_at: usize, edit: impl FnOnce(&mut Vec<(u16, Vec<u8>)>)) -> Vec<u8> {
    let mut exts = Vec::new();
    let mut at = exts_at + 2;
    while at < msg.len() {
        let len = u16::from_be_bytes([msg[at + 2], msg[at + 3]]) as usize;
        exts.push((u16::from_be_bytes([msg[at], msg[at + 1]]), msg[at + 4..at + 4 + len].to_vec()));
        at += 4 + len;
    }
    edit(&mut exts);
    let mut block = Vec::new();
    for (t, body) in &exts {
        block.extend_from_slice(&t.to_be_bytes());
        put_vec16(&mut block, body);
    }
    let mut out = msg[..exts_at].to_vec();
    put_vec16(&mut out, &block);
    let len = (out.len() - 4) as u32;
    out[1..4].copy_from_slice(&len.to_be_bytes()[1..]);
    out
}

/// Where a ClientHello's cipher suites start: after version, random and session id.
fn client_hello_suites_at(ch: &[u8]) -> usize {
    4 + 2 + 32 + 1 + ch[4 + 2 + 32] as usize
}

/// Where a ClientHello's extension block starts: after the suites and compressions.
fn client_hello_exts_at(ch: &[u8]) -> usize {
    let mut at = client_hello_suites_at(ch);
    at += 2 + u16::from_be_bytes([ch[at], ch[at + 1]]) as usize;
    at + 1 + ch[at] as usize
}

/// Where a ServerHello's extension block starts: after the suite and compression.
fn server_hello_exts_at(sh: &[u8]) -> usize {
    4 + 2 + 32 + 1 + sh[4 + 2 + 32] as usize + 2 + 1
}

/// An ALPN extension body listing `protocols`.
fn alpn_body(protocols: &[&[u8]]) -> Vec<u8> {
    let mut list = Vec::new();
    for p in protocols {
        put_vec8(&mut list, p);
    }
    let mut body = Vec::new();
    put_vec16(&mut body, &list);
    body
}

/// The session with its first sent and first received handshake messages (the hellos)
/// replaced by `edit_ch`'s and `edit_sh`'s results.
fn with_hellos(
    s: &Session,
    edit_ch: impl FnOnce(&[u8]) -> Vec<u8>,
    edit_sh: impl FnOnce(&[u8]) -> Vec<u8>,
) -> (Vec<u8>, Vec<u8>) {
    let (mut sent, mut received) = (messages_of(&s.sent), messages_of(&s.received));
    assert_eq!((sent[0][0], received[0][0]), (hs::CLIENT_HELLO, hs::SERVER_HELLO));
    sent[0] = edit_ch(&sent[0]);
    received[0] = edit_sh(&received[0]);
    (with_messages(&s.sent, &sent, MAX_PLAINTEXT), with_messages(&s.received, &received, MAX_PLAINTEXT))
}

/// A ClientHello that offers HTTP/2 by ALPN is refused when the session is parsed.
#[test]
fn a_client_hello_offering_h2_is_refused() {
    let s = run_session(Opts::default());
    let (sent, received) = with_hellos(
        &s,
        |ch| edit_extensions(ch, client_hello_exts_at(ch), |e| e.push((ext::ALPN, alpn_body(&[b"h2", b"http/1.1"])))),
        <[u8]>::to_vec,
    );
    assert_eq!(parse(&sent, &received).err(), Some(TranscriptError::AlpnNotHttp11("h2".into())));
}

/// The server's ALPN answer to a ClientHello offering http/1.1 is checked too: the server
/// may not pick another protocol.
#[test]
fn a_server_hello_choosing_another_protocol_is_refused() {
    let s = run_session(Opts::default());
    let answering = |protocol: &'static [u8]| {
        with_hellos(
            &s,
            |ch| edit_extensions(ch, client_hello_exts_at(ch), |e| e.push((ext::ALPN, alpn_body(&[b"http/1.1"])))),
            move |sh| edit_extensions(sh, server_hello_exts_at(sh), |e| e.push((ext::ALPN, alpn_body(&[protocol])))),
        )
    };
    let (sent, received) = answering(b"http/1.1");
    parse(&sent, &received).expect("http/1.1 offered and chosen");
    let (sent, received) = answering(b"h2");
    assert_eq!(parse(&sent, &received).err(), Some(TranscriptError::AlpnNotHttp11("h2".into())));
}

/// The ClientHello's lists are read strictly: cipher suites of an odd byte length are
/// refused, and the signature schemes it offers bound the ServerKeyExchange's.
#[test]
fn client_hello_suites_and_signature_schemes_are_checked() {
    let s = run_session(Opts::default());
    let odd_suites = |ch: &[u8]| {
        let at = client_hello_suites_at(ch);
        let len = u16::from_be_bytes([ch[at], ch[at + 1]]) as usize;
        let mut out = ch[..at].to_vec();
        put_vec16(&mut out, &ch[at + 2..at + 2 + len + 1]);
        out.extend_from_slice(&ch[at + 2 + len..]);
        let body_len = (out.len() - 4) as u32;
        out[1..4].copy_from_slice(&body_len.to_be_bytes()[1..]);
        out
    };
    let (sent, received) = with_hellos(&s, odd_suites, <[u8]>::to_vec);
    let err = parse(&sent, &received).unwrap_err().to_string();
    assert!(err.contains("cipher_suites"), "{err}");
    // The server signed with ECDSA P-256 SHA-256 (0x0403); a ClientHello offering only
    // P-384's scheme did not allow it.
    let only_p384 = |ch: &[u8]| {
        edit_extensions(ch, client_hello_exts_at(ch), |e| {
            for (_, body) in e.iter_mut().filter(|(t, _)| *t == ext::SIGNATURE_ALGORITHMS) {
                *body = Vec::new();
                put_vec16(body, &0x0503u16.to_be_bytes());
            }
        })
    };
    let (sent, received) = with_hellos(&s, only_p384, <[u8]>::to_vec);
    assert_eq!(parse(&sent, &received).err(), Some(TranscriptError::UnsupportedSignatureScheme(0x0403)));
}

/// A ServerHello extension the ClientHello did not offer is refused, even when the
/// ClientHello's TLS_EMPTY_RENEGOTIATION_INFO_SCSV allows renegotiation_info unasked.
#[test]
fn a_server_hello_extension_not_offered_is_refused() {
    let s = run_session(Opts::default());
    let with_scsv = |ch: &[u8]| {
        // The SCSV in place of the renegotiation_info extension (RFC 5746 §3.4).
        let ch = edit_extensions(ch, client_hello_exts_at(ch), |e| e.retain(|(t, _)| *t != ext::RENEGOTIATION_INFO));
        let at = client_hello_suites_at(&ch);
        let mut out = ch[..at].to_vec();
        let suites_len = u16::from_be_bytes([ch[at], ch[at + 1]]);
        out.extend_from_slice(&(suites_len + 2).to_be_bytes());
        out.extend_from_slice(&ch[at + 2..at + 2 + suites_len as usize]);
        out.extend_from_slice(&EMPTY_RENEGOTIATION_INFO_SCSV.to_be_bytes());
        out.extend_from_slice(&ch[at + 2 + suites_len as usize..]);
        let len = (out.len() - 4) as u32;
        out[1..4].copy_from_slice(&len.to_be_bytes()[1..]);
        out
    };
    let (sent, received) = with_hellos(&s, with_scsv, <[u8]>::to_vec);
    let (answer, mut answered) = (messages_of(&received).remove(0), false);
    edit_extensions(&answer, server_hello_exts_at(&answer), |e| {
        answered = e.iter().any(|(t, _)| *t == ext::RENEGOTIATION_INFO)
    });
    assert!(answered, "the server answers with renegotiation_info");
    parse(&sent, &received).expect("renegotiation_info allowed by the SCSV");
    let (sent, received) =
        with_hellos(&s, with_scsv, |sh| edit_extensions(sh, server_hello_exts_at(sh), |e| e.push((0x1234, vec![]))));
    assert_eq!(parse(&sent, &received).err(), Some(TranscriptError::ExtensionNotOffered(0x1234)));
}

#[test]
fn sni_and_alpn_extensions_are_parsed_strictly() {
    let sni = |name: &[u8], typ: u8, extra: &[u8]| {
        let mut entry = vec![typ];
        put_vec16(&mut entry, name);
        entry.extend_from_slice(extra);
        let mut body = Vec::new();
        put_vec16(&mut body, &entry);
        body
    };
    assert_eq!(parse_sni(&sni(b"bank.example", 0, &[])), Ok("bank.example".into()));
    for bad in [
        sni(b"", 0, &[]),
        sni(b"bank.example", 1, &[]),
        sni(b"a\x1b[2J", 0, &[]),
        sni(b"a", 0, &[0, 0, 1, b'b']),
        vec![0, 5, 0],
        vec![],
    ] {
        assert_eq!(parse_sni(&bad), Err(TranscriptError::BadServerNameExtension), "{bad:?}");
    }
    let alpn = alpn_body;
    assert_eq!(check_alpn(&alpn(&[b"http/1.1"])), Ok(()));
    assert_eq!(check_alpn(&alpn(&[b"http/1.1", b"h2"])), Err(TranscriptError::AlpnNotHttp11("h2".into())));
    assert_eq!(check_alpn(&alpn(&[b"h2"])), Err(TranscriptError::AlpnNotHttp11("h2".into())));
    assert_eq!(check_alpn(&alpn(&[])), Err(TranscriptError::BadAlpnExtension));
    assert_eq!(check_alpn(&[0, 9, 8]), Err(TranscriptError::BadAlpnExtension));
}

#[test]
fn validate_server_rejects_wrong_name_untrusted_ca_expiry_and_tampering() {
    for key in [KeyType::EcdsaP256, KeyType::Rsa2048] {
        let s = run_session(Opts { key, ..Opts::default() });
        let now = UnixTime::now();
        let t = parse(&s.sent, &s.received).unwrap();
        t.validate_server(&s.roots, "localhost", now).unwrap();
        assert!(matches!(
            t.validate_server(&s.roots, "example.com", now),
            Err(TranscriptError::InvalidCertificate(crate::tls::Error::Certificate(
                webpki::Error::CertNotValidForName(_)
            )))
        ));
        assert_eq!(t.validate_server(&s.roots, "not a name!", now), Err(TranscriptError::InvalidServerName));
        let other = FixtureCerts::generate(key, 30).unwrap();
        let other_roots = RootStore::from_der_certs([other.ca_der.as_ref()]).unwrap();
        // A CA with the same name but another key: the chain's signature fails.
        assert!(matches!(
            t.validate_server(&other_roots, "localhost", now),
            Err(TranscriptError::InvalidCertificate(crate::tls::Error::Certificate(
                webpki::Error::InvalidSignatureForPublicKey
            )))
        ));
        assert!(matches!(
            t.validate_server(&RootStore::mozilla(), "localhost", now),
            Err(TranscriptError::InvalidCertificate(crate::tls::Error::Certificate(webpki::Error::UnknownIssuer)))
        ));
        let later = UnixTime::since_unix_epoch(std::time::Duration::from_secs(now.as_secs() + 400 * 86400));
        assert!(matches!(
            t.validate_server(&s.roots, "localhost", later),
            Err(TranscriptError::InvalidCertificate(crate::tls::Error::Certificate(webpki::Error::CertExpired { .. })))
        ));

        // Tampered signature byte, params byte, or client_random byte: parses, but the
        // signature check fails.
        let ske = t.server_key_exchange().clone();
        let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle).unwrap();
        let sig_at = find(&s.received, &ske.signature);
        let params_at = find(&s.received, &ske.params);
        for pos in [sig_at + ske.signature.len() - 1, sig_at + 10, params_at + 5] {
            let mut received = s.received.clone();
            received[pos] ^= 0x01;
            let t2 = parse(&s.sent, &received).unwrap();
            assert_eq!(
                t2.validate_server(&s.roots, "localhost", now),
                Err(TranscriptError::BadServerKeyExchangeSignature),
                "{key:?} byte {pos}"
            );
        }
        let mut sent = s.sent.clone();
        let cr_at = find(&sent, s.client.client_random());
        sent[cr_at + 31] ^= 0x80;
        let t3 = parse(&sent, &s.received).unwrap();
        assert_eq!(t3.validate_server(&s.roots, "localhost", now), Err(TranscriptError::BadServerKeyExchangeSignature));
    }
}

/// Offsets at which a prefix of `stream` is a complete, acceptable stream: record
/// boundaries at or after the end of the first encrypted record.
fn acceptable_prefixes(stream: &[u8]) -> Vec<usize> {
    let recs = records(stream);
    let fin = ccs_index(&recs) + 1;
    let mut pos = 0;
    let mut out = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        pos += RECORD_HEADER_LEN + r.2.len();
        if i >= fin {
            out.push(pos);
        }
    }
    out
}

#[test]
fn truncated_streams_are_rejected() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    for d in [Direction::Sent, Direction::Received] {
        let full = match d {
            Direction::Sent => &s.sent,
            Direction::Received => &s.received,
        };
        let ok_at = acceptable_prefixes(full);
        let boundaries: Vec<usize> = {
            let mut pos = 0;
            records(full)
                .iter()
                .map(|r| {
                    pos += RECORD_HEADER_LEN + r.2.len();
                    pos
                })
                .collect()
        };
        for n in 0..full.len().min(600) {
            let prefix = &full[..n];
            let r = match d {
                Direction::Sent => parse(prefix, &s.received),
                Direction::Received => parse(&s.sent, prefix),
            };
            if ok_at.contains(&n) {
                assert!(r.is_ok(), "{d:?} prefix {n}: {r:?}");
            } else if n == 0 || boundaries.contains(&n) {
                assert!(matches!(r, Err(TranscriptError::MissingMessage(_))), "{d:?} {n}: {r:?}");
            } else {
                assert_eq!(r.err(), Some(TranscriptError::Truncated { direction: d }), "{n}");
            }
        }
    }
}

#[test]
fn garbage_and_mutations_never_panic() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    let mut rng = StdRng::seed_from_u64(7);
    for i in 0..3000 {
        let len = rng.random_range(0..1500);
        let mut g = vec![0u8; len];
        rng.fill(&mut g[..]);
        if i % 2 == 0 && len >= 5 {
            // A plausible header so the parser goes deeper.
            g[0] = rng.random_range(20..24);
            g[1] = 3;
            g[2] = 3;
        }
        assert!(parse(&g, &s.received).is_err());
        assert!(parse(&s.sent, &g).is_err());
        assert!(parse(&g, &g).is_err());
    }
    // Bit flips and byte edits of a real session: any result, but no panic.
    for _ in 0..3000 {
        let mut sent = s.sent.clone();
        let mut received = s.received.clone();
        for _ in 0..rng.random_range(1..4) {
            let target = if rng.random_bool(0.5) { &mut sent } else { &mut received };
            let pos = rng.random_range(0..target.len());
            target[pos] = if rng.random_bool(0.5) { rng.random() } else { target[pos] ^ 1 };
        }
        let _ = parse(&sent, &received);
    }
}

#[test]
fn oversized_records_are_rejected() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    // Header claiming more than 2^14 + 2048 bytes.
    let mut bad = vec![22, 3, 3, 0x48, 0x01];
    bad.extend_from_slice(&s.sent);
    assert_eq!(
        parse(&bad, &s.received).err(),
        Some(TranscriptError::RecordOverflow { direction: Direction::Sent, length: 0x4801 })
    );
    // A plaintext handshake record of 2^14 + 1 bytes (within the ciphertext bound).
    let mut recs = records(&s.sent);
    recs.insert(0, (22, TLS12, vec![0; MAX_PLAINTEXT + 1]));
    assert_eq!(
        parse(&join(&recs), &s.received).err(),
        Some(TranscriptError::RecordOverflow { direction: Direction::Sent, length: MAX_PLAINTEXT + 1 })
    );
    // An encrypted record longer than 2^14 + 24.
    let mut recs = records(&s.received);
    recs.push((23, TLS12, vec![0; MAX_ENCRYPTED_PAYLOAD + 1]));
    assert_eq!(
        parse(&s.sent, &join(&recs)).err(),
        Some(TranscriptError::RecordOverflow { direction: Direction::Received, length: MAX_ENCRYPTED_PAYLOAD + 1 })
    );
    // A handshake message header claiming more than the codec's bound.
    let mut recs = records(&s.received);
    recs.insert(0, (22, TLS12, vec![hs::CERTIFICATE, 0x10, 0, 0]));
    assert_eq!(
        parse(&s.sent, &join(&recs)).err(),
        Some(TranscriptError::HandshakeMessageTooLarge { direction: Direction::Received, length: 0x100000 })
    );
    // Too many records (tiny valid warning alerts before the handshake).
    let mut many = Vec::new();
    for _ in 0..=MAX_RECORDS_PER_DIRECTION {
        many.extend_from_slice(&[21, 3, 3, 0, 2, 1, 112]);
    }
    many.extend_from_slice(&s.sent);
    assert_eq!(parse(&many, &s.received).err(), Some(TranscriptError::TooManyRecords { direction: Direction::Sent }));
}

/// A ServerHello without the extended_master_secret extension (rustls always sends it) is
/// read as a session with the classic master secret, the one the proof then derives.
#[test]
fn a_server_hello_without_ems_is_read_as_such() {
    let s = run_session(Opts::default());
    let without_ems = |sh: &[u8]| {
        let out =
            edit_extensions(sh, server_hello_exts_at(sh), |e| e.retain(|(t, _)| *t != ext::EXTENDED_MASTER_SECRET));
        assert_eq!(out.len(), sh.len() - 4, "the EMS extension (4 bytes) removed");
        out
    };
    let (sent, received) = with_hellos(&s, <[u8]>::to_vec, without_ems);
    assert!(parse(&s.sent, &s.received).expect("as relayed").extended_master_secret());
    assert!(!parse(&sent, &received).expect("without EMS").extended_master_secret());
}

/// The limits at exactly their bound: as many records as allowed, a plaintext record of
/// 2^14 bytes, an encrypted record with no plaintext (nonce and tag alone), each passing
/// the check that refuses one more (the tests above).
#[test]
fn records_at_exactly_the_limits_pass_their_checks() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    let own = records(&s.sent).len();
    let mut many = Vec::new();
    for _ in 0..MAX_RECORDS_PER_DIRECTION - own {
        many.extend_from_slice(&[21, 3, 3, 0, 2, 1, 112]);
    }
    many.extend_from_slice(&s.sent);
    parse(&many, &s.received).expect("as many records as allowed");

    let mut recs = records(&s.sent);
    recs.insert(0, (22, TLS12, vec![0; MAX_PLAINTEXT]));
    let err = parse(&join(&recs), &s.received).err();
    assert!(!matches!(err, Some(TranscriptError::RecordOverflow { .. })), "{err:?}");

    let mut recs = records(&s.sent);
    let fin = ccs_index(&recs) + 1;
    recs.insert(fin + 1, (23, TLS12, [vec![0xaa; EXPLICIT_NONCE_LEN], vec![0; TAG_LEN]].concat()));
    let t = parse(&join(&recs), &s.received).expect("an empty encrypted record");
    assert!(t
        .encrypted_records(Direction::Sent)
        .iter()
        .any(|r| r.ciphertext.is_empty() && r.explicit_nonce == [0xaa; 8]));
}

#[test]
fn malformed_encrypted_records_are_rejected() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    let sent = records(&s.sent);
    let fin = ccs_index(&sent) + 1;
    let check = |recs: &[Rec], want: TranscriptError| {
        assert_eq!(parse(&join(recs), &s.received).err(), Some(want));
    };
    let d = Direction::Sent;
    // Finished with one byte too many / too few.
    let mut r = sent.clone();
    r[fin].2.push(0);
    check(&r, TranscriptError::BadFinishedLength { direction: d, length: 17 });
    let mut r = sent.clone();
    r[fin].2.pop();
    check(&r, TranscriptError::BadFinishedLength { direction: d, length: 15 });
    // First encrypted record not a handshake record.
    let mut r = sent.clone();
    r[fin].0 = 23;
    check(&r, TranscriptError::FinishedNotHandshake { direction: d, content_type: 23 });
    // Missing Finished.
    check(&sent[..fin], TranscriptError::MissingMessage("client Finished"));
    // Missing CCS.
    let mut r = sent.clone();
    r.remove(fin - 1);
    check(&r[..fin - 1], TranscriptError::MissingMessage("client ChangeCipherSpec"));
    // Shorter than nonce + tag.
    let mut r = sent.clone();
    r.push((23, TLS12, vec![0; 23]));
    check(&r, TranscriptError::EncryptedRecordTooShort { direction: d, seq: (r.len() - fin - 1) as u64, length: 23 });
    // Record types not allowed after the Finished: handshake (renegotiation), CCS.
    for ct in [22u8, 20] {
        let mut r = sent.clone();
        r.insert(fin + 1, (ct, TLS12, vec![0; 40]));
        check(&r, TranscriptError::DisallowedEncryptedRecord { direction: d, seq: 1, content_type: ct });
    }
    // An encrypted alert that is not two bytes.
    let mut r = sent.clone();
    r.insert(fin + 1, (21, TLS12, vec![0; 27]));
    check(&r, TranscriptError::BadEncryptedAlertLength { direction: d, seq: 1, length: 3 });
    // Unknown content type anywhere.
    let mut r = sent.clone();
    r.insert(fin + 1, (99, TLS12, vec![0; 40]));
    check(&r, TranscriptError::UnknownContentType { direction: d, content_type: 99 });
    // Record version with a major byte other than 3.
    let mut r = sent.clone();
    r[fin + 1].1 = 0x0203;
    check(&r, TranscriptError::UnsupportedRecordVersion { direction: d, version: 0x0203 });
}

#[test]
fn malformed_plaintext_phase_is_rejected() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    let sent = records(&s.sent);
    let recv = records(&s.received);
    let ccs = ccs_index(&sent);
    let chk_sent = |recs: &[Rec], want: TranscriptError| {
        assert_eq!(parse(&join(recs), &s.received).err(), Some(want));
    };
    let chk_recv = |recs: &[Rec], want: TranscriptError| {
        assert_eq!(parse(&s.sent, &join(recs)).err(), Some(want));
    };
    let (ds, dr) = (Direction::Sent, Direction::Received);
    // Application data before CCS.
    let mut r = sent.clone();
    r.insert(1, (23, TLS12, vec![1, 2, 3]));
    chk_sent(&r, TranscriptError::UnexpectedPlaintextRecord { direction: ds, content_type: 23 });
    // Empty handshake record.
    let mut r = sent.clone();
    r.insert(1, (22, TLS12, vec![]));
    chk_sent(&r, TranscriptError::EmptyFragment { direction: ds, content_type: 22 });
    // Bad CCS payload.
    let mut r = sent.clone();
    r[ccs].2 = vec![2];
    chk_sent(&r, TranscriptError::BadChangeCipherSpec { direction: ds });
    // Fatal alert during the handshake; warnings pass.
    let mut r = recv.clone();
    r.insert(1, (21, TLS12, vec![2, 40]));
    chk_recv(&r, TranscriptError::FatalAlert { direction: dr, description: 40 });
    let mut r = recv.clone();
    r.insert(1, (21, TLS12, vec![1, 112]));
    assert!(parse(&s.sent, &join(&r)).is_ok());
    let mut r = recv.clone();
    r.insert(1, (21, TLS12, vec![1, 112, 0]));
    chk_recv(&r, TranscriptError::BadAlert { direction: dr });
    // A CCS while a handshake message is half received.
    let msgs = messages_of(&s.sent);
    let mut r: Vec<Rec> = vec![(22, TLS12, msgs.concat()[..10].to_vec())];
    r.extend_from_slice(&sent[ccs..]);
    chk_sent(&r, TranscriptError::InterleavedHandshakeFragment { direction: ds });

    // Message order and presence.
    let srv = messages_of(&s.received);
    let types: Vec<u8> = srv.iter().map(|m| m[0]).collect();
    assert_eq!(types, [hs::SERVER_HELLO, hs::CERTIFICATE, hs::SERVER_KEY_EXCHANGE, hs::SERVER_HELLO_DONE]);
    let mut dropped = srv.clone();
    dropped.remove(1);
    assert_eq!(
        parse(&s.sent, &with_messages(&s.received, &dropped, 1000)).err(),
        Some(TranscriptError::UnexpectedHandshake { direction: dr, expected: "Certificate", got: "ServerKeyExchange" })
    );
    assert_eq!(
        parse(&s.sent, &with_messages(&s.received, &srv[..3], 1000)).err(),
        Some(TranscriptError::MissingMessage("ServerHelloDone"))
    );
    let cli = messages_of(&s.sent);
    assert_eq!(
        parse(&with_messages(&s.sent, &cli[..1], 1000), &s.received).err(),
        Some(TranscriptError::MissingMessage("ClientKeyExchange"))
    );
    let mut extra = cli.clone();
    extra.push(vec![15, 0, 0, 0]);
    assert_eq!(
        parse(&with_messages(&s.sent, &extra, 1000), &s.received).err(),
        Some(TranscriptError::UnexpectedHandshake {
            direction: ds,
            expected: "ChangeCipherSpec",
            got: "CertificateVerify"
        })
    );
    // NewSessionTicket without the server acknowledging the extension.
    let mut nst = srv.clone();
    nst.push(vec![hs::NEW_SESSION_TICKET, 0, 0, 6, 0, 0, 0, 1, 0, 0]);
    assert_eq!(
        parse(&s.sent, &with_messages(&s.received, &nst, 1000)).err(),
        Some(TranscriptError::UnexpectedHandshake {
            direction: dr,
            expected: "ChangeCipherSpec",
            got: "NewSessionTicket"
        })
    );
    // ServerHello body edits: suite, version, compression.
    let sid_len = srv[0][4 + 2 + 32] as usize;
    let suite_at = 4 + 2 + 32 + 1 + sid_len;
    let edit = |at: usize, bytes: &[u8]| {
        let mut m = srv.clone();
        m[0][at..at + bytes.len()].copy_from_slice(bytes);
        parse(&s.sent, &with_messages(&s.received, &m, 1000)).err()
    };
    // TLS_RSA_WITH_AES_128_GCM_SHA256: no ECDHE, not implemented
    assert_eq!(edit(suite_at, &[0x00, 0x9c]), Some(TranscriptError::UnsupportedCipherSuite(0x009c)));
    // ECDHE-RSA with an ECDSA-signed ServerKeyExchange: scheme does not fit the suite.
    assert_eq!(edit(suite_at, &[0xc0, 0x2f]), Some(TranscriptError::UnsupportedSignatureScheme(t_scheme(&s))));
    assert_eq!(edit(4, &[3, 4]), Some(TranscriptError::UnsupportedServerVersion(0x0304)));
    assert_eq!(edit(suite_at + 2, &[1]), Some(TranscriptError::UnsupportedCompression(1)));
}

fn t_scheme(s: &Session) -> u16 {
    s.client.server_key_exchange().unwrap().scheme.id()
}

/// A ServerHello that picks one of the AES-256-GCM or ChaCha20-Poly1305 suites the
/// ClientHello did not offer is refused, whatever suite its records would need.
#[test]
fn a_new_suite_the_client_did_not_offer_is_refused() {
    for suite in [CipherSuite::EcdheEcdsaAes256GcmSha384, CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256] {
        let s = run_session(Opts { response_len: 100, suite: Some(suite), ..Opts::default() });
        let cli = messages_of(&s.sent);
        let sid_len = cli[0][4 + 2 + 32] as usize;
        let suites_at = 4 + 2 + 32 + 1 + sid_len;
        assert_eq!(&cli[0][suites_at..suites_at + 4], &[&[0, 2][..], &suite.id().to_be_bytes()].concat()[..]);
        assert!(parse(&s.sent, &s.received).is_ok(), "{suite:?} as offered");
        // the same session, its ClientHello offering AES-128-GCM in its place
        let mut c2 = cli.clone();
        c2[0][suites_at + 2..suites_at + 4].copy_from_slice(&[0xc0, 0x2b]);
        assert_eq!(
            parse(&with_messages(&s.sent, &c2, 1000), &s.received).err(),
            Some(TranscriptError::CipherSuiteNotOffered(suite.id())),
            "{suite:?}"
        );
    }
}

#[test]
fn unoffered_suite_and_extension_are_rejected() {
    let s = run_session(Opts { response_len: 100, ..Opts::default() });
    let srv = messages_of(&s.received);
    let cli = messages_of(&s.sent);
    // Client offers only the RSA suite (edit its list in place), server picked ECDSA.
    let ch = &cli[0];
    let sid_len = ch[4 + 2 + 32] as usize;
    let suites_at = 4 + 2 + 32 + 1 + sid_len;
    let offered: Vec<u8> = CipherSuite::ALL.iter().flat_map(|s| s.id().to_be_bytes()).collect();
    assert_eq!(&ch[suites_at..suites_at + 2], &[0, 12]);
    assert_eq!(&ch[suites_at + 2..suites_at + 14], &offered[..]);
    let mut c2 = cli.clone();
    c2[0][suites_at + 2..suites_at + 4].copy_from_slice(&[0xc0, 0x2f]);
    assert_eq!(
        parse(&with_messages(&s.sent, &c2, 1000), &s.received).err(),
        Some(TranscriptError::CipherSuiteNotOffered(0xc02b))
    );
    // Client without the EMS extension (rename it to an unused code): the server's EMS
    // answer is then unoffered.
    let mut c3 = cli.clone();
    let ems_at = c3[0].windows(4).rposition(|w| w == [0, 23, 0, 0]).unwrap();
    c3[0][ems_at..ems_at + 2].copy_from_slice(&[0xfa, 0xfa]);
    assert_eq!(
        parse(&with_messages(&s.sent, &c3, 1000), &s.received).err(),
        Some(TranscriptError::ExtensionNotOffered(ext::EXTENDED_MASTER_SECRET))
    );
    // Duplicate extension in the ClientHello.
    let mut c4 = cli.clone();
    c4[0][ems_at..ems_at + 2].copy_from_slice(&[0xff, 0x01]);
    assert_eq!(
        parse(&with_messages(&s.sent, &c4, 1000), &s.received).err(),
        Some(TranscriptError::DuplicateExtension { direction: Direction::Sent, extension: 0xff01 })
    );
    // A ClientHello offering the session id the server then echoes: resumption.
    let sid = srv[0][4 + 2 + 32 + 1..4 + 2 + 32 + 1 + srv[0][4 + 2 + 32] as usize].to_vec();
    assert!(!sid.is_empty());
    let mut body = cli[0][4..4 + 34].to_vec();
    codec::put_vec8(&mut body, &sid);
    body.extend_from_slice(&cli[0][4 + 35..]);
    let c5 = vec![codec::handshake_message(hs::CLIENT_HELLO, &body), cli[1].clone()];
    assert_eq!(
        parse(&with_messages(&s.sent, &c5, 1000), &s.received).err(),
        Some(TranscriptError::ResumptionNotSupported)
    );
}

#[test]
fn client_certificate_rules() {
    let s = run_session(Opts { client_auth: true, response_len: 100, ..Opts::default() });
    let cli = messages_of(&s.sent);
    let types: Vec<u8> = cli.iter().map(|m| m[0]).collect();
    assert_eq!(types, [hs::CLIENT_HELLO, hs::CERTIFICATE, hs::CLIENT_KEY_EXCHANGE]);
    // Client Certificate missing although requested.
    let dropped = vec![cli[0].clone(), cli[2].clone()];
    assert_eq!(
        parse(&with_messages(&s.sent, &dropped, 1000), &s.received).err(),
        Some(TranscriptError::UnexpectedHandshake {
            direction: Direction::Sent,
            expected: "Certificate",
            got: "ClientKeyExchange"
        })
    );
    // A non-empty client certificate (would need CertificateVerify): not supported.
    let leaf = s.client.server_cert_chain()[0].clone();
    let mut list = Vec::new();
    codec::put_u24(&mut list, leaf.len());
    list.extend_from_slice(&leaf);
    let mut body = Vec::new();
    codec::put_u24(&mut body, list.len());
    body.extend_from_slice(&list);
    let with_cert = vec![cli[0].clone(), codec::handshake_message(hs::CERTIFICATE, &body), cli[2].clone()];
    assert_eq!(
        parse(&with_messages(&s.sent, &with_cert, 1000), &s.received).err(),
        Some(TranscriptError::ClientCertificateNotSupported)
    );
    // Without a CertificateRequest, a client Certificate is out of order.
    let plain = run_session(Opts { response_len: 100, ..Opts::default() });
    let pc = messages_of(&plain.sent);
    let extra = vec![pc[0].clone(), cli[1].clone(), pc[1].clone()];
    assert_eq!(
        parse(&with_messages(&plain.sent, &extra, 1000), &plain.received).err(),
        Some(TranscriptError::UnexpectedHandshake {
            direction: Direction::Sent,
            expected: "ClientKeyExchange",
            got: "Certificate"
        })
    );
}
