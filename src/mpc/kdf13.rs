//! The TLS 1.3 key schedule for two parties (RFC 8446 §7.1), for the SHA-256 suites, from
//! additive shares of the (EC)DHE secret to the handshake traffic secrets, which both parties
//! learn, and the client's application key and IV, which neither does; written once over
//! [`Phases`]: garbled during the session, re-proven in ZK after it (docs/protocol.md, "The
//! TLS 1.3 key schedule in two parties").
//!
//! As in the TLS 1.2 derivation ([`super::kdf`]), every private HMAC key's inner pad state is
//! revealed ([`PublicInner`]), so each HKDF step with a public message is one outer compression
//! in the circuit. Five phases, each revealing what the next one needs:
//! 1. the secret from the shares (mod p, in the group's encoding), HS = HKDF-Extract(salt, it)
//!    with the public salt Derive-Secret(early secret, "derived", "") (two compressions of a
//!    private block under public states), and HS's pad states, the inner one revealed;
//! 2. c_hs and s_hs (revealed: the prover reads the server's flight and writes its Finished
//!    with them, in the clear), and D = Derive-Secret(HS, "derived", "") with its pad states,
//!    the inner one revealed;
//! 3. MS = HKDF-Extract(D, 0) and its pad states, the inner one revealed;
//! 4. once the server's Finished is in, c_ap and its pad states, the inner one revealed;
//! 5. the client's application key and IV, kept as wires for the record layer.
//!
//! HS, D, MS, c_ap, the key and the IV are never revealed. The server's application secret is
//! not derived here: the server's records are checked after the connection, when the verifier's
//! share is public and the transcript proof derives it.

use super::phases::{Input, PeerMisbehaved, PhaseError, Phases};
use super::shared_secret::SharedGroup;
use crate::channel::Channel;
use crate::circuits::hmac_prf::{hmac_key, hmac_public_inner, native_pad_states, PublicInner, Sha2};
use crate::circuits::sha256::{finish, state_from_bytes, state_to_bytes, State};
use crate::circuits::{constant_bytes, Circuit};
use crate::tls::tls13::key_schedule::{early_secret, expand_info};
use crate::tls::tls13::{HashAlg, Secret};

/// The handshake traffic secrets the schedule reveals to both parties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HandshakeTraffic {
    pub client: [u8; 32],
    pub server: [u8; 32],
}

/// A private HMAC key of the schedule: its outer pad state as wires, its inner one revealed.
pub(crate) struct Keyed<B: Circuit> {
    outer: State<B>,
    inner: PublicInner,
}

/// The client's application traffic key and IV, wires neither party reads.
pub(crate) struct ClientTraffic<B: Circuit> {
    pub key: Vec<B::Bit>,
    pub iv: Vec<B::Bit>,
}

fn public_inner(bytes: &[u8]) -> Result<PublicInner, PhaseError> {
    let state: [u8; 32] = bytes.try_into().map_err(|_| PeerMisbehaved::Malformed("inner state length"))?;
    Ok(PublicInner::from_bytes(&state))
}

/// HMAC-SHA256 under a public key of a private one-block message: the key's pad states are
/// constants, so two compressions of private blocks.
fn hmac_public_key<B: Circuit>(b: &mut B, key: &[u8], msg: &[B::Bit]) -> Vec<B::Bit> {
    let [inner, outer] = native_pad_states(Sha2::Sha256, key);
    let inner = state_from_bytes::<B>(&constant_bytes(b, &inner));
    let outer = state_from_bytes::<B>(&constant_bytes(b, &outer));
    let ih = finish(b, &inner, 64, msg);
    finish(b, &outer, 64, &ih)
}

/// A private key's pad states: the outer one kept, the inner one's bits to reveal.
fn keyed<B: Circuit>(b: &mut B, key: &[B::Bit]) -> (State<B>, Vec<B::Bit>) {
    let k = hmac_key(b, key);
    (k.outer, state_to_bytes::<B>(&k.inner))
}

