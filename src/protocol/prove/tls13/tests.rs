use super::*;
use crate::channel::{memory_pair, MemoryChannel};
use crate::circuits::aes::key_schedule;
use crate::circuits::keystream::{j0_block, keystream_blocks};
use crate::protocol::messages::{RecordShapes, RevealPlan};
use crate::protocol::observe::tls12::TranscriptError;
use crate::protocol::observe::tls13::{Handshake13, Transcript13};
use crate::protocol::prove::tls13::check::Check13Error;
use crate::tls::tls13::key_schedule::{self, HashAlg, Secret, TrafficKeys, TrafficSecrets};
use crate::tls::tls13::{AeadAlg, Suite13};
use crate::tls::Direction;
use crate::zk::bytes::{commit_bytes, open_bytes};
use crate::zk::tests::ideal_parties;
use crate::zk::{Backend, Party, ProofError};
use crate::zk::{Cheat, MAX_MESSAGE};
use rustls_pki_types::UnixTime;

/// [`run`] on both sides over a fresh channel; each side owns its end, so one that fails
/// ends the other instead of leaving it waiting. The prover's and the verifier's results.
#[allow(clippy::too_many_arguments)]
fn run_both<P: Party<MemoryChannel>, V: Party<MemoryChannel>>(
    prover: &mut P,
    verifier: &mut V,
    hs: &[u8],
    blinders: &[[u8; 16]],
    inputs: &PublicInputs13<'_>,
    handshake: &Handshake13,
    read: impl FnOnce(&HandshakeSecrets) -> Result<Handshake13, TranscriptError>,
) -> (Result<Opened13, Proof13Error>, Result<Opened13, Proof13Error>) {
    let (a, b) = memory_pair(MAX_MESSAGE);
    let p = async {
        let mut a = a;
        run(prover, &mut a, Some(hs), Some(blinders), inputs, |_| Ok(handshake.clone())).await
    };
    let v = async {
        let mut b = b;
        run(verifier, &mut b, None, None, inputs, read).await
    };
    futures::executor::block_on(async { futures::join!(p, v) })
}

/// The verifier's handshake secrets, each direction's key and IV, and the opened traffic
/// secrets, as [`derive_counting`] finds them.
type Derived = (HandshakeSecrets, [(Vec<u8>, Vec<u8>); 2], [Option<Vec<u8>>; 2]);

fn derive(
    alg: HashAlg,
    hs: &[u8],
    hello_hash: &[u8],
    finished_hash: &[u8],
    key_len: usize,
    open: [bool; 2],
) -> Result<Derived, ProofError> {
    derive_counting(alg, hs, hello_hash, finished_hash, key_len, open).0
}

/// Both sides of the derivation, the traffic secrets opened as `open` says, then one
/// checked batch that opens the hidden keys (only a test opens them); what the verifier
/// found, and the COTs the prover took for the derivation alone.
fn derive_counting(
    alg: HashAlg,
    hs: &[u8],
    hello_hash: &[u8],
    finished_hash: &[u8],
    key_len: usize,
    open: [bool; 2],
) -> (Result<Derived, ProofError>, Result<usize, ProofError>) {
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    let p = async {
        let mut a = a;
        let (_, traffic) = key_derivation(&mut prover, &mut a, alg, Some(hs), hello_hash, key_len, open, |_| {
            Ok::<_, ProofError>(finished_hash.to_vec())
        })
        .await?;
        let taken = prover.cot().issued();
        prover.run_batch(&mut a, &mut |b| open_keys(b, &traffic)).await?;
        Ok(taken)
    };
    let v = async {
        let mut b = b;
        let (opened, traffic) = key_derivation(&mut verifier, &mut b, alg, None, hello_hash, key_len, open, |_| {
            Ok::<_, ProofError>(finished_hash.to_vec())
        })
        .await?;
        let keys = verifier.run_batch(&mut b, &mut |b| open_keys(b, &traffic)).await?;
        let secrets = traffic.each_ref().map(|t| match t {
            DirectionTraffic::Opened(secret) => Some(secret.clone()),
            DirectionTraffic::Hidden(_) => None,
        });
        Ok((opened, direction_keys(alg, key_len, &secrets, keys), secrets))
    };
    let (taken, verified) = futures::executor::block_on(async { futures::join!(p, v) });
    (verified, taken)
}

/// Opens the keys and IVs the derivation kept in ZK (only a test does).
fn open_keys<B: Backend>(b: &mut B, traffic: &[DirectionTraffic<B>; 2]) -> [Option<(Vec<u8>, Vec<u8>)>; 2] {
    traffic.each_ref().map(|t| match t {
        DirectionTraffic::Hidden(k) => Some((open_bytes(b, &k.key), open_bytes(b, &k.iv))),
        DirectionTraffic::Opened(_) => None,
    })
}

/// Each direction's key and IV: derived from its opened traffic secret, or opened from ZK.
fn direction_keys(
    alg: HashAlg,
    key_len: usize,
    secrets: &[Option<Vec<u8>>; 2],
    opened: [Option<(Vec<u8>, Vec<u8>)>; 2],
) -> [(Vec<u8>, Vec<u8>); 2] {
    let mut opened = opened.into_iter();
    secrets.each_ref().map(|secret| match (secret, opened.next().flatten()) {
        (Some(secret), None) => {
            let k = TrafficKeys::derive(alg, &Secret::from_slice(secret), key_len);
            (k.key().to_vec(), k.iv.to_vec())
        }
        (None, Some(key_iv)) => key_iv,
        _ => panic!("a direction both opened and hidden"),
    })
}

fn h(s: &str) -> [u8; 32] {
    core::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
}

