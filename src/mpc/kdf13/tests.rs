//! The TLS 1.3 key schedule in two parties: garbled, it gives RFC 8448's secrets and keys from
//! shares of the X25519 secret, and the native schedule's from shares of a P-256 one; its
//! re-proof in ZK accepts an honest garbler and catches one that flips a revealed value or
//! uses another share than it committed; with the two-party X25519 and the two-party client,
//! a rustls server completes the handshake and reads a request under its keys.

use super::*;
use crate::channel::memory_pair;
use crate::circuits::bytes_to_bits;
use crate::gc::{Evaluator, Garbler, Table};
use crate::mpc::f25519::F25519;
use crate::mpc::fp::Fp;
use crate::mpc::garbled::{EvaluatorParty, GarblerCheat, GarblerParty};
use crate::mpc::phases::ZkPhases;
use crate::mpc::tests::value_of;
use crate::tls::tls13::key_schedule::{handshake_secret, master_secret, TrafficKeys, TrafficSecrets};
use crate::zk::bytes::commit_bytes;
use crate::zk::{Party, MAX_MESSAGE};
use futures::executor::block_on;
use futures::future::join;

fn h(x: &str) -> Vec<u8> {
    (0..x.len()).step_by(2).map(|i| u8::from_str_radix(&x[i..i + 2], 16).unwrap()).collect()
}

fn h32(x: &str) -> [u8; 32] {
    h(x).try_into().unwrap()
}

// RFC 8448 §3, "Simple 1-RTT Handshake" (TLS_AES_128_GCM_SHA256, x25519).
const ECDHE: &str = "8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d";
const HELLO_HASH: &str = "860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8";
const SERVER_FINISHED_HASH: &str = "9608102a0f1ccc6db6250b7b7e417b1a000eaada3daae4777a7686c9ff83df13";

/// What one party ends with: the revealed handshake secrets and the client's key and IV wires.
type Ended<B> = (HandshakeTraffic, ClientTraffic<B>);
type Outcome<B, P> = Result<(Ended<B>, P), PhaseError>;

/// The whole schedule over `p`.
async fn schedule<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    group: SharedGroup,
    mine: Input<'_, P::Backend>,
    theirs: Input<'_, P::Backend>,
    hashes: (&[u8; 32], &[u8; 32]),
    key_len: usize,
) -> Result<Ended<P::Backend>, PhaseError> {
    let (traffic, ms) = handshake(p, ch, group, mine, theirs, hashes.0).await?;
    let client = client_application(p, ch, &ms, hashes.1, key_len).await?;
    Ok((traffic, client))
}

type Outcomes =
    (Outcome<Garbler<Vec<Table>>, GarblerParty>, Outcome<Evaluator<std::vec::IntoIter<Table>>, EvaluatorParty>);

/// Both parties of the garbled schedule over an in-memory channel, the verifier's share
/// through simulated random COTs under the garbler's Δ, for AES-128-GCM's 16-byte key.
fn garbled(
    group: SharedGroup,
    shares: ([u8; 32], [u8; 32]),
    hashes: (&[u8; 32], &[u8; 32]),
    cheat: GarblerCheat,
) -> Outcomes {
    garbled_keyed(group, shares, hashes, cheat, 16)
}

/// [`garbled`] for an application key of `key_len` bytes.
fn garbled_keyed(
    group: SharedGroup,
    shares: ([u8; 32], [u8; 32]),
    hashes: (&[u8; 32], &[u8; 32]),
    cheat: GarblerCheat,
    key_len: usize,
) -> Outcomes {
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    gp.cheat = cheat;
    let delta = crate::primitives::field::F128(gp.garbler().delta());
    let (keys, choices, macs) = crate::ot::test_util::random_cots(delta, 256);
    let keys: Vec<u128> = keys.iter().map(|k| k.0).collect();
    let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (pb, vb) = (bytes_to_bits(&shares.0), bytes_to_bits(&shares.1));
    block_on(join(
        async move {
            let mine = gp.own_inputs(&mut a, &pb).await?;
            let theirs = gp.peer_inputs(&mut a, &keys).await?;
            let k =
                schedule(&mut gp, &mut a, group, Input::Wires(&mine), Input::Wires(&theirs), hashes, key_len).await?;
            Ok((k, gp))
        },
        async move {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, 256).await?;
            let mine = ep.own_inputs(&mut b, &vb, &choices, &macs).await?;
            let k =
                schedule(&mut ep, &mut b, group, Input::Wires(&theirs), Input::Wires(&mine), hashes, key_len).await?;
            Ok((k, ep))
        },
    ))
}

