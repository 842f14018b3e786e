//! MPC mode's two-party key exchange, timed (part of `tlsproof bench mpc`): COTs by KOS, the
//! two-party ECDH to premaster shares, then the end of the handshake ([`crate::mpc::handshake`]):
//! the garbled key derivation and the client Finished record sealed by both (the server's
//! Finished is checked after the connection, by the transcript proof). Each party is a
//! function of its own channel end. In memory both parties run in one thread (every message
//! serialised and counted); then over the emulated cable link, each party on a thread of its
//! own (a Web Worker in the browser). The results are checked against the native key schedule.
//! Natively, it ends with a whole MPC-mode session against the fixture server ([`session`]).

use crate::bench::engines::zk::{Figure, Platform};
use crate::channel::{memory_pair, Channel};
use crate::gc::Garbler;
use crate::mpc::ecdh::{
    coordinates, random_scalar, run_prover, run_verifier, share_point, EcdhProver, EcdhVerifier, ROUND_COTS,
};
use crate::mpc::ecdh::{ReceiverCots, SenderCots};
use crate::mpc::fp::Fp;
use crate::mpc::garbled::{EvaluatorParty, GarblerParty};
use crate::mpc::ghash::cots_for_powers;
use crate::mpc::handshake::{
    client_finished_prover, client_finished_verifier, powers_for_records, HandshakeInputs, INPUT_COTS,
};
use crate::mpc::kdf::KdfInputs;
use crate::mpc::ole::OleField;
use crate::ot::{CotReceiver, CotSender, KosReceiver, KosSender};
use crate::primitives::field::F128;
use crate::tls::codec::TLS12;
use crate::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
use crate::tls::keys::{extended_master_secret, key_block, verify_data, PreMasterSecret};
use crate::zk::MAX_MESSAGE;
use futures::executor::block_on;
use futures::future::join;
use p256::{AffinePoint, ProjectivePoint, Scalar};

/// What both parties know (the handshake's public values) and each one's scalar share.
#[derive(Clone)]
struct Setup {
    inputs: KdfInputs,
    server: AffinePoint,
    d: [Scalar; 2],
}

/// The prover's view of one exchange: when each part ended (from its start) and its results.
struct ProverRun {
    ends: [f64; 3],
    share: Fp,
    client_finished: Vec<u8>,
    bytes: [u64; 3],
}

const ECDH_COTS: usize = ROUND_COTS[0] + ROUND_COTS[1] + ROUND_COTS[2];
/// The client Finished record's GHASH powers (its 16-byte message).
fn finished_powers() -> usize {
    powers_for_records(16)
}

fn cots() -> usize {
    ECDH_COTS + INPUT_COTS + cots_for_powers(finished_powers())
}

/// The prover: COT sender under the garbling Δ, ECDH party A, garbler.
async fn prover<C: Channel>(ch: &mut C, platform: &Platform, s: &Setup) -> Result<ProverRun, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let t0 = (platform.now)();
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    let delta = F128(gp.garbler().delta());
    let keys = KosSender::with_delta(delta).extend(ch, cots()).await.map_err(|x| e(&x))?;
    let (t1, b1) = ((platform.now)(), ch.bytes_sent() + ch.bytes_received());
    let a = EcdhProver::new(&share_point(&s.d[0], &s.server)).map_err(|x| e(&x))?;
    let share = run_prover(ch, a, delta, &keys[..ECDH_COTS], 0).await.map_err(|x| e(&x))?;
    let (t2, b2) = ((platform.now)(), ch.bytes_sent() + ch.bytes_received());
    let input_keys: Vec<u128> = keys[ECDH_COTS..ECDH_COTS + INPUT_COTS].iter().map(|k| k.0).collect();
    let first = (ECDH_COTS + INPUT_COTS) as u64;
    let ole = SenderCots { delta, keys: &keys[ECDH_COTS + INPUT_COTS..], first };
    let (client_finished, _, _) = client_finished_prover(
        &mut gp,
        ch,
        &HandshakeInputs::new(zeroize::Zeroizing::new(share.to_be_bytes())),
        &input_keys,
        ole,
        &s.inputs,
        finished_powers(),
    )
    .await
    .map_err(|x| e(&x))?;
    let (t3, b3) = ((platform.now)(), ch.bytes_sent() + ch.bytes_received());
    Ok(ProverRun { ends: [t1 - t0, t2 - t0, t3 - t0], share, client_finished, bytes: [b1, b2 - b1, b3 - b2] })
}