/// What the prover asks to preprocess for the derivation ([`derivation_cots`](crate::protocol::prove::tls12::derivation_cots))
/// covers what the derivation takes, for each suite and each number of hidden directions.
#[test]
fn the_preprocessing_asked_for_covers_the_derivation() {
    for suite in Suite13::ALL {
        let alg = suite.hash();
        let (secret, hello) = (vec![0x42; alg.output_len()], vec![0x17; alg.output_len()]);
        for (open, hidden) in [([true, true], 0), ([false, true], 1), ([false, false], 2)] {
            let (verified, taken) = derive_counting(alg, &secret, &hello, &hello, suite.aead().key_len(), open);
            verified.unwrap();
            let (taken, asked) = (taken.unwrap(), crate::protocol::prove::tls12::derivation_cots(suite, hidden));
            assert!(taken <= asked, "{suite:?}, {hidden} hidden: {taken} COTs taken, {asked} asked for");
        }
    }
}

/// RFC 8448 §3's secrets and keys come out of the derivation in ZK.
#[test]
fn the_derivation_in_zk_gives_rfc8448s_secrets_and_keys() {
    let hs = h("1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac");
    let hello = h("860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8");
    let finished = h("9608102a0f1ccc6db6250b7b7e417b1a000eaada3daae4777a7686c9ff83df13");
    let hex = |v: &[u8]| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let application = [
        "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5",
        "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643",
    ];
    for open in [[false, false], [false, true], [true, false], [true, true]] {
        let (opened, [(ck, civ), (sk, siv)], secrets) =
            derive(HashAlg::Sha256, &hs, &hello, &finished, 16, open).unwrap();
        assert_eq!(opened.client, h("b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"));
        assert_eq!(opened.server, h("b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"));
        assert_eq!(
            (hex(&ck), hex(&civ)),
            ("17422dda596ed5d9acd890e3c63f5051".into(), "5b78923dee08579033e523d9".into()),
            "{open:?}"
        );
        assert_eq!(
            (hex(&sk), hex(&siv)),
            ("9f02283b6c9c07efc26bb9f2ac92e356".into(), "cf782b88dd83549aadf1e984".into()),
            "{open:?}"
        );
        for side in 0..2 {
            assert_eq!(
                secrets[side].as_deref().map(hex),
                open[side].then(|| application[side].to_string()),
                "{open:?}"
            );
        }
    }
}

/// 32-byte keys (ChaCha20-Poly1305 on SHA-256, AES-256-GCM on SHA-384) against the native
/// schedule.
#[test]
fn keys_of_32_bytes_and_sha384_match_the_native_schedule() {
    for alg in [HashAlg::Sha256, HashAlg::Sha384] {
        let hs_secret = key_schedule::handshake_secret(alg, &[0x42; 32]);
        let n = alg.output_len();
        let (hello, finished) = (vec![1u8; n], vec![2u8; n]);
        // the client's traffic secret opened, the server's kept in ZK
        let (opened, [(ck, civ), (sk, siv)], [client, _]) =
            derive(alg, hs_secret.as_bytes(), &hello, &finished, 32, [true, false]).unwrap();
        let handshake = TrafficSecrets::handshake(alg, &hs_secret, &Secret::from_slice(&hello));
        assert_eq!(
            (&opened.client[..], &opened.server[..]),
            (handshake.client.as_bytes(), handshake.server.as_bytes()),
            "{alg:?}"
        );
        let application = TrafficSecrets::application(
            alg,
            &key_schedule::master_secret(alg, &hs_secret),
            &Secret::from_slice(&finished),
        );
        assert_eq!(client.as_deref(), Some(application.client.as_bytes()), "{alg:?}");
        for (secret, key, iv) in [(&application.client, &ck, &civ), (&application.server, &sk, &siv)] {
            let native = TrafficKeys::derive(alg, secret, 32);
            assert_eq!((native.key(), &native.iv[..]), (&key[..], &iv[..]), "{alg:?}");
        }
    }
    // A secret or transcript hash of the other hash's length is refused before anything runs.
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let finished = |_: &HandshakeSecrets| Ok::<_, ProofError>(vec![0; 48]);
    let short_secret =
        key_derivation(&mut prover, &mut a, HashAlg::Sha384, Some(&[0; 32]), &[0; 48], 32, [false; 2], finished);
    assert!(matches!(futures::executor::block_on(short_secret), Err(ProofError::Malformed(_))));
    let short_hash = key_derivation(&mut verifier, &mut b, HashAlg::Sha384, None, &[0; 32], 32, [false; 2], finished);
    assert!(matches!(futures::executor::block_on(short_hash), Err(ProofError::Malformed(_))));
}

/// The verifier's reading of the handshake ends the proof when it fails.
#[test]
fn a_handshake_the_verifier_cannot_read_ends_the_proof() {
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let p = key_derivation(&mut prover, &mut a, HashAlg::Sha256, Some(&[3; 32][..]), &[0; 32], 16, [false; 2], |_| {
        Ok::<_, ProofError>(vec![0; 32])
    });
    let v = key_derivation(&mut verifier, &mut b, HashAlg::Sha256, None, &[0; 32], 16, [false; 2], |_| {
        Err(ProofError::Malformed("the server's flight does not decrypt"))
    });
    let (_, verified) = futures::executor::block_on(async { futures::join!(p, v) });
    assert!(matches!(verified, Err(ProofError::Malformed("the server's flight does not decrypt"))));
    assert!(matches!(
        futures::executor::block_on(key_derivation(
            &mut ideal_parties(Cheat::default()).1,
            &mut memory_pair(MAX_MESSAGE).1,
            HashAlg::Sha256,
            None,
            &[0; 32],
            24,
            [false; 2],
            |_| Ok::<_, ProofError>(vec![0; 32])
        )),
        Err(ProofError::Malformed(_))
    ));
}