/// The prover's re-proof after the session: its share committed, the verifier's public.
fn reproof(
    group: SharedGroup,
    shares: ([u8; 32], [u8; 32]),
    hashes: (&[u8; 32], &[u8; 32]),
    during_session: &[Vec<u8>],
) -> Result<(), PhaseError> {
    let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (pv, vv) = shares;
    let (p, v) = block_on(join(
        async move {
            let mine = prover.run_batch_deferred(&mut a, &mut |b| commit_bytes(b, Some(&pv), 32)).await?;
            let mut zp = ZkPhases::new(&mut prover);
            schedule(&mut zp, &mut a, group, Input::Wires(&mine), Input::Public(&vv), hashes, 16).await?;
            zp.finish(&mut a, during_session, &[]).await
        },
        async move {
            let theirs = verifier.run_batch_deferred(&mut b, &mut |b| commit_bytes(b, None, 32)).await?;
            let mut zv = ZkPhases::new(&mut verifier);
            schedule(&mut zv, &mut b, group, Input::Wires(&theirs), Input::Public(&vv), hashes, 16).await?;
            zv.finish(&mut b, during_session, &[]).await
        },
    ));
    v.and(p)
}

/// RFC 8448's X25519 secret split into two random shares mod 2^255 − 19 (little-endian).
fn rfc8448_shares() -> ([u8; 32], [u8; 32]) {
    let secret = F25519::from_le_bytes(&h32(ECDHE)).expect("below p");
    let p = F25519::random();
    (p.to_le_bytes(), (secret - p).to_le_bytes())
}

#[test]
fn garbled_schedule_gives_rfc_8448s_secrets_from_x25519_shares() {
    let hashes = (&h32(HELLO_HASH), &h32(SERVER_FINISHED_HASH));
    let (g, e) = garbled(SharedGroup::X25519, rfc8448_shares(), hashes, GarblerCheat::default());
    let (((gt, gk), gp), ((et, ek), ep)) = (g.expect("garbler"), e.expect("evaluator"));
    assert_eq!(gt, et, "both parties learn the handshake traffic secrets");
    assert_eq!(gt.client.to_vec(), h("b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"));
    assert_eq!(gt.server.to_vec(), h("b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"));
    assert_eq!(value_of(&gk.key, &ek.key), h("17422dda596ed5d9acd890e3c63f5051"));
    assert_eq!(value_of(&gk.iv, &ek.iv), h("5b78923dee08579033e523d9"));
    assert_eq!(gp.revealed(), ep.revealed(), "both parties saw the same revealed values");
    assert_eq!(gp.revealed().len(), 5, "five phases");
    let mib = gp.bytes_of_tables() as f64 / (1 << 20) as f64;
    println!("TLS 1.3 key schedule in two parties: {mib:.2} MiB of tables");
    assert!((4.0..9.0).contains(&mib), "{mib} MiB of tables");
}