/// The verifier: COT receiver, ECDH party B, evaluator. Returns its share and the phases run.
async fn verifier<C: Channel>(ch: &mut C, s: &Setup) -> Result<(Fp, usize), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (choices, macs) = KosReceiver::new().extend(ch, cots()).await.map_err(|x| e(&x))?;
    let b = EcdhVerifier::new(&share_point(&s.d[1], &s.server)).map_err(|x| e(&x))?;
    let share = run_verifier(ch, b, &choices[..ECDH_COTS], &macs[..ECDH_COTS], 0).await.map_err(|x| e(&x))?;
    let input = ECDH_COTS..ECDH_COTS + INPUT_COTS;
    let input_macs: Vec<u128> = macs[input.clone()].iter().map(|m| m.0).collect();
    let first = (ECDH_COTS + INPUT_COTS) as u64;
    let ole = ReceiverCots { choices: &choices[input.end..], macs: &macs[input.end..], first };
    let mut ep = EvaluatorParty::new();
    let v_share = share.to_be_bytes();
    client_finished_verifier(&mut ep, ch, &v_share, (&choices[input], &input_macs), ole, &s.inputs, finished_powers())
        .await
        .map_err(|x| e(&x))?;
    Ok((share, ep.revealed().len() + ep.for_verifier().len()))
}

/// The premaster secret as the server computes it: its scalar times the client key share
/// (d₀ + d₁)·G, that is (d₀ + d₁) times its own key share.
fn server_premaster(d: &[Scalar; 2], server: &AffinePoint) -> Option<Fp> {
    coordinates(&share_point(&(d[0] + d[1]), server)).map(|c| c.0)
}

/// The exchange's results against the native key schedule: the shares add up, and the client
/// Finished record opens under the server's key with the right verify_data.
fn check(s: &Setup, p: &ProverRun, v_share: Fp) -> Result<(), String> {
    let pms = server_premaster(&s.d, &s.server).ok_or("the shared point is at infinity")?;
    if p.share + v_share != pms {
        return Err("the ECDH's premaster shares do not add up".into());
    }
    let (ms, kb) = server_keys(&s.inputs, pms);
    let mut server = AesGcmRecordCrypto::new(&kb.client_write_key, &kb.client_write_iv).map_err(|e| e.to_string())?;
    let opened = server
        .open(0, 22, TLS12, &p.client_finished)
        .map_err(|_| "the client Finished record does not open under the server's key")?;
    if opened.get(4..) != Some(&verify_data(&ms, b"client finished", &s.inputs.client_finished_hash)[..]) {
        return Err("the client Finished holds a wrong verify_data".into());
    }
    Ok(())
}

/// The master secret and key block the server derives.
fn server_keys(inputs: &KdfInputs, pms: Fp) -> (crate::tls::keys::MasterSecret, crate::tls::keys::KeyBlock) {
    let ms = extended_master_secret(
        &PreMasterSecret::new(pms.to_be_bytes().to_vec()),
        &inputs.session_hash.unwrap_or_default(),
    );
    let kb = key_block(&ms, &inputs.client_random, &inputs.server_random);
    (ms, kb)
}