#[derive(Debug)]
enum Refused {
    // Read through Debug, in the assertions' messages.
    #[allow(dead_code)]
    Proof(ProofError),
    Transcript(crate::protocol::observe::tls12::TranscriptError),
}
impl From<ProofError> for Refused {
    fn from(e: ProofError) -> Self {
        Refused::Proof(e)
    }
}

/// The key of a direction whose traffic secret the derivation kept hidden.
fn hidden<B: Backend>(traffic: DirectionTraffic<B>) -> DirectionKey<B> {
    match traffic {
        DirectionTraffic::Hidden(key) => key,
        DirectionTraffic::Opened(_) => panic!("a traffic secret opened"),
    }
}

/// A session relayed as in proxy mode, proven in ZK from the client's handshake secret (or
/// `hs` instead): the verifier reads the handshake with the opened secrets, then the
/// application keys open its records. Returns the response the verifier decrypted.
fn prove_relayed(hs: Option<[u8; 32]>) -> Result<Vec<u8>, Refused> {
    use crate::protocol::observe::tls13::{self as transcript13, tests::relay};
    use crate::tls::tls13::client::tests::Server;
    use crate::tls::tls13::record::RecordKey;
    use crate::tls::Direction;
    let r = relay(Server::default());
    let t = transcript13::parse(&r.sent, &r.received).unwrap();
    let schedule = r.client.key_schedule().unwrap();
    let real: [u8; 32] = schedule.handshake_secret.as_bytes().try_into().unwrap();
    let hs = hs.unwrap_or(real);
    let prover_finished: [u8; 32] = schedule.server_finished_hash.as_ref().unwrap().as_bytes().try_into().unwrap();
    let hello = t.hello_hash();
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    // Each side owns its channel end, so a side that stops drops it and the other's wait ends.
    let p = async {
        let mut a = a;
        let (_, traffic) =
            key_derivation(&mut prover, &mut a, HashAlg::Sha256, Some(&hs[..]), &hello, 16, [false; 2], |_| {
                Ok::<_, Refused>(prover_finished.to_vec())
            })
            .await?;
        prover.run_batch(&mut a, &mut |b| open_keys(b, &traffic)).await.map_err(Refused::from)
    };
    let v = async {
        let mut b = b;
        let mut handshake = None;
        let (_, traffic) =
            key_derivation(&mut verifier, &mut b, HashAlg::Sha256, None, &hello, 16, [false; 2], |opened| {
                let h = t
                    .read_handshake(&opened.client, &opened.server, &r.roots, "localhost", UnixTime::now())
                    .map_err(Refused::Transcript)?;
                let hash = h.server_finished_hash.clone();
                handshake = Some(h);
                Ok::<_, Refused>(hash)
            })
            .await?;
        let [_, server] = verifier.run_batch(&mut b, &mut |b| open_keys(b, &traffic)).await?;
        let (key, iv) = server.expect("the server's key was kept in ZK");
        let keys = TrafficKeys::from_parts(&key, iv.try_into().unwrap());
        let record = RecordKey::new(t.suite().aead(), &keys).unwrap();
        let first = handshake.unwrap().handshake_records[1];
        Ok(record.open(0, &t.encrypted_records(Direction::Received)[first]).unwrap().content)
    };
    let (_, verified) = futures::executor::block_on(async { futures::join!(p, v) });
    verified
}

#[test]
fn a_relayed_session_proven_in_zk_gives_the_verifier_its_handshake_and_response() {
    assert_eq!(prove_relayed(None).unwrap(), b"HTTP/1.1 200 OK\r\n\r\nhello");
    let refused = prove_relayed(Some([1; 32])).unwrap_err();
    assert!(
        matches!(
            refused,
            Refused::Transcript(crate::protocol::observe::tls12::TranscriptError::HandshakeNotDecrypted { .. })
        ),
        "another handshake secret: {refused:?}"
    );
}

/// RFC 8448's second server record (sequence number 1) decrypts with the keystream proven
/// on [`record_nonce`] from the committed key and IV; its E_K(J0) is AES of nonce ‖ 1.
#[test]
fn the_record_nonce_gives_rfc8448s_keystream_and_j0() {
    let key = [0x9f, 0x02, 0x28, 0x3b, 0x6c, 0x9c, 0x07, 0xef, 0xc2, 0x6b, 0xb9, 0xf2, 0xac, 0x92, 0xe3, 0x56];
    let iv = [0xcf, 0x78, 0x2b, 0x88, 0xdd, 0x83, 0x54, 0x9a, 0xad, 0xf1, 0xe9, 0x84];
    let record = "2e937e11ef4ac740e538ad36005fc4a46932fc3225d05f82aa1b36e30efaf97d90e6dffc602dcb501a59a8fcc49c4bf2e5f0a21c0047c2abf332540dd032e167c2955d";
    let record: Vec<u8> =
        (0..record.len()).step_by(2).map(|i| u8::from_str_radix(&record[i..i + 2], 16).unwrap()).collect();
    let ciphertext = &record[..record.len() - 16];
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    fn batch<B: Backend>(b: &mut B, key: Option<&[u8]>, iv: Option<&[u8]>) -> (Vec<u8>, Vec<u8>) {
        let k = commit_bytes(b, key, 16);
        let iv = commit_bytes(b, iv, 12);
        let rk = key_schedule(b, &k);
        let nonce = record_nonce(b, &iv, 1);
        let ks: Vec<B::Bit> = keystream_blocks(b, &rk, &nonce, &[0, 1, 2, 3]).into_iter().flatten().collect();
        let j0 = j0_block(b, &rk, &nonce);
        (open_bytes(b, &ks), open_bytes(b, &j0))
    }
    let p = async {
        let mut a = a;
        prover.run_batch(&mut a, &mut |b| batch(b, Some(&key), Some(&iv))).await
    };
    let v = async {
        let mut b = b;
        verifier.run_batch(&mut b, &mut |b| batch(b, None, None)).await
    };
    let (_, verified) = futures::executor::block_on(async { futures::join!(p, v) });
    let (keystream, j0) = verified.unwrap();
    let plaintext: Vec<u8> = ciphertext.iter().zip(&keystream).map(|(c, k)| c ^ k).collect();
    let mut expected: Vec<u8> = (0..0x32).collect();
    expected.push(23);
    assert_eq!(plaintext, expected);
    use aes::cipher::{BlockEncrypt, KeyInit};
    let mut block = aes::Block::default();
    block[..12].copy_from_slice(&crate::tls::tls13::record::nonce(&iv, 1));
    block[15] = 1;
    aes::Aes128::new(&key.into()).encrypt_block(&mut block);
    assert_eq!(j0, block.to_vec());
}