/// Shares of a P-256 secret, one of them wrapping around the prime, against the native
/// schedule on the secret's big-endian bytes, with AES-128-GCM's 16-byte application key and
/// ChaCha20-Poly1305's 32-byte one.
#[test]
fn garbled_schedule_equals_the_native_one_from_p256_shares() {
    let mut rng = rand::rng();
    let hello: [u8; 32] = rand::Rng::random(&mut rng);
    let finished: [u8; 32] = rand::Rng::random(&mut rng);
    let cases = [(Fp::random(), Fp::random(), 16), (-Fp::ONE, Fp::ONE + Fp::ONE, 16), (Fp::random(), Fp::random(), 32)];
    for (p, v, key_len) in cases {
        let (g, e) = garbled_keyed(
            SharedGroup::P256,
            (p.to_be_bytes(), v.to_be_bytes()),
            (&hello, &finished),
            GarblerCheat::default(),
            key_len,
        );
        let ((gt, gk), _) = g.expect("garbler");
        let ((_, ek), _) = e.expect("evaluator");
        let alg = HashAlg::Sha256;
        let hs = handshake_secret(alg, &(p + v).to_be_bytes());
        let hts = TrafficSecrets::handshake(alg, &hs, &Secret::from_slice(&hello));
        assert_eq!(
            (gt.client.to_vec(), gt.server.to_vec()),
            (hts.client.as_bytes().to_vec(), hts.server.as_bytes().to_vec())
        );
        let ats = TrafficSecrets::application(alg, &master_secret(alg, &hs), &Secret::from_slice(&finished));
        let keys = TrafficKeys::derive(alg, &ats.client, key_len);
        assert_eq!(value_of(&gk.key, &ek.key), keys.key());
        assert_eq!(value_of(&gk.iv, &ek.iv), keys.iv.to_vec());
    }
}

#[test]
fn the_reproof_accepts_an_honest_garbler_and_catches_a_cheating_one() {
    let hashes = (&h32(HELLO_HASH), &h32(SERVER_FINISHED_HASH));
    let shares = rfc8448_shares();
    let (_, e) = garbled(SharedGroup::X25519, shares, hashes, GarblerCheat::default());
    let (_, ep) = e.expect("evaluator");
    reproof(SharedGroup::X25519, shares, hashes, ep.revealed()).expect("an honest garbler passes");

    let differs = |r: Result<(), PhaseError>, what: &str| {
        assert!(matches!(r, Err(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. }))), "{what}: {r:?}");
    };
    // a flipped decoding bit in c_hs (phase 2's first byte), and in HS's inner pad state
    for bit in [3, 256 + 9] {
        let (_, e) = garbled(
            SharedGroup::X25519,
            shares,
            hashes,
            GarblerCheat { flip_decoding: Some(bit), ..Default::default() },
        );
        differs(reproof(SharedGroup::X25519, shares, hashes, e.expect("evaluator").1.revealed()), "decoding bit");
    }
    // a garbler that used another share than the one it commits to in the proof
    let mut other = shares;
    other.0[5] ^= 1;
    let (_, e) = garbled(SharedGroup::X25519, other, hashes, GarblerCheat::default());
    differs(reproof(SharedGroup::X25519, shares, hashes, e.expect("evaluator").1.revealed()), "another share");
}

