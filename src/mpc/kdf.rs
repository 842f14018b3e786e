//! The TLS 1.2 key derivation for two parties (RFC 5246 §8.1, §6.3; RFC 7627), from additive
//! shares of the premaster secret (P-256 or X25519) to the session keys and the client Finished value,
//! written once over [`Phases`]: garbled during the session, re-proven in ZK after it.
//!
//! Each HMAC key's inner pad state is revealed (see [`PublicInner`] for why that is safe), and
//! so is the PRF's A(i) chain, so both parties compute every inner hash in the clear and only
//! the outer compressions run in the circuit: the two pad states of the premaster secret and
//! of the master secret (4 compressions of private blocks), then 10 outer compressions of
//! public blocks. The master secret, the write keys and IVs are never revealed; the client
//! verify_data is (the client sends it, under a key neither party knows). The server's
//! verify_data is not derived here: the transcript proof checks its Finished after the
//! connection.

use super::phases::{Input, PhaseError, Phases};
use super::shared_secret::SharedGroup;
use crate::channel::Channel;
use crate::circuits::hmac_prf::{hmac_key, hmac_public_inner, PublicInner};
use crate::circuits::sha256::{state_to_bytes, State};
use crate::circuits::Circuit;

/// The public inputs of the derivation.
#[derive(Clone, Debug)]
pub struct KdfInputs {
    /// The group of the key exchange, which fixes the premaster shares' field and encoding.
    pub group: SharedGroup,
    pub client_random: [u8; 32],
    pub server_random: [u8; 32],
    /// The RFC 7627 session hash when the server agreed to the extended master secret.
    pub session_hash: Option<[u8; 32]>,
    /// The handshake hash the client Finished covers (every message before it).
    pub client_finished_hash: [u8; 32],
}

/// What the derivation leaves: the key material as circuit wires and the public values.
pub(crate) struct SessionKeys<B: Circuit> {
    pub client_write_key: Vec<B::Bit>,
    /// The server's key and IV come with the key block at no cost; only the tests read them
    /// (against the native key block): the server's records are checked after the
    /// connection, by the transcript proof.
    #[cfg_attr(not(test), allow(dead_code))]
    pub server_write_key: Vec<B::Bit>,
    pub client_write_iv: Vec<B::Bit>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub server_write_iv: Vec<B::Bit>,
    pub client_verify_data: [u8; 12],
}

fn public_inner(bytes: &[u8]) -> Result<PublicInner, PhaseError> {
    let state: [u8; 32] =
        bytes.try_into().map_err(|_| super::phases::PeerMisbehaved::Malformed("inner state length"))?;
    Ok(PublicInner::from_bytes(&state))
}

/// Derives the session keys from the two parties' shares of the premaster secret (each 32
/// bytes in the group's encoding, [`SharedGroup`]): the premaster secret is their sum. Seven phases, six of them revealing (a round trip
/// each); about 250k AND gates in all.
pub(crate) async fn derive<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    prover_share: Input<'_, P::Backend>,
    verifier_share: Input<'_, P::Backend>,
    inputs: &KdfInputs,
) -> Result<SessionKeys<P::Backend>, PhaseError> {
    let (pms_outer, inner) = p
        .phase(ch, &mut |b| {
            let pms = inputs.group.add_in_circuit(b, &prover_share.wires(b), &verifier_share.wires(b));
            let key = hmac_key(b, &pms);
            (key.outer, state_to_bytes::<P::Backend>(&key.inner))
        })
        .await?;
    let pms_inner = public_inner(&inner)?;
    let seed = match inputs.session_hash {
        Some(h) => [&b"extended master secret"[..], &h].concat(),
        None => [&b"master secret"[..], &inputs.client_random, &inputs.server_random].concat(),
    };
    let hmac = |b: &mut P::Backend, outer: &State<P::Backend>, inner: &PublicInner, msg: &[u8]| {
        hmac_public_inner(b, outer, inner, msg)
    };

    let ((), a1) = p.phase(ch, &mut |b| ((), hmac(b, &pms_outer, &pms_inner, &seed))).await?;
    let (p1, a2) = p
        .phase(ch, &mut |b| {
            let p1 = hmac(b, &pms_outer, &pms_inner, &[&a1[..], &seed].concat());
            (p1, hmac(b, &pms_outer, &pms_inner, &a1))
        })
        .await?;
    let (ms_outer, inner) = p
        .phase(ch, &mut |b| {
            let mut ms = p1.clone();
            ms.extend_from_slice(&hmac(b, &pms_outer, &pms_inner, &[&a2[..], &seed].concat())[..128]);
            let key = hmac_key(b, &ms);
            (key.outer, state_to_bytes::<P::Backend>(&key.inner))
        })
        .await?;
    let ms_inner = public_inner(&inner)?;

    let seed_ke = [&b"key expansion"[..], &inputs.server_random, &inputs.client_random].concat();
    let seed_cf = [&b"client finished"[..], &inputs.client_finished_hash].concat();
    let ((), a1s) = p
        .phase(ch, &mut |b| {
            let mut out = hmac(b, &ms_outer, &ms_inner, &seed_ke);
            out.extend(hmac(b, &ms_outer, &ms_inner, &seed_cf));
            ((), out)
        })
        .await?;
    let (a1_ke, a1_cf) = a1s.split_at(32);
    let (keys, opened) = p
        .phase(ch, &mut |b| {
            let keys = hmac(b, &ms_outer, &ms_inner, &[a1_ke, &seed_ke].concat());
            let mut out = hmac(b, &ms_outer, &ms_inner, a1_ke);
            out.extend_from_slice(&hmac(b, &ms_outer, &ms_inner, &[a1_cf, &seed_cf].concat())[..96]);
            (keys, out)
        })
        .await?;
    let (a2_ke, cvd) = opened.split_at(32);
    let (ivs, _) = p
        .phase(ch, &mut |b| (hmac(b, &ms_outer, &ms_inner, &[a2_ke, &seed_ke].concat())[..64].to_vec(), Vec::new()))
        .await?;
    Ok(SessionKeys {
        client_write_key: keys[..128].to_vec(),
        server_write_key: keys[128..].to_vec(),
        client_write_iv: ivs[..32].to_vec(),
        server_write_iv: ivs[32..].to_vec(),
        client_verify_data: cvd
            .try_into()
            .map_err(|_| super::phases::PeerMisbehaved::Malformed("verify_data length"))?,
    })
}
