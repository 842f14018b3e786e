//! MPC mode's two-party key exchange, timed (part of `tlsproof bench mpc`): COTs by KOS, the
//! two-party ECDH to premaster shares, the garbled TLS 1.2 key derivation to the session keys
//! and both Finished values, each party a function of its own channel end. In memory both
//! parties run in one thread (every message serialised and counted); then over the emulated
//! cable link, each party on a thread of its own (a Web Worker in the browser). The results are
//! checked against the native key schedule.

use super::ecdh::{coordinates, random_scalar, run_a, run_b, share_point, PartyA, PartyB, ROUND_COTS};
use super::fp::Fp;
use super::garbled::{EvaluatorParty, GarblerParty};
use super::kdf::{derive, server_verify_data, KdfInputs};
use super::ole::OleField;
use super::phases::Input;
use crate::channel::{memory_pair, Channel};
use crate::circuits::bytes_to_bits;
use crate::gc::Garbler;
use crate::ot::{CotReceiver, CotSender, KosReceiver, KosSender};
use crate::primitives::field::F128;
use crate::tls::keys::{extended_master_secret, verify_data, PreMasterSecret};
use crate::zk::bench::{Figure, Platform};
use crate::zk::MAX_MESSAGE;
use futures::executor::block_on;
use futures::future::join;
use p256::{AffinePoint, ProjectivePoint, Scalar};

/// What both parties know (the handshake's public values) and each one's scalar share.
#[derive(Clone)]
struct Setup {
    inputs: KdfInputs,
    server_finished_hash: [u8; 32],
    server: AffinePoint,
    d: [Scalar; 2],
}

/// The prover's view of one exchange: when each part ended (from its start) and its results.
struct ProverRun {
    ends: [f64; 3],
    share: Fp,
    client_verify_data: [u8; 12],
    bytes: [u64; 3],
}

const ECDH_COTS: usize = ROUND_COTS[0] + ROUND_COTS[1] + ROUND_COTS[2];
const COTS: usize = ECDH_COTS + 256;

/// The prover: COT sender under the garbling Δ, ECDH party A, garbler.
async fn prover<C: Channel>(ch: &mut C, platform: &Platform, s: &Setup) -> Result<ProverRun, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let t0 = (platform.now)();
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    let delta = F128(gp.garbler().delta());
    let keys = KosSender::with_delta(delta).extend(ch, COTS).await.map_err(|x| e(&x))?;
    let (t1, b1) = ((platform.now)(), ch.bytes_sent() + ch.bytes_received());
    let a = PartyA::new(&share_point(&s.d[0], &s.server)).map_err(|x| e(&x))?;
    let share = run_a(ch, a, delta, &keys[..ECDH_COTS], 0).await.map_err(|x| e(&x))?;
    let (t2, b2) = ((platform.now)(), ch.bytes_sent() + ch.bytes_received());
    let input_keys: Vec<u128> = keys[ECDH_COTS..].iter().map(|k| k.0).collect();
    let mine = gp.own_inputs(ch, &bytes_to_bits(&share.to_be_bytes())).await.map_err(|x| e(&x))?;
    let theirs = gp.peer_inputs(ch, &input_keys).await.map_err(|x| e(&x))?;
    let k = derive(&mut gp, ch, Input::Wires(&mine), Input::Wires(&theirs), &s.inputs).await.map_err(|x| e(&x))?;
    server_verify_data(&mut gp, ch, &k, &s.server_finished_hash).await.map_err(|x| e(&x))?;
    let (t3, b3) = ((platform.now)(), ch.bytes_sent() + ch.bytes_received());
    Ok(ProverRun { ends: [t1 - t0, t2 - t0, t3 - t0], share, client_verify_data: k.client_verify_data, bytes: [b1, b2 - b1, b3 - b2] })
}

/// The verifier: COT receiver, ECDH party B, evaluator. Returns its share and the phases run.
async fn verifier<C: Channel>(ch: &mut C, s: &Setup) -> Result<(Fp, usize), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (choices, macs) = KosReceiver::new().extend(ch, COTS).await.map_err(|x| e(&x))?;
    let b = PartyB::new(&share_point(&s.d[1], &s.server)).map_err(|x| e(&x))?;
    let share = run_b(ch, b, &choices[..ECDH_COTS], &macs[..ECDH_COTS], 0).await.map_err(|x| e(&x))?;
    let input_macs: Vec<u128> = macs[ECDH_COTS..].iter().map(|m| m.0).collect();
    let mut ep = EvaluatorParty::new();
    let theirs = ep.peer_inputs(ch, 256).await.map_err(|x| e(&x))?;
    let mine = ep.own_inputs(ch, &bytes_to_bits(&share.to_be_bytes()), &choices[ECDH_COTS..], &input_macs).await.map_err(|x| e(&x))?;
    let k = derive(&mut ep, ch, Input::Wires(&theirs), Input::Wires(&mine), &s.inputs).await.map_err(|x| e(&x))?;
    server_verify_data(&mut ep, ch, &k, &s.server_finished_hash).await.map_err(|x| e(&x))?;
    Ok((share, ep.revealed().len()))
}

/// The exchange's results against the native key schedule.
fn check(s: &Setup, p: &ProverRun, v_share: Fp) -> Result<(), String> {
    // The server's view: its scalar times the client key share (d₀ + d₁)·G, that is
    // (d₀ + d₁) times its own key share.
    let pms = coordinates(&share_point(&(s.d[0] + s.d[1]), &s.server)).ok_or("the shared point is at infinity")?.0;
    if p.share + v_share != pms {
        return Err("the ECDH's premaster shares do not add up".into());
    }
    let ms = extended_master_secret(&PreMasterSecret::new(pms.to_be_bytes().to_vec()), &s.inputs.session_hash.unwrap_or_default());
    if p.client_verify_data != verify_data(&ms, b"client finished", &s.inputs.client_finished_hash) {
        return Err("the garbled key derivation gave a wrong client verify_data".into());
    }
    Ok(())
}