/// The pieces compose against a real server: a rustls TLS 1.3 server's X25519 share, the
/// two-party X25519 conversion of the parties' halves, the garbled schedule's c_hs and s_hs
/// given to a two-party client, which reads the server's flight and whose Finished the server
/// accepts; the garbled client application key and IV then seal a request the server reads.
/// (The schedule runs twice here, the second time with the server's Finished hash: it is a
/// function of the shares, so the secrets are the same.)
#[test]
fn a_tls13_handshake_completes_against_rustls_with_the_two_party_secrets() {
    use crate::mpc::ecdh::{exchange, EcdhProver, EcdhVerifier, ROUND_COTS};
    use crate::mpc::x25519::{client_key_share, public_half, random_scalar, share_point, CURVE_A};
    use crate::tls::codec::{ContentType, NamedGroup, RECORD_HEADER_LEN};
    use crate::tls::tls13::client::tests::{start, Server};
    use crate::tls::tls13::client::{Client13, Config13};
    use crate::tls::tls13::messages::Suite13;
    use crate::tls::tls13::record::RecordKey;
    use std::io::Read;

    let (_, mut server, _, roots) = start(Server::default(), "localhost", |_| {});
    let to_server = |client: &mut Client13, server: &mut rustls::ServerConnection| {
        let out = client.take_outgoing();
        let mut rd = &out[..];
        while !rd.is_empty() {
            server.read_tls(&mut rd).unwrap();
            server.process_new_packets().unwrap();
        }
    };
    let from_server = |server: &mut rustls::ServerConnection| {
        let mut out = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut out).unwrap();
        }
        out
    };
    // each party's half of the client key share; the ClientHello carries their sum
    let (d_p, d_v) = (random_scalar(), random_scalar());
    let public = client_key_share(&public_half(&d_p), &public_half(&d_v)).to_vec();
    let mut config = Config13::new(roots);
    config.suites = vec![Suite13::Aes128GcmSha256];
    let now = rustls_pki_types::UnixTime::now();
    let mut client = Client13::two_party(config, "localhost", now, vec![(NamedGroup::X25519, public)]).unwrap();
    to_server(&mut client, &mut server);
    client.feed(&from_server(&mut server)).unwrap();
    let request = client.handshake_request().expect("the ServerHello is read").clone();
    let server_u: [u8; 32] = request.server_public.as_slice().try_into().unwrap();

    // the conversion to shares of the X25519 secret
    let (u_p, v_p) = share_point(&d_p, &server_u).unwrap();
    let (u_v, v_v) = share_point(&d_v, &server_u).unwrap();
    let delta = crate::primitives::field::F128(rand::Rng::random(&mut rand::rng()));
    let (k, c, m) = crate::ot::test_util::random_cots(delta, ROUND_COTS.iter().sum());
    let a = EcdhProver::from_coordinates(u_p, v_p, F25519::from_u64(CURVE_A));
    let b = EcdhVerifier::from_coordinates(u_v, v_v);
    let (s_p, s_v, _) = exchange(a, b, &k, delta, &c, &m).unwrap();
    let shares = (s_p.to_le_bytes(), s_v.to_le_bytes());

    // phases 1–3: the handshake traffic secrets, which let the client read the flight
    let hello: [u8; 32] = request.hello_hash.as_bytes().try_into().unwrap();
    let (g, _) = garbled(SharedGroup::X25519, shares, (&hello, &[0; 32]), GarblerCheat::default());
    let ((traffic, _), _) = g.expect("garbler");
    let secrets =
        TrafficSecrets { client: Secret::from_slice(&traffic.client), server: Secret::from_slice(&traffic.server) };
    client.complete_two_party_handshake(secrets).unwrap();
    assert!(client.is_connected(), "the flight read and checked with the two-party secrets");
    to_server(&mut client, &mut server);
    assert!(!server.is_handshaking(), "the server accepted our Finished");

    // phases 4–5 with the server's Finished hash: the client application key and IV
    let finished: [u8; 32] = client.server_finished_hash().unwrap().as_bytes().try_into().unwrap();
    let (g, e) = garbled(SharedGroup::X25519, shares, (&hello, &finished), GarblerCheat::default());
    let (((_, gk), _), ((_, ek), _)) = (g.expect("garbler"), e.expect("evaluator"));
    let (key, iv) = (value_of(&gk.key, &ek.key), value_of(&gk.iv, &ek.iv));
    let keys = TrafficKeys::from_parts(&key, iv.try_into().unwrap());
    let record = RecordKey::new(Suite13::Aes128GcmSha256.aead(), &keys)
        .unwrap()
        .seal(0, ContentType::ApplicationData, b"GET / HTTP/1.1\r\n\r\n")
        .unwrap();
    client.send_sealed_record(&record[RECORD_HEADER_LEN..]).unwrap();
    to_server(&mut client, &mut server);
    let mut got = [0u8; 18];
    server.reader().read_exact(&mut got).unwrap();
    assert_eq!(&got, b"GET / HTTP/1.1\r\n\r\n");
}