/// The figures of one key exchange in memory and (natively) one over the cable link.
pub(crate) fn run(platform: &Platform, log: &mut dyn FnMut(&str)) -> Result<Vec<Figure>, String> {
    let mut figures = Vec::new();
    let mut put = |name: &str, value: f64, unit: &str| {
        log(&format!("{name:<58} {value:>14.2} {unit}"));
        figures.push(Figure { name: name.into(), value, unit: unit.into() });
    };
    let mut rng = rand::rng();
    let mut random = || rand::Rng::random::<[u8; 32]>(&mut rng);
    let inputs = KdfInputs {
        group: crate::mpc::shared_secret::SharedGroup::P256,
        client_random: random(),
        server_random: random(),
        session_hash: Some(random()),
        client_finished_hash: random(),
    };
    let server = (ProjectivePoint::GENERATOR * random_scalar()).to_affine();
    let setup = Setup { inputs, server, d: [random_scalar(), random_scalar()] };

    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (p, v) = block_on(join(prover(&mut a, platform, &setup), verifier(&mut b, &setup)));
    let (p, (v_share, phases)) = (p?, v?);
    check(&setup, &p, v_share)?;
    let [t1, t2, t3] = p.ends;
    let mb = |x: u64| x as f64 / 1e6;
    put(&format!("MPC COTs by KOS for the key exchange ({} COTs)", cots()), t1 * 1e3, "ms");
    let oles = ECDH_COTS / <Fp as OleField>::BITS;
    put(&format!("MPC 2PC ECDH, P-256 ({oles} OLEs over GF(p))"), (t2 - t1) * 1e3, "ms");
    put("MPC OLEs over GF(p), in the ECDH", oles as f64 / (t2 - t1), "OLE/s");
    put(&format!("MPC key derivation and the client Finished record ({phases} phases)"), (t3 - t2) * 1e3, "ms");
    put("MPC whole key exchange (COTs, ECDH, key derivation, client Finished)", t3 * 1e3, "ms");
    put("MPC key exchange bytes: COTs", mb(p.bytes[0]), "MB");
    put("MPC key exchange bytes: ECDH", mb(p.bytes[1]), "MB");
    put("MPC key exchange bytes: key derivation and client Finished", mb(p.bytes[2]), "MB");
    put("MPC key exchange bytes: total", mb(p.bytes.iter().sum()), "MB");

    // The GHASH powers one 1 KiB request record needs (additional data, 64 blocks, lengths).
    let max_power = 66;
    let n = crate::mpc::ghash::cots_for_powers(max_power);
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let t0 = (platform.now)();
    let delta = F128(rand::random());
    let (keys, cots) =
        block_on(join(KosSender::with_delta(delta).extend(&mut a, n), KosReceiver::new().extend(&mut b, n)));
    let (keys, (choices, macs)) = (keys.map_err(|e| e.to_string())?, cots.map_err(|e| e.to_string())?);
    let cot_bytes = a.bytes_sent() + a.bytes_received();
    let h: u128 = rand::random();
    let h_a: u128 = rand::random();
    let (pa, pb) = block_on(join(
        crate::mpc::ghash::powers_a(&mut a, F128(h_a), max_power, delta, &keys, 0),
        crate::mpc::ghash::powers_b(&mut b, F128(h ^ h_a), max_power, &choices, &macs, 0),
    ));
    let t1 = (platform.now)();
    let (pa, pb) = (pa.map_err(|e| e.to_string())?, pb.map_err(|e| e.to_string())?);
    if pa.power(max_power).zip(pb.power(max_power)).map(|(x, y)| x + y) != Some(F128(h).pow(max_power as u128)) {
        return Err("the GHASH power shares do not add up".into());
    }
    put(&format!("MPC GHASH powers H..H^{max_power} (one 1 KiB record; COTs included)"), (t1 - t0) * 1e3, "ms");
    put(
        &format!("MPC GHASH powers H..H^{max_power}: bytes (COTs {:.3} MB)", mb(cot_bytes)),
        mb(a.bytes_sent() + a.bytes_received()),
        "MB",
    );

    // Over the cable link, each party on a thread of its own (natively) or on one of rayon's
    // Web Workers (in the browser, where the pool has at least two).
    use crate::bench::engines::zk::{link, LINK_CASES};
    let &(name, rtt_ms, mbps, _) = LINK_CASES.iter().find(|c| c.0.starts_with("cable")).ok_or("no cable link case")?;
    let (mut a, mut b) = link::pair(rtt_ms, mbps, MAX_MESSAGE, platform.now);
    let (p, v) = super::both(|| block_on(prover(&mut a, platform, &setup)), || block_on(verifier(&mut b, &setup)));
    let (p, (v_share, _)) = (p?, v?);
    check(&setup, &p, v_share)?;
    let [t1, t2, t3] = p.ends;
    put(&format!("MPC key exchange over {name}: COTs"), t1 * 1e3, "ms");
    put(&format!("MPC key exchange over {name}: ECDH"), (t2 - t1) * 1e3, "ms");
    put(&format!("MPC key exchange over {name}: key derivation and client Finished"), (t3 - t2) * 1e3, "ms");
    put(&format!("MPC key exchange over {name}: whole"), t3 * 1e3, "ms");
    #[cfg(not(target_arch = "wasm32"))]
    figures.extend(session(platform, log)?);
    Ok(figures)
}