/// Steps 1–4 on a relayed session: the request by the fast path, the response by the ZK
/// path with `reveal` and the announced `shapes` (the honest ones when `None`). Returns what
/// the verifier recovered of [request, response].
fn prove_records(
    reveal: &[std::ops::Range<u64>],
    shapes: Option<Vec<crate::protocol::prove::tls13::check::RecordShape>>,
    sent_len: Option<usize>,
) -> Result<[Vec<u8>; 2], String> {
    use crate::protocol::observe::tls13::{self as transcript13, tests::relay};
    use crate::protocol::prove::tls13::check::{self as check13, RecordShape};
    use crate::tls::tls13::client::tests::Server;
    use crate::tls::tls13::record::RecordKey;
    use crate::tls::Direction;
    let r = relay(Server::default());
    let t = transcript13::parse(&r.sent, &r.received).unwrap();
    let schedule = r.client.key_schedule().unwrap();
    let hs: [u8; 32] = schedule.handshake_secret.as_bytes().try_into().unwrap();
    let handshake = t
        .read_handshake(
            schedule.handshake_traffic.client.as_bytes(),
            schedule.handshake_traffic.server.as_bytes(),
            &r.roots,
            "localhost",
            UnixTime::now(),
        )
        .unwrap();
    let app = |d: Direction, k: usize| t.encrypted_records(d)[handshake.handshake_records[k]..].to_vec();
    let (sent, received) = (app(Direction::Sent, 0), app(Direction::Received, 1));
    // The prover's shapes, from its own decryption.
    let server_keys = TrafficKeys::derive(HashAlg::Sha256, &schedule.application_traffic.as_ref().unwrap().server, 16);
    let server_key = RecordKey::new(t.suite().aead(), &server_keys).unwrap();
    let honest: Vec<RecordShape> = received
        .iter()
        .enumerate()
        .map(|(i, rec)| {
            let inner = server_key.open(i as u64, rec).unwrap();
            RecordShape { content_len: inner.content.len(), content_type: inner.content_type }
        })
        .collect();
    let shapes = shapes.unwrap_or(honest);
    let sent_shapes: Vec<RecordShape> = sent
        .iter()
        .map(|rec| RecordShape { content_len: sent_len.unwrap_or(rec.len() - 17), content_type: 23 })
        .collect();
    let positions = check13::positions(&received, &shapes, reveal).map_err(|e| e.to_string())?;
    let hello = t.hello_hash();
    let finished = handshake.server_finished_hash;
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    let p = async {
        let mut a = a;
        let (_, traffic) =
            key_derivation(&mut prover, &mut a, HashAlg::Sha256, Some(&hs[..]), &hello, 16, [false; 2], |_| {
                Ok::<_, ProofError>(finished.clone())
            })
            .await?;
        let [ck, sk] = traffic.map(hidden);
        let dirs = [
            DirectionRecords { key: &ck, fast: true, records: sent.len(), positions: &[] },
            DirectionRecords { key: &sk, fast: false, records: received.len(), positions: &positions },
        ];
        open_records(&mut prover, &mut a, AeadAlg::Aes128Gcm, &dirs).await
    };
    let v = async {
        let mut b = b;
        let (_, traffic) = key_derivation(&mut verifier, &mut b, HashAlg::Sha256, None, &hello, 16, [false; 2], |_| {
            Ok::<_, ProofError>(finished.clone())
        })
        .await?;
        let [ck, sk] = traffic.map(hidden);
        let dirs = [
            DirectionRecords { key: &ck, fast: true, records: sent.len(), positions: &[] },
            DirectionRecords { key: &sk, fast: false, records: received.len(), positions: &positions },
        ];
        let [c, s]: [OpenedRecords; 2] = open_records(&mut verifier, &mut b, AeadAlg::Aes128Gcm, &dirs)
            .await?
            .try_into()
            .map_err(|_| ProofError::Malformed("two directions"))?;
        Ok::<_, ProofError>((c, s))
    };
    let (_, verified) = futures::executor::block_on(async { futures::join!(p, v) });
    let (c, s) = verified.map_err(|e| e.to_string())?;
    let aead = t.suite().aead();
    let request = check13::recover("sent", aead, &sent, &sent_shapes, &[], &c).map_err(|e| e.to_string())?;
    let response = check13::recover("received", aead, &received, &shapes, reveal, &s).map_err(|e| e.to_string())?;
    // The revealed bytes, in order (the hidden ones are zeros in `bytes`).
    let revealed = reveal.iter().flat_map(|r| response.bytes[r.start as usize..r.end as usize].to_vec()).collect();
    Ok([request.bytes, revealed])
}

