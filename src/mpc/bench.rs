//! MPC mode's two-party key exchange, timed (part of `tlsproof bench mpc`): COTs by KOS, the
//! two-party ECDH to premaster shares, the garbled TLS 1.2 key derivation to the session keys
//! and both Finished values. Both parties run in one thread over an in-memory channel (every
//! message serialised and counted); the ECDH's messages are counted at their encoded size.
//! The results are checked against the native key schedule.

use super::ecdh::{coordinates, in_memory, random_scalar, ROUND_COTS};
use super::fp::Fp;
use super::garbled::{EvaluatorParty, GarblerParty};
use super::kdf::{derive, server_verify_data, KdfInputs};
use super::phases::Input;
use super::ole::OleField;
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
use p256::ProjectivePoint;

/// The figures of one key exchange.
pub fn run(platform: &Platform, log: &mut dyn FnMut(&str)) -> Result<Vec<Figure>, String> {
    let mut figures = Vec::new();
    let mut put = |name: &str, value: f64, unit: &str| {
        log(&format!("{name:<58} {value:>14.2} {unit}"));
        figures.push(Figure { name: name.into(), value, unit: unit.into() });
    };
    let mut rng = rand::rng();
    let inputs = KdfInputs {
        client_random: rand::Rng::random(&mut rng),
        server_random: rand::Rng::random(&mut rng),
        session_hash: Some(rand::Rng::random(&mut rng)),
        client_finished_hash: rand::Rng::random(&mut rng),
    };
    let server_finished_hash: [u8; 32] = rand::Rng::random(&mut rng);
    let (d1, d2, s) = (random_scalar(), random_scalar(), random_scalar());
    let server = (ProjectivePoint::GENERATOR * s).to_affine();

    let t0 = (platform.now)();
    let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
    let delta = F128(gp.garbler().delta());
    let ecdh_cots: usize = ROUND_COTS.iter().sum();
    let n = ecdh_cots + 256;
    let (mut a, mut b) = memory_pair(MAX_MESSAGE);
    let (keys, cots) = block_on(join(
        async { KosSender::with_delta(delta).extend(&mut a, n).await },
        async { KosReceiver::new().extend(&mut b, n).await },
    ));
    let keys = keys.map_err(|e| e.to_string())?;
    let (choices, macs) = cots.map_err(|e| e.to_string())?;
    let cot_bytes = a.bytes_sent() + b.bytes_sent();
    let t1 = (platform.now)();

    let (p_share, v_share, ecdh_bytes) = in_memory(&keys[..ecdh_cots], delta, &choices[..ecdh_cots], &macs[..ecdh_cots], &server, [&d1, &d2]).map_err(|e| e.to_string())?;
    let t2 = (platform.now)();

    let input_keys: Vec<u128> = keys[ecdh_cots..].iter().map(|k| k.0).collect();
    let input_macs: Vec<u128> = macs[ecdh_cots..].iter().map(|m| m.0).collect();
    let input_choices = &choices[ecdh_cots..];
    let (g, e) = block_on(join(
        async {
            let mine = gp.own_inputs(&mut a, &bytes_to_bits(&p_share.to_be_bytes())).await?;
            let theirs = gp.peer_inputs(&mut a, &input_keys).await?;
            let k = derive(&mut gp, &mut a, Input::Wires(&mine), Input::Wires(&theirs), &inputs).await?;
            server_verify_data(&mut gp, &mut a, &k, &server_finished_hash).await?;
            Ok::<_, super::phases::PhaseError>(k.client_verify_data)
        },
        async {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, 256).await?;
            let mine = ep.own_inputs(&mut b, &bytes_to_bits(&v_share.to_be_bytes()), input_choices, &input_macs).await?;
            let k = derive(&mut ep, &mut b, Input::Wires(&theirs), Input::Wires(&mine), &inputs).await?;
            server_verify_data(&mut ep, &mut b, &k, &server_finished_hash).await?;
            Ok::<_, super::phases::PhaseError>(ep.revealed().len())
        },
    ));
    let t3 = (platform.now)();
    let cvd = g.map_err(|e| e.to_string())?;
    let phases = e.map_err(|e| e.to_string())?;
    let gc_bytes = a.bytes_sent() + b.bytes_sent() - cot_bytes;

    let client = ProjectivePoint::GENERATOR * d1 + ProjectivePoint::GENERATOR * d2;
    let pms = coordinates(&(client * s)).ok_or("the shared point is at infinity")?.0;
    if p_share + v_share != pms {
        return Err("the ECDH's premaster shares do not add up".into());
    }
    let ms = extended_master_secret(&PreMasterSecret::new(pms.to_be_bytes().to_vec()), &inputs.session_hash.unwrap_or_default());
    if cvd != verify_data(&ms, b"client finished", &inputs.client_finished_hash) {
        return Err("the garbled key derivation gave a wrong client verify_data".into());
    }

    let mb = |x: u64| x as f64 / 1e6;
    put(&format!("MPC COTs by KOS for the key exchange ({n} COTs)"), (t1 - t0) * 1e3, "ms");
    let oles = ecdh_cots / <Fp as OleField>::BITS;
    put(&format!("MPC 2PC ECDH, P-256 ({oles} OLEs over GF(p))"), (t2 - t1) * 1e3, "ms");
    put("MPC OLEs over GF(p), in the ECDH", oles as f64 / (t2 - t1), "OLE/s");
    put(&format!("MPC garbled key derivation and both Finished ({phases} phases)"), (t3 - t2) * 1e3, "ms");
    put("MPC whole key exchange (COTs, ECDH, key derivation)", (t3 - t0) * 1e3, "ms");
    put("MPC key exchange bytes: COTs", mb(cot_bytes), "MB");
    put("MPC key exchange bytes: ECDH", mb(ecdh_bytes), "MB");
    put("MPC key exchange bytes: key derivation (tables, inputs, reveals)", mb(gc_bytes), "MB");
    put("MPC key exchange bytes: total", mb(cot_bytes + ecdh_bytes + gc_bytes), "MB");
    Ok(figures)
}