/// A whole MPC-mode session against the fixture server on 127.0.0.1, natively: the
/// connection in two parties (with a 1 KB request carrying a token), the proof of its garbling,
/// then the transcript proof (the response by the fast path, the token hidden by the ZK
/// path), the two parties on two threads over the emulated cable link (the server unshaped).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn session(platform: &Platform, log: &mut dyn FnMut(&str)) -> Result<Vec<Figure>, String> {
    use crate::bench::engines::zk::{link, LINK_CASES};
    use crate::mpc::connection::{
        connect_prover, connect_verifier, prepare_prover, prepare_verifier, two_party_config, ConnectionLimits,
        TwoPartyTls,
    };
    use crate::mpc::reproof;
    use crate::ot::{FerretReceiver, FerretSender};
    use crate::primitives::prg::PrgKind;
    use crate::protocol::messages::RevealPlan;
    use crate::protocol::observe::tls12 as transcript;
    use crate::protocol::prove::tls12::{self as proof, PublicInputs};
    use crate::tls::{Client, Direction, RootStore};
    use crate::zk::{Prover, Verifier};
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().map_err(|x| e(&x))?;
    let fixture = rt
        .block_on(crate::fixture::FixtureServer::bind(
            "127.0.0.1:0".parse().map_err(|x| e(&x))?,
            crate::fixture::KeyType::EcdsaP256,
            30,
        ))
        .map_err(|x| e(&x))?;
    let port = fixture.local_addr().map_err(|x| e(&x))?.port();
    let roots = RootStore::from_pem(&fixture.certs.ca_pem).map_err(|x| e(&x))?;
    rt.spawn(fixture.run());
    let token = "t".repeat(40);
    let padding = "p".repeat(1024 - 120 - token.len());
    let request = crate::http::RequestBuilder::get("localhost", "/bytes?n=1024")
        .header("Authorization", &format!("Bearer {token}"))
        .header("X-Padding", &padding)
        .build()
        .map_err(|x| e(&x))?
        .bytes;
    let at = request.windows(token.len()).position(|w| w == token.as_bytes()).ok_or("no token")? as u64;
    // COTs made before the connection, for its commitments and the proofs after it, as a
    // session asks for them (the request's keystream proven, the response by the fast path)
    let proof_cots = proof::preprocess_cots(proof::PREPROCESS_COTS, proof::keystream_cots(request.len()), false)
        + reproof::preprocess_cots(request.len(), false);
    // The request revealed but its token, the response whole.
    let plan = |recv_len: u64| RevealPlan {
        sent: vec![0..at, at + token.len() as u64..request.len() as u64],
        received: vec![0..recv_len],
        ..Default::default()
    };
    let limits = ConnectionLimits { max_sent: 4096, max_recv: 1 << 16 };
    let &(name, rtt_ms, mbps, _) = LINK_CASES.iter().find(|c| c.0.starts_with("cable")).ok_or("no cable link case")?;
    let (mut a, mut b) = link::pair(rtt_ms, mbps, MAX_MESSAGE, platform.now);
    let now = rustls_pki_types::UnixTime::now();
    let prg = PrgKind::fastest_here();
    let (p, v) = super::both(
        || {
            block_on(async {
                let t0 = (platform.now)();
                let mut zk = Prover::new(FerretReceiver::with_prg(prg));
                zk.preprocess(&mut a, proof_cots).await.map_err(|x| e(&x))?;
                let (tp, up0) = ((platform.now)(), a.bytes_sent());
                let prepared =
                    prepare_prover(&mut a, TwoPartyTls::Tls12, request.len(), limits).await.map_err(|x| e(&x))?;
                let (ta, upa) = ((platform.now)(), a.bytes_sent() - up0);
                let tcp = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|x| e(&x))?;
                tcp.set_nodelay(true).map_err(|x| e(&x))?;
                let mut server = futures::io::AllowStdIo::new(tcp);
                let client = Client::new(two_party_config(roots.clone()), "localhost", now).map_err(|x| e(&x))?;
                let conn = connect_prover(prepared, &mut a, &mut zk, &mut server, client, &request, limits, None)
                    .await
                    .map_err(|x| e(&x))?;
                let (t1, up1) = ((platform.now)(), a.bytes_sent() - up0);
                let v_share = reproof::prove(&mut zk, &mut a, &conn).await.map_err(|x| e(&x))?;
                let (t2, up2) = ((platform.now)(), a.bytes_sent() - up0);
                let raw = |d| conn.client.transcript().raw_bytes(d);
                let t = transcript::parse(&raw(Direction::Sent), &raw(Direction::Received)).map_err(|x| e(&x))?;
                let recv_len = proof::app_len(t.encrypted_records(Direction::Received));
                let plan = plan(recv_len);
                let ms = conn.master_secret(&v_share).map_err(|x| e(&x))?;
                proof::run(&mut zk, &mut a, Some(&ms.0), Some(&[]), &PublicInputs::new(&t, &plan), |cvd| {
                    t.server_finished_hash(cvd)
                })
                .await
                .map_err(|x| e(&x))?;
                let (t3, up3) = ((platform.now)(), a.bytes_sent() - up0);
                Ok::<_, String>((
                    [tp - t0, ta - tp, t1 - ta, t2 - t1, t3 - t2],
                    [up0, upa, up1 - upa, up2 - up1, up3 - up2],
                    a.bytes_received(),
                ))
            })
        },
        || {
            block_on(async {
                let mut zk = Verifier::new(FerretSender::with_prg(prg));
                zk.preprocess(&mut b, proof_cots).await.map_err(|x| e(&x))?;
                let prepared = prepare_verifier(&mut b, limits).await.map_err(|x| e(&x))?;
                let conn = connect_verifier(prepared, &mut b, &mut zk, roots.clone(), "localhost", || now, limits)
                    .await
                    .map_err(|x| e(&x))?;
                reproof::verify(&mut zk, &mut b, &conn).await.map_err(|x| e(&x))?;
                let raw = |d| conn.client.transcript().raw_bytes(d);
                let t = transcript::parse(&raw(Direction::Sent), &raw(Direction::Received)).map_err(|x| e(&x))?;
                t.validate_server(&roots, "localhost", now).map_err(|x| e(&x))?;
                let recv_len = proof::app_len(t.encrypted_records(Direction::Received));
                let plan = plan(recv_len);
                let opened = proof::run(&mut zk, &mut b, None, None, &PublicInputs::new(&t, &plan), |cvd| {
                    t.server_finished_hash(cvd)
                })
                .await
                .map_err(|x| e(&x))?;
                let received = crate::protocol::prove::tls12::check::recover(
                    "received",
                    t.encrypted_records(Direction::Received),
                    &opened.received,
                    &plan.received,
                )
                .map_err(|x| e(&x))?;
                Ok::<_, String>(received.bytes.len())
            })
        },
    );
    let ((times, up, down), got) = (p?, v?);
    if got < 1024 {
        return Err(format!("the verifier recovered {got} bytes of the response"));
    }
    let mut figures = Vec::new();
    let mut put = |what: &str, value: f64, unit: &str| {
        let name = format!("MPC session over {name}: {what}");
        log(&format!("{name:<58} {value:>14.2} {unit}"));
        figures.push(Figure { name, value, unit: unit.into() });
    };
    put(&format!("preprocess ({proof_cots} Ferret COTs)"), times[0] * 1e3, "ms");
    put("preprocess (the request garbled ahead, sent)", times[1] * 1e3, "ms");
    put("connection (1 KB request, 1 KB response)", times[2] * 1e3, "ms");
    put("proof of the garbling", times[3] * 1e3, "ms");
    put("transcript proof (fast path, token hidden)", times[4] * 1e3, "ms");
    put("total", times.iter().sum::<f64>() * 1e3, "ms");
    put("prover upload: preprocess (COTs)", up[0] as f64 / 1e6, "MB");
    put("prover upload: preprocess (garbled ahead)", up[1] as f64 / 1e6, "MB");
    put("prover upload: connection", up[2] as f64 / 1e6, "MB");
    put("prover upload: proofs", (up[3] + up[4]) as f64 / 1e6, "MB");
    put("prover upload: total", up.iter().sum::<u64>() as f64 / 1e6, "MB");
    put("prover download: total", down as f64 / 1e6, "MB");
    Ok(figures)
}