/// Phases 1–3: from the shares (each 32 bytes in `group`'s encoding) and the transcript hash
/// through the ServerHello, the handshake traffic secrets (revealed) and MS as a keyed wire
/// state (its inner pad state revealed).
pub(crate) async fn handshake<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    group: SharedGroup,
    prover_share: Input<'_, P::Backend>,
    verifier_share: Input<'_, P::Backend>,
    hello_hash: &[u8; 32],
) -> Result<(HandshakeTraffic, Keyed<P::Backend>), PhaseError> {
    let alg = HashAlg::Sha256;
    let salt = crate::tls::tls13::key_schedule::derive_secret(alg, &early_secret(alg), b"derived", &alg.hash(&[]));
    let (hs_outer, inner) = p
        .phase(ch, &mut |b| {
            let secret = group.add_in_circuit(b, &prover_share.wires(b), &verifier_share.wires(b));
            let hs = hmac_public_key(b, salt.as_bytes(), &secret);
            keyed(b, &hs)
        })
        .await?;
    let hs_inner = public_inner(&inner)?;
    let empty_hash: Secret = alg.hash(&[]);
    let (d_outer, opened) = p
        .phase(ch, &mut |b| {
            let label = |l: &[u8], context: &[u8]| expand_info(32, l, context);
            let mut revealed = hmac_public_inner(b, &hs_outer, &hs_inner, &label(b"c hs traffic", hello_hash));
            revealed.extend(hmac_public_inner(b, &hs_outer, &hs_inner, &label(b"s hs traffic", hello_hash)));
            let d = hmac_public_inner(b, &hs_outer, &hs_inner, &label(b"derived", empty_hash.as_bytes()));
            let (d_outer, d_inner) = keyed(b, &d);
            revealed.extend(d_inner);
            (d_outer, revealed)
        })
        .await?;
    let too_short = || PhaseError::from(PeerMisbehaved::Malformed("handshake phase output length"));
    let traffic = HandshakeTraffic {
        client: opened.get(..32).and_then(|c| c.try_into().ok()).ok_or_else(too_short)?,
        server: opened.get(32..64).and_then(|s| s.try_into().ok()).ok_or_else(too_short)?,
    };
    let d_inner = public_inner(opened.get(64..).ok_or_else(too_short)?)?;
    let (ms_outer, inner) = p
        .phase(ch, &mut |b| {
            let ms = hmac_public_inner(b, &d_outer, &d_inner, &[0u8; 32]);
            keyed(b, &ms)
        })
        .await?;
    Ok((traffic, Keyed { outer: ms_outer, inner: public_inner(&inner)? }))
}

/// Phases 4–5: from MS and the transcript hash through the server's Finished, the client's
/// application key of `key_len` bytes (16 for AES-128-GCM, 32 for ChaCha20-Poly1305; one
/// HMAC output either way) and IV as wires.
pub(crate) async fn client_application<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    ms: &Keyed<P::Backend>,
    server_finished_hash: &[u8; 32],
    key_len: usize,
) -> Result<ClientTraffic<P::Backend>, PhaseError> {
    if !matches!(key_len, 16 | 32) {
        return Err(PeerMisbehaved::Malformed("an application key of 16 or 32 bytes").into());
    }
    let (ap_outer, inner) = p
        .phase(ch, &mut |b| {
            let c_ap =
                hmac_public_inner(b, &ms.outer, &ms.inner, &expand_info(32, b"c ap traffic", server_finished_hash));
            keyed(b, &c_ap)
        })
        .await?;
    let ap_inner = public_inner(&inner)?;
    let (traffic, _) = p
        .phase(ch, &mut |b| {
            let key = hmac_public_inner(b, &ap_outer, &ap_inner, &expand_info(key_len, b"key", b""));
            let iv = hmac_public_inner(b, &ap_outer, &ap_inner, &expand_info(12, b"iv", b""));
            (ClientTraffic { key: key[..8 * key_len].to_vec(), iv: iv[..96].to_vec() }, Vec::new())
        })
        .await?;
    Ok(traffic)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