/// The figures of one key exchange in memory and (natively) one over the cable link.
pub fn run(platform: &Platform, log: &mut dyn FnMut(&str)) -> Result<Vec<Figure>, String> {
    let mut figures = Vec::new();
    let mut put = |name: &str, value: f64, unit: &str| {
        log(&format!("{name:<58} {value:>14.2} {unit}"));
        figures.push(Figure { name: name.into(), value, unit: unit.into() });
    };
    let mut rng = rand::rng();
    let mut random = || rand::Rng::random::<[u8; 32]>(&mut rng);
    let setup = Setup {
        inputs: KdfInputs { client_random: random(), server_random: random(), session_hash: Some(random()), client_finished_hash: random() },
        server_finished_hash: random(),
        server: (ProjectivePoint::GENERATOR * random_scalar()).to_affine(),
        d: [random_scalar(), random_scalar()],
    };

    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (p, v) = block_on(join(prover(&mut a, platform, &setup), verifier(&mut b, &setup)));
    let (p, (v_share, phases)) = (p?, v?);
    check(&setup, &p, v_share)?;
    let [t1, t2, t3] = p.ends;
    let mb = |x: u64| x as f64 / 1e6;
    put(&format!("MPC COTs by KOS for the key exchange ({COTS} COTs)"), t1 * 1e3, "ms");
    let oles = ECDH_COTS / <Fp as OleField>::BITS;
    put(&format!("MPC 2PC ECDH, P-256 ({oles} OLEs over GF(p))"), (t2 - t1) * 1e3, "ms");
    put("MPC OLEs over GF(p), in the ECDH", oles as f64 / (t2 - t1), "OLE/s");
    put(&format!("MPC garbled key derivation and both Finished ({phases} phases)"), (t3 - t2) * 1e3, "ms");
    put("MPC whole key exchange (COTs, ECDH, key derivation)", t3 * 1e3, "ms");
    put("MPC key exchange bytes: COTs", mb(p.bytes[0]), "MB");
    put("MPC key exchange bytes: ECDH", mb(p.bytes[1]), "MB");
    put("MPC key exchange bytes: key derivation (tables, inputs, reveals)", mb(p.bytes[2]), "MB");
    put("MPC key exchange bytes: total", mb(p.bytes.iter().sum()), "MB");

    // The GHASH powers one 1 KiB request record needs (additional data, 64 blocks, lengths).
    let max_power = 66;
    let n = super::ghash::cots_for_powers(max_power);
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let t0 = (platform.now)();
    let delta = F128(rand::random());
    let (keys, cots) = block_on(join(KosSender::with_delta(delta).extend(&mut a, n), KosReceiver::new().extend(&mut b, n)));
    let (keys, (choices, macs)) = (keys.map_err(|e| e.to_string())?, cots.map_err(|e| e.to_string())?);
    let cot_bytes = a.bytes_sent() + a.bytes_received();
    let h: u128 = rand::random();
    let h_a: u128 = rand::random();
    let (pa, pb) = block_on(join(
        super::ghash::powers_a(&mut a, F128(h_a), max_power, delta, &keys, 0),
        super::ghash::powers_b(&mut b, F128(h ^ h_a), max_power, &choices, &macs, 0),
    ));
    let t1 = (platform.now)();
    let (pa, pb) = (pa.map_err(|e| e.to_string())?, pb.map_err(|e| e.to_string())?);
    if pa.power(max_power).zip(pb.power(max_power)).map(|(x, y)| x + y) != Some(F128(h).pow(max_power as u128)) {
        return Err("the GHASH power shares do not add up".into());
    }
    put(&format!("MPC GHASH powers H..H^{max_power} (one 1 KiB record; COTs included)"), (t1 - t0) * 1e3, "ms");
    put(&format!("MPC GHASH powers H..H^{max_power}: bytes (COTs {:.3} MB)", mb(cot_bytes)), mb(a.bytes_sent() + a.bytes_received()), "MB");

    // Over the cable link, each party on a thread of its own (natively) or on one of rayon's
    // Web Workers (in the browser, where the pool has at least two).
    use crate::zk::bench::{link, LINK_CASES};
    let &(name, rtt_ms, mbps, _) = LINK_CASES.iter().find(|c| c.0.starts_with("cable")).ok_or("no cable link case")?;
    let (mut a, mut b) = link::pair(rtt_ms, mbps, MAX_MESSAGE, platform.now);
    let (p, v) = crate::gc::bench::both(|| block_on(prover(&mut a, platform, &setup)), || block_on(verifier(&mut b, &setup)));
    let (p, (v_share, _)) = (p?, v?);
    check(&setup, &p, v_share)?;
    let [t1, t2, t3] = p.ends;
    put(&format!("MPC key exchange over {name}: COTs"), t1 * 1e3, "ms");
    put(&format!("MPC key exchange over {name}: ECDH"), (t2 - t1) * 1e3, "ms");
    put(&format!("MPC key exchange over {name}: key derivation"), (t3 - t2) * 1e3, "ms");
    put(&format!("MPC key exchange over {name}: whole"), t3 * 1e3, "ms");
    Ok(figures)
}