#[test]
fn records_by_the_fast_path_and_the_zk_path_and_shapes_that_lie_are_refused() {
    let [request, response] = prove_records(&[0..8, 19..24], None, None).unwrap();
    assert_eq!(request, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(response, b"HTTP/1.1hello");
    use crate::protocol::prove::tls13::check::RecordShape;
    // The response record is 24 bytes of content, then its type byte 23.
    let shorter =
        prove_records(&[0..8], Some(vec![RecordShape { content_len: 23, content_type: 23 }]), None).unwrap_err();
    assert!(shorter.contains("inner content type is 111, not the 23 announced"), "{shorter}");
    let handshake =
        prove_records(&[], Some(vec![RecordShape { content_len: 24, content_type: 22 }]), None).unwrap_err();
    assert!(handshake.contains("inner content type is 23, not the 22 announced"), "{handshake}");
    let beyond = prove_records(&[0..25], None, None).unwrap_err();
    assert!(beyond.contains("beyond the 24 bytes"), "{beyond}");
    // On the fast path the verifier decrypts, and the announced length must be the real one.
    let fast = prove_records(&[], None, Some(17)).unwrap_err();
    assert!(fast.contains("18 bytes of content, not the 17 announced"), "{fast}");
}

/// Each direction's application records start after its own encrypted handshake records:
/// a server whose flight spans several records, and a client that sends one.
#[test]
fn application_records_follow_each_directions_own_handshake_records() {
    use crate::protocol::observe::tls13::{self as transcript13, tests::relay};
    use crate::tls::tls13::client::tests::Server;
    let r = relay(Server { max_fragment: Some(256), ..Server::default() });
    let t = transcript13::parse(&r.sent, &r.received).unwrap();
    let schedule = r.client.key_schedule().unwrap();
    let secret = |s: &Secret| -> [u8; 32] { s.as_bytes().try_into().unwrap() };
    let (c, s) = (secret(&schedule.handshake_traffic.client), secret(&schedule.handshake_traffic.server));
    let handshake = t.read_handshake(&c, &s, &r.roots, "localhost", UnixTime::now()).unwrap();
    assert!(handshake.handshake_records[1] > handshake.handshake_records[0], "{:?}", handshake.handshake_records);
    let application = schedule.application_traffic.as_ref().unwrap();
    let (_, request) =
        read_records(t.suite(), &application.client, application_records(&t, &handshake, Direction::Sent)).unwrap();
    let (_, response) =
        read_records(t.suite(), &application.server, application_records(&t, &handshake, Direction::Received)).unwrap();
    assert_eq!((&request[..], &response[..]), (&b"GET / HTTP/1.1\r\n\r\n"[..], &b"HTTP/1.1 200 OK\r\n\r\nhello"[..]));
}

/// [`run`] on a relayed session, both directions by the fast path: the verifier decrypts
/// both with the opened keys. A prover that opens a key other than the one derived in ZK
/// from the committed pad states is refused by the opening's MAC check.
#[test]
fn run_opens_the_derived_keys_and_refuses_another_key() {
    use crate::protocol::observe::tls13::{self as transcript13, tests::relay};
    use crate::protocol::prove::tls12::{with_cheat, ProofCheat};
    use crate::tls::tls13::client::tests::Server;
    let r = relay(Server::default());
    let t = transcript13::parse(&r.sent, &r.received).unwrap();
    let schedule = r.client.key_schedule().unwrap();
    let hs: [u8; 32] = schedule.handshake_secret.as_bytes().try_into().unwrap();
    let read = |s: &HandshakeSecrets| t.read_handshake(&s.client, &s.server, &r.roots, "localhost", UnixTime::now());
    let secrets = HandshakeSecrets {
        client: schedule.handshake_traffic.client.as_bytes().to_vec(),
        server: schedule.handshake_traffic.server.as_bytes().to_vec(),
    };
    let handshake = read(&secrets).unwrap();
    let application = schedule.application_traffic.as_ref().unwrap();
    let (sent, request) =
        read_records(t.suite(), &application.client, application_records(&t, &handshake, Direction::Sent)).unwrap();
    let (received, response) =
        read_records(t.suite(), &application.server, application_records(&t, &handshake, Direction::Received)).unwrap();
    assert_eq!(response, b"HTTP/1.1 200 OK\r\n\r\nhello");
    let shapes = RecordShapes { sent, received };
    let plan = RevealPlan {
        sent: vec![0..request.len() as u64],
        received: vec![0..response.len() as u64],
        ..Default::default()
    };
    let inputs = PublicInputs13::new(&t, &plan, &shapes);
    // The fast path is the whole direction revealed, and only that.
    let partial = RevealPlan { received: vec![0..1], ..plan.clone() };
    assert_eq!(
        (inputs.fast(0), inputs.fast(1), PublicInputs13::new(&t, &partial, &shapes).fast(1)),
        (true, true, false)
    );
    let prove_with = |cheat: ProofCheat, inputs: &PublicInputs13<'_>, blinders: &[[u8; 16]]| {
        let (mut prover, mut verifier) = ideal_parties(Cheat::default());
        with_cheat(cheat, || run_both(&mut prover, &mut verifier, &hs, blinders, inputs, &handshake, read).1)
    };
    let prove = |cheat: ProofCheat| prove_with(cheat, &inputs, &[]);
    let opened = prove(ProofCheat::default()).expect("an honest prover");
    // What a fast-path session consumes is what the prover asks both sides to preprocess
    // for TLS 1.3 (to within 10%, so that no LPN iteration runs after the TLS session).
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (proven, _) = run_both(&mut prover, &mut verifier, &hs, &[], &inputs, &handshake, read);
    proven.unwrap();
    let used = prover.cot().issued();
    let asked = crate::protocol::prove::tls12::derivation_cots(Suite13::Aes128GcmSha256, 0);
    assert!(used <= asked && used * 10 >= asked * 9, "{used} COTs used, {asked} preprocessed");
    let aead = t.suite().aead();
    for (side, d, want) in [(0, Direction::Sent, &request), (1, Direction::Received, &response)] {
        let records = application_records(&t, &opened.handshake, d);
        let got = crate::protocol::prove::tls13::check::recover(
            "",
            aead,
            records,
            inputs.shapes[side],
            inputs.reveal[side],
            &opened.records[side],
        )
        .unwrap();
        assert!(got.fast_path);
        assert_eq!(&got.bytes, want);
    }
    for side in 0..2 {
        let refused = prove(ProofCheat { fast_key: Some(side), ..Default::default() });
        assert!(
            matches!(refused, Err(Proof13Error::Proof(ProofError::OpeningMacMismatch))),
            "side {side}: {:?}",
            refused.map(|_| ())
        );
    }
    // A hash commitment in a wholly revealed direction keeps its key in ZK: the fast path
    // then opens that key, and a prover that opens another one is refused the same way.
    let committed = RevealPlan { commit_received: vec![0..5], ..plan.clone() };
    let inputs = PublicInputs13::new(&t, &committed, &shapes);
    let opened = prove_with(ProofCheat::default(), &inputs, &[[1; 16]]).expect("an honest prover");
    let records = application_records(&t, &opened.handshake, Direction::Received);
    let got = crate::protocol::prove::tls13::check::recover(
        "",
        aead,
        records,
        inputs.shapes[1],
        inputs.reveal[1],
        &opened.records[1],
    )
    .unwrap();
    assert!(got.fast_path && got.bytes == response && opened.commitments.len() == 1);
    let refused = prove_with(ProofCheat { fast_key: Some(1), ..Default::default() }, &inputs, &[[1; 16]]);
    assert!(matches!(refused, Err(Proof13Error::Proof(ProofError::OpeningMacMismatch))), "{:?}", refused.map(|_| ()));

    // A prover that commits the pad states of another MS: the proof holds, but the
    // traffic secrets it opens are not the server's, whose records then fail their tags.
    let opened = prove(ProofCheat { other_ms: true, ..Default::default() }).expect("the proof itself");
    for (side, d) in [(0, Direction::Sent), (1, Direction::Received)] {
        let records = application_records(&t, &opened.handshake, d);
        let refused = crate::protocol::prove::tls13::check::recover(
            "",
            aead,
            records,
            inputs.shapes[side],
            inputs.reveal[side],
            &opened.records[side],
        );
        assert!(matches!(refused, Err(Check13Error::BadTag { record: 0 })), "side {side}: {:?}", refused.map(|_| ()));
    }

    // Without a server record after its Finished nothing would bind MS: refused.
    let mut cut = r.received.clone();
    let last = application_records(&t, &handshake, Direction::Received).iter().map(|rec| 5 + rec.len()).sum::<usize>();
    cut.truncate(cut.len() - last);
    let t = transcript13::parse(&r.sent, &cut).unwrap();
    let shapes = RecordShapes { sent: shapes.sent.clone(), received: vec![] };
    let plan = RevealPlan { received: vec![], ..plan };
    let inputs = PublicInputs13::new(&t, &plan, &shapes);
    let read = |s: &HandshakeSecrets| t.read_handshake(&s.client, &s.server, &r.roots, "localhost", UnixTime::now());
    let handshake = read(&secrets).unwrap();
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (_, refused) = run_both(&mut prover, &mut verifier, &hs, &[], &inputs, &handshake, read);
    assert!(matches!(refused, Err(Proof13Error::NoServerRecord)), "{:?}", refused.map(|_| ()));
}

/// The ZK path's keystream for positions of several records, in the same block index of
/// consecutive records: each byte comes from its own record's nonce, as AES computes it.
/// Two directions share the batches, each on its own key and IV.
#[test]
fn open_records_proves_each_records_keystream_on_its_own_nonce() {
    use aes::cipher::{BlockEncrypt, KeyInit};
    let keys = [([5u8; 16], [6u8; 12]), ([7u8; 16], [8u8; 12])];
    let positions = [vec![(0, vec![1, 2, 17]), (1, vec![0, 3]), (2, vec![15, 16])], vec![(0, vec![4, 40])]];
    let records = [3, 1];
    let (mut prover, mut verifier) = ideal_parties(Cheat::default());
    let (a, b) = memory_pair(MAX_MESSAGE);
    fn committed<B: Backend>(b: &mut B, key: Option<&[u8]>, iv: Option<&[u8]>) -> DirectionKey<B> {
        DirectionKey { key: commit_bytes(b, key, 16), iv: commit_bytes(b, iv, 12) }
    }
    fn directions<'a, B: Backend>(
        k: &'a [DirectionKey<B>; 2],
        records: [usize; 2],
        positions: &'a [Vec<(usize, Vec<usize>)>; 2],
    ) -> Vec<DirectionRecords<'a, B>> {
        (0..2)
            .map(|d| DirectionRecords { key: &k[d], fast: false, records: records[d], positions: &positions[d] })
            .collect()
    }
    let p = async {
        let mut a = a;
        let k = prover
            .run_batch_deferred(&mut a, &mut |b| keys.map(|(key, iv)| committed(b, Some(&key), Some(&iv))))
            .await?;
        open_records(&mut prover, &mut a, AeadAlg::Aes128Gcm, &directions(&k, records, &positions)).await
    };
    let v = async {
        let mut b = b;
        let k = verifier.run_batch_deferred(&mut b, &mut |b| [(); 2].map(|_| committed(b, None, None))).await?;
        open_records(&mut verifier, &mut b, AeadAlg::Aes128Gcm, &directions(&k, records, &positions)).await
    };
    let (_, verified) = futures::executor::block_on(async { futures::join!(p, v) });
    for (d, opened) in verified.unwrap().into_iter().enumerate() {
        let OpenedRecords::Keystream { keystream, j0, .. } = opened else { panic!("the ZK path") };
        let (key, iv) = keys[d];
        let aes = aes::Aes128::new(&key.into());
        let block = |seq: u64, counter: u32| {
            let mut b = aes::Block::default();
            b[..12].copy_from_slice(&crate::tls::tls13::record::nonce(&iv, seq));
            b[12..].copy_from_slice(&counter.to_be_bytes());
            aes.encrypt_block(&mut b);
            b
        };
        let expected: Vec<u8> = positions[d]
            .iter()
            .flat_map(|(seq, ps)| {
                ps.iter().map(|p| block(*seq as u64, 2 + (p / 16) as u32)[p % 16]).collect::<Vec<u8>>()
            })
            .collect();
        assert_eq!(keystream, expected, "direction {d}");
        assert_eq!(j0, (0..records[d] as u64).map(|seq| <[u8; 16]>::from(block(seq, 1))).collect::<Vec<_>>());
    }
}

/// A session of `suite` (rustls chose it) with part of each direction revealed, by the ZK
/// path: the verifier checks every record's tag and reads the revealed bytes, the hidden
/// ones stay zeros, and a hash commitment opens with its blinder. A record altered on the
/// way is refused by its tag. Then both directions revealed whole: the fast path.
fn a_session_is_proven_by_both_paths(suite: rustls::SupportedCipherSuite, ours: Suite13) {
    use crate::protocol::observe::tls13::{self as transcript13, tests::relay};
    use crate::tls::tls13::client::tests::Server;
    let r = relay(Server { suites: vec![suite], ..Server::default() });
    let t = transcript13::parse(&r.sent, &r.received).unwrap();
    assert_eq!(t.suite(), ours);
    let schedule = r.client.key_schedule().unwrap();
    let hs = schedule.handshake_secret.as_bytes();
    assert_eq!(hs.len(), ours.hash().output_len());
    let read = |s: &HandshakeSecrets| t.read_handshake(&s.client, &s.server, &r.roots, "localhost", UnixTime::now());
    let secrets = HandshakeSecrets {
        client: schedule.handshake_traffic.client.as_bytes().to_vec(),
        server: schedule.handshake_traffic.server.as_bytes().to_vec(),
    };
    let handshake = read(&secrets).unwrap();
    let application = schedule.application_traffic.as_ref().unwrap();
    let (sent, request) =
        read_records(t.suite(), &application.client, application_records(&t, &handshake, Direction::Sent)).unwrap();
    let (received, response) =
        read_records(t.suite(), &application.server, application_records(&t, &handshake, Direction::Received)).unwrap();
    assert_eq!((&request[..], &response[..]), (&b"GET / HTTP/1.1\r\n\r\n"[..], &b"HTTP/1.1 200 OK\r\n\r\nhello"[..]));
    let shapes = RecordShapes { sent, received };
    // the request's first 4 bytes and the response's status line revealed, "hello" committed
    let plan = RevealPlan {
        sent: vec![0..4, 5..18],
        received: vec![0..15],
        commit_sent: vec![],
        commit_received: vec![19..24],
        ..Default::default()
    };
    let prove = |t: &Transcript13, plan: &RevealPlan| {
        let inputs = PublicInputs13 { transcript: t, ..PublicInputs13::new(t, plan, &shapes) };
        let (mut prover, mut verifier) = ideal_parties(Cheat::default());
        let blinders = vec![[9; 16]; plan.commit_received.len()];
        let (_, verified) = run_both(&mut prover, &mut verifier, hs, &blinders, &inputs, &handshake, read);
        verified.map(|opened| {
            let recovered = [Direction::Sent, Direction::Received].map(|d| {
                let side = if d == Direction::Sent { 0 } else { 1 };
                let records = application_records(t, &opened.handshake, d);
                crate::protocol::prove::tls13::check::recover(
                    "",
                    t.suite().aead(),
                    records,
                    inputs.shapes[side],
                    inputs.reveal[side],
                    &opened.records[side],
                )
            });
            (recovered, opened.commitments, prover.cot().issued())
        })
    };
    // A prover that hides a line break of the request is refused by the proof.
    let line_break_hidden = RevealPlan { sent: vec![0..4, 5..14], ..plan.clone() };
    let refused = prove(&t, &line_break_hidden).map(|_| ());
    assert!(matches!(refused, Err(Proof13Error::Proof(ProofError::HiddenLineBreak))), "{ours:?}: {refused:?}");
    let ([sent, received], commitments, _) = prove(&t, &plan).expect("an honest prover");
    let (sent, received) =
        (sent.expect("the request's tags and bytes"), received.expect("the response's tags and bytes"));
    assert!(!sent.fast_path && !received.fast_path);
    assert_eq!((&sent.bytes[..4], &sent.bytes[5..]), (&b"GET "[..], &b" HTTP/1.1\r\n\r\n"[..]));
    assert_eq!(sent.bytes[4], 0, "the path stays hidden");
    assert_eq!(&received.bytes[..15], b"HTTP/1.1 200 OK");
    assert!(received.bytes[15..].iter().all(|&x| x == 0), "the rest of the response stays hidden");
    use sha2::Digest;
    assert_eq!(commitments[0].digest, <[u8; 32]>::from(sha2::Sha256::digest([&b"hello"[..], &[9; 16]].concat())));

    // A statement about the hidden "hello": proven when it holds, refused when it does not.
    let stated = |text: &str| RevealPlan {
        statements: vec![crate::protocol::disclose::statement::StatementPlan {
            exchange: 1,
            direction: crate::protocol::Direction::Received,
            statement: text.parse().unwrap(),
            value: vec![19..24],
        }],
        ..plan.clone()
    };
    let ([sent, received], _, _) = prove(&t, &stated("greeting == \"hello\"")).expect("a true statement");
    sent.expect("the request under a statement");
    received.expect("the response under a statement");
    let refused = prove(&t, &stated("greeting == \"world\"")).map(|_| ());
    assert!(matches!(refused, Err(Proof13Error::Proof(ProofError::StatementNotProven(1)))), "{ours:?}: {refused:?}");

    // The response record (the last, 41 bytes) with a ciphertext byte altered: its tag.
    let mut tampered = r.received.clone();
    let at = tampered.len() - 30;
    tampered[at] ^= 1;
    let t2 = transcript13::parse(&r.sent, &tampered).unwrap();
    let ([_, received], _, _) = prove(&t2, &plan).expect("the proof itself");
    assert!(matches!(received, Err(Check13Error::BadTag { .. })), "{:?}", received.map(|_| ()));

    // A prover that commits the pad states of another MS: the keys proven in ZK are not the
    // server's, and the server's records fail their tags under them. (Under those keys the
    // request's hidden byte is a random one: when it comes out CR or LF, 2 times in 256, the
    // proof of no hidden line break refuses the session first.)
    use crate::protocol::prove::tls12::{with_cheat, ProofCheat};
    let cheated = with_cheat(ProofCheat { other_ms: true, ..Default::default() }, || prove(&t, &plan));
    match cheated {
        Err(Proof13Error::Proof(ProofError::HiddenLineBreak)) => {}
        Err(e) => panic!("{ours:?}: the proof itself failed: {e:?}"),
        Ok(([sent, received], _, _)) => {
            for side in [sent.map(|_| ()), received.map(|_| ())] {
                assert!(matches!(side, Err(Check13Error::BadTag { record: 0 })), "{side:?}");
            }
        }
    }

    let whole = RevealPlan {
        sent: vec![0..request.len() as u64],
        received: vec![0..response.len() as u64],
        ..Default::default()
    };
    let ([sent, received], _, used) = prove(&t, &whole).expect("an honest prover");
    // A session of this suite consumes what the prover asks both sides to preprocess for
    // it (to within 10%, so that no LPN iteration runs after the TLS session), for each
    // number of directions not wholly revealed (here: the response's nothing, the
    // request's all but its line breaks, which it may not hide).
    let line_breaks = RevealPlan { sent: vec![14..request.len() as u64], received: vec![], ..whole.clone() };
    assert_eq!(&request[14..], b"\r\n\r\n");
    for (hidden, plan) in [(0, whole.clone()), (1, RevealPlan { received: vec![], ..whole.clone() }), (2, line_breaks)]
    {
        let used = if hidden == 0 { used } else { prove(&t, &plan).expect("an honest prover").2 };
        let request_cots = match hidden {
            2 => {
                crate::protocol::prove::tls12::keystream_cots_of(ours, request.len())
                    + crate::protocol::prove::tls12::line_break_cots_of(ours, 14)
            }
            _ => 0,
        };
        let asked = crate::protocol::prove::tls12::derivation_cots(ours, hidden) + request_cots;
        // (the request's proofs are asked for by the blocks they may touch, at most)
        assert!(
            used <= asked && used * 10 >= (asked - request_cots) * 9,
            "{ours:?}, {hidden} hidden: {used} COTs used, {asked} preprocessed"
        );
        assert!(asked - request_cots <= crate::protocol::prove::tls12::MOST_DERIVATION_COTS, "the verifier's limit");
    }
    // A request on the ZK path, revealed but for its path: its keystream and its proof of
    // no hidden line break are within what the prover asks for them too, which the
    // verifier's limit allows.
    let redacted = RevealPlan { sent: vec![0..4, 5..request.len() as u64], ..whole.clone() };
    let used = prove(&t, &redacted).expect("an honest prover").2;
    let keystream = crate::protocol::prove::tls12::keystream_cots_of(ours, request.len())
        + crate::protocol::prove::tls12::line_break_cots_of(ours, 1);
    let asked = crate::protocol::prove::tls12::preprocess_cots(
        crate::protocol::prove::tls12::derivation_cots(ours, 1),
        keystream,
        false,
    );
    assert!(used <= asked, "{ours:?}: {used} COTs used, {asked} preprocessed");
    assert!(
        keystream
            <= crate::protocol::prove::tls12::most_keystream_cots(request.len())
                + crate::protocol::prove::tls12::most_line_break_cots(1)
    );
    let (sent, received) = (sent.expect("the request"), received.expect("the response"));
    assert!(sent.fast_path && received.fast_path);
    assert_eq!((sent.bytes, received.bytes), (request, response));
}

#[test]
fn an_aes128_session_is_proven_by_both_paths() {
    a_session_is_proven_by_both_paths(
        rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256,
        Suite13::Aes128GcmSha256,
    );
}

#[test]
fn a_chacha20_session_is_proven_by_both_paths() {
    a_session_is_proven_by_both_paths(
        rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        Suite13::ChaCha20Poly1305Sha256,
    );
}

/// TLS_AES_256_GCM_SHA384: the derivation on SHA-384, the keystream of AES-256.
#[test]
fn an_aes256_sha384_session_is_proven_by_both_paths() {
    a_session_is_proven_by_both_paths(
        rustls::crypto::ring::cipher_suite::TLS13_AES_256_GCM_SHA384,
        Suite13::Aes256GcmSha384,
    );
}
